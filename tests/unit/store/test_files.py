"""Safe files: a dead name reservation is freed; stale temporary files are removed, a live one kept."""

from __future__ import annotations

import fcntl
import os
import re
import time

import pytest

from attnviz.errors import ConfigError
from attnviz.store import files, pretrained_dir
from attnviz.store.checkpoint import save
from tests.support.tiny import tiny_translator


def test_a_dead_reservation_frees_its_name(models):
    (models / files.STAGING).mkdir()
    (models / files.STAGING / "free.lock").write_text("")  # left by a killed server: nobody holds it
    out, fd = files.reserve_name(models, "free")
    assert out == models / "free.safetensors"
    assert files.reserve_name(models, "free")[0] == models / "free-2.safetensors"  # now held
    files.release_lock(models / files.STAGING / "free.lock", fd)


def test_save_removes_stale_temporary_files_only(corpus, models):
    old, fresh, busy, killed = (models / f".m.safetensors.{k}.tmp" for k in ("old", "fresh", "busy", "killed"))
    for path in (old, fresh, busy, killed):
        path.write_bytes(b"partial")
    hour_ago, minute_ago = time.time() - 3600, time.time() - 60
    os.utime(old, (hour_ago, hour_ago))
    os.utime(killed, (minute_ago, minute_ago))  # a save killed a minute ago: unlocked, so dead
    os.utime(busy, (hour_ago, hour_ago))
    with open(busy) as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a live save writing it
        save(tiny_translator(corpus), models / "m.safetensors")
    assert not old.exists() and not killed.exists() and fresh.exists() and busy.exists()
    assert files.clean_stale_temp(models, max_age=0) == [] or not busy.exists()


def test_safetensors_own_temporary_files_left_by_a_killed_save_are_removed(models):
    staging = models / files.STAGING
    staging.mkdir()
    old, old_staged, fresh = models / ".tmpAb3xYz", staging / ".tmpQ9wErT", models / ".tmpFresh1"
    others = [models / ".tmpnotours", models / "tmpAb3xYz", models / ".tmpAb3-yz"]  # not safetensors' pattern
    hour_ago = time.time() - 3600
    for path in (old, old_staged, fresh, *others):
        path.write_bytes(b"partial")
        if path is not fresh:
            os.utime(path, (hour_ago, hour_ago))
    assert sorted(files.clean_stale_temp(models)) == sorted([old, old_staged])
    assert fresh.exists() and all(path.exists() for path in others)


def test_file_stems_carry_the_model_and_a_slug_of_the_sentence():
    assert files.file_stem("toy-fr-general-luong", "The café, où l'on mange!", "weights") == (
        "toy-fr-general-luong-The-cafe-ou-l-on-mange-weights"
    )
    assert len(files.slug("word " * 40)) <= 40 and not files.slug("word " * 40).endswith("-")
    assert files.file_stem("", "???") == "attnviz"


def test_a_sentence_with_no_ascii_spelling_still_names_its_files_apart():
    """Arabic, Chinese or Hindi letters have no ASCII spelling: a hash of the sentence keeps each
    sentence's files apart, where the slug alone would name them all after the model."""
    stems = {files.file_stem("ar-en", text, "weights") for text in ("الْ قِطّ يَأْكُل", "الْ قِطّ", "这猫吃苹果", "आदमी")}
    assert len(stems) == 4 and all(s.startswith("ar-en-") and s.endswith("-weights") for s in stems)
    assert files.file_stem("m", "北京 Beijing", "w").startswith("m-Beijing-")  # what has a spelling stays
    assert files.file_stem("m", "le château", "w") == "m-le-chateau-w"  # accents alone are spelled out


def test_long_sentences_that_begin_alike_get_names_of_their_own():
    one = "Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt die Fenster."
    two = "Ein Mann in einem blauen Hemd steht auf einer Leiter und streicht die Wand."
    stems = [files.file_stem("m", text, "weights") for text in (one, two)]
    assert stems[0] != stems[1] and all(s.startswith("m-Ein-Mann-in-einem-blauen-Hemd-steht-auf-") for s in stems)
    assert files.file_stem("m", "a short one", "w") == "m-a-short-one-w"  # a whole slug needs no hash


def test_a_model_name_in_another_script_is_told_what_a_file_name_keeps():
    for name in ("中文模型", "نموذج"):
        with pytest.raises(ConfigError, match=r"no ASCII letters or digits.*A-Z"):
            files.slugify(name)


def test_several_models_name_a_file_whole():
    five = [
        "multi30k-de-en-additive-bahdanau",
        "multi30k-de-en-additive-luong",
        "multi30k-de-en-general-luong",
        "multi30k-de-en-dot-luong",
        "multi30k-de-en-additive-bahdanau-guided",
    ]
    assert files.models_slug(five[:2]) == "multi30k-de-en-additive-bahdanau-vs-luong"
    all_five = files.models_slug(five)
    assert all_five == (
        "multi30k-de-en-additive-bahdanau-vs-additive-luong-vs-general-luong-vs-dot-luong-vs-additive-bahdanau-guided"
    )
    stem = files.file_stem(all_five, "Ein Mann mit einem roten Hut spielt Gitarre auf der Straße.", "figure-weights")
    assert stem.startswith(all_five + "-Ein-Mann") and stem.endswith("-figure-weights")
    assert files.models_slug(["m-plain", "m-plain-guided"]) == "m-plain-vs-plain-guided"  # a twin keeps its part
    assert files.models_slug(["a-x", "b-y"]) == "a-x-vs-b-y"
    assert files.models_slug(["x"] + [f"task-model-{k}" for k in range(60)]) == "61-models"
    assert files.models_slug([f"task-model-{k}-long-name" for k in range(20)]) == "task-model-20-models"
    assert files.models_slug(["same", "same"]) == "same" and files.models_slug([]) == ""


def test_default_model_name_spells_scores_and_styles_as_the_shipped_models_do():
    assert files.default_model_name("dates", "local_m", "luong") == "dates-local-m-luong"
    assert files.default_model_name("multi30k-de-en", "scaled_dot", "Bahdanau") == "multi30k-de-en-scaled-dot-bahdanau"
    long = files.default_model_name("x" * 200, "local_p", "luong")
    assert len(long) <= files.MAX_NAME - 4 and long == files.slugify(long)  # room for a free-name suffix


def test_a_long_model_name_is_cut_to_leave_room_for_a_suffix():
    assert files.slugify("a" * 100) == "a" * files.MAX_NAME


def test_a_free_path_never_takes_a_shipped_models_name(models):
    # the shipped model would be hidden by a user's file of its name
    assert files.free_path(models, "dates-dot-luong") == models / "dates-dot-luong-2.safetensors"


def test_a_checkpoint_destination_in_the_shipped_models_is_refused(models):
    with pytest.raises(ConfigError, match="the shipped models; the CLI never writes there"):
        files.check_output(pretrained_dir() / "x.safetensors")


def test_a_checkpoint_destination_in_a_read_only_folder_is_refused_before_any_work(tmp_path, monkeypatch):
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if mode == os.W_OK else real(p, mode))  # root writes all
    with pytest.raises(ConfigError, match=re.escape(f"{tmp_path} is not writable; choose another --out")):
        files.check_output(tmp_path / "x.safetensors")


def test_a_reader_of_the_old_file_reads_it_whole_while_it_is_rewritten(tmp_path):
    path = tmp_path / "report.csv"
    path.write_text("old,row\n", encoding="utf-8")
    with open(path, encoding="utf-8") as reader:  # a download or a spreadsheet that has it open
        files.write_atomic(path, "new,row\n" * 3)
        assert reader.read() == "old,row\n"
    assert path.read_text(encoding="utf-8") == "new,row\n" * 3
