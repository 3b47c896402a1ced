"""Adaptation jobs for the app: run to done with progress, the model and its file untouched, cancel, the
cap, an abandoned session, failures as messages, uploaded bitexts read or refused with one message each,
and a save under a free name that never overwrites and never writes into the shipped models."""

from __future__ import annotations

import pytest
import torch

from attnviz.errors import ConfigError, DataError
from attnviz.server import adapt_jobs
from attnviz.server.adapt_jobs import CANCELLED, DONE, FAILED, Adaptations, save_adapted, upload_bitext
from attnviz.server.jobs import BusyError
from attnviz.store import load_checkpoint, save
from attnviz.training import MAX_ADAPT_STEPS, AdaptConfig
from tests.support.tiny import reverse_corpus, tiny_translator

SOURCES = [s.split() for s in ("a b c", "b c d e", "c a", "d e a b", "e e c", "a d")]
TARGETS = [list(reversed(s)) for s in SOURCES]
VERSION = ("model.safetensors", 1.0)
ENDLESS = AdaptConfig(steps=MAX_ADAPT_STEPS, batch_size=2)  # ends only when stopped


@pytest.fixture(scope="module")
def translator():
    return tiny_translator(reverse_corpus(), score="general", style="luong")


def test_an_adaptation_runs_to_done_on_a_copy(translator, tmp_path):
    path = save(translator, tmp_path / "m.safetensors")
    before = path.read_bytes()
    model = load_checkpoint(path)
    state = {k: v.clone() for k, v in model.model.state_dict().items()}
    job = Adaptations(max_jobs=1).start(model, SOURCES, TARGETS, AdaptConfig(steps=6, batch_size=3), VERSION)
    job.join(60)
    snap = job.snapshot()
    assert snap.status == DONE, snap.error
    assert (snap.step, snap.total_steps, snap.fraction) == (6, 6, 1.0) and snap.loss is not None
    assert not snap.active and job.label == "adapted 6 steps"
    assert job.result is not None and job.result is not model
    assert job.result.meta["adapted"]["steps_run"] == 6 and job.cfg.num_threads == 1  # one thread unless told
    assert all(torch.equal(state[k], v) for k, v in model.model.state_dict().items())
    assert path.read_bytes() == before


def test_cancel_drops_the_copy_and_frees_the_slot(translator):
    adaptations = Adaptations(max_jobs=1)
    job = adaptations.start(translator, SOURCES, TARGETS, ENDLESS, VERSION)
    with pytest.raises(BusyError, match="ATTNVIZ_MAX_TRAININGS"):
        adaptations.start(translator, SOURCES, TARGETS, ENDLESS, VERSION)
    job.cancel()
    job.join(60)
    snap = job.snapshot()
    assert snap.status == CANCELLED and job.result is None and "dropped" in snap.error
    assert adaptations.active() == []
    adaptations.start(translator, SOURCES, TARGETS, AdaptConfig(steps=1, batch_size=2), VERSION).join(60)


def test_an_adaptation_whose_session_has_gone_stops(translator):
    job = Adaptations(max_jobs=1).start(translator, SOURCES, TARGETS, ENDLESS, VERSION, is_alive=lambda: False)
    job.join(60)
    assert job.snapshot().status == CANCELLED


def test_a_reloaded_page_is_not_refused_by_its_own_orphaned_adaptation(translator):
    adaptations, alive = Adaptations(max_jobs=1), {"yes": True}
    orphan = adaptations.start(translator, SOURCES, TARGETS, ENDLESS, VERSION, is_alive=lambda: alive["yes"])
    alive["yes"] = False  # the page reloaded: a new session asks at once, before the orphan's next step
    again = adaptations.start(translator, SOURCES, TARGETS, AdaptConfig(steps=1, batch_size=2), VERSION)
    for job in (orphan, again):
        job.join(60)
    assert orphan.snapshot().status == CANCELLED and again.snapshot().status == DONE


def test_a_bitext_it_cannot_use_fails_with_the_reason(translator):
    job = Adaptations(max_jobs=1).start(translator, [], [], AdaptConfig(steps=2), VERSION)
    job.join(60)
    snap = job.snapshot()
    assert snap.status == FAILED and "empty" in snap.error and job.result is None


def test_an_uploaded_bitext_is_read_as_words():
    assert upload_bitext("\ufeffa b ||| b a\nc ||| c\n".encode(), "pairs.txt") == (
        [["a", "b"], ["c"]],
        [["b", "a"], ["c"]],
    )
    assert upload_bitext(b"a b\nc\n", "src.txt", b"b a\nc\n", "tgt.txt") == ([["a", "b"], ["c"]], [["b", "a"], ["c"]])


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_a_bitext_in_utf16_or_utf32_with_its_mark_is_read_as_text(encoding):
    """As Notepad's 'Unicode' writes it, and as the gold uploader and the CLI read it. (It was refused as
    'a binary file': its NUL bytes were checked before its byte-order mark.)"""
    data = "le chat ||| the cat\nété ||| summer\n".encode(encoding)  # the codec writes the mark
    assert upload_bitext(data, "unicode.txt") == ([["le", "chat"], ["été"]], [["the", "cat"], ["summer"]])


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ((b"", "empty.txt"), "empty.txt is empty: it holds no sentences"),
        ((b" \n\n", "blank.txt"), "blank.txt is empty: it holds no sentences"),
        ((b"a b\nc\n", "src.txt", b"b a\n", "tgt.txt"), "src.txt has 2 lines but tgt.txt has 1"),
        ((b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "picture.png"), "picture.png looks like a binary file"),
        ((b"caf\xe9 ||| cafe\n", "latin1.txt"), "latin1.txt: not UTF-8"),
        ((b"a b c\n", "src.txt"), "src.txt: its first line has no ' ||| '"),
        ((b"a ||| b\n\nc ||| d\n", "gap.txt"), "gap.txt line 2: no ' ||| ' separator"),
        ((b"a\n\nc\n", "src.txt", b"b\nx\nd\n", "tgt.txt"), "src.txt line 2: an empty source sentence"),
    ],
)
def test_an_upload_it_cannot_adapt_on_is_refused_with_one_message(files, message):
    with pytest.raises(DataError) as caught:
        upload_bitext(*files)
    assert message in str(caught.value)


def test_a_file_over_the_limit_is_refused_before_it_is_read(monkeypatch):
    monkeypatch.setattr(adapt_jobs, "MAX_FILE_BYTES", 2**20)
    with pytest.raises(DataError, match=r"big\.txt is over the 1 MB limit"):
        upload_bitext(b"a ||| b\n" * 2**18, "big.txt")
    monkeypatch.setattr(adapt_jobs, "MAX_APP_PAIRS", 3)
    with pytest.raises(DataError, match="4 pairs are more than the app adapts on"):
        upload_bitext(b"a ||| b\n" * 4, "long.txt")


def test_save_takes_a_free_name_and_never_overwrites(translator, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "pretrained"))
    taken = tmp_path / "models" / "toy-adapted.safetensors"
    taken.parent.mkdir()
    taken.write_bytes(b"someone else's model")
    first = save_adapted(translator, "toy adapted", tmp_path / "models", owner="session-1")
    second = save_adapted(translator, "toy adapted", tmp_path / "models")
    assert taken.read_bytes() == b"someone else's model"
    assert (first.name, second.name) == ("toy-adapted-2.safetensors", "toy-adapted-3.safetensors")
    assert load_checkpoint(first).meta["owner"] == "session-1" and "owner" not in load_checkpoint(second).meta
    assert "owner" not in translator.meta  # the session's copy is not changed by a save
    models = {p.name for p in (tmp_path / "models").glob("*.safetensors")}
    assert models == {"toy-adapted.safetensors", "toy-adapted-2.safetensors", "toy-adapted-3.safetensors"}
    assert not [p for p in (tmp_path / "models" / ".training").iterdir() if p.suffix != ".lock"]


def test_save_never_writes_into_the_shipped_models(translator, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "pretrained"))
    (tmp_path / "pretrained").mkdir()
    with pytest.raises(ConfigError, match="never writes"):
        save_adapted(translator, "x", tmp_path / "pretrained" / "sub")
    assert list((tmp_path / "pretrained").iterdir()) == []
