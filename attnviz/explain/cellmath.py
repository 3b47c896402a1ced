"""The whole arithmetic of one cell ``(t, s)``: every intermediate of the score function with the
model's real numbers, the softmax (window and Gaussian for local attention), the context, the
attentional state and the output distribution at step ``t``.

:func:`cell_numbers` computes a :class:`CellMath` (named steps, each with its LaTeX line and its
value); :func:`latex_lines` is the math panel. Each score writes its own intermediates
(``Score.terms`` in :mod:`attnviz.model.attention`), so a new score needs nothing here. Lines show a
vector as its first entries and its norm; ``to_json``/``to_csv`` keep every entry. The lines'
formatting and the steps from a key to its weight are :mod:`attnviz.explain.steps`, shared with the
Learn page's worked example (:mod:`attnviz.explain.worked`).
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from attnviz.data import BOS_ID, EOS, EOS_ID, Tokenizer
from attnviz.decoding import Alignment, encode_one
from attnviz.errors import InputError
from attnviz.explain.steps import Step, latex_text, num, score_steps, step, weight_steps
from attnviz.model import Attention, DecoderState, other_style
from attnviz.store import csv_text

if TYPE_CHECKING:
    from attnviz.decoding import Translator
    from attnviz.model import Encoded

TOP_WORDS = 5
QUERY = {"bahdanau": r"s_{t-1}", "luong": r"h_t"}


@dataclass(eq=False)  # holds arrays: two are equal when they are the same object
class CellMath:
    """Every number of cell ``(t, s)``: the steps from the query to the weight, then the context,
    the attentional state (Luong) or the next state (Bahdanau), and the top words at step ``t``."""

    t: int
    s: int
    score: str
    style: str
    formula: str  # the score's formula, LaTeX
    source_token: str
    target_token: str
    steps: list[Step]
    top_words: list[tuple[str, float]] = field(default_factory=list)  # most probable first
    token_probability: float = math.nan  # p(y_t = target_token): the step's own token

    def __getitem__(self, label: str) -> Step:
        for s in self.steps:
            if s.label == label:
                return s
        raise KeyError(f"no step {label!r}; the steps are {[s.label for s in self.steps]}")

    def to_dict(self) -> dict:
        """JSON-ready, every vector in full (``-inf`` becomes None)."""

        def plain(v: np.ndarray) -> list[float | None] | float | None:
            out = v.tolist()
            return [x if math.isfinite(x) else None for x in out] if v.ndim else (out if math.isfinite(out) else None)

        return {
            "t": self.t,
            "s": self.s,
            "score": self.score,
            "style": self.style,
            "source_token": self.source_token,
            "target_token": self.target_token,
            "formula": self.formula,
            "steps": [{"label": s.label, "latex": s.latex, "value": plain(s.value)} for s in self.steps],
            "top_words": [[w, p] for w, p in self.top_words],
            "token_probability": self.token_probability,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_csv(self) -> str:
        """One row per number: the cell (``t, s`` and their tokens), the panel's ``line``, its ``label``,
        ``index`` (empty for a scalar), the ``word`` a top probability is of, and ``value``. Labels
        come from the scores' terms, any text a registered score gives: written by
        :func:`attnviz.store.csv_text`, the guard of every CSV against spreadsheet formulas."""
        cell = (self.t, self.s, self.target_token, self.source_token)
        rows = [
            (*cell, line, s.label, j, s.word, float(x))
            for line, s in enumerate(self.steps)
            for j, x in ([(None, s.value)] if s.value.ndim == 0 else enumerate(s.value))
        ]
        columns = ["t", "s", "target_token", "source_token", "line", "label", "index", "word", "value"]
        frame = pd.DataFrame(rows, columns=columns)
        frame["index"] = frame["index"].astype("Int64")  # blank for a scalar, never "0.0"
        return csv_text(frame)


def formula_for(formula: str, style: str) -> str:
    """A score's formula written with the query its decoder style reads. The papers write the
    additive score with Bahdanau's s_{t-1} and the others with Luong's h_t; here every score
    runs in either style, and the panel's lines below the formula use the query actually read."""
    other = QUERY[other_style(style)]
    return formula.replace(other, QUERY[style])


def latex_lines(cell: CellMath) -> list[str]:
    """The math panel: the score's formula, then one line per step."""
    return [cell.formula, *(s.latex for s in cell.steps)]


# -- one cell of a decoded alignment --------------------------------------------------------------


@torch.inference_mode()
def cell_numbers(translator: Translator, al: Alignment, t: int, s: int) -> CellMath:
    """Every intermediate of cell ``(t, s)`` of ``al``, recomputed from ``translator``'s parameters
    (float64) on the states the decode recorded; its ``e`` and ``a`` are ``al.scores[t, s]`` and
    ``al.weights[t, s]``. ``al`` must come from ``translator`` (translate, beam or align)."""
    n_tgt, n_src = np.shape(al.weights)
    if not (0 <= t < n_tgt and 0 <= s < n_src):
        raise InputError(f"cell ({t}, {s}) is outside the alignment: steps 0..{n_tgt - 1}, positions 0..{n_src - 1}")
    cfg, decoder = translator.config, translator.model.decoder
    if (al.score, al.style) != (cfg.score, cfg.style):
        raise InputError(
            f"the alignment comes from a {al.score}/{al.style} model, this one is {cfg.score}/{cfg.style}; "
            "pass the model that decoded it"
        )
    src_ids = translator.src_vocab.encode(translator.src_tokenizer.forms_of(al.source_text_tokens), eos=True)
    if (
        len(src_ids) != n_src
        or _merged(translator.src_tokenizer, al.source_text_tokens)
        or _merged_target(translator, al.output_tokens)
    ):
        raise InputError(
            "this alignment shows subword pieces merged into words (or another model's tokens): a word's cell has "
            "no single score to recompute; turn off merging to see each piece's numbers"
        )
    enc = encode_one(translator.model, src_ids)
    att = copy.deepcopy(decoder.attention).to("cpu", torch.float64)  # the cell's arithmetic in float64
    values = enc.memory.values[0].to("cpu", torch.float64)  # [S, K] the annotations h_s
    memory = att.prepare(values.unsqueeze(0), torch.ones(1, n_src, dtype=torch.bool))
    query = torch.as_tensor(al.states[t], dtype=torch.float64)  # [Q] s_{t-1} or h_t
    out = att(query.view(1, 1, -1), memory, torch.tensor([t]))
    scores, weights = out.scores[0, 0], out.weights[0, 0]  # [S] each
    _check_same_decode(al, t, scores.numpy())
    position = None if out.positions is None else float(out.positions[0, 0])
    q = QUERY[al.style]

    steps = [step("query", q, query)]
    steps += score_steps(att, query, values, t, s, q, scores, position)
    steps += weight_steps(att, scores, t, s, position)
    recorded = np.asarray(al.weights[t], dtype=np.float64)  # [S]
    forced = not np.allclose(recorded, weights.numpy(), atol=1e-5)  # what-if: the user set this row
    if forced:
        weights = torch.as_tensor(recorded)
        steps.append(step("a (forced)", rf"a_{{{t},{s}}}\ \text{{(forced by what-if)}}", recorded[s]))
    context = weights @ values  # [S] x [S, K] -> [K] c_t
    steps += _context_steps(att, weights, values, context, t, s)
    target_ids = _target_ids(translator, al)  # [T] the step's tokens as the model read them
    if al.style == "luong":
        output, logits = _luong_output(translator, context, query)
    else:
        output, logits = _bahdanau_output(translator, al, enc, t, None if not forced else weights, target_ids)
    top, words, p_token = _top_words(translator, t, logits, target_ids)
    return CellMath(
        t=t,
        s=s,
        score=al.score,
        style=al.style,
        formula=formula_for(type(att.score).formula, al.style),
        source_token=al.source_tokens[s],
        target_token=al.target_tokens[t],
        steps=steps + output + top,
        top_words=words,
        token_probability=p_token,
    )


def _merged_target(translator: Translator, tokens: list[str]) -> bool:
    """Whether output ``tokens`` were merged for display: not the tokenizer's own cut of their words and
    not every one a target vocabulary entry either (a decode may segment a word its own way, as
    ``g@@ er`` where the tokenizer cuts ``ger``; each of its pieces is still a token the model emitted)."""
    if not _merged(translator.tgt_tokenizer, tokens):
        return False
    return any(t not in translator.tgt_vocab for t in translator.tgt_tokenizer.forms_of(tokens))


def _merged(tokenizer: Tokenizer, tokens: list[str]) -> bool:
    """Whether ``tokens`` are not the pieces ``tokenizer`` cuts their words into (they were merged for display)."""
    return tokenizer.bpe is not None and bool(tokens) and tokenizer.recut(tokens) is None


def _check_same_decode(al: Alignment, t: int, scores: np.ndarray) -> None:
    recorded = np.asarray(al.scores[t], dtype=np.float64)
    finite = np.isfinite(recorded)
    if not (np.array_equal(finite, np.isfinite(scores)) and np.allclose(recorded[finite], scores[finite], 1e-3, 1e-3)):
        raise InputError(
            f"step {t}: this model's scores differ from the alignment's; the alignment was decoded by another "
            "model (or another source sentence). Pass the model that decoded it."
        )


def _context_steps(att: Attention, weights: Tensor, values: Tensor, context: Tensor, t: int, s: int) -> list[Step]:
    """``a_{t,s} h_s``, ``c_t`` and the share of ``c_t`` along that term. weights ``[S]``, values ``[S, K]``."""
    h = "h"  # the context averages whole annotations h_s (a score may read them as \bar h_s)
    part = weights[s] * values[s]  # [K]
    share = float(part @ context / (context @ context)) if context @ context > 0 else 0.0
    return [
        step("a * annotation", rf"a_{{{t},{s}}} {h}_{{{s}}}", part),
        step("context", rf"c_{{{t}}} = \sum_{{s'}} a_{{{t},s'}} {h}_{{s'}}", context),
        step(
            "share of c_t",
            rf"\frac{{a_{{{t},{s}}} {h}_{{{s}}} \cdot c_{{{t}}}}}{{\lVert c_{{{t}}} \rVert^2}}",
            share,
            rf"{share * 100:.1f}\% \text{{ of }} c_{{{t}}} \text{{ (other terms may cancel)}}",
        ),
    ]


def _luong_output(translator: Translator, context: Tensor, query: Tensor) -> tuple[list[Step], Tensor]:
    """The attentional state ``h~_t = tanh(W_c [c_t; h_t] (+ b_c))`` and the logits the output layer reads
    from it (``b_c``: models with ``attentional_bias``, JoeyNMT's)."""
    decoder = translator.model.decoder
    W_c = decoder.W_c.weight.detach().to("cpu", torch.float64)  # [H, K + H]
    mixed = W_c @ torch.cat([context, query])  # [H]
    bias = "" if decoder.W_c.bias is None else " + b_c"
    if bias:
        mixed = mixed + decoder.W_c.bias.detach().to("cpu", torch.float64)
    h_tilde = torch.tanh(mixed)
    logits = decoder.generate(h_tilde.to(translator.device, torch.float32))  # [V]
    return [
        step(f"W_c [c_t; h_t]{bias}", rf"W_c [c_t; h_t]{bias}", mixed),
        step("attentional state", rf"\tilde h_t = \tanh(W_c [c_t; h_t]{bias})", h_tilde),
    ], logits


def _bahdanau_output(
    translator: Translator, al: Alignment, enc: Encoded, t: int, forced: Tensor | None, target_ids: list[int]
) -> tuple[list[Step], Tensor]:
    """The RNN step ``s_t = RNN(s_{t-1}, [E y_{t-1}; c_t])`` and the logits of ``[s_t; c_t; E y_{t-1}]``,
    by the decoder's own step from the state before ``t``."""
    decoder, cfg = translator.model.decoder, translator.config
    previous = target_ids[t - 1] if t else BOS_ID
    state = _state_before(translator, al, enc, t, target_ids)
    override = None if forced is None else forced.to(translator.device, torch.float32).unsqueeze(0)  # [1, S]
    out, after = decoder.step(torch.tensor([previous], device=translator.device), state, enc.memory, t, override)
    word = translator.tgt_vocab.itos[previous]
    rnn = cfg.cell.upper()
    return [
        step("previous token", r"y_{t-1}", previous, latex_text(word)),
        step("s_t", rf"s_t = \mathrm{{{rnn}}}(s_{{t-1}}, [E y_{{t-1}}; c_t])", _top(after.hidden)[0]),
    ], out.logits[0, 0]


def _state_before(translator: Translator, al: Alignment, enc: Encoded, t: int, target_ids: list[int]) -> DecoderState:
    """The decoder's whole state before step ``t``. One GRU layer: that is ``s_{t-1}``, recorded;
    otherwise (LSTM cell, stacked layers) the target prefix is decoded again."""
    cfg, decoder, device = translator.config, translator.model.decoder, translator.device
    if cfg.cell == "gru" and cfg.dec_layers == 1:
        return DecoderState(torch.as_tensor(al.states[t], device=device).view(1, 1, -1))  # [1, 1, H]
    state = enc.state
    for i in range(t):
        y = target_ids[i - 1] if i else BOS_ID
        _, state = decoder.step(torch.tensor([y], device=device), state, enc.memory, i)
    if not np.allclose(_top(state.hidden)[0].float().cpu().numpy(), al.states[t], atol=1e-4):
        raise InputError(
            f"step {t}: decoding the target again does not reach the recorded state (was attention forced at an "
            "earlier step?); the output distribution needs the decode without forced attention"
        )
    return state


def _top(hidden: Tensor | tuple[Tensor, Tensor]) -> Tensor:
    h = hidden[0] if isinstance(hidden, tuple) else hidden  # GRU h or LSTM (h, c): [layers, B, H]
    return h[-1].detach().to("cpu", torch.float64)  # [B, H]


def _target_ids(translator: Translator, al: Alignment) -> list[int]:
    """The vocabulary id of each target step's token (``<eos>`` included)."""
    eos = [EOS_ID] if al.target_tokens[-1:] == [EOS] else []
    return translator.tgt_vocab.encode(translator.tgt_tokenizer.forms_of(al.output_tokens)) + eos


def _top_words(translator: Translator, t: int, logits: Tensor, target_ids: list[int]) -> tuple[list[Step], list, float]:
    """The most probable words of ``p(y_t | ...)``, then the step's own token if it is not among them."""
    probs = torch.softmax(logits.detach().to("cpu", torch.float64), dim=-1)  # [V]
    chosen = target_ids[t]
    values, ids = probs.topk(min(TOP_WORDS, probs.numel()))
    itos = translator.tgt_vocab.itos
    mark = rf" \quad \leftarrow y_{{{t}}}"
    steps = [
        step(f"top {k}", rf"p(y_{{{t}}} = {latex_text(itos[i])})", p, num(p) + (mark if i == chosen else ""), itos[i])
        for k, (p, i) in enumerate(zip(values.tolist(), ids.tolist(), strict=True), start=1)
    ]
    if chosen not in ids.tolist():
        steps.append(
            step(
                "p(y_t)",
                rf"p(y_{{{t}}} = {latex_text(itos[chosen])})",
                probs[chosen],
                num(float(probs[chosen])) + mark,
                itos[chosen],
            )
        )
    words = [(itos[i], float(p)) for p, i in zip(values.tolist(), ids.tolist(), strict=True)]
    return steps, words, float(probs[chosen])
