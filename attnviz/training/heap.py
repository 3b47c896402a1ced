"""Freed memory kept in the process while a CPU training runs.

glibc's ``malloc`` gives a block of 32 MB or more back to the kernel as soon as it is freed (it
was mapped with ``mmap``), and trims a heap's free top over 128 kB. A training step makes
several such blocks each step: the logits of a batch ``[N, V]``, their float32 copy under bf16
autocast, the gradients of both. Each comes back as fresh pages that the kernel maps and zeroes
one page fault at a time, about 1.5 ms per 4 MB; on a 2-core AMD EPYC, one thread, that was a
fifth of a bf16 step of the de-en recipe (docs/speed.md, "CPU training against JoeyNMT").

:func:`reuse_freed_memory` asks glibc (``mallopt``) to serve every block from its heaps and to
keep what is freed there, so the next step reuses the same pages. The process keeps its largest
step's memory while it trains; when the last training of the process ends, glibc's settings go
back to its defaults and the free memory goes back to the kernel (``malloc_trim``). Elsewhere than
glibc on Linux it does nothing.

It helps a training that runs in the main thread (``attnviz train``, recipes, the benchmarks). A
training in another thread (the app's Train page) allocates from one of glibc's thread arenas,
which give a large block's own heap back to the kernel whatever the settings: there it changes
nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections.abc import Iterator

import torch

from attnviz.devices import glibc as _libc

_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4  # mallopt parameters, glibc's malloc.h
_DEFAULT_TRIM, _DEFAULT_MMAP_MAX = 128 * 1024, 65536  # glibc's defaults
_KEEP_TRIM = 1 << 30  # keep up to 1 GB of free heap top

_lock = threading.Lock()
_users = 0  # trainings running with the settings
_took = False  # whether glibc took them


def _set(libc: ctypes.CDLL, trim: int, mmap_max: int) -> bool:
    return bool(libc.mallopt(_M_TRIM_THRESHOLD, trim)) and bool(libc.mallopt(_M_MMAP_MAX, mmap_max))


@contextlib.contextmanager
def reuse_freed_memory(device: torch.device | str | None = "cpu") -> Iterator[bool]:
    """Keep freed memory in the process while a training on ``device`` runs the block: on the CPU
    only (a GPU's memory has its own caching allocator; None: nothing to keep); yields whether glibc
    took the settings. Trainings may nest or overlap in threads (the app's sessions): the settings
    go back when the last one ends."""
    global _users, _took
    libc = _libc() if device is not None and torch.device(device).type == "cpu" else None
    if libc is None:
        yield False
        return
    with _lock:
        _users += 1
        if _users == 1:
            _took = _set(libc, _KEEP_TRIM, 0)
    try:
        yield _took
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                _set(libc, _DEFAULT_TRIM, _DEFAULT_MMAP_MAX)
                libc.malloc_trim(0)
