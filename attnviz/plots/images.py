"""A figure as a file: self-contained HTML always; PNG, SVG and PDF through kaleido, which drives a
local Chromium and needs no network.

Starting kaleido's Chromium is most of what an image costs (a second or two on a quiet machine,
several on a busy one); drawing a file in it takes a fraction of a second. So
:func:`figure_images` draws every format it is asked for in one Chromium, and each file drawn is
kept (the last :data:`KEPT_FIGURES` figures' files): asked again for the same figure, rebuilt by a
rerun or not, it is given back without drawing. The files are keyed by the figure's JSON, so any
change to the figure draws anew. Thread-safe: one drawing at a time, and a file that another
thread is drawing is waited for, not drawn twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import importlib.util
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import plotly.graph_objects as go

from attnviz.errors import ConfigError, InputError
from attnviz.plots.pdf import pdf_titled

IMAGE_FORMATS = ("png", "svg", "pdf")  # what kaleido writes
MIME = {"html": "text/html", "png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}
KEPT_FIGURES = 8  # the figures whose drawn files are kept, the least recently asked for dropped first

_kept: OrderedDict[str, dict[str, bytes]] = OrderedDict()  # figure key -> format -> file
_kept_lock = threading.Lock()
_drawing = threading.Lock()  # one kaleido Chromium at a time


def figure_html(fig: go.Figure) -> str:
    """``fig`` as one HTML file that opens offline (plotly.js inside it), with its toolbar's
    camera button saving a PNG."""
    return fig.to_html(include_plotlyjs=True, full_html=True, config={"displaylogo": False})


def can_write_images() -> bool:
    """Whether PNG, SVG and PDF can be written here: kaleido is installed (it drives a local Chromium)."""
    return importlib.util.find_spec("kaleido") is not None


def figure_image(fig: go.Figure, image_format: str, scale: float = 2.0, title: str | None = None) -> bytes:
    """``fig`` as PNG, SVG or PDF bytes (:func:`figure_images` of that one format)."""
    return figure_images(fig, (image_format,), scale, title)[image_format]


def figure_images(
    fig: go.Figure, formats: Iterable[str] = IMAGE_FORMATS, scale: float = 2.0, title: str | None = None
) -> dict[str, bytes]:
    """``fig`` in each of ``formats`` (PNG, SVG, PDF), the ones not kept from an earlier call drawn
    in one kaleido Chromium. A PNG is drawn at ``scale`` times the figure's pixels; a PDF's document
    title is ``title`` (default: the figure's title as plain text)."""
    formats = list(dict.fromkeys(formats))
    bad = [f for f in formats if f not in IMAGE_FORMATS]
    if bad or not formats:
        raise InputError(f"image formats must be among {', '.join(IMAGE_FORMATS)}, got {bad or formats!r}")
    if not can_write_images():
        raise ConfigError("PNG, SVG and PDF files need kaleido: pip install kaleido==1.5.0 (and a Chromium)")
    spec = fig.to_dict()
    title = plain_title(fig) if title is None else title
    key = hashlib.sha256(f"{fig.to_json()}|{scale!r}|{title}".encode()).hexdigest()
    found = _take(key, formats)
    if len(found) < len(formats):
        with _drawing:  # another thread may have drawn them meanwhile
            found = _take(key, formats)
            missing = [f for f in formats if f not in found]
            if missing:
                drawn = _draw(spec, missing, scale)
                drawn = {f: pdf_titled(data, title) if f == "pdf" else data for f, data in drawn.items()}
                _keep(key, drawn)
                found |= drawn
    return {f: found[f] for f in formats}


def forget_images() -> None:
    """Drop every kept file (the next ask draws again)."""
    with _kept_lock:
        _kept.clear()


def _take(key: str, formats: list[str]) -> dict[str, bytes]:
    with _kept_lock:
        files = _kept.get(key, {})
        if files:
            _kept.move_to_end(key)
        return {f: files[f] for f in formats if f in files}


def _keep(key: str, files: dict[str, bytes]) -> None:
    with _kept_lock:
        _kept[key] = _kept.get(key, {}) | files
        _kept.move_to_end(key)
        while len(_kept) > KEPT_FIGURES:
            _kept.popitem(last=False)


def _draw(spec: dict, formats: list[str], scale: float) -> dict[str, bytes]:
    """Every format of the figure ``spec`` (a plotly figure dict) drawn in one kaleido Chromium,
    with the sizes ``fig.to_image`` gives it."""
    import kaleido
    import plotly.io as pio

    layout = spec.get("layout", {})
    size = {
        "width": layout.get("width") or pio.defaults.default_width,
        "height": layout.get("height") or pio.defaults.default_height,
    }
    options = {k: v for k, v in (("plotlyjs", pio.defaults.plotlyjs), ("mathjax", pio.defaults.mathjax)) if v}

    async def draw_all() -> list[bytes]:
        async with kaleido.Kaleido(n=1, **options) as k:
            return [
                await k.calc_fig(spec, opts={"format": f, **size, "scale": scale if f == "png" else 1.0})
                for f in formats
            ]

    try:  # in a thread of its own: the caller's thread may run an event loop already
        with ThreadPoolExecutor(1, thread_name_prefix="attnviz-kaleido") as pool:
            images = pool.submit(asyncio.run, draw_all()).result()  # kaleido times a drawing out itself
    except Exception as e:  # kaleido's errors share no base class: Chromium missing, crashed, timed out
        raise ConfigError(
            f"kaleido could not draw the figure ({type(e).__name__}: {e}); it needs Chromium: apt-get install"
            " chromium, or set BROWSER_PATH to a Chrome or Chromium executable"
        ) from e
    return dict(zip(formats, images, strict=True))


def plain_title(fig: go.Figure) -> str:
    """The figure's title without its markup (lines joined by spaces, entities read), or ``attnviz figure``."""
    text = fig.layout.title.text or ""
    text = html.unescape(re.sub(r"<[^>]+>", " ", text.replace("<br>", " ")))
    return " ".join(text.split()) or "attnviz figure"
