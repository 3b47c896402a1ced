"""The server's protections live in .streamlit/config.toml: upload limit, XSRF, no tracebacks."""

import tomllib

from tests.support.paths import ROOT

CONFIG = ROOT / ".streamlit" / "config.toml"


def test_uploads_are_limited_xsrf_is_on_and_error_details_are_hidden():
    cfg = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert 1 <= cfg["server"]["maxUploadSize"] <= 200  # MB
    assert cfg["server"]["enableXsrfProtection"] is True
    assert cfg["client"]["showErrorDetails"] == "none"
    assert cfg["browser"]["gatherUsageStats"] is False


def test_pages_and_app_import_no_torch():
    root = CONFIG.parents[1]
    for path in [root / "app.py", *sorted((root / "attnviz_app").rglob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        assert "import torch" not in text and "from torch" not in text, path


def test_no_full_garbage_collection_after_every_rerun():
    """Streamlit's default gc.collect(2) after each rerun held the GIL ~0.13 s with torch loaded,
    so concurrent sessions queued behind each other's collections (benchmarks/load_test.py)."""
    cfg = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert cfg["runner"]["postScriptGC"] is False
