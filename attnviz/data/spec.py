"""One entry point for every data source: ``load_corpus(spec)``.

Spec grammar (one string, as typed in the CLI or the app)::

    dates | toy-fr | copy | reverse | sort       a built-in task (generated, with gold links)
    multi30k-SRC-TGT[@FOLDER]                     Multi30k, SRC and TGT among en, de, fr;
                                                  FOLDER defaults to ../shared/data/multi30k
    PATH?src=COL&tgt=COL[&format=FMT]             a local .csv, .tsv, .jsonl, .json or .parquet
                                                  file (optionally .gz); FMT overrides the
                                                  extension; COL may be nested: translation.de
    hf:NAME?src=COL&tgt=COL[&config=C][&split=S]  a Hugging Face Hub dataset (online only)

Examples: ``multi30k-de-en``, ``multi30k-en-fr@/data/m30k``, ``pairs.tsv?src=en&tgt=de``,
``hf:wmt16?config=de-en&split=validation&src=translation.de&tgt=translation.en``.

Real corpora drop pairs longer than ``MAX_TOKENS`` tokens on either side unless ``max_len``
says otherwise (at most ``LONGEST_SOURCE``, the longest source a model can read), with a note,
so one over-long row cannot fail a training after it started.

Built-in tasks give ``n_valid`` and ``n_test`` pairs (test drawn first, so changing ``n_train``
keeps the same test set); a single file or Hub split is shuffled with ``seed`` and cut into
test, valid and train by ``test_fraction`` and ``valid_fraction`` unless ``n_test``/``n_valid``
are given. Duplicate pairs are removed before the cut, so no test pair is in train.

``subwords`` (real corpora only) learns byte-pair merges on the training split, one number
for both sides or ``[source, target]`` (0: keep whole words on that side), and cuts every
split into those subword pieces; the tokenizers carry the merges into the checkpoint.

``split`` loads one split alone (the others come back empty): a Multi30k split with files of
its own is then the only one read and tokenized, so measuring a model on its test split never
reads train. Multi30k's tokens are kept on disk (:mod:`attnviz.data.token_cache`).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from urllib.parse import parse_qsl

from attnviz.data import corpora, hub, multi30k, tables, tasks, toyfr
from attnviz.data.bpe import BPE
from attnviz.data.kept import kept_rows
from attnviz.data.pairs import SPLITS, Corpus, Pair, make_pair, split_name
from attnviz.data.token_cache import tokenize_texts
from attnviz.data.tokenize import Tokenizer
from attnviz.errors import ConfigError, DataError, check_int, counted, refuse_url

TASKS: dict[str, str] = {
    "dates": "Dates written many ways (en, fr, de) -> ISO YYYY-MM-DD, character level, gold links",
    "toy-fr": "English -> a toy French: reordering, ne...pas, du, agreement, questions; gold links",
    "copy": "Copy a sequence of symbols (diagonal alignment)",
    "reverse": "Reverse a sequence of symbols (anti-diagonal alignment)",
    "sort": "Sort a sequence of symbols (permutation alignment)",
}
_GENERATORS: dict[str, tuple[Callable[[int, int], list[Pair]], str]] = {
    "dates": (tasks.dates, "char"),
    "toy-fr": (toyfr.generate, "word"),
    "copy": (tasks.copy, "word"),
    "reverse": (tasks.reverse, "word"),
    "sort": (tasks.sort, "word"),
}
_EXAMPLES = {"dates": "saturday 22nd of november 2026", "toy-fr": toyfr.EXAMPLE, "sort": "h c a f c b"}
MAX_TOKENS = 1000  # default length cap of real corpora (both sides)
LONGEST_SOURCE = 1999  # ModelConfig.max_src_len (2000) minus <eos>
_MULTI30K_RE = re.compile(r"^multi30k-([a-z]{2})-([a-z]{2})(?:@(.+))?$")


def multi30k_pair(spec: str) -> tuple[str, str, str | None] | None:
    """The source and target languages and the folder (None: the default one) of a Multi30k spec
    (``multi30k-de-en``, ``multi30k-de-en@DIR``); None for any other spec. The one test of "is this
    Multi30k" that reading, the app and the checkpoint's trust all ask."""
    m = _MULTI30K_RE.match(spec.strip())
    return (m.group(1), m.group(2), m.group(3)) if m else None


def table_options(spec: str) -> tuple[str, dict[str, str]]:
    """A table spec's path and options (``pairs.csv?src=en&tgt=de``), the file there and the options
    known: a built-in task or Multi30k given ``?options``, or a path with no file, is said so before any
    option or format is asked about."""
    path, _, query = spec.partition("?")
    refuse_url(path, "a data file")
    if path.strip() in _GENERATORS or multi30k_pair(path):
        raise ConfigError(
            f"{path.strip()!r} is a built-in data set and takes no ?options; write {path.strip()} (sizes and "
            "filters go in a recipe's data_options)"
        )
    if not Path(path).is_file():
        raise DataError(f"{path} does not exist or is not a file; check the path.")
    return path, _options(spec, query, {"src", "tgt", "format"})


def _options(spec: str, query: str, allowed: set[str]) -> dict[str, str]:
    options = dict(parse_qsl(query, keep_blank_values=True))
    unknown = set(options) - allowed
    if unknown:
        raise ConfigError(f"unknown option {sorted(unknown)} in {spec!r}; allowed: {sorted(allowed)}")
    for required in ("src", "tgt"):
        if not options.get(required):
            raise ConfigError(
                f"{spec!r} does not name its {required} column; add ?src=COLUMN&tgt=COLUMN, "
                "e.g. pairs.csv?src=en&tgt=de"
            )
    return options


def _filter(
    pairs: list[Pair], where: str, min_len: int, max_len: int | None, dedupe: bool, notes: list[str]
) -> list[Pair]:
    kept, seen, long_, dups = [], set(), 0, 0
    for p in pairs:
        lengths = (len(p.source_tokens), len(p.target_tokens))
        if min(lengths) < min_len or (max_len is not None and max(lengths) > max_len):
            long_ += 1
            continue
        key = (p.source, p.target) if where != "task" else p.source
        if dedupe and key in seen:
            dups += 1
            continue
        seen.add(key)
        kept.append(p)
    if where != "task":
        filter_notes(where, long_, dups, min_len, max_len, notes)
    return kept


def filter_notes(where: str, long_: int, dups: int, min_len: int, max_len: int | None, notes: list[str]) -> None:
    """The notes on pairs dropped for their length and as duplicates."""
    if long_:
        notes.append(f"{where}: dropped {counted(long_, 'pair')} outside {min_len}..{max_len or 'any'} tokens")
    if dups:
        notes.append(f"{where}: dropped {counted(dups, 'duplicate pair')}")


def check_max_len(max_len: int | None) -> None:
    """Refuse a ``max_len`` (tokens a side) that is not a whole number up to the longest source a model reads."""
    if max_len is not None:
        check_int(max_len, "max_len", 1, LONGEST_SOURCE, ConfigError)


def _sample(pairs: list[Pair], n: int | None, seed: int) -> list[Pair]:
    if n is None or n >= len(pairs):
        return pairs
    keep = sorted(random.Random(seed).sample(range(len(pairs)), n))
    return [pairs[i] for i in keep]


def task_pairs(name: str, n: int, seed: int = 0) -> list[Pair]:
    """``n`` pairs of the built-in task ``name`` (a key of :data:`TASKS`) from its seeded generator,
    with gold links, before any filter or split: ``load_corpus`` draws its splits from these."""
    if name not in _GENERATORS:
        raise ConfigError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")
    generate, _ = _GENERATORS[name]
    return generate(n, seed)


def _task(name: str, sizes: tuple[int, int, int], seed: int, tokenizer: Tokenizer, filters: dict) -> Corpus:
    wanted, notes, pairs = sum(sizes), [], []
    for round_ in range(6):  # rare short rounds (duplicates, length filter) are topped up
        extra = task_pairs(name, int((wanted - len(pairs)) * 1.2) + 50, seed * 7919 + round_)
        pairs = _filter(pairs + extra, "task", dedupe=True, notes=notes, **filters)
        if len(pairs) >= wanted:
            break
    if len(pairs) < wanted:
        notes.append(f"{name}: only {len(pairs)} distinct pairs fit the filters, {wanted} asked")
    if not tokenizer.lowercase:
        pairs = [
            Pair(p.source, p.target, tokenizer.tokenize(p.source), tokenizer.tokenize(p.target), p.sure, p.possible)
            for p in pairs
        ]
    _, n_valid, n_test = sizes
    test, valid = pairs[:n_test], pairs[n_test : n_test + n_valid]
    train = pairs[n_test + n_valid : wanted]
    return Corpus(name, train, valid, test, tokenizer, tokenizer, True, notes, _EXAMPLES.get(name))


def split_indices(
    n: int, seed: int, n_valid: int | None, n_test: int | None, fractions: tuple[float, float]
) -> tuple[list[int], list[int], list[int]]:
    """The train, valid and test positions (each sorted) of ``n`` pairs shuffled with ``seed`` and
    cut by ``n_valid``/``n_test`` or the (valid, test) ``fractions``: the one cut of a single file."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    n_test = n_test if n_test is not None else max(1, math.ceil(n * fractions[1]))
    n_valid = n_valid if n_valid is not None else max(1, math.ceil(n * fractions[0]))
    if n_test + n_valid >= n:
        raise DataError(
            f"only {n} sentence pair{'' if n == 1 else 's'}: a file is cut into a test split ({n_test}), a valid "
            f"split ({n_valid}) and a train split of at least one pair, so it needs {n_test + n_valid + 1} pairs "
            "or more; add pairs (or, from Python, ask load_corpus for a smaller n_test or n_valid)."
        )
    return sorted(order[n_test + n_valid :]), sorted(order[n_test : n_test + n_valid]), sorted(order[:n_test])


def _cut(
    pairs: list[Pair], seed: int, n_valid: int | None, n_test: int | None, fractions: tuple[float, float]
) -> list[list[Pair]]:
    return [[pairs[i] for i in idx] for idx in split_indices(len(pairs), seed, n_valid, n_test, fractions)]


def load_corpus(
    spec: str,
    *,
    n_train: int | None = None,
    n_valid: int | None = None,
    n_test: int | None = None,
    seed: int = 0,
    min_len: int = 1,
    max_len: int | None = None,
    lowercase: bool = True,
    target_lowercase: bool | None = None,
    dedupe: bool | None = None,
    valid_fraction: float = 0.05,
    test_fraction: float = 0.05,
    max_bytes: int = corpora.DEFAULT_MAX_BYTES,
    empty: str = "drop",
    subwords: int | list[int] | None = None,
    split: str | None = None,
    first: int | None = None,
) -> Corpus:
    """Load the corpus a spec names (see the module docstring for the grammar).

    Built-in tasks default to 5000/500/500 pairs; real corpora keep all pairs unless
    ``n_train``/``n_valid``/``n_test`` cap them (a seeded sample). ``max_len`` and ``min_len``
    bound the token count of both sides; ``empty="error"`` refuses rows with an empty side
    instead of dropping them with a note. ``target_lowercase`` (default: as ``lowercase``)
    lets a real corpus keep the target's case (so output can be scored case-sensitively) while
    the source is lowercased. ``dedupe`` (default: yes, except inside the official
    splits of Multi30k, kept whole so that results compare with published ones) drops repeats.
    ``split`` (train, valid or test) fills that split alone, with the pairs a load of every split
    gives it, and leaves the others empty; ``first`` (with ``split``) keeps its first pairs alone, and of
    a single file only those pairs are tokenized (the rows the filters keep are found without tokens).
    """
    spec = spec.strip()
    if empty not in ("drop", "error"):
        raise ConfigError(f"empty must be 'drop' or 'error', got {empty!r}")
    for name, value in (("n_train", n_train), ("n_valid", n_valid), ("n_test", n_test)):
        if value is not None:
            check_int(value, name, 0, error=ConfigError)
    check_max_len(max_len)
    filters = {"min_len": min_len, "max_len": max_len}
    merges = _subword_sizes(subwords)
    only = None if split is None else split_name(split)
    if first is not None and only is None:
        raise ConfigError("first keeps the first pairs of one split: give split too")
    if spec in _GENERATORS:
        if any(merges):
            raise ConfigError(f"subwords: built-in tasks keep their own tokens (and gold links); drop it for {spec!r}")
        tokenizer = Tokenizer(_GENERATORS[spec][1], lowercase=lowercase)
        sizes = (
            5000 if n_train is None else n_train,
            500 if n_valid is None else n_valid,
            500 if n_test is None else n_test,
        )
        return _only(_task(spec, sizes, seed, tokenizer, filters), only, first)

    filters["max_len"] = MAX_TOKENS if max_len is None else max_len
    tokenizer = Tokenizer("word", lowercase=lowercase)
    target_tokenizer = tokenizer if target_lowercase is None else Tokenizer("word", lowercase=target_lowercase)
    notes: list[str] = []
    alone = False  # one Multi30k split read by itself
    pair = multi30k_pair(spec)
    if pair:
        source, target, folder = pair
        # subword merges are learned on train, so a split is read alone only without them
        alone = only is not None and not any(merges) and multi30k.reads_alone(source, target, folder, only)
        raw, notes = multi30k.load_multi30k(
            source, target, folder, max_bytes=max_bytes, empty=empty, splits=(only,) if alone else SPLITS
        )
        name = f"multi30k-{source}-{target}"
    elif spec.startswith("hf:"):
        path, _, query = spec[3:].partition("?")
        opts = _options(spec, query, {"src", "tgt", "config", "split"})
        rows, notes = hub.load_hub(
            path, opts["src"], opts["tgt"], config=opts.get("config"), split=opts.get("split", "train"), empty=empty
        )
        raw, name = {"all": rows}, spec.split("?")[0]
    elif "?" in spec or spec.lower().endswith(tuple(tables.TABLE_FORMATS)):
        path, opts = table_options(spec)
        rows, notes = tables.load_table(
            path, opts["src"], opts["tgt"], fmt=opts.get("format"), max_bytes=max_bytes, empty=empty
        )
        raw, name = {"all": rows}, f"file:{path}"
    else:
        raise ConfigError(
            f"unknown data spec {spec!r}; use a task ({', '.join(TASKS)}), multi30k-de-en[@FOLDER], "
            "path/to/file.csv?src=COL&tgt=COL or hf:NAME?src=COL&tgt=COL"
        )

    def pairs_of(rows: corpora.RawPairs, where: str) -> list[Pair]:
        if pair:  # Multi30k's files: tokens from the cache
            sources = tokenize_texts([s for s, _ in rows], tokenizer)
            targets = tokenize_texts([t for _, t in rows], target_tokenizer)
            made = [Pair(s, t, a, b) for (s, t), a, b in zip(rows, sources, targets, strict=True)]
        else:
            made = [make_pair(s, t, tokenizer, target_tokenizer) for s, t in rows]
        return _filter(made, where, dedupe=dedupe, notes=notes, **filters)

    if dedupe is None:
        dedupe = "all" in raw
    if alone:
        train, valid, test = ([] if k != only else pairs_of(raw[k], f"{name} {k}") for k in SPLITS)
        valid, test = _sample(valid, n_valid, seed + 1), _sample(test, n_test, seed + 2)
    elif "all" in raw and only is not None and not any(merges):  # one split's pairs tokenized, no other
        kept, long_, dups = kept_rows(raw["all"], (tokenizer, target_tokenizer), dedupe=dedupe, **filters)
        filter_notes(name, long_, dups, filters["min_len"], filters["max_len"], notes)
        cut = split_indices(len(kept), seed, n_valid, n_test, (valid_fraction, test_fraction))[SPLITS.index(only)]
        head = None if only == "train" and n_train is not None else first  # n_train samples the whole split
        made = [make_pair(*raw["all"][kept[i]], tokenizer, target_tokenizer) for i in cut[:head]]
        train, valid, test = ([] if k != only else made for k in SPLITS)
    elif "all" in raw:
        train, valid, test = _cut(pairs_of(raw["all"], name), seed, n_valid, n_test, (valid_fraction, test_fraction))
    else:
        train = pairs_of(raw["train"], f"{name} train")
        if "valid" in raw and "test" in raw:
            valid, test = pairs_of(raw["valid"], f"{name} valid"), pairs_of(raw["test"], f"{name} test")
        else:
            train, valid, test = _cut(train, seed, n_valid, n_test, (valid_fraction, test_fraction))
            if "valid" in raw:
                valid = pairs_of(raw["valid"], f"{name} valid")
            if "test" in raw:
                test = pairs_of(raw["test"], f"{name} test")
        valid, test = _sample(valid, n_valid, seed + 1), _sample(test, n_test, seed + 2)
    train = _sample(train, n_train, seed)
    if not train and only in (None, "train"):
        raise DataError(f"{name}: no training pairs left after filtering; relax min_len/max_len.")
    corpus = Corpus(name, train, valid, test, tokenizer, target_tokenizer, False, notes)
    return _only(_with_subwords(corpus, *merges) if any(merges) else corpus, only, first)


def _only(corpus: Corpus, split: str | None, first: int | None = None) -> Corpus:
    """``corpus`` with every split but ``split`` emptied (all kept when it is None), and of that split its
    ``first`` pairs alone (all when it is None)."""
    if split is None:
        return corpus
    return replace(corpus, **{k: corpus.split(k)[:first] if k == split else [] for k in SPLITS})


def pair_options(options: dict) -> dict:
    """Data options without those that only cut training tokens (``subwords``): enough to
    rebuild a model's splits for evaluation, which reads raw text through the model's own
    tokenizer (and skips learning the merges again)."""
    return {k: v for k, v in options.items() if k != "subwords"}


def _subword_sizes(subwords: int | list[int] | tuple[int, ...] | None) -> tuple[int, int]:
    """(source, target) merge counts from ``subwords``: None, one int, or a pair."""
    sizes = [0, 0] if subwords is None else [subwords] * 2 if isinstance(subwords, int) else list(subwords)
    if len(sizes) != 2 or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 100_000 for n in sizes):
        raise ConfigError(f"subwords must be a merge count (0 to 100000) or [source, target] counts, got {subwords!r}")
    return sizes[0], sizes[1]


def _with_subwords(corpus: Corpus, source_merges: int, target_merges: int) -> Corpus:
    """The corpus cut into BPE pieces learned on its training split (per side; 0 keeps words)."""

    def side(tokenizer: Tokenizer, merges: int, tokens_of: Callable[[Pair], list[str]]) -> Tokenizer:
        if not merges:
            return tokenizer
        return tokenizer.with_bpe(BPE.learn((w for p in corpus.train for w in tokens_of(p)), merges))

    src_tok = side(corpus.source_tokenizer, source_merges, lambda p: p.source_tokens)
    tgt_tok = side(corpus.target_tokenizer, target_merges, lambda p: p.target_tokens)

    def cut(pairs: list[Pair]) -> list[Pair]:
        return [
            Pair(
                p.source,
                p.target,
                src_tok.bpe.segment_all(p.source_tokens) if src_tok.bpe else p.source_tokens,
                tgt_tok.bpe.segment_all(p.target_tokens) if tgt_tok.bpe else p.target_tokens,
            )
            for p in pairs
        ]

    learned = [len(t.bpe.merges) if t.bpe else 0 for t in (src_tok, tgt_tok)]
    notes = [*corpus.notes, f"subword units: {learned[0]} source and {learned[1]} target BPE merges, learned on train"]
    train = cut(corpus.train)
    readable = [p for p in train if len(p.source_tokens) <= LONGEST_SOURCE]
    if len(readable) < len(train):
        notes.append(f"train: dropped {len(train) - len(readable)} pairs over {LONGEST_SOURCE} subword pieces")
    return Corpus(corpus.name, readable, cut(corpus.valid), cut(corpus.test), src_tok, tgt_tok, False, notes)


def is_file_spec(spec: str) -> bool:
    """Whether a data spec reads a local file (in the app: an upload), not a task, Multi30k or the Hub,
    as :func:`load_corpus` reads it (``multi30k-en-de.csv?src=en&tgt=de`` is a file)."""
    spec = spec.strip()
    return not (spec in TASKS or multi30k_pair(spec) or spec.startswith("hf:"))
