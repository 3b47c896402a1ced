"""``attnviz align-report``: a shipped toy-fr model's sampled sentences as one HTML file, scored against
gold or, for a table without gold, against eflomal; the file is never overwritten without --force and
never written inside pretrained/."""

from __future__ import annotations

import shutil

import pytest

from attnviz.store import pretrained_dir
from tests.support.cli import run

MODEL = "toy-fr-additive-bahdanau"
ROWS = [
    ("this lake sings .", "ce lac chante ."),
    ("you watch my slow toys .", "vous regardez mes jouets lents ."),
    ("some wet carrots eat the kitchens .", "des carottes mouillées mangent les cuisines ."),
    ("the <script>alert(1)</script> pig .", "le cochon ."),
]


def test_gold_data_is_scored_by_aer(capsys, tmp_path):
    out = tmp_path / "report.html"
    code, printed, err = run(
        capsys, "align-report", "--model", MODEL, "--data", "toy-fr", "--split", "test", "--n", "3", "--out", str(out)
    )
    assert code == 0, err
    assert "3 sentences, mean AER" in printed
    page = out.read_text(encoding="utf-8")
    assert page.count("<section") == 3 and "mean AER against gold" in page and "--split test" in page


def test_a_character_model_is_scored_by_aer_on_its_own_tokens(capsys, tmp_path):
    out = tmp_path / "dates.html"
    code, printed, err = run(capsys, "align-report", "--model", "dates-general-luong", "--n", "3", "--out", str(out))
    assert code == 0, err  # its tokens are characters, spaces among them: read from the pair's text
    assert "3 sentences, mean AER" in printed and out.read_text(encoding="utf-8").count("<section") == 3


def test_a_table_without_gold_is_scored_against_eflomal(capsys, tmp_path):
    pytest.importorskip("eflomal")
    table = tmp_path / "pairs.tsv"
    table.write_text("en\tfr\n" + "".join(f"{s}\t{t}\n" for s, t in ROWS * 3), encoding="utf-8")
    out = tmp_path / "report.html"
    code, printed, err = run(
        capsys,
        "align-report",
        "--model",
        MODEL,
        "--data",
        f"{table}?src=en&tgt=fr",
        "--n",
        "50",
        "--method",
        "dtw",
        "--out",
        str(out),
    )
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert "mean agreement" in printed and "agreement (F1) with eflomal" in page
    assert "(all the train split has)" in printed  # 50 asked, fewer there: all shown, and said
    assert "<script>alert(1)</script>" not in page
    assert "&lt; script &gt; alert ( 1 ) &lt; / script &gt;" in page  # the tokenizer's words, escaped


def test_an_existing_file_is_kept_without_force(capsys, tmp_path):
    out = tmp_path / "report.html"
    out.write_text("keep me", encoding="utf-8")
    args = ["align-report", "--model", MODEL, "--data", "toy-fr", "--split", "test", "--n", "1", "--out", str(out)]
    code, _, err = run(capsys, *args)
    assert code == 2 and "add --force" in err and out.read_text(encoding="utf-8") == "keep me"
    code, _, err = run(capsys, *args, "--force")
    assert code == 0, err
    assert out.read_text(encoding="utf-8").count("<section") == 1


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("{pretrained}/report.html", "shipped models"),
        ("{tmp}/report.txt", "name it report.html"),
        ("{tmp}/missing/report.html", "does not exist"),
        ("{tmp}/dir.html", "is a folder"),
        ("{tmp}/afile/report.html", "afile is a file, not a folder"),
        ("{tmp}/loop1.html", "is a symlink loop or an unreadable link"),
        ("{tmp}/loopdir/report.html", "is a symlink loop or an unreadable link"),
    ],
)
def test_bad_destinations_are_exit_2_and_one_line(capsys, tmp_path, monkeypatch, out, message):
    shipped = tmp_path / "shipped"  # a copy: a refusal that broke would write into it, not the checkout
    shipped.mkdir()
    for f in [pretrained_dir() / "manifest.json", *pretrained_dir().glob(f"{MODEL}.*")]:
        shutil.copy(f, shipped / f.name)
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(shipped))
    path = out.format(pretrained=shipped, tmp=tmp_path)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "dir.html").mkdir()
    (tmp_path / "loop1.html").symlink_to(tmp_path / "loop2.html")
    (tmp_path / "loop2.html").symlink_to(tmp_path / "loop1.html")
    (tmp_path / "loopdir").symlink_to(tmp_path / "loopdir")
    code, _, err = run(capsys, "align-report", "--model", MODEL, "--out", path)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (shipped / "report.html").exists()


def test_an_unknown_model_is_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, "align-report", "--model", "no-such-model", "--out", str(tmp_path / "r.html"))
    assert code == 2 and "align-report: error:" in err


def test_an_unwritable_folder_is_refused_before_the_work(capsys, tmp_path, monkeypatch):
    import os

    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if mode == os.W_OK else real(p, mode))  # root writes all
    code, _, err = run(capsys, "align-report", "--model", MODEL, "--out", str(tmp_path / "r.html"))
    assert code == 2 and f"the folder {tmp_path} is not writable; choose another --out" in err


def test_a_dangling_link_at_out_is_not_written_through_without_force(capsys, tmp_path):
    (tmp_path / "report.html").symlink_to(tmp_path / "elsewhere.html")
    args = ["align-report", "--model", MODEL, "--data", "toy-fr", "--split", "test", "--n", "1"]
    code, _, err = run(capsys, *args, "--out", str(tmp_path / "report.html"))
    assert code == 2 and "already exists; add --force" in err and not (tmp_path / "elsewhere.html").exists()
