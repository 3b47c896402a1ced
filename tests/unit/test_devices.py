"""The device and precision picker: the CPU, no CUDA without a GPU, bf16 only where supported and
measured faster; server threads from the environment."""

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
