"""A CPU training keeps freed memory in the process: a block freed by one step is reused by the next
without new page faults, and glibc's settings go back when the last training ends."""

import resource

import pytest
import torch

from attnviz.training import heap

glibc = pytest.mark.skipif(heap._libc() is None, reason="glibc's mallopt only")
MB48 = 12 * 1024 * 1024  # float32 elements in 48 MB: over glibc's largest mmap threshold (32 MB)


def _faults_of_a_second_block() -> int:
    """Minor page faults of filling a 48 MB tensor, after one of the same size was filled and freed."""
    torch.ones(MB48)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.ones(MB48)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@glibc
def test_a_block_freed_in_training_is_reused_without_page_faults():
    with heap.reuse_freed_memory() as took:
        assert took
        kept = _faults_of_a_second_block()
    fresh = _faults_of_a_second_block()  # glibc's defaults again: the block is mapped afresh
    assert fresh > 4 * 1024  # most of its 12,288 pages of 4 kB fault in again
    assert kept < fresh / 10


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
