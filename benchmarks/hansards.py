"""Attention on real language: every shipped en-fr model's AER on the Hansards gold (447 pairs), beside eflomal.

The Hansards en-fr test set (NAACL 2003; ../shared/data/gold/hansards-en-fr) is read exactly as
shipped: the ``source ||| target`` bitext and the 1-based talp links, through
:mod:`attnviz.links.goldfile` (format and base detected). Each model is forced through the
reference French; its attention is read on the given words (the model's tokens and BPE pieces
merged back into each Hansards word, ``<eos>`` hidden) and turned into links:

* ``argmax`` (each French word to the English word it attends to most) and ``threshold`` (every
  weight >= 0.3), from the model alone;
* ``intersection`` and ``grow-diag-final`` with a French-to-English model forced the other way,
  where one is given (``--reverse``: the shipped ``multi30k-fr-en-general-luong``, en-fr's recipe
  turned round).

eflomal (Östling & Tiedemann 2016; default settings, not seeded) aligns the 447 pairs together
with Multi30k en-fr's 29,000 training pairs, words lowercased, and, for reference, the 447 pairs
alone. Every figure is given on all 447 pairs and on the pairs whose words all occur in
Multi30k's training text (the rest hold words no shipped model has seen as a word: it reads them
as BPE pieces of words it knows). AER, precision and recall follow Och & Ney (2003).

    OMP_NUM_THREADS=1 python benchmarks/hansards.py --reverse multi30k-fr-en-general-luong \\
        --out benchmarks/results/hansards.json
    ... --models multi30k-en-fr-additive-luong-guided --no-eflomal --out ...  # one model's rows added or redone

``--pivot`` runs no model: it prints docs/results.md's table of AER on all pairs (a row per model,
plain and adapted; a column per method) from the stored figures of benchmarks/results/hansards.json.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import attnviz
from attnviz.data import Tokenizer, default_multi30k
from attnviz.decoding import argmax_links
from attnviz.links import (
    GoldAlignment,
    file_lines,
    parse_gold,
    read_pairs,
    score_links,
    word_attentions,
    word_pairs,
)
from attnviz.links import eflomal as eflomal_align
from attnviz.links.extract import symmetrise, threshold_links, transpose
from attnviz.training import AdaptConfig, adapt

try:  # Whisper's monotonic (DTW) extraction, where attnviz.links has it
    from attnviz.links.dtw import dtw_links
except ImportError:
    dtw_links = None

GOLD = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "gold" / "hansards-en-fr"
RESULTS = Path(__file__).resolve().parent / "results" / "hansards.json"
EFLOMAL_METHODS = ("grow-diag-final-and", "intersection", "forward")
THRESHOLD = 0.3
METHODS = ("argmax", "threshold", "dtw", "intersection", "grow-diag-final")


def scores(links, gold, keep) -> dict:
    """Precision, recall, AER (and counts) over the pairs of ``keep``."""
    chosen = [links[k] if k in keep else None for k in range(len(gold))]
    total, _ = score_links(chosen, gold)
    return {"pairs": len(keep), **total.to_dict()}


def _inside(links, src: set[int], tgt: set[int]) -> set:
    return {(i, j) for i, j in links if i in src and j in tgt}


def seen_only(links, gold, seen) -> dict:
    """Precision, recall, AER over all pairs, the gold and predicted links restricted to links
    between two words seen in Multi30k (``seen``: per pair, the seen source and target positions)."""
    kept_links, kept_gold = [], []
    for predicted, g, (src, tgt) in zip(links, gold, seen, strict=True):
        kept_links.append(_inside(predicted, src, tgt))
        kept_gold.append(GoldAlignment(_inside(g.sure, src, tgt), _inside(g.possible, src, tgt)))
    total, _ = score_links(kept_links, kept_gold)
    return {"pairs": len(gold), **total.to_dict()}


def measure(links, gold, subsets, seen) -> dict:
    """The figures of one aligner: each subset of pairs, and the links between seen words."""
    return {
        **{name: scores(links, gold, keep) for name, keep in subsets.items()},
        "seen-words": seen_only(links, gold, seen),
    }


def seen_words(folder: str) -> tuple[set[str], set[str], list[tuple[list[str], list[str]]]]:
    """Multi30k en-fr training words (lowercased, the models' word cut) and its training pairs as words."""
    corpus = attnviz.load_corpus(f"multi30k-en-fr@{folder}")
    pairs = word_pairs(corpus.train)
    return {w for s, _ in pairs for w in s}, {w for _, t in pairs for w in t}, pairs


def known(words: list[str], vocabulary: set[str]) -> bool:
    cut = Tokenizer("word", lowercase=True).tokenize
    return all(t in vocabulary for w in words for t in cut(w))


def attention_links(model, sources, targets, reverse: bool = False) -> list[set]:
    """Argmax links per pair (source, target) of a model forced through each target; ``reverse``: the
    model reads the target and is forced through the source (links returned as (source, target))."""
    readings = word_attentions(model, targets, sources) if reverse else word_attentions(model, sources, targets)
    return [transpose(argmax_links(r.weights)) if reverse else argmax_links(r.weights) for r in readings]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", default=str(GOLD), help="the folder of test.en-fr and enfr.talp")
    parser.add_argument("--multi30k", default=str(default_multi30k()), help="the Multi30k folder")
    parser.add_argument("--reverse", help="a fr-en model (name or .safetensors) for the symmetric methods")
    parser.add_argument("--models", nargs="*", help="en-fr models (default: every shipped one)")
    parser.add_argument("--limit", type=int, help="only the first N pairs (a quick check)")
    parser.add_argument("--no-eflomal", action="store_true", help="attention only (eflomal's figures kept from --out)")
    parser.add_argument("--out", help="write the figures here as JSON (and the table beside it, as .md)")
    parser.add_argument("--adapt", type=int, help="fine-tune copies of the models N steps on the pairs")
    parser.add_argument("--adapt-guided", action="store_true", help="with --adapt: guided by eflomal on the pairs")
    parser.add_argument("--adapt-lr", type=float, default=5e-4, help="with --adapt (default 5e-4)")
    parser.add_argument(
        "--pivot",
        nargs="?",
        const=str(RESULTS),
        metavar="JSON",
        help="print the pivot table of docs/results.md from stored figures (default: the shipped ones) and stop",
    )
    args = parser.parse_args()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    if args.pivot:
        print(pivot(json.loads(Path(args.pivot).read_text(encoding="utf-8"))), end="")
        return
    torch.set_num_threads(1)

    folder = Path(args.gold)
    sources, targets = read_pairs(folder / "test.en-fr")
    sources, targets = sources[: args.limit], targets[: args.limit]
    lengths = [(len(s), len(t)) for s, t in zip(sources, targets, strict=True)]
    gold_file = parse_gold(file_lines(folder / "enfr.talp")[: len(lengths)], lengths)
    gold = gold_file.alignments
    en_seen, fr_seen, train = seen_words(args.multi30k)
    in_vocab = {
        k for k, (s, t) in enumerate(zip(sources, targets, strict=True)) if known(s, en_seen) and known(t, fr_seen)
    }
    every = set(range(len(gold)))
    words = sum(len(s) + len(t) for s, t in zip(sources, targets, strict=True))
    unseen = sum(not known([w], en_seen) for s in sources for w in s) + sum(
        not known([w], fr_seen) for t in targets for w in t
    )
    previous = json.loads(Path(args.out).read_text(encoding="utf-8")) if args.out and Path(args.out).exists() else {}
    results = {
        "gold": {
            "pairs": len(gold),
            "convention": gold_file.convention(),
            "sure": sum(len(g.sure) for g in gold),
            "possible": sum(len(g.possible) for g in gold),
        },
        "in_vocabulary_pairs": len(in_vocab),
        "unseen_words": unseen,
        "words": words,
        "threshold": THRESHOLD,
        "attention": previous.get("attention", {}),  # a run of some models updates theirs
        "eflomal": previous.get("eflomal", {}) if args.no_eflomal else {},
        **({"commands": previous["commands"]} if "commands" in previous else {}),  # how the stored rows were made
    }
    subsets = {"all": every, "in-vocabulary": in_vocab}
    seen = [
        ({i for i, w in enumerate(s) if known([w], en_seen)}, {j for j, w in enumerate(t) if known([w], fr_seen)})
        for s, t in zip(sources, targets, strict=True)
    ]

    reverse_links = None
    if "reverse" in previous and not args.reverse:
        results["reverse"] = previous["reverse"]
    adapting = AdaptConfig(steps=args.adapt, lr=args.adapt_lr, guided=args.adapt_guided) if args.adapt else None
    how = f" adapted {args.adapt}{' guided' if args.adapt_guided else ''}" if args.adapt else ""
    if args.reverse:
        start = time.perf_counter()
        reverse = attnviz.load(args.reverse)
        if adapting:
            reverse = adapt(reverse, targets, sources, adapting)
        reverse_links = attention_links(reverse, sources, targets, reverse=True)
        results["reverse"] = {
            "model": Path(args.reverse).stem + how,
            "seconds": round(time.perf_counter() - start, 1),
            **{f"argmax {name}": value for name, value in measure(reverse_links, gold, subsets, seen).items()},
        }
        print(json.dumps(results["reverse"]), flush=True)

    shipped = [m for m in attnviz.list_models() if m.source == "pretrained"]
    names = args.models or [m.name for m in shipped if m.task == "multi30k-en-fr"]
    for name in names:
        model = attnviz.load(name)
        start = time.perf_counter()
        if adapting:
            model = adapt(model, sources, targets, adapting)
        readings = word_attentions(model, sources, targets)
        methods = {
            "argmax": [argmax_links(r.weights) for r in readings],
            "threshold": [threshold_links(r.weights, THRESHOLD) for r in readings],
        }
        if dtw_links is not None:
            methods["dtw"] = [dtw_links(r.weights) for r in readings]
        if reverse_links is not None:
            for method in ("intersection", "grow-diag-final"):
                methods[method] = [
                    symmetrise(f, b, method) for f, b in zip(methods["argmax"], reverse_links, strict=True)
                ]
        unk = sum(
            any(model.unknown_words(s)) or any(model.unknown_words(t, "target"))
            for s, t in zip(sources, targets, strict=True)
        )
        row = {"seconds": round(time.perf_counter() - start, 1), "unk_pairs": unk}
        for method, links in methods.items():
            for subset, value in measure(links, gold, subsets, seen).items():
                row[f"{method} {subset}"] = value
        results["attention"][name + how] = row
        print(name, json.dumps({k: v["aer"] for k, v in row.items() if isinstance(v, dict)}), flush=True)

    lowered = [([w.lower() for w in s], [w.lower() for w in t]) for s, t in zip(sources, targets, strict=True)]
    for extra, text in () if args.no_eflomal else (("multi30k", train), ("alone", [])):
        for method in EFLOMAL_METHODS if extra == "multi30k" else EFLOMAL_METHODS[:1]:
            start = time.perf_counter()
            links = eflomal_align.run_eflomal(lowered, text, method=method)
            row = {"seconds": round(time.perf_counter() - start, 1), "train_pairs": len(text)}
            row.update(measure(links, gold, subsets, seen))
            results["eflomal"][f"{method} + {extra}"] = row
            print("eflomal", method, extra, row["all"]["aer"], flush=True)

    text = json.dumps(results, indent=2, ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        Path(args.out).with_suffix(".md").write_text(table(results), encoding="utf-8")
    print(table(results))


def table(results: dict) -> str:
    """The AER table of docs/results.md, one row per aligner: all pairs, links of seen words, in-vocabulary pairs."""
    n, known_n = results["gold"]["pairs"], results["in_vocabulary_pairs"]
    lines = [
        f"| aligner | AER, all {n} pairs | precision | recall | AER, links between seen words | "
        f"AER, {known_n} in-vocabulary pairs |",
        "|---|---|---|---|---|---|",
    ]

    def row(name: str, whole: dict, seen: dict, part: dict) -> None:
        figures = (whole["aer"], whole["precision"], whole["recall"], seen["aer"], part["aer"])
        lines.append(f"| {name} | " + " | ".join(f"{x:.3f}" for x in figures) + " |")

    for name, entry in results["eflomal"].items():
        row(f"eflomal {name}", entry["all"], entry["seen-words"], entry["in-vocabulary"])
    if "reverse" in results:
        rev = results["reverse"]
        row(f"{rev['model']} (fr-en) argmax", rev["argmax all"], rev["argmax seen-words"], rev["argmax in-vocabulary"])
    for name, entry in results["attention"].items():
        for method in METHODS:
            if f"{method} all" in entry:
                label = f"threshold {results['threshold']}" if method == "threshold" else method
                figures = (entry[f"{method} {part}"] for part in ("all", "seen-words", "in-vocabulary"))
                row(f"{name} {label}", *figures)
    return "\n".join(lines) + "\n"


RUN = re.compile(r"(?P<model>.+?)(?: adapted \d+(?P<guided> guided)?)?")  # the keys main() writes
RUNS = ("plain", "adapted", "adapted, guided")


def model_label(name: str) -> str:
    """``multi30k-en-fr-dot-luong`` as ``dot/luong``; its guided twin as ``dot/luong, guided twin``."""
    twin = ", guided twin" if name.endswith("-guided") else ""
    score, _, decoder = name.removesuffix("-guided").removeprefix("multi30k-en-fr-").rpartition("-")
    return f"{score}/{decoder}{twin}" if score else name


def pivot(results: dict) -> str:
    """AER on all pairs, a row per model and run (plain, adapted, adapted with guidance), a column per
    method, the lowest figure in bold: the table of docs/results.md."""
    aer: dict[str, dict[str, dict[str, float]]] = {}  # model -> run -> method -> AER
    for key, entry in results["attention"].items():
        run = RUN.fullmatch(key)
        how = "plain" if run[0] == run["model"] else "adapted, guided" if run["guided"] else "adapted"
        runs = aer.setdefault(model_label(run["model"]), {})
        if how in runs:
            raise ValueError(f"two {how} runs of {run['model']} in the figures ({key!r}): keep one to pivot them")
        runs[how] = {m: entry[f"{m} all"]["aer"] for m in METHODS if f"{m} all" in entry}
    cells = [figures for runs in aer.values() for figures in runs.values()]
    methods = [m for m in METHODS if any(m in figures for figures in cells)]
    best = min((x for figures in cells for x in figures.values()), default=None)
    names = {"threshold": f"threshold {results['threshold']}", "dtw": "DTW"}
    lines = [
        "| en-fr model | | " + " | ".join(names.get(m, m) for m in methods) + " |",
        "|---|---|" + "---:|" * len(methods),
    ]
    for model, runs in aer.items():
        for how in (r for r in RUNS if r in runs):
            figures = (runs[how].get(m) for m in methods)
            shown = ("" if x is None else f"**{x:.3f}**" if x == best else f"{x:.3f}" for x in figures)
            lines.append(f"| {model} | {how} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
