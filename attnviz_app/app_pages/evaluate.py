"""Evaluate: a leaderboard of models (BLEU, exact match, AER, entropy) as a table and charts."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attnviz.devices import available_devices, gpu_unusable
from attnviz.evaluation import (
    LEADERBOARD_DECIMALS,
    LEADERBOARD_FIELDS,
    LEADERBOARD_KEYS,
    attribution_records,
    evaluate_checkpoints,
    leaderboard_records,
)
from attnviz.plots import metric_scatter, plot_config
from attnviz.store import ModelEntry, csv_text, slug
from attnviz_app.app_pages.shared.common import (
    absent_models_note,
    app_model_roots,
    escape_markdown,
    require_models,
    style_name,
)
from attnviz_app.app_pages.shared.keys import EXPLORE_MODELS

# the metrics beside the model's name, so that a long name and its task do not push them out of a 1280 px view
COLUMNS = ["model", "bleu", "exact_match", "aer", "entropy", "n", "task", "score", "style"]
DESCRIBED = ("task", "score", "style")  # from the catalog; the other columns are measured
MEASURED_WITH = ["split", "beam", "device"]  # the form's settings, in each measured row and its CSV
NOT_APPLICABLE = "–"
# headers as the leaderboard in docs/models.md titles its columns, and the measured rows' own
TITLES = {key: title for title, key, _ in LEADERBOARD_FIELDS} | {"n": "pairs", "split": "split"}

st.title("Evaluate")
st.caption(
    "BLEU: sacreBLEU on detokenized outputs against the raw references, case-insensitive (0-100). "
    "Exact match: share of outputs equal to the reference. AER: alignment error rate of the argmax attention "
    "against gold links, forced on the reference (lower is better; tasks with gold links only). Entropy: mean "
    "attention entropy per step (nats). – : does not apply (no gold links, or not measured)."
)
models = require_models()


def numbers_table(frame: pd.DataFrame, key: str, width: str = "stretch") -> None:
    """A table whose numbers stay numbers, so a click on a header sorts them as numbers (text would
    put 100 before 38): each metric to the decimals docs/models.md gives it (3 where it gives none),
    counts with thousands separators, and – where a metric does not apply."""
    decimals = dict(zip(LEADERBOARD_KEYS, LEADERBOARD_DECIMALS, strict=True))
    shown, config = frame.copy(), {}
    if "style" in shown:  # as the pages write a style; the CSV keeps the recipes' names
        shown["style"] = shown["style"].map(lambda style: style_name(style) if isinstance(style, str) else style)
    for column in frame.columns:
        label = TITLES.get(column, column)  # the header a reader sees; sorting and the CSV keep the key
        values = pd.to_numeric(frame[column], errors="coerce") if frame[column].dtype == object else frame[column]
        text = values.isna() & frame[column].notna()  # a name, not a number
        if text.any() or pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            # the grid sizes a column by its first rows: fit the longest name, up to a limit
            longest = max(len(str(label)), int(frame[column].astype(str).str.len().max() or 0))
            config[column] = st.column_config.TextColumn(label, width=min(420, 24 + 8 * longest))
            continue
        places = decimals.get(column)
        whole = values.dropna().eq(values.dropna().round()).all()
        if places == 0 or (places is None and whole):
            shown[column], config[column] = values.round(), st.column_config.NumberColumn(label, format="localized")
        else:
            places = 3 if places is None else places
            shown[column], config[column] = values, st.column_config.NumberColumn(label, format=f"%.{places}f")
    st.dataframe(shown, key=key, hide_index=True, width=width, column_config=config, placeholder=NOT_APPLICABLE)


def leaderboard(rows: list[dict], key: str, columns: list[str], file: str | None = None) -> None:
    """The table (– where a metric does not apply), its CSV (named ``file``, else ``key``), and BLEU against AER
    and entropy."""
    frame = pd.DataFrame(rows, columns=columns).sort_values("bleu", ascending=False, na_position="last")
    numbers_table(frame, key)
    file = file or key
    st.download_button("Download CSV", csv_text(frame), file_name=f"{file}.csv", mime="text/csv", key=f"{key}_csv")
    left, right = st.columns(2)
    left.plotly_chart(metric_scatter(rows, "aer"), key=f"{key}_aer", config=plot_config(f"{file}-aer"))
    right.plotly_chart(metric_scatter(rows, "entropy"), key=f"{key}_entropy", config=plot_config(f"{file}-entropy"))


def _measured_row(row: dict, entry: ModelEntry | None, settings: dict) -> dict:
    """A measured row for the table: the model's name, task, score and style from the catalog (unlisted: its path),
    and the ``settings`` it was measured with (split, beam, device)."""
    described = {k: getattr(entry, k) if entry else None for k in DESCRIBED}
    measured = {c: row.get(c) for c in COLUMNS if c not in ("model", *DESCRIBED)}
    return {**described, **measured, **settings, "model": entry.name if entry else row["model"]}


st.header("Stored results")
st.caption(
    "Measured when each model was trained, on its task's full test split with the beam width shown ('valid BLEU': "
    "the validation split). For the shipped models this is the table in docs/models.md. Click a header to sort. "
    "Trained again with another seed, a Multi30k recipe's test BLEU moved by up to a point: read smaller gaps "
    "between two models as a tie."
)
absent_models_note()
leaderboard(leaderboard_records(models), "leaderboard_stored", list(LEADERBOARD_KEYS))

st.header("Does attention explain? Attention against gradient attributions")
rows = attribution_records()
if not rows:
    st.info("Not measured yet: run `python benchmarks/attribution_aer.py` (a few minutes per model).")
else:
    frame = pd.DataFrame(rows)
    numbers_table(frame, "eval_attribution", width="content")
    st.caption(
        f"AER against the gold links of the first {rows[0]['pairs']} test pairs of each built-in task, forced on the "
        "reference, the argmax source token of each target token: for attention, integrated gradients (ig, 32 "
        "steps, zero-embedding baseline), gradient × input (gxi) and occlusion. Spearman and top-1: each method's "
        "mean per-step agreement with attention. Measured by benchmarks/attribution_aer.py; what it shows is in "
        "docs/results.md. Explore's Attribution view shows them for one sentence."
    )

st.header("Measure now")
by_name = {m.name: m for m in models}
# a checkpoint that broke since the last run leaves the catalog, and the Models box, silently: say it below
vanished = [n for n in st.session_state.get("eval_known") or [] if n not in by_name]
st.session_state["eval_known"] = list(by_name)
if "eval_models" not in st.session_state:
    explored = [n for n in st.session_state.get(EXPLORE_MODELS) or [] if n in by_name]
    task = by_name[explored[0]].task if explored else models[0].task
    st.session_state["eval_models"] = [m.name for m in models if m.task == task][:6]
with st.form("eval_form", enter_to_submit=False):  # measuring takes a while: the button starts it, not an Enter
    chosen = st.multiselect(
        "Models",
        list(by_name),
        key="eval_models",
        persist_state="session",
        filter_mode="contains",  # "dates-dot-luong" typed is not also "dates-scaled-dot-luong"
        select_all=False,  # Enter on a typed name picks that model, not every match
        help="Each model is measured on its own task's split, rebuilt as it was trained.",
    )
    c1, c2, c3, c4 = st.columns(4)
    split = c1.selectbox("Split", ["test", "valid"], key="eval_split", persist_state="session")
    n = c2.number_input("Pairs per model", 10, 2000, 50, step=10, key="eval_n", persist_state="session")
    beam = c3.number_input("Beam width", 1, 10, 1, key="eval_beam", persist_state="session")
    devices = available_devices()  # the CPU first, then each GPU
    device = c4.selectbox(
        "Device",
        devices,
        index=1 if len(devices) > 1 else 0,
        key="eval_device",
        persist_state="session",
        disabled=len(devices) == 1,
        help="Where the models are loaded and measured: the first GPU when this server has one.",
    )
    if len(devices) == 1 and (unusable := gpu_unusable()):
        st.caption(escape_markdown(f"Only the CPU is offered: {unusable}."))
    submitted = st.form_submit_button("Evaluate the chosen models", key="eval_go")
if submitted and vanished:
    st.warning(
        f"Not measured: {escape_markdown(', '.join(vanished))}, whose checkpoint could not be read any more when "
        "you pressed Evaluate (the notice at the top of the page says why); if you chose it, it is not in the "
        "results."
    )
if submitted:
    if not chosen:
        st.warning("Choose at least one model.")
    else:
        with st.status(f"Evaluating {len(chosen)} model(s) on {int(n)} pairs each…", expanded=True) as status:
            bar = st.progress(0.0)

            def done(k: int, path: str) -> None:  # evaluate_checkpoints names each model by its path
                bar.progress((k + 1) / len(chosen), text=f"{k + 1}/{len(chosen)}: {chosen[k]}")

            paths = [by_name[name].path for name in chosen]
            result = evaluate_checkpoints(
                paths, split=split, n=int(n), beam_size=int(beam), roots=app_model_roots(), on_done=done, device=device
            )
            status.update(label=f"Evaluated {len(result.rows)} of {len(chosen)} model(s)", state="complete")
        by_path = {m.path: m for m in models}  # the rows and errors name each model by its path
        for err in result.errors:
            shown = by_path[err["model"]].name if err["model"] in by_path else str(err["model"])
            st.warning(f"{escape_markdown(shown)}: {escape_markdown(err['error'])}")
        settings = {"split": split, "beam": int(beam), "device": device}  # as measured, whatever the form says later
        st.session_state["eval_rows"] = [_measured_row(r, by_path.get(r["model"]), settings) for r in result.rows]
        st.session_state["eval_file"] = f"evaluate-{split}-n{int(n)}-beam{int(beam)}-{slug(device)}"
if st.session_state.get("eval_rows"):
    file = st.session_state.get("eval_file")
    leaderboard(st.session_state["eval_rows"], "leaderboard_sample", [*COLUMNS, *MEASURED_WITH], file)
