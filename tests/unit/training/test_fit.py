"""Training: a tiny model overfits, runs are reproducible and stoppable, progress reports, the time
budget, the linear schedule, checkpoint averaging, device and precision settings, links carried
through batching."""

import math
import random

import numpy as np
import pytest
import torch

from attnviz import devices
from attnviz.cli.main import main as cli_main
from attnviz.data.pairs import Corpus, make_pair
from attnviz.devices import available_devices
from attnviz.errors import ConfigError, InputError
from attnviz.model.encoder import RNNEncoder
from attnviz.training.batches import make_batches
from attnviz.training.config import TrainConfig
from attnviz.training.fit import _linear, evaluate_loss, fit
from tests.support.tiny import WORD, tiny_translator


def test_linear_schedule_falls_to_the_floor_by_steps_or_by_time():
    cfg = TrainConfig(schedule="linear", lr_floor=0.1)
    assert _linear(cfg, 0, 100, seconds=1e6) == 1.0  # no time budget: time does not count
    assert _linear(cfg, 50, 100, seconds=0.0) == pytest.approx(0.55)
    assert _linear(cfg, 100, 100, seconds=0.0) == pytest.approx(0.1)
    # With a time budget that is already spent, the rate is at its floor whatever the step.
    timed = TrainConfig(schedule="linear", lr_floor=0.1, max_seconds=1.0)
    assert _linear(timed, 0, 100, seconds=10.0) == pytest.approx(0.1)
    assert _linear(timed, 10, 100, seconds=0.5) == pytest.approx(1 - 0.9 * 0.5)
    with pytest.raises(ConfigError, match="schedule"):
        TrainConfig(schedule="cosine")


def test_time_budget_stops_training_and_still_validates(corpus):
    translator = tiny_translator(corpus)
    result = fit(translator, corpus, TrainConfig(epochs=50, batch_size=8, max_seconds=1e-9))
    assert result.out_of_time and result.epochs_run <= 1
    assert "progress" not in translator.meta  # a finished training leaves no resume record


@pytest.mark.parametrize("lr", [3e-2, 1.0])
def test_checkpoint_averaging_keeps_the_mean_only_when_it_validates_better(corpus, lr):
    tr = tiny_translator(corpus)
    seen: list[dict] = []

    def record(translator, result):
        seen.append({k: v.clone() for k, v in translator.model.state_dict().items()})

    cfg = TrainConfig(epochs=4, batch_size=8, lr=lr, patience=None, average_last=3)
    result = fit(tr, corpus, cfg, on_epoch_end=record)
    final = tr.model.state_dict()
    if result.averaged:
        assert result.averaged == 3 and tr.meta["averaged_epochs"] == 3
        for k, v in final.items():
            assert torch.allclose(v, torch.stack([s[k] for s in seen[-3:]]).mean(0), atol=1e-6)
    else:
        losses = [row["valid_loss"] for row in result.history]
        best = seen[losses.index(min(losses))]
        assert all(torch.equal(v, best[k]) for k, v in final.items())
    assert result.best_valid_loss <= min(row["valid_loss"] for row in result.history)


def test_checkpoint_averaging_setting_is_checked():
    with pytest.raises(ConfigError, match="average_last"):
        TrainConfig(average_last=-1)


def test_the_linear_schedule_decays_once_per_step_and_resumes_where_it_stopped(corpus):
    """Each step's rate is ``lr * (1 - (1 - floor) * k / total)`` after k steps, also across a resume.

    (A closure once read the loop's own step counter as well as the scheduler's, so the rate
    fell twice as fast and reached its floor halfway through training.)"""
    cfg = TrainConfig(epochs=4, batch_size=8, lr=0.01, schedule="linear", lr_floor=0.1, patience=None)
    translator = tiny_translator(corpus)
    rates = []
    fit(translator, corpus, cfg, callback=lambda p: rates.append(p.lr) if p.kind == "step" else None)
    total = len(rates)
    assert total == 4 * -(-len(corpus.train) // 8)
    expected = [0.01 * (1 - 0.9 * k / total) for k in range(total)]
    assert rates == pytest.approx(expected)

    translator = tiny_translator(corpus)
    resumed = []

    def record_rate(p):
        if p.kind == "step":
            resumed.append(p.lr)

    fit(translator, corpus, cfg, should_stop=lambda: len(resumed) >= total // 2, callback=record_rate)
    progress = translator.meta["progress"]
    fit(translator, corpus, cfg, resume=progress, callback=record_rate)
    assert progress["step"] == total // 2 and resumed == pytest.approx(expected)


def test_a_stop_inside_an_epoch_keeps_the_last_finished_epoch_and_resume_trains_all_of_the_next(corpus):
    """Stopped a few steps into epoch 3, training stands at the end of epoch 2: its weights, step count,
    progress and alignment history (no point of the half epoch); the resumed run trains every step of
    epochs 3 and 4, at the rates of an uninterrupted run. (A stop inside an epoch once recorded it as
    finished, and Resume then skipped the rest of it.)"""
    cfg = TrainConfig(epochs=4, batch_size=8, lr=0.01, schedule="linear", lr_floor=0.1, patience=None)
    per_epoch = -(-len(corpus.train) // 8)
    translator = tiny_translator(corpus)
    rates, ends = [], {}

    def record(p):
        if p.kind == "step":
            rates.append(p.lr)

    def keep(tr, result):
        ends[result.epochs_run] = {k: v.clone() for k, v in tr.model.state_dict().items()}

    stop_at = 2 * per_epoch + 2
    result = fit(translator, corpus, cfg, callback=record, should_stop=lambda: len(rates) >= stop_at, on_epoch_end=keep)
    progress = translator.meta["progress"]
    assert result.stopped and result.epochs_run == 2 and len(result.history) == 2
    assert progress["epoch"] == 2 and progress["step"] == 2 * per_epoch
    assert max(point["step"] for point in translator.history.points) == 2 * per_epoch
    losses = [row["valid_loss"] for row in result.history]
    assert losses[1] < losses[0]  # epoch 2 is the best: its weights are the ones kept
    for name, weight in translator.model.state_dict().items():
        assert torch.equal(weight, ends[2][name]), name

    del rates[2 * per_epoch :]  # the half epoch's steps, trained again after the resume
    fit(translator, corpus, cfg, resume=progress, callback=record)
    total = 4 * per_epoch
    assert rates == pytest.approx([0.01 * (1 - 0.9 * k / total) for k in range(total)])
    assert translator.meta["epochs_run"] == 4 and "progress" not in translator.meta


def test_device_and_precision_settings_are_checked():
    with pytest.raises(ConfigError, match="'meta'"):
        TrainConfig(device="meta")
    with pytest.raises(ConfigError, match="precision"):
        TrainConfig(precision="fp16")
    assert TrainConfig().device == "cpu" and TrainConfig().precision == "fp32"
    assert available_devices()[0] == "cpu"
    for name in available_devices():
        TrainConfig(device=name).hardware()
    assert TrainConfig(device="auto", precision="auto").hardware()[1] in ("fp32", "bf16")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_a_one_line_error(capsys):
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        TrainConfig(device="cuda").hardware()
    for device in ("cuda", "meta"):
        assert cli_main(["train", "--data", "copy", "--device", device, "--max-steps", "1"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and device in err and "Traceback" not in err


@pytest.mark.skipif(not devices.bf16_supported("cpu"), reason="this CPU has neither AVX512-BF16 nor AMX")
def test_bf16_training_keeps_float32_weights_and_learns(corpus):
    translator = tiny_translator(corpus)
    reports = []
    cfg = TrainConfig(epochs=3, batch_size=8, lr=1e-2, patience=None, precision="bf16")
    result = fit(translator, corpus, cfg, callback=reports.append)
    assert all(p.dtype == torch.float32 for p in translator.model.parameters())
    losses = [row["valid_loss"] for row in result.history]
    assert all(math.isfinite(x) for x in losses) and losses[-1] < losses[0]
    assert translator.meta["precision"] == "bf16" and translator.meta["device"] == "cpu"


def test_tiny_model_overfits_a_tiny_batch(trained, corpus):
    batches = make_batches(corpus.train, trained.src_vocab, trained.tgt_vocab, 64, None)
    _, accuracy = evaluate_loss(trained.model, batches, "cpu")
    assert accuracy == 1.0
    al = trained.translate("a b c d")
    assert al.output_tokens == ["d", "c", "b", "a"]


def test_training_is_reproducible_and_stoppable(corpus):
    histories = []
    for _ in range(2):
        tr = tiny_translator(corpus)
        histories.append(fit(tr, corpus, TrainConfig(epochs=2, batch_size=8, seed=3)).history)
    assert [h["loss"] for h in histories[0]] == [h["loss"] for h in histories[1]]
    tr = tiny_translator(corpus)
    calls = []
    result = fit(
        tr,
        corpus,
        TrainConfig(epochs=5, batch_size=8),
        should_stop=lambda: len(calls) >= 3,
        callback=lambda p: calls.append(p) if p.kind == "step" else None,
    )
    assert result.stopped and len(calls) == 3


def test_progress_reports_probe_alignment_each_epoch(corpus):
    tr = tiny_translator(corpus)
    epochs = []
    fit(
        tr,
        corpus,
        TrainConfig(epochs=2, batch_size=8, probe="a b c"),
        callback=lambda p: epochs.append(p) if p.kind == "epoch" else None,
    )
    assert [p.epoch for p in epochs] == [1, 2]
    assert all(p.probe is not None and p.probe.source_tokens[:3] == ["a", "b", "c"] for p in epochs)
    assert epochs[-1].valid_loss is not None and epochs[-1].eta_seconds == 0


def test_scheduled_sampling_trains(corpus):
    tr = tiny_translator(corpus, style="luong", score="general", input_feeding=True)
    result = fit(tr, corpus, TrainConfig(epochs=2, batch_size=8, teacher_forcing=0.5))
    assert all(np.isfinite(h["loss"]) for h in result.history)


def _numbered_corpus(n: int = 60) -> Corpus:
    """Pair k reads ``w<k> ...`` so a batch row names its pair; its links are a shifted diagonal."""
    pairs = []
    for k in range(n):
        length = 2 + k % 5
        words = [f"w{k}"] + [chr(ord("a") + (k + i) % 7) for i in range(length - 1)]
        pairs.append(make_pair(" ".join(words), " ".join(reversed(words)), WORD, WORD))
    return Corpus("numbered", pairs, [], [], WORD, WORD, False, [])


def _links_of(pair) -> list[tuple[int, int]]:
    n_src, n_tgt = len(pair.source_tokens), len(pair.target_tokens)
    return [(i, (i + len(pair.source)) % n_tgt) for i in range(n_src) if i % 2 == 0]


def test_links_travel_with_their_pairs_through_shuffling_and_bucketing():
    corpus = _numbered_corpus()
    src_vocab, tgt_vocab = corpus.build_vocabs()
    links = [_links_of(p) for p in corpus.train]
    by_name = {p.source_tokens[0]: p for p in corpus.train}
    batches = make_batches(corpus.train, src_vocab, tgt_vocab, 8, random.Random(3), links)
    assert [src[0, 0] for src, *_ in batches] != sorted(src[0, 0] for src, *_ in batches)  # really reordered
    seen = 0
    for src, lengths, tgt, grid in batches:
        assert grid.shape == (src.size(0), tgt.size(1) - 1, src.size(1)) and grid.dtype == torch.bool
        for row in range(src.size(0)):
            pair = by_name[src_vocab.decode([int(src[row, 0])])[0]]
            expected = torch.zeros_like(grid[row])
            for i, j in _links_of(pair):
                expected[j, i] = True
                # row j is the step that writes target token j; column i reads source token i
                assert tgt_vocab.decode([int(tgt[row, j + 1])])[0] == pair.target_tokens[j]
                assert src_vocab.decode([int(src[row, i])])[0] == pair.source_tokens[i]
            assert torch.equal(grid[row], expected)
            assert not grid[row, :, lengths[row] - 1 :].any()  # nothing on <eos> or padding
            seen += 1
    assert seen == len(corpus.train)
    assert all(len(b) == 3 for b in make_batches(corpus.train, src_vocab, tgt_vocab, 8, random.Random(3)))


def test_links_outside_their_pair_or_one_list_short_are_refused():
    corpus = _numbered_corpus(4)
    src_vocab, tgt_vocab = corpus.build_vocabs()
    bad = [[(0, 0)], [(0, 0)], [(4, 0)], [(0, 0)]]  # pair 3 has 4 source tokens (w2 c d e)
    with pytest.raises(InputError, match=r"training pair 3 \('w2 c d e'\): link 4-0 is outside its 4 source"):
        make_batches(corpus.train, src_vocab, tgt_vocab, 2, None, bad)
    with pytest.raises(InputError, match="3 link lists for 4 pairs"):
        make_batches(corpus.train, src_vocab, tgt_vocab, 2, None, bad[:3])


def test_a_guided_weight_without_links_is_a_config_error(corpus):
    with pytest.raises(ConfigError, match="needs the links of every training pair"):
        fit(tiny_translator(corpus), corpus, TrainConfig(epochs=1, guided_weight=0.3))
    with pytest.raises(ConfigError, match="guided_weight=11"):
        TrainConfig(guided_weight=11)


def test_training_flattens_the_rnn_weights_once_the_model_is_on_its_device(corpus, monkeypatch):
    flattened = []
    monkeypatch.setattr(RNNEncoder, "flatten_parameters", lambda self: flattened.append(self))
    translator = tiny_translator(corpus)
    flattened.clear()
    fit(translator, corpus, TrainConfig(epochs=1, batch_size=8, max_steps=1))
    assert translator.model.encoder in flattened


def test_a_resumed_training_stopped_inside_its_first_epoch_still_counts_the_epochs_before(corpus):
    """Resumed after epoch 2 and stopped again inside epoch 3: 2 epochs run, the record as it was. (The
    count started at 0 in each run, so the Train page said 'the best of the 0 epochs it finished'.)"""
    cfg = TrainConfig(epochs=4, batch_size=8, lr=0.01, patience=None)
    per_epoch = -(-len(corpus.train) // 8)
    translator, steps = tiny_translator(corpus), []
    fit(
        translator,
        corpus,
        cfg,
        callback=lambda p: p.kind == "step" and steps.append(1),
        should_stop=lambda: len(steps) >= 2 * per_epoch,
    )
    progress = dict(translator.meta["progress"])
    steps.clear()
    result = fit(
        translator,
        corpus,
        cfg,
        resume=progress,
        callback=lambda p: p.kind == "step" and steps.append(1),
        should_stop=lambda: len(steps) >= 2,
    )
    assert result.stopped and result.epochs_run == 2 == translator.meta["epochs_run"]
    assert translator.meta["progress"]["epoch"] == 2 and translator.meta["progress"]["step"] == progress["step"]


def test_an_interrupted_training_leaves_the_model_in_evaluation_mode(corpus):
    tr = tiny_translator(corpus, dropout=0.5)

    def interrupt(progress) -> None:
        if progress.kind == "step":
            raise KeyboardInterrupt  # a notebook's "Interrupt kernel"

    with pytest.raises(KeyboardInterrupt):
        fit(tr, corpus, TrainConfig(epochs=2, batch_size=8), callback=interrupt)
    assert not tr.model.training  # no dropout in the decodes that follow
    text = " ".join(corpus.test[0].source_tokens)
    np.testing.assert_array_equal(tr.translate(text).weights, tr.translate(text).weights)


def test_early_stopping_ends_training_after_patience_bad_epochs_and_keeps_the_best_epoch(corpus):
    """With ``patience=2`` and a rate that makes the validation loss climb, training stops two epochs after
    its best one, says it stopped early, and hands back the best epoch's weights (its validation loss
    measured again on the returned model), not the last epoch's."""
    translator = tiny_translator(corpus)
    kept: dict[int, dict] = {}

    def keep(tr, result):
        kept[result.epochs_run] = {k: v.clone() for k, v in tr.model.state_dict().items()}

    cfg = TrainConfig(epochs=30, batch_size=8, lr=0.5, patience=2, seed=0)
    result = fit(translator, corpus, cfg, on_epoch_end=keep)
    losses = [row["valid_loss"] for row in result.history]
    best = losses.index(min(losses)) + 1
    assert result.early_stopped and not result.stopped and not result.out_of_time
    assert result.epochs_run < 30 and result.epochs_run == best + 2 == len(losses)
    assert translator.meta["epochs_run"] == result.epochs_run
    final = translator.model.state_dict()
    assert all(torch.equal(v, kept[best][k]) for k, v in final.items())
    assert not all(torch.equal(v, kept[result.epochs_run][k]) for k, v in final.items())
    batches = make_batches(corpus.valid, translator.src_vocab, translator.tgt_vocab, 8, None)
    loss, _ = evaluate_loss(translator.model, batches, "cpu")
    assert loss == pytest.approx(result.best_valid_loss, rel=1e-5) == pytest.approx(min(losses), rel=1e-5)
