"""Checkpoint files edited byte by byte, for tests of what attnviz accepts from a header."""

from __future__ import annotations

import json
from pathlib import Path


def rewrite(src: Path, dst: Path, attnviz=None, tensors=None) -> Path:
    """``src`` copied to ``dst`` with its attnviz header (``attnviz(dict) -> dict | str``) and its
    tensor index (``tensors(dict) -> None``, edited in place) changed; the weight bytes kept."""
    raw = src.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    index = json.loads(raw[8 : 8 + n])
    if attnviz is not None:
        new = attnviz(json.loads(index["__metadata__"]["attnviz"]))
        index["__metadata__"]["attnviz"] = new if isinstance(new, str) else json.dumps(new)
    if tensors is not None:
        tensors(index)
    head = json.dumps(index).encode()
    dst.write_bytes(len(head).to_bytes(8, "little") + head + raw[8 + n :])
    return dst
