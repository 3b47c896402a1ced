"""Uploads in a temporary folder for one test: the server's folder (attnviz.server.upload_folder),
an empty ledger (upload_ledger), no sessions seen (web_sessions), and optionally no uploaded
checkpoints. The test's fixture calls ``upload_folder.server_folder.cache_clear()`` when it ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnviz.server import checkpoints, upload_folder, upload_ledger, web_sessions


def use_fresh_uploads(root: Path, monkeypatch: pytest.MonkeyPatch, checkpoint_uploads: bool = False) -> None:
    """Keep uploads under ``root`` with an empty ledger and no sessions; with ``checkpoint_uploads``,
    no uploaded checkpoints either (a deleted file drops its checkpoint's model)."""
    monkeypatch.setattr(upload_folder, "UPLOAD_ROOT", root)
    monkeypatch.setattr(upload_ledger, "LEDGER", upload_ledger.Ledger())
    monkeypatch.setattr(web_sessions, "SESSIONS", web_sessions.Sessions())
    if checkpoint_uploads:
        monkeypatch.setattr(checkpoints, "UPLOADS", checkpoints.CheckpointUploads())
        monkeypatch.setattr(upload_ledger, "ON_DELETE", [checkpoints.UPLOADS.forget])
    upload_folder.server_folder.cache_clear()
