"""Batched beam search: many sentences at once, without the attention trace (evaluation, files).

Every sentence in the batch holds up to ``beam_size`` rows; one decoder step serves them all,
``topk`` picks every sentence's candidates at once, and a done sentence leaves the batch. Each
sentence gets the n-best that :func:`attnviz.decoding.search.beam_search` gives it alone: at each
step its top ``2 * beam_size`` candidates are scanned in order, an ``<eos>`` one finishing a
hypothesis and another extending a beam, until ``beam_size`` beams are extended or
``beam_size`` hypotheses have finished in all (the sentence is then done); after ``max_len``
steps its live beams are ranked too. Hypotheses are ranked by ``log P / length**alpha``. The
scan is done with prefix counts over the candidates, for all sentences at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor

from attnviz.data import BOS_ID, EOS_ID, PAD_ID
from attnviz.errors import CheckpointError
from attnviz.model import Seq2Seq


def overflow_error() -> CheckpointError:
    """What decoding raises when a model's attention or output came out as NaN."""
    return CheckpointError(
        "this model's arithmetic overflows float32: its attention or its output came out as NaN, "
        "so there is nothing to show. Its weights are far larger than training makes them; "
        "retrain it, or check the code that saved it"
    )


@dataclass
class Decoded:
    """One hypothesis of batched decoding, without the trace."""

    tokens: list[int]  # target ids, ending with EOS_ID when finished
    token_log_probs: list[float]  # [T]
    attended: list[int]  # [T] the real source position (``<eos>`` excluded) attended to most at each step
    score: float  # log P / length**alpha, what the n-best list is ranked by

    @property
    def log_prob(self) -> float:
        return sum(self.token_log_probs)


class _Finished:
    """The finished hypotheses of each sentence, in the order beam search finishes them."""

    def __init__(self, n: int, alpha: float) -> None:
        self.alpha = alpha
        self.hyps: list[list[Decoded]] = [[] for _ in range(n)]

    def add(self, sentence: Tensor, tokens: Tensor, log_probs: Tensor, attended: Tensor) -> None:
        """sentence ``[F]`` ids; tokens, attended ``[F, T]``; log_probs ``[F, T]``: F hypotheses."""
        if sentence.numel() == 0:
            return
        norm = max(tokens.size(1), 1) ** self.alpha
        sums = log_probs.sum(1).tolist()  # [F] summed in float32, as one sentence's beam search does
        rows = zip(sentence.tolist(), tokens.tolist(), log_probs.tolist(), attended.tolist(), sums, strict=True)
        for i, toks, lps, where, total in rows:
            if total != total:  # NaN: the model overflowed on this sentence
                raise overflow_error()
            self.hyps[i].append(Decoded(toks, lps, where, total / norm))

    def best(self, n_best: int) -> list[list[Decoded]]:
        """Each sentence's hypotheses, best first (a stable sort: ties keep their finishing order)."""
        return [sorted(h, key=lambda d: d.score, reverse=True)[:n_best] for h in self.hyps]


def padded(ids: list[list[int]], device: torch.device) -> tuple[Tensor, Tensor]:
    """Sentences of ids as a batch padded with PAD_ID ``[N, S]`` and their lengths ``[N]``."""
    lengths = torch.tensor([len(x) for x in ids])  # [N]
    src = torch.full((len(ids), int(lengths.max())), PAD_ID, dtype=torch.long)  # [N, S]
    for row, x in enumerate(ids):
        src[row, : len(x)] = torch.tensor(x)
    return src.to(device), lengths.to(device)


def budget_batches(lengths: list[int], beam_size: int, max_tokens: int) -> list[list[int]]:
    """Indices of sentences of ``lengths`` in batches, longest first: each batch at most
    ``max_tokens`` sentences x beams x its longest source (one sentence at least)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:  # the first of a batch is its longest
        if batches and (len(batches[-1]) + 1) * beam_size * lengths[batches[-1][0]] <= max_tokens:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def _as_lengths(max_len: int | list[int] | Tensor, n: int, device: torch.device) -> Tensor:
    if isinstance(max_len, int):
        return torch.full((n,), max_len, device=device)
    return torch.as_tensor(max_len, device=device).long()  # [N]


@torch.inference_mode()
def beam_batch(
    model: Seq2Seq,
    src: Tensor,
    lengths: Tensor,
    beam_size: int,
    max_len: int | list[int] | Tensor,
    n_best: int = 1,
    alpha: float = 1.0,
    copyable: Tensor | None = None,
) -> list[list[Decoded]]:
    """Beam search over a padded batch ``src`` ``[N, S]`` with ``lengths`` ``[N]``; ``max_len`` is
    one limit for all or one per sentence. Returns up to ``n_best`` hypotheses per sentence, best
    first, the same as :func:`~attnviz.decoding.search.beam_search` gives for each alone (with
    ``beam_size=1``: greedy search). ``copyable`` ``[N, S]`` marks the source positions an ``<unk>``
    may copy (:func:`~attnviz.data.copyable`); each hypothesis's ``attended`` is the one of those
    attended to most (default: every real position)."""
    device, B, N = src.device, beam_size, src.size(0)
    if N == 0:
        return []
    lengths = lengths.to(device)
    enc = model.encode(src, lengths)
    limits = _as_lengths(max_len, N, device)  # [N]
    # the last real position of each row is <eos>: never a word to copy
    real = torch.arange(src.size(1), device=device) < (lengths - 1).unsqueeze(1)  # [N, S]
    if copyable is not None:
        real = real & copyable.to(device)
    finished = _Finished(N, alpha)
    n_done = torch.zeros(N, dtype=torch.long, device=device)  # [N] hypotheses finished so far

    # rows: k per active sentence, sentence-major (k is 1 at the first step, up to B after)
    active, k = torch.arange(N, device=device), 1  # [n] the sentences still in the batch
    memory, state, row_real = enc.memory, enc.state, real
    alive = torch.ones(N, dtype=torch.bool, device=device)  # [n] False: done, its rows padding
    y = torch.full((N,), BOS_ID, device=device)  # [n * k] last token of each row
    beam_logp = torch.zeros(N, device=device)  # [n * k]
    row_valid = torch.ones(N, dtype=torch.bool, device=device)  # [n * k] False: a padding row
    hist_tok = torch.zeros(N, 0, dtype=torch.long, device=device)  # [n * k, t] tokens so far
    hist_lp = torch.zeros(N, 0, device=device)  # [n * k, t] their log-probabilities
    hist_att = torch.zeros(N, 0, dtype=torch.long, device=device)  # [n * k, t] source attended to most
    for t in range(int(limits.max())):
        n = active.numel()
        out, state = model.decoder.step(y, state, memory, t)
        logp = torch.log_softmax(out.logits[:, 0].float(), dim=-1)  # [n * k, V]
        attended = out.attention.weights[:, 0].masked_fill(~row_real, -1.0).argmax(-1)  # [n * k]
        V = logp.size(1)
        C = min(2 * B, k * V)
        # one topk over each sentence's k * V candidates, laid out as one sentence's search lays
        # them out, so that even exact ties come out in the same order
        total = (beam_logp.unsqueeze(1) + logp).view(n, k * V)  # [n, k * V]
        cand_lp, cand = total.topk(C, dim=1)  # [n, C] best first
        row = cand // V + (torch.arange(n, device=device) * k).unsqueeze(1)  # [n, C] the parent row
        tok = cand % V  # [n, C]
        tok_lp = logp[row, tok]  # [n, C] the token's own log-probability
        # every candidate as a hypothesis: its parent's history and this step
        cand_tok = torch.cat([hist_tok[row], tok.unsqueeze(2)], 2).view(n * C, t + 1)  # [n * C, t + 1]
        cand_hist_lp = torch.cat([hist_lp[row], tok_lp.unsqueeze(2)], 2).view(n * C, t + 1)
        cand_att = torch.cat([hist_att[row], attended[row].unsqueeze(2)], 2).view(n * C, t + 1)

        # the scan in order: a candidate counts while fewer than B beams are extended and fewer
        # than B hypotheses have finished
        valid, eos = row_valid[row], tok == EOS_ID  # [n, C] each
        is_fin, is_live = valid & eos, valid & ~eos
        fin_before = is_fin.cumsum(1) - is_fin.long()  # [n, C]
        live_before = is_live.cumsum(1) - is_live.long()  # [n, C]
        taken = valid & (n_done[active].unsqueeze(1) + fin_before < B) & (live_before < B)  # [n, C]
        new_fin, new_live = taken & eos, taken & ~eos
        n_done[active] += new_fin.sum(1)
        stopped = alive & ((n_done[active] >= B) | ~new_live.any(1))  # [n] done by the rule
        last = alive & ~stopped & (t + 1 >= limits[active])  # [n] done at max_len: its live beams are ranked too
        for chosen in (new_fin, new_live & last.unsqueeze(1)):  # in the order one sentence's search adds them
            flat = chosen.view(-1).nonzero(as_tuple=True)[0]  # [F] into n * C
            finished.add(active[flat // C], cand_tok[flat], cand_hist_lp[flat], cand_att[flat])
        alive &= ~(stopped | last)
        if not bool(alive.any()):
            break

        # the next beams: each sentence's extended candidates in scan order, then padding rows. A
        # done sentence stays in the batch (as padding rows) until a quarter of the batch is done:
        # leaving means copying the memory of every row that stays
        k_next = min(B, C)
        compact = k_next != k or 4 * int(alive.sum()) <= 3 * n
        slots = alive.nonzero(as_tuple=True)[0] if compact else torch.arange(n, device=device)  # [n']
        position = torch.arange(C, device=device).expand(n, C)  # [n, C]
        order = torch.where(new_live, position, position + C).argsort(1)[slots, :k_next]  # [n', k_next]
        pick = (slots.unsqueeze(1) * C + order).view(-1)  # [n' * k_next] into n * C
        row_valid = new_live.view(-1)[pick] & alive[slots].repeat_interleave(k_next)  # [n' * k_next]
        y, hist_tok, hist_lp, hist_att = tok.view(-1)[pick], cand_tok[pick], cand_hist_lp[pick], cand_att[pick]
        beam_logp = cand_lp.view(-1)[pick].masked_fill(~row_valid, -torch.inf)  # [n' * k_next]
        state = state.select(row.view(-1)[pick])
        if compact:
            active, alive = active[slots], alive[slots]
            per_row = active.repeat_interleave(k_next)  # [n' * k_next] the sentence of each row
            S = int(lengths[active].max())  # attention never reads past a source's end: cut there
            m = enc.memory
            memory = replace(
                m,
                values=m.values[per_row, :S],
                cache=m.cache[per_row, :S],
                mask=m.mask[per_row, :S],
                lengths=m.lengths[per_row],
            )
            row_real = real[per_row, :S]  # [n' * k_next, S]
        k = k_next
    return finished.best(n_best)
