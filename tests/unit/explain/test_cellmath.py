"""The arithmetic of one cell against plain torch on each model's own parameters, for every
score x style."""

from __future__ import annotations

import csv
import io
import json
import math
from functools import cache

import numpy as np
import pytest
import torch

from attnviz.data import load_corpus
from attnviz.errors import InputError
from attnviz.explain.cellmath import CellMath, cell_numbers, formula_for, latex_lines
from attnviz.explain.steps import fraction, num, step, vector, weight_steps
from attnviz.model.config import STYLES
from attnviz.model.scores import SCORES
from attnviz.store import pretrained_dir
from attnviz.store.checkpoint import load_checkpoint
from tests.support.app import EXAMPLE
from tests.support.attention import tiny_attention
from tests.support.tiny import reverse_corpus, tiny_translator

LOCAL = ("local_m", "local_p")
TINY_SENTENCE = "a b c d e"


@cache
def model(score: str, style: str, **options):
    """The shipped toy-fr model of this score and style, else a tiny untrained one (still training
    in the background, or never shipped): (translator, sentence)."""
    path = pretrained_dir() / f"toy-fr-{score.replace('_', '-')}-{style}.safetensors"
    if path.is_file() and not options:
        tr = load_checkpoint(path)
        return tr, tr.meta["example"]
    return tiny_translator(reverse_corpus(), score, style, **options), TINY_SENTENCE


def _p(linear) -> torch.Tensor:
    return linear.weight.detach().double()


def plain_numbers(tr, al, text: str, t: int, s: int) -> dict[str, torch.Tensor]:
    """Every intermediate of cell (t, s), from the parameters by the paper's formulas."""
    cfg, score_fn = tr.config, tr.model.decoder.attention.score
    h = torch.tensor(tr.annotations(text), dtype=torch.float64)  # [S, K]
    q = torch.tensor(al.states[t], dtype=torch.float64)  # [Q]
    S, Q = h.shape[0], q.shape[0]
    local = cfg.score in LOCAL
    content, inner = (cfg.local_content, score_fn.content) if local else (cfg.score, score_fn)
    out = {"query": q}
    key = h
    if SCORES[content].needs_equal_dims and h.shape[1] == 2 * Q:
        key = h[:, :Q] + h[:, Q:]  # forward + backward direction
        out["annotation"], out["key (directions summed)"] = h[s], key[s]
    elif cfg.score != "location":
        out["annotation"] = h[s]
    if cfg.score == "local_m":
        out["p_t"] = torch.tensor(float(min(t, S - 1)))
    if cfg.score == "local_p":
        out["W_p query"] = _p(score_fn.W_p) @ q
        out["tanh(W_p query)"] = torch.tanh(out["W_p query"])
        out["v_p . tanh"] = _p(score_fn.v_p)[0] @ out["tanh(W_p query)"]
        out["sigmoid"] = torch.sigmoid(out["v_p . tanh"])
        out["p_t"] = S * out["sigmoid"]

    def energy(j: int, record: bool) -> torch.Tensor:
        found = {}
        if content == "dot":
            e = q @ key[j]
        elif content == "scaled_dot":
            found["dot product"] = q @ key[j]
            e = found["dot product"] / math.sqrt(key.shape[1])
        elif content == "general":
            found["W_a key"] = _p(inner.W_a) @ key[j]
            e = q @ found["W_a key"]
        elif content == "additive":
            found["W_a query"], found["U_a key"] = _p(inner.W_q) @ q, _p(inner.W_k) @ key[j]
            found["sum"] = found["W_a query"] + found["U_a key"]
            found["tanh"] = torch.tanh(found["sum"])
            e = _p(inner.v_a)[0] @ found["tanh"]
        elif content == "concat":
            W_a = torch.cat([_p(inner.W_q), _p(inner.W_k)], dim=1)  # [A, Q + K]
            found["W_a [query; key]"] = W_a @ torch.cat([q, key[j]])
            found["tanh"] = torch.tanh(found["W_a [query; key]"])
            e = _p(inner.v_a)[0] @ found["tanh"]
        elif content == "location":
            found["W_a query"] = _p(inner.W_a) @ q
            found["cut to the source"] = found["W_a query"][:S]
            e = found["cut to the source"][j]
        else:
            pytest.fail(f"write {content}'s arithmetic by hand from its paper here")
        if record:
            out.update(found)
        return e

    row = torch.stack([energy(j, j == s) for j in range(S)])  # [S]
    if local:
        p, D = out["p_t"], cfg.window
        out["content score"] = row[s]
        out["distance to p_t"] = (s - p).abs()
        row = row.masked_fill((torch.arange(S) - p).abs() > D, -math.inf)
    out["e"] = row[s]
    a = torch.softmax(row, dim=0)  # [S]
    if math.isfinite(row[s]):
        out["softmax"] = a[s]
    if cfg.score == "local_p":
        sigma = cfg.window / 2
        gauss = torch.exp(-((torch.arange(S) - out["p_t"]) ** 2) / (2 * sigma**2))
        if math.isfinite(row[s]):
            out["gaussian"] = gauss[s]
        a = a * gauss
    out["a"] = a[s]
    out["a * annotation"] = a[s] * h[s]
    c = out["context"] = a @ h  # [K]
    dec = tr.model.decoder
    if cfg.style == "luong":
        out["W_c [c_t; h_t]"] = _p(dec.W_c) @ torch.cat([c, q])
        out["attentional state"] = torch.tanh(out["W_c [c_t; h_t]"])
        features = out["attentional state"]
    else:
        y = tr.tgt_vocab.stoi.get(al.target_tokens[t - 1], 1) if t else 2  # <unk> = 1, <bos> = 2
        out["previous token"] = torch.tensor(float(y))
        x = torch.cat([dec.embedding.weight[y].detach().double(), c])  # [E + K]
        rnn = dec.rnn
        gi = rnn.weight_ih_l0.detach().double() @ x + rnn.bias_ih_l0.detach().double()
        gh = rnn.weight_hh_l0.detach().double() @ q + rnn.bias_hh_l0.detach().double()
        (ir, iz, i_n), (hr, hz, hn) = gi.chunk(3), gh.chunk(3)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        out["s_t"] = (1 - z) * torch.tanh(i_n + r * hn) + z * q  # the GRU equations
        features = torch.cat([out["s_t"], c, dec.embedding.weight[y].detach().double()])
    logits = _p(dec.out) @ features + dec.out.bias.detach().double()
    out["probabilities"] = torch.softmax(logits, dim=0)
    return out


def _check_cell(tr, al, text: str, cell: CellMath, t: int, s: int) -> None:
    expected = plain_numbers(tr, al, text, t, s)
    probs = expected.pop("probabilities")
    labels = [step.label for step in cell.steps]
    for label, value in expected.items():
        assert label in labels, f"{al.score}/{al.style}: no step {label!r} in {labels}"
        np.testing.assert_allclose(cell[label].value, value.numpy(), rtol=1e-5, atol=1e-5, err_msg=label)
    # the same numbers as the heatmap and the decode
    np.testing.assert_allclose(cell["e"].value, al.scores[t, s], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cell["a"].value, al.weights[t, s], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cell["context"].value, al.contexts[t], rtol=1e-5, atol=1e-5)
    if "p_t" in labels:
        np.testing.assert_allclose(cell["p_t"].value, al.positions[t], rtol=1e-5, atol=1e-5)
    if al.style == "bahdanau" and t + 1 < len(al.states):
        np.testing.assert_allclose(cell["s_t"].value, al.states[t + 1], rtol=1e-5, atol=1e-5)
    top = probs.topk(len(cell.top_words))
    assert [w for w, _ in cell.top_words] == [tr.tgt_vocab.itos[i] for i in top.indices]
    np.testing.assert_allclose([p for _, p in cell.top_words], top.values.numpy(), rtol=1e-5, atol=1e-6)
    assert cell.token_probability == pytest.approx(math.exp(al.token_log_probs[t]), rel=1e-4, abs=1e-6)
    lines = latex_lines(cell)
    assert lines[0] == formula_for(SCORES[al.score].formula, al.style)
    other = {"bahdanau": "h_t", "luong": "s_{t-1}"}[al.style]  # the query this style does not read
    assert other not in lines[0] and other not in lines[1], lines[:2]  # the formula, then the query's line
    assert not any("e-0" in line or "e+0" in line for line in lines)
    if al.score == "location":
        assert "annotation" not in labels  # it reads no key


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("score", list(SCORES))
def test_every_intermediate_matches_plain_torch(score, style):
    tr, text = model(score, style)
    al = tr.translate(text)
    n_tgt, n_src = al.weights.shape
    for t in sorted({0, 1 % n_tgt, n_tgt - 1}):
        for s in range(n_src):
            _check_cell(tr, al, text, cell_numbers(tr, al, t, s), t, s)


def test_forced_and_beam_decodes_give_the_steps_own_token():
    tr, text = model("additive", "bahdanau")
    greedy = tr.translate(text)
    target = " ".join(reversed(greedy.output_tokens))  # a target the model would not choose
    for al in (tr.align(text, target), tr.translate(text, beam_size=3)):
        for t in range(len(al.target_tokens)):
            cell = cell_numbers(tr, al, t, int(np.argmax(al.weights[t])))
            _check_cell(tr, al, text, cell, t, int(np.argmax(al.weights[t])))


@pytest.mark.parametrize("style", STYLES)
def test_lstm_stacked_decoder_and_transformer_encoder(style):
    """A Bahdanau LSTM of two layers has more state than s_{t-1}: the prefix is decoded again.
    A Transformer encoder's annotations have the query's size: dot needs no bridge."""
    tr, text = model("additive", style, cell="lstm", dec_layers=2)
    al = tr.translate(text)
    for t in range(len(al.target_tokens)):
        cell = cell_numbers(tr, al, t, 0)
        np.testing.assert_allclose(cell["e"].value, al.scores[t, 0], rtol=1e-5, atol=1e-5)
        assert cell.token_probability == pytest.approx(math.exp(al.token_log_probs[t]), rel=1e-4)
    tr, text = model("dot", style, encoder="transformer", emb_dim=24, heads=2)
    al = tr.translate(text)
    cell = cell_numbers(tr, al, 0, 1)
    assert "key (directions summed)" not in [x.label for x in cell.steps]
    np.testing.assert_allclose(cell["e"].value, al.scores[0, 1], rtol=1e-5, atol=1e-5)


def test_forced_attention_is_reported_and_used():
    tr, text = model("additive", "bahdanau")
    n_src = len(tr.translate(text).source_tokens)
    al = tr.translate(text, overrides={1: [1.0] + [0.0] * (n_src - 1)})
    cell = cell_numbers(tr, al, 1, 0)
    assert cell["a (forced)"].value == pytest.approx(1.0)
    assert cell["a"].value < 1.0  # what the model itself would have given
    np.testing.assert_allclose(cell["context"].value, al.contexts[1], rtol=1e-5, atol=1e-5)
    assert cell.token_probability == pytest.approx(math.exp(al.token_log_probs[1]), rel=1e-4)


def test_downloads_keep_every_entry():
    tr, text = model("additive", "bahdanau")
    al = tr.translate(text)
    cell = cell_numbers(tr, al, 0, 1)
    doc = json.loads(cell.to_json())
    steps = {x["label"]: x for x in doc["steps"]}
    assert len(steps["annotation"]["value"]) == tr.config.memory_dim
    assert steps["e"]["value"] == pytest.approx(float(al.scores[0, 1]), rel=1e-5)
    assert doc["top_words"][0][0] == al.target_tokens[0]
    rows = list(csv.DictReader(io.StringIO(cell.to_csv().removeprefix("\ufeff"))))
    assert sum(r["label"] == "U_a key" for r in rows) == tr.config.attn_dim
    assert [float(r["value"]) for r in rows if r["label"] == "query"] == pytest.approx(al.states[0].tolist())
    assert {(r["t"], r["s"], r["target_token"], r["source_token"]) for r in rows} == {
        ("0", "1", al.target_tokens[0], al.source_tokens[1])
    }  # the CSV says which cell it is
    top = [(r["word"], float(r["value"])) for r in rows if r["label"].startswith("top ")]
    assert top == [(w, pytest.approx(p)) for w, p in doc["top_words"]]  # each probability with its word
    assert r"\ldots" in cell["query"].latex and r"\lVert \cdot \rVert" in cell["query"].latex


def test_the_csv_neutralises_labels_that_a_spreadsheet_would_run_and_keeps_numbers_exact():
    """A label from a registered score's terms may be any text: the CSV goes through the project's
    one guard (``attnviz.store.safe_cell``), while negative and infinite values stay numbers."""
    steps = [
        step("=cmd|' /C calc'!A0", "x", -0.1),
        step("@SUM(1)", "x", [1 / 3, -2.5e-7]),
        step("e", "e", -math.inf),
    ]
    cell = CellMath(0, 0, "dot", "luong", "f", "=a", "+b", steps)
    rows = list(csv.reader(io.StringIO(cell.to_csv().removeprefix("\ufeff"))))
    cell_of = ["0", "0", "'+b", "'=a"]  # t, s, target and source token: tokens are guarded too
    assert rows == [
        ["t", "s", "target_token", "source_token", "line", "label", "index", "word", "value"],
        [*cell_of, "0", "'=cmd|' /C calc'!A0", "", "", "-0.1"],
        [*cell_of, "1", "'@SUM(1)", "0", "", repr(1 / 3)],
        [*cell_of, "1", "'@SUM(1)", "1", "", "-2.5e-07"],
        [*cell_of, "2", "e", "", "", "-inf"],
    ]


def test_local_cell_outside_the_window():
    tr, text = model("local_m", "luong")
    al = tr.translate(text)
    s = len(al.source_tokens) - 1  # far from p_0 = 0 when the sentence is longer than the window
    assert s > al.window
    cell = cell_numbers(tr, al, 0, s)
    assert cell["e"].value == -math.inf and cell["a"].value == 0.0
    assert math.isfinite(cell["content score"].value)  # the score is computed, then masked
    assert next(x for x in json.loads(cell.to_json())["steps"] if x["label"] == "e")["value"] is None  # -inf


def test_bad_cells_and_foreign_alignments():
    tr, text = model("additive", "bahdanau")
    al = tr.translate(text)
    with pytest.raises(InputError, match="outside the alignment"):
        cell_numbers(tr, al, len(al.target_tokens), 0)
    other, _ = model("general", "bahdanau")
    with pytest.raises(InputError, match="general/bahdanau"):
        cell_numbers(other, al, 0, 0)


def test_number_formatting():
    assert num(1.5e-5) == r"1.5 \times 10^{-5}" and num(5.881) == "5.881" and num(-math.inf) == r"-\infty"
    assert vector(np.array([1.0, 2.0])) == "[1, 2]"
    assert vector(np.arange(6.0)).startswith(r"[0, 1, 2, 3, \ldots]\ (\lVert \cdot \rVert = 7.416)")


def test_a_softmax_fraction_shows_two_different_numbers_as_different():
    # exp(12) over exp(12) + exp(3) + exp(2): the Learn page's example, a weight of 0.9998
    assert fraction(162754.79, 162782.2) == r"\frac{1.6275 \times 10^{5}}{1.6278 \times 10^{5}}"
    assert fraction(2.0, 7.389) == r"\frac{2}{7.389}" and fraction(1.0, 1.0) == r"\frac{1}{1}"


def test_math_panel_numbers_match_the_decode(app_models_dir):
    for name in ("toyfr-additive-bahdanau", "toyfr-localp-luong"):
        tr = load_checkpoint(app_models_dir / f"{name}.safetensors")
        al = tr.translate(EXAMPLE)
        t, s = 0, int(np.argmax(al.weights[0]))
        lines = latex_lines(cell_numbers(tr, al, t, s))
        assert lines[0] == formula_for(type(tr.model.decoder.attention.score).formula, al.style)
        assert any(f"= {al.weights[t, s]:.4g}" in line for line in lines)
        if al.score == "local_p":
            assert any(r"\exp\left(-\frac{(s - p_t)^2" in line for line in lines)


def _subword_translator(tmp_path, style: str):
    rows = [f"Das {a}{b} ist groß.\tThe {b} {a} is big." for a in ("haus", "hund") for b in ("tür", "baum")]
    (tmp_path / "pairs.tsv").write_text("de\ten\n" + "\n".join(rows * 5) + "\n", encoding="utf-8")
    corpus = load_corpus(f"{tmp_path / 'pairs.tsv'}?src=de&tgt=en", dedupe=False, n_valid=2, n_test=2, subwords=8)
    return tiny_translator(corpus, "additive", style)


@pytest.mark.parametrize("style", STYLES)
def test_given_words_that_the_tokenizer_cuts_keep_their_ids(tmp_path, style):
    # a given word the tokenizer cuts ("noire." -> noire@@ .) is read as the model read it, not as <unk>
    for tr, source, target in (
        (model("additive", style)[0], ["the", "black", "cat."], ["le", "chat", "noir."]),
        (_subword_translator(tmp_path, style), ["Das", "Haustür", "ist", "groß."], ["The", "door", "is", "big."]),
    ):
        al = tr.align(source, target)
        assert "@@" in "".join(al.source_tokens) and "@@" in "".join(al.target_tokens)
        for t in range(len(al.target_tokens)):
            cell = cell_numbers(tr, al, t, 0)
            assert cell.token_probability == pytest.approx(math.exp(al.token_log_probs[t]), rel=1e-4, abs=1e-7)
            if style == "bahdanau" and t + 1 < len(al.states):
                np.testing.assert_allclose(cell["s_t"].value, al.states[t + 1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("top", [-800.0, -60.0, 0.5, 60.0, 900.0])
def test_the_softmax_line_stays_finite_whatever_the_scores(top):
    row = torch.tensor([top, top - 1.0, top - 30.0, -math.inf], dtype=torch.float64)  # [S]
    expected = torch.softmax(row, dim=0)
    softmax, a = weight_steps(tiny_attention("dot"), row, 3, 1, None)
    assert a.value == pytest.approx(float(expected[1]), rel=1e-12)
    assert "nan" not in softmax.latex and r"\infty" not in softmax.latex and "- -" not in softmax.latex


def test_the_share_of_the_context_is_a_projection_on_it():
    tr = tiny_translator(reverse_corpus(), "general", "luong")
    al = tr.translate("a b c d e")
    shares = []
    for s in range(len(al.source_tokens)):
        cell = cell_numbers(tr, al, 0, s)
        part, context = cell["a * annotation"].value, cell["context"].value
        share = cell["share of c_t"]
        assert share.value == pytest.approx(part @ context / (context @ context), rel=1e-9)
        assert share.shown.startswith(f"{float(share.value) * 100:.1f}")
        shares.append(float(share.value))
    assert sum(shares) == pytest.approx(1.0)  # the terms of c_t add up to c_t
    np.testing.assert_allclose(context, al.contexts[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("score", ["additive", "dot"])
def test_the_context_averages_the_annotations_h_s_whatever_the_score_reads(score):
    """c_t = sum_s a_{t,s} h_s over whole annotations; the score reads \\bar h_s, which is h_s itself, or for
    dot on a bidirectional encoder its two directions summed (a key of half the annotation's size)."""
    tr, text = model(score, "luong")
    cell = cell_numbers(tr, tr.translate(text), 0, 1)
    formulas = {x.label: x.formula for x in cell.steps}
    assert formulas["context"] == r"c_{0} = \sum_{s'} a_{0,s'} h_{s'}"
    if score == "dot":
        assert formulas["key (directions summed)"].startswith(r"\bar h_{1} = ")
    else:
        assert formulas["annotation"] == r"\bar h_{1} = h_{1}"


def test_a_decode_that_cuts_a_word_its_own_way_is_not_taken_for_a_merged_one():
    """A model may write a word in pieces other than the tokenizer's cut (g@@ er where it cuts ger): each piece
    is still a token it emitted, so the cell's numbers are there; an alignment merged into words is refused."""
    from attnviz.links import for_reading

    path = pretrained_dir() / "multi30k-de-en-general-luong.safetensors"
    if not path.is_file():
        pytest.skip("the Multi30k models are not installed here")
    tr = load_checkpoint(path)
    al = tr.translate("Ein Boston Terrier läuft über saftig-grünes Gras vor einem weißen Zaun.")
    assert tr.tgt_tokenizer.recut(al.output_tokens) is None  # not the tokenizer's own cut
    cell = cell_numbers(tr, al, 3, 2)
    np.testing.assert_allclose(cell["a"].value, al.weights[3, 2], rtol=1e-5, atol=1e-5)
    with pytest.raises(InputError, match="merged into words"):
        cell_numbers(tr, for_reading(al, False, True).alignment, 0, 0)
