"""A Hugging Face folder is held to what its weights are: bytes stored as integers count for no weights
(a small zip of zero bytes could otherwise pass as a large model filled with random values), the model
is read in float32 whatever dtype its config names, and an id past the tokenizer's vocabulary (a config
padded beyond it, as T5's and mBART's are) is written as ``<id N>`` instead of failing."""

from __future__ import annotations

import json

import pytest
import torch

from attnviz.errors import CheckpointError
from attnviz.external import load_hf
from tests.support.hf_models import SOURCE, bart_folder

transformers = pytest.importorskip("transformers")
safetensors_torch = pytest.importorskip("safetensors.torch")


def _edit_config(folder, **changes) -> None:
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(config | changes), encoding="utf-8")


def test_integer_bytes_count_for_no_weights(tmp_path):
    folder = bart_folder(tmp_path / "bart")
    weights = safetensors_torch.load_file(folder / "model.safetensors")
    weights["junk"] = torch.zeros(8_000_000, dtype=torch.uint8)  # 8 MB of zeros: a few KB zipped
    safetensors_torch.save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    _edit_config(folder, vocab_size=1_500_000)  # 24M weights described, all but a few thousand random
    with pytest.raises(CheckpointError, match=r"config\.json describes 24,\d{3},\d{3} weights but the safetensors"):
        load_hf(folder)


def test_the_model_is_read_in_float32_whatever_its_config_says(tmp_path):
    folder = bart_folder(tmp_path / "bart")
    _edit_config(folder, dtype="float64", torch_dtype="float64")
    model = load_hf(folder)
    assert {p.dtype for p in model.model.parameters()} == {torch.float32}


def test_an_id_past_the_tokenizer_is_written_as_its_number(tmp_path):
    folder = bart_folder(tmp_path / "bart")
    size = len(transformers.AutoTokenizer.from_pretrained(folder))
    config = transformers.BartConfig.from_pretrained(folder)
    config.vocab_size = 1000  # ids 300 and up are unknown to the tokenizer
    torch.manual_seed(0)
    model = transformers.BartForConditionalGeneration(config)
    with torch.no_grad():
        model.model.shared.weight[size:] += 5.0  # the ids past the tokenizer win every step
    model.save_pretrained(folder)
    trace = load_hf(folder).translate(SOURCE, max_new_tokens=4)
    assert any(piece.startswith("<id ") and int(piece[4:-1]) >= size for piece in trace.target_pieces)
