"""The device and precision picker: the CPU, no CUDA without a GPU, bf16 only where supported and
measured faster; server threads from the environment."""

from pathlib import Path

import pytest
import torch

from attnviz import devices
from attnviz.devices import pick_device
from attnviz.errors import ConfigError
from attnviz.training.config import TrainConfig


def test_device_choice():
    assert pick_device("cpu").type == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="no CUDA GPU"):
            pick_device("cuda")
        assert pick_device().type in ("cpu", "mps")


def test_server_threads_come_from_the_environment_and_apply_per_thread(monkeypatch):
    import threading

    from attnviz.devices import server_threads, use_server_threads

    monkeypatch.setenv("ATTNVIZ_THREADS", "nonsense")
    assert server_threads() == 1
    monkeypatch.setenv("ATTNVIZ_THREADS", "2")
    seen = []

    def worker() -> None:
        use_server_threads()
        seen.append(torch.get_num_threads())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [2]


def test_bf16_where_unsupported_is_refused(monkeypatch):
    monkeypatch.setattr(devices, "_cpu_flags", lambda: {"avx2", "fma"})
    assert not devices.bf16_supported("cpu")
    with pytest.raises(ConfigError, match="--precision fp32"):
        TrainConfig(precision="bf16").hardware()
    assert TrainConfig(precision="auto").hardware() == (torch.device("cpu"), "fp32")
    monkeypatch.setattr(devices, "_cpu_flags", lambda: {"avx512f", "avx512_bf16"})
    assert devices.bf16_supported("cpu")
    assert TrainConfig(precision="bf16").hardware() == (torch.device("cpu"), "bf16")


@pytest.mark.parametrize(
    ("flags", "vendor", "picked"),
    [
        ({"avx512f", "avx512_bf16"}, "AuthenticAMD", "bf16"),  # EPYC: measured 1.1-1.7x faster
        ({"avx512f", "avx512_bf16"}, "GenuineIntel", "fp32"),  # Xeon without AMX: measured 0.65x
        ({"avx512f", "avx512_bf16", "amx_bf16", "amx_tile"}, "GenuineIntel", "bf16"),
        ({"avx2"}, "AuthenticAMD", "fp32"),
    ],
)
def test_auto_precision_picks_bf16_only_where_it_was_measured_faster(monkeypatch, flags, vendor, picked):
    monkeypatch.setattr(devices, "_cpu_flags", lambda: flags)
    monkeypatch.setattr(devices, "_cpu_vendor", lambda: vendor)
    assert TrainConfig(precision="auto").hardware() == (torch.device("cpu"), picked)


def test_auto_precision_keeps_fp32_on_gpus():
    """bf16 autocast trained these small RNNs slower than fp32 on an H200 (docs/speed.md)."""
    for name in ("cuda", "cuda:1", "mps"):
        assert not devices.bf16_faster(name)
        assert devices.training_precision("auto", torch.device(name)) == "fp32"


BUSY = "CUDA error: all CUDA-capable devices are busy or unavailable"


def _gpu_that_cuda_cannot_start(monkeypatch, reason: str = BUSY):
    """This machine as one with an NVIDIA GPU whose CUDA context cannot be made (a driver that does
    not load, a GPU shared under CUDA MPS with no room for another client)."""

    def init() -> None:
        raise RuntimeError(reason)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(devices, "_nvidia_device_file", lambda: "/dev/nvidiactl")
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(torch.cuda, "init", init)


def test_auto_on_a_gpu_that_cuda_cannot_start_runs_on_the_cpu_and_says_why(monkeypatch):
    _gpu_that_cuda_cannot_start(monkeypatch)
    with pytest.warns(devices.DeviceWarning, match=r"device auto runs on the CPU.*busy or unavailable"):
        assert pick_device("auto").type == "cpu"
    with pytest.raises(ConfigError, match=r"NVIDIA GPU .*/dev/nvidiactl.*busy or unavailable.*--device cpu"):
        pick_device("cuda")


def test_a_cpu_only_torch_on_a_gpu_machine_is_named(monkeypatch):
    _gpu_that_cuda_cannot_start(monkeypatch)
    monkeypatch.setattr(torch.version, "cuda", None)
    assert "built without CUDA; install a CUDA build of torch" in devices.gpu_unusable()


def test_no_gpu_no_warning(monkeypatch, recwarn):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(devices, "_nvidia_device_file", lambda: None)
    assert devices.gpu_unusable() is None
    assert pick_device("auto").type in ("cpu", "mps")
    assert not [w for w in recwarn if issubclass(w.category, devices.DeviceWarning)]
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        pick_device("cuda")


def test_the_cli_prints_the_fallback_as_one_warning_line(monkeypatch, capsys):
    from attnviz.cli.main import main

    _gpu_that_cuda_cannot_start(monkeypatch, "CUDA error: MPS client failed to connect to the MPS control daemon")
    assert main(["translate", "--model", "toy-fr-dot-luong", "--device", "auto", "the cat ."]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("attnviz translate: warning: device auto runs on the CPU")
    assert "MPS control daemon" in err[0]


def _resident_mb() -> float:
    status = Path("/proc/self/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


@pytest.mark.skipif(devices.glibc() is None, reason="glibc's malloc_trim")
def test_freed_memory_goes_back_to_the_kernel_where_glibc_runs():
    """Blocks freed inside the heap (not at its top) stay resident until they are given back."""
    blocks = [bytearray(100_000) for _ in range(1000)]  # 100 MB of heap blocks, under glibc's mmap threshold
    del blocks[:-1:2]  # every other one freed, the last kept: the heap's top cannot shrink
    before = _resident_mb()
    assert devices.release_free_memory() is True
    assert before - _resident_mb() > 30  # about 50 MB comes back


def test_without_glibc_nothing_is_given_back_and_it_says_so(monkeypatch):
    monkeypatch.setattr(devices, "glibc", lambda: None)  # macOS, musl: nothing to do, and it says so
    assert devices.release_free_memory() is False
