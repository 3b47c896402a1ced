"""Multi30k (Elliott et al. 2016) from a local folder: ``train.en.gz``, ``val.de``, ``test_2016_flickr.fr.gz``, ..."""

from __future__ import annotations

import os
from pathlib import Path

from attnviz.data.corpora import DEFAULT_MAX_BYTES, RawPairs, check_file, drop_empty_rows
from attnviz.data.textcodec import decode_text
from attnviz.errors import DataError, counted

MULTI30K_ENV = "ATTNVIZ_MULTI30K"  # the folder a plain multi30k-SRC-TGT spec reads (no @FOLDER)
_BESIDE_CHECKOUT = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "multi30k"
_IN_CHECKOUT = (Path(__file__).resolve().parents[2] / "app.py").is_file()  # else an installed package
MULTI30K_LANGUAGES = ("en", "de", "fr")
MULTI30K_FILES = {"train": "train", "valid": "val", "test": "test_2016_flickr"}
SPLITS = tuple(MULTI30K_FILES)


def default_multi30k() -> Path:
    """The Multi30k folder of a spec without ``@FOLDER``: ``$ATTNVIZ_MULTI30K`` (read at every call),
    else ``../shared/data/multi30k`` beside a checkout."""
    named = os.environ.get(MULTI30K_ENV, "").strip()
    return Path(named).expanduser() if named else _BESIDE_CHECKOUT


def _looks_like_multi30k(name: str) -> bool:
    """A file name that names a Multi30k split or language (``train.en.txt``, ``val-de.gz``)."""
    lower = name.lower()
    return any(stem in lower for stem in ("train", "val", "test")) and any(
        f".{lang}" in lower or f"-{lang}" in lower or f"_{lang}" in lower for lang in MULTI30K_LANGUAGES
    )


def _find(folder: Path, stem: str) -> Path | None:
    for name in (f"{stem}.gz", stem):
        if (folder / name).is_file():
            return folder / name
    return None


def text_lines(data: bytes) -> list[str]:
    r"""The lines of a text file's bytes (UTF-8, or UTF-16 or UTF-32 after their byte-order mark:
    :func:`attnviz.data.textcodec.decode_text`), as ``datasets``' text builder, editors and ``translate
    --file`` cut them: ``\r\n`` and ``\r`` end a line like ``\n``, no other character does (U+2028,
    U+0085 and a form feed stay inside their line), and a last line without its newline still
    counts. Every text file of sentences is cut by this one function. Raises UnicodeDecodeError for
    bytes that are not in the encoding."""
    lines = decode_text(data).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def multi30k_files(
    source: str, target: str, folder: str | Path | None = None
) -> tuple[dict[str, tuple[Path, Path]], dict[str, str]]:
    """The ``(source, target)`` files of each split that ``folder`` has (train always), and a note
    for each split it lacks (that split is cut from train)."""
    for lang in (source, target):
        if lang not in MULTI30K_LANGUAGES:
            raise DataError(f"Multi30k has no language {lang!r}; choose from {', '.join(MULTI30K_LANGUAGES)}.")
    if source == target:
        raise DataError(f"source and target are both {source!r}; name two different languages.")
    installed = folder is None and not os.environ.get(MULTI30K_ENV, "").strip() and not _IN_CHECKOUT
    folder = Path(folder) if folder is not None else default_multi30k()
    if not folder.is_dir():
        where = "no Multi30k folder is set (an installed package has none beside it)" if installed else None
        raise DataError(
            f"{where or f'Multi30k folder {folder} does not exist'}; name the folder that holds train.en.gz, "
            f"val.en.gz, test_2016_flickr.en.gz, ... (e.g. multi30k-de-en@/path/to/multi30k, or set {MULTI30K_ENV})."
        )
    found = {
        (split, lang): _find(folder, f"{stem}.{lang}")
        for split, stem in MULTI30K_FILES.items()
        for lang in MULTI30K_LANGUAGES
    }
    if not any(found.values()):
        # only names that look like a Multi30k file misnamed: the error must not list a folder's contents
        near = sorted(p.name for p in folder.iterdir() if _looks_like_multi30k(p.name))[:10]
        listing = f"; found {', '.join(near)}" if near else ""
        raise DataError(
            f"{folder} has no Multi30k files (expected train.en.gz, val.de.gz, test_2016_flickr.fr.gz "
            f"or the same without .gz{listing}); rename the files or name another folder."
        )
    files: dict[str, tuple[Path, Path]] = {}
    missing: dict[str, str] = {}
    for split, stem in MULTI30K_FILES.items():
        paths = [found[split, source], found[split, target]]
        if paths == [None, None] and split != "train":
            missing[split] = f"{folder}: no {stem}.{source}/{stem}.{target}; the {split} split is cut from train"
            continue
        for lang, path in zip((source, target), paths, strict=True):
            if path is None:
                have = sorted({lang for (s, lang), p in found.items() if s == split and p})
                raise DataError(
                    f"{folder} has no {stem}.{lang}.gz (nor {stem}.{lang}); it has {split} files for "
                    f"{', '.join(have) or 'no language'}. Add the file or choose another language pair."
                )
        files[split] = (paths[0], paths[1])
    return files, missing


def reads_alone(source: str, target: str, folder: str | Path | None, split: str) -> bool:
    """Whether ``split`` comes from its own files, so that it can be read without the others: the
    folder has them (and, for train, the other splits' too, else those are cut from train)."""
    files, missing = multi30k_files(source, target, folder)
    return split in files and (split != "train" or not missing)


def read_split(
    src_path: Path, tgt_path: Path, notes: list[str], *, max_bytes: int = DEFAULT_MAX_BYTES, empty: str = "drop"
) -> RawPairs:
    """The line-aligned pairs of two files (checked by :func:`~attnviz.data.corpora.check_file`),
    pairs with an empty side dropped with a note (or refused: ``empty="error"``)."""
    src_lines, tgt_lines = (text_lines(check_file(path, max_bytes)) for path in (src_path, tgt_path))
    if len(src_lines) != len(tgt_lines):
        short, long_ = sorted([(len(src_lines), src_path), (len(tgt_lines), tgt_path)], key=lambda x: x[0])
        raise DataError(
            f"{src_path.name} has {counted(len(src_lines), 'line')} but {tgt_path.name} has {len(tgt_lines)}: "
            f"line {short[0] + 1} of {long_[1]} has no partner in {short[1]}. The files must be "
            "line-aligned translations; check that neither was truncated or edited."
        )
    rows = list(zip(src_lines, tgt_lines, strict=True))
    return drop_empty_rows(rows, f"{src_path.name}/{tgt_path.name}", 1, empty, notes)


def load_multi30k(
    source: str,
    target: str,
    folder: str | Path | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    empty: str = "drop",
    splits: tuple[str, ...] = SPLITS,
) -> tuple[dict[str, RawPairs], list[str]]:
    """Multi30k pairs of ``splits`` from ``folder`` (``train.en.gz``, ``val.de``, ...; gzipped or
    not); a split the folder lacks has a note instead (:func:`reads_alone` tells when one split can
    be read without the others)."""
    files, missing = multi30k_files(source, target, folder)
    pairs: dict[str, RawPairs] = {}
    notes: list[str] = []
    for split in splits:
        if split in missing:
            notes.append(missing[split])
        else:
            pairs[split] = read_split(*files[split], notes, max_bytes=max_bytes, empty=empty)
    return pairs, notes
