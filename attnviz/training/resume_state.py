"""What a stopped training needs, beyond its checkpoint, to go on as the run it would have been.

A checkpoint saved after an epoch holds the weights and the progress record (``meta.progress``:
epoch, step, best validation loss, history). An uninterrupted training also carries, from epoch
to epoch, Adam's moments and rate, the batch shuffler's and torch's random state (the data order
and the dropout masks of the epochs to come), the weights of its best epoch and those it averages
(``average_last``), and, once stopped, the weights its last epoch ended with (the checkpoint then
keeps its best). :func:`write_state` keeps those beside the checkpoint after every epoch, in
``.<name>.resume`` (safetensors, not listed as a model), and :func:`read_state` gives them back
for the epoch the checkpoint says it finished; a file for another epoch, or none, resumes as an
older attnviz did (Adam afresh, the random state drawn from the seed, no earlier best epoch).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file
from torch import Tensor

from attnviz.errors import ConfigError
from attnviz.store import MAX_CHECKPOINT_BYTES

FORMAT = 1


@dataclass
class ResumeState:
    """The carried state of a training at the end of epoch ``epoch`` (step ``step``)."""

    epoch: int
    step: int
    last: dict[str, Tensor]  # the weights at the end of the epoch
    optimizer: dict  # the optimiser's state_dict (Adam: per parameter exp_avg, exp_avg_sq, step)
    shuffler: list | None  # random.Random.getstate() of the batch shuffler, as JSON
    torch_rng: Tensor | None  # torch.get_rng_state(): the dropout masks to come (one process only)
    best: dict[str, Tensor] | None = None  # the weights of the best epoch so far
    snapshots: list[dict[str, Tensor]] = field(default_factory=list)  # epoch-end weights to average, oldest first


def state_path(checkpoint: str | Path) -> Path:
    """Where the state of the training saved at ``checkpoint`` is kept: ``.<name>.resume`` beside it."""
    checkpoint = Path(checkpoint)
    return checkpoint.with_name(f".{checkpoint.name}.resume")


def drop_state(checkpoint: str | Path) -> None:
    """Remove the state kept for ``checkpoint`` (a finished, kept or discarded training)."""
    state_path(checkpoint).unlink(missing_ok=True)


def move_state(checkpoint: str | Path, to: str | Path) -> None:
    """Move the state kept for ``checkpoint`` beside ``to``, where the checkpoint was moved (a stopped
    training kept as a model can still be resumed as the same run); nothing when there is none."""
    if state_path(checkpoint).is_file():
        os.replace(state_path(checkpoint), state_path(to))


def _flat(prefix: str, weights: dict[str, Tensor]) -> dict[str, Tensor]:
    return {f"{prefix}.{name}": t.detach().to("cpu", torch.float32).contiguous() for name, t in weights.items()}


def write_state(checkpoint: str | Path, state: ResumeState) -> None:
    """Keep ``state`` beside ``checkpoint``, atomically (a write that fails leaves the previous one)."""
    tensors = _flat("last", state.last)
    if state.best is not None:
        tensors |= _flat("best", state.best)
    for k, snapshot in enumerate(state.snapshots):
        tensors |= _flat(f"snapshot{k}", snapshot)
    moments = state.optimizer.get("state", {})
    for index, values in moments.items():
        for key, value in values.items():
            if isinstance(value, Tensor):
                tensors[f"optimizer.{index}.{key}"] = value.detach().to("cpu").contiguous()
    if state.torch_rng is not None:
        tensors["rng.torch"] = state.torch_rng.contiguous()
    meta = {
        "format": FORMAT,
        "epoch": state.epoch,
        "step": state.step,
        "snapshots": len(state.snapshots),
        "lr": [group["lr"] for group in state.optimizer.get("param_groups", [])],
        "shuffler": state.shuffler,
    }
    path = state_path(checkpoint)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        save_file(tensors, str(tmp), metadata={"attnviz_resume": json.dumps(meta)})
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def read_state(checkpoint: str | Path, epoch: int, step: int) -> ResumeState | None:
    """The state kept beside ``checkpoint`` for the end of ``epoch`` at ``step``; None when there is none,
    it is for another epoch (a save interrupted between the two files) or it cannot be read."""
    path = state_path(checkpoint)
    if not path.is_file():
        return None
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = json.loads((f.metadata() or {}).get("attnviz_resume", "{}"))
            if meta.get("format") != FORMAT or (meta.get("epoch"), meta.get("step")) != (epoch, step):
                return None
            tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118 (safe_open has no iterator)
    except (SafetensorError, OSError, ValueError):
        return None

    def part(prefix: str) -> dict[str, Tensor]:
        return {name[len(prefix) + 1 :]: t for name, t in tensors.items() if name.startswith(prefix + ".")}

    moments: dict[int, dict[str, Tensor]] = {}
    for name, t in part("optimizer").items():
        index, key = name.split(".", 1)
        moments.setdefault(int(index), {})[key] = t
    best = part("best")
    return ResumeState(
        epoch,
        step,
        part("last"),
        {"state": moments, "lr": meta.get("lr") or []},
        meta.get("shuffler"),
        tensors.get("rng.torch"),
        best or None,
        [part(f"snapshot{k}") for k in range(int(meta.get("snapshots") or 0))],
    )


def restore_optimizer(optimizer: torch.optim.Optimizer, saved: dict) -> None:
    """Give ``optimizer`` the moments and rates ``saved`` holds (its own options otherwise: a run resumed on
    another device keeps its own fused or foreach setting)."""
    current = optimizer.state_dict()
    groups = [{**group, "lr": lr} for group, lr in zip(current["param_groups"], saved["lr"], strict=False)]
    groups += current["param_groups"][len(groups) :]
    optimizer.load_state_dict({"state": saved["state"], "param_groups": groups})


def check_epoch_size(parameters: int) -> None:
    """Before the first epoch: a model whose full-precision epoch checkpoint would be over the limit."""
    if (size := 4 * parameters) > MAX_CHECKPOINT_BYTES:  # float32 weights
        raise ConfigError(
            f"this model is {size / 2**20:,.0f} MiB in full precision, the form its checkpoint takes after every epoch"
            f" (to resume from) whatever --store says, and checkpoints are at most {MAX_CHECKPOINT_BYTES // 2**20} MiB."
            " Make it smaller: fewer words (--max-vocab), smaller embeddings or hidden states"
        )
