"""A CPU training keeps freed memory in the process: a block freed by one step is reused by the next
without new page faults, and glibc's settings go back when the last training ends."""

import json
import os
import subprocess
import sys

import pytest

from attnviz.training import heap

glibc = pytest.mark.skipif(heap._libc() is None, reason="glibc's mallopt only")
# Run in a fresh interpreter: glibc's heap in a long test process is shaped by every test before
# (holes, arenas, what malloc_trim gave back), and the count must be of this block alone.
_MEASURE = """
import contextlib, json, resource, sys, torch
from attnviz.training import heap
MB48 = 12 * 1024 * 1024  # float32 elements in 48 MB: over glibc's largest mmap threshold (32 MB)

def faults_of_a_second_block():
    torch.ones(MB48)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.ones(MB48)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

# A training's steps repeat: the fewest faults of three rounds is its steady state. (One round
# alone may meet a small allocation that took a piece of the freed block in between.)
training = sys.argv[1] == "training"
with heap.reuse_freed_memory() if training else contextlib.nullcontext(False) as took:
    faults = min(faults_of_a_second_block() for _ in range(3))
print(json.dumps({"took": took, "faults": faults}))
"""


def _measure(how: str) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", _MEASURE, how], capture_output=True, text=True, env=env, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


@glibc
def test_a_block_freed_in_training_is_reused_without_page_faults():
    kept = _measure("training")
    fresh = _measure("defaults")  # glibc's defaults: the block is mapped afresh every time
    assert kept["took"]
    assert fresh["faults"] > 4 * 1024  # most of its 12,288 pages of 4 kB fault in again
    assert kept["faults"] < fresh["faults"] / 10


@glibc
def test_trainings_may_overlap_and_the_last_one_restores_the_defaults(monkeypatch):
    calls = []
    real = heap._set

    def recorded(libc, trim: int, mmap_max: int) -> bool:
        calls.append((trim, mmap_max))
        return real(libc, trim, mmap_max)

    monkeypatch.setattr(heap, "_set", recorded)
    with heap.reuse_freed_memory():
        with heap.reuse_freed_memory() as inner:
            assert inner
        assert calls == [(heap._KEEP_TRIM, 0)]  # the outer training still runs: nothing restored
    assert calls == [(heap._KEEP_TRIM, 0), (heap._DEFAULT_TRIM, heap._DEFAULT_MMAP_MAX)]
    assert heap._users == 0


def test_off_the_cpu_or_without_glibc_it_changes_nothing(monkeypatch):
    for device in (None, "meta"):  # no training on the CPU
        with heap.reuse_freed_memory(device) as took:
            assert not took
    monkeypatch.setattr(heap, "_libc", lambda: None)
    with heap.reuse_freed_memory() as took:
        assert not took
    assert heap._users == 0
