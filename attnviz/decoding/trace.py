"""The alignment trace of one decode: everything the app and the CLI show about attention."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attnviz.data import EOS, MARK, UNK, Link, copy_source_words, copyable, join_pieces, to_pharaoh, word_spans
from attnviz.errors import InputError


def argmax_links(weights: np.ndarray, every_row: bool = False) -> set[Link]:
    """Each target row linked to its highest-weight source column, as ``(source_index, target_index)``
    links; ties go to the first column. A row whose largest weight is not positive (all of it was on
    a hidden ``<eos>``) gets no link unless ``every_row``."""
    w = np.asarray(weights)  # [tgt, src]
    return {(int(np.argmax(row)), t) for t, row in enumerate(w) if every_row or (row.size and row.max() > 0)}


@dataclass(eq=False, repr=False)
class Alignment:
    """What the decoder attended to while producing (or being forced through) a target.

    Rows are target steps, columns source positions. The source side ends with ``<eos>``
    (the encoder sees it, so attention may land there); the target side ends with ``<eos>``
    when the decoder emitted it.
    """

    source_tokens: list[str]  # surface forms as typed, plus "<eos>"
    target_tokens: list[str]  # one per decoder step
    weights: np.ndarray  # [tgt, src] softmax attention (rows sum to 1; local-p's Gaussian leaves them below)
    scores: np.ndarray  # [tgt, src] raw energies before softmax (-inf outside a local window)
    contexts: np.ndarray  # [tgt, ctx_dim] context vectors c_t
    states: np.ndarray  # [tgt, hidden] the decoder state that queried the attention
    source_unknown: list[bool]  # True where the source token is outside the vocabulary
    score: str  # score function name, e.g. "additive"
    style: str  # decoder style: "bahdanau" or "luong"
    log_prob: float = 0.0  # sum of the target tokens' log-probabilities
    token_log_probs: np.ndarray | None = None  # [tgt]
    positions: np.ndarray | None = None  # [tgt] p_t of local-m / local-p attention
    window: int | None = None  # half-width D of local attention
    encoder_attention: np.ndarray | None = None  # [layers, heads, src, src] Transformer encoder
    hypotheses: list[Alignment] = field(default_factory=list)  # n-best (beam search), best first

    @property
    def source_text_tokens(self) -> list[str]:
        """Source tokens without the final ``<eos>``."""
        return self.source_tokens[:-1] if self.source_tokens[-1:] == [EOS] else self.source_tokens

    @property
    def output_tokens(self) -> list[str]:
        """Target tokens without the final ``<eos>``."""
        return self.target_tokens[:-1] if self.target_tokens[-1:] == [EOS] else self.target_tokens

    @property
    def ranking_score(self) -> float:
        """What beam search ranks finished hypotheses by: log p over the number of target tokens,
        ``<eos>`` counted (length normalisation, alpha 1)."""
        return float(self.log_prob) / max(len(self.target_tokens), 1)

    def unk_copies(self) -> dict[int, int]:
        """For each output ``<unk>``, the source position it copies: of the source tokens an ``<unk>``
        may copy (:func:`~attnviz.data.copyable`: a word, not punctuation), the one with the largest
        attention weight at that step (Luong et al., 2015b; Jean et al., 2015). Maps target index ->
        source index."""
        n_src = len(self.source_text_tokens)
        if not n_src:
            return {}
        allowed = np.array(copyable(self.source_text_tokens))  # [src - 1]
        return {
            t: int(np.argmax(np.where(allowed, self.weights[t, :n_src], -1.0)))
            for t, tok in enumerate(self.output_tokens)
            if tok == UNK
        }

    def display_tokens(self, replace_unk: bool = True) -> list[str]:
        """Output tokens, each ``<unk>`` replaced by the source word it attends to most (see
        :meth:`unk_copies`): the word as the user typed it, which is right for names and numbers.
        A subword source gives whole words (consecutive ``<unk>`` steps on one word give it once),
        so the list can be shorter than ``output_tokens``."""
        if not replace_unk:
            return list(self.output_tokens)
        return copy_source_words(list(self.output_tokens), self.unk_copies(), list(self.source_tokens))

    def source_word(self, s: int) -> str:
        """The whole source word that position ``s`` belongs to (its pieces joined)."""
        start, end = word_spans(list(self.source_tokens))[s]
        return "".join(join_pieces(self.source_tokens[start:end]))

    def unknown_words(self) -> list[tuple[str, str]]:
        """Each source token read as ``<unk>``, once, as ``(what is unknown, the word it is in)``: a
        whole word twice, a subword piece without its ``@@`` beside the word it cuts (``("q", "Zxqwv")``),
        so a user sees which word of theirs holds it."""
        unknown = {}
        for s, (tok, unk) in enumerate(zip(self.source_tokens, self.source_unknown, strict=False)):
            if unk:
                piece = tok[: -len(MARK)] if tok.endswith(MARK) and len(tok) > len(MARK) else tok
                unknown.setdefault((piece, self.source_word(s)), None)
        return list(unknown)

    def matrix(self, values: str = "weights") -> np.ndarray:
        """``[tgt, src]`` weights or raw scores (``values``) as floats, NaN where a score is -inf
        (outside a local window): what a heatmap draws and a CSV holds."""
        if values not in ("weights", "scores"):
            raise InputError(f"values must be 'weights' or 'scores', got {values!r}")
        z = np.asarray(self.weights if values == "weights" else self.scores, dtype=np.float64)  # [tgt, src]
        return np.where(np.isfinite(z), z, np.nan)

    def hard_links(self) -> list[Link]:
        """Each target step linked to its argmax source position (:func:`argmax_links`, every step
        linked): ``(source_index, target_index)`` in step order."""
        return sorted(argmax_links(self.weights, every_row=True), key=lambda link: link[1])

    def to_pharaoh(self) -> str:
        """The argmax alignment in Pharaoh ``i-j`` format (source index - target index)."""
        return to_pharaoh(self.hard_links())

    def coverage(self) -> np.ndarray:
        """Total attention each source position received over all steps: ``[src]``. About 1 for a
        word translated once; near 0 for one never attended (possibly dropped, under-translation);
        well above 1 for one attended again and again (possibly repeated). Tu et al. (2016)."""
        return np.asarray(self.weights, dtype=np.float64).sum(axis=0)

    def entropy(self) -> np.ndarray:
        """Per-step attention entropy in nats: ``[tgt]``."""
        w = np.clip(self.weights, 1e-12, 1.0)
        return -(self.weights * np.log(w)).sum(axis=1)

    def __repr__(self) -> str:
        # a line a notebook can show: the arrays (and the n-best list that repeats them) are read as attributes
        text = " ".join(self.output_tokens)
        text = text if len(text) <= 60 else text[:57] + "..."
        beam = f", {len(self.hypotheses)} hypotheses" if self.hypotheses else ""
        return (
            f"Alignment({self.score}/{self.style}, {len(self.target_tokens)} target x {len(self.source_tokens)} "
            f"source tokens, {text!r}, log_prob={self.log_prob:.3f}{beam})"
        )

    def __eq__(self, other: object) -> bool:
        """Same tokens, choices and arrays (``np.array_equal``, NaN equal to NaN)."""
        if not isinstance(other, Alignment):
            return NotImplemented
        if other is self:
            return True
        for f in self.__dataclass_fields__:
            a, b = getattr(self, f), getattr(other, f)
            if f == "hypotheses":
                if len(a) != len(b) or any(
                    not (x is self and y is other) and x != y for x, y in zip(a, b, strict=True)
                ):
                    return False
            elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                if a is None or b is None or not np.array_equal(a, b, equal_nan=True):
                    return False
            elif a != b:
                return False
        return True

    __hash__ = None  # mutable arrays: not hashable

    def to_dict(self, nbest: bool = True) -> dict:
        """A JSON-ready dict (lists, no arrays; -inf scores become None)."""

        def arr(a: np.ndarray | None, weights: bool = False) -> list | None:
            if a is None:
                return None
            a = np.asarray(a, dtype=np.float64)
            if not a.size:
                return a.tolist()
            return (significant(a) if weights else np.where(np.isfinite(a), a, np.nan).round(6)).tolist()

        d = {
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
            "source_unknown": self.source_unknown,
            "score": self.score,
            "style": self.style,
            "log_prob": float(self.log_prob),
            "weights": arr(self.weights, weights=True),
            "scores": arr(self.scores),
            "contexts": arr(self.contexts),
            "states": arr(self.states),
            "positions": arr(self.positions),
            "window": self.window,
            "encoder_attention": arr(self.encoder_attention, weights=True),
            "coverage": arr(self.coverage()),
            "pharaoh": self.to_pharaoh(),
            "unk_copies": {str(t): s for t, s in self.unk_copies().items()},
        }
        d = {k: _nan_to_none(v) for k, v in d.items()}
        if nbest:
            d["hypotheses"] = [h.to_dict(nbest=False) for h in self.hypotheses]
        return d


def significant(a: np.ndarray, digits: int = 6) -> np.ndarray:
    """``a`` to ``digits`` significant digits (NaN where not finite): a weight of 4e-07 beside one of
    7e-07 keeps its order, which rounding to decimals would lose (argmax after hiding ``<eos>``). Each
    value is the float nearest its decimal form, so JSON writes ``1.87337e-21``, not
    ``1.8733699999999997e-21``."""
    out = np.where(np.isfinite(a), a, np.nan)
    flat = out.reshape(-1)
    flat[:] = [float(f"{v:.{digits}g}") for v in flat.tolist()]
    return out


def _nan_to_none(value: object) -> object:
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    return value
