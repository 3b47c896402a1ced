"""Real corpora through `datasets`: Multi30k layout, local tables (dotted and nested column names,
columns that are not text, null JSON lines), the offline Hub, bad input (with short messages that name
the real cause), stale table caches."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest

from attnviz.data import corpora, default_multi30k, load_corpus, table_columns
from attnviz.errors import ConfigError, DataError
from tests.support.multi30k import LINES, multi30k_folder, write
from tests.support.tables import PAIRS


@pytest.fixture
def m30k(tmp_path: Path) -> Path:
    """A tiny folder in the Multi30k layout: 4 train, 1 val, 1 test pair per language."""
    return multi30k_folder(tmp_path)


def test_multi30k_from_fixture(m30k):
    corpus = load_corpus(f"multi30k-de-en@{m30k}")
    assert (len(corpus.train), len(corpus.valid), len(corpus.test)) == (4, 1, 1)
    assert corpus.train[1].source == "Zwei Männer reden." and corpus.train[1].target == "Two men talk."
    assert corpus.train[1].source_tokens == ["zwei", "männer", "reden", "."]
    assert not corpus.has_gold and corpus.train[0].sure is None and corpus.notes == []
    assert load_corpus(f"multi30k-fr-de@{m30k}").test[0].source == "La pluie tombe."


def test_multi30k_uncompressed_files(tmp_path):
    for lang in ("en", "de"):
        write(tmp_path / f"train.{lang}", LINES[lang][:4], gz=False)
    corpus = load_corpus(f"multi30k-en-de@{tmp_path}", n_valid=1, n_test=1)
    assert (len(corpus.train), len(corpus.valid), len(corpus.test)) == (2, 1, 1)
    assert any("cut from train" in note for note in corpus.notes)


@pytest.mark.skipif(not default_multi30k().is_dir(), reason="no ../shared/data/multi30k here")
def test_real_multi30k_counts():
    corpus = load_corpus("multi30k-de-en")
    assert (len(corpus.train), len(corpus.valid), len(corpus.test)) == (29000, 1014, 1000)


def test_unequal_line_counts(m30k):
    write(m30k / "val.de.gz", LINES["de"][:3])
    with pytest.raises(DataError, match=r"val.de.gz has 3 lines but val.en.gz has 1: line 2 of .*val.de.gz"):
        load_corpus(f"multi30k-de-en@{m30k}")


def test_non_utf8_bytes_name_the_line(m30k):
    (m30k / "train.en.gz").write_bytes(gzip.compress(b"A dog runs.\nCaf\xe9 time.\n"))
    with pytest.raises(DataError, match=r"train.en.gz, line 2, column 4: byte 0xe9 is not UTF-8; re-save"):
        load_corpus(f"multi30k-de-en@{m30k}")


def test_a_utf16_table_says_how_to_make_it_utf8(tmp_path):
    path = tmp_path / "pairs.tsv"  # Excel's "Unicode Text"
    path.write_bytes("en\tfr\nthe cat\tle chat\n".encode("utf-16"))
    with pytest.raises(DataError, match=r"pairs.tsv is UTF-16 text .*`iconv -f UTF-16 -t UTF-8 in > out`"):
        table_columns(path)


def test_empty_rows_dropped_with_a_note_or_refused(m30k):
    write(m30k / "train.en.gz", ["A dog runs.", "", "A girl sings.", "A cat sleeps."])
    corpus = load_corpus(f"multi30k-en-de@{m30k}")
    assert len(corpus.train) == 3
    assert corpus.notes == ["train.en.gz/train.de.gz: dropped 1 row with an empty side (line 2)"]
    with pytest.raises(DataError, match=r"train.en.gz/train.de.gz: 1 of 4 rows .*line 2.*empty='drop'"):
        load_corpus(f"multi30k-en-de@{m30k}", empty="error")


def test_folder_problems(tmp_path, m30k):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("hi")
    (tmp_path / "empty" / "train.en.txt").write_text("hi")
    with pytest.raises(DataError, match=r"has no Multi30k files .*found train.en.txt\)") as error:
        load_corpus(f"multi30k-de-en@{tmp_path / 'empty'}")
    assert "notes.txt" not in str(error.value)  # a folder's other files are not listed
    with pytest.raises(DataError, match="does not exist"):
        load_corpus(f"multi30k-de-en@{tmp_path / 'nowhere'}")
    (m30k / "train.fr.gz").unlink()
    with pytest.raises(DataError, match=r"no train.fr.gz .*train files for de, en"):
        load_corpus(f"multi30k-fr-en@{m30k}")
    with pytest.raises(DataError, match="no language 'xx'"):
        load_corpus(f"multi30k-xx-en@{m30k}")


def test_over_large_file_is_refused(m30k):
    with pytest.raises(DataError, match=r"train.de.gz is 0 MB, above the limit .*raise max_bytes"):
        load_corpus(f"multi30k-de-en@{m30k}", max_bytes=10)


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame({"id": ["007"] * 6, "en": LINES["en"], "de": LINES["de"]})


@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl", "parquet"])
def test_local_tables(tmp_path, table, suffix):
    path = tmp_path / f"pairs.{suffix}"
    if suffix == "csv":
        table.to_csv(path, index=False)
    elif suffix == "tsv":
        table.to_csv(path, sep="\t", index=False)
    elif suffix == "jsonl":
        table.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        table.to_parquet(path)
    corpus = load_corpus(f"{path}?src=de&tgt=en", n_valid=1, n_test=1, seed=3)
    assert corpus.name == f"file:{path}"
    assert (len(corpus.train), len(corpus.valid), len(corpus.test)) == (4, 1, 1)
    got = sorted((p.source, p.target) for p in corpus.train + corpus.valid + corpus.test)
    assert got == sorted(zip(LINES["de"], LINES["en"], strict=True))
    assert load_corpus(f"{path}?src=de&tgt=en", n_valid=1, n_test=1, seed=3).test == corpus.test


def test_nested_json_columns_and_format_option(tmp_path):
    path = tmp_path / "pairs.data"
    rows = [{"translation": {"de": d, "en": e}} for d, e in zip(LINES["de"], LINES["en"], strict=True)]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows))
    corpus = load_corpus(f"{path}?src=translation.de&tgt=translation.en&format=jsonl", n_valid=1, n_test=1)
    assert len(corpus.train) == 4 and all(p.source and p.target for p in corpus.train)


def test_table_problems(tmp_path, table):
    path = tmp_path / "pairs.csv"
    table.rename(columns={"de": "german"}).to_csv(path, index=False)
    with pytest.raises(DataError, match=r"pairs.csv has no column 'de'; its columns are \['id', 'en', 'german'\]"):
        load_corpus(f"{path}?src=de&tgt=en")
    with pytest.raises(ConfigError, match=r"does not name its tgt column; add \?src=COLUMN&tgt=COLUMN"):
        load_corpus(f"{path}?src=german")
    with pytest.raises(ConfigError, match="unknown option"):
        load_corpus(f"{path}?src=german&tgt=en&sep=;")
    (tmp_path / "pairs.xlsx").write_bytes(b"PK")
    with pytest.raises(DataError, match="cannot tell the format"):
        load_corpus(f"{tmp_path / 'pairs.xlsx'}?src=a&tgt=b")
    with pytest.raises(DataError, match="does not exist"):
        load_corpus(f"{tmp_path / 'missing.csv'}?src=a&tgt=b")


def test_a_spec_is_told_its_own_fault_first(tmp_path, table):
    """A missing file before its options or format, a format typed that no reader has, a built-in data set
    given ?options: each said as what it is (they read "cannot tell the format of nofile", "does not name its
    tgt column" for dates?src=a)."""
    for spec in (f"{tmp_path / 'nofile'}?src=a&tgt=b", f"{tmp_path / 'nofile.csv'}", f"{tmp_path / 'x.csv'}?src=a"):
        with pytest.raises(DataError, match=r"does not exist or is not a file; check the path"):
            load_corpus(spec)
    path = tmp_path / "pairs.csv"
    table.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"format='xml' is not a table format attnviz reads; use format=csv, tsv"):
        load_corpus(f"{path}?src=de&tgt=en&format=xml")
    assert len(load_corpus(f"{path}?src=de&tgt=en&format=CSV").train) > 0  # a format's case does not matter
    for spec in ("dates?src=a", "multi30k-de-en?src=de&tgt=en"):
        with pytest.raises(ConfigError, match=r"is a built-in data set and takes no \?options; write "):
            load_corpus(spec)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"de": "a", "en": "b"}\n{"de": "c", "en": \n')
    with pytest.raises(DataError, match=r"could not read .*bad.jsonl as json"):
        load_corpus(f"{bad}?src=de&tgt=en")


def test_a_header_of_huge_or_many_names_gives_a_short_message(tmp_path):
    path = tmp_path / "nul.csv"
    path.write_bytes(b"\0" * 130_000)  # one header "column" of 130,000 NULs
    with pytest.raises(DataError, match=r"has no column 'en'; its columns are \['(\\x00){39}…'\]") as e:
        load_corpus(f"{path}?src=en&tgt=fr")
    assert len(str(e.value)) < 600
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(1000)) + "\n" + ",".join("x" * 1000) + "\n")
    with pytest.raises(DataError, match=r"'c19'\] and 980 more\. Name the right ones, e.g. wide.csv\?src=c0&tgt=c999"):
        load_corpus(f"{wide}?src=en&tgt=fr")


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_an_unreadable_table_names_the_cause_not_gzip(tmp_path, monkeypatch, suffix):
    path = tmp_path / f"pairs{suffix}"
    path.write_bytes(b"en,fr\ndog,chien\n")

    def refused(file, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(file))

    monkeypatch.setattr(corpora, "open", refused, raising=False)
    monkeypatch.setattr(corpora.gzip, "open", refused)
    with pytest.raises(DataError, match=rf"^cannot read {path}: Permission denied; check that you may read it"):
        corpora.check_file(path)


def test_a_table_that_is_not_gzip_inside_says_gzip(tmp_path):
    path = tmp_path / "pairs.csv.gz"
    path.write_bytes(b"en,fr\ndog,chien\n")
    with pytest.raises(DataError, match=r"pairs.csv.gz is not a readable gzip file \(Not a gzipped file"):
        corpora.check_file(path)


def test_empty_csv_rows_name_the_line(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("de,en\nHund,dog\n,cat\nMaus,\nBaum,tree\nHaus,house\nAuto,car\n")
    corpus = load_corpus(f"{path}?src=de&tgt=en", n_valid=1, n_test=1)
    assert len(corpus) == 4 and corpus.notes == [f"{path}: dropped 2 rows with an empty side (line 3, 4)"]


@pytest.mark.parametrize(("suffix", "sep"), [("csv", ","), ("tsv", "\t")])
def test_rows_with_more_fields_than_the_header_are_refused_not_shifted(tmp_path, suffix, sep):
    path = tmp_path / f"pairs.{suffix}"
    rows = [("en", "fr"), *(("dog", "chien", "note0"), ("cat", "chat", "note1"))]
    path.write_text("\n".join(sep.join(row) for row in rows) + "\n")
    fix = "remove the tab inside a field, or write the table as CSV" if sep == "\t" else "quote a field that holds a c"
    message = rf"pairs.{suffix}, line 2: 3 fields but the header names 2; {fix}"
    with pytest.raises(DataError, match=message):
        load_corpus(f"{path}?src=en&tgt=fr")
    with pytest.raises(DataError, match=message):
        table_columns(path)


def test_extra_field_after_a_multi_line_record_names_its_first_line(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text('en,fr\n"a\nlong dog","chien"\n"cat","chat",note\n')
    with pytest.raises(DataError, match=r"pairs.csv, line 4: 3 fields but the header names 2"):
        load_corpus(f"{path}?src=en&tgt=fr")


@pytest.mark.parametrize("flag", [True, False])
def test_offline_hub_fails_fast(monkeypatch, flag):
    import socket

    if flag:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)

        def no_network(*args, **kwargs):
            raise OSError("network is unreachable")

        monkeypatch.setattr(socket, "create_connection", no_network)
    start = time.perf_counter()
    with pytest.raises(DataError, match=r"this machine is offline.*load the file instead, e.g. pairs.csv"):
        load_corpus("hf:wmt16?config=de-en&split=validation&src=translation.de&tgt=translation.en")
    assert time.perf_counter() - start < 5


def write_jsonl(path, records) -> str:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return str(path)


def test_an_exact_column_name_with_a_dot_wins(tmp_path):
    path = tmp_path / "pairs.csv"
    pd.DataFrame({"de.txt": [d for d, _ in PAIRS], "en.txt": [e for _, e in PAIRS]}).to_csv(path, index=False)
    corpus = load_corpus(f"{path}?src=de.txt&tgt=en.txt")
    assert corpus.train[0].source.startswith("ein satz") and corpus.train[0].target.startswith("a sentence")


def test_nested_fields_are_offered_not_turned_into_text(tmp_path):
    path = write_jsonl(tmp_path / "pairs.jsonl", [{"translation": {"de": d, "en": e}} for d, e in PAIRS])
    with pytest.raises(DataError, match=r"line 1: column 'translation' holds nested fields.*translation\.de"):
        load_corpus(f"{path}?src=translation&tgt=translation.en")
    assert load_corpus(f"{path}?src=translation.de&tgt=translation.en").train[0].source.startswith("ein")


def test_null_json_lines_name_the_line(tmp_path):
    records = [{"de": d, "en": e} for d, e in PAIRS[:3]]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join([json.dumps(records[0]), json.dumps(records[1]), "null", json.dumps(records[2])]))
    with pytest.raises(DataError, match=r"pairs.jsonl, line 3: a record is null"):
        load_corpus(f"{path}?src=de&tgt=en")


@pytest.mark.parametrize(
    ("values", "kind"),
    [([7] * 30, "int64"), ([["a", "b"]] * 30, "list"), ([b"\x00\x01"] * 30, "binary")],
)
def test_parquet_columns_that_are_not_text_are_refused(tmp_path, values, kind):
    path = tmp_path / "pairs.parquet"
    pd.DataFrame({"de": [d for d, _ in PAIRS], "en": values}).to_parquet(path)
    with pytest.raises(DataError, match=rf"column 'en' holds {kind}.*not text"):
        load_corpus(f"{path}?src=de&tgt=en")


def test_json_numbers_are_refused_naming_the_line(tmp_path):
    path = write_jsonl(tmp_path / "pairs.jsonl", [{"de": d, "en": i} for i, (d, _) in enumerate(PAIRS)])
    with pytest.raises(DataError, match=r"line 1: column 'en' holds int values"):
        load_corpus(f"{path}?src=de&tgt=en")


def test_columns_skip_null_json_lines(tmp_path):
    lines = [json.dumps({"de": d, "en": e}) for d, e in PAIRS[:4]]
    for at in (0, 2):  # line 1, line 3
        path = tmp_path / f"null{at + 1}.jsonl"
        path.write_text("\n".join([*lines[:at], "null", *lines[at:]]) + "\n", encoding="utf-8")
        assert table_columns(path) == ["de", "en"]


def test_columns_offer_nested_text_fields_and_those_load(tmp_path):
    path = write_jsonl(tmp_path / "pairs.jsonl", [{"translation": {"de": d, "en": e}} for d, e in PAIRS])
    assert table_columns(path) == ["translation.de", "translation.en"]
    pair = load_corpus(f"{path}?src=translation.de&tgt=translation.en").train[0]
    assert pair.source.startswith("ein satz") and pair.target.startswith("a sentence")


def test_columns_keep_an_exact_name_with_a_dot(tmp_path):
    path = tmp_path / "pairs.csv"
    pd.DataFrame({"de": [d for d, _ in PAIRS], "en.txt": [e for _, e in PAIRS]}).to_csv(path, index=False)
    assert table_columns(path) == ["de", "en.txt"]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_columns_of_a_file_without_text_are_refused_saying_how_to_fix_it(tmp_path, suffix):
    path = tmp_path / f"numbers{suffix}"
    frame = pd.DataFrame({"id": range(30), "score": [0.5] * 30})
    if suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    with pytest.raises(DataError, match=r"has no text column \(not text: id \(int64\), score \(double\)\).*as strings"):
        table_columns(path)


def test_table_caches_left_by_killed_or_older_processes_are_deleted(tmp_path, monkeypatch):
    monkeypatch.setattr(corpora, "CACHE_DIR", tmp_path / "datasets")
    cache = corpora.CACHE_DIR
    kept = [cache / "text" / "x.arrow", cache / "_tmp_text_default.lock"]  # Multi30k's cache
    old = [cache / "csv" / "default-1" / "x.arrow", cache / "scratch-abc" / "y.arrow", cache / "_tmp_x_csv_1.lock"]
    for path in kept + old:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    hour_ago = time.time() - 3700
    for entry in cache.iterdir():
        os.utime(entry, (hour_ago, hour_ago))
    (cache / "scratch-new").mkdir()  # a reader's, now
    corpora.clean_table_caches()
    assert all(p.exists() for p in kept) and not any(p.exists() for p in old) and (cache / "scratch-new").is_dir()


@pytest.mark.parametrize("first", ["", "   ", " \t "])
def test_a_table_whose_first_line_is_blank_names_no_columns(tmp_path, first):
    path = tmp_path / "pairs.tsv"
    path.write_text(f"{first}\nthe cat\tle chat\n")
    with pytest.raises(DataError, match=r"names no columns \(is it empty, or its first line blank\?\)"):
        table_columns(path)


def test_an_unusable_datasets_cache_names_its_setting(tmp_path, monkeypatch):
    table = tmp_path / "pairs.csv"
    table.write_text("en,fr\n" + "".join(f"the cat {i},le chat {i}\n" for i in range(20)), encoding="utf-8")
    (tmp_path / "file").write_text("in the way")
    monkeypatch.setattr(corpora, "CACHE_DIR", tmp_path / "file")
    with pytest.raises(DataError, match="set ATTNVIZ_DATASETS_CACHE to a folder of yours"):
        load_corpus(f"{table}?src=en&tgt=fr")
