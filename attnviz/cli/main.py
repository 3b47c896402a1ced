"""``python -m attnviz``: list, translate, align, train, evaluate, data, bench.

Exit codes: 0 on success, 2 with a one-line message on stderr for bad input, a bad data file,
a bad checkpoint or running out of memory (argparse uses 2 for bad flags too). Never a
traceback for a user mistake. ``train`` never writes into ``pretrained/`` and never overwrites
a file without ``--force``; it checks the output path before training starts.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

from attnviz.cli import align as align_cli
from attnviz.cli import attribute as attribution_cli
from attnviz.cli import bench as bench_cli
from attnviz.cli import data as data_cli
from attnviz.data import TASKS
from attnviz.errors import AttnvizError, ConfigError
from attnviz.model import ENCODERS, SCORES, STYLES
from attnviz.store import (
    SUFFIX,
    ModelWarning,
    check_output,
    clean_stale_temp,
    list_models,
    load,
    model_roots,
    models_dir,
    read_manifest,
    slugify,
)


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
    models = list_models()
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
    model = load(args.model, roots=model_roots(include_cwd=True))
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
    if args.method or args.reverse_model:
        return align_cli.run_align(args)
    model = load(args.model, roots=model_roots(include_cwd=True))
    al = model.align(args.source, args.target)
    if args.json:
        _print_json(al.to_dict())
    else:
        print(al.to_pharaoh())
    return 0


def _recipe_from_args(args):
    from attnviz.training import Recipe

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
        "guided": {"weight": args.guided_weight or None, "links": args.guided_links},
    }  # fmt: skip
    for section, values in overrides.items():
        getattr(recipe, section).update({k: v for k, v in values.items() if v is not None})
    if args.guided_weight == 0:
        recipe.guided = {}  # --guided-weight 0: train the recipe without guidance
    if args.max_vocab is not None:
        recipe.max_vocab = args.max_vocab
    if args.name:
        recipe.name = args.name
    recipe.name = slugify(recipe.name)  # a name is a file stem, never a path
    return Recipe(**recipe.to_dict())  # re-validate


def _output_path(args, recipe) -> Path:
    """The checkpoint path, checked before any training (suffix, folder, pretrained/, existing file)."""
    from attnviz.training import unfinished

    out = Path(args.out) if args.out else models_dir() / f"{recipe.name}{SUFFIX}"
    resuming = bool(args.resume) and unfinished(recipe, out) is not None
    if args.resume and out.exists() and not resuming and not args.force:
        raise ConfigError(
            f"{out} holds no unfinished training of this recipe to resume; drop --resume and choose another "
            "--name or --out, or add --force to overwrite it"
        )
    check_output(out, force=args.force, resuming=resuming)
    clean_stale_temp(out.parent)
    return out


def cmd_train(args) -> int:
    from attnviz.training import SingleProcess, join_torchrun

    if not args.recipe and not args.data:
        raise AttnvizError("name what to train on: --data SPEC (e.g. --data dates) or --recipe FILE")
    recipe = _recipe_from_args(args)
    if args.precision:
        recipe.train["precision"] = args.precision
    out = _output_path(args, recipe)
    with join_torchrun(recipe.train.get("device", "cpu")) if args.distributed else SingleProcess() as group:
        translator = _train(args, recipe, out, group)
    if not group.is_main:
        return 0
    for note in translator.meta.get("data_notes") or []:  # pairs dropped when the corpus was built
        print(f"note: {note}", file=sys.stderr)
    summary = {"path": str(out), "metrics": translator.meta.get("metrics"), "seconds": translator.meta["train_seconds"]}
    if args.json:
        _print_json(summary)
    else:
        print(f"saved {out}: {summary['metrics']}")
    return 0


def _train(args, recipe, out: Path, group):
    """run_recipe with a progress bar and epoch lines on stderr (rank 0 alone draws them)."""
    from tqdm import tqdm

    from attnviz.training import run_recipe

    quiet, bar = args.quiet or not group.is_main, None

    def report(p) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=p.total_steps, disable=quiet, unit="step", file=sys.stderr)
            if not quiet:
                bar.write(f"training on {p.hardware}", file=sys.stderr)
        bar.n = p.step
        align = {} if p.align_loss is None else {"align": f"{p.align_loss:.3f}"}
        bar.set_postfix(epoch=p.epoch, loss=f"{p.loss:.3f}", acc=f"{p.accuracy:.3f}", **align, refresh=False)
        bar.refresh()
        if p.kind == "epoch" and not quiet:
            valid = f", valid loss {p.valid_loss:.3f}, acc {p.valid_accuracy:.3f}" if p.valid_loss is not None else ""
            rate = f", lr {p.lr:.2e}" if p.lr is not None else ""
            align = f", align loss {p.align_loss:.3f}" if p.align_loss is not None else ""
            bar.write(f"epoch {p.epoch}: loss {p.loss:.3f}{align}, acc {p.accuracy:.3f}{valid}{rate}", file=sys.stderr)

    translator = run_recipe(recipe, out, callback=report, resume=args.resume, group=group)
    if bar is not None:
        bar.close()
    return translator


def cmd_evaluate(args) -> int:
    from attnviz.evaluation import evaluate_checkpoints

    done = evaluate_checkpoints(
        args.model, data=args.data, split=args.split, n=args.n, beam_size=args.beam,
        replace_unk=not args.keep_unk, roots=model_roots(include_cwd=True),
    )  # fmt: skip
    if len(args.model) == 1 and done.errors:
        raise AttnvizError(done.errors[0]["error"])
    if args.json:
        _print_json(done.rows[0] if len(args.model) == 1 else {"results": done.rows, "errors": done.errors})
    else:
        for k, row in enumerate(done.rows):
            print("\n" * (k > 0) + "\n".join(f"{key:>12}: {value}" for key, value in row.items()))
    for error in done.errors:  # the rows above are kept; each broken model is one line here
        print(f"attnviz evaluate: error: {error['model']}: {error['error']}", file=sys.stderr)
    return 2 if done.errors else 0


def cmd_leaderboard(args) -> int:
    from attnviz.evaluation import leaderboard_markdown, write_table

    if args.write:
        changed = write_table(Path(args.write))
        print(f"{args.write} updated" if changed else f"{args.write} already up to date")
    elif args.json:
        _print_json(read_manifest())
    else:
        print(leaderboard_markdown())
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
    align_cli.add_method_arguments(p, default=None)
    p.add_argument("source")
    p.add_argument("target")
    p.set_defaults(func=cmd_align)

    p = sub.add_parser("align-eval", help="precision, recall and AER of attention links against a gold file")
    align_cli.add_eval_arguments(p)
    p.set_defaults(func=align_cli.run_eval)

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
    p.add_argument("--guided-weight", type=float_in(0.0, 10.0),
                   help="guided alignment: weight of the loss pulling attention towards reference links "
                   "(0.3 is a good start; 0 trains a guided recipe without guidance)")  # fmt: skip
    p.add_argument("--guided-links",
                   help="guided alignment links: eflomal (align the training pairs), gold (built-in tasks) or a "
                   "Pharaoh file with one line of word links per training pair (default eflomal)")  # fmt: skip
    p.add_argument("--device", help="cpu (default), cuda, cuda:N, mps or auto (the first GPU, else the CPU)")
    p.add_argument(
        "--precision",
        choices=["fp32", "bf16", "auto"],
        help="fp32 (default), bf16 (mixed precision: GPUs, CPUs with AVX512-BF16 or AMX) or auto (bf16 where "
        "it was measured faster: GPUs, CPUs with AMX, AMD CPUs with AVX512-BF16; else fp32)",
    )
    p.add_argument(
        "--distributed",
        action="store_true",
        help="data-parallel over the processes of a torchrun job: "
        "torchrun --nproc_per_node N -m attnviz train ... --distributed",
    )
    p.add_argument("--out", help="checkpoint path (default: models/NAME.safetensors); never inside pretrained/")
    p.add_argument("--force", action="store_true", help="overwrite --out (or models/NAME.safetensors) if it exists")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted training of the same recipe at --out from its last epoch")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("evaluate", help="BLEU, exact match, AER and entropy of a model")
    p.add_argument("--model", required=True, action="append",
                   help="a model name or checkpoint path; repeat it to evaluate several (a broken one is reported, "
                   "the others still measured)")  # fmt: skip
    p.add_argument("--data", help="a data spec (default: the model's own task)")
    p.add_argument("--split", default="test", choices=["train", "valid", "test"])
    p.add_argument("--n", type=int_in(1, 1_000_000), default=None, help="evaluate the first N pairs only")
    p.add_argument("--beam", type=int_in(1, 20), default=1)
    p.add_argument("--json", action="store_true")
    _add_keep_unk(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("leaderboard", help="the shipped models' metrics as a table (from the manifest)")
    p.add_argument("--write", metavar="FILE.md", help="put the table between the leaderboard markers of FILE.md")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_leaderboard)

    p = sub.add_parser("data", help="print pairs of a data set (with gold links) or its summary")
    data_cli.add_arguments(p)
    p.set_defaults(func=data_cli.run)

    p = sub.add_parser("bench", help="training and decoding speed on random data")
    bench_cli.add_arguments(p)
    p.set_defaults(func=bench_cli.run)

    p = sub.add_parser("attribute", help="gradient attributions of each output token to the source, beside attention")
    attribution_cli.add_arguments(p)
    p.set_defaults(func=attribution_cli.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", ModelWarning)
            warnings.showwarning = _warn_one_line(args.command)
            return args.func(args)
    except AttnvizError as e:
        print(f"attnviz {args.command}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"attnviz {args.command}: error: {e.strerror or e}: {e.filename or ''}", file=sys.stderr)
        return 2
    except (MemoryError, RuntimeError) as e:
        if not _out_of_memory(e):
            raise  # a bug: keep the traceback
        detail = " ".join(str(e).split())[:200]
        print(f"attnviz {args.command}: error: out of memory ({detail}); use smaller sizes (--hidden, --emb, "
              "--batch, --len, --vocab) or a machine with more memory", file=sys.stderr)  # fmt: skip
        return 2
    except KeyboardInterrupt:
        print(f"attnviz {args.command}: interrupted", file=sys.stderr)
        return 130


def _out_of_memory(e: BaseException) -> bool:
    """MemoryError, torch's OutOfMemoryError, or the CPU allocator's RuntimeError."""
    torch = sys.modules.get("torch")
    if isinstance(e, MemoryError) or (torch is not None and isinstance(e, torch.OutOfMemoryError)):
        return True
    text = str(e).lower()
    return "out of memory" in text or "can't allocate memory" in text or "cannot allocate memory" in text


def _warn_one_line(command: str):
    """``warnings.showwarning`` for the CLI: a skipped model is one line on stderr."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        print(f"attnviz {command}: warning: {message}", file=sys.stderr)

    return show
