"""Security review fixes in data loading: dotted column names, nested fields, non-text
columns, null JSON lines, and over-long pairs dropped (with a note) before training."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from attnviz.data import table_columns
from attnviz.data.spec import LONGEST_SOURCE, MAX_TOKENS, load_corpus
from attnviz.errors import ConfigError, DataError
from pages.shared import uploads
from tests.test_uploads_release import ROWS as ROWS_CSV
from tests.test_uploads_release import data_page, fresh, send  # noqa: F401 (fresh: a fixture)

ROWS = [(f"ein satz {i}", f"a sentence {i}") for i in range(30)]


def write_jsonl(path, records) -> str:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return str(path)


def test_an_exact_column_name_with_a_dot_wins(tmp_path):
    path = tmp_path / "pairs.csv"
    pd.DataFrame({"de.txt": [d for d, _ in ROWS], "en.txt": [e for _, e in ROWS]}).to_csv(path, index=False)
    corpus = load_corpus(f"{path}?src=de.txt&tgt=en.txt")
    assert corpus.train[0].source.startswith("ein satz") and corpus.train[0].target.startswith("a sentence")


def test_nested_fields_are_offered_not_turned_into_text(tmp_path):
    path = write_jsonl(tmp_path / "pairs.jsonl", [{"translation": {"de": d, "en": e}} for d, e in ROWS])
    with pytest.raises(DataError, match=r"line 1: column 'translation' holds nested fields.*translation\.de"):
        load_corpus(f"{path}?src=translation&tgt=translation.en")
    assert load_corpus(f"{path}?src=translation.de&tgt=translation.en").train[0].source.startswith("ein")


def test_null_json_lines_name_the_line(tmp_path):
    records = [{"de": d, "en": e} for d, e in ROWS[:3]]
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
    pd.DataFrame({"de": [d for d, _ in ROWS], "en": values}).to_parquet(path)
    with pytest.raises(DataError, match=rf"column 'en' holds {kind}.*not text"):
        load_corpus(f"{path}?src=de&tgt=en")


def test_json_numbers_are_refused_naming_the_line(tmp_path):
    path = write_jsonl(tmp_path / "pairs.jsonl", [{"de": d, "en": i} for i, (d, _) in enumerate(ROWS)])
    with pytest.raises(DataError, match=r"line 1: column 'en' holds int values"):
        load_corpus(f"{path}?src=de&tgt=en")


def test_an_over_long_pair_is_dropped_with_a_note_before_training(tmp_path):
    long_row = (" ".join(["wort"] * 2500), "a long one")
    path = tmp_path / "pairs.tsv"
    path.write_text("de\ten\n" + "".join(f"{d}\t{e}\n" for d, e in [*ROWS, long_row]), encoding="utf-8")
    corpus = load_corpus(f"{path}?src=de&tgt=en")
    assert len(corpus) == len(ROWS)
    assert any(f"dropped 1 pairs outside 1..{MAX_TOKENS} tokens" in note for note in corpus.notes)
    with pytest.raises(ConfigError, match=f"max_len must be between 1 and {LONGEST_SOURCE}"):
        load_corpus(f"{path}?src=de&tgt=en", max_len=2500)


def test_the_cli_reports_dropped_pairs(tmp_path, capsys, monkeypatch):
    from attnviz.cli.main import main

    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "models"))
    path = tmp_path / "pairs.tsv"
    long_row = (" ".join(["wort"] * 2500), "a long one")
    path.write_text("de\ten\n" + "".join(f"{d}\t{e}\n" for d, e in [*ROWS, long_row]), encoding="utf-8")
    code = main(["data", f"{path}?src=de&tgt=en", "--summary"])
    out, err = capsys.readouterr()
    assert code == 0 and "dropped 1 pairs" in err and "dropped 1 pairs" in out
    code = main(["train", "--data", f"{path}?src=de&tgt=en", "--quiet", "--epochs", "1", "--emb", "8", "--hidden", "8",
                 "--attn", "8", "--batch", "32"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "note:" in err and "dropped 1 pairs" in err


def test_columns_skip_null_json_lines(tmp_path):
    lines = [json.dumps({"de": d, "en": e}) for d, e in ROWS[:4]]
    for at in (0, 2):  # line 1, line 3
        path = tmp_path / f"null{at + 1}.jsonl"
        path.write_text("\n".join([*lines[:at], "null", *lines[at:]]) + "\n", encoding="utf-8")
        assert table_columns(path) == ["de", "en"]


def test_columns_offer_nested_text_fields_and_those_load(tmp_path):
    path = write_jsonl(tmp_path / "pairs.jsonl", [{"translation": {"de": d, "en": e}} for d, e in ROWS])
    assert table_columns(path) == ["translation.de", "translation.en"]
    pair = load_corpus(f"{path}?src=translation.de&tgt=translation.en").train[0]
    assert pair.source.startswith("ein satz") and pair.target.startswith("a sentence")


def test_columns_keep_an_exact_name_with_a_dot(tmp_path):
    path = tmp_path / "pairs.csv"
    pd.DataFrame({"de": [d for d, _ in ROWS], "en.txt": [e for _, e in ROWS]}).to_csv(path, index=False)
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


@pytest.mark.usefixtures("fresh")
def test_the_data_page_offers_nested_fields_and_loads_their_pairs():
    text = "".join(json.dumps({"translation": {"de": d, "en": e}}) + "\n" for d, e in ROWS)
    at = data_page(("pairs.jsonl", text))
    assert not at.exception and not at.error
    assert at.selectbox(key="data_src_col").options == ["translation.de", "translation.en"]
    assert at.selectbox(key="data_tgt_col").value == "translation.en"
    assert sum(int(m.value) for m in at.metric[:3]) == len(ROWS)


MARKDOWN_NAME = "![t](http://127.0.0.1:9/c.png) **md**.csv"  # a beacon image and bold, if rendered


def shown_literally(message: str) -> bool:
    """``MARKDOWN_NAME`` is in ``message`` with every Markdown character backslash-escaped."""
    escaped = r"\!\[t\]\(http\://127\.0\.0\.1\:9/c\.png\) \*\*md\*\*\.csv"
    return escaped in message and "![t](" not in message and "**md**" not in message


@pytest.mark.usefixtures("fresh")
def test_the_data_page_shows_an_uploaded_files_name_literally(monkeypatch):
    at = data_page((MARKDOWN_NAME, "en\nonly one column\n"))
    [error] = [e.value for e in at.error]
    assert "column" in error and shown_literally(error)  # it needs two columns

    monkeypatch.setattr(uploads, "MAX_UPLOAD_ROWS", 40)
    send(at, MARKDOWN_NAME, ROWS_CSV)  # valid, and over the row limit: the note names it
    [warning] = [w.value for w in at.warning]
    assert "only its first 40 rows are used" in warning and shown_literally(warning)

    at.switch_page("pages/learn.py").run()
    at.switch_page("pages/data.py").run()  # the uploader is empty: the page says which upload it uses
    assert not at.exception
    assert any("uploaded earlier in this session" in c.value and shown_literally(c.value) for c in at.caption)


@pytest.mark.usefixtures("fresh")
def test_a_null_json_line_is_named_in_the_app_by_the_uploaded_files_name():
    lines = [json.dumps({"de": d, "en": e}) for d, e in ROWS]
    at = data_page(("pairs.jsonl", "\n".join([*lines[:2], "null", *lines[2:]]) + "\n"))
    assert not at.exception
    [error] = [e.value for e in at.error]
    assert "pairs\\.jsonl, line 3\\: a record is null" in error  # the user's name, escaped
    assert str(uploads.server_folder()) not in error and "NoneType" not in error
