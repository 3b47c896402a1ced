"""A JoeyNMT 2.x recurrent model folder written without JoeyNMT: its config.yaml, vocabulary files and
a ``best.ckpt`` whose ``model_state`` has JoeyNMT's parameter names and shapes (random values), for
the tests of the import's checks, the command line and the app where JoeyNMT itself is not needed.
tests/unit/external/test_joeynmt.py checks the names and shapes against JoeyNMT's own model."""

from __future__ import annotations

from pathlib import Path

import torch
import yaml
from torch import nn

SPECIALS = ["<unk>", "<pad>", "<s>", "</s>"]


def joey_config(
    attention: str = "bahdanau",
    rnn: str = "gru",
    layers: int = 1,
    feeding: bool = True,
    emb: int = 12,
    hidden: int = 16,
    level: str = "word",
) -> dict:
    def side() -> dict:
        return {
            "type": "recurrent",
            "rnn_type": rnn,
            "hidden_size": hidden,
            "num_layers": layers,
            "embeddings": {"embedding_dim": emb},
        }

    return {
        "name": "tiny",
        "data": {"src": {"lang": "x", "level": level}, "trg": {"lang": "y", "level": level}},
        "model": {
            "encoder": {**side(), "bidirectional": True},
            "decoder": {**side(), "attention": attention, "input_feeding": feeding, "init_hidden": "bridge"},
        },
    }


def joey_state(cfg: dict, n_src: int, n_trg: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """A ``model_state`` with JoeyNMT's keys and shapes for ``cfg`` (vocabulary sizes with the specials)."""
    torch.manual_seed(seed)
    enc, dec = cfg["model"]["encoder"], cfg["model"]["decoder"]
    E, H = enc["embeddings"]["embedding_dim"], dec["hidden_size"]
    rnn = {"gru": nn.GRU, "lstm": nn.LSTM}
    encoder = rnn[enc["rnn_type"]](E, H, enc["num_layers"], batch_first=True, bidirectional=True)
    decoder = rnn[dec["rnn_type"]](E + (H if dec["input_feeding"] else 0), H, dec["num_layers"], batch_first=True)
    state = {
        "src_embed.lut.weight": torch.randn(n_src, E),
        "trg_embed.lut.weight": torch.randn(n_trg, E),
        **{f"encoder.rnn.{k}": v for k, v in encoder.state_dict().items()},
        **{f"decoder.rnn.{k}": v for k, v in decoder.state_dict().items()},
        "decoder.att_vector_layer.weight": torch.randn(H, 3 * H) / H,
        "decoder.att_vector_layer.bias": torch.randn(H) / H,
        "decoder.output_layer.weight": torch.randn(n_trg, H),
        "decoder.attention.key_layer.weight": torch.randn(H, 2 * H) / H,
        "decoder.bridge_layer.weight": torch.randn(H, 2 * H) / H,
        "decoder.bridge_layer.bias": torch.randn(H) / H,
    }
    if dec["attention"] == "bahdanau":
        state["decoder.attention.query_layer.weight"] = torch.randn(H, H) / H
        state["decoder.attention.energy_layer.weight"] = torch.randn(1, H)
    return state


def write_joey_folder(folder: Path, cfg: dict | None = None, src_words=("a", "b", "c"), trg_words=("x", "y")) -> Path:
    """``folder`` with config.yaml, src_vocab.txt, trg_vocab.txt and best.ckpt; returns it."""
    cfg = cfg or joey_config()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
    (folder / "src_vocab.txt").write_text("\n".join([*SPECIALS, *src_words]) + "\n")
    (folder / "trg_vocab.txt").write_text("\n".join([*SPECIALS, *trg_words]) + "\n")
    state = joey_state(cfg, len(SPECIALS) + len(src_words), len(SPECIALS) + len(trg_words))
    torch.save({"model_state": state, "stats_state": {"steps": 10}}, folder / "best.ckpt")
    return folder
