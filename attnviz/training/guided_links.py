"""Reference links for guided alignment training: one list per training pair, over the model's tokens.

A recipe asks for guidance with ``"guided": {"weight": 0.3, "links": SOURCE}``; ``SOURCE`` is

- ``"eflomal"``: eflomal aligns the words of the training pairs themselves (both directions,
  combined with ``method``) once, at the start of training. The links are cached as a Pharaoh
  file named by a hash of the words and the method, so a resumed training, or another model of
  the same data, reads the same links instead of sampling new ones (eflomal is not seeded).
- ``"gold"``: the pairs' own gold links (the built-in tasks have them).
- a path: a Pharaoh file of word links, one line per training pair in the order ``load_corpus``
  gives the recipe's training split (an eflomal cache file is one).

Word ``i`` is what :func:`attnviz.data.bpe.join_pieces` makes of the tokens, so on a subword
side every piece of a linked word is linked (:func:`attnviz.training.guided.piece_links`). The links
index ``Pair.source_tokens`` and ``Pair.target_tokens`` as they are; target word ``j`` is the
decoder step that writes it (attention row ``j``), and no link touches ``<eos>`` on either side.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from attnviz.data import Corpus, Link, Words, bom_encoding, join_pieces, own_folder, to_pharaoh, user_temp
from attnviz.errors import AttnvizError, ConfigError, DataError, counted
from attnviz.links import DIRECTIONS, SYMMETRIC, parse_pharaoh, run_eflomal
from attnviz.store import read_regular_file
from attnviz.training.guided import DEFAULT_WEIGHT, piece_links

SOURCES = ("eflomal", "gold")  # or a path to a Pharaoh file
CACHE_DIR = Path(os.environ.get("ATTNVIZ_LINKS_CACHE") or user_temp("attnviz-links"))
LINKS_DIR = "guided-links"  # run_recipe caches eflomal's links in this folder next to the checkpoint
MAX_LINKS_BYTES = 256 * 2**20  # as much as a corpus table is read; a pair's links take fewer bytes than its text


@dataclass
class GuidedConfig:
    """A recipe's ``guided`` field: the weight of the alignment loss and where the links come from."""

    weight: float = DEFAULT_WEIGHT
    links: str = "eflomal"  # "eflomal", "gold" or a Pharaoh file path
    method: str = "grow-diag-final-and"  # how eflomal's two directions are combined

    def __post_init__(self) -> None:
        if isinstance(self.weight, bool) or not isinstance(self.weight, int | float) or not 0 < self.weight <= 10:
            raise ConfigError(f"guided weight must be a number in (0, 10], got {self.weight!r}; 0.3 is a good start")
        if not isinstance(self.links, str) or not self.links.strip():
            raise ConfigError(f"guided links must be {' or '.join(map(repr, SOURCES))} or a Pharaoh file path")
        methods = DIRECTIONS + SYMMETRIC
        if self.method not in methods:
            raise ConfigError(f"unknown guided method {self.method!r}; choose one of {', '.join(methods)}")

    def to_dict(self) -> dict:
        return asdict(self)


def pair_words(corpus: Corpus) -> list[tuple[Words, Words]]:
    """The (source words, target words) of every training pair: subword pieces joined back."""
    return [(join_pieces(p.source_tokens), join_pieces(p.target_tokens)) for p in corpus.train]


def training_links(corpus: Corpus, cfg: GuidedConfig, cache_dir: Path = CACHE_DIR) -> tuple[list[list[Link]], str]:
    """Token links for every pair of ``corpus.train`` (same order) and where they came from (the
    file read or written); eflomal's links are cached in ``cache_dir``."""
    words = pair_words(corpus)
    if cfg.links == "gold":
        if not all(p.has_gold for p in corpus.train):
            raise ConfigError(
                f"{corpus.name} has no gold links on its training pairs; use guided links 'eflomal' or a Pharaoh file"
            )
        return [list(p.sure) for p in corpus.train], "gold links of the training pairs"
    if cfg.links == "eflomal":
        if "char" in (corpus.source_tokenizer.kind, corpus.target_tokenizer.kind):
            raise ConfigError(
                f"{corpus.name} is character-level and eflomal aligns words; use guided links 'gold' or a file"
            )
        word_links, path = _eflomal_cached(words, cfg.method, Path(cache_dir))
    else:
        path = Path(cfg.links).expanduser()
        word_links = read_links(path, [(len(s), len(t)) for s, t in words])
    tokens = [
        piece_links(links, p.source_tokens, p.target_tokens) for links, p in zip(word_links, corpus.train, strict=True)
    ]
    return tokens, str(path)


def read_links(path: str | Path, lengths: list[tuple[int, int]]) -> list[list[Link]]:
    """Word links from a Pharaoh file, one line per pair of ``lengths`` (source, target words);
    a wrong line count or an index outside its pair raises DataError naming the line."""
    advice = "give a Pharaoh file of links or guided links 'eflomal'"
    lines = read_text_file(Path(path), MAX_LINKS_BYTES, "links file", advice, DataError).splitlines()
    if len(lines) != len(lengths):
        raise DataError(
            f"{path} line {min(len(lines), len(lengths)) + 1}: the file has {counted(len(lines), 'line')} for "
            f"{counted(len(lengths), 'training pair')}; write one line of word links per pair of the recipe's "
            "training split, in order (an empty line for a pair without links)"
        )
    out = []
    for k, (gold, (n_src, n_tgt)) in enumerate(zip(parse_pharaoh(lines, name=str(path)), lengths, strict=True)):
        for i, j in sorted(gold.possible):
            if not (i < n_src and j < n_tgt):
                raise DataError(
                    f"{path} line {k + 1}: link {i}-{j} is outside its pair's {n_src} source and {n_tgt} target "
                    "words (0-based); the lines must follow the training pairs in order, with word indices"
                )
        out.append(sorted(gold.possible))
    return out


def read_text_file(path: Path, limit: int, what: str, advice: str, error: type[AttnvizError]) -> str:
    """The text of ``path``, a regular file of at most ``limit`` bytes (:func:`attnviz.store.read_regular_file`)
    in UTF-8, a byte-order mark dropped (UTF-16 or UTF-32 after their mark: :func:`attnviz.data.bom_encoding`);
    each problem raises ``error`` naming ``what`` and ``advice``."""
    data = read_regular_file(path, limit, what, advice, error)
    try:
        return data.decode(bom_encoding(data[:4]))
    except UnicodeDecodeError as e:
        raise error(f"{path}: not {e.encoding.upper()} text ({e.reason} at byte {e.start}); save it as UTF-8") from None


def _eflomal_cached(words: list[tuple[Words, Words]], method: str, cache_dir: Path) -> tuple[list[list[Link]], Path]:
    """eflomal's links of ``words``, read from the cache when a run on the same words made them. The cache
    is only a speed-up: a folder that is not the user's own is neither read nor written."""
    digest = hashlib.sha256(method.encode())
    for src, tgt in words:
        digest.update(f"{' '.join(src)}\t{' '.join(tgt)}\n".encode())
    path = cache_dir / f"eflomal-{method}-{digest.hexdigest()[:16]}.links"
    lengths = [(len(s), len(t)) for s, t in words]
    try:
        own_folder(cache_dir, "ATTNVIZ_LINKS_CACHE")
    except DataError:  # another user's folder, read-only or full: eflomal runs, its links are not kept
        return run_eflomal(words, method=method), Path("eflomal")
    if path.is_file():
        return read_links(path, lengths), path
    links = run_eflomal(words, method=method)
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        temp.write_text("".join(to_pharaoh(sentence) + "\n" for sentence in links), encoding="utf-8")
        os.replace(temp, path)  # atomic: a killed run leaves no half-written cache
    except OSError:  # a full disk: the links are not kept
        temp.unlink(missing_ok=True)
        return links, Path("eflomal")
    return links, path
