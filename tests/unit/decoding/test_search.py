"""Search: a beam of one equals greedy; greedy agrees with forced decoding of its own output."""

import numpy as np
import pytest
import torch

from attnviz.data.vocab import BOS_ID, EOS_ID
from attnviz.decoding.search import beam_search, greedy
from tests.support.tiny import CASES, tiny_model


@pytest.mark.parametrize(("score", "style"), CASES)
def test_greedy_agrees_with_forced_decoding_of_its_own_output(score, style):
    model = tiny_model(score, style)
    src_ids = [5, 9, 4, 12, 7, EOS_ID]
    hyp = greedy(model, src_ids, max_len=8)
    tgt_in = torch.tensor([[BOS_ID, *hyp.tokens[:-1]]])  # [1, T]
    with torch.no_grad():
        out = model(torch.tensor([src_ids]), torch.tensor([len(src_ids)]), tgt_in)
    assert out.logits[0].argmax(-1).tolist() == hyp.tokens
    torch.testing.assert_close(out.attention.weights[0], torch.from_numpy(hyp.weights), atol=1e-5, rtol=0)


def test_beam_one_equals_greedy(trained):
    for text in ["a b c", "h g f e d", "a a a a"]:
        src = trained.source(text).ids
        g = greedy(trained.model, src, 20)
        (b,) = beam_search(trained.model, src, beam_size=1, max_len=20)
        assert b.tokens == g.tokens
        assert np.allclose(b.weights, g.weights) and np.isclose(b.log_prob, g.log_prob)


@pytest.mark.parametrize("first", [1e39, 1e-46])
def test_forced_weights_beyond_float32_are_the_distribution_they_stand_for(trained, first):
    """A forced row is checked in float64: read as float32 first, 1e39 became inf (NaN weights, a <pad>
    decode) and 1e-46 became 0 (a row of zeros)."""
    n = len(trained.source("a b c").ids)
    al = trained.translate("a b c", overrides={0: [first] + [1e-300 if first < 1 else 1.0] * (n - 1)})
    assert np.isfinite(al.weights).all() and al.weights[0].sum() == pytest.approx(1.0)
    assert al.weights[0, 0] == pytest.approx(1.0, abs=1e-6) and "<pad>" not in al.target_tokens
