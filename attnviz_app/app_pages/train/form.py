"""The Train page's form and live progress panel. Training itself runs in attnviz.server.jobs threads."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attnviz.devices import available_devices, bf16_supported, gpu_unusable
from attnviz.errors import AttnvizError
from attnviz.model import SCORES
from attnviz.plots import alignment_heatmap, training_curves
from attnviz.server import REGISTRY, JobSnapshot, TrainingJob
from attnviz.store import default_model_name, free_path, models_dir, slugify
from attnviz.training import Recipe
from attnviz_app.app_pages.shared.common import escape_markdown, refresh_models
from attnviz_app.app_pages.train.probe import PROBE_KEY, PROBES, probe_input
from attnviz_app.app_pages.train.replay import history_panel

SCORE_KEY, STYLE_KEY = "train_score", "train_style"
STYLES = {"bahdanau": "Bahdanau (attend with $s_{t-1}$)", "luong": "Luong (attend with $h_t$)"}
ENCODERS = ["gru", "lstm", "transformer"]
# The defaults teach: on toy-fr they form a clear alignment in about a minute on 2 CPU cores
# (docs/app.md, "The default training").
DEFAULT_STYLE, DEFAULT_EPOCHS, DEFAULT_BATCH, DEFAULT_PAIRS = "luong", 6, 32, 8000


def session_alive(session_id: str) -> Callable[[], bool]:
    """A liveness probe for the job thread: False once Streamlit has dropped the session."""

    def alive() -> bool:
        from streamlit import runtime

        return not runtime.exists() or runtime.get_instance().is_active_session(session_id)

    return alive


def _follow_default(key: str, default: str) -> None:
    """A text box that follows its default (which changes with the data, score and decoder)
    until the user edits it; an edited value is kept, and a box emptied by the user gets the
    default back (a model name is never blank)."""
    last = st.session_state.get(f"{key}__default")
    current = st.session_state.get(key)
    if current is None or current == last or not str(current).strip():
        st.session_state[key] = default
    st.session_state[f"{key}__default"] = default


def sibling_recipe(meta: dict, style: str, name: str) -> Recipe | None:
    """The recipe a model was trained with, in the other decoder style (None when unknown)."""
    full = meta.get("recipe_full")
    if not full:
        return None
    data = dict(full)
    data["name"] = name
    data["model"] = {**dict(full.get("model") or {}), "style": style}
    if style != "luong":
        data["model"].pop("input_feeding", None)  # Luong only
    return Recipe(**{k: v for k, v in data.items() if k in Recipe.__dataclass_fields__})


def recipe_form(spec: str, label: str, builtin: bool) -> Recipe | None:
    """Model and training widgets; returns a recipe when Start is pressed."""
    c1, c2, c3 = st.columns(3)
    score = c1.selectbox(
        "Score function", list(SCORES), index=list(SCORES).index("additive"), key=SCORE_KEY, persist_state="session"
    )
    default = list(STYLES).index(DEFAULT_STYLE)
    style = c2.radio("Decoder style", list(STYLES), default, STYLES.get, key=STYLE_KEY, persist_state="session")
    encoder = c3.selectbox("Encoder", ENCODERS, key="train_encoder", persist_state="session")
    c1, c2, c3, c4 = st.columns(4)
    emb = c1.number_input("Embedding size", 8, 512, 32, step=8, key="train_emb", persist_state="session")
    hidden = c2.number_input("Hidden size", 8, 512, 64, step=8, key="train_hidden", persist_state="session")
    attn = c3.number_input("Attention size", 4, 512, 32, step=4, key="train_attn", persist_state="session")
    heads = c4.number_input(
        "Heads (Transformer)", 1, 8, 2, key="train_heads", persist_state="session", disabled=encoder != "transformer"
    )
    c1, c2, c3, c4 = st.columns(4)
    epochs = c1.number_input("Epochs", 1, 50, DEFAULT_EPOCHS, key="train_epochs", persist_state="session")
    batch = c2.number_input("Batch size", 4, 512, DEFAULT_BATCH, step=4, key="train_batch", persist_state="session")
    lr = c3.number_input("Learning rate", 1e-5, 0.1, 3e-3, format="%.4f", key="train_lr", persist_state="session")
    n_train = c4.number_input(
        "Training pairs", 50, 50_000, DEFAULT_PAIRS, step=100, key="train_n", persist_state="session"
    )
    subwords = st.number_input(
        "Subword units: BPE merges per side (0 keeps whole words)",
        0,
        32_000,
        0,
        step=500,
        key="train_subwords",
        persist_state="session",
        disabled=builtin,
        help="Real corpora only: rare words split into known pieces (orange@@ farbenen), "
        "so fewer <unk>. The attention maps then show the pieces. Words are cut at spaces and punctuation, "
        "each Chinese character a word of its own: text written without spaces in another script (Japanese "
        "kana, Thai) is one word per run unless segmented first, and BPE merges cut inside the runs.",
    )
    _follow_default(PROBE_KEY, PROBES.get(spec, ""))
    probe = probe_input(spec)
    # the first free name: never a shipped model's nor one in the models folder
    _follow_default("train_name", free_path(models_dir(), default_model_name(label, score, style)).stem)
    c1, c2 = st.columns(2)
    devices = available_devices()
    device = c1.selectbox(
        "Device",
        devices,
        key="train_device",
        persist_state="session",
        help="Where the training runs: the CPU, or a GPU when this server has one.",
    )
    precision = c2.radio(
        "Precision",
        ["fp32", "bf16", "auto"],
        index=2,
        key="train_precision",
        persist_state="session",
        horizontal=True,
        help="bf16 mixed precision (autocast) where the hardware runs it natively; auto picks it where it was "
        "measured faster (CPUs with AMX, AMD CPUs with AVX512-BF16), else fp32 (GPUs included).",
    )
    if len(devices) == 1 and (unusable := gpu_unusable()):
        st.caption(escape_markdown(f"Only the CPU is offered: {unusable}."))
    if precision == "bf16" and not bf16_supported(device):
        st.caption(f"This {device} has no native bf16: training would be refused; pick fp32 or auto.")
    name = st.text_input("Model name", max_chars=60, key="train_name", persist_state="session")
    try:
        saves_as = free_path(models_dir(), slugify(name)).stem
    except AttnvizError as e:  # a name without letters or digits: Start says so too
        st.caption(escape_markdown(str(e)))
    else:
        taken = "" if saves_as == name.strip() else " (the name typed is taken, or made file-safe)"
        st.caption(f"Will be saved as **{escape_markdown(saves_as)}**{taken}.")
    if not st.button("Start training", type="primary", key="train_start"):
        return None
    if encoder == "transformer" and emb % heads:
        st.error(f"The embedding size ({emb}) must be divisible by the number of heads ({heads}).")
        return None
    sizes = {"n_train": int(n_train)}
    if builtin:
        sizes |= {"n_valid": 200, "n_test": 200}
    elif subwords:
        sizes |= {"subwords": int(subwords)}
    model = {
        "score": score,
        "style": style,
        "encoder": encoder,
        "emb_dim": int(emb),
        "hidden_dim": int(hidden),
        "attn_dim": int(attn),
        "heads": int(heads),
        "dropout": 0.1,
    }
    train = {
        "epochs": int(epochs),
        "batch_size": int(batch),
        "lr": float(lr),
        "probe": probe or None,
        "device": device,
        "precision": precision,
    }
    return Recipe(name=name, data=spec, data_options=sizes, model=model, train=train)


def draw(snap: JobSnapshot) -> None:
    """Progress bar, ETA, curves and the probe's heatmap for one snapshot."""
    latest = snap.latest or {}
    eta = f" · about {latest['eta_seconds']:.0f} s left" if snap.active and latest else ""
    on = f" on {latest['hardware']}" if latest.get("hardware") else ""
    text = f"{snap.name}: {snap.status}{on}, epoch {latest.get('epoch', 0)}/{latest.get('epochs', '?')}{eta}"
    st.progress(snap.fraction, text=text)
    valid = [
        {"step": e["step"], "epoch": e["epoch"], "valid_loss": e["valid_loss"], "valid_accuracy": e["valid_accuracy"]}
        for e in snap.epochs
    ]
    st.plotly_chart(training_curves(snap.steps + valid), key="train_curves")
    history_panel(snap)
    if snap.probe is not None:
        title = f"Probe after epoch {snap.epochs[-1]['epoch']}" if snap.epochs else "Probe"
        st.plotly_chart(alignment_heatmap(snap.probe, title=title), key="train_probe_map")
        st.caption(
            "Each row is a target token, each column a source token: watch the diagonal (or the "
            "task's pattern) emerge as the model learns where to look."
        )


def progress_panel(job: TrainingJob) -> None:
    """Redraw every second while the job runs (and only then: an idle timer would rerun every tab)."""
    running = job.snapshot().active

    @st.fragment(run_every=1.0 if running else None)
    def panel() -> None:
        snap = job.snapshot()
        if snap.active and st.button("Stop", key="train_stop"):
            job.stop()
        draw(snap)
        if running and not snap.active:
            refresh_models()
            st.rerun(scope="app")  # turn the timer off and show the result

    panel()
    snap = job.snapshot()
    if snap.status == "done":
        saved = escape_markdown(snap.result_path.name)
        where = "It is now in Explore, Compare and Evaluate"
        if job.owner:
            where += (
                " for this tab only, as it learnt from an uploaded file: a reload or another tab no longer lists it; "
                "Share it under Your own checkpoint to keep it for every session"
            )
        ending = f" {escape_markdown(snap.ending)}" if snap.ending else ""
        st.success(f"Saved {saved} ({snap.seconds:.0f} s).{ending} {where}.")
    elif snap.status == "stopped":
        kept = f"; the model so far was saved as {snap.result_path.name}" if snap.result_path else ""
        st.warning(f"Training stopped{escape_markdown(kept)}. {escape_markdown(snap.error or '')}")
    elif snap.status == "failed":
        st.error(f"Training failed: {escape_markdown(str(snap.error))}")
    if not snap.active:
        refresh_models()


def cap_note() -> None:
    """How busy the server is (the global cap on trainings)."""
    busy = REGISTRY.running()
    if busy >= REGISTRY.max_jobs:
        st.warning(f"The server is training {busy} model(s), its limit; Start will be refused until one finishes.")
