"""``attnviz align-eval`` run as a command on gold sets shaped as the field ships them: a ``source |||
target`` bitext, 1-based talp links, words the model cuts into pieces or cannot read, a pair too long."""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from attnviz.store.checkpoint import save

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def shipped_like(trained, tmp_path):
    """A tiny model in a models folder, and a bitext of given words with its 1-based talp gold."""
    save(trained, tmp_path / "models" / "rev.safetensors")
    long = " ".join(["a"] * (trained.max_source_tokens + 5))
    (tmp_path / "test.a-b").write_text(
        "a b c d   ||| d c b a  \ne f g ||| g f e\na zebra c. ||| c. qq a\n" + f"{long} ||| a\n", encoding="utf-8"
    )
    (tmp_path / "gold.talp").write_text("1-4 2-3 3-2 4-1\n1-3 2p2 3-1\n1-3 2p2 3-1\n1-1\n", encoding="utf-8")
    return tmp_path


def attnviz(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ATTNVIZ_MODELS": str(folder / "models"), "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "attnviz", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )


def test_align_eval_reads_a_bitext_and_talp_links_as_shipped(shipped_like):
    done = attnviz(shipped_like, "align-eval", "--model", "rev", "--bitext", "test.a-b", "--gold", "gold.talp")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    convention = (
        "gold.talp: talp (one line a pair, i-j sure, ipj possible), 1-based (detected: 0-based is ruled out, line 1: "
        "link 1-4 has an index equal to its sentence's length"
    )
    assert convention in out
    assert "pairs: 3 of 4 scored, 1 skipped (the model cannot read them); 1 hold a word read as <unk>" in out
    warnings = [line for line in done.stderr.splitlines() if "skipped" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: test.a-b line 4 skipped: the sentence has ")

    given = shlex.split("align-eval --model rev --bitext test.a-b --gold gold.talp --base 1 --format talp --json")
    as_json = attnviz(shipped_like, *given)
    data = json.loads(as_json.stdout)
    assert (data["n"], data["pairs"], data["unk_pairs"], data["skipped"][0]["line"]) == (3, 4, 1, 4)
    assert data["gold"] == {
        "file": "gold.talp",
        "format": "talp",
        "base": 1,
        "how": "given",
        "null_links": 0,
        "warnings": [],
    }
    assert data["sure"] == 4 + 2 + 2  # the skipped pair's sure link is not counted


def test_align_eval_names_a_bad_gold_line_and_a_wrong_base(shipped_like):
    (shipped_like / "bad.talp").write_text("1-4 2-3\n1-3 2x2\n\n\n", encoding="utf-8")
    done = attnviz(shipped_like, "align-eval", "--model", "rev", "--bitext", "test.a-b", "--gold", "bad.talp")
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "attnviz align-eval: error: bad.talp line 2: '2x2' is not a gold link; write Pharaoh 'i-j' (possible 'i?j' "
        "or 'i-j-P'), talp 'i-j' (possible 'ipj') or NAACL 'sent_id i j [S|P]', indices of up to 6 digits 0-9"
    ]
    done = attnviz(shipped_like, *shlex.split("align-eval --model rev --bitext test.a-b --gold gold.talp --base 0"))
    assert (
        done.returncode == 2 and "gold.talp line 1: link 1-4 has an index equal to its sentence's length" in done.stderr
    )
    done = attnviz(
        shipped_like, "align-eval", "--model", "rev", "--src", "test.a-b", "--tgt", "test.a-b", "--gold", "g"
    )
    assert done.returncode == 2 and "test.a-b line 1 holds ' ||| '" in done.stderr


def test_adapt_and_yardstick_score_an_adapted_copy_beside_eflomal(shipped_like):
    pytest.importorskip("eflomal")
    model_file = shipped_like / "models" / "rev.safetensors"
    before = model_file.read_bytes()
    args = ["align-eval", "--model", "rev", "--bitext", "test.a-b", "--gold", "gold.talp", "--base", "1"]
    plain = json.loads(attnviz(shipped_like, *args, "--json").stdout)
    done = attnviz(shipped_like, *args, "--adapt", "5", "--adapt-lr", "0.01", "--yardstick", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["adapted"]["steps_run"] == 5 and result["adapted"]["pairs"] == 3  # the long pair is left out
    assert "adapted a copy of" in done.stderr and "its file is unchanged" in done.stderr
    assert "eflomal samples without a seed" in done.stderr  # its row moves between runs: said, not hidden
    assert [row["aligner"] for row in result["table"]] == ["rev argmax, adapted 5 steps", "eflomal grow-diag-final-and"]
    assert result["table"][0]["aer"] == result["aer"] and plain["n"] == result["n"]
    assert model_file.read_bytes() == before  # the model's own file is never written
    done = attnviz(shipped_like, *args, "--adapt", "2", "--yardstick")
    assert "eflomal grow-diag-final-and" in done.stdout and "precision  recall     AER" in done.stdout
    assert "eflomal samples without a seed" in done.stderr


def test_adapt_refuses_bad_values_in_one_line(shipped_like):
    args = ["align-eval", "--model", "rev", "--bitext", "test.a-b", "--gold", "gold.talp", "--base", "1"]
    done = attnviz(shipped_like, *args, "--adapt", "0")
    assert done.returncode == 2 and "Traceback" not in done.stderr and "--adapt" in done.stderr
    (shipped_like / "empty.a-b").write_text("", encoding="utf-8")
    done = attnviz(shipped_like, "align", "--model", "rev", "--adapt", "3", "a b c", "c b a")
    assert done.returncode == 0, done.stderr
    assert "adapted a copy of" in done.stderr


def test_empty_sentence_files_are_one_line_not_a_perfect_score(shipped_like):
    for name in ("s.txt", "t.txt", "g.txt"):
        (shipped_like / name).write_text("", encoding="utf-8")
    args = ["align-eval", "--model", "rev", "--src", "s.txt", "--tgt", "t.txt", "--gold", "g.txt"]
    for extra in ([], ["--yardstick"]):
        done = attnviz(shipped_like, *args, *extra)
        assert done.returncode == 2 and "Traceback" not in done.stderr and not done.stdout
        assert done.stderr.strip().splitlines() == [
            "attnviz align-eval: error: s.txt is empty: it holds no sentences; give at least one pair, one a line"
        ]
    (shipped_like / "blank.a-b").write_text(" \n\n", encoding="utf-8")
    for text in (["--bitext", "s.txt"], ["--bitext", "blank.a-b"], ["--src", "blank.a-b"]):
        # (an empty bitext was 'its first line has no ' ||| '', as if it were malformed)
        done = attnviz(shipped_like, "align-eval", "--model", "rev", *text, "--gold", "g.txt")
        assert done.returncode == 2 and f"error: {text[1]} is empty: it holds no sentences" in done.stderr
