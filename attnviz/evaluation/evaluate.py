"""Evaluate a model on pairs: BLEU, exact match, AER against gold links, attention entropy."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from attnviz.data import Corpus, Pair, multi30k_pair
from attnviz.decoding import Alignment, Source, Translator
from attnviz.errors import AttnvizError, InputError, check_many
from attnviz.evaluation.metrics import aer, alignment_links, bleu, mean_entropy

UNKNOWN_LIMIT = 0.5  # over half the source tokens unknown: the data is not the model's


@dataclass
class Evaluation:
    """Corpus-level figures. ``bleu`` is lowercased (case-insensitive) sacreBLEU, 0-100."""

    n: int
    bleu: float
    bleu_cased: float
    exact_match: float  # fraction of outputs whose tokens equal the reference's
    entropy: float  # mean attention entropy per step (nats), forced decoding on the references
    aer: float | None = None  # against gold links, argmax of forced decoding; None without gold
    beam_size: int = 1
    replace_unk: bool = True  # outputs had each <unk> replaced by the most attended source word
    skipped: int = 0  # pairs the model cannot read (too long), counted as empty outputs
    unknown: float = 0.0  # share of the source tokens it reads (``<eos>`` aside) that it reads as <unk>
    examples: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "n": self.n,
            "bleu": round(self.bleu, 2),
            "bleu_cased": round(self.bleu_cased, 2),
            "exact_match": round(self.exact_match, 4),
            "aer": None if self.aer is None else round(self.aer, 4),
            "entropy": round(self.entropy, 4),
            "beam_size": self.beam_size,
            "replace_unk": self.replace_unk,
            "skipped": self.skipped,
            "unknown": round(self.unknown, 4),
        }


def foreign_note(row: dict) -> str | None:
    """What to say of an evaluated row (``model``, ``data``, ``unknown``) whose data is mostly foreign to
    its model (over :data:`UNKNOWN_LIMIT` of its source tokens unknown, e.g. a toy-fr model measured on
    German), else None: `attnviz evaluate --data` prints it as a warning."""
    if row.get("unknown", 0.0) <= UNKNOWN_LIMIT:
        return None
    return (
        f"{row['model']}: {row['unknown']:.0%} of the source tokens of {row['data']} are unknown to it, so "
        "these scores say little about the model; measure it on the data it was trained on"
    )


def readable_sources(translator: Translator, pairs: list[Pair]) -> dict[int, Source]:
    """Each pair's source as the model reads it (:meth:`Translator.source`), by the pair's index; a
    source it cannot read (too long) is left out."""
    sources = {}
    for i, pair in enumerate(pairs):
        try:
            sources[i] = translator.source(pair.source)
        except InputError:
            continue
    return sources


def translate_all(
    translator: Translator,
    pairs: list[Pair],
    beam_size: int = 1,
    replace_unk: bool = True,
    sources: dict[int, Source] | None = None,
) -> tuple[list[str], int]:
    """Outputs for every pair (empty for a source the model cannot read) and how many failed,
    decoded in batches on the translator's device (:meth:`Translator.translate_batch`). ``sources``
    are the pairs' :func:`readable_sources` when the caller has read them already."""
    sources = readable_sources(translator, pairs) if sources is None else sources
    outputs = [""] * len(pairs)
    texts = translator.translate_batch(list(sources.values()), replace_unk=replace_unk, beam_size=beam_size)
    for i, text in zip(sources, texts, strict=True):
        outputs[i] = text
    return outputs, len(pairs) - len(sources)


def force_all(translator: Translator, pairs: list[Pair]) -> list[tuple[Pair, Alignment]]:
    """Every pair the model can read with its reference forced (:meth:`Translator.align`), in order,
    forced in batches on the translator's device (:meth:`Translator.align_batch`) without the output
    layer (the attention is all its readers take); the pairs it cannot read (too long) are left out."""
    readable, sources, targets = [], [], []
    for pair in pairs:
        try:
            source, target = translator.source(pair.source), translator.target(pair.target)
        except InputError:
            continue
        readable.append(pair)
        sources.append(source)
        targets.append(target)
    return list(zip(readable, translator.align_batch(sources, targets, log_probs=False), strict=True))


def unknown_share(sources: Iterable[Source]) -> float:
    """The share of the tokens of ``sources`` (``<eos>`` aside) that the model reads as ``<unk>``: near 0
    on its own data, above :data:`UNKNOWN_LIMIT` on data foreign to it."""
    flags = [flag for source in sources for flag in source.unknown[:-1]]  # [S] each, without <eos>
    return sum(flags) / len(flags) if flags else 0.0


def evaluate(
    translator: Translator,
    pairs: list[Pair],
    beam_size: int = 1,
    n_examples: int = 5,
    align: bool = True,
    replace_unk: bool = True,
) -> Evaluation:
    """Decode every source, compare with the references, and force-decode them for AER/entropy.

    BLEU is sacrebleu's on detokenized output against the raw reference text: ``bleu``
    case-insensitive, ``bleu_cased`` case-sensitive. ``align=False`` skips forced decoding.
    ``replace_unk`` replaces each output ``<unk>`` by the source word attended to most.
    """
    if isinstance(pairs, Corpus) or not all(isinstance(p, Pair) for p in pairs):
        given = type(pairs).__name__ if isinstance(pairs, (Corpus, str)) else "a list holding other things"
        raise InputError(
            f"evaluate takes a list of sentence pairs (a corpus's split: load_corpus(...).test), got {given}"
        )
    if not pairs:
        raise InputError("nothing to evaluate: the split is empty")
    sources = readable_sources(translator, pairs)  # read once: decoded, and counted for unknown words
    outputs, skipped = translate_all(translator, pairs, beam_size, replace_unk, sources)
    references = [p.target for p in pairs]
    tokens = translator.tgt_tokenizer.tokenize  # the model's own cut, whatever tokens the pairs carry
    exact = [tokens(o) == tokens(p.target) for o, p in zip(outputs, pairs, strict=True)]
    hard, sure, possible, weights = [], [], [], []
    for pair, al in force_all(translator, pairs) if align else []:
        weights.append(al.weights)
        if pair.sure is not None:
            hard.append(alignment_links(al, len(pair.source_tokens), len(pair.target_tokens)))
            sure.append(pair.sure)
            possible.append(pair.possible or pair.sure)
    examples = [
        {"source": p.source, "reference": p.target, "output": o}
        for p, o in zip(pairs[:n_examples], outputs, strict=False)
    ]
    return Evaluation(
        n=len(pairs),
        bleu=bleu(outputs, references, lowercase=True),
        bleu_cased=bleu(outputs, references, lowercase=False),
        exact_match=sum(exact) / len(pairs),
        entropy=mean_entropy(weights),
        aer=aer(hard, sure, possible) if sure else None,
        beam_size=beam_size,
        replace_unk=replace_unk,
        skipped=skipped,
        unknown=unknown_share(sources.values()),
        examples=examples[:n_examples],
    )


SHIPPED_LANGUAGES = {"en", "de", "fr"}  # Multi30k's languages here; a stored spec names the default folder
_STORED_OPTIONS = {  # load_corpus options a checkpoint may name, with their JSON types
    **dict.fromkeys(("n_train", "n_valid", "n_test", "seed", "min_len", "max_len"), int),
    **dict.fromkeys(("lowercase", "target_lowercase", "dedupe"), bool),
    **dict.fromkeys(("valid_fraction", "test_fraction"), float),
    "empty": str,
}


def _stored_multi30k(spec: str) -> bool:
    """Whether ``spec`` is a Multi30k pair of this project's languages in the default folder (no @FOLDER)."""
    pair = multi30k_pair(spec)
    return pair is not None and pair[2] is None and spec == spec.strip() and set(pair[:2]) <= SHIPPED_LANGUAGES


def _trusted_file(spec: str) -> bool:
    """Whether ``spec`` is a local table (``PATH?options``) lying in the models or uploads folder
    (:func:`attnviz.store.data_roots`): the only files a checkpoint may name and have read."""
    from attnviz.data import is_file_spec
    from attnviz.store import data_roots

    if not is_file_spec(spec) or "@" in spec:
        return False
    try:
        path = Path(spec.split("?", 1)[0]).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    return path.is_file() and any(path.is_relative_to(Path(root).resolve()) for root in data_roots())


def _stored_data(meta: dict) -> tuple[str, dict]:
    """The data spec and options a checkpoint stored, if it names a built-in task, a Multi30k pair
    at the default folder or a table file in the models or uploads folder (:func:`_trusted_file`),
    with known options of the right types; a checkpoint is untrusted, so any other path, a folder
    (``@``) or a Hub dataset (``hf:``) it names is never read."""
    from attnviz.data import TASKS
    from attnviz.errors import ConfigError

    recipe = meta.get("recipe_full") if isinstance(meta.get("recipe_full"), dict) else {}
    spec = recipe.get("data") or meta.get("task")
    if not spec:
        raise ConfigError("this model does not name its data; give a data spec (--data SPEC)")
    if not isinstance(spec, str) or not (spec in TASKS or _stored_multi30k(spec) or _trusted_file(spec)):
        shown = repr(spec)[:80]
        raise ConfigError(
            f"this model names its data as {shown}, which attnviz reads from a checkpoint only for a built-in "
            "task, multi30k-SRC-TGT or a file in the models or uploads folder; give a data spec (--data SPEC)"
        )
    options = recipe.get("data_options", {}) if recipe.get("data") else {}
    if not isinstance(options, dict):
        raise ConfigError("this model's data_options is not a JSON object; give a data spec (--data SPEC)")
    for key, value in options.items():
        if key == "subwords":
            continue
        kind = _STORED_OPTIONS.get(key)
        fits = value is None and key in ("max_len", "target_lowercase", "dedupe")
        fits = fits or (kind is float and isinstance(value, int | float) and not isinstance(value, bool))
        fits = fits or (kind is not None and isinstance(value, kind) and (kind is bool or not isinstance(value, bool)))
        if not fits or (kind is int and value is not None and not 0 <= value <= 1_000_000):
            raise ConfigError(
                f"this model's data_options {key!r}: {repr(value)[:40]} is not a known option of its type; "
                "give a data spec (--data SPEC)"
            )
    return spec, options


def measured_on(meta: dict, data: str | None = None) -> tuple[str, dict]:
    """The data a model is measured on, as ``(spec, load_corpus options)``: ``data`` when given,
    else the model's own data spec as its recipe named it, rebuilt with the options it was
    trained with, so the splits are the ones it was trained and measured on. A stored spec is
    used only for a built-in task, a Multi30k pair at the default folder or a file in the models
    or uploads folder (:func:`_stored_data`); a model trained on another file needs ``data``. The
    one rule for the CLI, the app and the checks of the shipped models."""
    from attnviz.data import pair_options
    from attnviz.errors import ConfigError

    if data:
        return data, {}
    if meta.get("private"):
        raise ConfigError(
            "this model was trained on a file uploaded to the app, private to the session that uploaded it; "
            "measure it on data you name (--data SPEC)"
        )
    spec, options = _stored_data(meta)
    return spec, pair_options(options)


def own_pairs(translator: Translator, data: str | None = None, split: str = "test", n: int | None = None) -> list[Pair]:
    """The first ``n`` pairs of a split of ``data``, or of the model's own data (:func:`measured_on`);
    only that split is read where the data has it apart (Multi30k's test and valid files), and of a
    single file (a table) only those pairs are tokenized."""
    from attnviz.data import load_corpus

    spec, options = measured_on(translator.meta, data)
    return load_corpus(spec, **options, split=split, first=n or None).split(split)


@dataclass
class BatchEvaluation:
    """What :func:`evaluate_checkpoints` measured: one row per model that worked, one error per
    model that did not (``{"model": name, "error": message}``)."""

    rows: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)


def evaluate_checkpoints(
    models: list[str],
    data: str | None = None,
    split: str = "test",
    n: int | None = None,
    beam_size: int = 1,
    replace_unk: bool = True,
    roots: list | None = None,
    on_done: Callable[[int, str], None] | None = None,
    device: str | None = None,
) -> BatchEvaluation:
    """Evaluate each model (a name or a checkpoint path) on ``data`` or its own task; a broken
    checkpoint, a missing data file or running out of memory is recorded in ``errors`` and the
    next model is evaluated: rows already measured are never lost. ``on_done(k, model)`` is
    called after each model (for a progress bar). ``device`` (cpu, cuda, cuda:N, mps, auto; default
    the CPU) is where each model is loaded and measured."""
    from attnviz.store import load

    check_many(models, "model names or checkpoint paths")
    result = BatchEvaluation()
    read: dict[str, list[Pair]] = {}  # the pairs of each data a model reads, read once for all its models
    for k, name in enumerate(models):
        try:
            translator = load(name, device=device, roots=roots)
            spec, options = measured_on(translator.meta, data)
            key = json.dumps([spec, options], sort_keys=True, default=str)
            if key not in read:
                read[key] = own_pairs(translator, data, split, n)
            pairs = read[key]
            report = evaluate(translator, pairs, beam_size=beam_size, replace_unk=replace_unk)
            result.rows.append({"model": name, "data": spec, "split": split, **report.to_dict()})
        except (AttnvizError, OSError) as e:
            result.errors.append({"model": name, "error": str(e)})
        except (RuntimeError, MemoryError) as e:  # torch: out of memory, or a device that fails
            result.errors.append({"model": name, "error": f"could not evaluate it ({type(e).__name__}: {e})"})
        if on_done is not None:
            on_done(k, name)
    return result
