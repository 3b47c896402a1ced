"""Pairs from a Hugging Face Hub dataset; offline, a DataError at once that says to load a file instead."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from attnviz.data import corpora  # corpora.CACHE_DIR read at call time: setting it there moves this cache too
from attnviz.data.corpora import RawPairs, check_columns, drop_empty_rows, quiet_datasets, read_rows
from attnviz.errors import DataError


def network_available(host: str = "huggingface.co", timeout: float = 1.0) -> bool:
    """Whether a TCP connection to ``host`` opens within ``timeout`` seconds."""
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def _go_offline() -> None:
    """Set the offline flags, also in modules that read them at import time."""
    os.environ["HF_HUB_OFFLINE"] = os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets.config
    import huggingface_hub.constants

    datasets.config.HF_HUB_OFFLINE = datasets.config.HF_DATASETS_OFFLINE = True
    huggingface_hub.constants.HF_HUB_OFFLINE = True


def load_hub(
    name: str,
    source_column: str,
    target_column: str,
    *,
    config: str | None = None,
    split: str = "train",
    empty: str = "drop",
) -> tuple[RawPairs, list[str]]:
    """Pairs from a Hugging Face Hub dataset; offline, fails at once with a DataError."""
    flags = (
        os.environ.get(v, "").upper() in ("1", "TRUE", "YES", "ON") for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )
    offline = any(flags) or not network_available()
    if offline:
        _go_offline()
    with quiet_datasets() as datasets:
        try:
            records = datasets.load_dataset(name, config, split=split, cache_dir=str(corpora.CACHE_DIR))
        except Exception as e:
            if offline or isinstance(e, ConnectionError):
                raise DataError(
                    f"cannot load {name!r} from the Hugging Face Hub: this machine is offline "
                    f"({type(e).__name__}). Download the data elsewhere and load the file instead, e.g. "
                    "pairs.csv?src=en&tgt=de (CSV, TSV, JSON Lines or Parquet)."
                ) from e
            raise DataError(f"cannot load {name!r} (config {config!r}, split {split!r}) from the Hub: {e}") from e
    check_columns(Path(f"hf:{name}"), "hub", list(records.column_names), [source_column, target_column])
    rows = read_rows(records, source_column, target_column, f"hf:{name}", 1, "row")
    notes: list[str] = []
    return drop_empty_rows(rows, f"hf:{name}", 1, empty, notes), notes
