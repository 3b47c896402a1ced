"""Random but valid alignments for the figure builders' tests, alignments of given weights, and what a
figure carries (its heatmaps, its hover text)."""

import json

import numpy as np
import plotly.graph_objects as go

from attnviz.decoding.trace import Alignment


def make_alignment(
    source: list[str],
    target: list[str],
    seed: int = 0,
    unknown: list[bool] | None = None,
    **extra,
) -> Alignment:
    """A random but valid alignment over ``source + <eos>`` and ``target + <eos>``."""
    source, target = [*source, "<eos>"], [*target, "<eos>"]
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(len(target), len(source)))  # [tgt, src]
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    return Alignment(
        source_tokens=source,
        target_tokens=target,
        weights=weights,
        scores=scores,
        contexts=rng.normal(size=(len(target), 6)),
        states=rng.normal(size=(len(target), 6)),
        source_unknown=unknown or [False] * len(source),
        score="general",
        style="luong",
        **extra,
    )


def alignment_of(weights: np.ndarray, source: list[str], target: list[str], unknown: list[bool]) -> Alignment:
    """A dot/Luong alignment of exactly these ``[tgt, src]`` weights over these tokens (``<eos>`` included):
    the scores are their log, the contexts and states zeros."""
    return Alignment(
        source_tokens=source,
        target_tokens=target,
        weights=weights,
        scores=np.log(weights),
        contexts=np.zeros((len(target), 2)),
        states=np.zeros((len(target), 2)),
        source_unknown=unknown,
        score="dot",
        style="luong",
    )


def heatmaps(fig: go.Figure) -> list:
    return [t for t in fig.data if t.type == "heatmap"]


def hover_strings(fig: go.Figure) -> str:
    """Every hover string the figure carries, as one blob."""
    return json.dumps([np.asarray(t.text).tolist() for t in fig.data if t.text is not None], ensure_ascii=False)
