"""Batched beam search against decoding one sentence at a time, on the Multi30k 2016 Flickr test set.

Translates the German sources of ``test_2016_flickr`` (1,000 sentences) with a de-en model four
ways: beam 5 one sentence at a time with the full trace (``Translator.translate``, what
evaluation did sentence by sentence), and batched beam 1, 5 and 10
(``Translator.translate_batch``). For each: seconds, sentences per second and the speed-up over
the one-at-a-time beam 5; then how many lines batched beam 5 writes differently from one at a
time (0 expected: the same search) and the BLEU of each (lowercased sacreBLEU, as ``evaluate``'s
``bleu``; left out when sacrebleu is not installed).

The gzipped text files are read directly, so neither ``datasets`` nor a GPU is needed; on CUDA
the clock waits for the GPU (``torch.cuda.synchronize``) before each reading.

    OMP_NUM_THREADS=1 python benchmarks/beam_speed.py --threads 1 2 --out benchmarks/results/beam_speed.json
    python benchmarks/beam_speed.py --device cuda --limit 200
    python benchmarks/beam_speed.py --bf16   # also batched beam 5 under bf16 autocast

``--bf16`` adds a row: batched beam 5 under ``torch.autocast`` in bfloat16, with how many of its
lines differ from float32's and its BLEU (whether lower precision would pay for decoding here).
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from attnviz.data import default_multi30k  # noqa: E402
from attnviz.decoding import Translator  # noqa: E402
from attnviz.devices import describe, pick_device  # noqa: E402
from attnviz.store import load  # noqa: E402

MODEL = ROOT / "pretrained" / "multi30k-de-en-additive-bahdanau.safetensors"
ONE_AT_A_TIME = 5  # the beam of the one-sentence-at-a-time baseline
BATCHED = (1, 5, 10)


def read_lines(folder: Path, lang: str) -> list[str]:
    """``test_2016_flickr.LANG`` (gzipped or not) from a Multi30k folder, one sentence per line."""
    for path, opener in (
        (folder / f"test_2016_flickr.{lang}.gz", gzip.open),
        (folder / f"test_2016_flickr.{lang}", open),
    ):
        if path.is_file():
            with opener(path, "rt", encoding="utf-8") as f:
                return [line.rstrip("\r\n") for line in f]
    sys.exit(f"beam_speed: no test_2016_flickr.{lang}(.gz) in {folder}; give the Multi30k folder with --data")


def timed(fn: Callable[[], list[str]], device: torch.device) -> tuple[list[str], float]:
    """``fn()`` and its wall-clock seconds, the GPU's queued work included."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    out = fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return out, time.perf_counter() - start


def bleu(outputs: list[str], references: list[str]) -> float | None:
    try:
        from attnviz.evaluation import bleu as corpus_bleu
    except ImportError:  # sacrebleu is missing
        return None
    return round(corpus_bleu(outputs, references, lowercase=True), 2)


def measure(
    translator: Translator, sources: list[str], references: list[str], max_tokens: int | None, bf16: bool = False
) -> dict:
    """One row per way of decoding, and how batched beam 5 compares with one at a time."""
    device = translator.device
    options = {} if max_tokens is None else {"max_tokens": max_tokens}
    translator.translate_batch(sources[:20], beam_size=5, **options)  # warm-up: allocator, kernels
    translator.text_of(translator.translate(sources[0], beam_size=ONE_AT_A_TIME))

    def one_at_a_time() -> list[str]:
        return [translator.text_of(translator.translate(s, beam_size=ONE_AT_A_TIME)) for s in sources]

    single, base = timed(one_at_a_time, device)
    rows = [{"decoding": f"one at a time, beam {ONE_AT_A_TIME}", "beam": ONE_AT_A_TIME, "seconds": base}]
    outputs = {}
    for beam in BATCHED:
        outputs[beam], seconds = timed(
            lambda b=beam: translator.translate_batch(sources, beam_size=b, **options), device
        )
        rows.append({"decoding": f"batched, beam {beam}", "beam": beam, "seconds": seconds})
    half = None
    if bf16:
        with torch.autocast(device.type, dtype=torch.bfloat16):
            translator.translate_batch(sources[:20], beam_size=5, **options)  # warm-up
            half, seconds = timed(lambda: translator.translate_batch(sources, beam_size=5, **options), device)
        rows.append({"decoding": "batched, beam 5, bf16 autocast", "beam": 5, "seconds": seconds})
    for row in rows:
        row["sentences_per_s"] = round(len(sources) / row["seconds"], 1)
        row["speedup"] = round(base / row["seconds"], 2)
        row["seconds"] = round(row["seconds"], 2)
    same_beam = outputs[ONE_AT_A_TIME]
    result = {
        "rows": rows,
        "differing_lines": sum(a != b for a, b in zip(single, same_beam, strict=True)),
        "bleu_one_at_a_time": bleu(single, references),
        "bleu_batched": bleu(same_beam, references),
    }
    if half is not None:
        result["bf16_differing_lines"] = sum(a != b for a, b in zip(same_beam, half, strict=True))
        result["bleu_bf16"] = bleu(half, references)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=str(MODEL), help="a de-en checkpoint (default: the shipped additive/Bahdanau)")
    p.add_argument(
        "--data", default=str(default_multi30k()), help="the Multi30k folder (test_2016_flickr.de.gz, .en.gz)"
    )
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default: the first GPU, else the CPU)")
    p.add_argument(
        "--threads",
        type=int,
        nargs="+",
        default=[torch.get_num_threads()],
        help="torch CPU threads; several values measure each in turn",
    )
    p.add_argument("--limit", type=int, default=None, help="only the first N sentences (a quick run)")
    p.add_argument(
        "--max-tokens", type=int, default=None, help="batched beam's budget: sentences x beams x source tokens"
    )
    p.add_argument("--bf16", action="store_true", help="also batched beam 5 under bf16 autocast")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")
    p.add_argument("--out", help="also write the JSON here, e.g. benchmarks/results/beam_speed.json")
    args = p.parse_args(argv)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work

    device = pick_device(args.device)
    translator = load(args.model, device=str(device))
    folder = Path(args.data)
    sources, references = read_lines(folder, "de")[: args.limit], read_lines(folder, "en")[: args.limit]
    runs = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        result = measure(translator, sources, references, args.max_tokens, args.bf16)
        runs.append({"threads": threads, "hardware": describe(device), **result})
        if not args.json:
            print(f"\n{len(sources)} sentences, {describe(device)}")
            print(f"{'decoding':<26} {'seconds':>8} {'sent/s':>8} {'speed-up':>9}")
            for row in result["rows"]:
                figures = f"{row['seconds']:>8.2f} {row['sentences_per_s']:>8.1f} {row['speedup']:>8.2f}x"
                print(f"{row['decoding']:<26} {figures}")
            print(
                f"batched beam 5 against one at a time: {result['differing_lines']} differing lines; BLEU "
                f"{result['bleu_batched']} against {result['bleu_one_at_a_time']}"
            )
            if "bleu_bf16" in result:
                print(
                    f"bf16 against float32, batched beam 5: {result['bf16_differing_lines']} differing lines; "
                    f"BLEU {result['bleu_bf16']}"
                )
    report = {
        "model": Path(args.model).name,
        "sentences": len(sources),
        "device": str(device),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "runs": runs,
    }
    if args.json:
        print(json.dumps(report))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
