"""The alignment history: recorded at the start, at geometric steps and at every epoch end, with
AER and entropy on gold probes; bounded; continued by a resumed training; off when asked."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.data import load_corpus
from attnviz.store import load_checkpoint
from attnviz.training.config import TrainConfig
from attnviz.training.fit import fit
from attnviz.training.history import MAX_HISTORY_BYTES, TEST_PROBES, HistoryRecorder, choose_probes, geometric
from attnviz.training.recipes import run_recipe
from tests.support.jobs import tiny_recipe
from tests.support.tiny import tiny_translator


def test_geometric_points_are_dense_early_and_sparse_later():
    assert [s for s in range(1, 100) if geometric(s)] == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96]
    assert not geometric(0) and geometric(1024) and geometric(1536) and not geometric(1025)


def test_a_training_records_its_probes_at_the_start_geometric_steps_and_epoch_ends(corpus):
    translator = tiny_translator(corpus)
    reports = []
    fit(translator, corpus, TrainConfig(epochs=3, batch_size=8, lr=1e-2, patience=None), callback=reports.append)
    history = translator.history
    steps_per_epoch = 5  # 40 pairs in batches of 8
    kinds = [(p["kind"], p["step"]) for p in history.points]
    assert kinds == [
        ("start", 0),
        ("step", 1),
        ("step", 2),
        ("step", 3),
        ("step", 4),
        ("epoch", 5),
        ("step", 6),
        ("step", 8),
        ("epoch", 10),
        ("step", 12),
        ("epoch", 15),
    ]
    assert [p["epoch"] for p in history.points if p["kind"] == "epoch"] == [1, 2, 3]
    assert history.points[-1]["epochs"] == pytest.approx(15 / steps_per_epoch)
    assert history.points[0]["loss"] is None and all(p["loss"] > 0 for p in history.points[1:])
    assert all(p["valid_loss"] is not None for p in history.points if p["kind"] == "epoch")
    # the reverse task has gold links: every point has an AER and an entropy
    assert all(0 <= p["aer"] <= 1 and p["entropy"] > 0 for p in history.points)
    assert len(history.probes) == 1 + TEST_PROBES  # the data's example sentence, then the test pairs
    assert history.probes[0].source_tokens == [*corpus.example().split(), "<eos>"]
    for probe, weights in zip(history.probes, history.weights, strict=True):
        assert weights.shape == (len(history.points), *probe.shape)
        assert np.allclose(weights.astype(np.float32).sum(-1), 1.0, atol=2e-3)  # each row a softmax
        assert probe.source_tokens[-1] == probe.target_tokens[-1] == "<eos>"
    # reports that added a point carry the history as plain data
    carried = [r.history for r in reports if r.history is not None]
    assert len(carried) == len(history.points) - 1  # all but the start point
    assert carried[-1]["points"] == history.points


def test_the_probe_sentence_comes_first_when_the_data_holds_it(corpus):
    probe = corpus.test[3].source
    chosen = choose_probes(corpus, probe)
    assert chosen[0] == ("probe", corpus.test[3])
    assert [role for role, _ in chosen[1:]] == ["test"] * TEST_PROBES
    assert all(p.has_gold for _, p in chosen)
    # a probe the data lacks: the data's example sentence when the data holds it, else test pairs alone
    assert choose_probes(corpus, "not in the data")[0][1].source == corpus.example()
    toy = load_corpus("toy-fr", n_train=100, n_valid=20, n_test=20)  # its example sentence is not generated
    assert [role for role, _ in choose_probes(toy, "not in the data")] == ["test"] * TEST_PROBES


def test_attention_forms_on_a_task_that_teaches_it(trained, corpus):
    """A recorder on the trained fixture scores its reversal alignment better than an untrained one."""
    fresh = tiny_translator(corpus, emb_dim=32, hidden_dim=48, attn_dim=32)
    errors = []
    for translator in (fresh, trained):
        recorder = HistoryRecorder.start(translator, corpus, None, 5, resume=False)
        recorder.record(translator.model, translator.device, "start", 0, 0, 0.0)
        errors.append(recorder.history.points[0]["aer"])
    assert errors[1] < errors[0] and errors[1] < 0.2


def test_the_history_stays_bounded_by_thinning_evenly():
    corpus = load_corpus("dates", n_train=64, n_valid=16, n_test=16)
    translator = tiny_translator(corpus)
    recorder = HistoryRecorder.start(translator, corpus, None, 1, resume=False)
    for step in range(400):
        recorder.record(translator.model, translator.device, "epoch", step, step, 0.0)
    history = translator.history
    assert history.nbytes <= MAX_HISTORY_BYTES and 8 <= len(history) < 400
    steps = [p["step"] for p in history.points]
    assert steps[0] == 0 and steps[-1] == 399 and steps == sorted(steps)


def test_without_record_history_a_training_keeps_none(corpus):
    translator = tiny_translator(corpus)
    fit(translator, corpus, TrainConfig(epochs=1, batch_size=8, record_history=False))
    assert translator.history is None


def test_a_resumed_training_continues_its_history(tmp_path):
    recipe = tiny_recipe("resumed", epochs=3)
    out = tmp_path / "resumed.safetensors"
    ended = []
    run_recipe(recipe, out, callback=lambda p: p.kind == "epoch" and ended.append(1), should_stop=lambda: bool(ended))
    cut = load_checkpoint(out).history
    assert cut is not None and cut.points[-1]["kind"] == "epoch" and cut.points[-1]["epoch"] == 1
    done = run_recipe(recipe, out, resume=True).history
    assert done.points[: len(cut)] == cut.points  # the first epoch's points are kept as they were
    assert [p["kind"] for p in done.points].count("start") == 1
    assert [p["epoch"] for p in done.points if p["kind"] == "epoch"] == [1, 2, 3]
    for before, after in zip(cut.weights, done.weights, strict=True):
        assert np.array_equal(after[: len(cut)], before)
    assert load_checkpoint(out).history.points == done.points
