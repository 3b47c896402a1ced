"""Training throughput of attnviz against JoeyNMT 2.3 on the same batches (needs ``joeynmt==2.3.0``).

Both tools train a recipe's sizes (default: the Multi30k de-en additive/Bahdanau recipe, on its
BPE text from ../shared/data/multi30k or ``--data``) on the very same padded batches, built once
by attnviz's ``make_batches`` with ``random.Random(0)``:

* attnviz: the recipe's model from ``build_translator``, one optimiser step as its training runs
  it (``attnviz.training.fit.train_step`` on a ``TrainRun``: autocast, fused label-smoothed loss
  on the real target tokens, zero_grad, backward, gradient clipping, Adam, ``loss.item()``);
* JoeyNMT: its own recurrent model from ``joeynmt.model.build_model`` (bidirectional GRU encoder,
  GRU decoder with its ``bahdanau`` (additive) or ``luong`` (general) attention, JoeyNMT's
  default input feeding and bridge, the recipe's embedding, hidden and layer sizes, dropout and
  vocabulary sizes), fed the same token ids (attnviz's ``<pad>`` 0 / ``<unk>`` 1 swapped to
  JoeyNMT's 1 / 0; ``<bos>`` 2 and ``<eos>`` 3 are the same), one step as its ``TrainManager``
  runs it: a ``joeynmt.batch.Batch`` (masks, teacher-forcing input, sorted by source length),
  ``model(return_type="loss")`` under the same autocast (its ``XentLoss`` with the recipe's label
  smoothing), normalised by tokens, zero_grad, backward, clipping, Adam, ``loss.item()`` and the
  correct-token count.

On a CUDA GPU in fp32 attnviz trains a Bahdanau decoder's recurrence as CUDA graphs (``attnviz.training.graphs``, as
``fit`` does there); the benchmark then times attnviz twice, with graphs (``attnviz``) and eagerly (``attnviz-eager``,
``cuda_graphs=False``), from the same initial weights. Each bucket shape is captured once, the first time a batch
needs it; one forward and backward pass over the timed batches captures them all before the clock starts (the
capture's seconds and the number of graphs are reported), so the steps are timed as in the rest of a training.

attnviz's timed steps run as its ``fit`` runs them on a CPU, keeping freed memory in the process
(``attnviz.training.heap``); JoeyNMT's run with glibc's defaults, as its own training does.
``--precision auto`` gives each tool its own choice: attnviz's ``auto`` (bf16 on CPUs where it
trains faster) and JoeyNMT's float32 (JoeyNMT 2.3 turns half precision off on a CPU).

Both use Adam at the recipe's learning rate and its clipping norm. ``--warmup`` steps each run untimed first;
then each of ``--rounds`` rounds times ``--steps`` steps of each tool on the same batches, attnviz first in odd
rounds and JoeyNMT first in even ones (the GPU is synchronised around every timer). Reported per round: ms per
step, real (non-padding) target tokens per second, and attnviz's tokens/s over JoeyNMT's; also the process's
CPU time per step and JoeyNMT's over attnviz's (``ratio_cpu``), which other processes sharing the cores disturb
far less than the wall clock (on the CPU with one thread; on a GPU it counts only the host's work).

    OMP_NUM_THREADS=1 python benchmarks/joeynmt_train.py --threads 1 --steps 20 --warmup 3 --rounds 2 \\
        --data ../shared/data/multi30k --out benchmarks/results/joeynmt_train_cpu.json
    python benchmarks/joeynmt_train.py --device cuda --steps 200 --warmup 20 --rounds 2 --json
    python benchmarks/joeynmt_train.py --device cuda --precision bf16 --steps 200 --warmup 20
    python benchmarks/joeynmt_train.py --recipe pretrained/recipes/multi30k-de-en-general-luong.json
``--profile``: then a profiled round of each tool, its matrix products' GFLOP, rate and share of CPU.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attnviz.data import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from attnviz.data.spec import load_corpus
from attnviz.devices import autocast, describe
from attnviz.errors import AttnvizError
from attnviz.training import SingleProcess, TrainConfig, build_translator
from attnviz.training.batches import make_batches
from attnviz.training.fit import train_step
from attnviz.training.heap import reuse_freed_memory
from attnviz.training.recipes import Recipe
from attnviz.training.run import TrainRun, start_run
from benchmarks.beam_roofline import profiled
from benchmarks.train_real import capture_graphs, synchronize

DEFAULT_RECIPE = "pretrained/recipes/multi30k-de-en-additive-bahdanau.json"
JOEY_ATTENTION = {"additive": "bahdanau", "general": "luong"}  # attnviz score -> JoeyNMT attention
JOEY_PAD, JOEY_UNK, JOEY_BOS, JOEY_EOS = 1, 0, 2, 3  # JoeyNMT's default special ids


def attnviz_step(run: TrainRun, batch) -> float:
    """One attnviz optimiser step on ``batch`` (``(src [B, S], lengths [B], tgt [B, T+1])``), as
    its training runs it; returns the mean token loss."""
    loss_sum, _, _, n = train_step(run, batch)
    return loss_sum / n


def joey_ids(ids: torch.Tensor) -> torch.Tensor:
    """attnviz token ids as JoeyNMT's: ``<pad>`` and ``<unk>`` swap, every other id stays."""
    if (PAD_ID, UNK_ID, BOS_ID, EOS_ID) != (JOEY_UNK, JOEY_PAD, JOEY_BOS, JOEY_EOS):
        raise SystemExit("joeynmt_train: attnviz's special ids changed; update joey_ids")
    return torch.where(ids <= 1, 1 - ids, ids)


def joey_config(model: dict) -> dict:
    """JoeyNMT's ``model`` section with an attnviz recipe's sizes (see the module docstring)."""
    score = model.get("score", "additive")
    kind, cell = model.get("encoder", "gru"), model.get("cell", "gru")
    if score not in JOEY_ATTENTION or kind != "gru" or cell != "gru":
        raise SystemExit(
            "joeynmt_train: JoeyNMT's RNN has additive (bahdanau) or general (luong) attention over a GRU; "
            f"the recipe has score {score!r}, encoder {kind!r}, cell {cell!r}"
        )
    emb, hidden, dropout = model.get("emb_dim", 128), model.get("hidden_dim", 256), model.get("dropout", 0.1)
    embeddings = {"embedding_dim": emb, "scale": False, "dropout": dropout}
    encoder = {
        "type": "recurrent",
        "rnn_type": "gru",
        "hidden_size": hidden,
        "bidirectional": True,
        "num_layers": model.get("enc_layers", 1),
        "dropout": dropout,
        "embeddings": embeddings,
    }
    decoder = {
        "type": "recurrent",
        "rnn_type": "gru",
        "hidden_size": hidden,
        "attention": JOEY_ATTENTION[score],
        "num_layers": model.get("dec_layers", 1),
        "dropout": dropout,
        "hidden_dropout": dropout,
        "init_hidden": "bridge",
        "input_feeding": True,
        "embeddings": dict(embeddings),
    }
    return {"encoder": encoder, "decoder": decoder, "tied_embeddings": False, "tied_softmax": False}


def differences(model: dict) -> list[str]:
    """Where JoeyNMT's model cannot be the recipe's (the sizes and dropout are the recipe's)."""
    notes = [
        "decoder: JoeyNMT's is Luong-shaped whatever its attention (the RNN steps first, h_t queries, "
        "an attention vector feeds the output layer) and feeds that vector back (its default input feeding)"
    ]
    if model.get("style", "bahdanau") == "luong" and not model.get("input_feeding", False):
        notes[0] += "; the recipe's Luong decoder has no input feeding"
    if model.get("tie_embeddings", False):
        notes.append(
            "output layer untied: JoeyNMT ties it to the target embeddings only when the embedding "
            "size equals the hidden size"
        )
    if model.get("attn_dim", 256) != model.get("hidden_dim", 256) and model.get("score", "additive") == "additive":
        notes.append("additive attention's inner size: JoeyNMT's is the hidden size")
    return notes


def build_joey(cfg: dict, src_itos: list[str], tgt_itos: list[str], smoothing: float):
    """JoeyNMT's model for ``cfg`` with vocabularies of attnviz's sizes, its loss set as its trainer does."""
    from joeynmt.model import build_model
    from joeynmt.vocabulary import Vocabulary

    for name in [n for n in logging.root.manager.loggerDict if n.startswith("joeynmt")]:
        logging.getLogger(name).setLevel(logging.WARNING)  # not its "Building an encoder-decoder model..." lines

    specials = SimpleNamespace(
        unk_token="<unk>",
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_id=JOEY_UNK,
        pad_id=JOEY_PAD,
        bos_id=JOEY_BOS,
        eos_id=JOEY_EOS,
        sep_token=None,
        sep_id=None,
        lang_tags=[],
    )
    vocabs = []
    for itos in (src_itos, tgt_itos):
        vocab = Vocabulary(itos[4:], specials)  # JoeyNMT puts its four specials first
        if len(vocab) != len(itos):
            raise SystemExit(f"joeynmt_train: JoeyNMT's vocabulary has {len(vocab)} entries for attnviz's {len(itos)}")
        vocabs.append(vocab)
    model = build_model(cfg, *vocabs)
    model.loss_function = ("crossentropy", smoothing)
    return model


def joey_batch(batch, device: torch.device):
    """JoeyNMT's ``Batch`` of ``(src [B, S], lengths [B], tgt [B, T+1])`` in its ids, sorted by source
    length as its encoder needs: masks, teacher-forcing input, gold and token count, on ``device``."""
    from joeynmt.batch import Batch

    src, lengths, tgt = batch
    jb = Batch(src, lengths, None, tgt, None, torch.arange(src.size(0)), device, JOEY_PAD, JOEY_EOS)
    jb.sort_by_src_length()
    return jb


def joey_step(model, optimizer, batch, device: torch.device, precision: str, clip: float) -> float:
    """One JoeyNMT optimiser step on ``batch`` (JoeyNMT's ids, on the CPU as its data loader gives
    them), as its ``TrainManager`` runs it; returns the mean token loss."""
    jb = joey_batch(batch, device)
    model.train()
    with autocast(device, precision):
        loss, _, _, correct = model(return_type="loss", **vars(jb))
    loss = jb.normalize(loss, normalization="tokens")
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    correct.item()
    return loss.item()


def _parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default=DEFAULT_RECIPE)
    parser.add_argument("--data", default=None, help="the Multi30k folder (default: ../shared/data/multi30k)")
    parser.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto")
    parser.add_argument("--steps", type=int, default=20, help="timed steps of each tool per round")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps of each tool first")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (set OMP_NUM_THREADS too)")
    parser.add_argument(
        "--precision",
        choices=("fp32", "bf16", "auto"),
        default="fp32",
        help="bf16: autocast, both tools; auto: each tool's own choice (attnviz's auto, JoeyNMT's fp32 on a CPU)",
    )
    parser.add_argument("--profile", action="store_true", help="also profile a round of each tool's steps")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", default=None, help="also write the JSON object to this file")
    args = parser.parse_args()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    if min(args.steps, args.rounds) < 1 or args.warmup < 0:
        parser.error("--steps and --rounds must be 1 or more, --warmup 0 or more")
    try:
        import joeynmt
    except ImportError:
        sys.exit("joeynmt_train: JoeyNMT is not installed; pip install --no-deps -r requirements-joeynmt.txt")

    recipe = Recipe.from_file(args.recipe)
    spec = recipe.data if args.data is None else f"{recipe.data.split('@')[0]}@{args.data}"
    if not spec.startswith("multi30k") and args.data is not None:
        sys.exit(f"joeynmt_train: --data names a Multi30k folder; recipe {recipe.name} reads {recipe.data!r}")
    corpus = load_corpus(spec, **recipe.data_options)
    seed = recipe.train.get("seed", 0)
    tr = build_translator(corpus, min_freq=recipe.min_freq, max_vocab=recipe.max_vocab, seed=seed, **recipe.model)
    settings = {"device": args.device, "precision": args.precision, "num_threads": args.threads}
    cfg = TrainConfig(**{**recipe.train, **settings, "record_history": False})
    run = start_run(tr, corpus, cfg, SingleProcess(), {})  # seeds, threads, device, Adam at the recipe's lr
    device, precision = run.device, run.precision
    # JoeyNMT 2.3 trains in float32 on a CPU (its config turns fp16 off there) and in fp16 only on CUDA
    joey_precision = "fp32" if args.precision == "auto" else precision
    run.model.train()
    graphs = getattr(run.model.decoder, "recurrence", None)  # set where fit would train on graphs
    eager = None
    if graphs is not None:  # the same model trained eagerly, from the same initial weights
        twin = build_translator(corpus, min_freq=recipe.min_freq, max_vocab=recipe.max_vocab, seed=seed, **recipe.model)
        eager = start_run(twin, corpus, TrainConfig(**{**cfg.to_dict(), "cuda_graphs": False}), SingleProcess(), {})
        eager.model.train()
    tools = ("attnviz", "attnviz-eager", "joeynmt") if eager else ("attnviz", "joeynmt")

    torch.manual_seed(seed)
    joey_cfg = joey_config(recipe.model)
    joey = build_joey(joey_cfg, tr.src_vocab.itos, tr.tgt_vocab.itos, cfg.label_smoothing).to(device).train()
    joey_opt = torch.optim.Adam(joey.parameters(), lr=cfg.lr)

    batches = make_batches(corpus.train, tr.src_vocab, tr.tgt_vocab, cfg.batch_size, random.Random(0))
    joey_batches = [(joey_ids(src), lengths, joey_ids(tgt)) for src, lengths, tgt in batches]
    tokens = [int((tgt[:, 1:] != PAD_ID).sum()) for _, _, tgt in batches]
    steps = {
        "attnviz": lambda i: attnviz_step(run, batches[i]),
        "attnviz-eager": lambda i: attnviz_step(eager, batches[i]),
        "joeynmt": lambda i: joey_step(joey, joey_opt, joey_batches[i], device, joey_precision, cfg.clip),
    }
    first = joey_batch(joey_batches[0], device)
    if first.ntokens != tokens[0]:
        sys.exit(f"joeynmt_train: JoeyNMT scores {first.ntokens} target tokens of batch 1, attnviz {tokens[0]}")

    def as_trained(tool: str):
        """attnviz's steps keep freed memory on a CPU as its fit does; JoeyNMT's run with glibc's defaults."""
        return reuse_freed_memory(None if tool == "joeynmt" else device)

    warm = {}
    for tool in tools:
        with as_trained(tool):
            warm[tool] = [steps[tool](i % len(batches)) for i in range(args.warmup)]
    capture = {}
    if graphs is not None:
        timed = sorted({(args.warmup + k) % len(batches) for k in range(args.rounds * args.steps)})
        capture = capture_graphs(run.model, graphs, [batches[i] for i in timed], device, cfg.label_smoothing)

    rounds = []
    for r in range(args.rounds):
        ids = [(args.warmup + r * args.steps + k) % len(batches) for k in range(args.steps)]
        order = tools if r % 2 == 0 else tools[::-1]  # round 1 (odd): attnviz first
        row: dict = {"round": r + 1, "order": list(order), "target_tokens": sum(tokens[i] for i in ids)}
        for tool in order:
            synchronize(device)
            start, cpu = time.perf_counter(), time.process_time()
            with as_trained(tool):
                losses = [steps[tool](i) for i in ids]
            synchronize(device)
            seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
            row[tool] = {
                "step_ms": round(1000 * seconds / args.steps, 2),
                "target_tokens_per_s": round(row["target_tokens"] / seconds),
                "cpu_step_ms": round(1000 * cpu_seconds / args.steps, 2),
                "loss_first_last": [round(losses[0], 3), round(losses[-1], 3)],
            }
        row["ratio"] = round(row["attnviz"]["target_tokens_per_s"] / row["joeynmt"]["target_tokens_per_s"], 3)
        row["ratio_cpu"] = round(row["joeynmt"]["cpu_step_ms"] / row["attnviz"]["cpu_step_ms"], 3)
        if eager:
            row["ratio_eager"] = round(
                row["attnviz-eager"]["target_tokens_per_s"] / row["joeynmt"]["target_tokens_per_s"], 3
            )
        rounds.append(row)

    profiles = {}  # after the timed rounds: the profiler's own cost never reaches their clocks
    for tool in tools if args.profile else ():
        with as_trained(tool):
            profiles[tool] = profiled(lambda tool=tool: [steps[tool](i) for i in ids])  # the last round's steps
        profiles[tool]["product_gflop_per_step"] = round(profiles[tool]["product_gflop"] / args.steps, 3)

    ratios = [row["ratio"] for row in rounds]
    sizes = {
        "src_vocab": len(tr.src_vocab),
        "tgt_vocab": len(tr.tgt_vocab),
        "batch_size": cfg.batch_size,
        "batches": len(batches),
        "model": recipe.model,
        "joeynmt_model": joey_cfg,
        "parameters": {"attnviz": _parameters(run.model), "joeynmt": _parameters(joey)},
        "lr": cfg.lr,
        "clip": cfg.clip,
        "label_smoothing": cfg.label_smoothing,
        "joeynmt_differs": differences(recipe.model),
    }
    result = {
        "benchmark": "joeynmt_train",
        "command": " ".join(["python", *sys.argv]),
        "machine": {"hardware": describe(device), "platform": platform.platform(), "python": platform.python_version()},
        "torch": torch.__version__,
        "joeynmt": joeynmt.__version__,
        "device": str(device),
        "threads": torch.get_num_threads(),
        "precision": precision,
        "joeynmt_precision": joey_precision,
        "recipe": recipe.name,
        "sizes": sizes,
        "warmup": args.warmup,
        "steps": args.steps,
        "cuda_graphs": graphs is not None,
        **capture,
        "warmup_loss_first": {tool: round(warm[tool][0], 3) for tool in tools} if args.warmup else None,
        "rounds": rounds,
        **({"profiles": profiles} if profiles else {}),
        "ratio_median": round(statistics.median(ratios), 3),
        "ratio_range": [min(ratios), max(ratios)],
        "ratio_cpu_median": round(statistics.median(row["ratio_cpu"] for row in rounds), 3),
        "ratio_cpu_range": [min(row["ratio_cpu"] for row in rounds), max(row["ratio_cpu"] for row in rounds)],
    }
    if eager:
        result["ratio_eager_median"] = round(statistics.median(row["ratio_eager"] for row in rounds), 3)
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    if args.json:
        print(text)
        return
    print(
        f"{result['recipe']} on {result['machine']['hardware']}, {precision}, torch {torch.__version__}, "
        f"JoeyNMT {joeynmt.__version__}; batch {cfg.batch_size}, {args.steps} steps a round"
    )
    parameters = result["sizes"]["parameters"]
    print(f"parameters: attnviz {parameters['attnviz']:,}, JoeyNMT {parameters['joeynmt']:,}")
    if capture:
        print(f"CUDA graphs: {capture['graphs']} captured in {capture['graph_capture_seconds']} s")
    print(f"{'round':>5} {'tool':>14} {'ms/step':>9} {'tok/s':>8} {'CPU ms/step':>12}")
    for row in rounds:
        for tool in row["order"]:
            print(
                f"{row['round']:>5} {tool:>14} {row[tool]['step_ms']:>9.1f} {row[tool]['target_tokens_per_s']:>8} "
                f"{row[tool]['cpu_step_ms']:>12.1f}"
            )
    print(f"attnviz / JoeyNMT target tokens per second: median {result['ratio_median']}, range {result['ratio_range']}")
    print(
        f"JoeyNMT / attnviz process CPU time a step: median {result['ratio_cpu_median']}, "
        f"range {result['ratio_cpu_range']}"
    )
    if eager:
        print(f"attnviz eager / JoeyNMT: median {result['ratio_eager_median']}")
    for tool, prof in profiles.items():
        share, rate = 100 * prof["product_share"], prof["product_gflops_per_s"]
        print(f"{tool}: products {prof['product_gflop_per_step']} GFLOP a step, {rate} GFLOP/s, {share:.0f}% of CPU")


if __name__ == "__main__":
    try:
        main()
    except AttnvizError as e:  # no GPU, no bf16 here, no data: one line
        sys.exit(f"joeynmt_train: {e}")
