"""The Train and Evaluate pages say why a GPU on the server is not offered (AppTest, tiny models)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from attnviz import devices
from attnviz_app.app_pages.train import form  # a module: it keeps the names it imported, so patch them there
from tests.support.app import start

WHY = "this machine has an NVIDIA GPU (/dev/nvidiactl) but CUDA could not start (busy); choose the CPU"
PAGES = (("train/train.py", "train_device"), ("evaluate.py", "eval_device"))


def _open(name: str) -> AppTest:
    at = start()
    at.switch_page(f"attnviz_app/app_pages/{name}").run()
    assert not at.exception, at.exception
    return at


def _says_why(at: AppTest) -> bool:
    shown = [c.value.replace("\\", "") for c in at.caption]  # as escaped for Markdown
    return any("Only the CPU is offered" in c and "CUDA could not start (busy)" in c for c in shown)


def test_train_and_evaluate_say_why_a_gpu_here_is_not_offered(app_env, monkeypatch):
    for module in (devices, form):
        monkeypatch.setattr(module, "available_devices", lambda: ["cpu"])
        monkeypatch.setattr(module, "gpu_unusable", lambda: WHY)
    for name, key in PAGES:
        at = _open(name)
        assert at.selectbox(key=key).options == ["cpu"]
        assert _says_why(at)
    for module in (devices, form):
        monkeypatch.setattr(module, "gpu_unusable", lambda: None)  # no GPU at all: nothing to explain
    assert not any("Only the CPU is offered" in c.value for c in _open("evaluate.py").caption)
