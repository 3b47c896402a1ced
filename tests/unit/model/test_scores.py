"""Each score function against hand computations, the registry, each score's written-out energies
and its formula parameters."""

import math

import pytest
import torch

from attnviz.errors import ConfigError
from attnviz.model.scores import SCORES, get_score
from tests.support.attention import attend, tiny_attention


def test_registry_has_every_score_and_rejects_unknown():
    assert set(SCORES) == {"dot", "scaled_dot", "general", "concat", "additive", "location", "local_m", "local_p"}
    for cls in SCORES.values():
        assert cls.formula and ":math:" in cls.__doc__, f"{cls.name} must state its formula in its docstring"
    with pytest.raises(ConfigError, match="unknown score function 'bilinear'"):
        get_score("bilinear")


def test_dot_by_hand_and_context():
    # dot([3, 1], [2, 6]) = 12 and dot([3, 1], [1, 0]) = 3
    out = attend(tiny_attention("dot"), [[[3.0, 1.0]]], [[[2.0, 6.0], [1.0, 0.0]]])
    assert out.scores[0, 0].tolist() == [12.0, 3.0]
    e12, e3 = math.exp(12), math.exp(3)
    expected = [e12 / (e12 + e3), e3 / (e12 + e3)]
    assert out.weights[0, 0].tolist() == pytest.approx(expected, rel=1e-6)
    ctx = [expected[0] * 2 + expected[1] * 1, expected[0] * 6 + expected[1] * 0]
    assert out.context[0, 0].tolist() == pytest.approx(ctx, rel=1e-6)


def test_scaled_dot_divides_by_sqrt_d():
    out = attend(tiny_attention("scaled_dot"), [[[3.0, 1.0]]], [[[2.0, 6.0]]])
    assert out.scores[0, 0, 0].item() == pytest.approx(12 / math.sqrt(2))


def test_general_is_bilinear():
    att = tiny_attention("general")
    W = torch.tensor([[1.0, 2.0], [0.0, -1.0]])
    att.score.W_a.weight.data = W
    out = attend(att, [[[3.0, 1.0]]], [[[2.0, 6.0]]])
    h_t, h_s = torch.tensor([3.0, 1.0]), torch.tensor([2.0, 6.0])
    assert out.scores[0, 0, 0].item() == pytest.approx(float(h_t @ W @ h_s))  # 3*14 + 1*(-6) = 36


@pytest.mark.parametrize("name", ["concat", "additive"])
def test_tanh_scores_by_hand(name):
    att = tiny_attention(name)
    Wq, Wk, v = att.score.W_q.weight, att.score.W_k.weight, att.score.v_a.weight
    q, k = torch.tensor([3.0, 1.0]), torch.tensor([2.0, 6.0])
    out = attend(att, [[q.tolist()]], [[k.tolist()]])
    with torch.no_grad():
        expected = float(v @ torch.tanh(Wq @ q + Wk @ k))
    assert out.scores[0, 0, 0].item() == pytest.approx(expected, rel=1e-5)
    if name == "concat":  # W_a [h_t; h_s] with W_a = [W_q | W_k]
        W_a = torch.cat([Wq, Wk], dim=1)
        with torch.no_grad():
            by_concat = float(v @ torch.tanh(W_a @ torch.cat([q, k])))
        assert out.scores[0, 0, 0].item() == pytest.approx(by_concat, rel=1e-5)


def test_additive_projects_keys_once_per_source():
    att = tiny_attention("additive")
    calls = []
    att.score.W_k.register_forward_hook(lambda *a: calls.append(1))
    keys, mask = torch.randn(1, 4, 2), torch.ones(1, 4, dtype=torch.bool)
    memory = att.prepare(keys, mask)
    for t in range(5):
        att(torch.randn(1, 1, 2), memory, torch.tensor([t]))
    assert len(calls) == 1


def test_location_ignores_keys_and_is_cut_to_source_length():
    att = tiny_attention("location")
    q = [[[0.5, -1.0]]]
    a = attend(att, q, [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])
    b = attend(att, q, [[[9.0, 9.0], [0.0, 0.0], [-1.0, 7.0]]])
    assert torch.equal(a.weights, b.weights)
    assert a.scores.shape == (1, 1, 3)
    full = att.score.W_a.weight @ torch.tensor([0.5, -1.0])
    assert a.scores[0, 0].tolist() == pytest.approx(full[:3].tolist())


def test_dot_with_a_bidirectional_encoder_sums_the_directions():
    att = tiny_attention("dot", q_dim=2, k_dim=4)
    assert list(att.parameters()) == []  # still a pure dot product, not general in disguise
    out = attend(att, [[[3.0, 1.0]]], [[[1.0, 2.0, 1.0, 4.0], [0.5, 0.0, 0.5, 0.0]]])
    assert out.scores[0, 0].tolist() == [3 * 2 + 1 * 6, 3 * 1 + 1 * 0]  # keys [2, 6] and [1, 0]
    assert out.context.shape == (1, 1, 4)  # the context averages the full annotations
    with pytest.raises(ConfigError, match="dot product"):
        tiny_attention("dot", q_dim=4, k_dim=6)


def test_local_attention_rejects_a_non_content_score():
    with pytest.raises(ConfigError, match="content score"):
        tiny_attention("local_m", local_content="location")


@pytest.mark.parametrize("name", sorted(SCORES))
@pytest.mark.parametrize("k_dim", [4, 8])  # 8: a bidirectional encoder's annotations
def test_every_score_writes_out_its_own_energies(name, k_dim):
    """``cell_terms`` (the math panel's arithmetic) ends in the energy ``forward`` computes, and its
    local positions are those of ``forward``: a new score cannot show other numbers than it uses."""
    att = tiny_attention(name, q_dim=4, k_dim=k_dim).double()
    values, queries = torch.randn(1, 6, k_dim, dtype=torch.float64), torch.randn(1, 3, 4, dtype=torch.float64)
    memory = att.prepare(values, torch.ones(1, 6, dtype=torch.bool))
    out = att(queries, memory, torch.arange(3))
    content = att.score.energies(queries, memory.cache)  # [1, 3, 6] before any window
    for t in range(3):
        for s in range(6):
            terms = att.cell_terms(queries[0, t], values[0], t, s, "h_t")
            assert terms[-1].value.item() == pytest.approx(content[0, t, s].item(), rel=1e-12)
            if att.is_local:
                p_t = next(x for x in terms if x.label == "p_t")
                assert p_t.value.item() == pytest.approx(out.positions[0, t].item(), rel=1e-12)
            assert any(x.label == "annotation" for x in terms) == att.score.content_based


@pytest.mark.parametrize("name", sorted(SCORES))
def test_formula_parameters_round_trip(name):
    att = tiny_attention(name, q_dim=2, k_dim=2)
    params = att.score.formula_parameters()
    assert set(params) <= {"W_a", "U_a", "v_a", "W_p", "v_p"}
    assert sum(p.numel() for p in params.values()) == sum(p.numel() for p in att.parameters())
    new = {n: torch.arange(float(p.numel())).view(p.shape) for n, p in params.items()}
    att.score.set_formula_parameters(new)
    for n, p in att.score.formula_parameters().items():
        assert torch.equal(p, new[n])


def test_local_m_steps_past_the_source_end_look_at_its_last_position():
    """A target longer than the source: steps t >= S centre the window on S - 1, not on t (or S)."""
    att = tiny_attention("local_m", window=1)
    keys = [[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]  # S = 3
    queries = [[[0.5, -1.0], [1.0, 2.0], [-0.3, 0.7], [2.0, 1.0], [0.1, 0.1]]]  # T = 5
    out = attend(att, queries, keys)
    assert out.positions[0].tolist() == [0, 1, 2, 2, 2]
    for t in (3, 4):  # the window [1, 2] around p_t = 2, a softmax over those two
        assert (out.weights[0, t] > 0).nonzero().flatten().tolist() == [1, 2]
        assert torch.allclose(out.weights[0, t, 1:], torch.softmax(out.scores[0, t, 1:], -1))
        terms = att.cell_terms(torch.tensor(queries[0][t]), torch.tensor(keys[0]), t, 1, "h_t")
        p_t = next(x for x in terms if x.label == "p_t")
        assert p_t.value.item() == 2.0  # the math panel's p_t is the model's


def test_scaled_dot_writes_out_the_dot_product_then_its_scaling():
    att = tiny_attention("scaled_dot")
    terms = att.cell_terms(torch.tensor([3.0, 1.0]), torch.tensor([[2.0, 6.0]]), 0, 0, "h_t")
    by_label = {x.label: x.value for x in terms}
    assert by_label["dot product"].item() == pytest.approx(12.0)
    assert by_label["scaled"].item() == pytest.approx(12 / math.sqrt(2))
