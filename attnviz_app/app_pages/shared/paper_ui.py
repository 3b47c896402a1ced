"""The figure for a paper: the maps of a view (Both's two, Compare's grid) as one figure on one
colour scale with the sentence, model names and styles (attnviz.plots.paper_figure), offered as
self-contained HTML, and as PNG, SVG and PDF where kaleido is installed. A file is made when its
button is pressed, never on a rerun; the first image asked for draws all three formats in one
Chromium, kept for the next asks of the same figure (attnviz.plots.figure_images)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attnviz.decoding import Alignment
from attnviz.plots import IMAGE_FORMATS, MIME, can_write_images, figure_html, figure_images, paper_figure

if TYPE_CHECKING:
    import plotly.graph_objects as go


def _file(builder: Callable, fmt: str) -> Callable[[], bytes | str]:
    """What the download button runs when pressed (on its own thread: no Streamlit calls)."""
    if fmt == "html":
        return lambda: figure_html(builder())
    return lambda: figure_images(builder(), IMAGE_FORMATS)[fmt]  # one Chromium draws all three, kept


def paper_download(
    panels: Mapping[str, Alignment],
    models: Mapping[str, str],
    sentence: str,
    values: str,
    stem: str,
    key: str,
    note: str = "",
    attributions: Mapping[str, np.ndarray] | None = None,
    method: str = "attribution",
) -> None:
    """Download buttons for the panels' maps as one figure; the file is built when pressed. With
    ``attributions`` each panel's attention and attribution maps go side by side."""
    panels, models = dict(panels), dict(models)
    attributions = None if attributions is None else dict(attributions)

    def builder() -> go.Figure:
        return paper_figure(panels, models, sentence, values, note=note, attributions=attributions, method=method)

    formats = ["html", *IMAGE_FORMATS] if can_write_images() else ["html"]
    cols = st.columns([2.2, *[1] * len(formats)], vertical_alignment="center")
    what = "a colour scale per kind of map" if attributions is not None else "every map on one colour scale"
    cols[0].markdown(f"**One figure for a paper**: {what}, with the sentence and the models")
    for col, fmt in zip(cols[1:], formats, strict=True):
        col.download_button(
            fmt.upper(),
            _file(builder, fmt),
            file_name=f"{stem}.{fmt}",
            mime=MIME[fmt],
            key=f"{key}_{fmt}",
            on_click="ignore",
            icon=":material/download:",
        )
    if not can_write_images():
        st.caption(
            "PNG or SVG: open the HTML file and press the camera button in its toolbar (kaleido, which would"
            " write PNG, SVG and PDF here, is not installed)."
        )
