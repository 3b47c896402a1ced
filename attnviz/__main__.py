from attnviz.cli import main

raise SystemExit(main())
