"""``python -m attnviz``: list, translate, align, train, evaluate, data, bench.

Exit codes: 0 on success, 2 with a one-line message on stderr for bad input, a bad data file
or a bad checkpoint (argparse uses 2 for bad flags too). Never a traceback for a user mistake.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from attnviz import bench, catalog
from attnviz.attention import SCORES
from attnviz.config import ENCODERS, STYLES
from attnviz.data import cli as data_cli
from attnviz.data.spec import TASKS, load_corpus, pair_options
from attnviz.errors import AttnvizError


def _ranged(kind: type, lo: float, hi: float) -> Callable[[str], float]:
    """An argparse type: ``kind(text)`` within ``[lo, hi]``, else a clear usage error."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            noun = "whole number" if kind is int else "number"
            raise argparse.ArgumentTypeError(f"{text!r} is not a {noun}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{value} is out of range [{lo}, {hi}]")
        return value

    return parse


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    return _ranged(int, lo, hi)


def float_in(lo: float, hi: float) -> Callable[[str], float]:
    return _ranged(float, lo, hi)


def _print_json(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, allow_nan=False))


def cmd_list(args) -> int:
    models = catalog.list_models()
    if args.json:
        _print_json({"scores": sorted(SCORES), "styles": list(STYLES), "tasks": TASKS, "models": models})
        return 0
    print("score functions:", ", ".join(sorted(SCORES)))
    print("tasks:", ", ".join(TASKS))
    for m in models:
        print(f"{m['name']:<32} {m['task'] or '?':<16} {m['score']:<10} {m['style']:<9} {m['source']}")
    if not models:
        print("no models yet: train one with `python -m attnviz train --data dates --out models/dates.safetensors`")
    return 0


def cmd_translate(args) -> int:
    model = catalog.load(args.model, roots=catalog.model_roots(include_cwd=True))
    al = model.translate(args.text, beam_size=args.beam, max_len=args.max_len)
    replace_unk = not args.keep_unk
    if args.json:
        _print_json({"translation": model.text_of(al, replace_unk), **al.to_dict()})
        return 0
    hyps = al.hypotheses or [al]
    for h in hyps:
        prefix = f"{h.log_prob:8.3f}  " if len(hyps) > 1 else ""
        print(prefix + model.text_of(h, replace_unk))
    print("alignment (source-target):", al.to_pharaoh())
    unknown = [t for t, u in zip(al.source_tokens, al.source_unknown, strict=True) if u]
    if unknown:
        print("unknown words:", ", ".join(unknown), file=sys.stderr)
    return 0


def cmd_align(args) -> int:
    model = catalog.load(args.model, roots=catalog.model_roots(include_cwd=True))
    al = model.align(args.source, args.target)
    if args.json:
        _print_json(al.to_dict())
    else:
        print(al.to_pharaoh())
    return 0


def _recipe_from_args(args):
    from attnviz.recipe import Recipe

    recipe = Recipe.from_file(args.recipe) if args.recipe else Recipe(name=args.name or "model", data=args.data)
    if args.data:
        recipe.data = args.data
    overrides = {
        "model": {"score": args.score, "style": args.style, "encoder": args.encoder, "emb_dim": args.emb,
                  "hidden_dim": args.hidden, "attn_dim": args.attn, "enc_layers": args.layers,
                  "dec_layers": args.layers, "dropout": args.dropout,
                  "input_feeding": True if args.input_feeding else None},
        "train": {"epochs": args.epochs, "batch_size": args.batch, "lr": args.lr, "seed": args.seed,
                  "device": args.device, "max_steps": args.max_steps},
        "data_options": {"n_train": args.n_train},
    }  # fmt: skip
    for section, values in overrides.items():
        getattr(recipe, section).update({k: v for k, v in values.items() if v is not None})
    if args.max_vocab is not None:
        recipe.max_vocab = args.max_vocab
    if args.name:
        recipe.name = args.name
    return Recipe(**recipe.to_dict())  # re-validate


def cmd_train(args) -> int:
    from tqdm import tqdm

    from attnviz.recipe import run_recipe

    if not args.recipe and not args.data:
        raise AttnvizError("name what to train on: --data SPEC (e.g. --data dates) or --recipe FILE")
    recipe = _recipe_from_args(args)
    out = Path(args.out) if args.out else catalog.models_dir() / f"{recipe.name}.safetensors"
    bar = None

    def report(p) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=p.total_steps, disable=args.quiet, unit="step", file=sys.stderr)
        bar.n = p.step
        bar.set_postfix(epoch=p.epoch, loss=f"{p.loss:.3f}", acc=f"{p.accuracy:.3f}", refresh=False)
        bar.refresh()
        if p.kind == "epoch" and not args.quiet:
            valid = f", valid loss {p.valid_loss:.3f}, acc {p.valid_accuracy:.3f}" if p.valid_loss is not None else ""
            rate = f", lr {p.lr:.2e}" if p.lr is not None else ""
            bar.write(f"epoch {p.epoch}: loss {p.loss:.3f}, acc {p.accuracy:.3f}{valid}{rate}", file=sys.stderr)

    translator = run_recipe(recipe, out, callback=report, resume=args.resume)
    if bar is not None:
        bar.close()
    summary = {"path": str(out), "metrics": translator.meta.get("metrics"), "seconds": translator.meta["train_seconds"]}
    if args.json:
        _print_json(summary)
    else:
        print(f"saved {out}: {summary['metrics']}")
    return 0


def cmd_evaluate(args) -> int:
    from attnviz.evaluate import evaluate

    model = catalog.load(args.model, roots=catalog.model_roots(include_cwd=True))
    spec = args.data or model.meta.get("task")
    if not spec:
        raise AttnvizError("this model does not name its task; give --data SPEC")
    # the model's own task is rebuilt with the options it was trained with (same test split)
    options = {} if args.data else (model.meta.get("recipe_full") or {}).get("data_options", {})
    corpus = load_corpus(spec, **pair_options(options))
    pairs = corpus.split(args.split)[: args.n] if args.n else corpus.split(args.split)
    report = evaluate(model, pairs, beam_size=args.beam, replace_unk=not args.keep_unk)
    result = {"model": args.model, "data": spec, "split": args.split, **report.to_dict()}
    if args.json:
        _print_json(result)
    else:
        for key, value in result.items():
            print(f"{key:>12}: {value}")
    return 0


def cmd_leaderboard(args) -> int:
    from attnviz import leaderboard

    if args.write_readme:
        changed = leaderboard.write_readme()
        print("README.md updated" if changed else "README.md already up to date")
    elif args.json:
        _print_json(catalog.read_manifest())
    else:
        print(leaderboard.markdown())
    return 0


def _add_keep_unk(p: argparse.ArgumentParser) -> None:
    p.add_argument("--keep-unk", action="store_true",
                   help="print <unk> as is (default: replace it by the source word attended to most)")  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m attnviz", description="Explore attention in seq2seq models.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="score functions, tasks and models")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("translate", help="translate a sentence and show its alignment")
    p.add_argument("--model", required=True, help="a model name (see `list`) or a .safetensors path")
    p.add_argument("--beam", type=int_in(1, 20), default=1)
    p.add_argument("--max-len", type=int_in(1, 1000), default=None)
    p.add_argument("--json", action="store_true", help="print the full trace as JSON")
    _add_keep_unk(p)
    p.add_argument("text")
    p.set_defaults(func=cmd_translate)

    p = sub.add_parser("align", help="force the decoder through a translation and show its attention")
    p.add_argument("--model", required=True)
    p.add_argument("--json", action="store_true")
    p.add_argument("source")
    p.add_argument("target")
    p.set_defaults(func=cmd_align)

    p = sub.add_parser("train", help="train a model from a recipe or from flags")
    p.add_argument("--recipe", help="a recipe JSON file (flags below override it)")
    p.add_argument("--data", help=f"a data spec: {', '.join(TASKS)}, multi30k-de-en, FILE?src=..&tgt=..")
    p.add_argument("--name")
    p.add_argument("--score", choices=sorted(SCORES))
    p.add_argument("--style", choices=STYLES)
    p.add_argument("--encoder", choices=ENCODERS)
    p.add_argument("--emb", type=int_in(1, 4096))
    p.add_argument("--hidden", type=int_in(1, 4096))
    p.add_argument("--attn", type=int_in(1, 4096))
    p.add_argument("--layers", type=int_in(1, 8))
    p.add_argument("--dropout", type=float_in(0.0, 0.95))
    p.add_argument("--input-feeding", action="store_true")
    p.add_argument("--epochs", type=int_in(1, 1000))
    p.add_argument("--batch", type=int_in(1, 4096))
    p.add_argument("--lr", type=float_in(1e-6, 1.0))
    p.add_argument("--seed", type=int_in(0, 2**31 - 1))
    p.add_argument("--n-train", type=int_in(1, 10_000_000))
    p.add_argument("--max-vocab", type=int_in(5, 1_000_000))
    p.add_argument("--max-steps", type=int_in(1, 10_000_000))
    p.add_argument("--device", help="cpu, cuda or mps (default: the best available)")
    p.add_argument("--out", help="checkpoint path (default: models/NAME.safetensors)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted training of the same recipe at --out from its last epoch")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("evaluate", help="BLEU, exact match, AER and entropy of a model")
    p.add_argument("--model", required=True)
    p.add_argument("--data", help="a data spec (default: the model's own task)")
    p.add_argument("--split", default="test", choices=["train", "valid", "test"])
    p.add_argument("--n", type=int_in(1, 1_000_000), default=None, help="evaluate the first N pairs only")
    p.add_argument("--beam", type=int_in(1, 20), default=1)
    p.add_argument("--json", action="store_true")
    _add_keep_unk(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("leaderboard", help="the shipped models' metrics as a table (from the manifest)")
    p.add_argument("--write-readme", action="store_true", help="put the table into README.md")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_leaderboard)

    p = sub.add_parser("data", help="print pairs of a data set (with gold links) or its summary")
    data_cli.add_arguments(p)
    p.set_defaults(func=data_cli.run)

    p = sub.add_parser("bench", help="training and decoding speed on random data")
    bench.add_arguments(p)
    p.set_defaults(func=bench.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except AttnvizError as e:
        print(f"attnviz {args.command}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"attnviz {args.command}: error: {e.strerror or e}: {e.filename or ''}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"attnviz {args.command}: interrupted", file=sys.stderr)
        return 130
