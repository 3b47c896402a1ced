"""The guided alignment loss: reference rows from links, masked cross-entropy, its gradient."""

import math

import pytest
import torch

from attnviz.errors import InputError
from attnviz.guided import guided_alignment_loss, piece_links, reference_alignment


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
    assert piece_links([(0, 1), (1, 0)], ["Xylo@@", "phon", "ist"], ["is", "xylo@@", "phone"]) == [
        (0, 1), (0, 2), (1, 1), (1, 2), (2, 0),
    ]  # fmt: skip
    with pytest.raises(InputError, match="outside the 2 source and 2 target words"):
        piece_links([(2, 0)], ["a@@", "b", "c"], ["x", "y"])
