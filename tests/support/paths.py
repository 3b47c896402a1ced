"""Where the checkout and the app's entry file are, wherever a test file sits under ``tests/``."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
