"""Data-parallel training over several processes (torch DistributedDataParallel).

    torchrun --nproc_per_node 2 -m attnviz train --recipe R --distributed

Every process (rank) builds the same shuffled global batches (same seed) and trains on its
shard of each one: rows ``rank, rank + N, ...``. The loss of a shard is weighted by its share
of the global batch's target tokens, so DDP's gradient average equals the gradient of the
global batch's mean token loss: one step of N processes is one step of one process on the
whole batch (up to float rounding; dropout masks differ). Stop requests, the time spent (for
the time budget and the linear schedule), training statistics and validation losses are
reduced over ranks, so every rank takes the same decisions and learning rates; rank 0
alone reports progress and saves checkpoints. Backends: gloo on CPUs, nccl on GPUs (one GPU
per rank, ``cuda:LOCAL_RANK``).

:class:`SingleProcess` is the single-process case (every method the identity): ``fit`` runs the same
code either way.
"""

from __future__ import annotations

import gc
import os

import torch
import torch.distributed as dist
from torch import Tensor, nn

from attnviz.data import PAD_ID
from attnviz.devices import pick_device
from attnviz.errors import ConfigError

Batch = tuple[Tensor, ...]  # src [B, S], lengths [B], tgt [B, T+1] and, guided, links [B, T, S]
TORCHRUN = "torchrun --nproc_per_node N -m attnviz train ... --distributed"


class SingleProcess:
    """One process training alone."""

    rank, world = 0, 1

    @property
    def is_main(self) -> bool:
        """The rank that reports progress and saves checkpoints."""
        return self.rank == 0

    def place(self, device: torch.device) -> torch.device:
        return device

    def wrap(self, model: nn.Module) -> nn.Module:
        return model

    def shard(self, batch: Batch) -> tuple[Batch, float]:
        """This rank's rows of a global batch, and the factor its mean loss is scaled by."""
        return batch, 1.0

    def part(self, items: list) -> list:
        """This rank's share of a list (validation batches)."""
        return items

    def sum(self, *values: float) -> tuple[float, ...]:
        return values

    def agree(self, flag: bool, seconds: float) -> tuple[bool, float]:
        """Whether any rank raised ``flag`` (a stop request), and the ranks' mean ``seconds``."""
        return flag, seconds

    def describe(self, hardware: str) -> str:
        return hardware

    def close(self) -> None:
        pass

    def __enter__(self) -> SingleProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class DDPGroup(SingleProcess):
    """One rank of a torchrun job (after ``dist.init_process_group``)."""

    def __init__(self, backend: str, local_rank: int):
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.backend, self.local_rank = backend, local_rank

    def place(self, device: torch.device) -> torch.device:
        return torch.device("cuda", self.local_rank) if device.type == "cuda" else device

    def wrap(self, model: nn.Module) -> nn.Module:
        device = next(model.parameters()).device
        ids = [device] if device.type == "cuda" else None
        return nn.parallel.DistributedDataParallel(model, device_ids=ids)

    def shard(self, batch: Batch) -> tuple[Batch, float]:
        src, lengths, tgt, *links = batch  # links [B, T, S]: guided training only
        total = int((tgt[:, 1:] != PAD_ID).sum())  # target tokens of the global batch
        rows = torch.arange(self.rank, src.size(0), self.world)
        if rows.numel() == 0:  # fewer rows than ranks: a row without targets keeps DDP in step
            tgt = tgt[:1].clone()
            tgt[:, 1:] = PAD_ID
            return (src[:1], lengths[:1], tgt, *(grid[:1] & False for grid in links)), 0.0
        src, lengths, tgt = src[rows], lengths[rows], tgt[rows]
        targets = tgt != PAD_ID  # [b, T+1]
        src = src[:, : int(lengths.max())]  # drop the columns only other ranks' rows need
        tgt = tgt[:, : int(targets.sum(1).max())]
        links = [grid[rows][:, : tgt.size(1) - 1, : src.size(1)] for grid in links]  # [b, T', S']
        return (src, lengths, tgt, *links), float(targets[:, 1:].sum()) * self.world / total

    def part(self, items: list) -> list:
        return items[self.rank :: self.world]

    def sum(self, *values: float) -> tuple[float, ...]:
        device = torch.device("cuda", self.local_rank) if self.backend == "nccl" else torch.device("cpu")
        summed = torch.tensor(values, dtype=torch.float64, device=device)
        dist.all_reduce(summed)
        return tuple(summed.tolist())

    def agree(self, flag: bool, seconds: float) -> tuple[bool, float]:
        flags, total = self.sum(float(flag), seconds)
        return flags > 0, total / self.world

    def describe(self, hardware: str) -> str:
        return f"{hardware} x {self.world} processes ({self.backend})"

    def close(self) -> None:
        if dist.is_initialized():
            # The DDP wrapper sits in reference cycles, holding gloo work and tensors: free it while the
            # group and the interpreter are alive. Left to interpreter shutdown, its teardown can abort
            # the process (SIGABRT, "terminate called without an active exception"; seen once in CI).
            gc.collect()
            dist.destroy_process_group()


def join_torchrun(device: str = "cpu") -> DDPGroup:
    """Join the torchrun job this process belongs to (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
    ``MASTER_ADDR`` and ``MASTER_PORT`` in the environment); ``device`` is the training device
    setting and chooses the backend."""
    missing = [k for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
    if missing:
        raise ConfigError(f"--distributed runs under torchrun (no {', '.join(missing)} set): {TORCHRUN}")
    if not dist.is_available():
        raise ConfigError("this torch build has no torch.distributed; train without --distributed")
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    backend = "nccl" if pick_device(device).type == "cuda" else "gloo"
    if backend == "nccl":
        if local_rank >= torch.cuda.device_count():
            raise ConfigError(
                f"rank {local_rank} has no GPU ({torch.cuda.device_count()} here): use --nproc_per_node "
                f"{torch.cuda.device_count()} or fewer"
            )
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend)
    return DDPGroup(backend, local_rank)
