"""A figure as a file: HTML that opens offline; PNG, SVG and PDF through kaleido, every format
asked for drawn in one Chromium and kept for the next ask of the same figure (a stand-in for
kaleido counts the drawings; the last test draws with the real one where it is installed)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from attnviz.errors import ConfigError, InputError
from attnviz.plots import images
from attnviz.plots.images import can_write_images, figure_html, figure_image, figure_images
from attnviz.plots.paper import paper_figure
from tests.support.alignments import make_alignment
from tests.support.pdf import document_title

MODELS = {"Bahdanau": "toy-fr-general-bahdanau · general / bahdanau", "Luong": "toy-fr-general-luong · general / luong"}


def figure(sentence: str = "the cat eats"):
    a = make_alignment(["the", "cat", "eats"], ["le", "chat", "mange"], seed=1)
    b = make_alignment(["the", "cat", "eats"], ["le", "chat"], seed=2)
    return paper_figure({"Bahdanau": a, "Luong": b}, MODELS, sentence)


@pytest.fixture(autouse=True)
def nothing_kept():
    images.forget_images()
    yield
    images.forget_images()


@pytest.fixture
def drawings(monkeypatch) -> list[list[str]]:
    """kaleido replaced: each drawing (one Chromium) recorded as the formats it drew."""
    seen: list[list[str]] = []

    def draw(spec, formats, scale):
        seen.append(list(formats))
        time.sleep(0.05)  # long enough for a second thread to ask meanwhile
        return {f: f"{f} of {spec['layout']['title']['text']}".encode() for f in formats}

    monkeypatch.setattr(images, "can_write_images", lambda: True)
    monkeypatch.setattr(images, "_draw", draw)
    return seen


def test_html_is_self_contained_and_escapes_the_sentence():
    page = figure_html(figure("<script>alert(1)</script> the cat"))
    assert "<script>alert(1)</script>" not in page.split("Plotly.newPlot")[-1]
    assert 'src="https://cdn.plot.ly' not in page and len(page) > 1_000_000  # plotly.js inside: opens offline


def test_every_format_is_drawn_in_one_chromium_and_kept_for_the_same_figure(drawings):
    files = figure_images(figure())
    assert drawings == [["png", "svg", "pdf"]] and list(files) == ["png", "svg", "pdf"]
    assert figure_image(figure(), "svg") == files["svg"]  # the figure built again, as a rerun does
    assert figure_images(figure(), ["pdf", "png"]) == {"pdf": files["pdf"], "png": files["png"]}
    assert len(drawings) == 1
    figure_image(figure("the cat eats the apple"), "png")  # another figure: drawn
    assert drawings[1:] == [["png"]]


def test_only_the_formats_not_kept_are_drawn(drawings):
    figure_image(figure(), "svg")
    figure_images(figure())
    assert drawings == [["svg"], ["png", "pdf"]]


def test_the_last_figures_are_kept_and_the_oldest_dropped(drawings, monkeypatch):
    monkeypatch.setattr(images, "KEPT_FIGURES", 2)
    for sentence in ("a", "b", "c", "b"):
        figure_image(figure(sentence), "png")
    assert len(drawings) == 3  # "b" was kept
    figure_image(figure("a"), "png")
    assert len(drawings) == 4  # "a" was dropped for "c"


def test_two_asks_at_once_draw_a_figure_once(drawings):
    out = []
    threads = [threading.Thread(target=lambda: out.append(figure_images(figure()))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(drawings) == 1 and len(out) == 4 and all(files == out[0] for files in out)


def test_bad_formats_and_a_failing_chromium_say_how_to_fix(monkeypatch):
    with pytest.raises(InputError, match="png, svg, pdf"):
        figure_image(figure(), "gif")
    monkeypatch.setattr(images, "can_write_images", lambda: False)
    with pytest.raises(ConfigError, match="pip install kaleido"):
        figure_image(figure(), "png")


@pytest.mark.skipif(not can_write_images(), reason="kaleido is not installed")
def test_kaleido_draws_every_format_in_one_chromium():
    files = figure_images(figure())
    assert files["svg"].startswith(b"<svg")
    assert np.frombuffer(files["png"][:8], np.uint8).tolist()[1:4] == list(b"PNG")
    assert files["pdf"].startswith(b"%PDF") and document_title(files["pdf"]) == "“the cat eats”"
    assert figure_image(figure(), "pdf") == files["pdf"]  # kept
