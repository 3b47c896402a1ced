"""The views of Explore. Each takes ``panels``: one decode per decoder style shown ({"Bahdanau":
al} or, in Both, Bahdanau's and Luong's), drawn side by side on one colour scale."""

from __future__ import annotations

import hashlib
import pickle
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attnviz.decoding import Alignment
from attnviz.external import difference_csv
from attnviz.links import common_steps, parting_step
from attnviz.plots import (
    align_tops,
    context_bar,
    context_heatmap,
    context_projection,
    coverage_bar,
    difference_heatmap,
    entropy_plot,
    explore_heatmap,
    has_cell,
    js_plot,
    plot_config,
    share_scales,
    step_animation,
    step_bar,
)
from attnviz_app.app_pages.explore import front
from attnviz_app.app_pages.explore.captions import weights_caption
from attnviz_app.app_pages.explore.cursor import cell_cursor
from attnviz_app.app_pages.explore.math_panel import show_math
from attnviz_app.app_pages.explore.screen import DEFAULT_WIDTH, column_width, page_width
from attnviz_app.app_pages.shared.common import escape_markdown, quoted
from attnviz_app.app_pages.shared.keys import EXPLORE_TEXT
from attnviz_app.app_pages.shared.paper_ui import paper_download
from attnviz_app.app_pages.shared.state import stage_url, write_url

if TYPE_CHECKING:
    import plotly.graph_objects as go

Panels = dict[str, Alignment]  # "Bahdanau"/"Luong" -> its decode, in display order
CELL_KEY, STEP_KEY = "explore_cell", "explore_step"
_MAPS = "_explore_maps"  # session state: {"weights"/"scores": (digest of their inputs, the figures)}
LINK_ASKED = "explore_link_asked"  # {"step": t, "cell": (t, s)}: what a link asked, until a view has read it
FILE_STEMS_KEY = "explore_file_stems"  # {panel name or "": model-and-sentence file stem}, set by page.py
DIFFERENCE = "difference"  # FILE_STEMS_KEY's stem of Both's difference files (luong-minus-bahdanau)
MATH_MIN_PX = 600  # two math panels narrower than this go one under the other
CONTEXT_MIN_PX = 380  # a context panel narrower than this goes under the other
MIN_SIDE_CELL_PX, SIDE_LABELS_PX = 12, 130  # Both stacks its maps when cells this small do not fit side by side
LOCAL_NOTE = (
    r" Local attention reads a window $|s - p_t| \le D$ only (local-m: $p_t = \min(t, S-1)$; local-p predicts"
    r" $p_t = S\,\sigma(v_p^\top \tanh(W_p h_t))$ and multiplies by a Gaussian, $\sigma = D/2$); other cells are 0."
)
_CSS = """<style>
.stMainBlockContainer .katex-display { overflow-x: auto; overflow-y: hidden; padding-bottom: 2px; }
</style>"""


def file_name(name: str, panel: str | None = None) -> str:
    """A download's file name without extension: the model (the panel's, or the pair's in Both),
    a slug of the sentence and ``name``."""
    stems = st.session_state.get(FILE_STEMS_KEY) or {}
    stem = stems.get(panel or "", stems.get(""))
    return f"{stem}-{name}" if stem else f"attnviz-{name}"


def chart(fig: go.Figure, key: str, image_format: str, name: str, panel: str | None = None) -> None:
    """``st.plotly_chart`` at the figure's own size, zoom and pan on, a PNG/SVG download button
    whose file is named after the model and the sentence."""
    st.plotly_chart(fig, key=key, width="content", config=plot_config(file_name(name, panel), image_format))


def side_by_side(panels: Panels) -> bool:
    """Whether the panels' maps fit side by side with legible cells (else one under the other)."""
    if len(panels) == 1:
        return False
    n_src = max(np.shape(al.weights)[1] for al in panels.values())
    return column_width(len(panels)) >= SIDE_LABELS_PX + n_src * MIN_SIDE_CELL_PX


def columns(panels: Panels, stack: bool | None = None) -> list:
    """One column per panel, side by side when their maps fit (``stack`` forces either way);
    one under the other, each the page's width, otherwise."""
    if stack is None:
        stack = not side_by_side(panels)
    if len(panels) == 1 or stack:
        return [st.container() for _ in panels]
    return list(st.columns(len(panels), gap="small"))


def panel_width(panels: Panels, stack: bool | None = None) -> int:
    """The widest figure a panel's column holds: the page, or a column of two side by side."""
    if stack is None:
        stack = not side_by_side(panels)
    return page_width() if len(panels) == 1 or stack else column_width(len(panels))


def _grid(panels: Panels) -> tuple[int, int]:
    """``(target steps, source tokens)`` of the largest panel: a cell clicked on the longer of two
    translations stays where it was clicked, and the shorter one says it has no such step."""
    return tuple(max(np.shape(al.weights)[k] for al in panels.values()) for k in (0, 1))


def current_cell(panels: Panels) -> tuple[int, int]:
    """The clicked cell, kept across reruns and style flips, clamped to the longest decode."""
    n_tgt, n_src = _grid(panels)
    t, s = st.session_state.get(CELL_KEY) or (0, int(np.argmax(next(iter(panels.values())).weights[0])))
    cell = min(max(int(t), 0), n_tgt - 1), min(max(int(s), 0), n_src - 1)
    _beyond("cell", (int(t), int(s)), cell, f"{n_tgt} x {n_src} cells")
    return cell


def _beyond(part: str, asked: int | tuple[int, int], shown: int | tuple[int, int], size: str) -> None:
    """A caption when a link's ``part`` (read by explore/url.py) lies beyond this decode: what is shown instead."""
    link = st.session_state.get(LINK_ASKED) or {}
    if part not in link:
        return
    if link.pop(part) == asked and asked != shown:
        label = ",".join(map(str, asked)) if isinstance(asked, tuple) else asked
        at = ",".join(map(str, shown)) if isinstance(shown, tuple) else shown
        st.caption(f"This link's {part} {label} lies beyond this decode ({size}): {part} {at} is shown.")


def _store_cell(cell: tuple[int, int]) -> None:
    """A click on a map (sent by the cursor) becomes the current cell, before the fragment's rerun."""
    st.session_state[CELL_KEY] = cell


def _maps(panels: Panels, values: str, titles: dict[str, str], width: int, fill: bool) -> list[go.Figure]:
    """The panels' maps of ``values`` on one scale, built once per decode and layout: a click's rerun
    (the cell is all it changes) takes the figures the last run built from session state."""
    digest = hashlib.blake2b(repr((values, width, fill, [titles[n] for n in panels])).encode(), digest_size=16)
    for name, al in panels.items():
        digest.update(name.encode())
        digest.update(pickle.dumps(al, protocol=pickle.HIGHEST_PROTOCOL))  # tokens, numbers, windows: all of it
    key = digest.hexdigest()
    kept = st.session_state.get(_MAPS, {}).get(values)
    if kept is not None and kept[0] == key:
        return kept[1]
    figs = _build(panels, values, titles, width, fill)
    st.session_state.setdefault(_MAPS, {})[values] = (key, figs)
    return figs


def _build(panels: Panels, values: str, titles: dict[str, str], width: int, fill: bool) -> list[go.Figure]:
    figs = [explore_heatmap(al, values, titles[name], max_width=width, fill=fill) for name, al in panels.items()]
    return share_scales(align_tops(figs))


@st.fragment
def heatmap_view(
    panels: Panels,
    values: str,
    titles: dict[str, str],
    image_format: str,
    decoded: Panels,
    translators: dict,
    rule: str = "",
    eos: str = "",
) -> None:
    """Weights or raw scores, one map per panel on one scale, the clicked cell outlined, its numbers
    below (computed on the ``decoded`` alignments, whatever ``panels`` hides); ``rule`` says under
    the maps how they were changed for reading (hidden <eos>, merged pieces)."""
    cell = current_cell(panels)
    # the figures do not depend on the cell, so a click re-sends and redraws none of them (nor
    # builds them again: _maps): the cursor outlines the cell in the browser and shows its numbers
    stack = not side_by_side(panels)
    width = panel_width(panels, stack)
    figs = _maps(panels, values, titles, width, len(panels) > 1)
    keys = {name: f"explore_heat_{values}_{name}" for name in panels}
    # a fresh visit only (one panel): the record is laid out for the width a fresh server draws it at
    kept = figs
    if front.recording() and width != DEFAULT_WIDTH:
        kept = _build(panels, values, titles, DEFAULT_WIDTH, False)
    for col, name, fig, record in zip(columns(panels, stack), panels, figs, kept, strict=True):
        with col:
            chart(fig, keys[name], image_format, values, name)
        if front.recording():  # the figure is serialised for the record, not at every Enter
            config = plot_config(file_name(values, name), image_format)
            front.record("charts", {"key": keys[name], "spec": record.to_json(), "config": config})
    cell_cursor(panels, cell, keys, key=f"explore_cursor_{values}", on_click=_store_cell, values=values)
    if rule:
        st.caption(escape_markdown(rule))
    if values == "weights":
        local = any(al.window is not None for al in panels.values())
        caption = weights_caption(panels) + (LOCAL_NOTE if local else "")  # row sums as they are (local-p's < 1)
        caption += f" {eos}" if eos else ""
        st.caption(caption)
        front.record("captions", caption)
        coverage = st.expander(
            "Coverage: how much attention each source word received", key="explore_coverage_open", on_change="rerun"
        )
        if coverage.open:  # lazy: its charts are sent and drawn only when opened
            with coverage:
                st.caption(
                    r"Column sums $\sum_t a_{t,s}$: about 1 for a word translated once; orange (under 0.3) for a"
                    " word hardly read; red (over 1.7) for one read again and again."
                )
                model = {name: titles[name].split(" · ")[0] for name in panels}  # the title begins with the model
                named = {name: f"Coverage · {name} · {model[name]}" if len(panels) > 1 else None for name in panels}
                bars = [coverage_bar(al, panel_width(panels), named[name]) for name, al in panels.items()]
                bars = share_scales(bars, axes=("yaxis",))
                for col, name, fig in zip(columns(panels), panels, bars, strict=True):
                    with col:
                        chart(fig, f"explore_coverage_{name}", image_format, "coverage", name)
    else:
        st.caption(
            r"Raw scores $e_{t,s}$ before the softmax; only differences within a row matter. Blank cells"
            r" lie outside a local window ($-\infty$)."
        )
    if len(panels) > 1:
        sentence = st.session_state.get(EXPLORE_TEXT) or ""
        paper_download(panels, titles, sentence, values, file_name(f"figure-{values}"), f"explore_paper_{values}", rule)
    t, s = _cell_boxes(panels, cell, values)
    write_url({"cell": f"{t},{s}"})  # a click reruns only this fragment, not the page's own write_url
    st.html(_CSS)
    narrow = len(panels) > 1 and column_width(len(panels)) < MATH_MIN_PX  # the formulas need the page's width
    for col, name in zip(columns(panels, stack or narrow), panels, strict=True):
        with col:
            if len(panels) > 1:
                st.markdown(f"**{escape_markdown(name)}**")
            if has_cell(panels[name], t, s):
                stem = file_name(f"cell-{t}-{s}", name if len(panels) > 1 else None)
                show_math(translators[name], decoded[name], t, s, f"explore_cell_{values}_{name}", stem)
            else:
                st.caption(f"This translation has {len(panels[name].target_tokens)} steps: no step t={t} here.")


def _set_cell(key_t: str, key_s: str) -> None:
    st.session_state[CELL_KEY] = (int(st.session_state[key_t]), int(st.session_state[key_s]))


def _cell_boxes(panels: Panels, cell: tuple[int, int], values: str) -> tuple[int, int]:
    """The outlined cell as two number boxes (arrow keys step through rows and columns)."""
    al = next(a for a in panels.values() if has_cell(a, *cell))  # the longer decode has it
    n_tgt, n_src = _grid(panels)
    key_t, key_s = f"explore_cell_t_{values}", f"explore_cell_s_{values}"
    st.session_state[key_t], st.session_state[key_s] = cell
    head, box_t, box_s = st.columns([3, 1, 1], vertical_alignment="bottom")
    head.markdown("**The numbers of the outlined cell** (click a cell, or step with the arrow keys in the boxes)")
    tokens = (al.target_tokens, al.source_tokens)
    labels = (f"target step t (0-{n_tgt - 1})", f"source position s (0-{n_src - 1})")
    for box, label, key, n, k in zip((box_t, box_s), labels, (key_t, key_s), (n_tgt, n_src), (0, 1), strict=True):
        help_text = escape_markdown(tokens[k][cell[k]])
        box.number_input(label, 0, n - 1, key=key, on_change=_set_cell, args=(key_t, key_s), help=help_text)
    return cell


def _step_slider(n_steps: int) -> int:
    """One slider over decoder steps (shared by both panels), clamped to the shortest decode."""
    asked = st.session_state.get(STEP_KEY, 0)
    if n_steps <= 1:
        _beyond("step", asked, 0, "1 step")
        st.caption("This decode has one step (t = 0).")
        stage_url({"step": None})  # url.stage ran before this view: the link says the step shown
        return 0
    if not 0 <= asked < n_steps:
        st.session_state[STEP_KEY] = 0
        _beyond("step", asked, 0, f"{n_steps} steps")
    t = int(st.slider("Decoder step t", 0, n_steps - 1, key=STEP_KEY, persist_state="session"))
    stage_url({"step": t or None})  # url.stage (page.py) staged the step asked, before this clamp
    return t


PLAY_LABEL = "Play every step in the browser (▶ Play, or drag the slider under the plot)"
PLAY_KEY = "explore_step_play"


def step_view(panels: Panels, image_format: str, titles: dict[str, str]) -> None:
    """One step at a time for every panel (headed by its style and model) with one slider, then
    the browser-side animation."""
    t = _step_slider(min(len(al.target_tokens) for al in panels.values()))
    width = panel_width(panels)
    bars = share_scales([step_bar(al, t, max_width=width) for al in panels.values()], axes=("yaxis", "yaxis2"))
    contexts = share_scales([context_bar(al, t, max_width=width) for al in panels.values()], axes=("yaxis",))
    for col, (name, al), bar, context in zip(columns(panels), panels.items(), bars, contexts, strict=True):
        with col:
            if len(panels) > 1:
                st.markdown(
                    f"**{escape_markdown(name)}** · {escape_markdown(titles[name])}: step {t} writes"
                    f" {quoted(al.target_tokens[t])}"
                )
            chart(bar, f"explore_step_bar_{name}", image_format, f"step-{t}", name)
            chart(context, f"explore_step_context_{name}", image_format, f"context-{t}", name)
            if al.positions is not None:
                st.markdown(rf"Predicted centre $p_{{{t}}} = {float(al.positions[t]):.3f}$, $D = {al.window}$.")
    st.caption(
        r"Bars: the softmax $a_t$ over the source, with the raw scores $e_t$ (dotted, right axis); below, the"
        r" context vector $c_t = \sum_s a_{t,s} h_s$."
    )
    play = st.expander(PLAY_LABEL, key=PLAY_KEY, on_change="rerun")
    if not play.open:  # every frame of every step: built only for a reader who opens it
        return
    with play:
        plays = [step_animation(al, max_width=page_width()) for al in panels.values()]
        for name, fig in zip(panels, share_scales(plays, axes=("yaxis", "yaxis2")), strict=True):
            if len(panels) > 1:  # one under the other: the animation needs the page's width
                st.markdown(f"**{escape_markdown(name)}**")
            chart(fig, f"explore_step_animation_{name}", image_format, "steps", name)


def context_view(panels: Panels, image_format: str, titles: dict[str, str]) -> None:
    """The context vectors of every step: as a heatmap (one colour scale for every panel) and
    projected to 2-D, each titled with its panel's model."""
    stack = len(panels) > 1 and column_width(len(panels)) < CONTEXT_MIN_PX
    width = panel_width(panels, stack)
    maps = [context_heatmap(al, f"{titles[n]} · context vectors", max_width=width) for n, al in panels.items()]
    share_scales(maps)
    projected = {n: al for n, al in panels.items() if len(al.target_tokens) >= 2}
    planes = {n: context_projection(al, titles[n], width) for n, al in projected.items()}
    share_scales(list(planes.values()))
    for col, name, fig in zip(columns(panels, stack), panels, maps, strict=True):
        with col:
            chart(fig, f"explore_context_heatmap_{name}", image_format, "contexts", name)
            if name in planes:
                chart(planes[name], f"explore_context_projection_{name}", image_format, "ctx2d", name)
            else:
                st.caption("One decoder step: no projection to draw (it needs two or more).")
    one = " One colour scale for both panels." if len(panels) > 1 else ""
    st.caption(
        r"Each row is $c_t = \sum_s a_{t,s} h_s$. The projection keeps the two directions of largest"
        " variance (PCA): steps that read the same source words land close together." + one
    )


def difference_view(panels: Panels, image_format: str) -> None:
    """Both only: Luong − Bahdanau per cell, entropy and Jensen-Shannon divergence per step,
    over the steps both decodes have."""
    (na, a), (nb, b) = list(panels.items())
    a2, b2 = common_steps(a, b)
    if len(a2.target_tokens) < len(a.target_tokens) or len(b2.target_tokens) < len(b.target_tokens):
        st.info(
            f"The translations have {len(a.target_tokens)} and {len(b.target_tokens)} steps; rows line up by"
            f" step, and the difference is shown for the {len(a2.target_tokens)} steps both have."
        )
    if not a2.target_tokens:
        return
    if (apart := parting_step(a2, b2)) is not None:
        st.info(
            f"The two translations part at step {apart}: from there on a row may compare different words (`x / y`"
            " rows), and a word written one step later in one of them shows as a band of differences. Compare"
            " forces every model through one target, so its rows always compare the same word."
        )
    chart(
        difference_heatmap(b2, a2, (nb, na), max_width=page_width()),
        "explore_difference",
        image_format,
        "difference",
        DIFFERENCE,
    )
    st.caption(
        f"Red (+): {nb} attends more than {na} at that step; blue (−): less. A row label `x / y` means the two"
        " models wrote different tokens at that step. The CSV holds every cell's signed difference."
    )
    st.download_button(
        "Difference (CSV)",
        difference_csv(b2, a2),
        file_name=f"{file_name('difference', DIFFERENCE)}.csv",
        mime="text/csv",
        key="explore_dl_difference",
        on_click="ignore",
    )
    left, right = st.columns(2)
    with left:
        chart(entropy_plot({na: a2, nb: b2}), "explore_entropy", image_format, "entropy")  # the steps both have
        st.caption("Entropy H(a_t) = −Σ_s a_t(s) ln a_t(s): 0 when one source token takes all, ln n when uniform.")
    with right:
        chart(js_plot(b2, a2, (nb, na)), "explore_js", image_format, "js")
        st.caption("Jensen-Shannon divergence of the two rows: 0 when equal, ln 2 when they share no source token.")
