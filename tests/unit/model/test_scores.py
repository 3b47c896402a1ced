"""Each score function against hand computations, plus the shared masking/softmax/window work."""

import math

import pytest
import torch

from attnviz.errors import ConfigError
from attnviz.model.attention import Attention
from attnviz.model.scores import SCORES, get_score


def _attention(score: str, q_dim: int = 2, k_dim: int = 2, **kw) -> Attention:
    torch.manual_seed(0)
    return Attention(score, q_dim, k_dim, attn_dim=3, max_src_len=10, **kw)


def _run(att: Attention, queries, keys, mask=None, steps=None):
    keys = torch.tensor(keys, dtype=torch.float32)  # [B, S, K]
    queries = torch.tensor(queries, dtype=torch.float32)  # [B, T, Q]
    if mask is None:
        mask = torch.ones(keys.shape[:2], dtype=torch.bool)
    if steps is None:
        steps = torch.arange(queries.size(1))
    return att(queries, att.prepare(keys, mask), steps)


def test_registry_has_every_score_and_rejects_unknown():
    assert set(SCORES) == {"dot", "scaled_dot", "general", "concat", "additive", "location", "local_m", "local_p"}
    for cls in SCORES.values():
        assert cls.formula and ":math:" in cls.__doc__, f"{cls.name} must state its formula in its docstring"
    with pytest.raises(ConfigError, match="unknown score function 'bilinear'"):
        get_score("bilinear")


def test_dot_by_hand_and_context():
    # dot([3, 1], [2, 6]) = 12 and dot([3, 1], [1, 0]) = 3
    out = _run(_attention("dot"), [[[3.0, 1.0]]], [[[2.0, 6.0], [1.0, 0.0]]])
    assert out.scores[0, 0].tolist() == [12.0, 3.0]
    e12, e3 = math.exp(12), math.exp(3)
    expected = [e12 / (e12 + e3), e3 / (e12 + e3)]
    assert out.weights[0, 0].tolist() == pytest.approx(expected, rel=1e-6)
    ctx = [expected[0] * 2 + expected[1] * 1, expected[0] * 6 + expected[1] * 0]
    assert out.context[0, 0].tolist() == pytest.approx(ctx, rel=1e-6)


def test_scaled_dot_divides_by_sqrt_d():
    out = _run(_attention("scaled_dot"), [[[3.0, 1.0]]], [[[2.0, 6.0]]])
    assert out.scores[0, 0, 0].item() == pytest.approx(12 / math.sqrt(2))


def test_general_is_bilinear():
    att = _attention("general")
    W = torch.tensor([[1.0, 2.0], [0.0, -1.0]])
    att.score.W_a.weight.data = W
    out = _run(att, [[[3.0, 1.0]]], [[[2.0, 6.0]]])
    h_t, h_s = torch.tensor([3.0, 1.0]), torch.tensor([2.0, 6.0])
    assert out.scores[0, 0, 0].item() == pytest.approx(float(h_t @ W @ h_s))  # 3*14 + 1*(-6) = 36


@pytest.mark.parametrize("name", ["concat", "additive"])
def test_tanh_scores_by_hand(name):
    att = _attention(name)
    Wq, Wk, v = att.score.W_q.weight, att.score.W_k.weight, att.score.v_a.weight
    q, k = torch.tensor([3.0, 1.0]), torch.tensor([2.0, 6.0])
    out = _run(att, [[q.tolist()]], [[k.tolist()]])
    with torch.no_grad():
        expected = float(v @ torch.tanh(Wq @ q + Wk @ k))
    assert out.scores[0, 0, 0].item() == pytest.approx(expected, rel=1e-5)
    if name == "concat":  # W_a [h_t; h_s] with W_a = [W_q | W_k]
        W_a = torch.cat([Wq, Wk], dim=1)
        with torch.no_grad():
            by_concat = float(v @ torch.tanh(W_a @ torch.cat([q, k])))
        assert out.scores[0, 0, 0].item() == pytest.approx(by_concat, rel=1e-5)


def test_additive_projects_keys_once_per_source():
    att = _attention("additive")
    calls = []
    att.score.W_k.register_forward_hook(lambda *a: calls.append(1))
    keys, mask = torch.randn(1, 4, 2), torch.ones(1, 4, dtype=torch.bool)
    memory = att.prepare(keys, mask)
    for t in range(5):
        att(torch.randn(1, 1, 2), memory, torch.tensor([t]))
    assert len(calls) == 1


def test_location_ignores_keys_and_is_cut_to_source_length():
    att = _attention("location")
    q = [[[0.5, -1.0]]]
    a = _run(att, q, [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])
    b = _run(att, q, [[[9.0, 9.0], [0.0, 0.0], [-1.0, 7.0]]])
    assert torch.equal(a.weights, b.weights)
    assert a.scores.shape == (1, 1, 3)
    full = att.score.W_a.weight @ torch.tensor([0.5, -1.0])
    assert a.scores[0, 0].tolist() == pytest.approx(full[:3].tolist())


@pytest.mark.parametrize("name", sorted(SCORES))
def test_padding_gets_exactly_zero_and_rows_sum_to_one(name):
    att = _attention(name, q_dim=4, k_dim=8)
    torch.manual_seed(1)
    keys = torch.randn(2, 5, 8)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    out = att(torch.randn(2, 3, 4), att.prepare(keys, mask), torch.arange(3))
    assert torch.all(out.weights[1, :, 3:] == 0)
    assert torch.all(torch.isneginf(out.scores[1, :, 3:]))
    sums = out.weights.sum(-1)
    if name == "local_p":  # Gaussian-weighted, not renormalised (Luong 2015, eq. 10)
        assert torch.all(sums <= 1 + 1e-6)
    else:
        assert torch.allclose(sums, torch.ones_like(sums), atol=1e-6)
    if name not in ("local_m", "local_p"):
        assert torch.allclose(out.weights, torch.softmax(out.scores, -1))


def test_dot_with_a_bidirectional_encoder_sums_the_directions():
    att = _attention("dot", q_dim=2, k_dim=4)
    assert list(att.parameters()) == []  # still a pure dot product, not general in disguise
    out = _run(att, [[[3.0, 1.0]]], [[[1.0, 2.0, 1.0, 4.0], [0.5, 0.0, 0.5, 0.0]]])
    assert out.scores[0, 0].tolist() == [3 * 2 + 1 * 6, 3 * 1 + 1 * 0]  # keys [2, 6] and [1, 0]
    assert out.context.shape == (1, 1, 4)  # the context averages the full annotations
    with pytest.raises(ConfigError, match="dot product"):
        _attention("dot", q_dim=4, k_dim=6)


def test_local_m_window_around_t():
    att = _attention("local_m", window=1)
    keys = torch.randn(1, 8, 2)
    out = att(torch.randn(1, 4, 2), att.prepare(keys, torch.ones(1, 8, dtype=torch.bool)), torch.arange(4))
    assert out.positions[0].tolist() == [0, 1, 2, 3]
    for t in range(4):
        nonzero = (out.weights[0, t] > 0).nonzero().flatten().tolist()
        assert nonzero == [s for s in range(t - 1, t + 2) if 0 <= s < 8]
        inside = out.scores[0, t, nonzero]
        assert torch.allclose(out.weights[0, t, nonzero], torch.softmax(inside, -1))


def test_local_p_window_and_gaussian():
    D = 2
    att = _attention("local_p", window=D)
    keys, mask = torch.randn(1, 10, 2), torch.ones(1, 10, dtype=torch.bool)
    q = torch.randn(1, 1, 2)
    out = att(q, att.prepare(keys, mask), torch.tensor([0]))
    gate = torch.sigmoid(att.score.v_p(torch.tanh(att.score.W_p(q)))).item()
    p_t = 10 * gate
    assert out.positions[0, 0].item() == pytest.approx(p_t, rel=1e-5)
    s = torch.arange(10, dtype=torch.float32)
    window = (s - p_t).abs() <= D
    align = torch.softmax(out.scores[0, 0].masked_fill(~window, -math.inf), -1)
    expected = align * torch.exp(-((s - p_t) ** 2) / (2 * (D / 2) ** 2))
    assert torch.allclose(out.weights[0, 0], expected, atol=1e-6)
    assert torch.all(out.weights[0, 0][~window] == 0)


def test_local_attention_rejects_a_non_content_score():
    with pytest.raises(ConfigError, match="content score"):
        _attention("local_m", local_content="location")


@pytest.mark.parametrize("name", sorted(SCORES))
def test_gradients_reach_every_attention_parameter(name):
    att = _attention(name, q_dim=4, k_dim=8)
    keys = torch.randn(2, 5, 8, requires_grad=True)
    out = att(torch.randn(2, 3, 4), att.prepare(keys, torch.ones(2, 5, dtype=torch.bool)), torch.arange(3))
    (out.context.sum() + out.weights.pow(2).sum()).backward()
    for pname, p in att.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, pname


@pytest.mark.parametrize("name", sorted(SCORES))
@pytest.mark.parametrize("k_dim", [4, 8])  # 8: a bidirectional encoder's annotations
def test_every_score_writes_out_its_own_energies(name, k_dim):
    """``cell_terms`` (the math panel's arithmetic) ends in the energy ``forward`` computes, and its
    local positions are those of ``forward``: a new score cannot show other numbers than it uses."""
    att = _attention(name, q_dim=4, k_dim=k_dim).double()
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
    att = _attention(name, q_dim=2, k_dim=2)
    params = att.score.formula_parameters()
    assert set(params) <= {"W_a", "U_a", "v_a", "W_p", "v_p"}
    assert sum(p.numel() for p in params.values()) == sum(p.numel() for p in att.parameters())
    new = {n: torch.arange(float(p.numel())).view(p.shape) for n, p in params.items()}
    att.score.set_formula_parameters(new)
    for n, p in att.score.formula_parameters().items():
        assert torch.equal(p, new[n])
