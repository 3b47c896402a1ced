"""Every file in benchmarks/ answers when run: a script with its options, a part of one with a pointer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
PARTS = {"load_app.py": "load_test.py", "load_sessions.py": "load_test.py", "textbook.py": "compare.py"}


@pytest.mark.parametrize("script", sorted(p.name for p in BENCHMARKS.glob("*.py")))
def test_every_benchmark_file_has_a_main_block(script: str) -> None:
    assert 'if __name__ == "__main__":' in (BENCHMARKS / script).read_text(encoding="utf-8")


@pytest.mark.parametrize(("part", "script"), sorted(PARTS.items()))
def test_a_part_run_as_a_script_points_to_its_script(part: str, script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / part), "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert f"run python benchmarks/{script} --help" in done.stderr
    assert "Traceback" not in done.stderr
