"""Evaluate: a leaderboard of models on their test split (BLEU, exact match, AER, entropy)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.evaluate import evaluate
from attnviz.leaderboard import KEYS as LEADERBOARD_KEYS
from attnviz.leaderboard import records as leaderboard_records
from pages.shared.common import get_model, require_models
from pages.shared.data_ui import cached_corpus
from pages.shared.model_ui import data_options

COLUMNS = ["model", "task", "score", "style", "n", "bleu", "exact_match", "aer", "entropy"]

st.title("Evaluate")
st.caption(
    "BLEU: sacreBLEU on detokenized outputs against the raw references, case-insensitive (0-100). "
    "Exact match: share of outputs equal to the reference. "
    "AER: alignment error rate of the argmax attention against gold links, with forced decoding on the "
    "reference (lower is better; tasks with gold only). Entropy: mean attention entropy per step (nats)."
)
models = require_models()


def stored_row(entry: dict) -> dict:
    m = entry.get("metrics") or {}
    return {"model": entry["name"], "task": entry["task"], "score": entry["score"], "style": entry["style"],
            **{k: m.get(k) for k in ("n", "bleu", "exact_match", "aer", "entropy")}}  # fmt: skip


def leaderboard(rows: list[dict], key: str, columns: list[str] = COLUMNS) -> None:
    frame = pd.DataFrame(rows, columns=columns).sort_values("bleu", ascending=False, na_position="last")
    st.dataframe(frame, key=key, hide_index=True, width="stretch")
    st.download_button("Download CSV", frame.to_csv(index=False).encode(), file_name=f"{key}.csv",
                       mime="text/csv", key=f"{key}_csv")  # fmt: skip


st.subheader("Stored results")
st.caption(
    "Measured when each model was trained, on its task's full test split with the beam width shown ('valid BLEU': "
    "the validation split). For the shipped models this is the README's table. Click a header to sort."
)
leaderboard(leaderboard_records(models), "leaderboard_stored", list(LEADERBOARD_KEYS))


@st.cache_data(show_spinner="Evaluating…", max_entries=64)
def evaluate_entry(path: str, mtime: float, split: str, n: int, beam: int) -> dict:
    """Metrics of one model on the first ``n`` pairs of a split of its own task (cached)."""
    entry = {"path": path}
    translator = get_model(entry)
    spec = (translator.meta.get("recipe_full") or {}).get("data") or translator.meta.get("task")
    opts = data_options(translator.meta)
    corpus = cached_corpus(spec, opts.get("n_train"), opts.get("n_valid"), opts.get("n_test"), opts.get("seed", 0),
                           opts.get("target_lowercase"))  # fmt: skip
    return evaluate(translator, corpus.split(split)[:n], beam_size=beam).to_dict()


st.subheader("Measure now")
with st.form("eval_form"):
    c1, c2, c3 = st.columns(3)
    split = c1.selectbox("Split", ["test", "valid"], key="eval_split")
    n = c2.number_input("Pairs per model", 10, 2000, 100, step=10, key="eval_n")
    beam = c3.number_input("Beam width", 1, 10, 1, key="eval_beam")
    submitted = st.form_submit_button("Evaluate all models", key="eval_go")
if submitted:
    rows = []
    progress = st.progress(0.0, text="Evaluating…")
    for k, entry in enumerate(models):
        try:
            result = evaluate_entry(entry["path"], Path(entry["path"]).stat().st_mtime, split, int(n), int(beam))
        except (AttnvizError, OSError) as e:
            st.warning(f"{entry['name']}: {e}")
            continue
        rows.append({**stored_row(entry), **{c: result.get(c) for c in COLUMNS[4:]}})
        progress.progress((k + 1) / len(models), text=f"Evaluated {entry['name']}")
    st.session_state["eval_rows"] = rows
if "eval_rows" in st.session_state:
    leaderboard(st.session_state["eval_rows"], "leaderboard_sample")
