"""Where and in what precision training runs: devices, bf16 support, autocast.

Training defaults to the CPU in float32 (``TrainConfig(device="cpu", precision="fp32")``).
``"auto"`` picks the first GPU when there is one. The ``"auto"`` precision picks bf16 only where it
was measured faster than float32 for attnviz's recipes: CPUs with AMX and AMD CPUs with
AVX512-BF16. It keeps float32 on GPUs, where these small RNNs are bound by kernel launches, not by
arithmetic, and bf16 autocast (which adds cast kernels) trained at 0.70-0.73x of float32 on an
H200; and on an Intel Xeon with AVX512-BF16 but no AMX (0.65x). ``"bf16"`` still runs wherever the
hardware supports it. The measurements are in docs/speed.md, "bf16 mixed precision" and "Devices
and precision".

A machine with an NVIDIA GPU that torch cannot use (a CPU-only torch, a driver that does not load,
a GPU busy or shared under CUDA MPS with no room for another client) trains ``"auto"`` on the CPU
with a :class:`DeviceWarning` that says why; asked for ``"cuda"`` it is an error that says why.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import platform
import warnings
from pathlib import Path

import torch

from attnviz.errors import AttnvizWarning, ConfigError

DEVICES = ("cpu", "cuda", "cuda:N", "mps", "auto")
PRECISIONS = ("fp32", "bf16", "auto")
_CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # x86 flags in /proc/cpuinfo
_NVIDIA_DEVICE_FILES = ("/dev/nvidiactl", "/dev/nvidia0")  # there whenever NVIDIA's driver sees a GPU


class DeviceWarning(AttnvizWarning):
    """A device asked for as ``"auto"`` fell back to the CPU although this machine has a GPU, or CUDA
    graphs could not be captured and training went on without them."""


def _nvidia_device_file() -> str | None:
    return next((path for path in _NVIDIA_DEVICE_FILES if os.path.exists(path)), None)


def gpu_unusable() -> str | None:
    """Why this machine's NVIDIA GPU cannot be used, as a sentence with the fix; None when there is no
    NVIDIA GPU or CUDA works. Cheap where there is no GPU: two file checks."""
    if torch.cuda.is_available():
        return None
    found = _nvidia_device_file()
    if found is None:
        return None
    if torch.version.cuda is None:
        return (
            f"this machine has an NVIDIA GPU ({found}) but torch {torch.__version__} was built without CUDA; "
            "install a CUDA build of torch to train on it"
        )
    try:
        torch.cuda.init()
    except (RuntimeError, AssertionError) as e:  # torch's own reason: the driver, a busy GPU, MPS
        reason = " ".join(str(e).split())[:200]
    else:
        reason = "CUDA reports no usable device"
    return (
        f"this machine has an NVIDIA GPU ({found}) but CUDA could not start ({reason}); free the GPU or "
        "fix its driver, or choose the CPU"
    )


def available_devices() -> list[str]:
    """The devices this machine can train on, CPU first; each is a valid ``TrainConfig.device``."""
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        devices.append("mps")
    return devices


def check_device_name(name: str) -> None:
    """Raise ConfigError unless ``name`` is one of cpu, cuda, cuda:N, mps, auto (availability is
    checked later, by :func:`pick_device`, on the machine that trains)."""
    if name == "auto":
        return
    try:
        kind = torch.device(name).type
    except (RuntimeError, TypeError):
        kind = None
    if kind not in ("cpu", "cuda", "mps"):
        raise ConfigError(f"unknown device {name!r}; use one of {', '.join(DEVICES)}")


def pick_device(name: str | None = "auto") -> torch.device:
    """The torch device for ``name`` (cpu, cuda, cuda:N, mps): ``"auto"`` or None is the first GPU
    (CUDA, then Apple MPS), else the CPU. The one place attnviz chooses a device."""
    name = name or "auto"
    check_device_name(name)
    available = available_devices()
    if name == "auto":
        if len(available) > 1:
            return torch.device(available[1])
        unusable = gpu_unusable()
        if unusable:
            warnings.warn(f"device auto runs on the CPU: {unusable}", DeviceWarning, stacklevel=2)
        return torch.device("cpu")
    device = torch.device(name)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            unusable = gpu_unusable()
            if unusable:
                raise ConfigError(f"device {name!r} was asked for but {unusable} (--device cpu)")
            raise ConfigError(f"device {name!r} was asked for but this machine has no CUDA GPU; use --device cpu")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ConfigError(f"there is no GPU {name!r} here; choose one of {', '.join(available)}")
    if device.type == "mps" and "mps" not in available:
        raise ConfigError("device 'mps' was asked for but Apple's MPS is not available here; use --device cpu")
    return device


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:  # not Linux
        return set()
    return {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[1].split()}


def _cpu_name() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def bf16_supported(device: torch.device | str = "cpu") -> bool:
    """Whether ``device`` runs bfloat16 arithmetic natively: CPUs with AVX512-BF16 or AMX, and
    GPUs for which ``torch.cuda.is_bf16_supported()`` holds. Elsewhere bf16 is emulated (slow)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        return bool(_cpu_flags() & set(_CPU_BF16_FLAGS))
    return False


def bf16_faster(device: torch.device | str = "cpu") -> bool:
    """Whether bf16 trains faster than float32 on ``device`` (the ``"auto"`` precision's rule; see
    the module doc for the measurements): CPUs with AMX and AMD CPUs with AVX512-BF16. Intel's
    AVX512-BF16 without AMX and GPUs were measured slower."""
    device = torch.device(device)
    if device.type != "cpu":
        return False
    flags = _cpu_flags()
    return "amx_bf16" in flags or ("avx512_bf16" in flags and _cpu_vendor() == "AuthenticAMD")


def _cpu_vendor() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("vendor_id")), "")


def training_precision(precision: str, device: torch.device) -> str:
    """``"fp32"`` or ``"bf16"`` for a ``TrainConfig.precision`` on ``device`` (see the module doc)."""
    if precision not in PRECISIONS:
        raise ConfigError(f"unknown precision {precision!r}; use one of {', '.join(PRECISIONS)}")
    if precision == "auto":
        return "bf16" if bf16_faster(device) else "fp32"
    if precision == "bf16" and not bf16_supported(device):
        where = "this CPU has neither AVX512-BF16 nor AMX" if device.type == "cpu" else f"{device} does not support it"
        raise ConfigError(f"bf16 training needs hardware support and {where}; use --precision fp32 (or auto)")
    return precision


def autocast(device: torch.device, precision: str) -> contextlib.AbstractContextManager:
    """Mixed precision for the forward pass and the loss: matrix products in bf16, weights,
    gradients and optimiser state in float32. A no-op for ``"fp32"``."""
    if precision != "bf16":
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)


def describe(device: torch.device) -> str:
    """The hardware a training ran on, for progress reports and checkpoints."""
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} ({device})"
    if device.type == "mps":
        return f"Apple MPS GPU ({platform.machine()})"
    threads = torch.get_num_threads()
    return f"{_cpu_name()} CPU, {threads} thread{'s' if threads > 1 else ''}"


def server_threads() -> int:
    """Torch threads per decoding thread in the app: ``$ATTNVIZ_THREADS``, default 1.

    Each Streamlit session decodes in its own thread; models are small and decoding runs at
    batch 1, where extra intra-op threads gain little and, with several sessions at once,
    oversubscribe the cores (8 sessions x 2 threads on 2 cores).
    """
    try:
        return max(1, int(os.environ.get("ATTNVIZ_THREADS", "1")))
    except ValueError:
        return 1


def use_server_threads() -> None:
    """Apply :func:`server_threads` to the calling thread (``torch.set_num_threads`` is per thread)."""
    if torch.get_num_threads() != server_threads():
        torch.set_num_threads(server_threads())


@functools.cache
def glibc() -> ctypes.CDLL | None:
    """glibc, where this process runs on it (Linux); else None. Looked up once a process."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def release_free_memory() -> bool:
    """Give the memory freed inside this process back to the kernel (glibc's ``malloc_trim``: the free
    pages of every thread's heap); whether it could (glibc only). Freed weights otherwise stay in the
    process, scattered between later blocks: the app's model cache, which lets a model go when it holds
    too many, calls it before each load (every shipped model opened: 755 MB resident, 425 MB with it,
    ``benchmarks/model_cache.py``)."""
    libc = glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
