"""How a checkpoint stores its weights: float32, float16, or int8 with a scale per block of a row.

``"int8"`` stores every weight matrix ``W [rows, cols]`` (embeddings, linear maps, the RNNs'
gate matrices) as ``q = round(W / s)`` in int8. Each output row ``r`` (a token's embedding, a
gate's row) is cut into blocks of :data:`BLOCK` columns (the last may be shorter), and block
``b`` has its own scale ``s[r, b] = max |W[r, block b]| / 127``, kept in float32 as a tensor named
``<weight>.int8_scale`` of shape ``[rows, blocks]``; loading reads ``W = q * s`` (each scale
spread over its block) back as float32. One-dimensional weights (biases) are stored as float16.
A scale of shape ``[rows]``, one a row (the first int8 files attnviz wrote), is read as that scale
for every block of its row.
A file with int8 weights is written in checkpoint format 3, so an attnviz that cannot read it
says so instead of guessing.

Blocks rather than one scale a row: a row's largest value sets the step of the whole row, and
one large value in a long GRU row then coarsens all the others; the scales cost 1/16 of the int8
bytes (what each scheme changes is measured by benchmarks/int8_storage.py, in docs/models.md).

The model a user explores *is* the dequantized one: attention, cell arithmetic, attribution and
exports all read the weights this module returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from attnviz.errors import CheckpointError

STORES = ("fp32", "fp16", "int8")
SCALE_SUFFIX = ".int8_scale"
LEVELS = 127  # int8 values -127..127: symmetric, so 0 stays exactly 0
BLOCK = 64  # columns that share one scale
_FLOAT_DTYPES = {"fp32": torch.float32, "fp16": torch.float16}
FLOAT_CODES = ("F32", "F16")  # safetensors dtype codes of float weights
INT8_CODE = "I8"


def check_store(store: str) -> str:
    """``store`` if it names a storage; a :class:`CheckpointError` saying the choices otherwise."""
    if store not in STORES:
        raise CheckpointError(f"unknown weight storage {store!r}; choose one of {', '.join(STORES)}")
    return store


def scale_shape(shape: list[int] | tuple[int, ...]) -> list[int]:
    """The shape of the scales of a weight of ``shape``: ``[rows, blocks]``."""
    cols = math.prod(shape[1:])
    return [shape[0], max(1, math.ceil(cols / BLOCK))]


def _scale_shapes(shape: list[int]) -> list[list[int]]:
    """The scale shapes a weight of ``shape`` may have: a scale per block of a row, or (the first int8
    files attnviz wrote, in the same checkpoint format) one scale a row, ``[rows]``."""
    return [scale_shape(shape), list(shape[:1])]


def _blocks(w: Tensor) -> Tensor:
    """``w`` [rows, cols] as ``[rows, blocks, BLOCK]``, the last block padded with zeros."""
    rows, cols = w.shape
    pad = (-cols) % BLOCK
    return torch.nn.functional.pad(w, (0, pad)).reshape(rows, -1, BLOCK)


def quantize_rows(weight: Tensor) -> tuple[Tensor, Tensor]:
    """``(q, scale)``: ``weight`` [rows, ...] as int8, with a float32 scale per block of each row."""
    w = weight.detach().float().reshape(weight.shape[0], -1)  # [rows, cols]
    blocks = _blocks(w)  # [rows, blocks, BLOCK]
    scale = blocks.abs().amax(dim=2) / LEVELS  # [rows, blocks]
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))  # an all-zero block stays zero
    q = torch.round(blocks / safe[:, :, None]).clamp(-LEVELS, LEVELS).to(torch.int8)  # [rows, blocks, BLOCK]
    q = q.reshape(w.shape[0], -1)[:, : w.shape[1]]  # [rows, cols]
    return q.reshape(weight.shape).contiguous(), scale.contiguous()


def dequantize_rows(q: Tensor, scale: Tensor) -> Tensor:
    """The float32 weight that ``q`` and its block ``scale`` ``[rows, blocks]`` stand for: one new
    float32 tensor of ``q``'s shape, each block multiplied by its scale in place (no padded copy)."""
    flat = q.reshape(q.shape[0], -1).to(torch.float32, copy=True)  # [rows, cols]
    rows, cols = flat.shape
    scale = scale.float()  # [rows, blocks]
    full = cols // BLOCK  # whole blocks; a shorter last block has the next scale
    if full:
        flat[:, : full * BLOCK].view(rows, full, BLOCK).mul_(scale[:, :full, None])  # [rows, full, BLOCK]
    if cols % BLOCK:
        flat[:, full * BLOCK :].mul_(scale[:, full : full + 1])  # [rows, cols % BLOCK]
    return flat.reshape(q.shape)


def encode_weights(state: dict[str, Tensor], store: str) -> dict[str, Tensor]:
    """The tensors a checkpoint holds for the model weights ``state`` under ``store``."""
    check_store(store)
    out: dict[str, Tensor] = {}
    for name, tensor in state.items():
        t = tensor.detach().to("cpu")
        if store == "int8" and t.dim() >= 2:
            out[name], out[name + SCALE_SUFFIX] = quantize_rows(t)
            kept = bool(torch.isfinite(out[name + SCALE_SUFFIX] * LEVELS).all())  # q * s for |q| = 127
        else:
            dtype = torch.float16 if store == "int8" else _FLOAT_DTYPES[store]
            out[name] = t.to(dtype).contiguous()
            kept = bool(torch.isfinite(out[name]).all())
        if not kept and bool(torch.isfinite(t).all()):  # the file would read back inf, and be refused at load
            raise CheckpointError(
                f"weight {name} holds values as large as {float(t.abs().max()):.3g}, which {store} storage cannot keep "
                f"(it would read back as infinity); save it with store='fp32'"
            )
    return out


def weight_names(stored: set[str]) -> set[str]:
    """The model weights among a file's tensor names: the scales are not weights."""
    return {n for n in stored if not n.endswith(SCALE_SUFFIX)}


def check_stored(filename: str, codes: dict[str, str], shapes: dict[str, list[int]], stored: set[str]) -> None:
    """Refuse a file whose weight dtypes or int8 scales are not what :func:`encode_weights` writes,
    from the safetensors header alone (``codes`` and ``shapes`` of every weight and scale)."""
    for name in sorted(weight_names(set(codes))):
        code = codes[name]
        if code not in (*FLOAT_CODES, INT8_CODE):
            raise CheckpointError(
                f"{filename}: weight {name} is stored as {code}; attnviz writes weights as "
                f"{', '.join(FLOAT_CODES)} or {INT8_CODE} with per-row scales, so the file was edited"
            )
        scale = name + SCALE_SUFFIX
        if code == INT8_CODE and scale not in stored:
            raise CheckpointError(
                f"{filename}: weight {name} is int8 but its scale {scale} is missing; the file was damaged or "
                "edited: download or rebuild it"
            )
        if code == INT8_CODE and (codes[scale] not in FLOAT_CODES or shapes[scale] not in _scale_shapes(shapes[name])):
            raise CheckpointError(
                f"{filename}: the int8 scale of {name} is {codes[scale]} {shapes[scale]}, not one float per block "
                f"of a row ({scale_shape(shapes[name])}) nor one a row; the file was damaged or edited: download or "
                "rebuild it"
            )
    orphans = sorted(n[: -len(SCALE_SUFFIX)] for n in set(codes) - weight_names(set(codes)))
    orphans = [n for n in orphans if codes.get(n) != INT8_CODE]
    if orphans:
        raise CheckpointError(
            f"{filename}: int8 scales for {orphans[:3]}, which are not int8 weights; the file was edited"
        )


def decode_weights(filename: str, names: set[str], read: Callable[[str], Tensor]) -> dict[str, Tensor]:
    """The float32 model weights ``names``, read with ``read(tensor name)`` and dequantized;
    a scale that is not finite or is negative is refused (it would silently corrupt the row)."""
    state: dict[str, Tensor] = {}
    for name in sorted(names):
        tensor = read(name)
        if tensor.dtype != torch.int8:
            state[name] = tensor.float()
            continue
        scale = read(name + SCALE_SUFFIX).float()
        if not bool(torch.isfinite(scale).all()) or bool((scale < 0).any()):
            raise CheckpointError(
                f"{filename}: the int8 scale of {name} holds negative, NaN or infinite values; the file was "
                "damaged or edited: download or rebuild it"
            )
        if scale.dim() == 1:  # one scale a row: every block of the row has it
            scale = scale[:, None].expand(scale_shape(list(tensor.shape)))
        state[name] = dequantize_rows(tensor, scale)
    return state


def store_of(codes: dict[str, str]) -> str:
    """The storage a file's weights were written with, from their safetensors dtype codes."""
    if INT8_CODE in codes.values():
        return "int8"
    return "fp16" if codes and all(c == "F16" for c in codes.values()) else "fp32"
