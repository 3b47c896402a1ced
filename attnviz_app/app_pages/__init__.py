"""The app's pages, one module or folder each, routed by attnviz_app/frame.py with st.navigation;
``shared/`` holds what several pages use and no page."""
