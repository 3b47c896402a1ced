"""What recording the alignment history costs a training, and how large it is in the checkpoint.

Run from the repository root::

    OMP_NUM_THREADS=1 python benchmarks/history_cost.py [--rounds 3] [--epochs 3] [--json FILE]

For each setting (the toy-fr and dates models of the shipped recipes' sizes, on 2,000 training
pairs, and the Train page's default), each round trains the same model twice, with and without
``record_history``, alternating which goes first. It reports the time spent recording (the
:class:`attnviz.training.history.HistoryRecorder` calls, timed inside the training) as a share of
the training time, which a busy machine does not blur, and the median wall time of both runs;
then the history's size in the checkpoint (its float16 tensors and its header field) and its
number of points.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from attnviz.data import load_corpus
from attnviz.store import save
from attnviz.store.history import history_header
from attnviz.training import TrainConfig, build_translator, fit
from attnviz.training.history import HistoryRecorder

SHIPPED = {"emb_dim": 32, "hidden_dim": 64, "attn_dim": 32, "dropout": 0.1}
SETTINGS = {
    "toy-fr, shipped sizes": ("toy-fr", 2000, SHIPPED, {"batch_size": 64, "lr": 3e-3}),
    "dates, shipped sizes": ("dates", 2000, SHIPPED, {"batch_size": 64, "lr": 3e-3}),
}


class Timed:
    """Wraps HistoryRecorder.record to add up the seconds it takes."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self._record = HistoryRecorder.record

    def __enter__(self) -> Timed:
        timer, record = self, self._record

        def timed(recorder, *args, **kwargs):
            start = time.perf_counter()
            record(recorder, *args, **kwargs)
            timer.seconds += time.perf_counter() - start
            timer.calls += 1

        HistoryRecorder.record = timed
        return self

    def __exit__(self, *exc) -> None:
        HistoryRecorder.record = self._record


def train(task: str, n_train: int, model: dict, train_options: dict, epochs: int, record: bool):
    corpus = load_corpus(task, n_train=n_train, n_valid=200, n_test=200, seed=0)
    translator = build_translator(corpus, seed=0, score="additive", style="bahdanau", **model)
    cfg = TrainConfig(epochs=epochs, patience=None, seed=0, record_history=record, **train_options)
    with Timed() as timer:
        start = time.perf_counter()
        fit(translator, corpus, cfg)
        seconds = time.perf_counter() - start
    return translator, seconds, timer


def size_of(translator) -> dict:
    """The history's bytes in a checkpoint: float16 tensors, header JSON, and the whole file's growth."""
    history = translator.history
    header = len(json.dumps(history_header(history), ensure_ascii=False, separators=(",", ":")).encode())
    with tempfile.TemporaryDirectory() as folder:
        with_history = save(translator, Path(folder) / "a.safetensors", store="fp16").stat().st_size
        translator.history = None
        without = save(translator, Path(folder) / "b.safetensors", store="fp16").stat().st_size
        translator.history = history
    return {
        "tensor_bytes": history.nbytes,
        "header_bytes": header,
        "file_growth_bytes": with_history - without,
        "points": len(history),
        "probes": len(history.probes),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument(
        "--default",
        nargs=4,
        metavar=("TASK", "N_TRAIN", "HIDDEN", "EPOCHS"),
        help="also measure the Train page's default: task, pairs, hidden size, epochs",
    )
    parser.add_argument("--json", type=Path, help="write the results to this file")
    args = parser.parse_args()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)  # the --json folder, before any work
    torch.set_num_threads(1)
    settings = {name: (*s, args.epochs) for name, s in SETTINGS.items()}
    if args.default:
        task, n, hidden, epochs = args.default
        model = {"emb_dim": 32, "hidden_dim": int(hidden), "attn_dim": 32, "dropout": 0.1}
        label = f"{task}, {n} pairs, hidden {hidden}, batch 32, {epochs} epochs (--default)"
        settings[label] = (task, int(n), model, {"batch_size": 32, "lr": 3e-3}, int(epochs))
    results = []
    for name, (task, n, model, options, epochs) in settings.items():
        on, off, shares, last = [], [], [], None
        for r in range(args.rounds):
            for record in (True, False) if r % 2 == 0 else (False, True):
                translator, seconds, timer = train(task, n, model, options, epochs, record)
                (on if record else off).append(seconds)
                if record:
                    shares.append(timer.seconds / seconds)
                    last = translator
        row = {
            "setting": name,
            "task": task,
            "n_train": n,
            "epochs": epochs,
            "model": model,
            **options,
            "recording_share_median": statistics.median(shares),
            "recording_share_max": max(shares),
            "wall_with_s": statistics.median(on),
            "wall_without_s": statistics.median(off),
            **size_of(last),
        }
        results.append(row)
        print(
            f"{name}: recording {row['recording_share_median']:.2%} of the training time (max "
            f"{row['recording_share_max']:.2%}); wall {row['wall_with_s']:.1f} s with, {row['wall_without_s']:.1f} s "
            f"without; {row['points']} points x {row['probes']} probes: {row['tensor_bytes'] / 1024:.0f} kB of "
            f"tensors + {row['header_bytes'] / 1024:.0f} kB of header, the file grows "
            f"{row['file_growth_bytes'] / 1024:.0f} kB",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps({"rounds": args.rounds, "threads": 1, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
