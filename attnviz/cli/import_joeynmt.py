"""``attnviz import-joeynmt``: a JoeyNMT 2.x recurrent model (config, vocabularies, ``.ckpt``) as an attnviz model."""

from __future__ import annotations

import argparse
from pathlib import Path

from attnviz.errors import ConfigError
from attnviz.external import import_joeynmt_files
from attnviz.store import SUFFIX, check_output, hold_lock, models_dir, name_lock, release_lock, save

HELP = "import a JoeyNMT 2.x recurrent model (config.yaml, vocabularies, .ckpt) as an attnviz model"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz import-joeynmt``."""
    p.add_argument("config", help="the model's config.yaml, or its folder (JoeyNMT's model_dir)")
    p.add_argument("--ckpt", help="the checkpoint (default: best.ckpt beside the config)")
    p.add_argument("--src-vocab", help="source vocabulary file (default: the config's voc_file, else src_vocab.txt)")
    p.add_argument("--trg-vocab", help="target vocabulary file (default: the config's voc_file, else trg_vocab.txt)")
    where = f"a name (saved as models/NAME{SUFFIX}) or a {SUFFIX} path; never inside pretrained/"
    p.add_argument("--out", required=True, help=where)
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")


def run(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out.endswith(SUFFIX) else models_dir() / f"{args.out}{SUFFIX}"
    out = check_output(out, force=args.force, naming="--out")
    translator = import_joeynmt_files(args.config, args.ckpt, args.src_vocab, args.trg_vocab)
    lock = name_lock(out.parent, out.stem)  # the reservation trainings and the app take
    fd = hold_lock(lock)
    if fd is None:
        raise ConfigError(f"another attnviz process is writing {out} right now; wait for it or choose another --out")
    try:
        out = check_output(out, force=args.force, naming="--out")  # a file saved while the model was read
        path = save(translator, out)
    finally:
        release_lock(lock, fd)
    cfg = translator.config
    print(
        f"{path}: JoeyNMT {translator.meta['joeynmt_attention']} attention as attnviz {cfg.score}/{cfg.style}, "
        f"{cfg.encoder} encoder, {cfg.cell} decoder, {translator.model.num_parameters():,} parameters"
    )
    return 0
