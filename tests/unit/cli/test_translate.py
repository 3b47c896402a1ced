"""``attnviz translate --file``: one translation per line, batched, the same as one sentence at a time;
a line the model cannot read is named on standard error and the rest decodes; ``--device`` for
``translate`` and ``evaluate``."""

from __future__ import annotations

import io
import json

import pytest
import torch

from attnviz.store.checkpoint import load_checkpoint
from tests.support.cli import run

LINES = ["a b c", "", "h g f e d c b a", "b", "x " * 150, "c Zebra a d"]


@pytest.mark.parametrize("beam", ["1", "4"])
def test_a_file_gives_one_translation_per_line(capsys, model_file, tmp_path, beam):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "translate", "--model", "good", "--beam", beam, "--file", str(path))
    assert code == 2  # one line could not be read: named once on stderr, the rest translated
    assert err.count("\n") == 1 and "line 5:" in err and "tokens" in err
    model = load_checkpoint(model_file)
    readable = [i for i, t in enumerate(LINES) if t.strip() and i != 4]
    texts = model.translate_batch([LINES[i] for i in readable], beam_size=int(beam))
    alone = [texts[readable.index(i)] if i in readable else "" for i in range(len(LINES))]
    assert out.split("\n")[:-1] == alone
    if beam != "1":  # beam search in batches: what each sentence gets alone, with its trace
        assert texts == [model.text_of(model.translate(LINES[i], beam_size=int(beam))) for i in readable]

    code, out, _ = run(capsys, "translate", "--model", "good", "--beam", beam, "--file", str(path), "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["line"] for r in rows] == list(range(1, 7)) and [r["translation"] for r in rows] == alone
    assert "error" in rows[4] and "error" not in rows[0]


class Pipe(io.RawIOBase):
    """Bytes that can be read once, as from a pipe: no seeking back."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._data.readinto(buffer)


def test_a_file_of_readable_lines_exits_0_and_standard_input_works(capsys, model_file, tmp_path, monkeypatch):
    model = load_checkpoint(model_file)
    expected = [model.text_of(model.translate(s, beam_size=3)) for s in ("a b", "c d e")]
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(Pipe(b"a b\nc d e\n"))))
    code, out, err = run(capsys, "translate", "--model", "good", "--beam", "3", "--file", "-", "--device", "cpu")
    assert code == 0 and err == "" and out.splitlines() == expected
    # a byte-order mark is not a word, \r\n and \r end lines and nothing else does, a pipe reads once
    for data in (b"\xef\xbb\xbfa b\r\nc d e\r\n", b"a b\rc d e"):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(Pipe(data))))
        code, out, err = run(capsys, "translate", "--model", "good", "--beam", "3", "--file", "-")
        assert code == 0 and err == "" and out.splitlines() == expected
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfa b\nc d e\xe2\x80\xa8a\n")  # U+2028 stays inside its line
    code, out, err = run(capsys, "translate", "--model", "good", "--beam", "3", "--file", str(path))
    assert code == 0 and out.splitlines()[0] == expected[0] and len(out.splitlines()) == 2


def test_standard_input_closed_is_one_line(capsys, model_file, monkeypatch):
    monkeypatch.setattr("sys.stdin", None)  # started with <&-
    code, out, err = run(capsys, "translate", "--model", "good", "--file", "-")
    assert code == 2 and out == "" and "standard input is closed" in err and err.count("\n") == 1


def test_a_sentence_or_a_file_not_both(capsys, model_file, tmp_path):
    code, _, err = run(capsys, "translate", "--model", "good", "--file", str(tmp_path / "x.txt"), "a b")
    assert code == 2 and "either" in err
    code, _, err = run(capsys, "translate", "--model", "good")
    assert code == 2 and "either" in err
    code, _, err = run(capsys, "translate", "--model", "good", "--file", str(tmp_path / "missing.txt"))
    assert code == 2 and err.count("\n") == 1


def test_a_binary_file_is_refused_and_bytes_not_utf8_are_named_once(capsys, model_file, tmp_path):
    binary = tmp_path / "model.bin"
    binary.write_bytes(b"a b\x00\x01\x02\n" * 10)
    code, out, err = run(capsys, "translate", "--model", "good", "--file", str(binary))
    assert (
        code == 2
        and out == ""
        and err.strip().endswith("looks like a binary file, not text; give one sentence a line, UTF-8")
    )
    with open(binary, "rb") as f, pytest.MonkeyPatch.context() as mp:  # the same bytes on standard input
        mp.setattr("sys.stdin", io.TextIOWrapper(f))
        code, out, err = run(capsys, "translate", "--model", "good", "--file", "-")
    assert code == 2 and "standard input looks like a binary file" in err
    latin = tmp_path / "latin.txt"
    latin.write_bytes("a b\nc d\xe9\nd\xe9 a\n".encode("latin-1"))
    code, out, err = run(capsys, "translate", "--model", "good", "--file", str(latin))
    assert code == 0 and len(out.splitlines()) == 3  # every line translated, the bad bytes as U+FFFD
    assert err.count("\n") == 1 and "line 2 (and maybe more) is not UTF-8" in err and "iconv" in err
    wide = tmp_path / "unicode.txt"  # Notepad's "Unicode": UTF-16 after its mark, NUL bytes and all
    wide.write_bytes("a b\r\nc d e\r\n".encode("utf-16"))
    code, out, err = run(capsys, "translate", "--model", "good", "--file", str(wide))
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"a b\nc d e\n")
    assert code == 0 and err == "" and out == run(capsys, "translate", "--model", "good", "--file", str(plain))[1]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize("command", [["translate", "a b"], ["evaluate", "--n", "2"]])
def test_a_missing_gpu_is_one_line(capsys, model_file, command):
    code, out, err = run(capsys, command[0], "--model", "good", "--device", "cuda", *command[1:])
    assert code == 2 and out == "" and err.count("\n") == 1 and "no CUDA GPU" in err


def test_evaluate_on_a_chosen_device(capsys, model_file):
    code, out, _ = run(capsys, "evaluate", "--model", "good", "--n", "3", "--beam", "3", "--device", "auto", "--json")
    assert code == 0 and json.loads(out)["beam_size"] == 3


def test_json_names_unknown_words_on_stderr_and_keep_unk_copies_none(capsys, corpus, models):
    """--json keeps the stderr note on unknown words; unk_copies lists the <unk> copies translate made,
    none with --keep-unk (nothing is copied there)."""
    from attnviz.data.vocab import UNK_ID
    from attnviz.store.checkpoint import save
    from tests.support.tiny import tiny_translator

    tr = tiny_translator(corpus)
    with torch.no_grad():  # a decoder that writes <unk> at every step until max_len
        tr.model.decoder.out.bias[UNK_ID] = 100.0
    save(tr, models / "unky.safetensors")
    code, out, err = run(capsys, "translate", "--model", "unky", "--json", "--max-len", "3", "c Zebra a")
    trace = json.loads(out)
    assert code == 0 and err == "unknown words: Zebra\n"
    assert trace["target_tokens"][:3] == ["<unk>"] * 3 and len(trace["unk_copies"]) == 3
    copied = [trace["source_tokens"][s] for s in trace["unk_copies"].values()]
    assert trace["translation"].split() == [w for k, w in enumerate(copied) if k == 0 or w != copied[k - 1]]
    for beam in ("1", "2"):
        code, out, err = run(capsys, "translate", "--model", "unky", "--json", "--keep-unk", "--beam", beam, "c a")
        trace = json.loads(out)
        assert code == 0 and trace["translation"].split() == ["<unk>"] * len(trace["translation"].split())
        assert trace["unk_copies"] == {} and all(h["unk_copies"] == {} for h in trace.get("hypotheses", []))
    code, out, _ = run(capsys, "translate", "--model", "unky", "--json", "--beam", "3", "--max-len", "2", "c a")
    hypotheses = json.loads(out)["hypotheses"]
    assert len(hypotheses) == 3 and hypotheses[0]["translation"] == json.loads(out)["translation"]
    assert all(h["translation"] and "<unk>" not in h["translation"] for h in hypotheses)  # texts as printed


def test_the_nbest_list_prints_the_score_it_is_ranked_by(capsys, model_file):
    """Each line of the n-best list: log p / tokens (what beam search ranks by, so the column falls down
    the list), log p and the tokens. (Only log p was printed, so the list looked out of order.)"""
    code, out, _ = run(capsys, "translate", "--model", "good", "--beam", "4", "a b c")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["log", "p/tok", "log", "p", "tokens", "translation"]
    rows = [line.split(maxsplit=3) for line in lines[1:] if not line.startswith("alignment")]
    scores = [float(r[0]) for r in rows]
    assert len(rows) > 1 and scores == sorted(scores, reverse=True)
    assert all(float(r[0]) == pytest.approx(float(r[1]) / int(r[2]), abs=2e-3) for r in rows)


def test_max_len_0_is_a_usage_error(capsys, model_file):
    with pytest.raises(SystemExit) as exc:
        run(capsys, "translate", "--model", "good", "--max-len", "0", "a b")
    assert exc.value.code == 2 and "--max-len: 0 is out of range [1, 1000]" in capsys.readouterr().err


def test_a_person_watching_standard_error_sees_the_lines_counted(capsys, model_file, tmp_path, monkeypatch):
    """Translations going to a file while standard error is a terminal: the lines done and their rate
    there, the notes above it, and the translations untouched; nothing of it where stderr is a file."""
    import sys

    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    code, plain, err = run(capsys, "translate", "--model", "good", "--file", str(path))
    assert "lines" not in err and err.count("\n") == 1  # stderr a file: the note alone
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(capsys, "translate", "--model", "good", "--file", str(path))
    assert code == 2 and out == plain
    assert "6 lines" in err and "lines/s" in err and "line 5: not translated" in err
