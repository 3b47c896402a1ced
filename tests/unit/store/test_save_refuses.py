"""save refuses, before anything is replaced, a header that read_header could not read back or that
cannot be written: a file saved is a file attnviz opens."""

from __future__ import annotations

import copy

import pytest

from attnviz.errors import CheckpointError
from attnviz.store import checkpoint
from attnviz.store.checkpoint import load_checkpoint, save
from tests.support.tiny import reverse_corpus, tiny_translator


@pytest.fixture(scope="module")
def translator():
    return tiny_translator(reverse_corpus(10))


def _nested(levels: int) -> dict:
    top = inner = {}
    for _ in range(levels):
        inner["a"] = {}
        inner = inner["a"]
    return top


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        (
            {"deep": _nested(40)},
            "m.safetensors: the model's meta nests more than 32 levels, which no attnviz reads back",
        ),
        ({"note": "caf\udce9"}, "m.safetensors: the model's meta holds '\\udce9', which is not Unicode text"),
        ({"tags": {"a", "b"}}, "m.safetensors: the model's meta cannot be saved as JSON (Object of type set"),
    ],
)
def test_a_meta_no_attnviz_could_read_back_is_refused_and_the_file_there_kept(translator, tmp_path, meta, message):
    path = save(translator, tmp_path / "m.safetensors")
    before = path.read_bytes()
    odd = copy.copy(translator)
    odd.meta = meta
    with pytest.raises(CheckpointError) as caught:
        save(odd, path)
    assert str(caught.value).startswith(message)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["m.safetensors"]
    load_checkpoint(path)


def test_a_checkpoint_over_the_size_attnviz_reads_is_not_saved(translator, tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint, "MAX_CHECKPOINT_BYTES", 1000)
    with pytest.raises(CheckpointError, match=r"m.safetensors would be 0 MiB .* at most 0 MiB .* so it was not saved"):
        save(translator, tmp_path / "m.safetensors")
    assert not list(tmp_path.iterdir())


def test_nan_in_meta_still_saves_and_loads(translator, tmp_path):
    odd = copy.copy(translator)
    odd.meta = {"metrics": {"entropy": float("nan")}, "train_seconds": 1.5}
    loaded = load_checkpoint(save(odd, tmp_path / "m.safetensors"))
    assert loaded.meta["train_seconds"] == 1.5
