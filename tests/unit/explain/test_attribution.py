"""Gradient attributions: each method against an independent computation, agreement with
attention, the shared model left untouched, bad input."""

import copy
import json

import numpy as np
import pytest
import torch
from captum.attr import IntegratedGradients

from attnviz.data.vocab import PAD_ID, UNK_ID
from attnviz.decoding.search import forced
from attnviz.errors import InputError
from attnviz.explain import attribution
from attnviz.explain.attribution import Forced, attribute, spearman
from tests.support.tiny import tiny_translator

SOURCE, REFERENCE = "a b c d", "d c b a"  # distinct tokens: changing one embedding row changes one position
VARIANTS = [
    ("additive", "bahdanau", {}),
    ("dot", "luong", {}),
    ("local_p", "luong", {"input_feeding": True}),
    ("general", "bahdanau", {"encoder": "lstm", "cell": "lstm"}),
    ("scaled_dot", "luong", {"encoder": "transformer", "emb_dim": 24}),
]


@pytest.fixture(scope="module", params=VARIANTS, ids=lambda v: f"{v[0]}-{v[1]}-{v[2].get('encoder', 'gru')}")
def translator(request, corpus):
    score, style, options = request.param
    return tiny_translator(corpus, score=score, style=style, **options)


def ids(tr, source=SOURCE, reference=REFERENCE):
    src = tr.source(source).ids
    return src, tr.tgt_vocab.encode(tr.tgt_tokenizer.tokenize(reference), eos=True)


def forced_with_rows(tr, rows: dict[int, torch.Tensor | None]) -> np.ndarray:
    """Token log-probs of forced decoding with source embedding rows replaced (None: all rows zero)."""
    model = copy.deepcopy(tr.model)
    weight = model.encoder.embedding.weight
    with torch.no_grad():
        for token, row in rows.items():
            if token is None:
                weight.zero_()
            else:
                weight[token] = row
    return forced(model, *ids(tr)).token_log_probs


def test_integrated_gradients_are_complete(translator):
    """Sum over source tokens = f(x) - f(zero embedding), up to the returned delta."""
    a = attribute(translator, SOURCE, REFERENCE, method="ig", steps=64)
    f_x = forced_with_rows(translator, {})
    f_b = forced_with_rows(translator, {None: None})
    gap = a.values.sum(1) - (f_x - f_b)  # [T]
    assert np.allclose(gap, a.delta, atol=1e-4)
    assert np.abs(a.delta).max() < 0.05 * max(1.0, np.abs(f_x - f_b).max())
    assert np.allclose(a.log_probs, f_x, atol=1e-5)


def test_integrated_gradients_equal_captum_per_step(corpus):
    """The batched backward gives Captum's IntegratedGradients, run one target step at a time."""
    tr = tiny_translator(corpus, score="concat", style="bahdanau")
    a = attribute(tr, SOURCE, REFERENCE, method="ig", steps=16, baseline="unk")
    f = Forced.build(tr.model, *ids(tr))
    x, b = f.embeddings(), f.baseline("unk")
    ig = IntegratedGradients(f.log_prob_at)
    for t in range(len(a.target_tokens)):
        ref, delta = ig.attribute(
            x[None],
            baselines=b[None],
            additional_forward_args=(torch.tensor([t]),),
            n_steps=16,
            return_convergence_delta=True,
        )
        assert np.allclose(a.values[t], ref.sum(-1)[0].detach().numpy(), atol=1e-5)
        assert a.delta[t] == pytest.approx(float(delta), abs=1e-5)


def test_gradient_x_input_is_the_derivative_along_each_embedding(translator):
    """x_s · ∂f/∂x_s = d/dε f(x_s scaled by 1 + ε): central differences on re-decoding."""
    a = attribute(translator, SOURCE, REFERENCE, method="gxi")
    weight = translator.model.encoder.embedding.weight.detach()
    eps = 1e-3
    for s, token in enumerate(ids(translator)[0]):
        up = forced_with_rows(translator, {token: weight[token] * (1 + eps)})
        down = forced_with_rows(translator, {token: weight[token] * (1 - eps)})
        assert np.allclose(a.values[:, s], (up - down) / (2 * eps), atol=2e-3)


@pytest.mark.parametrize("baseline", ["zeros", "unk"])
def test_occlusion_equals_redecoding_without_the_token(translator, baseline):
    a = attribute(translator, SOURCE, REFERENCE, method="occlusion", baseline=baseline)
    weight = translator.model.encoder.embedding.weight.detach()
    row = torch.zeros_like(weight[0]) if baseline == "zeros" else weight[UNK_ID]
    f_x = forced_with_rows(translator, {})
    for s, token in enumerate(ids(translator)[0]):
        assert np.allclose(a.values[:, s], f_x - forced_with_rows(translator, {token: row}), atol=1e-5)
    assert a.delta is None


def test_a_pad_baseline_that_is_all_zeros_says_it_is_the_zero_baseline(translator):
    assert not translator.model.encoder.embedding.weight[PAD_ID].any()  # padding_idx keeps it zero
    pad = attribute(translator, SOURCE, REFERENCE, method="occlusion", baseline="pad")
    zeros = attribute(translator, SOURCE, REFERENCE, method="occlusion", baseline="zeros")
    np.testing.assert_array_equal(pad.values, zeros.values)
    assert pad.baseline == "the <pad> embedding (all zeros in this model: the same as the zero baseline)"
    assert zeros.baseline == "the zero embedding"
    unk = attribute(translator, SOURCE, REFERENCE, method="occlusion", baseline="unk")
    assert unk.baseline == "the <unk> embedding"


def test_greedy_decode_and_agreement_fields(corpus):
    tr = tiny_translator(corpus)
    al = tr.translate(SOURCE)
    a = attribute(tr, SOURCE, method="gxi")
    assert a.target_tokens == al.target_tokens and a.source_tokens == al.source_tokens
    assert a.values.shape == a.attention.shape == (len(al.target_tokens), len(al.source_tokens))
    assert np.allclose(a.log_probs, al.token_log_probs, atol=1e-5)
    for t in range(len(a.target_tokens)):
        assert a.attention_top[t] == al.source_tokens[int(a.attention[t].argmax())]
        assert a.attribution_top[t] == al.source_tokens[int(a.values[t].argmax())]
        assert a.top1[t] == (a.attention[t].argmax() == a.values[t].argmax())
    assert "mean Spearman" in a.summary() and f"/{len(a.target_tokens)} steps" in a.summary()
    written = a.to_dict()
    json.dumps(written, allow_nan=False)
    assert written["attention"] == al.to_dict()["weights"]  # the trace's weights, same key order and digits
    assert written["values"][0] == [float(f"{v:.6g}") for v in a.values[0]]  # 6 significant digits


def test_with_a_beam_it_explains_the_beam_translation(corpus):
    """The app's line above the maps is the beam's translation: the attribution must be of those tokens."""
    tr = tiny_translator(corpus)
    sources = ["a b c d", "d d a", "c a b b d", "b"]
    for source in sources:
        beam = tr.translate(source, beam_size=4)
        a = attribute(tr, source, method="gxi", beam_size=4)
        assert a.target_tokens == beam.target_tokens
        assert np.allclose(a.log_probs, beam.token_log_probs, atol=1e-5)
    greedy = [tr.translate(s).target_tokens for s in sources]
    beams = [tr.translate(s, beam_size=4).target_tokens for s in sources]
    assert greedy != beams or attribute(tr, sources[0], method="gxi").target_tokens == greedy[0]
    with pytest.raises(InputError, match="a reference is forced, not searched"):
        attribute(tr, SOURCE, REFERENCE, beam_size=3)


def test_spearman():
    assert spearman(np.array([1, 2, 3]), np.array([10, 20, 30])) == pytest.approx(1.0)
    assert spearman(np.array([1, 2, 3]), np.array([3, 2, 1])) == pytest.approx(-1.0)
    assert spearman(np.array([1, 1, 2, 3]), np.array([0, 0, 5, 9])) == pytest.approx(1.0)  # ties share ranks
    assert np.isnan(spearman(np.array([1.0, 1.0]), np.array([0.2, 0.8])))


def test_float16_shared_model_is_never_modified(corpus):
    tr = tiny_translator(corpus)
    tr.model.half().requires_grad_(False)
    before = {k: v.clone() for k, v in tr.model.state_dict().items()}
    with torch.inference_mode():  # as the app's decoding threads may be
        a = attribute(tr, SOURCE, REFERENCE, method="ig", steps=8)
    assert np.isfinite(a.values).all()
    for name, p in tr.model.named_parameters():
        assert p.dtype == torch.float16 and not p.requires_grad and p.grad is None
        assert torch.equal(p, before[name])


def test_bad_input(corpus):
    tr = tiny_translator(corpus)
    too_long = " ".join(["a"] * (attribution.MAX_SOURCE_TOKENS + 1))
    for kwargs, message in [
        ({"source": ""}, "empty"),
        ({"source": "a " * 1000}, "at most"),
        ({"source": too_long}, f"at most {attribution.MAX_SOURCE_TOKENS}"),
        ({"method": "saliency"}, "choose one of ig, gxi, occlusion"),
        ({"baseline": "mean"}, "choose one of zeros, pad, unk"),
        ({"steps": 0}, "between 1 and"),
        ({"method": "gxi", "baseline": "unk"}, "no baseline"),
        ({"target": ""}, "the reference is empty; give the translation to explain, or none to explain the model.s own"),
        ({"target": "   "}, "the reference is empty"),
        ({"target": " ".join(["a"] * attribution.MAX_TARGET_TOKENS)}, "Shorten"),
    ]:
        with pytest.raises(InputError, match=message):
            attribute(tr, **{"source": SOURCE, **kwargs})


def test_ig_passes_hold_at_most_max_bytes_and_give_the_same_values(corpus, monkeypatch):
    """A model with a big vocabulary held every IG point's [T, V] log-probabilities, and their gradient
    for 32 target steps at once (12 GB with 40,000 words): passes are now cut to MAX_BYTES."""
    tr = tiny_translator(corpus)
    whole = attribute(tr, SOURCE, REFERENCE, method="ig", steps=16)
    T, V = len(whole.target_tokens), tr.config.tgt_vocab_size
    monkeypatch.setattr(attribution, "MAX_BYTES", 4 * T * V * 6)  # six [T, V] blocks: 3 points a pass
    rows = []
    log_probs = Forced.log_probs

    def counted(self, embedded):
        rows.append(embedded.size(0))
        return log_probs(self, embedded)

    monkeypatch.setattr(Forced, "log_probs", counted)
    cut = attribute(tr, SOURCE, REFERENCE, method="ig", steps=16)
    assert max(rows) == 3 and rows.count(3) == 5  # 16 points: five passes of 3 and one of 1
    np.testing.assert_allclose(cut.values, whole.values, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(cut.delta, whole.delta, atol=1e-5)
