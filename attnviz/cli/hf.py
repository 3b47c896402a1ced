"""``attnviz hf``: a Hugging Face encoder-decoder from a local folder: translate (or force a reference)
and print the word links of a chosen head, layer or the average, scored against gold links; or rank
every head by AER against a gold file, against eflomal's links on the same pairs (silver), or both."""

from __future__ import annotations

import argparse
import sys

from attnviz.cli.options import (
    BEAM_HELP,
    add_device,
    add_directional_method,
    add_gold_convention,
    float_in,
    gold_base,
    gold_line,
    gold_summary,
    int_in,
    print_json,
    score_json,
)
from attnviz.cli.streams import sentence
from attnviz.data import to_pharaoh
from attnviz.errors import InputError
from attnviz.external import (
    MARGIN,
    HFModel,
    Pick,
    hf_head_attention,
    links_of,
    load_hf,
    parse_heads,
    rank_heads,
    score_picks,
    silver_links,
    word_reading,
)
from attnviz.links import GoldFile, check_pairs, parse_pharaoh, read_gold, read_pairs, score_links

HELP = "a Hugging Face encoder-decoder folder: its cross-attention per head as word links, scored against gold"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz hf``."""
    p.add_argument("folder", help="the model folder (config.json, model.safetensors, tokenizer files); read offline")
    p.add_argument(
        "text", nargs="?", type=sentence, help="the source sentence (or give --src, --tgt and --gold to rank the heads)"
    )
    p.add_argument(
        "--reference", type=sentence, help="force the decoder through this translation instead of translating"
    )
    p.add_argument("--beam", type=int_in(1, 16), default=1, help=BEAM_HELP)
    p.add_argument(
        "--max-new-tokens",
        type=int_in(1, 512),
        default=None,
        help="most target tokens to generate (default: twice the source's tokens plus 10, at most 512)",
    )
    p.add_argument("--source-lang", help="source language code of a multilingual tokenizer (eng_Latn, en_XX, en)")
    p.add_argument("--target-lang", help="target language code, forced as the first target token (fra_Latn, fr)")
    p.add_argument("--layer", type=int_in(0, 1000), help="decoder layer, 0-based (default: all layers averaged)")
    p.add_argument("--head", type=int_in(0, 1000), help="head of --layer, 0-based (default: the layer's average)")
    p.add_argument("--heads", help="several heads averaged, as layer:head pairs: '3:1 4:0' (Whisper's alignment heads)")
    add_directional_method(p)
    p.add_argument(
        "--gold-links",
        metavar="PHARAOH",
        help="gold links of this pair ('0-0 1-2', 0-based over space-separated words; needs --reference)",
    )
    p.add_argument("--src", help="with --tgt and --gold: rank every head by AER on these sentences (one per line)")
    p.add_argument("--tgt", help="target sentences, line by line with --src")
    p.add_argument("--gold", help="gold alignment file for --src and --tgt (or --pairs)")
    p.add_argument(
        "--rank-heads", action="store_true", help="rank every head on sentence pairs (--pairs or --src/--tgt)"
    )
    p.add_argument("--pairs", metavar="BITEXT", help="the sentence pairs as one 'source ||| target' file")
    p.add_argument(
        "--silver",
        choices=["eflomal"],
        help="rank every head by AER against eflomal's links on the same pairs; --gold optional",
    )
    p.add_argument(
        "--silver-train",
        metavar="BITEXT",
        help="more 'source ||| target' pairs for eflomal to learn from (better silver links)",
    )
    p.add_argument(
        "--margin",
        type=float_in(0, 1),
        help=f"with --silver: a head aligns when its silver AER is this far below the median (default {MARGIN})",
    )
    add_gold_convention(p)
    p.add_argument("--top", type=int_in(1, 10_000), default=10, help="rows of the head ranking printed (default 10)")
    add_device(p)
    p.add_argument(
        "--json", action="store_true", help="print the result as one JSON object (a head ranking: all its rows)"
    )


def _pick(args: argparse.Namespace) -> Pick:
    if args.heads and (args.layer is not None or args.head is not None):
        raise InputError("give either --heads or --layer/--head, not both")
    if args.head is not None and args.layer is None:
        raise InputError("--head needs --layer: a head belongs to one layer")
    return Pick(heads=parse_heads(args.heads)) if args.heads else Pick(args.layer, args.head)


def _ranking(args: argparse.Namespace) -> bool:
    """Whether the heads are ranked (on pairs, against gold, silver or both), the options checked."""
    if args.pairs and (args.src or args.tgt):
        raise InputError("give the pairs as --pairs BITEXT or as --src and --tgt, not both")
    have_pairs = bool(args.pairs or (args.src and args.tgt))
    if args.silver is None:
        if args.silver_train:
            raise InputError("--silver-train is what eflomal learns from; add --silver eflomal or drop it")
        if args.margin is not None:
            raise InputError("--margin picks the heads that align by their silver AER; add --silver eflomal or drop it")
        corpus = (args.src, args.tgt, args.gold, args.pairs)
        if any(corpus) and not (have_pairs and args.gold):
            raise InputError(
                "ranking the heads needs --src, --tgt and --gold together (or --pairs BITEXT and "
                "--gold), or --silver eflomal to rank without gold"
            )
    elif not have_pairs:
        raise InputError("--silver eflomal ranks the heads on sentence pairs; give --pairs BITEXT (or --src and --tgt)")
    if args.rank_heads and not have_pairs:
        raise InputError(
            "--rank-heads needs sentence pairs: --pairs BITEXT (or --src and --tgt) with --gold, "
            "--silver eflomal or both"
        )
    if have_pairs == (args.text is not None):
        raise InputError(
            "give a source sentence, or --src, --tgt and --gold to rank the heads (or --rank-heads "
            "--silver eflomal --pairs BITEXT)"
        )
    return have_pairs


def run(args: argparse.Namespace) -> int:
    ranking = _ranking(args)
    pick = _pick(args)
    if args.silver and (args.layer is not None or args.heads):
        raise InputError("--silver ranks every head; drop --layer, --head and --heads")
    model = load_hf(args.folder, device=args.device)
    if args.silver:
        return _rank_silver(args, model)
    return _rank(args, model, pick) if ranking else _one(args, model, pick)


def _one(args: argparse.Namespace, model: HFModel, pick: Pick) -> int:
    """One sentence: the translation (or the forced reference), the chosen attention's word links, their score."""
    langs = {"source_lang": args.source_lang, "target_lang": args.target_lang}
    if args.reference is not None:
        c = model.force(args.text, args.reference, **langs)
    else:
        c = model.translate(args.text, beam_size=args.beam, max_new_tokens=args.max_new_tokens, **langs)
    reading = word_reading(c, pick)
    links = sorted(links_of(reading, args.method, args.threshold))
    result = {
        "model": args.folder,
        "model_type": model.info.model_type,
        "layers": model.info.layers,
        "heads": model.info.heads,
        "attention": pick.name,
        "method": args.method,
        "translation": c.text,
        "source_words": reading.source_words,
        "target_words": reading.target_words,
        "links": [list(link) for link in links],
        "pharaoh": to_pharaoh(links),
    }
    if c.hypotheses:
        result["n_best"] = [{"translation": h.text, "log_prob": round(h.log_prob, 4)} for h in c.hypotheses]
    if args.gold_links is not None:
        if args.reference is None:
            raise InputError("--gold-links index the words of a given translation; give it with --reference")
        lengths = [(len(reading.source_words), len(reading.target_words))]
        gold = parse_pharaoh([args.gold_links], lengths, name="--gold-links")
        total, _ = score_links([links], gold)
        result["gold"] = total.to_dict()
    if args.json:
        print_json(result)
        return 0
    print(f"{'reference' if args.reference is not None else 'translation'}: {c.text}")
    for h in result.get("n_best", [])[1:]:
        print(f"  n-best {h['log_prob']:9.3f}  {h['translation']}")
    print(f"attention: {pick.name} ({model.info.model_type}, {model.info.layers} layers x {model.info.heads} heads)")
    print(f"links ({args.method}, source-target over words): {result['pharaoh'] or '(none)'}")
    for s, t in links:
        print(f"  {reading.source_words[s]}  ->  {reading.target_words[t]}")
    if "gold" in result:
        g = result["gold"]
        print(f"gold: precision {g['precision']:.3f}  recall {g['recall']:.3f}  AER {g['aer']:.3f}")
    return 0


def _corpus(args: argparse.Namespace) -> tuple[list[list[str]], list[list[str]], GoldFile | None]:
    """The sentence pairs (``--pairs`` or ``--src``/``--tgt``) and their gold file as read (``None`` without
    ``--gold``)."""
    sources, targets = read_pairs(args.pairs) if args.pairs else read_pairs(args.src, args.tgt)
    check_pairs(sources, targets, (args.pairs, args.pairs) if args.pairs else (args.src, args.tgt))
    if not args.gold:
        return sources, targets, None
    lengths = [(len(s), len(t)) for s, t in zip(sources, targets, strict=True)]
    found = read_gold(args.gold, lengths, args.format, gold_base(args))
    for warning in found.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return sources, targets, found


def _rank(args: argparse.Namespace, model: HFModel, pick: Pick) -> int:
    """Every head, layer and the average (or the chosen attention only) scored against the gold file."""
    sources, targets, found = _corpus(args)
    gold = found.alignments
    chosen = [pick] if args.layer is not None or args.heads else None  # None: every head, layer and the average
    rows = score_picks(model, sources, targets, gold, chosen, args.method, args.threshold)
    rows.sort(key=lambda row: row["AER"])
    if args.json:
        summary = {"model": args.folder, "model_type": model.info.model_type, "method": args.method, "n": len(gold)}
        print_json({**summary, "gold": gold_summary(args.gold, found), "rows": [score_json(row) for row in rows]})
        return 0
    print(gold_line(args.gold, found))
    print(f"{len(gold)} pairs, links by {args.method}; lowest AER first")
    print(f"{'attention':<28} {'precision':>9} {'recall':>7} {'AER':>6}")
    for row in rows[: args.top]:
        print(f"{row['attention']:<28} {row['precision']:>9.3f} {row['recall']:>7.3f} {row['AER']:>6.3f}")
    return 0


def _rank_silver(args: argparse.Namespace, model: HFModel) -> int:
    """Every head scored against eflomal's links on the same pairs, and against gold when given."""
    sources, targets, found = _corpus(args)
    gold = found.alignments if found is not None else None
    train = list(zip(*read_pairs(args.silver_train), strict=True)) if args.silver_train else []
    silver = silver_links(sources, targets, train)
    names, stacks = hf_head_attention(model, sources, targets)
    margin = MARGIN if args.margin is None else args.margin
    ranking = rank_heads(names, stacks, silver, gold, args.method, args.threshold, margin)
    if args.json:
        read = {} if found is None else {"gold": gold_summary(args.gold, found)}
        head = {"model": args.folder, "model_type": model.info.model_type, "silver": "eflomal"}
        print_json({**head, **read, **ranking.to_dict()})
        return 0
    if found is not None:
        print(gold_line(args.gold, found))
    print(
        f"{ranking.pairs} pairs, links by {args.method}; silver: eflomal's links on the same pairs; "
        "lowest silver AER first"
    )
    print(f"{'attention':<28} {'silver AER':>10} {'gold AER':>8} {'aligns':>6}")
    for h in ranking.heads[: args.top]:
        shown = "-" if h.gold_aer is None else f"{h.gold_aer:.3f}"
        print(f"{h.name:<28} {h.silver_aer:>10.3f} {shown:>8} {'yes' if h.aligns else '':>6}")
    print(f"aligning heads ({ranking.rule}): {', '.join(ranking.aligning) or '(none)'}")
    if gold is not None:
        print(f"Spearman, silver vs gold AER over {ranking.counted}: {ranking.spearman_text}")
    return 0
