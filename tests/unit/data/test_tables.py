"""Uploaded tables that cannot be read: a corrupt Parquet file, a Parquet column of nested fields, a gzip
that is not gzip inside or decompresses past the limit, a header row too long to be one or with an unclosed
quote, a header with no rows below it, and a corpus whose every training pair the length filter drops.
Each is one DataError naming the file and the fix."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from attnviz.data import load_corpus, table_columns
from attnviz.errors import DataError
from tests.support.multi30k import multi30k_folder
from tests.support.tables import PAIRS, ROWS


def _corrupt_parquet(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.parquet"
    path.write_bytes(b"PAR1 not really parquet PAR1")
    return path


def test_a_corrupt_parquet_file_says_to_write_it_again(tmp_path):
    path = _corrupt_parquet(tmp_path)
    message = rf"^{path} is not a readable Parquet file \(.*\); write it again\.$"
    with pytest.raises(DataError, match=message):
        load_corpus(f"{path}?src=de&tgt=en")
    with pytest.raises(DataError, match=message):  # the columns offered for an upload
        table_columns(path)


def test_a_parquet_column_of_nested_fields_offers_the_fields(tmp_path):
    path = tmp_path / "pairs.parquet"
    pd.DataFrame({"de": [d for d, _ in PAIRS], "en": [{"text": e, "n": 1} for _, e in PAIRS]}).to_parquet(path)
    with pytest.raises(DataError, match=r"pairs\.parquet: column 'en' holds nested fields, not text; name one of them"):
        load_corpus(f"{path}?src=de&tgt=en")


def test_a_gzip_that_is_cut_short_says_so(tmp_path):
    path = tmp_path / "pairs.csv.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(DataError, match=r"pairs\.csv\.gz is not a readable gzip file \(.*\); decompress it or fetch"):
        load_corpus(f"{path}?src=en&tgt=fr")


def test_a_gzip_that_decompresses_past_the_limit_is_refused_while_reading(tmp_path):
    """A small file that expands past ``max_bytes`` (a zip bomb) is stopped as it decompresses."""
    path = tmp_path / "pairs.csv.gz"
    path.write_bytes(gzip.compress((ROWS * 800).encode()))  # about 2.5 MB of text
    assert path.stat().st_size < 2**20
    with pytest.raises(DataError, match=r"pairs\.csv\.gz holds more than 1 MB of text once decompressed; load a"):
        load_corpus(f"{path}?src=en&tgt=fr", max_bytes=2**20)
    assert load_corpus(f"{path}?src=en&tgt=fr", max_bytes=4 * 2**20).train  # under a larger limit it loads


def test_a_header_row_longer_than_a_field_may_be_is_named(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("en," + "f" * 200_000 + "\ndog,chien\n")
    with pytest.raises(DataError, match=r"pairs\.csv: the header row is not valid CSV \(field larger than"):
        load_corpus(f"{path}?src=en&tgt=fr")


def test_a_length_filter_that_drops_every_training_pair_says_to_relax_it(tmp_path):
    folder = multi30k_folder(tmp_path / "m30k")
    with pytest.raises(DataError, match=r"no training pairs left after filtering; relax min_len/max_len\.$"):
        load_corpus(f"multi30k-de-en@{folder}", min_len=10)
    assert len(load_corpus(f"multi30k-de-en@{folder}").train) == 4


def test_an_unclosed_quote_in_the_header_row_is_named(tmp_path):
    """The header's quote would swallow the whole file: one column name holding every line, and a spec
    suggested from it."""
    path = tmp_path / "pairs.csv"
    path.write_text('"en,fr\ndog,chien\ncat,chat\n')
    with pytest.raises(DataError) as info:
        load_corpus(f"{path}?src=en&tgt=fr")
    assert "unclosed quote" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("suffix", ["csv", "tsv", "parquet"])
def test_a_table_with_a_header_and_no_rows_says_it_holds_no_rows(tmp_path, suffix):
    """Not datasets' own words ('Instruction "train" corresponds to no data!', 'BatchSize must be
    greater than 0') with advice to check the file is well-formed."""
    path = tmp_path / f"pairs.{suffix}"
    if suffix == "parquet":
        pd.DataFrame({"en": pd.Series([], dtype=str), "fr": pd.Series([], dtype=str)}).to_parquet(path)
    else:
        path.write_text("en,fr\n" if suffix == "csv" else "en\tfr\n")
    with pytest.raises(DataError, match=r"holds no rows; add some or pick another file"):
        load_corpus(f"{path}?src=en&tgt=fr")
