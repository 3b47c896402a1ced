"""A trained model with its vocabularies: text in, :class:`Alignment` out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from attnviz.data import EOS, UNK, UNK_ID, Tokenizer, Vocab, copy_source_words, copyable
from attnviz.decoding.beam import Decoded, beam_batch, budget_batches, padded
from attnviz.decoding.history import AlignmentHistory
from attnviz.decoding.search import (
    Hypothesis,
    Overrides,
    beam_search,
    encode_one,
    forced,
    forced_batch,
    greedy,
    greedy_batch,
)
from attnviz.decoding.trace import Alignment
from attnviz.errors import InputError, check_int, check_many
from attnviz.model import ModelConfig, Seq2Seq

MAX_INPUT_CHARS = 2000
MAX_BEAM = 20
MAX_TARGET_TOKENS = 1000  # a forced target
# A batch of batched beam search holds at most this many sentences x beams x longest source
# tokens: on a CPU a batch whose attention fits the caches runs fastest, a GPU wants many rows.
BEAM_TOKENS = {"cpu": 4096, "cuda": 65536}
# Pairs forced together by :meth:`Translator.align_batch`: on a CPU a few dozen rows keep each
# step's attention in the caches, a GPU wants many rows.
FORCED_BATCH = {"cpu": 64, "cuda": 512}


@dataclass
class Source:
    """A tokenized source sentence as the model sees it and as the user typed it."""

    surface: list[str]  # as typed, plus "<eos>"
    ids: list[int]  # vocabulary ids, ending with EOS_ID
    unknown: list[bool]  # True where the token is out of vocabulary


def copy_mask(sources: Sequence[Source], width: int) -> torch.Tensor:
    """``[B, width]``: each sentence's positions an output ``<unk>`` may copy (:func:`~attnviz.data.copyable`;
    ``<eos>`` and padding never)."""
    mask = torch.zeros(len(sources), width, dtype=torch.bool)  # [B, S]
    for row, source in enumerate(sources):
        allowed = copyable(source.surface[:-1])
        mask[row, : len(allowed)] = torch.tensor(allowed, dtype=torch.bool)
    return mask


@dataclass
class Target:
    """A tokenized target sentence to force the decoder through, as the model reads it and as typed."""

    surface: list[str]  # as typed, plus "<eos>"
    ids: list[int]  # vocabulary ids, ending with EOS_ID


@dataclass
class Translator:
    """``Seq2Seq`` + tokenizers + vocabularies + metadata (task, metrics, recipe) and, for a model
    trained with it, the alignment history of its training."""

    model: Seq2Seq
    src_vocab: Vocab
    tgt_vocab: Vocab
    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer
    meta: dict = field(default_factory=dict)
    history: AlignmentHistory | None = None

    def __post_init__(self) -> None:
        self.model.eval()

    def __repr__(self) -> str:
        # a line a notebook can show: the module, its metadata and its history are read as attributes
        cfg = self.config
        name = self.meta.get("name") or (self.meta.get("recipe_full") or {}).get("name") or self.meta.get("task")
        params = sum(p.numel() for p in self.model.parameters())
        return (
            f"Translator({name!r}, {cfg.score}/{cfg.style}, vocab {len(self.src_vocab.itos)}->"
            f"{len(self.tgt_vocab.itos)}, {params:,} parameters, {self.device})"
        )

    @property
    def config(self) -> ModelConfig:
        return self.model.cfg

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def max_source_tokens(self) -> int:
        return self.config.max_src_len - 1  # room for <eos>

    def source(self, text: str | Sequence[str]) -> Source:
        """Tokenize and check a source sentence; raise :class:`InputError` if unusable.

        ``text`` is typed text, cut by the model's tokenizer, or a sentence given as words (a list:
        pre-tokenized text), each word cut on its own (:meth:`Tokenizer.cut_words`)."""
        surface, normal = self._cut(self.src_tokenizer, text, "source")  # vocabulary forms: subword pieces with bpe
        if not surface:
            raise InputError("the text is empty; type a sentence to translate")
        if len(surface) > self.max_source_tokens:
            raise InputError(
                f"the sentence has {len(surface)} tokens; this model reads at most {self.max_source_tokens}. "
                "Shorten it or split it."
            )
        ids = self.src_vocab.encode(normal, eos=True)
        unknown = [t not in self.src_vocab for t in normal] + [False]
        return Source([*surface, EOS], ids, unknown)

    def target(self, text: str | Sequence[str]) -> Target:
        """Tokenize and check a target to force (:meth:`align`); raise :class:`InputError` if unusable.
        ``text`` is typed text or given words, as in :meth:`source`."""
        surface, normal = self._cut(self.tgt_tokenizer, text, "target")
        if not normal:
            raise InputError("the target is empty; give the translation to align")
        if len(normal) > MAX_TARGET_TOKENS:
            raise InputError(f"the target has {len(normal)} tokens; the limit is {MAX_TARGET_TOKENS}")
        return Target([*surface, EOS], self.tgt_vocab.encode(normal, eos=True))

    @staticmethod
    def _cut(tokenizer: Tokenizer, text: str | Sequence[str], side: str) -> tuple[list[str], list[str]]:
        """Surface tokens and vocabulary forms of typed text or of given words, within the length limit."""
        if not isinstance(text, str):
            if not (isinstance(text, Sequence) and all(isinstance(w, str) for w in text)):
                raise InputError(f"the {side} must be text or a list of words, got {type(text).__name__}")
            blank = next((k for k, w in enumerate(text, start=1) if not w or w.isspace()), None)
            if blank is not None:
                raise InputError(f"the {side}'s word {blank} is empty or blank; give each word as non-empty text")
            spaced = next((k for k, w in enumerate(text, start=1) if any(c.isspace() for c in w)), None)
            if spaced is not None:
                raise InputError(
                    f"the {side}'s word {spaced} holds a space; give the sentence as text, or as a list of its "
                    "words (text.split())"
                )
        chars = len(text) if isinstance(text, str) else sum(map(len, text)) + len(text) - 1
        if chars > MAX_INPUT_CHARS:
            raise InputError(
                f"the {side} is {chars:,} characters long; the limit is {MAX_INPUT_CHARS:,}. "
                "Give one sentence at a time."
            )
        return tokenizer.cut(text) if isinstance(text, str) else tokenizer.cut_words(text)

    def unknown_words(self, words: Sequence[str], side: str = "source") -> list[bool]:
        """For each given word, whether the model reads ``<unk>`` somewhere in it (``side``: ``"source"``
        or ``"target"``, whose tokenizer and vocabulary are used)."""
        tokenizer, vocab = (
            (self.src_tokenizer, self.src_vocab) if side == "source" else (self.tgt_tokenizer, self.tgt_vocab)
        )
        return [any(t not in vocab for t in tokenizer.cut_words([w])[1]) for w in words]

    def default_max_len(self, n_source: int) -> int:
        return min(2 * n_source + 10, 4 * self.config.max_src_len)

    def translate(
        self,
        text: str,
        beam_size: int = 1,
        max_len: int | None = None,
        n_best: int | None = None,
        overrides: Overrides | None = None,
    ) -> Alignment:
        """Decode ``text``; the result carries the full trace, and the n-best list for beams.

        ``n_best`` (a beam only; default: the beam's width) is how many hypotheses ``hypotheses`` keeps,
        best first. ``overrides`` (greedy only) maps a decoder step to the attention weights over the
        source tokens (``<eos>`` included) to force at that step; the rest is re-decoded.
        """
        check_int(beam_size, "beam size", 1, MAX_BEAM)
        if n_best is not None:
            if beam_size == 1:
                raise InputError("n_best lists a beam's hypotheses; give beam_size=2 or more (greedy keeps one)")
            check_int(n_best, "n_best (at most the beam size)", 1, beam_size)
        src = self.source(text)
        max_len = self.default_max_len(len(src.ids)) if max_len is None else max_len
        check_int(max_len, "max_len", 1, 1000)
        if overrides:
            self._check_overrides(overrides, len(src.ids), beam_size, max_len)
        if beam_size == 1:
            hyps = [greedy(self.model, src.ids, max_len, overrides)]
        else:
            hyps = beam_search(self.model, src.ids, beam_size, max_len, n_best=n_best or beam_size)
        enc_attn = self._encoder_attention(src.ids)
        alignments = [self._alignment(src, h, enc_attn) for h in hyps]
        best = alignments[0]
        best.hypotheses = alignments if beam_size > 1 else []
        return best

    @staticmethod
    def _check_overrides(overrides: Overrides, n_source: int, beam_size: int, max_len: int) -> None:
        if beam_size != 1:
            raise InputError("forcing attention works with greedy decoding; set the beam size to 1")
        for step, weights in overrides.items():
            if isinstance(step, bool) or not isinstance(step, int | np.integer) or not 0 <= step < max_len:
                raise InputError(
                    f"an override's step is {step!r}; give a decoder step, a whole number from 0 to {max_len - 1} "
                    "(int keys: a dict read from JSON has strings)"
                )
            values = np.asarray(weights, dtype=np.float64)
            if values.shape != (n_source,):
                raise InputError(f"step {step}: give {n_source} weights (one per source token and <eos>)")
            if not np.all(np.isfinite(values)) or values.min() < 0 or values.sum() <= 0:
                raise InputError(f"step {step}: weights must be non-negative numbers with a positive sum")

    def align(self, source: str | Sequence[str], target: str | Sequence[str]) -> Alignment:
        """Force the decoder through ``target`` and return what it attends to at each step.

        Each side is typed text or a list of given words (pre-tokenized text: every word is cut on
        its own and its tokens join back into it, see :meth:`Tokenizer.cut_words`)."""
        src, tgt = self.source(source), self.target(target)
        hyp = forced(self.model, src.ids, tgt.ids)
        al = self._alignment(src, hyp, self._encoder_attention(src.ids))
        al.target_tokens = list(tgt.surface)  # show what the user typed
        return al

    def align_batch(
        self,
        sources: Sequence[str | Sequence[str] | Source],
        targets: Sequence[str | Sequence[str] | Target],
        batch_size: int | None = None,
        log_probs: bool = True,
    ) -> list[Alignment]:
        """:meth:`align` for many pairs, forced in batches: each pair's :class:`Alignment` is the one
        :meth:`align` gives it (to float rounding), in the order given. ``log_probs=False`` skips
        the output layer, for readers of the attention alone: each alignment's ``token_log_probs``
        is then None and its ``log_prob`` NaN.

        Each side is typed text, given words, or already a :meth:`source` / :meth:`target` result.
        Pairs of similar length are forced together (longest targets first), ``batch_size`` at a
        time (by default :data:`FORCED_BATCH` for the device). A pair the model cannot read raises
        :class:`InputError` naming it; to skip such pairs, check each with :meth:`source` and
        :meth:`target` first and pass the results."""
        check_many(sources, "source sentences", "align")
        check_many(targets, "target sentences", "align")
        if len(sources) != len(targets):
            raise InputError(f"{len(sources)} sources but {len(targets)} targets; give one target per source")
        size = FORCED_BATCH.get(self.device.type, FORCED_BATCH["cuda"]) if batch_size is None else batch_size
        if size < 1:
            raise InputError(f"batch_size must be at least 1, got {size}")
        pairs = [self._forced_pair(k, s, t) for k, (s, t) in enumerate(zip(sources, targets, strict=True))]
        order = sorted(range(len(pairs)), key=lambda k: (-len(pairs[k][1].ids), -len(pairs[k][0].ids)))
        results: dict[int, Alignment] = {}  # pair index -> its alignment
        for start in range(0, len(order), size):
            batch = order[start : start + size]
            src, lengths = padded([pairs[k][0].ids for k in batch], self.device)  # [B, S], [B]
            hyps, maps = forced_batch(self.model, src, lengths, [pairs[k][1].ids for k in batch], log_probs)
            for j, (k, hyp) in enumerate(zip(batch, hyps, strict=True)):
                source, target = pairs[k]
                al = self._alignment(source, hyp, None if maps is None else maps[j])
                al.target_tokens = list(target.surface)  # show what the user typed
                results[k] = al
        return [results[k] for k in range(len(pairs))]

    def _forced_pair(
        self, k: int, source: str | Sequence[str] | Source, target: str | Sequence[str] | Target
    ) -> tuple[Source, Target]:
        """Pair ``k`` (0-based) checked for :meth:`align_batch`; its errors name it (1-based)."""
        try:
            return (
                source if isinstance(source, Source) else self.source(source),
                target if isinstance(target, Target) else self.target(target),
            )
        except InputError as e:
            raise InputError(f"pair {k + 1}: {e}") from e

    def translate_batch(
        self,
        texts: list[str] | list[Source],
        batch_size: int = 64,
        replace_unk: bool = True,
        beam_size: int = 1,
        max_len: int | None = None,
        max_tokens: int | None = None,
    ) -> list[str]:
        """Translations of many sentences (no trace): for evaluation and files. ``texts`` may be
        :meth:`source` results already. With ``replace_unk`` each ``<unk>`` becomes the source word
        attended to most, as in :meth:`text_of`.

        ``beam_size`` 1 is greedy search in batches of ``batch_size`` sentences, in order. Above 1
        it is batched beam search (:func:`~attnviz.decoding.beam.beam_batch`). Either way each
        sentence gets the translation :meth:`translate` gives it, decoding up to ``max_len`` steps
        or its own :meth:`default_max_len`, whatever shares its batch. Sentences of similar length
        decode together, a batch holding at most ``max_tokens`` sentences x beams x source tokens
        (one sentence at least; by default :data:`BEAM_TOKENS` for the device)."""
        check_int(beam_size, "beam size", 1, MAX_BEAM)
        check_many(texts, "sentences", "translate")
        sources = [t if isinstance(t, Source) else self.source(t) for t in texts]
        if beam_size == 1:
            return [
                text
                for i in range(0, len(sources), batch_size)
                for text in self._greedy_texts(sources[i : i + batch_size], replace_unk, max_len)
            ]
        budget = max_tokens or BEAM_TOKENS.get(self.device.type, BEAM_TOKENS["cuda"])
        results = [""] * len(sources)
        for batch in budget_batches([len(s.ids) for s in sources], beam_size, budget):
            chosen = [sources[i] for i in batch]
            src, lengths = padded([s.ids for s in chosen], self.device)  # [N, S], [N]
            limits = [max_len or self.default_max_len(len(s.ids)) for s in chosen]
            decoded = beam_batch(self.model, src, lengths, beam_size, limits, copyable=copy_mask(chosen, src.size(1)))
            for i, source, (best, *_) in zip(batch, chosen, decoded, strict=True):
                results[i] = self._beam_text(source, best, replace_unk)
        return results

    def _greedy_texts(self, sources: list[Source], replace_unk: bool, max_len: int | None) -> list[str]:
        src, lengths = padded([s.ids for s in sources], self.device)  # [B, S], [B]
        limits = [max_len or self.default_max_len(len(s.ids)) for s in sources]  # each its own, as alone
        texts = []
        decoded = greedy_batch(self.model, src, lengths, limits, copy_mask(sources, src.size(1)))
        for source, (ids, attended) in zip(sources, decoded, strict=True):
            tokens = self.tgt_vocab.decode(ids, strip=False)  # as text_of: every token written, <eos> cut
            if replace_unk:
                copies = {t: s for t, (i, s) in enumerate(zip(ids, attended, strict=True)) if i == UNK_ID}
                tokens = copy_source_words(tokens, copies, source.surface)
            texts.append(self.detokenize(tokens))
        return texts

    def _beam_text(self, source: Source, hyp: Decoded, replace_unk: bool) -> str:
        """What :meth:`text_of` gives for the same hypothesis decoded with its trace."""
        tokens = self.tgt_vocab.decode(hyp.tokens, strip=False)
        if tokens[-1:] == [EOS]:
            tokens = tokens[:-1]
        if replace_unk:
            copies = {t: hyp.attended[t] for t, tok in enumerate(tokens) if tok == UNK}
            tokens = copy_source_words(tokens, copies, source.surface)
        return self.detokenize(tokens)

    def detokenize(self, tokens: list[str]) -> str:
        return self.tgt_tokenizer.detokenize(tokens)

    @torch.inference_mode()
    def annotations(self, text: str) -> np.ndarray:
        """The encoder annotations ``h_s`` ``[S, K]`` that the context vectors average (``<eos>`` included)."""
        return encode_one(self.model, self.source(text).ids).memory.values[0].float().cpu().numpy()

    @torch.inference_mode()
    def _encoder_attention(self, src_ids: list[int]) -> np.ndarray | None:
        if self.config.encoder != "transformer":
            return None
        maps = encode_one(self.model, src_ids).encoder.self_attention  # [1, layers, heads, S, S]
        return maps[0].float().cpu().numpy()

    def _alignment(self, src: Source, hyp: Hypothesis, enc_attn: np.ndarray | None) -> Alignment:
        return Alignment(
            source_tokens=list(src.surface),
            target_tokens=self.tgt_vocab.decode(hyp.tokens, strip=False),
            weights=hyp.weights,
            scores=hyp.scores,
            contexts=hyp.contexts,
            states=hyp.queries,
            source_unknown=list(src.unknown),
            score=self.config.score,
            style=self.config.style,
            log_prob=hyp.log_prob,
            token_log_probs=hyp.token_log_probs,
            positions=hyp.positions,
            window=self.config.window if self.model.decoder.attention.is_local else None,
            encoder_attention=enc_attn,
        )

    def text_of(self, al: Alignment, replace_unk: bool = True) -> str:
        """The translation as text (detokenized, without <eos>); with ``replace_unk`` each
        ``<unk>`` is replaced by the source word it attends to most (``Alignment.unk_copies``)."""
        return self.detokenize(al.display_tokens(replace_unk))
