"""Greedy, beam and forced decoding that record the full attention trace of every step."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor

from attnviz.data import BOS_ID, EOS_ID
from attnviz.decoding.beam import overflow_error, padded
from attnviz.model import Encoded, Memory, Seq2Seq, StepOutput

# what-if: a decoder step and the attention weights [S] forced at it
Overrides = Mapping[int, Sequence[float] | np.ndarray]


@dataclass
class Hypothesis:
    """One decoded target with its per-step trace (numpy, batch dimension dropped)."""

    tokens: list[int]  # target ids, ending with EOS_ID when finished
    token_log_probs: np.ndarray | None  # [T]; None where a forced pass left the output layer out
    weights: np.ndarray  # [T, S]
    scores: np.ndarray  # [T, S]
    contexts: np.ndarray  # [T, K]
    queries: np.ndarray  # [T, Q]
    positions: np.ndarray | None  # [T]

    @property
    def log_prob(self) -> float:
        """The sum of the tokens' log-probabilities; NaN for a pass that left the output layer out."""
        return float("nan") if self.token_log_probs is None else float(self.token_log_probs.sum())

    @property
    def finished(self) -> bool:
        return bool(self.tokens) and self.tokens[-1] == EOS_ID


def _numpy(x: Tensor) -> np.ndarray:
    return x.detach().float().cpu().numpy()


def _hypothesis(tokens: list[int], log_probs: list[Tensor], steps: list[StepOutput], row: list[int]) -> Hypothesis:
    """Gather row ``row[t]`` of each step's batch into one hypothesis."""

    def stack(get: Callable[[StepOutput], Tensor]) -> np.ndarray:
        return _numpy(torch.stack([get(s)[r, 0] for s, r in zip(steps, row, strict=True)]))

    positions = None
    if steps and steps[0].attention.positions is not None:
        positions = stack(lambda s: s.attention.positions)
    token_log_probs = _numpy(torch.stack(log_probs)) if log_probs else np.zeros(0)
    weights = stack(lambda s: s.attention.weights)  # [T, S]
    _check_finite(weights, token_log_probs)
    return Hypothesis(
        tokens=tokens,
        token_log_probs=token_log_probs,
        weights=weights,
        scores=stack(lambda s: s.attention.scores),
        contexts=stack(lambda s: s.attention.context),
        queries=stack(lambda s: s.queries),
        positions=positions,
    )


def _check_finite(weights: np.ndarray, log_probs: np.ndarray | None) -> None:
    """Raise :func:`~attnviz.decoding.beam.overflow_error` where ``weights`` or ``log_probs`` hold NaN."""
    if np.isnan(weights).any() or (log_probs is not None and np.isnan(log_probs).any()):
        raise overflow_error()


_NO_LOGITS = torch.empty(0)


def _beams_of(memory: Memory, k: int) -> Memory:
    """One sentence's memory for ``k`` beams: every beam reads the same source, so the rows are
    views of the one row (``expand``), never copies made at every step."""
    values, cache = memory.values, memory.cache  # [1, S, K], [1, S, *]
    return Memory(
        values.expand(k, *values.shape[1:]),  # [k, S, K]
        cache.expand(k, *cache.shape[1:]),  # [k, S, *]
        memory.mask.expand(k, -1),  # [k, S]
        memory.lengths.expand(k),  # [k]
    )


def encode_one(model: Seq2Seq, src_ids: list[int]) -> Encoded:
    device = next(model.parameters()).device
    src = torch.tensor([src_ids], device=device)  # [1, S]
    return model.encode(src, torch.tensor([len(src_ids)], device=device))


@torch.inference_mode()
def greedy(model: Seq2Seq, src_ids: list[int], max_len: int, overrides: Overrides | None = None) -> Hypothesis:
    """Pick the most likely token at each step until <eos> or ``max_len`` steps.

    ``overrides`` maps a step to attention weights ``[S]`` forced at that step (what-if).
    """
    enc = encode_one(model, src_ids)
    state, y = enc.state, torch.tensor([BOS_ID], device=enc.memory.values.device)
    tokens, log_probs, steps = [], [], []
    for t in range(max_len):
        override = None
        if overrides and t in overrides:
            row = torch.as_tensor(overrides[t], dtype=torch.float64)  # [S] as given: 1e39 or 1e-46 fit float64 only
            row = row / row.sum()  # a distribution before float32: no inf, no underflow to an all-zero row
            override = row.to(torch.float32, copy=True).to(y.device).view(1, -1)  # [1, S]
        out, state = model.decoder.step(y, state, enc.memory, t, override)
        logp = torch.log_softmax(out.logits[0, 0].float(), dim=-1)  # [V]
        y = logp.argmax().view(1)
        tokens.append(int(y))
        log_probs.append(logp[y[0]])
        steps.append(out)
        if tokens[-1] == EOS_ID:
            break
    return _hypothesis(tokens, log_probs, steps, [0] * len(steps))


@torch.inference_mode()
def beam_search(
    model: Seq2Seq, src_ids: list[int], beam_size: int, max_len: int, n_best: int = 1, alpha: float = 1.0
) -> list[Hypothesis]:
    """Beam search; returns up to ``n_best`` hypotheses ranked by ``log P / length**alpha``.

    Stops once ``beam_size`` hypotheses have finished, or after ``max_len`` steps (then the
    unfinished beams are ranked too). With ``beam_size=1`` this is exactly greedy search.
    """
    enc = encode_one(model, src_ids)
    device = enc.memory.values.device
    memory, state = enc.memory, enc.state
    y = torch.tensor([BOS_ID], device=device)  # [k] last token of each live beam
    beam_logp = torch.zeros(1, device=device)  # [k]
    # per live beam: (tokens, per-token log-probs, per-step (StepOutput, row) pairs)
    live: list[tuple[list[int], list[Tensor], list[tuple[StepOutput, int]]]] = [([], [], [])]
    finished: list[tuple[list[int], list[Tensor], list[tuple[StepOutput, int]]]] = []
    for t in range(max_len):
        out, state = model.decoder.step(y, state, memory, t)
        logp = torch.log_softmax(out.logits[:, 0].float(), dim=-1)  # [k, V]
        total = (beam_logp.unsqueeze(1) + logp).view(-1)  # [k * V]
        cand_logp, cand = total.topk(min(2 * beam_size, total.numel()))
        cand_tok_logp = logp.view(-1)[cand]  # [2 * beam] copied out: the trace keeps no [k, V] tensor
        out = replace(out, logits=_NO_LOGITS)  # the trace keeps attention and queries, not the logits
        vocab = logp.size(1)
        next_rows, next_tokens, next_live = [], [], []
        for i, (lp, c) in enumerate(zip(cand_logp.tolist(), cand.tolist(), strict=True)):
            row, tok = divmod(c, vocab)
            toks, lps, trace = live[row]
            entry = ([*toks, tok], [*lps, cand_tok_logp[i]], [*trace, (out, row)])
            if tok == EOS_ID:
                finished.append(entry)
            else:
                next_rows.append(row)
                next_tokens.append(tok)
                next_live.append((entry, lp))
            if len(finished) >= beam_size or len(next_live) == beam_size:
                break
        if len(finished) >= beam_size or not next_live:
            break
        index = torch.tensor(next_rows, device=device)
        state, memory = state.select(index), _beams_of(enc.memory, len(next_rows))
        y = torch.tensor(next_tokens, device=device)
        beam_logp = torch.tensor([lp for _, lp in next_live], device=device)
        live = [entry for entry, _ in next_live]
    else:
        finished.extend(live)
    if not finished:
        finished.extend(live)

    def rank(entry: tuple[list[int], list[Tensor], list[tuple[StepOutput, int]]]) -> float:
        return float(torch.stack(entry[1]).sum()) / max(len(entry[0]), 1) ** alpha

    finished.sort(key=rank, reverse=True)
    return [
        _hypothesis(toks, lps, [s for s, _ in trace], [r for _, r in trace]) for toks, lps, trace in finished[:n_best]
    ]


@torch.inference_mode()
def forced(model: Seq2Seq, src_ids: list[int], tgt_ids: list[int]) -> Hypothesis:
    """Force the decoder through ``tgt_ids`` (ending with EOS) and record its attention."""
    enc = encode_one(model, src_ids)
    device = enc.memory.values.device
    tgt_in = torch.tensor([[BOS_ID, *tgt_ids[:-1]]], device=device)  # [1, T]
    out = model.decoder(tgt_in, enc.state, enc.memory)
    logp = torch.log_softmax(out.logits[0].float(), dim=-1)  # [T, V]
    token_logp = logp.gather(1, torch.tensor(tgt_ids, device=device).unsqueeze(1)).squeeze(1)  # [T]
    att = out.attention
    weights, token_log_probs = _numpy(att.weights[0]), _numpy(token_logp)  # [T, S], [T]
    _check_finite(weights, token_log_probs)
    return Hypothesis(
        tokens=list(tgt_ids),
        token_log_probs=token_log_probs,
        weights=weights,
        scores=_numpy(att.scores[0]),
        contexts=_numpy(att.context[0]),
        queries=_numpy(out.queries[0]),
        positions=None if att.positions is None else _numpy(att.positions[0]),
    )


@torch.inference_mode()
def forced_batch(
    model: Seq2Seq, src: Tensor, lengths: Tensor, targets: list[list[int]], log_probs: bool = True
) -> tuple[list[Hypothesis], list[np.ndarray] | None]:
    """Force each row of a padded batch ``src`` ``[N, S]`` (``lengths`` ``[N]``) through its target
    ids (each ending with EOS) in one teacher-forced pass. Each row's :class:`Hypothesis` is the one
    :func:`forced` gives it alone, cut to its own source and target lengths; a row's padding never
    reaches its real steps (a padded source position is masked, a padded target step comes after
    them). With a Transformer encoder, also each row's self-attention maps
    ``[layers, heads, S_i, S_i]``, else None.

    ``log_probs=False`` leaves the output layer out (each token's log-probability is then None):
    the attention, contexts and queries are the same, as the recurrence never reads the logits
    under teacher forcing, and the vocabulary's product is most of a forced step's arithmetic."""
    device = src.device
    lengths = lengths.to(device)
    enc = model.encode(src, lengths)
    tgt, tgt_lengths = padded(targets, device)  # [N, T], [N]
    tgt_in = torch.cat([torch.full_like(tgt[:, :1], BOS_ID), tgt[:, :-1]], dim=1)  # [N, T]: <bos> y_1 ... y_{T-1}
    real = torch.arange(tgt.size(1), device=device) < tgt_lengths.unsqueeze(1)  # [N, T] True at each row's steps
    # logits only at the real steps: [M, V], M = the sum of the target lengths, row-major; none without log_probs
    out = model.decoder(tgt_in, enc.state, enc.memory, scored=real if log_probs else torch.zeros_like(real))
    n_tgt, n_src = tgt_lengths.tolist(), lengths.tolist()
    row_logp: list[np.ndarray | None] = [None] * len(targets)
    all_logp = None  # [M] every row's token log-probabilities, row-major
    if log_probs:
        logp = torch.log_softmax(out.logits.float(), dim=-1)  # [M, V]
        token_logp = logp.gather(1, tgt[real].unsqueeze(1)).squeeze(1)  # [M]
        all_logp = _numpy(token_logp)
        row_logp = np.split(all_logp, np.cumsum(n_tgt)[:-1])  # N arrays of [T_i]
    att = out.attention
    weights, scores = _numpy(att.weights), _numpy(att.scores)  # [N, T, S] each
    _check_finite(weights, all_logp)
    contexts, queries = _numpy(att.context), _numpy(out.queries)  # [N, T, K], [N, T, Q]
    positions = None if att.positions is None else _numpy(att.positions)  # [N, T]
    maps = enc.encoder.self_attention  # [N, layers, heads, S, S] or None
    maps = None if maps is None else _numpy(maps)
    hyps = [
        Hypothesis(
            tokens=list(ids),
            token_log_probs=row_logp[i],
            weights=weights[i, :t, :s].copy(),  # [T_i, S_i]
            scores=scores[i, :t, :s].copy(),  # [T_i, S_i]
            contexts=contexts[i, :t].copy(),  # [T_i, K]
            queries=queries[i, :t].copy(),  # [T_i, Q]
            positions=None if positions is None else positions[i, :t].copy(),  # [T_i]
        )
        for i, (ids, t, s) in enumerate(zip(targets, n_tgt, n_src, strict=True))
    ]
    encoder_maps = None if maps is None else [maps[i, :, :, :s, :s].copy() for i, s in enumerate(n_src)]
    return hyps, encoder_maps


@torch.inference_mode()
def greedy_batch(
    model: Seq2Seq, src: Tensor, lengths: Tensor, max_len: int | list[int], copyable: Tensor | None = None
) -> list[tuple[list[int], list[int]]]:
    """Greedy decoding of a padded batch (no trace). Per row: the token ids without <eos>, and
    for each the most attended real source position (``<eos>`` excluded) of those ``copyable``
    ``[B, S]`` marks (:func:`~attnviz.data.copyable`; default: all), for <unk> copying.
    ``max_len`` is one limit for every row or one per row, so that a sentence decodes as it does
    alone whatever else shares its batch."""
    enc = model.encode(src, lengths)
    B = src.size(0)
    limits = [max_len] * B if isinstance(max_len, int) else list(max_len)
    stop_at = torch.tensor(limits, device=src.device)  # [B]
    state, y = enc.state, torch.full((B,), BOS_ID, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    # the last real position of each row is <eos>: never a word to copy
    real = torch.arange(src.size(1), device=src.device) < (lengths.to(src.device) - 1).unsqueeze(1)  # [B, S]
    if copyable is not None:
        real = real & copyable.to(src.device)
    rows, attended = [], []
    overflow = torch.zeros((), dtype=torch.bool, device=src.device)  # NaN seen in any row's output
    for t in range(max(limits, default=0)):
        out, state = model.decoder.step(y, state, enc.memory, t)
        overflow |= ~out.logits[:, 0].isfinite().all()  # a logit at ±inf has no log-probability either
        y = out.logits[:, 0].argmax(-1)  # [B]
        rows.append(y)
        attended.append(out.attention.weights[:, 0].masked_fill(~real, -1.0).argmax(-1))  # [B]
        done |= (y == EOS_ID) | (stop_at <= t + 1)
        if bool(done.all()):
            break
    if bool(overflow):
        raise overflow_error()
    if not rows:
        return [([], []) for _ in range(B)]
    result = []
    steps = zip(torch.stack(rows, dim=1).tolist(), torch.stack(attended, dim=1).tolist(), limits, strict=True)
    for ids, where, limit in steps:  # ids, where: [T] each
        n = min(ids.index(EOS_ID) if EOS_ID in ids else len(ids), limit)
        result.append((ids[:n], where[:n]))
    return result
