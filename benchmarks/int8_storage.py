"""What int8 storage costs each shipped model: BLEU and attention of the stored model against the
same weights unquantized.

For every checkpoint in ``--reference`` (required), the weights as that file holds them are the
reference: the full-precision (float32 or float16) weights a training wrote, for example with
``attnviz train --recipe pretrained/recipes/NAME.json --store fp32``. The shipped models are
already int8, so they cannot be their own reference: a checkpoint in ``--reference`` that holds
int8 weights is refused (exit status 2, nothing written). The int8 model is what
:func:`attnviz.store.save` with ``store="int8"`` writes and :func:`attnviz.store.load_checkpoint`
reads back (a real file round trip). Both decode the model's own test split with the beam its
shipped recipe evaluates with (``pretrained/recipes/NAME.json``, else the reference's own header;
``--beam`` to choose one; :func:`attnviz.evaluation.translate_all`) and are compared on BLEU
(lowercased sacreBLEU, ``evaluate``'s ``bleu``), exact match, the number of output lines that
differ, and, forced on the first ``--n-attention`` test pairs, the largest and the mean absolute
difference of the attention weights. The file sizes are those of the two storages.

    OMP_NUM_THREADS=1 python benchmarks/int8_storage.py --reference FP32_FOLDER \\
        --out benchmarks/results/int8_storage.json
    python benchmarks/int8_storage.py --reference FP32_FOLDER --models toy-fr-dot-luong multi30k-de-en-dot-luong

``--fp16`` also decodes the reference stored as float16 and read back, the same way: how many lines
and how much BLEU rounding the weights that finely changes, beside int8's coarser rounding.
``--variants`` also decodes roundings in memory: int8 on one group of weights at a time (the
encoder's embedding, the decoder's RNN, ...; every other weight float16), and int8 with a scale
per 16 columns instead of per :data:`attnviz.store.quantize.BLOCK`: whether one group's rounding
rewrites the lines, and how finer steps change the count.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from attnviz.data import load_corpus  # noqa: E402
from attnviz.decoding import Translator  # noqa: E402
from attnviz.devices import describe, pick_device  # noqa: E402
from attnviz.evaluation.evaluate import measured_on, translate_all  # noqa: E402
from attnviz.evaluation.metrics import bleu as corpus_bleu  # noqa: E402
from attnviz.store import load_checkpoint, read_manifest, recipe_path, save, stored_as  # noqa: E402
from attnviz.store.quantize import dequantize_rows, quantize_rows  # noqa: E402
from attnviz.training.recipes import Recipe  # noqa: E402

_CORPORA: dict[str, list] = {}


def _test_pairs(translator: Translator) -> list:
    spec, options = measured_on(translator.meta)
    key = json.dumps([spec, options], sort_keys=True)
    if key not in _CORPORA:
        _CORPORA[key] = load_corpus(spec, **options).test
    return _CORPORA[key]


def _decode(translator: Translator, pairs: list, beam: int) -> tuple[list[str], dict]:
    outputs, _ = translate_all(translator, pairs, beam_size=beam)
    tokens = translator.tgt_tokenizer.tokenize
    exact = sum(tokens(o) == tokens(p.target) for o, p in zip(outputs, pairs, strict=True)) / len(pairs)
    bleu = corpus_bleu(outputs, [p.target for p in pairs], lowercase=True)
    return outputs, {"bleu": round(bleu, 2), "exact_match": round(exact, 4)}


def _attention_gap(a: Translator, b: Translator, pairs: list) -> tuple[float, float]:
    worst, total, cells = 0.0, 0.0, 0
    for pair in pairs:
        wa, wb = a.align(pair.source, pair.target).weights, b.align(pair.source, pair.target).weights
        gap = np.abs(wa - wb)  # [target tokens, source tokens]
        worst, total, cells = max(worst, float(gap.max())), total + float(gap.sum()), cells + gap.size
    return worst, total / max(cells, 1)


def recipe_beam(name: str, reference: Translator) -> int:
    """The beam a model is measured with: its shipped recipe's, else the one its own header records."""
    shipped = recipe_path(name)
    if shipped.is_file():
        return Recipe.from_file(shipped).eval_beam
    return int((reference.meta.get("recipe_full") or {}).get("eval_beam") or 1)


def measure(
    path: Path,
    n_attention: int,
    folder: Path,
    device: torch.device | str = "cpu",
    beam: int | None = None,
    fp16: bool = False,
    variants: bool = False,
) -> dict:
    reference = load_checkpoint(path, device)
    quantized = load_checkpoint(save(reference, folder / path.name, store="int8"), device)
    pairs = _test_pairs(reference)
    beam = beam or recipe_beam(path.stem, reference)
    start = time.perf_counter()
    ref_out, ref_scores = _decode(reference, pairs, beam)
    q_out, q_scores = _decode(quantized, pairs, beam)
    worst, mean = _attention_gap(reference, quantized, pairs[:n_attention])
    return (
        {
            "model": path.stem,
            "reference_storage": stored_as(path),
            "n": len(pairs),
            "beam": beam,
            "reference": ref_scores,
            "int8": q_scores,
            "bleu_change": round(q_scores["bleu"] - ref_scores["bleu"], 2),
            "lines_differ": sum(a != b for a, b in zip(ref_out, q_out, strict=True)),
            "attention_max_abs_diff": round(worst, 4),
            "attention_mean_abs_diff": round(mean, 6),
            "attention_pairs": min(n_attention, len(pairs)),
            "bytes_reference": path.stat().st_size,
            "bytes_int8": (folder / path.name).stat().st_size,
            "seconds": round(time.perf_counter() - start, 1),
        }
        | (_fp16_row(reference, pairs, beam, ref_out, ref_scores, folder / "fp16" / path.name) if fp16 else {})
        | (_variants(reference, pairs, beam, ref_out, ref_scores) if variants else {})
    )


def _rounded(weight: torch.Tensor, block: int | None = None) -> torch.Tensor:
    """``weight`` through int8 and back, one scale per ``block`` columns (default: the stored format's
    block), as float32; a weight whose columns ``block`` does not divide keeps the format's block."""
    if block and weight[0].numel() % block == 0:
        blocks = weight.reshape(-1, block)  # [rows * cols / block, block]: one scale per row of this view
        return dequantize_rows(*quantize_rows(blocks)).reshape(weight.shape)
    return dequantize_rows(*quantize_rows(weight))


def _stored(tensor: torch.Tensor, int8: bool, block: int | None) -> torch.Tensor:
    """A weight as one rounding of ``--variants`` holds it: through int8 or float16 (others as they are)."""
    if int8:
        return _rounded(tensor.float(), block)
    return tensor.half().to(tensor.dtype) if tensor.is_floating_point() else tensor


def _variants(reference: Translator, pairs: list, beam: int, ref_out: list[str], ref_scores: dict) -> dict:
    """BLEU change and lines rewritten for each rounding of ``--variants``, decoded in memory."""
    state = {k: v.detach().clone() for k, v in reference.model.state_dict().items()}
    matrices = [k for k, v in state.items() if v.dim() >= 2 and v.is_floating_point()]
    groups = list(dict.fromkeys(".".join(k.split(".")[:2]) for k in matrices))  # encoder.rnn, decoder.attention, ...
    roundings = {f"int8 only {g}": (g, None) for g in groups} | {"int8, a scale per 16 columns": ("", 16)}
    out = {}
    try:
        for label, (prefix, block) in roundings.items():
            rounded = {k: _stored(v, k in matrices and k.startswith(prefix), block) for k, v in state.items()}
            reference.model.load_state_dict(rounded)
            lines, scores = _decode(reference, pairs, beam)
            out[label] = {
                "bleu_change": round(scores["bleu"] - ref_scores["bleu"], 2),
                "lines_differ": sum(a != b for a, b in zip(ref_out, lines, strict=True)),
            }
    finally:
        reference.model.load_state_dict(state)
    return {"variants": out}


def _fp16_row(reference: Translator, pairs: list, beam: int, ref_out: list[str], ref_scores: dict, file: Path) -> dict:
    """What float16 storage changes, the same way: the rounding floor against which int8's change reads."""
    file.parent.mkdir(exist_ok=True)
    out, scores = _decode(load_checkpoint(save(reference, file, store="fp16"), reference.device), pairs, beam)
    return {
        "fp16": {
            "bleu": scores["bleu"],
            "bleu_change": round(scores["bleu"] - ref_scores["bleu"], 2),
            "lines_differ": sum(a != b for a, b in zip(ref_out, out, strict=True)),
        }
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--reference", type=Path, required=True, help="folder of full-precision checkpoints (not the shipped int8 ones)"
    )
    parser.add_argument("--models", nargs="*", help="model names (default: every model in the manifest)")
    parser.add_argument("--n-attention", type=int, default=100, help="test pairs whose attention is compared")
    parser.add_argument("--out", type=Path, help="write the rows as JSON here")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, mps or auto")
    parser.add_argument("--beam", type=int, default=None, help="beam width (default: the shipped recipe's)")
    parser.add_argument("--fp16", action="store_true", help="also decode a float16 round trip (the rounding floor)")
    parser.add_argument("--variants", action="store_true", help="also decode int8 on one group at a time, finer blocks")
    args = parser.parse_args()
    torch.set_num_threads(1)
    device = pick_device(args.device)  # an unknown or absent device is a ConfigError naming the choices
    names = args.models or [m["name"] for m in read_manifest()]
    quantized = [name for name in names if stored_as(args.reference / f"{name}.safetensors") == "int8"]
    if quantized:
        print(
            f"int8_storage: the checkpoints of {', '.join(quantized)} in {args.reference} hold int8 weights, "
            "so they cannot be their own reference; pass --reference a folder of the full-precision weights "
            "a training wrote (attnviz train --recipe pretrained/recipes/NAME.json --store fp32)",
            file=sys.stderr,
        )
        return 2
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = args.reference / f"{name}.safetensors"
            row = measure(path, args.n_attention, Path(tmp), device, args.beam, args.fp16, args.variants)
            rows.append(row)
            floor = row.get("fp16")
            print(
                f"{name:<42} BLEU {row['reference']['bleu']:6.2f} -> {row['int8']['bleu']:6.2f} "
                f"({row['bleu_change']:+.2f}), {row['lines_differ']:4d} lines differ, attention max "
                f"{row['attention_max_abs_diff']:.4f} mean {row['attention_mean_abs_diff']:.6f}, "
                f"{row['bytes_reference'] / 1e6:.2f} -> {row['bytes_int8'] / 1e6:.2f} MB"
                + (f"; fp16 {floor['bleu_change']:+.2f}, {floor['lines_differ']} lines differ" if floor else ""),
                flush=True,
            )
            for label, v in row.get("variants", {}).items():
                print(f"    {label:<40} {v['bleu_change']:+.2f}, {v['lines_differ']:4d} lines differ", flush=True)
    if args.out:
        summary = {
            "machine": describe(torch.device("cpu"))
            + (f", decoded on {describe(device)}" if device.type != "cpu" else ""),
            "largest_bleu_change": max((abs(r["bleu_change"]) for r in rows), default=0.0),
            "largest_attention_max_abs_diff": max((r["attention_max_abs_diff"] for r in rows), default=0.0),
            "rows": rows,
        }
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
        args.out.with_suffix(".md").write_text(table(rows), encoding="utf-8")
    return 0


def table(rows: list[dict]) -> str:
    """The table of docs/models.md: one row per model."""
    lines = [
        "| model | BLEU unquantized | BLEU int8 | change | lines that differ | attention max abs diff | mean "
        "| MB | int8 MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['reference']['bleu']:.2f} | {r['int8']['bleu']:.2f} | {r['bleu_change']:+.2f} | "
            f"{r['lines_differ']} of {r['n']} | {r['attention_max_abs_diff']:.4f} | "
            f"{r['attention_mean_abs_diff']:.6f} | "
            f"{r['bytes_reference'] / 1e6:.2f} | {r['bytes_int8'] / 1e6:.2f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
