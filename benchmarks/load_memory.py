"""Peak memory and time of loading a checkpoint: attnviz's loader against a randomly initialised model
the weights are copied into.

    OMP_NUM_THREADS=1 python benchmarks/load_memory.py --json benchmarks/results/load_memory.json
    python benchmarks/load_memory.py --checkpoints A.safetensors B.safetensors --rounds 3
    python benchmarks/load_memory.py --big-dir /tmp/big      # keep the big checkpoints it builds

By default it measures the shipped ``multi30k-de-en-general-luong`` and a big model it builds into a
temporary folder (``--big-dir`` to keep it) with :func:`attnviz.store.save`: an LSTM general/Luong
model of 40,000 tokens a side, embeddings 512, hidden and attention 1024, 2 + 2 layers (144 M
parameters, 549 MiB in float32), stored as fp16 and as int8 (float32 is over the 512 MiB a
checkpoint may be), and the same at 30,000 tokens a side in fp32 (471 MiB); ``--no-big`` skips them.

Each measurement is one fresh process (``spawn``) that imports torch and attnviz, reads the file once
(so every load finds it in the page cache), resets the peak resident set (VmHWM; Linux), and loads:

- ``attnviz``: :func:`attnviz.store.load_checkpoint`, what ``attnviz.load``, the CLI and the app call;
- ``random-init``: the same file read with safetensors' default mapping and decoded, ``Seq2Seq(cfg)``
  built and randomly initialised, the weights copied in with ``load_state_dict``.

``peak_mib`` is the growth of the peak resident set over the load, ``kept_mib`` what the process holds
after it, ``model_mib`` the model's float32 parameters and buffers, ``seconds`` the load's wall time;
each figure is the median of ``--rounds`` processes a loader (the loaders alternate).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHIPPED = "multi30k-de-en-general-luong"
LOADERS = ("random-init", "attnviz")
MIB = 2**20
BIG = {"emb_dim": 512, "hidden_dim": 1024, "attn_dim": 1024, "enc_layers": 2, "dec_layers": 2}


def _status_kb(field: str) -> int:
    """A field of /proc/self/status in kB (VmRSS, VmHWM)."""
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status: this benchmark reads Linux's process status")


def _random_init_load(path: Path) -> object:
    """The model of ``path`` built randomly initialised, the decoded weights copied into it."""
    from safetensors import safe_open

    from attnviz.model import ModelConfig, Seq2Seq
    from attnviz.store import read_header
    from attnviz.store.history import is_history_tensor
    from attnviz.store.quantize import decode_weights, weight_names

    cfg = ModelConfig.from_dict(read_header(path)["config"])
    with safe_open(str(path), framework="pt") as f:
        names = weight_names({n for n in f.keys() if not is_history_tensor(n)})  # noqa: SIM118
        state = decode_weights(path.name, names, f.get_tensor)
        model = Seq2Seq(cfg)
        model.load_state_dict(state)
    return model.eval()


def _measure(path: str, loader: str, out: multiprocessing.Queue) -> None:
    """One load in this fresh process: its peak memory growth, what it keeps, its seconds."""
    import torch

    from attnviz.store import load_checkpoint

    Path(path).read_bytes()  # in the page cache for every loader alike
    start_kb = _status_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5", encoding="ascii")  # VmHWM := VmRSS
    started = time.perf_counter()
    model = _random_init_load(Path(path)) if loader == "random-init" else load_checkpoint(path).model
    seconds = time.perf_counter() - started
    tensors = [*model.parameters(), *model.buffers()]
    out.put(
        {
            "seconds": seconds,
            "peak_mib": (_status_kb("VmHWM") - start_kb) / 1024,
            "kept_mib": (_status_kb("VmRSS") - start_kb) / 1024,
            "model_mib": sum(t.numel() * 4 for t in tensors) / MIB,
            "start_mib": start_kb / 1024,
            "torch": torch.__version__,
        }
    )


def measure(path: Path, loader: str) -> dict:
    """One measurement in a fresh process."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_measure, args=(str(path), loader, queue))
    process.start()
    result = queue.get(timeout=600)
    process.join()
    return result


def build_big(folder: Path) -> list[Path]:
    """The big checkpoints (see the module's docstring), written with attnviz's own save()."""
    import torch

    from attnviz.data import Tokenizer, Vocab
    from attnviz.decoding import Translator
    from attnviz.model import ModelConfig, Seq2Seq
    from attnviz.store import save

    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for vocab, stores in ((40_000, ("fp16", "int8")), (30_000, ("fp32",))):
        words = ["<pad>", "<unk>", "<bos>", "<eos>"] + [f"w{i}" for i in range(vocab - 4)]
        torch.manual_seed(0)
        cfg = ModelConfig(vocab, vocab, score="general", style="luong", encoder="lstm", cell="lstm", **BIG)
        tok = Tokenizer(kind="word", lowercase=True)
        meta = {"task": "multi30k-de-en", "name": "big"}
        translator = Translator(Seq2Seq(cfg), Vocab(words), Vocab(words), tok, tok, meta)
        for store in stores:
            path = folder / f"big-lstm-general-luong-{vocab // 1000}k-{store}.safetensors"
            if not path.exists():
                save(translator, path, store=store)
            made.append(path)
        del translator
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoints", nargs="*", type=Path, help=f"checkpoints to load (default: {SHIPPED})")
    parser.add_argument("--no-big", action="store_true", help="do not build and measure the big checkpoints")
    parser.add_argument("--big-dir", type=Path, help="build the big checkpoints here and keep them")
    parser.add_argument("--rounds", type=int, default=1, help="processes a loader and checkpoint (median)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    from attnviz.store import stored_as
    from attnviz.store.catalog import resolve

    paths = args.checkpoints or [resolve(SHIPPED)]
    with tempfile.TemporaryDirectory(prefix="load-memory-") as scratch:
        if not args.no_big:
            paths = [*paths, *build_big(args.big_dir or Path(scratch))]
        rows = []
        for path in paths:
            runs: dict[str, list[dict]] = {loader: [] for loader in LOADERS}
            for _ in range(args.rounds):
                for loader in LOADERS:
                    runs[loader].append(measure(path, loader))
            for loader, results in runs.items():
                row = {"checkpoint": path.name, "store": stored_as(path), "loader": loader, "rounds": len(results)}
                row["file_mib"] = round(path.stat().st_size / MIB, 1)
                for key in ("seconds", "peak_mib", "kept_mib", "model_mib"):
                    row[key] = round(statistics.median(r[key] for r in results), 3 if key == "seconds" else 1)
                row["peak_over_model"] = round(row["peak_mib"] / row["model_mib"], 2)
                rows.append(row)
                print(json.dumps(row))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
