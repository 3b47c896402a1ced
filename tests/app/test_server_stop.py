"""A server stopped by a signal (docker stop and systemd send SIGTERM, Ctrl+C SIGINT) deletes its
upload folder and lock on the way out, and still ends the way the signal asks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attnviz_app.app_pages.shared.shutdown import clean_on_signals
from tests.support.browser import free_port, wait_healthy
from tests.support.paths import ROOT


@pytest.fixture
def restored_handlers():
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    for s, handler in before.items():
        signal.signal(s, handler)


def test_the_handler_cleans_up_then_calls_the_one_it_replaced(restored_handlers):
    calls = []
    signal.signal(signal.SIGTERM, lambda signum, frame: calls.append(("previous", signum)))
    assert clean_on_signals(lambda: calls.append("cleanup"))
    assert clean_on_signals(lambda: calls.append("again"))  # a second install chains once
    signal.raise_signal(signal.SIGTERM)
    assert calls == ["cleanup", ("previous", signal.SIGTERM)]


def test_sigint_still_interrupts_after_the_cleanup(restored_handlers):
    calls = []
    signal.signal(signal.SIGINT, signal.default_int_handler)
    clean_on_signals(lambda: calls.append("cleanup"), (signal.SIGINT,))
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    assert calls == ["cleanup"]


def test_a_failing_cleanup_does_not_keep_the_previous_handler_from_running(restored_handlers):
    calls = []
    signal.signal(signal.SIGTERM, lambda signum, frame: calls.append("previous"))

    def broken() -> None:
        raise OSError("disk gone")

    clean_on_signals(broken)
    signal.raise_signal(signal.SIGTERM)
    assert calls == ["previous"]


def test_only_the_main_thread_installs_handlers():
    import threading

    out = []
    thread = threading.Thread(target=lambda: out.append(clean_on_signals(lambda: None)))
    thread.start()
    thread.join()
    assert out == [False]


def _wait_for(predicate, what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout} s")
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_server_stopped_by_a_signal_leaves_no_upload_folder(tmp_path, signum):
    """``streamlit run app.py`` claims its upload folder at start (the warm-up); a signal stops it
    and the folder and its lock are gone, while SIGTERM still ends the process by that signal."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "HOME": str(tmp_path), "OMP_NUM_THREADS": "1"}
    env |= {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"]
    command += ["--server.fileWatcherType", "none"]
    root = Path(tmp_path) / f"attnviz-uploads-{os.getuid()}"  # store.upload_root() under its TMPDIR
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(port, proc)
        _wait_for(lambda: any(root.glob(f"server-{proc.pid}.lock")), "the upload folder's creation")
        assert (root / f"server-{proc.pid}").is_dir()
        proc.send_signal(signum)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert list(root.iterdir()) == []  # no upload folder, no lock
    if signum == signal.SIGTERM:
        assert proc.returncode == -signal.SIGTERM  # ended by the signal, as a service manager expects
