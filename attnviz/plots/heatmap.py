"""Figures of one decode: pure functions from an :class:`Alignment` to a Plotly figure.

Tokens are plotted on integer positions with the text in ``ticktext`` (Plotly merges repeated
category labels), and every token shown goes through :func:`display_tokens` first because tick
and hover text interpret HTML. Comparisons of several decodes live in :mod:`attnviz.plots.compare`,
the context vectors' figures in :mod:`attnviz.plots.context`.
"""

from __future__ import annotations

import html
import textwrap

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from attnviz.data import Link, show_direction_marks
from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.plots.compact import compact_arrays

WEIGHT_SCALE = "Blues"  # attention weights, 0..1
DIVERGING_SCALE = "RdBu_r"  # raw scores, differences, context values: red positive, blue negative
UNKNOWN_MARK = "⚠"
UNKNOWN_LIFT_PX = 20  # how far a legend above the grid moves up to clear the unknown words' marks
UNKNOWN_COLOR = "#e6550d"
GOLD_COLOR = "#d62728"


TEMPLATE_TRACES = ("bar", "heatmap", "histogram", "scatter")  # the trace types attnviz draws
UNUSED_SUBPLOTS = ("geo", "mapbox", "polar", "scene", "ternary")  # plotly_white's, never drawn here


def _house_template() -> go.layout.Template:
    """``plotly_white`` (a copy) whose tick labels may overflow (``allow``): the figures size their
    margins to their labels, and Plotly's default ("hide past div") measures every label's box after
    each draw to hide the ones that cross the figure's edge, a tenth of the browser's time to redraw
    a heatmap. Only the defaults of :data:`TEMPLATE_TRACES` and of 2D plots are kept: the template
    goes to the browser with every figure, and the rest (3D, polar, maps) was 4.6 of its 7.3 kB."""
    template = go.layout.Template(pio.templates["plotly_white"])
    layout = template.layout
    for axis in (layout.xaxis, layout.yaxis, layout.coloraxis.colorbar):
        axis.ticklabeloverflow = "allow"
    for trace in template.data.heatmap:  # a heatmap's own colour bar
        trace.colorbar.ticklabeloverflow = "allow"
    spec = template.to_plotly_json()
    spec["data"] = {kind: traces for kind, traces in spec["data"].items() if kind in TEMPLATE_TRACES}
    spec["layout"] = {name: value for name, value in spec["layout"].items() if name not in UNUSED_SUBPLOTS}
    return go.layout.Template(spec)


# the template object, built once: naming it ("plotly_white") makes Plotly rebuild and validate it
# in every figure, a large share of a heatmap's build time
TEMPLATE = _house_template()


TEXT_COLOUR = "#2a3f5f"  # plotly_white's text: 10.6:1 on white (Streamlit's theme greys it to 3.7:1)
TITLE_PAD_PX = 30  # a title starts below the toolbar Plotly shows on hover (it covered long titles)


def apply_template(fig: go.Figure) -> go.Figure:
    """Give ``fig`` the house template without Plotly validating it again: even as a built object,
    ``template=TEMPLATE`` re-validated it in every figure (three figures per Explore rerun). The
    object is valid already; Plotly attaches its default template the same way. Its float64 arrays
    that float32 holds exactly go as float32 (:func:`~attnviz.plots.compact.compact_arrays`)."""
    compact_arrays(fig)
    layout = fig.layout
    layout._validate = False
    try:
        layout.template = TEMPLATE
    finally:
        layout._validate = fig._validate
    # the text's colour as the figure's own, so that Streamlit's theme (which greys the words on the axes
    # to 3.7:1) keeps it: the axes' tick labels are the sentence's words
    if layout.font.color is None:
        layout.font.color = TEXT_COLOUR
    for axis in (*fig.select_xaxes(), *fig.select_yaxes()):
        if axis.tickfont.color is None:
            axis.tickfont.color = TEXT_COLOUR
        if axis.title.font.color is None:
            axis.title.font.color = TEXT_COLOUR
    return fig


LABEL_CHARS = 40  # the longest token label: a longer token is cut (with "…") so the heatmap keeps its width


def display_tokens(tokens: list[str], escape: bool = True, limit: int | None = LABEL_CHARS) -> list[str]:
    """Tokens as Plotly should show them: a space shown as ``␣``, empty as ``∅``, longer than
    ``limit`` characters cut with ``…`` (``None``: whole, as in a cell's hover), a direction
    override written as its code point (:func:`~attnviz.data.tokenize.show_direction_marks`), HTML-escaped
    (``escape=False`` for a browser that sets them as plain text)."""
    shown = [show_direction_marks(tok.replace(" ", "␣")) if tok else "∅" for tok in tokens]
    if limit is not None:
        shown = [tok if len(tok) <= limit else tok[: limit - 1] + "…" for tok in shown]
    return [html.escape(tok, quote=False) for tok in shown] if escape else shown


def plot_config(filename: str, image_format: str = "png") -> dict:
    """The ``config=`` dict for ``st.plotly_chart``: a download button (png or svg). The mouse wheel
    scrolls the page, not the figure (with scroll zoom, a page scrolled past a figure zoomed it
    instead); the toolbar's zoom box and +/- zoom."""
    if image_format not in ("png", "svg"):
        raise InputError(f"image_format must be 'png' or 'svg', got {image_format!r}")
    return {
        "toImageButtonOptions": {"format": image_format, "filename": filename, "scale": 2},
        "displaylogo": False,
        "scrollZoom": False,
    }


TITLE_PX, MIN_TITLE_PX, CHAR_EM, TITLE_LINE_PX = 17, 11, 0.58, 20  # title font sizes; a character's width (em)


def fit_title(fig: go.Figure) -> None:
    """Fit a title into its figure, so a short sentence's narrow map does not clip it: a smaller
    font first (down to 11 px), then lines broken at the title's `` · `` parts (``general / luong``
    stays on one line) and at spaces (HTML entities stay whole), with room made above the plot."""
    text = fig.layout.title.text
    if not text:
        return
    room = fig.layout.width - 30  # px
    visible = len(html.unescape(text))
    size = min(TITLE_PX, int(room / (visible * CHAR_EM)))
    if size >= TITLE_PX:
        return
    if size >= MIN_TITLE_PX:
        fig.update_layout(title_font_size=size)
        return
    width = max(int(room / (MIN_TITLE_PX * CHAR_EM)), 12)  # characters per line
    lines: list[str] = []
    for part in text.split(" · "):
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines += textwrap.wrap(part, width=width, break_long_words=False, break_on_hyphens=False) or [part]
    extra = (len(lines) - 1) * TITLE_LINE_PX
    fig.update_layout(
        title_text="<br>".join(lines),
        title_font_size=MIN_TITLE_PX,
        title_y=1,
        title_pad_t=TITLE_PAD_PX,
        margin={"t": (fig.layout.margin.t or 100) + extra},
        height=fig.layout.height + extra,
    )


# -- sizing ----------------------------------------------------------------------------------


def cell_size(n: int, target_px: float = 600, lo: int = 18, hi: int = 44) -> int:
    """Pixels per token cell: big for short sentences, never below ``lo`` so long ones stay legible."""
    return int(np.clip(target_px / max(n, 1), lo, hi))


def tick_angle(tokens: list[str], cell_px: int) -> int:
    """0 when every label fits in its cell, else -60 (rotated so long sentences stay readable), or
    -90 when cells are narrower than a slanted label's footprint: a label of ``n`` characters
    turned by 60 degrees spans ``cos 60 * 7n + sin 60 * 14`` px across (at least 18)."""
    longest = min(max((len(t) for t in tokens), default=0), LABEL_CHARS)  # labels are cut there
    if longest * 7 <= cell_px:
        return 0
    return -60 if cell_px >= max(18, 0.5 * 7 * longest + 0.87 * 14) else -90


TICK_PX, MIN_TICK_PX, MIN_CELL_PX = 12, 10, 12  # tick font: Plotly's default, the smallest kept; cells
FULL_CELL_PX = 16  # the narrowest cell whose upright labels can be full size


def tick_px(cell_px: int) -> int:
    """The tick label font for cells this wide: a label rotated upright is a line of text wide, 1.4
    times its font in Chromium, so that many fit in a cell (a pixel of slack), from Plotly's 12 px
    down to 10 px (still legible)."""
    return int(np.clip((cell_px + 1) // 1.4, MIN_TICK_PX, TICK_PX))


def label_px(tokens: list[str], angle: int, font_px: int = TICK_PX) -> int:
    """Room a tick label column or row needs, in pixels."""
    longest = min(max((len(t) for t in tokens), default=1), LABEL_CHARS)  # labels are cut there
    slant = {0: 0.0, -60: 0.87, -90: 1.0}.get(angle, 1.0)
    return int(20 + longest * 7 * font_px / TICK_PX * slant) + (0 if angle else 20)


# -- the alignment heatmap -------------------------------------------------------------------


def unknown_flags(al: Alignment) -> list[bool]:
    """One flag per source token (``source_unknown`` padded with False for ``<eos>``)."""
    flags = list(al.source_unknown)[: len(al.source_tokens)]
    return flags + [False] * (len(al.source_tokens) - len(flags))


def _cell_labels(al: Alignment) -> np.ndarray:
    """``[tgt, src]`` strings naming both tokens of each cell (escaped; unknown words marked)."""
    n_tgt, n_src = np.shape(al.weights)
    src = [
        f"{tok} {UNKNOWN_MARK} unknown word" if u else tok
        for tok, u in zip(display_tokens(al.source_tokens, limit=None), unknown_flags(al), strict=True)
    ]
    tgt = display_tokens(al.target_tokens, limit=None)  # a hover names a cell's tokens whole
    labels = [[f"source [{j}]: {src[j]}<br>target [{i}]: {tgt[i]}" for j in range(n_src)] for i in range(n_tgt)]
    return np.array(labels).reshape(n_tgt, n_src)


def hover_text(al: Alignment) -> list[list[str]]:
    """``[tgt][src]`` hover strings: both tokens (escaped), the weight and the raw score."""
    labels = _cell_labels(al)
    scores = np.asarray(al.scores, dtype=np.float64)  # [tgt, src]
    score = np.where(np.isfinite(scores), np.char.mod("%.3f", np.nan_to_num(scores)), "−∞ (outside the local window)")
    return [
        [f"{labels[t, s]}<br>weight: {w:.3f}<br>score: {score[t, s]}" for s, w in enumerate(row)]
        for t, row in enumerate(np.asarray(al.weights, dtype=np.float64))
    ]


def cell_hover(al: Alignment, values: str = "weights") -> tuple[np.ndarray, np.ndarray | None, str]:
    """A heatmap's hover: ``text`` ``[tgt, src]`` naming both tokens, ``customdata`` ``[tgt, src]``
    with the matrix the map does not show (scores under weights, weights under scores), and the
    template with which the browser formats both numbers. Numpy arrays: Plotly neither validates
    nor re-encodes them cell by cell. Where a local window leaves −∞ scores (JSON has none), the
    numbers are written into the text instead (:func:`hover_text`) and no ``customdata`` is sent."""
    al.matrix(values)  # checks ``values``
    weights = np.asarray(al.weights, dtype=np.float64)  # [tgt, src]
    scores = np.asarray(al.scores, dtype=np.float64)  # [tgt, src]
    if not np.isfinite(scores).all():
        return np.array(hover_text(al)).reshape(weights.shape), None, "%{text}<extra></extra>"
    if values == "weights":
        other, numbers = scores, "weight: %{z:.3f}<br>score: %{customdata:.3f}"
    else:
        other, numbers = weights, "weight: %{customdata:.3f}<br>score: %{z:.3f}"
    return _cell_labels(al), other, "%{text}<br>" + numbers + "<extra></extra>"


def axis_refs(fig: go.Figure, row: int | None, col: int | None) -> tuple[str, str]:
    """The ``xref``/``yref`` names (``"x"``, ``"x2"``, ...) of a subplot, or of a plain figure."""
    if row is None:
        return "x", "y"
    sub = fig.get_subplot(row, col)
    return sub.xaxis.plotly_name.replace("axis", ""), sub.yaxis.plotly_name.replace("axis", "")


def add_alignment(
    fig: go.Figure,
    al: Alignment,
    values: str = "weights",
    zmin: float | None = None,
    zmax: float | None = None,
    hover: bool = True,
    showscale: bool = True,
    row: int | None = None,
    col: int | None = None,
) -> None:
    """Draw ``al`` as a heatmap into ``fig`` (or one of its subplots), with ticks and unknown marks.

    ``hover=False`` leaves the hover off (:func:`cell_hover` otherwise).
    """
    z = al.matrix(values)  # [tgt, src]
    n_tgt, n_src = z.shape
    text, other, template = cell_hover(al, values) if hover else (None, None, None)
    if values == "weights":
        scale, zmid, title = WEIGHT_SCALE, None, "weight"
        zmin = 0.0 if zmin is None else zmin
    else:
        scale, title = DIVERGING_SCALE, "score"
        zmid = 0.0 if zmin is None and zmax is None else None
    heat = go.Heatmap(
        z=z,
        x=list(range(n_src)),
        y=list(range(n_tgt)),
        colorscale=scale,
        zmin=zmin,
        zmax=zmax,
        zmid=zmid,
        showscale=showscale,
        colorbar={"title": {"text": title}},
        text=text,
        customdata=other,
        hovertemplate=template,
        hoverinfo=None if hover else "skip",
        name=values,
    )
    fig.add_trace(heat, row=row, col=col)
    if al.positions is not None:  # local attention: the centre p_t of each step's window (local-m: min(t, S-1))
        p = go.Scatter(x=np.asarray(al.positions, dtype=float), y=list(range(n_tgt)), mode="lines+markers")
        p.update(name="p_t", line={"color": GOLD_COLOR, "dash": "dot"}, marker={"size": 5}, hoverinfo="skip")
        fig.add_trace(p, row=row, col=col)
    src = display_tokens(al.source_tokens)
    cell = cell_size(max(n_src, n_tgt))
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(n_src)),
        ticktext=src,
        tickangle=tick_angle(al.source_tokens, cell),
        range=[-0.5, n_src - 0.5],  # fixed: autorange would pad for the gold links' markers
        showgrid=False,
        zeroline=False,
        row=row,
        col=col,
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(n_tgt)),
        ticktext=display_tokens(al.target_tokens),
        range=[n_tgt - 0.5, -0.5],  # reversed: first decoder step at the top
        showgrid=False,
        zeroline=False,
        row=row,
        col=col,
    )
    xref, yref = axis_refs(fig, row, col)
    for s, unknown in enumerate(unknown_flags(al)):
        if unknown:
            above = {"x": s, "y": -0.5, "xref": xref, "yref": yref, "yanchor": "bottom"}  # the column's top
            note = {"font": {"color": UNKNOWN_COLOR}, "hovertext": f"{src[s]}: not in the vocabulary"}
            fig.add_annotation(**above, text=UNKNOWN_MARK, showarrow=False, **note)


def alignment_heatmap(
    al: Alignment,
    values: str = "weights",
    zmin: float | None = None,
    zmax: float | None = None,
    show_gold: list[Link] | None = None,
    highlight_step: int | None = None,
    hover: bool = True,
    title: str | None = None,
) -> go.Figure:
    """Target tokens as rows (decode order, top down), source tokens as columns.

    ``values`` is ``"weights"`` (softmax, ``Blues``) or ``"scores"`` (raw energies, diverging;
    -inf cells outside a local window are blank). ``show_gold`` outlines gold links given as
    ``(source_index, target_index)``. Each cell's hover (unless ``hover=False``) names both
    tokens with the weight and the raw score (:func:`cell_hover`); a click on a cell is Plotly's
    ``plotly_click`` on the heatmap itself. Unknown source words get a ``⚠`` above their column
    and a note in the hover.
    """
    fig = go.Figure()
    add_alignment(fig, al, values, zmin, zmax, hover=hover)
    n_tgt, n_src = np.shape(al.weights)
    cell = cell_size(max(n_src, n_tgt))
    if show_gold:
        bad = [(i, j) for i, j in show_gold if not (0 <= i < n_src and 0 <= j < n_tgt)]
        if bad:
            raise InputError(f"gold links {bad} fall outside the {n_tgt}x{n_src} alignment; links are (source, target)")
        gold = go.Scatter(x=[i for i, _ in show_gold], y=[j for _, j in show_gold], mode="markers", name="gold")
        gold.update(marker={"symbol": "square-open", "size": cell * 0.8, "color": GOLD_COLOR, "line": {"width": 2}})
        fig.add_trace(gold.update(hoverinfo="skip"))
    if highlight_step is not None:
        if not 0 <= highlight_step < n_tgt:
            raise InputError(f"highlight_step must be in 0..{n_tgt - 1}, got {highlight_step}")
        row_box = {"x0": -0.5, "x1": n_src - 0.5, "y0": highlight_step - 0.5, "y1": highlight_step + 0.5}
        fig.add_shape(type="rect", **row_box, line={"color": GOLD_COLOR, "width": 2}, xref="x", yref="y")
    angle = tick_angle(al.source_tokens, cell)
    left = label_px(al.target_tokens, 0)
    bottom = label_px(al.source_tokens, angle)
    legend = bool(show_gold) or al.positions is not None
    # the legend sits above the grid, where the unknown words' marks are: lifted clear of them
    lift = UNKNOWN_LIFT_PX if legend and any(unknown_flags(al)) else 0
    apply_template(fig)
    fig.update_layout(
        title={
            "text": html.escape(title, quote=False),
            "y": 1,
            "yanchor": "top",
            "yref": "container",
            "pad": {"t": TITLE_PAD_PX},
        }
        if title
        else None,
        width=left + n_src * cell + 140,
        height=bottom + n_tgt * cell + (110 if legend else 90) + lift,
        margin={"l": left, "b": bottom, "t": (90 if legend else 70) + lift, "r": 20},
        showlegend=legend,
        legend={
            "orientation": "h",
            "y": 1.0 + lift / (n_tgt * cell + 20),
            "yanchor": "bottom",
            "yref": "paper",
            "x": 0,
        },
        plot_bgcolor="white",
        hovermode="closest",
    )
    return fig
