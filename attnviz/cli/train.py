"""``attnviz train``: train a model from a recipe or from flags.

It never writes into ``pretrained/`` and never overwrites a file without ``--force``; it checks
the output path before training starts.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from attnviz.cli.options import DATA_SPEC, float_in, int_in, print_json
from attnviz.cli.stopping import stopped
from attnviz.devices import DEVICES
from attnviz.errors import AttnvizError, ConfigError
from attnviz.model import ENCODERS, SCORES, STYLES
from attnviz.store import (
    MAX_NAME,
    SUFFIX,
    another_place,
    check_output,
    clean_stale_temp,
    hold_lock,
    models_dir,
    name_lock,
    release_lock,
    slugify,
)

if TYPE_CHECKING:
    from attnviz.decoding import Translator
    from attnviz.training import Progress, Recipe, SingleProcess

HELP = "train a model from a recipe or from flags"
EVAL_N = None  # the whole test split by default, so a retrained model's metrics compare with the leaderboard


def eval_count(text: str) -> int | None:
    """An argparse type for ``--eval-n``: a whole number from 0, or ``all`` (None: the whole split)."""
    return None if text.strip().lower() == "all" else int_in(0, 10_000_000)(text)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz train``."""
    p.add_argument(
        "--recipe", help="a recipe JSON file, or a shipped model's name for its recipe (flags below override it)"
    )
    p.add_argument("--data", help=f"the data: {DATA_SPEC} (default: the recipe's)")
    p.add_argument(
        "--name", help="the model's name (default: the recipe's, else model); saved as models/NAME.safetensors"
    )
    p.add_argument("--score", choices=sorted(SCORES), help=_default("attention score function", "additive"))
    p.add_argument("--style", choices=STYLES, help=_default("decoder style", "bahdanau"))
    p.add_argument("--encoder", choices=ENCODERS, help=_default("encoder", "gru"))
    p.add_argument("--emb", type=int_in(1, 4096), help=_default("embedding size", 128))
    p.add_argument("--hidden", type=int_in(1, 4096), help=_default("hidden size, per direction of an RNN encoder", 256))
    p.add_argument("--attn", type=int_in(1, 4096), help=_default("inner size of the concat and additive scores", 256))
    p.add_argument("--layers", type=int_in(1, 8), help=_default("layers of the encoder and of the decoder", 1))
    p.add_argument("--dropout", type=float_in(0.0, 0.95), help=_default("dropout", 0.1))
    p.add_argument(
        "--input-feeding", action="store_true", help=_default("Luong input feeding, for the luong style", "off")
    )
    p.add_argument("--epochs", type=int_in(1, 1000), help=_default("most epochs, fewer if early stopping ends it", 10))
    p.add_argument("--batch", type=int_in(1, 4096), help=_default("sentence pairs a batch", 64))
    p.add_argument("--lr", type=float_in(1e-6, 1.0), help=_default("learning rate", 0.001))
    p.add_argument("--seed", type=int_in(0, 2**31 - 1), help=_default("random seed", 0))
    p.add_argument(
        "--n-train",
        type=int_in(1, 10_000_000),
        help=_default("training pairs, a seeded sample", "all; a built-in task makes 5000"),
    )
    p.add_argument(
        "--max-vocab",
        type=int_in(5, 1_000_000),
        help=_default("largest vocabulary a side, the most frequent tokens kept", "no limit"),
    )
    p.add_argument(
        "--max-steps", type=int_in(1, 10_000_000), help=_default("stop after this many optimiser steps", "no limit")
    )
    p.add_argument(
        "--guided-weight",
        type=float_in(0.0, 10.0),
        help="guided alignment: weight of the loss pulling attention towards reference links "
        "(0.3 is a good start; 0 trains a guided recipe without guidance; default: the recipe's, else none)",
    )
    p.add_argument(
        "--guided-links",
        help="guided alignment links: eflomal (align the training pairs), gold (built-in tasks) or a "
        "Pharaoh file with one line of word links per training pair (default: the recipe's, else eflomal)",
    )
    p.add_argument(
        "--device",
        help=f"where the model trains: {', '.join(DEVICES)} (the first GPU, else the CPU); default: the recipe's, "
        "else cpu",
    )
    p.add_argument(
        "--precision",
        choices=["fp32", "bf16", "auto"],
        help="fp32, bf16 (mixed precision: GPUs, CPUs with AVX512-BF16 or AMX) or auto (bf16 where it was "
        "measured faster: CPUs with AMX, AMD CPUs with AVX512-BF16; else fp32, GPUs included); default: the "
        "recipe's, else fp32",
    )
    p.add_argument(
        "--no-cuda-graphs",
        action="store_true",
        help="on a GPU, run the Bahdanau decoder's recurrence eagerly, not as CUDA graphs",
    )
    p.add_argument(
        "--distributed",
        action="store_true",
        help="data-parallel over the processes of a torchrun job: "
        "torchrun --nproc_per_node N -m attnviz train ... --distributed",
    )
    p.add_argument(
        "--store",
        choices=["fp32", "fp16", "int8"],
        help="how the checkpoint keeps the weights: fp32, fp16, or int8 with a float32 scale per 64 columns of a "
        "row, a little over a quarter of fp32's bytes (the shipped models'); default fp32, whatever the recipe says",
    )
    p.add_argument("--out", help="checkpoint path (default: models/NAME.safetensors); never inside pretrained/")
    p.add_argument("--force", action="store_true", help="overwrite --out (or models/NAME.safetensors) if it exists")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted training of the same recipe at --out from its last epoch",
    )
    p.add_argument(
        "--eval-n",
        type=eval_count,
        default=EVAL_N,
        metavar="N",
        help="after training, measure BLEU, exact match, AER and entropy on the first N test pairs (default: all, "
        "the whole test split, as the shipped models were measured; 0: no evaluation); stored with the model",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar nor evaluation line")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the checkpoint's path, metrics and seconds (and ending, when it stopped early or keeps an "
        "earlier epoch) as one JSON object",
    )


def _default(what: str, value: object) -> str:
    """The help of a flag that overrides a recipe setting: what it sets, and its default without one."""
    return f"{what} (default: the recipe's, else {value})"


def run(args: argparse.Namespace) -> int:
    from attnviz.training import SingleProcess, join_torchrun

    if not args.recipe and not args.data:
        raise AttnvizError("name what to train on: --data SPEC (e.g. --data dates) or --recipe FILE")
    recipe = _recipe_from_args(args)
    if args.precision:
        recipe.train["precision"] = args.precision
    if args.no_cuda_graphs:
        recipe.train["cuda_graphs"] = False
    out = _output_path(args, recipe)
    lock = _hold_output(out, args.distributed)
    try:
        with join_torchrun(recipe.train.get("device", "cpu")) if args.distributed else SingleProcess() as group:
            translator = _train(args, recipe, out, group)
    except KeyboardInterrupt as e:  # Ctrl+C, or SIGTERM (stopping.Terminated)
        return stopped("train", e, f"; {_what_is_saved(recipe, out)}")
    finally:
        if lock is not None:
            release_lock(*lock)
            with contextlib.suppress(OSError):
                lock[0].parent.rmdir()  # the staging folder, when nothing else is in it
    if not group.is_main:
        return 0
    for note in translator.meta.get("data_notes") or []:  # pairs dropped when the corpus was built
        print(f"note: {note}", file=sys.stderr)
    summary = {"path": str(out), "metrics": translator.meta.get("metrics"), "seconds": translator.meta["train_seconds"]}
    if ending := translator.meta.get("ending"):  # stopped early, or keeps an earlier epoch's weights
        summary["ending"] = ending
        if not args.json:
            print(ending, file=sys.stderr)
    if args.json:
        print_json(summary)
    elif summary["metrics"] is None:
        print(f"saved {out} (not evaluated)")
    else:
        print(f"saved {out}: {summary['metrics']}")
    return 0


def _recipe_from_args(args: argparse.Namespace) -> Recipe:
    from attnviz.training import Recipe

    recipe = Recipe.from_file(args.recipe) if args.recipe else Recipe(name=args.name or "model", data=args.data)
    if args.data:
        recipe.data = args.data
    overrides = {
        "model": {
            "score": args.score,
            "style": args.style,
            "encoder": args.encoder,
            "emb_dim": args.emb,
            "hidden_dim": args.hidden,
            "attn_dim": args.attn,
            "enc_layers": args.layers,
            "dec_layers": args.layers,
            "dropout": args.dropout,
            "input_feeding": True if args.input_feeding else None,
        },
        "train": {
            "epochs": args.epochs,
            "batch_size": args.batch,
            "lr": args.lr,
            "seed": args.seed,
            "device": args.device,
            "max_steps": args.max_steps,
        },
        "data_options": {"n_train": args.n_train},
        "guided": {"weight": args.guided_weight or None, "links": args.guided_links},
    }
    for section, values in overrides.items():
        getattr(recipe, section).update({k: v for k, v in values.items() if v is not None})
    if args.guided_weight == 0:
        recipe.guided = {}  # --guided-weight 0: train the recipe without guidance
    if args.max_vocab is not None:
        recipe.max_vocab = args.max_vocab
    if args.name:
        recipe.name = args.name
    recipe.store = args.store or "fp32"  # your own trainings keep full precision unless asked
    stem = slugify(recipe.name, max_len=4 * len(recipe.name) + 1)  # a name is a file stem, never a path
    if len(stem) > MAX_NAME:  # cut, two names would share one file
        raise ConfigError(
            f"the model name {stem[:40]}... is {len(stem)} characters as a file name; a model's name has at most "
            f"{MAX_NAME}: give a shorter --name"
        )
    recipe.name = stem
    return Recipe(**recipe.to_dict())  # re-validate


def _what_is_saved(recipe: Recipe, out: Path) -> str:
    """After an interruption: the epoch ``out`` keeps and how to go on from it, or that nothing was saved."""
    from attnviz.training import unfinished

    progress = unfinished(recipe, out)
    if progress is None:
        return f"no epoch had finished, so nothing was saved to {out}"
    of = recipe.train.get("epochs", "?")
    return f"{out} keeps epoch {progress['epoch']} of {of}: run the same command with --resume to go on from it"


def _output_path(args: argparse.Namespace, recipe: Recipe) -> Path:
    """The checkpoint path, checked before any training (suffix, folder, pretrained/, existing file)."""
    from attnviz.training import recipe_differences, unfinished

    out = Path(args.out) if args.out else models_dir() / f"{recipe.name}{SUFFIX}"
    progress = unfinished(recipe, out)
    resuming = bool(args.resume) and progress is not None
    if args.resume and out.exists() and not resuming and not args.force:
        differences = recipe_differences(out, recipe)
        held = (
            f"an unfinished training whose settings differ ({differences}); resume it with its own settings"
            if differences
            else "no unfinished training to resume; drop --resume"
        )
        raise ConfigError(f"{out} holds {held}, choose another --name or --out, or add --force to overwrite it")
    if progress is not None and not args.resume and not args.force:
        raise ConfigError(
            f"{out} holds this training, stopped after epoch {progress['epoch']} of {recipe.train.get('epochs', '?')}: "
            "add --resume to go on from it, --force to start again over it, or choose another --name or --out"
        )
    check_output(out, force=args.force, resuming=resuming)
    if args.resume and not out.exists():  # a mistyped --out must not train afresh unsaid
        print(f"note: no checkpoint at {out} to resume: a new training starts there", file=sys.stderr)
    clean_stale_temp(out.parent)
    return out


def _hold_output(out: Path, distributed: bool) -> tuple[Path, int] | None:
    """Reserve ``out`` for this training with the lock the app's trainings take
    (``STAGING/NAME.lock`` beside it), so two trainings never write one file: another attnviz
    train, or the app, holding it is a one-line error. Under torchrun, rank 0 holds it."""
    if distributed and os.environ.get("RANK", "0") != "0":
        return None
    lock = name_lock(out.parent, out.stem)
    try:
        fd = hold_lock(lock)
    except OSError as e:  # a folder that lists as writable but holds no files (/proc, a read-only mount)
        raise ConfigError(
            f"cannot save {out}: {out.parent} cannot hold files ({e.strerror or e}); {another_place(out.parent)}"
        ) from e
    if fd is None:
        raise ConfigError(
            f"another training is writing {out} right now (in the app or another attnviz train); wait for it "
            "to finish or choose another --name or --out"
        )
    return lock, fd


def _train(args: argparse.Namespace, recipe: Recipe, out: Path, group: SingleProcess) -> Translator:
    """run_recipe with a progress bar and epoch lines on stderr (rank 0 alone draws them)."""
    from tqdm import tqdm

    from attnviz.training import run_recipe

    quiet, bar = args.quiet or not group.is_main, None

    def report(p: Progress) -> None:
        nonlocal bar
        if bar is None:
            if not quiet:  # before the bar, which would otherwise be drawn on this line's start
                print(f"training on {p.hardware}", file=sys.stderr)
            # a file or a pipe gets the epoch lines, not a bar redrawn at every step
            bar = tqdm(total=p.total_steps, disable=quiet or not sys.stderr.isatty(), unit="step", file=sys.stderr)
        bar.n = p.step
        align = {} if p.align_loss is None else {"align": f"{p.align_loss:.3f}"}
        bar.set_postfix(epoch=p.epoch, loss=f"{p.loss:.3f}", acc=f"{p.accuracy:.3f}", **align, refresh=False)
        bar.refresh()
        if p.kind == "epoch" and not quiet:
            valid = f", valid loss {p.valid_loss:.3f}, acc {p.valid_accuracy:.3f}" if p.valid_loss is not None else ""
            rate = f", lr {p.lr:.2e}" if p.lr is not None else ""
            align = f", align loss {p.align_loss:.3f}" if p.align_loss is not None else ""
            (bar.write if not bar.disable else print)(
                f"epoch {p.epoch}: loss {p.loss:.3f}{align}, acc {p.accuracy:.3f}{valid}{rate}", file=sys.stderr
            )

    def announce(split: str, n: int, of: int) -> None:
        """A line before the evaluation, which takes a while after a short training."""
        if bar is not None:
            bar.close()
        if quiet:
            return
        pairs = f"all {of:,} {split} pairs" if n == of else f"{n:,} of the {of:,} {split} pairs"
        if split == "valid":
            print(f"measuring BLEU on {pairs}", file=sys.stderr)
        else:
            what = "BLEU, exact match, AER, entropy; --eval-n N: how many, 0: none"
            print(f"evaluating on {pairs} ({what})", file=sys.stderr)

    try:
        return run_recipe(
            recipe, out, callback=report, resume=args.resume, group=group, eval_n=args.eval_n, on_measure=announce
        )
    finally:  # before the stop line is printed: it starts on its own, no bar drawn after it
        if bar is not None:
            bar.close()
