"""The command line in pipelines and odd terminals: a reader of its messages that went away stops no
training, a terminal that cannot write a letter gets it escaped (JSON as ASCII escapes), arguments in
bytes the locale cannot read are read as UTF-8, a file written by a report keeps its link and mode, and
the progress bar is drawn on a terminal only."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from attnviz.cli.main import main
from attnviz.cli.streams import sentence
from attnviz.store import write_atomic
from tests.support.cli import run

TINY = ["train", "--data", "copy", "--emb", "8", "--hidden", "8", "--attn", "8", "--eval-n", "0", "--epochs", "1"]


class _GoneReader(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_of_the_messages_that_went_away_stops_no_training(models, monkeypatch):
    monkeypatch.setattr(sys, "stderr", _GoneReader())
    out = models / "piped.safetensors"
    assert main([*TINY, "--out", str(out)]) == 0
    assert out.is_file() and isinstance(sys.stderr, _GoneReader)  # the stream is given back


def test_progress_in_a_file_is_epoch_lines_not_a_redrawn_bar(capsys, models):
    code, _, err = run(capsys, *TINY, "--epochs", "2", "--out", str(models / "m.safetensors"))
    assert code == 0 and "\r" not in err
    assert [line.split(":")[0] for line in err.splitlines() if line.startswith("epoch")] == ["epoch 1", "epoch 2"]


def test_a_terminal_that_cannot_write_a_letter_gets_it_escaped():
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "attnviz", "translate", "--model", "toy-fr-general-luong"]
    text = "the girl eats the cr\u00eape ."
    plain = subprocess.run([*argv, text], env=env, capture_output=True, text=True)
    assert plain.returncode == 0 and plain.stderr == "unknown words: cr\\xeape\n"  # escaped, no traceback
    as_json = subprocess.run([*argv, "--json", text], env=env, capture_output=True, text=True)
    assert as_json.returncode == 0 and "cr\u00eape" in json.loads(as_json.stdout)["source_tokens"]


def test_sentences_in_bytes_the_locale_cannot_read_are_read_as_utf8(capsys):
    mangled = os.fsdecode("M\u00e4dchen".encode())  # as Python decodes argv under LC_ALL=C
    assert [sentence(mangled), sentence("plain")] == ["M\u00e4dchen", "plain"]
    latin1 = os.fsdecode(b"Jos\xe9")
    assert sentence(latin1) == "Jos\ufffd" and "not UTF-8" in capsys.readouterr().err


@pytest.mark.skipif(os.name != "posix", reason="POSIX file names are bytes")
def test_a_file_named_in_bytes_that_are_not_utf8_is_opened_by_its_name(tmp_path, capsys, monkeypatch):
    # an old archive's Latin-1 name: the path keeps its bytes (only sentences are read as UTF-8)
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"l\xe4t.txt")
    with open(os.fsencode(tmp_path) + b"/l\xe4t.txt", "w", encoding="utf-8") as f:
        f.write("the cat .\n")
    assert main(["translate", "--model", "toy-fr-general-luong", "--file", name]) == 0
    assert capsys.readouterr().out.strip()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_a_written_report_keeps_its_link_and_mode_and_never_overwrites_unasked(tmp_path):
    target = tmp_path / "real.html"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o600)
    link = tmp_path / "link.html"
    link.symlink_to(target)
    write_atomic(link, "new")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "new"
    assert target.stat().st_mode & 0o777 == 0o600
    with pytest.raises(FileExistsError):
        write_atomic(target, "newer", replace=False)
    assert target.read_text(encoding="utf-8") == "new" and not list(tmp_path.glob(".*.tmp"))


def test_an_out_file_that_appeared_while_the_command_ran_is_kept_unless_forced(tmp_path):
    from attnviz.cli.options import write_out
    from attnviz.errors import ConfigError

    out = tmp_path / "report.html"
    out.write_text("another run's", encoding="utf-8")
    with pytest.raises(ConfigError, match="appeared while this ran; add --force to overwrite it"):
        write_out(out, "mine", force=False)
    assert out.read_text(encoding="utf-8") == "another run's"
    write_out(out, "mine", force=True)
    assert out.read_text(encoding="utf-8") == "mine"


def test_a_model_name_no_terminal_can_show_is_listed_escaped(capsys, models, model_file):
    import shutil

    for name in ("nl\nname", "evil\u202ename", " "):
        shutil.copy(model_file, models / f"{name}.safetensors")
    code, out, _ = run(capsys, "list")
    assert code == 0 and "'nl\\nname'" in out and "'evil\\u202ename'" in out and "' '" in out
    assert "\u202e" not in out and "nl\nname" not in out


def test_a_name_no_file_system_holds_is_one_error():
    from attnviz import load, read_history
    from attnviz.errors import AttnvizError

    for bad in ("a\x00b", "~nobody-here-at-all/x", "x" * 5000):
        for read in (load, read_history):
            with pytest.raises(AttnvizError):
                read(bad)
    with pytest.raises(AttnvizError, match="not int"):
        read_history(12)


def test_translate_from_a_slow_writer_answers_each_line_as_it_arrives():
    import threading

    from attnviz.cli.translate import _chunks

    typed = threading.Event()

    def terminal():
        yield "the first line\n"
        typed.wait(30)  # the user has not typed the second line yet
        yield "the second line\n"

    chunks = _chunks(terminal())
    assert next(chunks) == [(1, "the first line")]  # answered before the second line is typed
    typed.set()
    assert list(chunks) == [[(2, "the second line")]]


def test_translate_reads_a_file_in_full_chunks(monkeypatch):
    from attnviz.cli import translate

    monkeypatch.setattr(translate, "FILE_CHUNK", 4)
    sizes = [len(c) for c in translate._chunks(io.StringIO("".join(f"line {i}\n" for i in range(10))))]
    assert sum(sizes) == 10 and max(sizes) <= 4 and sizes[-1] >= 1


def test_sigterm_ends_a_training_as_an_interruption_does_with_exit_143(tmp_path):
    import signal

    env = {**os.environ, "OMP_NUM_THREADS": "1", "ATTNVIZ_MODELS": str(tmp_path)}
    out = tmp_path / "long.safetensors"
    argv = [sys.executable, "-m", "attnviz", *TINY[:-2], "--epochs", "200", "--out", str(out)]
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    first = proc.stderr.readline()  # "training on cpu": the training has started
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert first.startswith("training on") and proc.returncode == 143
    assert "attnviz train: terminated; " in err and "Traceback" not in err
