"""``attnviz list`` as a table: a checkpoint's strings reach the terminal as text, never as escapes."""

from __future__ import annotations

from attnviz.store.checkpoint import save
from tests.support.cli import run
from tests.support.tiny import tiny_translator


def test_a_task_holding_terminal_escapes_is_written_as_a_literal(capsys, corpus, tmp_path, monkeypatch):
    hostile = "\x1b[2Jtask\u202e"
    tr = tiny_translator(corpus)
    tr.meta = {**tr.meta, "task": hostile}
    save(tr, tmp_path / "odd.safetensors")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path))
    code, out, _ = run(capsys, "list")
    row = next(line for line in out.splitlines() if line.startswith("odd "))
    assert code == 0 and ascii(hostile) in row and "\x1b" not in out and "\u202e" not in out
