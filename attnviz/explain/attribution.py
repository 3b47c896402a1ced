"""Gradient attributions beside attention: how much each source token moved each output token.

Attention says where the decoder looked at step ``t``; an attribution says how much each
source token's embedding ``x_s`` changed ``f_t = log p(y_t | y_<t, x)``, the log-probability
of the token chosen at that step. The decoder is teacher-forced on the decoded (or given)
target, so every ``f_t`` is a differentiable function of the source embeddings ``x`` ``[S, E]``.
Each method gives ``[S, E]`` per step, summed over ``E`` to one number per source token:

- ``"gxi"``, gradient × input (Shrikumar et al. 2016): ``x_s · ∂f_t/∂x_s``.
- ``"ig"``, integrated gradients (Sundararajan et al. 2017):
  ``(x_s - b_s) · ∫_0^1 ∂f_t/∂x_s (b + α(x - b)) dα``, by Captum's Gauss-Legendre quadrature
  with ``steps`` points. Completeness: ``Σ_s IG_ts = f_t(x) - f_t(b)``; the quadrature error
  of that sum is returned per step as ``delta``.
- ``"occlusion"`` (Zeiler & Fergus 2014): ``f_t(x) - f_t(x with x_s replaced by b_s)``.

The baseline ``b`` is the zero embedding at every source position by default (``"zeros"``), or
the ``<pad>`` / ``<unk>`` embedding (``"pad"``, ``"unk"``). With ``"unk"`` an unknown source
word already is its baseline, so its attribution is 0 by construction. Positive values raised the
chosen token's log-probability. Source ``<eos>`` is an input like any token and gets a column.

Attribution runs on a float32 copy of the model (a caller may have cast its model to float16,
and the app shares one model object across sessions and threads: it is never modified).
Integrated gradients sends all its interpolation points through the model as one batch, then
runs one backward batched over target steps (see :func:`integrated_gradients`).
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor

from attnviz.data import BOS_ID, PAD_ID, UNK_ID, Link
from attnviz.decoding import Alignment, Translator, significant
from attnviz.errors import InputError
from attnviz.evaluation import alignment_links
from attnviz.explain.ranks import spearman
from attnviz.model import Encoded, Seq2Seq

METHODS = {"ig": "integrated gradients", "gxi": "gradient × input", "occlusion": "occlusion"}
BASELINES = {"zeros": "the zero embedding", "pad": "the <pad> embedding", "unk": "the <unk> embedding"}
MAX_SOURCE_TOKENS = 60  # cost grows as source × target × steps (docs/speed.md has the times)
MAX_TARGET_TOKENS = 2 * MAX_SOURCE_TOKENS + 10  # a reference's tokens with <eos> (greedy stops there too)
MAX_STEPS = 512
MAX_ROWS = 1024  # rows of one pass: occluded sentences, or IG points × target steps in one backward
MAX_BYTES = 512 * 2**20  # IG: the log-probabilities [T, V] one pass may hold, over its points and steps


@dataclass(eq=False)  # holds arrays: two are equal when they are the same object
class Attribution:
    """Attributions of each target step's chosen-token log-probability to the source tokens,
    and how they agree with the attention of the same decode.

    Rows are target steps and columns source positions, aligned with ``alignment``'s
    ``source_tokens`` / ``target_tokens`` (both end with ``<eos>``).
    """

    method: str  # "ig", "gxi" or "occlusion"
    method_name: str  # in words, e.g. "integrated gradients (32 steps)"
    baseline: str  # in words, e.g. "the zero embedding"
    alignment: Alignment  # the decode (greedy, or forced on the reference) and its attention
    values: np.ndarray  # [tgt, src] attribution, summed over embedding dimensions
    log_probs: np.ndarray  # [tgt] log p of each chosen token (float32 model)
    delta: np.ndarray | None  # [tgt] IG only: sum_s values[t] - (f_t(x) - f_t(baseline))
    spearman: np.ndarray  # [tgt] rank correlation of values[t] and the attention row (nan: a constant row)
    top1: np.ndarray  # [tgt] bool: attention and attribution put the same source position first
    attention_top: list[str]  # [tgt] the source token attention puts first
    attribution_top: list[str]  # [tgt] the source token the attribution puts first
    steps: int | None = None  # integrated gradients' quadrature points (None for the other methods)

    @property
    def source_tokens(self) -> list[str]:
        return self.alignment.source_tokens

    @property
    def target_tokens(self) -> list[str]:
        return self.alignment.target_tokens

    @property
    def attention(self) -> np.ndarray:
        """``[tgt, src]`` the attention weights of the same decode."""
        return self.alignment.weights

    @property
    def mean_spearman(self) -> float:
        """Mean per-step Spearman correlation with attention (nan if no step has one)."""
        rho = self.spearman[np.isfinite(self.spearman)]
        return float(rho.mean()) if rho.size else float("nan")

    @property
    def top1_rate(self) -> float:
        """Fraction of steps where attention and attribution put the same source token first."""
        return float(self.top1.mean()) if self.top1.size else 0.0

    def summary(self) -> str:
        """One sentence: how far this attribution agrees with attention."""
        n = len(self.top1)
        rho = "undefined" if np.isnan(self.mean_spearman) else f"{self.mean_spearman:+.2f}"
        return (
            f"{self.method_name} against attention over {n} steps: mean Spearman {rho}; "
            f"the same source token first at {int(self.top1.sum())}/{n} steps ({self.top1_rate:.0%})."
        )

    def hard_links(self) -> set[Link]:
        """The attribution's argmax source position per target token, as :func:`alignment_links`
        gives for attention (``<eos>`` row dropped, argmax on source ``<eos>`` gives no link)."""
        return alignment_links(replace(self.alignment, weights=self.values))

    def to_dict(self) -> dict:
        """A JSON-ready dict (lists; nan becomes None). Attention and attribution values keep 6
        significant digits, as the trace's weights do, so tiny values keep their order; the rest 6
        decimals."""

        def arr(a: np.ndarray | None, digits: bool = False) -> list | None:
            if a is None:
                return None
            a = np.asarray(a, dtype=np.float64)
            a = significant(a) if digits else np.round(a, 6)
            return np.where(np.isfinite(a), a, None).tolist()

        return {
            "method": self.method,
            "method_name": self.method_name,
            "baseline": self.baseline,
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
            "values": arr(self.values, digits=True),
            "attention": arr(self.attention, digits=True),
            "log_probs": arr(self.log_probs),
            "delta": arr(self.delta),
            "agreement": {
                "spearman": arr(self.spearman),
                "top1": self.top1.tolist(),
                "attention_top": self.attention_top,
                "attribution_top": self.attribution_top,
                "mean_spearman": None if np.isnan(self.mean_spearman) else round(self.mean_spearman, 6),
                "top1_rate": round(self.top1_rate, 6),
            },
            "summary": self.summary(),
        }


@dataclass
class Forced:
    """A private float32 copy of a model, teacher-forced on one (source, target) pair."""

    model: Seq2Seq
    src: Tensor  # [1, S] source ids, <eos> included
    tgt_in: Tensor  # [1, T] <bos> y_1 ... y_{T-1}
    tgt_out: Tensor  # [1, T] y_1 ... y_T

    @classmethod
    def build(cls, model: Seq2Seq, src_ids: list[int], tgt_ids: list[int]) -> Forced:
        # deepcopy only reads the shared model; the copy is ours to cast and freeze
        private = copy.deepcopy(model).float().eval().requires_grad_(False)
        device = next(private.parameters()).device
        return cls(
            private,
            torch.tensor([src_ids], device=device),
            torch.tensor([[BOS_ID, *tgt_ids[:-1]]], device=device),
            torch.tensor([tgt_ids], device=device),
        )

    def embeddings(self) -> Tensor:
        """The source embeddings ``x`` ``[S, E]``."""
        return self.model.encoder.embedding(self.src)[0].detach()

    def baseline(self, name: str) -> Tensor:
        """``b`` ``[S, E]``: zeros, or the ``<pad>`` / ``<unk>`` embedding at every position."""
        x = self.embeddings()
        if name == "zeros":
            return torch.zeros_like(x)
        row = self.model.encoder.embedding.weight[PAD_ID if name == "pad" else UNK_ID]  # [E]
        return row.detach().expand_as(x).clone()

    def _encode(self, embedded: Tensor) -> Encoded:
        N, S = embedded.shape[:2]
        return self.model.encode(self.src.expand(N, -1), torch.full((N,), S), embedded)

    def log_probs(self, embedded: Tensor) -> Tensor:
        """``f_t`` of every step for each row of ``embedded`` ``[N, S, E]`` -> ``[N, T]``."""
        N = embedded.size(0)
        enc = self._encode(embedded)
        out = self.model.decoder(self.tgt_in.expand(N, -1), enc.state, enc.memory)
        logp = torch.log_softmax(out.logits.float(), dim=-1)  # [N, T, V]
        return logp.gather(2, self.tgt_out.expand(N, -1).unsqueeze(2)).squeeze(2)  # [N, T]

    def log_prob_at(self, embedded: Tensor, step: Tensor) -> Tensor:
        """``f_{step[n]}`` for each row of ``embedded`` ``[N, S, E]``, step ``[N]`` -> ``[N]``.

        The decoder runs only up to the latest step asked for, and the output layer only at
        each row's own step (``scored``), so a row costs one output layer, not ``T``.
        """
        N, T = embedded.size(0), int(step.max()) + 1
        enc = self._encode(embedded)
        scored = step.unsqueeze(1) == torch.arange(T, device=step.device)  # [N, T], one True per row
        out = self.model.decoder(self.tgt_in[:, :T].expand(N, -1), enc.state, enc.memory, scored=scored)
        logp = torch.log_softmax(out.logits.float(), dim=-1)  # [N, V], rows in order
        return logp.gather(1, self.tgt_out[0, step].unsqueeze(1)).squeeze(1)  # [N]


def _step_chunks(n_steps: int, rows_per_step: int, most: int = MAX_ROWS) -> list[Tensor]:
    """Target steps grouped so that one pass holds at most MAX_ROWS rows (at least one step), and
    at most ``most`` steps."""
    per_pass = max(1, min(MAX_ROWS // rows_per_step, most))
    return list(torch.arange(n_steps).split(per_pass))


def integrated_gradients(forced: Forced, x: Tensor, b: Tensor, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """``[T, S]`` IG values and ``[T]`` convergence deltas.

    The same rule as Captum's ``IntegratedGradients`` (Gauss-Legendre nodes ``α_i`` and
    weights ``w_i`` on [0, 1]), batched differently: Captum takes one target per example, so
    ``T`` steps would cost ``T`` forwards of ``steps`` sentences each. Here the ``steps``
    interpolated sentences go through the encoder and the forced decoder once, giving every
    ``f_t`` ``[steps, T]``, and one backward batched over target steps (``is_grads_batched``)
    seeds step ``t``'s outputs with the weights ``w_i``, which sums the weighted gradients.
    """
    nodes, weights = np.polynomial.legendre.leggauss(steps)  # on [-1, 1]
    alphas = torch.tensor((nodes + 1) / 2, dtype=x.dtype, device=x.device)  # [n] in (0, 1)
    w = torch.tensor(weights / 2, dtype=x.dtype, device=x.device)  # [n], sums to 1
    points = b + alphas.view(-1, 1, 1) * (x - b)  # [n, S, E]
    T = forced.tgt_out.size(1)
    # a point's pass holds its [T, V] log-probabilities (and their gradient, once per target step of
    # a backward): as many points and steps a pass as MAX_BYTES allows (a big vocabulary: fewer)
    rows = max(1, MAX_BYTES // (4 * T * forced.model.cfg.tgt_vocab_size))  # [T, V] blocks a pass may hold
    total = torch.zeros(T, *x.shape, dtype=x.dtype, device=x.device)  # [T, S, E]
    for part in torch.arange(steps).split(max(1, min(steps, rows // 2))):
        path = points[part].requires_grad_()  # [m, S, E]
        f = forced.log_probs(path)  # [m, T]
        for chunk in _step_chunks(T, len(part), max(1, rows // len(part))):
            seeds = f.new_zeros(len(chunk), len(part), T)  # [k, m, T]: one backward per chunk row
            seeds[torch.arange(len(chunk)), :, chunk] = w[part.to(w.device)]
            (g,) = torch.autograd.grad(f, path, grad_outputs=seeds, is_grads_batched=True, retain_graph=True)
            total[chunk.to(total.device)] += g.sum(1)  # [k, S, E] = sum_i w_i df_t/dx (path_i)
        del f, path
    values = (total * (x - b)).sum(-1)  # [T, S]
    with torch.no_grad():
        ends = forced.log_probs(torch.stack([x, b]))  # [2, T]: f(x), f(b)
    return _numpy(values), _numpy(values.sum(1) - (ends[0] - ends[1]))


def gradient_x_input(forced: Forced, x: Tensor) -> np.ndarray:
    """``[T, S]`` gradient × input (Captum's); one forward and backward of ``T`` rows."""
    from captum.attr import InputXGradient  # imported here: captum takes seconds to import

    gxi = InputXGradient(forced.log_prob_at)
    values = []
    for chunk in _step_chunks(forced.tgt_out.size(1), 1):
        rows = x.expand(len(chunk), -1, -1).clone().requires_grad_()  # [k, S, E] one per target step
        attr = gxi.attribute(rows, additional_forward_args=(chunk.to(x.device),))
        values.append(attr.sum(-1))  # [k, S]
    return _numpy(torch.cat(values))


@torch.no_grad()
def occlusion(forced: Forced, x: Tensor, b: Tensor) -> np.ndarray:
    """``[T, S]``: ``f_t(x) - f_t(x with x_s := b_s)``, one row per occluded token, no gradients."""
    S = x.size(0)
    occluded = x.expand(S, -1, -1).clone()  # [S, S, E] row s has token s replaced
    occluded[torch.arange(S), torch.arange(S)] = b
    full = forced.log_probs(x.unsqueeze(0))  # [1, T]
    rows = [forced.log_probs(part) for part in occluded.split(max(1, MAX_ROWS // forced.tgt_out.size(1)))]
    return _numpy((full - torch.cat(rows)).T)  # [T, S]


def _numpy(t: Tensor) -> np.ndarray:
    return t.detach().float().cpu().numpy()


def _check(method: str, steps: int, baseline: str) -> None:
    if method not in METHODS:
        raise InputError(f"unknown attribution method {method!r}; choose one of {', '.join(METHODS)}")
    if baseline not in BASELINES:
        raise InputError(f"unknown baseline {baseline!r}; choose one of {', '.join(BASELINES)}")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise InputError(f"steps must be a whole number between 1 and {MAX_STEPS}, got {steps!r}")
    if method == "gxi" and baseline != "zeros":
        raise InputError(
            "gradient × input has no baseline (x · ∂f/∂x compares with the zero embedding); "
            "use baseline 'zeros', or integrated gradients or occlusion for another baseline"
        )


def _decode(
    translator: Translator, source: str, target: str | None, beam_size: int
) -> tuple[Alignment, list[int], list[int]]:
    """The decode to explain, its source ids and its target ids (ending with <eos> when finished)."""
    src = translator.source(source)
    if len(src.ids) - 1 > MAX_SOURCE_TOKENS:
        raise InputError(
            f"the sentence has {len(src.ids) - 1} tokens; attribution reads at most {MAX_SOURCE_TOKENS} "
            "(its cost grows with source × target length). Shorten it or split it."
        )
    if target is None:
        al = translator.translate(source, beam_size=beam_size)
        return al, src.ids, translator.tgt_vocab.encode(al.target_tokens)
    if beam_size != 1:
        raise InputError(
            "a reference is forced, not searched: give beam_size only to explain the model's own translation"
        )
    if not isinstance(target, str):
        raise InputError(f"the reference must be text, got {type(target).__name__}")
    tokens = translator.tgt_tokenizer.tokenize(target)
    if not tokens:
        raise InputError("the reference is empty; give the translation to explain, or none to explain the model's own")
    if len(tokens) + 1 > MAX_TARGET_TOKENS:
        raise InputError(
            f"the reference has {len(tokens)} tokens; attribution follows at most {MAX_TARGET_TOKENS - 1}. "
            "Shorten it or split it."
        )
    al = translator.align(source, target)
    return al, src.ids, translator.tgt_vocab.encode(tokens, eos=True)


def attribute(
    translator: Translator,
    source: str,
    target: str | None = None,
    method: str = "ig",
    steps: int = 32,
    baseline: str = "zeros",
    beam_size: int = 1,
) -> Attribution:
    """Attribute each target step's chosen-token log-probability to the source tokens.

    ``target=None`` explains the model's translation of ``source`` (greedy, or the best of beam
    search with ``beam_size`` above 1, as :meth:`Translator.translate` gives it); a reference text
    explains forced decoding on it (as :meth:`Translator.align`). ``method`` is ``"ig"`` (integrated
    gradients with ``steps`` quadrature points), ``"gxi"`` (gradient × input) or ``"occlusion"``
    (one source token at a time). ``baseline`` is ``"zeros"``, ``"pad"`` or ``"unk"`` (the
    embedding put in place of the source: see the module docstring). Raises
    :class:`InputError` for unusable text, a source above :data:`MAX_SOURCE_TOKENS` tokens or
    a bad option. The shared model is only read.
    """
    _check(method, steps, baseline)
    al, src_ids, tgt_ids = _decode(translator, source, target, beam_size)
    on_gpu = translator.device.type == "cuda"
    cudnn_off = torch.backends.cudnn.flags(enabled=False) if on_gpu else contextlib.nullcontext()
    # a caller inside inference_mode (a decoding thread) would make the copy's tensors unusable by autograd
    with torch.inference_mode(False), torch.enable_grad(), cudnn_off:  # cuDNN RNNs backprop only in train mode
        forced = Forced.build(translator.model, src_ids, tgt_ids)
        x, b = forced.embeddings(), forced.baseline(baseline)
        delta = None
        if method == "ig":
            values, delta = integrated_gradients(forced, x, b, steps)
        elif method == "gxi":
            values = gradient_x_input(forced, x)
        else:
            values = occlusion(forced, x, b)
        with torch.no_grad():
            log_probs = _numpy(forced.log_probs(x.unsqueeze(0))[0])
    described = BASELINES[baseline]
    if baseline != "zeros" and not b.any():  # <pad>'s row is zero in every model trained with padding_idx
        described += " (all zeros in this model: the same as the zero baseline)"
    return _agreement(method, steps, described, al, values, log_probs, delta)


def _agreement(
    method: str,
    steps: int,
    baseline: str,  # described, as the result says it
    al: Alignment,
    values: np.ndarray,
    log_probs: np.ndarray,
    delta: np.ndarray | None,
) -> Attribution:
    attention = np.asarray(al.weights, dtype=np.float64)  # [T, S]
    first_att, first_attr = attention.argmax(1), values.argmax(1)  # [T] each
    names = {
        "ig": f"integrated gradients ({steps} steps)",
        "gxi": METHODS["gxi"],
        "occlusion": "occlusion (one source token at a time)",
    }
    described = baseline if method != "gxi" else "none (x · ∂f/∂x: the zero embedding implicitly)"
    return Attribution(
        method=method,
        method_name=names[method],
        baseline=described,
        alignment=al,
        values=values,
        log_probs=log_probs,
        delta=delta,
        spearman=np.array([spearman(v, a) for v, a in zip(values, attention, strict=True)]),
        top1=first_att == first_attr,
        attention_top=[al.source_tokens[i] for i in first_att],
        attribution_top=[al.source_tokens[i] for i in first_attr],
        steps=steps if method == "ig" else None,
    )
