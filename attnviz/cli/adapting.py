"""``--adapt N`` of ``align`` and ``align-eval``: read the links from a copy of the model fine-tuned
on the very bitext being aligned (:func:`attnviz.training.adapt.adapt`); ``--yardstick``: eflomal's
links on the same pairs, scored beside attention's."""

from __future__ import annotations

import argparse
import sys

from attnviz.cli.options import float_in, int_in
from attnviz.cli.progress import counter
from attnviz.data import Words
from attnviz.decoding import Translator
from attnviz.links import EFLOMAL_METHOD, run_eflomal
from attnviz.training import MAX_ADAPT_STEPS, AdaptConfig, Progress, adapt


def add_adapt_arguments(parser: argparse.ArgumentParser) -> None:
    """``--adapt``, ``--adapt-guided``, ``--adapt-lr`` and ``--adapt-batch``."""
    parser.add_argument(
        "--adapt",
        type=int_in(1, MAX_ADAPT_STEPS),
        metavar="N",
        help="first fine-tune a copy of the model for N steps on the pairs being aligned (translation loss); "
        "the model's file is never changed",
    )
    parser.add_argument(
        "--adapt-guided",
        action="store_true",
        help="with --adapt: add the guided alignment loss against eflomal's links of the same pairs (never the gold)",
    )
    parser.add_argument(
        "--adapt-lr",
        type=float_in(1e-6, 0.1),
        default=5e-4,
        help="with --adapt: its constant learning rate (default 5e-4)",
    )
    parser.add_argument(
        "--adapt-batch", type=int_in(1, 4096), default=32, help="with --adapt: pairs a step (default 32)"
    )


def adapted_models(
    args: argparse.Namespace,
    model: Translator,
    reverse: Translator | None,
    sources: list[Words],
    targets: list[Words],
) -> tuple[Translator, Translator | None]:
    """``model`` and ``reverse`` adapted as ``--adapt`` asks (the reverse model on the pairs turned
    round), or as they are without it; one line on stderr says what was done."""
    if not args.adapt:
        if args.adapt_guided:
            print("warning: --adapt-guided does nothing without --adapt N", file=sys.stderr)
        return model, reverse
    cfg = AdaptConfig(steps=args.adapt, lr=args.adapt_lr, batch_size=args.adapt_batch, guided=args.adapt_guided)
    model = _adapt_one(model, sources, targets, cfg)
    if reverse is not None:
        reverse = _adapt_one(reverse, targets, sources, cfg)
    return model, reverse


def _adapt_one(model: Translator, sources: list[Words], targets: list[Words], cfg: AdaptConfig) -> Translator:
    """A fine-tuned copy of ``model``, its steps counted where a person watches (cli/progress.py)."""
    with counter(" steps", total=cfg.steps) as bar:

        def step(p: Progress) -> None:
            if p.kind == "step":
                bar.update(p.step - bar.n)
                bar.set_postfix(loss=f"{p.loss:.3f}", refresh=False)

        adapted = adapt(model, sources, targets, cfg, callback=step)
    info = adapted.meta["adapted"]
    guided = ", guided by eflomal's links of the same pairs" if cfg.guided else ""
    left = f" ({info['left_out']} left out: empty or too long)" if info["left_out"] else ""
    print(
        f"adapted a copy of {info['from']} for {info['steps_run']} steps on {info['pairs']} pairs{left}{guided} "
        f"in {info['seconds']:.0f} s; its file is unchanged",
        file=sys.stderr,
    )
    return adapted


def yardstick_links(sources: list[Words], targets: list[Words]) -> list[list[tuple[int, int]]]:
    """eflomal's links (its default settings, grow-diag-final-and, words lowercased) of the pairs,
    aligned together and with nothing else: the text attention is read on, no gold."""
    lowered = [([w.lower() for w in s], [w.lower() for w in t]) for s, t in zip(sources, targets, strict=True)]
    return run_eflomal(lowered, method=EFLOMAL_METHOD)
