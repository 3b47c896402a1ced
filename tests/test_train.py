"""Training controls: time budget, linear schedule, and resuming an interrupted recipe."""

import math

import pytest
import torch

from attnviz import devices
from attnviz.cli.main import main as cli_main
from attnviz.devices import available_devices
from attnviz.errors import ConfigError
from attnviz.store.checkpoint import read_header
from attnviz.training.config import TrainConfig
from attnviz.training.fit import _linear, fit
from attnviz.training.recipes import Recipe, run_recipe
from tests.conftest import tiny_translator

RECIPE = {
    "name": "tiny-copy",
    "data": "copy",
    "data_options": {"n_train": 64, "n_valid": 16, "n_test": 8, "seed": 0},
    "model": {"emb_dim": 8, "hidden_dim": 16, "attn_dim": 8, "score": "general", "style": "luong"},
    "train": {"epochs": 4, "batch_size": 16, "lr": 0.01, "seed": 0, "patience": None},
}


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


def test_an_interrupted_recipe_resumes_from_its_last_epoch(tmp_path):
    recipe = Recipe(**RECIPE)
    out = tmp_path / "tiny.safetensors"
    calls = {"epochs": 0}

    def stop_after_two() -> bool:
        return calls["epochs"] >= 2

    def count(p) -> None:
        calls["epochs"] += p.kind == "epoch"

    run_recipe(recipe, out, callback=count, should_stop=stop_after_two, evaluate_split=None)
    progress = read_header(out)["meta"]["progress"]
    assert progress["epoch"] == 2 and len(progress["history"]) == 2

    seen = []
    model = run_recipe(recipe, out, callback=lambda p: seen.append(p.epoch) if p.kind == "epoch" else None,
                       resume=True)  # fmt: skip
    assert sorted(set(seen)) == [3, 4]  # only the epochs that were missing
    assert [row["epoch"] for row in model.meta["history"]] == [1, 2, 3, 4]
    header = read_header(out)["meta"]
    assert "progress" not in header and header["metrics"]["n"] == 8
    assert header["train_seconds"] >= progress["seconds"]


def test_resume_ignores_a_checkpoint_of_another_recipe(tmp_path):
    out = tmp_path / "tiny.safetensors"
    run_recipe(Recipe(**RECIPE), out, should_stop=lambda: False, evaluate_split=None,
               callback=None)  # fmt: skip
    other = Recipe(**{**RECIPE, "train": {**RECIPE["train"], "epochs": 2}})
    torch.manual_seed(0)
    seen = []
    run_recipe(other, out, callback=lambda p: seen.append(p.epoch) if p.kind == "epoch" else None, resume=True)
    assert seen == [1, 2]  # started afresh: the file was finished, and by another recipe


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
    fit(translator, corpus, cfg, should_stop=lambda: len(resumed) >= total // 2,
        callback=lambda p: resumed.append(p.lr) if p.kind == "step" else None)  # fmt: skip
    progress = translator.meta["progress"]
    fit(translator, corpus, cfg, resume=progress,
        callback=lambda p: resumed.append(p.lr) if p.kind == "step" else None)  # fmt: skip
    assert progress["step"] == total // 2 and resumed == pytest.approx(expected)


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


def test_bf16_where_unsupported_is_refused(monkeypatch):
    monkeypatch.setattr(devices, "_cpu_flags", lambda: {"avx2", "fma"})
    assert not devices.bf16_supported("cpu")
    with pytest.raises(ConfigError, match="--precision fp32"):
        TrainConfig(precision="bf16").hardware()
    assert TrainConfig(precision="auto").hardware() == (torch.device("cpu"), "fp32")
    monkeypatch.setattr(devices, "_cpu_flags", lambda: {"avx512f", "avx512_bf16"})
    assert devices.bf16_supported("cpu")
    assert TrainConfig(precision="bf16").hardware() == (torch.device("cpu"), "bf16")


@pytest.mark.parametrize(
    ("flags", "vendor", "picked"),
    [
        ({"avx512f", "avx512_bf16"}, "AuthenticAMD", "bf16"),  # EPYC: measured 1.1-1.7x faster
        ({"avx512f", "avx512_bf16"}, "GenuineIntel", "fp32"),  # Xeon without AMX: measured 0.65x
        ({"avx512f", "avx512_bf16", "amx_bf16", "amx_tile"}, "GenuineIntel", "bf16"),
        ({"avx2"}, "AuthenticAMD", "fp32"),
    ],
)
def test_auto_precision_picks_bf16_only_where_it_was_measured_faster(monkeypatch, flags, vendor, picked):
    monkeypatch.setattr(devices, "_cpu_flags", lambda: flags)
    monkeypatch.setattr(devices, "_cpu_vendor", lambda: vendor)
    assert TrainConfig(precision="auto").hardware() == (torch.device("cpu"), picked)


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


def test_progress_reports_and_the_checkpoint_name_the_hardware(tmp_path):
    seen = set()
    run_recipe(Recipe(**RECIPE), tmp_path / "tiny.safetensors", callback=lambda p: seen.add(p.hardware),
               evaluate_split=None)  # fmt: skip
    meta = read_header(tmp_path / "tiny.safetensors")["meta"]
    assert seen == {meta["hardware"]} and "CPU, " in meta["hardware"]
    assert meta["device"] == "cpu" and meta["precision"] == "fp32"
