"""The ``align --method`` and ``align-eval`` commands: word links by method (with a reverse model),
scored against a gold file; bad input exits 2 with one line."""

import json
import shlex

import pytest
import torch

from attnviz.cli.main import main
from attnviz.data import to_pharaoh
from attnviz.links.extract import align_corpus, align_words
from attnviz.store.checkpoint import save
from tests.support.cli import run


@pytest.fixture
def cli_model(trained, tmp_path, monkeypatch):
    path = save(trained, tmp_path / "models" / "rev.safetensors")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(path.parent))
    monkeypatch.chdir(tmp_path)
    return str(path)


def test_cli_align_methods(capsys, cli_model, trained):
    code, out, _ = run(capsys, "align", "--model", cli_model, "a b c d", "d c b a")
    assert code == 0 and out.split()[:4] == ["3-0", "2-1", "1-2", "0-3"]  # the raw token-level default
    code, out, _ = run(capsys, "align", "--model", cli_model, "--method", "argmax", "a b c d", "d c b a")
    assert code == 0 and out.strip() == "0-3 1-2 2-1 3-0"
    symmetric = shlex.split(f"--method grow-diag-final --reverse-model {cli_model} --json")
    code, out, _ = run(capsys, "align", "--model", cli_model, *symmetric, "a b c d", "d c b a")
    data = json.loads(out)
    expected = align_words(trained, "a b c d", "d c b a", "grow-diag-final", reverse=trained)
    assert code == 0 and data == json.loads(json.dumps(expected.to_dict()))
    assert data["method"] == "grow-diag-final" and data["source_words"] == ["a", "b", "c", "d"] and data["caption"]
    assert data["pharaoh"] == " ".join(f"{i}-{j}" for i, j in data["links"])


def test_cli_align_bad_input_exits_2(capsys, cli_model):
    code, _, err = run(capsys, "align", "--model", cli_model, "--method", "union", "a b", "b a")
    assert code == 2 and "reverse model" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "align", "--model", cli_model, "--reverse-model", cli_model, "a b", "b a")
    assert code == 2 and "--reverse-model is used by" in err
    with pytest.raises(SystemExit) as e:
        main(["align", "--model", cli_model, "--method", "threshold", "--threshold", "2", "a", "a"])
    assert e.value.code == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:  # a weight of 0 would link every cell
        main(["align", "--model", cli_model, "--method", "threshold", "--threshold", "0", "a", "a"])
    assert e.value.code == 2 and "0.0 is out of range (0, 1]" in capsys.readouterr().err


@pytest.mark.parametrize("threshold", [0.05, 0.3, 0.9])
def test_cli_align_threshold_links_every_weight_at_or_above_it(capsys, cli_model, trained, threshold):
    args = ["align", "--model", cli_model, "--method", "threshold", "--threshold", str(threshold), "a b c d", "d c b a"]
    code, out, err = run(capsys, *args)
    expected = align_words(trained, "a b c d", "d c b a", "threshold", threshold=threshold)
    assert code == 0 and not err and out.strip() == " ".join(f"{i}-{j}" for i, j in expected.links)


def test_cli_align_threshold_lower_links_at_least_as_much(capsys, cli_model):
    counts = []
    for threshold in ("0.9", "0.05"):
        _, out, _ = run(
            capsys,
            "align",
            "--model",
            cli_model,
            "--method",
            "threshold",
            "--threshold",
            threshold,
            "a b c d",
            "d c b a",
        )
        counts.append(len(out.split()))
    assert counts[0] <= counts[1] and counts[1] >= 4


def test_cli_align_threshold_that_is_not_a_number_is_a_usage_error(capsys, cli_model):
    with pytest.raises(SystemExit) as e:
        main(["align", "--model", cli_model, "--method", "threshold", "--threshold", "high", "a", "a"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--threshold: 'high' is not a number" in err and "Traceback" not in err


def test_cli_adapt_guided_without_adapt_warns_and_aligns_the_model_as_it_is(capsys, cli_model):
    _, plain, _ = run(capsys, "align", "--model", cli_model, "a b c d", "d c b a")
    code, out, err = run(capsys, "align", "--model", cli_model, "--adapt-guided", "a b c d", "d c b a")
    assert code == 0 and out == plain
    assert err.strip() == "warning: --adapt-guided does nothing without --adapt N"


@pytest.fixture
def files(trained, tmp_path, monkeypatch):
    """Sentence files and a gold file that holds the model's own argmax links (so AER is 0)."""
    model = save(trained, tmp_path / "models" / "rev.safetensors")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(model.parent))
    monkeypatch.chdir(tmp_path)
    sources, targets = [["a", "b", "c", "d"], ["e", "f", "g"]], [["d", "c", "b", "a"], ["g", "f", "e"]]
    (tmp_path / "src.txt").write_text("".join(" ".join(s) + "\n" for s in sources), encoding="utf-8")
    (tmp_path / "tgt.txt").write_text("".join(" ".join(t) + "\n" for t in targets), encoding="utf-8")
    own = align_corpus(trained, sources, targets).links
    (tmp_path / "gold.txt").write_text("".join(to_pharaoh(links) + "\n" for links in own), encoding="utf-8")
    return str(model)


def test_cli_align_eval_json(capsys, files):
    args = ["align-eval", "--model", files, "--src", "src.txt", "--tgt", "tgt.txt", "--gold", "gold.txt"]
    code, out, _ = run(capsys, *args, "--json", "--per-sentence")
    data = json.loads(out)
    assert code == 0 and data["method"] == "argmax" and data["n"] == 2
    assert (data["precision"], data["recall"], data["aer"]) == (1.0, 1.0, 0.0)
    assert [s["predicted"] for s in data["sentences"]] == [4, 3]
    code, out, _ = run(capsys, *args, "--method", "union", "--reverse-model", files)
    assert code == 0 and "recall: 1.0" in out  # the union holds the forward argmax links


def test_cli_align_eval_bad_input_exits_2(capsys, files, tmp_path):
    base = ["align-eval", "--model", files, "--src", "src.txt", "--tgt", "tgt.txt"]
    (tmp_path / "short.txt").write_text("0-3\n", encoding="utf-8")
    code, _, err = run(capsys, *base, "--gold", "short.txt")
    assert code == 2 and "short.txt line 2" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "talp.txt").write_text("1 1 4 S\n2 1 3\n", encoding="utf-8")
    code, _, err = run(capsys, *base, "--gold", "talp.txt", "--format", "naacl", "--base", "0", "--json")
    assert code == 2 and "talp.txt line 1: link 1-4 is outside its sentence" in err
    assert "fit 1-based: read it 1-based (index base 1)" in err
    code, out, _ = run(capsys, *base, "--gold", "talp.txt", "--format", "naacl", "--one-based", "--json")
    assert code == 0 and json.loads(out)["sure"] == 2 and json.loads(out)["gold"]["how"] == "given"
    code, out, _ = run(capsys, *base, "--gold", "talp.txt", "--json")  # naacl and 1-based, detected
    gold = json.loads(out)["gold"]
    assert code == 0 and (gold["format"], gold["base"]) == ("naacl", 1) and gold["how"].startswith("detected")
    (tmp_path / "odd.txt").write_text("a b c\n", encoding="utf-8")
    code, _, err = run(capsys, "align-eval", "--model", files, "--src", "odd.txt", "--tgt", "tgt.txt", "--gold", "x")
    assert code == 2 and "odd.txt has 1 line but tgt.txt has 2" in err
    code, _, err = run(capsys, *base, "--gold", "missing.txt")
    assert code == 2 and "missing.txt" in err


@pytest.mark.parametrize("gold", ["0-" + "1" * 5000 + "\n0-0\n", "0-\u00b2\n0-0\n", "/dev/zero"])
def test_cli_align_eval_odd_gold_indices_and_endless_files_exit_2(capsys, files, tmp_path, gold):
    if not gold.startswith("/"):
        (tmp_path / "odd.align").write_text(gold, encoding="utf-8")
        gold = "odd.align"
    code, _, err = run(capsys, "align-eval", "--model", files, "--src", "src.txt", "--tgt", "tgt.txt", "--gold", gold)
    assert code == 2 and f"{gold} " in err and len(err.strip().splitlines()) == 1 and len(err) < 400


def test_cli_align_and_align_eval_run_on_the_device_asked_for(capsys, files):
    pair = ["a b c d", "d c b a"]
    code, out, _ = run(capsys, "align", "--model", files, "--device", "cpu", "--method", "argmax", *pair)
    assert code == 0 and out.strip() == "0-3 1-2 2-1 3-0"
    gold = ["--src", "src.txt", "--tgt", "tgt.txt", "--gold", "gold.txt"]
    code, out, _ = run(capsys, "align-eval", "--model", files, *gold, "--device", "auto", "--json")
    assert code == 0 and json.loads(out)["aer"] == 0.0
    with pytest.raises(SystemExit) as e:  # not a device name: a usage error
        main(["align", "--model", files, "--device", "tpu", *pair])
    assert e.value.code == 2 and "unknown device 'tpu'" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cli_align_on_cuda_without_a_gpu_is_a_one_line_error(capsys, files):
    gold = ["--src", "src.txt", "--tgt", "tgt.txt", "--gold", "gold.txt"]
    commands = [
        ["align", "--model", files, "--device", "cuda", "a b", "b a"],
        ["align", "--model", files, "--device", "cuda:0", "--method", "union", "--reverse-model", files, "a b", "b a"],
        ["align-eval", "--model", files, *gold, "--device", "cuda"],
    ]
    for argv in commands:
        code, out, err = run(capsys, *argv)
        assert code == 2 and not out and len(err.strip().splitlines()) == 1
        assert err.startswith(f"attnviz {argv[0]}: error: ") and "no CUDA GPU" in err and "--device cpu" in err


def test_cli_align_eval_refuses_a_bitext_too_large_to_adapt_before_reading_its_gold(capsys, cli_model, monkeypatch):
    """A bitext of more pairs than attnviz adapts on is refused at once, not after its gold file is read
    (a gold file of 200,000 lines takes a minute); the gold here is malformed, and never reached."""
    import importlib

    monkeypatch.setattr(importlib.import_module("attnviz.training.adapt"), "MAX_PAIRS", 2)
    with open("big.txt", "w", encoding="utf-8") as f:
        f.write("a b ||| b a\n" * 3)
    with open("gold.talp", "w", encoding="utf-8") as f:
        f.write("not links\n" * 3)
    args = ("align-eval", "--model", cli_model, "--bitext", "big.txt", "--gold", "gold.talp")
    code, _, err = run(capsys, *args, "--adapt", "5")
    assert code != 0 and "3 pairs are more than attnviz adapts on (2)" in err and "Traceback" not in err
    code, _, err = run(capsys, *args)  # without --adapt the size is no matter: the gold is read, and refused
    assert code != 0 and "more than attnviz adapts on" not in err
