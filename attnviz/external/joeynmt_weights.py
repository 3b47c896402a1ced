"""A JoeyNMT recurrent model's weights as attnviz's (:mod:`attnviz.external.joeynmt` reads the files):
the embeddings and output layer reordered to attnviz's vocabulary ids (scaled embeddings folded in),
``[h_t; c_t]`` of the attention vector layer reordered to ``[c_t; h_t]``, the bridge tiled per layer."""

from __future__ import annotations

import torch

from attnviz.errors import CheckpointError
from attnviz.model import ModelConfig

SOURCES = {  # attnviz's weight -> the JoeyNMT weight it is converted from (others keep their name)
    "encoder.embedding.weight": "src_embed.lut.weight",
    "decoder.embedding.weight": "trg_embed.lut.weight",
    "decoder.out.weight": "decoder.output_layer.weight",
    "decoder.W_c.weight": "decoder.att_vector_layer.weight",
    "decoder.W_c.bias": "decoder.att_vector_layer.bias",
    "decoder.attention.score.W_q.weight": "decoder.attention.query_layer.weight",
    "decoder.attention.score.W_k.weight": "decoder.attention.key_layer.weight",
    "decoder.attention.score.v_a.weight": "decoder.attention.energy_layer.weight",
    "decoder.attention.score.W_a.weight": "decoder.attention.key_layer.weight",
    "decoder.bridge.weight": "decoder.bridge_layer.weight",
    "decoder.bridge.bias": "decoder.bridge_layer.bias",
}


def convert_weights(
    cfg: dict, state: dict[str, torch.Tensor], src: torch.Tensor, tgt: torch.Tensor, acfg: ModelConfig
) -> dict[str, torch.Tensor]:
    """attnviz's state dict from JoeyNMT's: ``src``/``tgt`` map attnviz ids to JoeyNMT ids."""
    enc, dec = cfg["model"]["encoder"], cfg["model"]["decoder"]
    H, L = acfg.hidden_dim, acfg.dec_layers
    used: set[str] = set()

    def take(key: str) -> torch.Tensor:
        if key not in state:
            raise CheckpointError(
                f"the checkpoint has no {key}; it is not the model this config describes: give the config.yaml "
                "and the .ckpt of one training"
            )
        used.add(key)
        return state[key].float()

    def scale(side: dict) -> float:
        return acfg.emb_dim**0.5 if (side.get("embeddings") or {}).get("scale") else 1.0

    out = {
        "encoder.embedding.weight": take("src_embed.lut.weight")[src] * scale(enc),
        "decoder.embedding.weight": take("trg_embed.lut.weight")[tgt] * scale(dec),
        "decoder.out.weight": take("decoder.output_layer.weight")[tgt],
        "decoder.out.bias": torch.zeros(len(tgt)),
    }
    for key in [k for k in state if k.startswith(("encoder.rnn.", "decoder.rnn."))]:
        out[key] = take(key)
    w = take("decoder.att_vector_layer.weight")  # [H, H + K] over [h_t; c_t]
    out["decoder.W_c.weight"] = torch.cat([w[:, H:], w[:, :H]], dim=1)  # over [c_t; h_t]
    out["decoder.W_c.bias"] = take("decoder.att_vector_layer.bias")
    if acfg.score == "additive":
        out["decoder.attention.score.W_q.weight"] = take("decoder.attention.query_layer.weight")
        out["decoder.attention.score.W_k.weight"] = take("decoder.attention.key_layer.weight")
        out["decoder.attention.score.v_a.weight"] = take("decoder.attention.energy_layer.weight")
    else:
        out["decoder.attention.score.W_a.weight"] = take("decoder.attention.key_layer.weight")
    if dec.get("init_hidden", "bridge") == "bridge":
        out["decoder.bridge.weight"] = take("decoder.bridge_layer.weight").repeat(L, 1)  # one copy per layer
        out["decoder.bridge.bias"] = take("decoder.bridge_layer.bias").repeat(L)
    else:  # "zero": tanh(0) = 0
        out["decoder.bridge.weight"] = torch.zeros(L * H, acfg.memory_dim)
        out["decoder.bridge.bias"] = torch.zeros(L * H)
    left = sorted(set(state) - used)
    if left:
        raise CheckpointError(
            f"the checkpoint holds {left[0]}, which this config's model has no place for: give the config.yaml "
            "the model was trained with (a recurrent JoeyNMT model)"
        )
    return out
