"""Guided alignment: the loss and its gradient by hand, and training that pulls attention towards
the links."""

import math

import pytest
import torch

from attnviz.errors import InputError
from attnviz.training.batches import make_batches
from attnviz.training.config import TrainConfig
from attnviz.training.fit import _loss_and_accuracy, fit
from attnviz.training.guided import guided_alignment_loss, link_grid, piece_links, reference_rows
from tests.support.tiny import reverse_corpus, tiny_translator


def reference_alignment(links, tgt_len: int, src_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """What guided training reads of per-sentence links: each linked row uniform over its sources."""
    return reference_rows(link_grid(links, tgt_len, src_len))


def test_reference_rows_are_uniform_over_linked_sources_and_masked_elsewhere():
    ref, mask = reference_alignment([[(0, 0), (2, 0), (1, 1)], [(1, 0)]], tgt_len=3, src_len=4)
    assert ref.shape == (2, 3, 4) and mask.tolist() == [[True, True, False], [True, False, False]]
    assert ref[0, 0].tolist() == [0.5, 0.0, 0.5, 0.0] and ref[0, 1].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert ref[0, 2].sum() == 0 and ref[1, 0].tolist() == [0.0, 1.0, 0.0, 0.0]
    with pytest.raises(InputError, match="outside the batch's 4 source and 3 target"):
        reference_alignment([[(4, 0)]], tgt_len=3, src_len=4)


def test_loss_by_hand():
    attention = torch.tensor([[[0.5, 0.25, 0.25], [0.1, 0.8, 0.1]]])  # [1, 2, 3]
    ref, mask = reference_alignment([[(0, 0), (1, 0)]], tgt_len=2, src_len=3)  # row 1 has no link
    loss = guided_alignment_loss(attention, ref, mask)
    # only row 0 counts: -(0.5 log 0.5 + 0.5 log 0.25)
    assert loss.item() == pytest.approx(-(0.5 * math.log(0.5) + 0.5 * math.log(0.25)), rel=1e-6)
    assert guided_alignment_loss(attention, torch.zeros_like(ref), torch.zeros_like(mask)).item() == 0.0
    with pytest.raises(InputError, match="disagree"):
        guided_alignment_loss(attention, ref[:, :1], mask)


def test_gradient_matches_finite_differences_and_pulls_towards_the_links():
    torch.manual_seed(0)
    scores = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)  # [B, T, S] energies
    ref, mask = reference_alignment([[(0, 0), (3, 1)], [(2, 2), (1, 2)]], tgt_len=3, src_len=4)

    def loss_of(energies):
        return guided_alignment_loss(torch.softmax(energies, dim=-1), ref.double(), mask)

    assert torch.autograd.gradcheck(loss_of, (scores,))
    loss_of(scores).backward()
    grad = scores.grad
    # through the softmax the gradient is (alpha - A) / |aligned rows|: negative on linked cells
    expected = (torch.softmax(scores, -1) - ref.double()) * mask.unsqueeze(-1) / mask.sum()
    torch.testing.assert_close(grad, expected.detach())
    assert grad[0, 0, 0] < 0 and grad[0, 1, 3] < 0 and torch.all(grad[0, 2] == 0)


def test_word_links_expand_to_pieces():
    expanded = [(0, 1), (0, 2), (1, 1), (1, 2), (2, 0)]
    assert piece_links([(0, 1), (1, 0)], ["Xylo@@", "phon", "ist"], ["is", "xylo@@", "phone"]) == expanded
    with pytest.raises(InputError, match="outside the 2 source and 2 target words"):
        piece_links([(2, 0)], ["a@@", "b", "c"], ["x", "y"])


def test_moving_attention_towards_the_links_lowers_the_loss():
    torch.manual_seed(1)
    attention = torch.softmax(torch.randn(2, 3, 5), dim=-1)  # [B, T, S]
    ref, mask = reference_alignment([[(0, 0), (4, 1), (2, 1)], [(3, 2)]], tgt_len=3, src_len=5)
    losses = [guided_alignment_loss((1 - a) * attention + a * ref, ref, mask).item() for a in (0, 0.25, 0.5, 0.9)]
    assert losses == sorted(losses, reverse=True) and losses[-1] < losses[0] / 3


def _align_loss(translator, corpus, links) -> float:
    batches = make_batches(corpus.train, translator.src_vocab, translator.tgt_vocab, 64, None, links)
    translator.model.eval()
    with torch.no_grad():
        losses = [_loss_and_accuracy(translator.model, b, "cpu", 0.0, 1.0)[3] * b[0].size(0) for b in batches]
    return float(sum(losses)) / len(corpus.train)


@pytest.mark.parametrize(("score", "style"), [("additive", "bahdanau"), ("dot", "luong")])
def test_guided_training_pulls_attention_towards_the_links(score, style):
    corpus = reverse_corpus(120)
    links = [p.sure for p in corpus.train]  # anti-diagonal
    cfg = {"epochs": 5, "batch_size": 16, "lr": 1e-2, "patience": None, "seed": 0}
    plain, guided = tiny_translator(corpus, score, style), tiny_translator(corpus, score, style)
    fit(plain, corpus, TrainConfig(**cfg), links=links)  # weight 0: the links are not used
    steps = []
    fit(guided, corpus, TrainConfig(**cfg, guided_weight=1.0), callback=steps.append, links=links)
    aligns = [p.align_loss for p in steps if p.kind == "step"]
    assert aligns[-1] < 0.75 * aligns[0]
    assert _align_loss(guided, corpus, links) < 0.6 * _align_loss(plain, corpus, links)
    assert guided.meta["recipe"]["guided_weight"] == 1.0
    epochs = [p for p in steps if p.kind == "epoch"]
    assert all(p.as_row()["align_loss"] > 0 for p in epochs)
