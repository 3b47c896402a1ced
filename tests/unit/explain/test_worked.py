"""The Learn page's worked example for every score, against the papers' formulas in numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.errors import ConfigError, InputError
from attnviz.explain import worked as explain
from attnviz.explain.steps import vector
from attnviz.explain.worked import score_formula, score_parameters, score_reading
from attnviz.model.scores import SCORES

LOCAL = ("local_m", "local_p")


def _by_hand(score: str, q: np.ndarray, k: np.ndarray, p: dict, t: int, D: int) -> tuple[np.ndarray, np.ndarray]:
    """Raw scores and weights of every score, written from the papers' formulas in numpy."""
    S = len(k)
    if score in LOCAL:
        raw = k @ p["W_a"].T @ q  # general content
    elif score in ("dot", "scaled_dot"):
        raw = k @ q / (math.sqrt(len(q)) if score == "scaled_dot" else 1.0)
    elif score == "general":
        raw = k @ p["W_a"].T @ q
    elif score == "additive":
        raw = np.tanh(p["W_a"] @ q + k @ p["U_a"].T) @ p["v_a"]
    elif score == "concat":
        raw = np.array([p["v_a"] @ np.tanh(p["W_a"] @ np.concatenate([q, key])) for key in k])
    elif score == "location":
        raw = (p["W_a"] @ q)[:S]
    else:
        pytest.fail(f"write {score}'s score by hand from its paper here")
    gauss = np.ones(S)
    if score in LOCAL:
        pos = min(t, S - 1) if score == "local_m" else S / (1 + np.exp(-p["v_p"] @ np.tanh(p["W_p"] @ q)))
        raw = np.where(np.abs(np.arange(S) - pos) <= D, raw, -np.inf)
        if score == "local_p":
            gauss = np.exp(-((np.arange(S) - pos) ** 2) / (2 * (D / 2) ** 2))
    a = np.exp(raw - raw.max())
    return raw, a / a.sum() * gauss


@pytest.mark.parametrize("score", list(SCORES))
def test_worked_example_every_score(score):
    q, keys = [3.0, 1.0], [[2.0, 6.0], [1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]
    chosen = {
        "W_a": [[0.5, -1.0], [2.0, 0.25]],
        "U_a": [[1.0, 0.0], [-1.0, 0.5]],
        "v_a": [1.0, -0.5],
        "W_p": [[0.2, 0.1], [0.0, -0.3]],
        "v_p": [1.0, 2.0],
    }
    defaults = explain.default_parameters(score, 2, len(keys))
    given = {
        name: chosen[name] for name in defaults if name in chosen and np.shape(chosen[name]) == defaults[name].shape
    }
    ex = explain.worked_example(q, keys, score, parameters=given, window=1, step=2)
    assert set(ex.parameters) == set(defaults)
    for name, value in given.items():
        np.testing.assert_array_equal(ex.parameters[name], value)
    raw, weights = _by_hand(score, np.array(q), np.array(keys), ex.parameters, t=2, D=1)
    np.testing.assert_allclose(ex.scores, raw, rtol=1e-12)
    np.testing.assert_allclose(ex.weights, weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ex.context, weights @ np.array(keys), rtol=1e-12, atol=1e-15)
    for s, steps in enumerate(ex.steps):
        by_label = {x.label: x.value for x in steps}
        assert by_label["e"] == pytest.approx(raw[s]) and by_label["a"] == pytest.approx(weights[s])
    lines = explain.worked_lines(ex)
    assert sum(line.startswith("e_{2,") for line in lines["score"]) == len(keys)
    assert all(line.startswith(f"{name} = ") for name, line in zip(ex.parameters, lines["parameters"], strict=True))
    assert lines["context"][0].endswith(vector(ex.context))


def test_worked_example_keeps_the_pages_dot_and_general_numbers():
    ex = explain.worked_example([3, 1], [[2, 6], [1, 0], [0, 2]], "dot")
    assert ex.scores.tolist() == [12, 3, 2]
    general = explain.worked_example([3, 1], [[2, 6]], "general", [[1, 2], [0, -1]])
    assert general.scores.tolist() == [36.0] and general.transformed.tolist() == [[14.0, -6.0]]


def test_worked_example_parameter_errors_say_what_to_type():
    with pytest.raises(InputError, match=r"W_a must be 2 × 2"):
        explain.worked_example([3, 1], [[2, 6]], "general", [[1, 2, 3]])
    with pytest.raises(InputError, match=r"W_a must be 2 × 4 for concat"):
        explain.worked_example([3, 1], [[2, 6]], "concat", parameters={"W_a": [[1, 0], [0, 1]]})
    with pytest.raises(InputError, match="dot has no parameter 'W_a'"):
        explain.worked_example([3, 1], [[2, 6]], "dot", parameters={"W_a": [[1, 0], [0, 1]]})
    with pytest.raises(InputError, match="same length"):
        explain.worked_example([3, 1], [[2, 6]], "general", [[1, 2], [3]])
    ex = explain.worked_example([3, 1], [[2, 6]], "additive", parameters={"v_a": [1, 1, 1]})  # A = 3
    assert ex.parameters["W_a"].shape == (3, 2) and ex.parameters["U_a"].shape == (3, 2)


def test_a_parameter_of_one_number_is_worked_through_and_written_as_a_number(gain_dot):
    """A registered score whose parameter has no rows or columns (``g``: a gain, as a temperature)."""
    assert explain.default_parameters(gain_dot, 2, 3) == {"g": 2.0}
    ex = explain.worked_example([3, 1], [[2, 6], [1, 0]], gain_dot, parameters={"g": 3.0})
    assert ex.scores.tolist() == [36.0, 9.0]
    assert explain.worked_lines(ex)["parameters"] == ["g = 3"]
    with pytest.raises(InputError, match="g must be one number for gain_dot"):
        explain.worked_example([3, 1], [[2, 6]], gain_dot, parameters={"g": [1, 2]})
    with pytest.raises(InputError, match="v_a is empty"):
        explain.worked_example([3, 1], [[2, 6]], "additive", parameters={"v_a": []})


def test_a_formula_reads_the_query_of_the_style_asked():
    from attnviz.explain import score_formula

    assert "s_{t-1}" in score_formula("additive") and "h_t" not in score_formula("additive")  # as Bahdanau wrote it
    assert "h_t" in score_formula("additive", "luong") and "s_{t-1}" not in score_formula("additive", "luong")
    assert "s_{t-1}" in score_formula("general", "bahdanau")


@pytest.mark.parametrize("content", ["dot", "general", "additive"])
def test_a_local_score_counts_its_own_content_score(content):
    """local-p with a dot content score holds W_p and v_p only; with additive, W_a, U_a and v_a too:
    the counts are the module's own, not general's."""
    from attnviz.model import Attention

    shapes = score_parameters("local_p", 8, 8, 6, 20, local_content=content)
    layer = Attention("local_p", 8, 8, 6, 20, local_content=content)
    assert sum(math.prod(s) for s in shapes.values()) == sum(p.numel() for p in layer.parameters())
    assert ("W_a" in shapes) == (content != "dot")  # dot has nothing to learn but W_p and v_p


def test_sizes_a_score_cannot_take_raise_a_config_error():
    with pytest.raises(ConfigError, match="dot"):
        score_parameters("dot", 16, 24, 16, 20)


def test_the_local_m_formula_says_where_its_window_sits_past_the_source():
    assert r"p_t = \min(t, S - 1)" in score_formula("local_m")
    assert r"\sigma(" not in score_formula("local_p") and r"\operatorname{sigmoid}" in score_formula("local_p")


def test_the_location_reading_compares_nothing():
    reading = score_reading("location", "luong")
    assert "compared" not in reading and "from it alone" in reading
