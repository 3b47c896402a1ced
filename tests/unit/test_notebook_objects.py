"""What a notebook shows of the library's objects: one line each (a corpus, a model, a decode, a gold
file, a corpus's links), equality that compares and never raises, the version, and tab completion that
offers the public names only."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import attnviz
from attnviz.data import load_corpus
from attnviz.links import align_corpus, read_gold


@pytest.fixture(scope="module")
def model():
    return attnviz.load("dates-additive-bahdanau")


def test_each_object_shows_as_one_short_line(model, tmp_path):
    corpus = load_corpus("dates")
    shown = repr(corpus)
    assert shown.startswith("Corpus('dates', train=") and "\n" not in shown and len(shown) < 120
    assert repr(model).startswith("Translator('dates-additive-bahdanau', additive/bahdanau, vocab ")
    al = model.translate("saturday 22nd of november 2026", beam_size=4)
    assert repr(al).startswith("Alignment(additive/bahdanau, ") and "4 hypotheses" in repr(al)
    (tmp_path / "gold.talp").write_text("1-1 2p2\n1-1\n", encoding="utf-8")
    gold = read_gold(tmp_path / "gold.talp", [(2, 2), (1, 1)], base=1)
    words = attnviz.load("toy-fr-general-luong")
    toy = load_corpus("toy-fr").test[:3]
    links = align_corpus(words, [p.source_tokens for p in toy], [p.target_tokens for p in toy])
    for obj in (model, al, links, gold):
        assert len(repr(obj)) < 200 and "\n" not in repr(obj)
    assert repr(links).startswith("CorpusAlignment(3 pairs, 3 aligned, ")
    assert repr(gold) == "GoldFile(2 pairs, 2 sure and 1 possible-only links, talp)"


def test_decodes_compare_by_value_and_never_raise(model):
    a = model.translate("saturday 22nd of november 2026")
    b = model.translate("saturday 22nd of november 2026")
    c = model.translate("monday 1st of may 2000")
    assert a == b and a != c and a in [c, b]
    cell = attnviz.cell_numbers(model, a, t=0, s=0)
    assert cell == cell and cell != attnviz.cell_numbers(model, a, t=0, s=0)  # the same object only


def test_the_version_and_tab_completion(capsys):
    from attnviz.cli.main import main

    assert main(["--version"]) == 0 and capsys.readouterr().out == f"attnviz {attnviz.__version__}\n"
    with pytest.raises(SystemExit) as done:  # the version beside other words: argparse's own
        main(["--version", "list"])
    assert done.value.code == 0 and capsys.readouterr().out == f"attnviz {attnviz.__version__}\n"
    fresh = "import attnviz; print(attnviz.devices.__name__, attnviz.errors.__name__, attnviz.server.__name__)"
    done = subprocess.run([sys.executable, "-c", fresh], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["attnviz.devices", "attnviz.errors", "attnviz.server"], done.stderr
    names = dir(attnviz)
    assert {"load", "links", "AttnvizWarning", "__version__"} <= set(names)
    assert not {"Any", "importlib", "SUBPACKAGES"} & set(names)
    with warnings.catch_warnings():
        warnings.simplefilter("error", attnviz.AttnvizWarning)
        assert issubclass(attnviz.ModelWarning, attnviz.AttnvizWarning)
        assert issubclass(attnviz.DeviceWarning, attnviz.AttnvizWarning)
