"""``attnviz translate``: translate a sentence and show its alignment, or translate a file."""

from __future__ import annotations

import argparse
import io
import queue
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import BinaryIO, TextIO

from attnviz.cli.options import BEAM_HELP, MODEL_HELP, add_device, add_keep_unk, int_in, print_json
from attnviz.cli.progress import counter, note
from attnviz.cli.streams import sentence
from attnviz.data import bom_encoding, looks_binary
from attnviz.decoding import Translator
from attnviz.errors import InputError
from attnviz.store import load, model_roots

HELP = "translate a sentence and show its alignment, or each line of a file"
FILE_CHUNK = 2000  # lines decoded together: outputs come out as each chunk is done, memory stays bounded


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz translate``."""
    p.add_argument("--model", required=True, help=MODEL_HELP)
    p.add_argument("--beam", type=int_in(1, 20), default=1, help=BEAM_HELP)
    p.add_argument(
        "--max-len",
        type=int_in(1, 1000),
        default=None,
        help="most target tokens to generate (default: twice the source's tokens, its <eos> counted, plus 10)",
    )
    p.add_argument(
        "--json", action="store_true", help="print the full trace as JSON (with --file: one object a line, no trace)"
    )
    p.add_argument(
        "--file",
        metavar="FILE",
        help="translate each line of FILE ('-': standard input) in batches, one translation per line; "
        "a line the model cannot read gives an empty line and a note on standard error",
    )
    add_device(p)
    add_keep_unk(p)
    p.add_argument("text", nargs="?", type=sentence, help="the sentence to translate (or give --file)")


def run(args: argparse.Namespace) -> int:
    if (args.text is None) == (args.file is None):
        raise InputError("give either a sentence to translate or --file FILE")
    model = load(args.model, device=args.device, roots=model_roots(include_cwd=True))
    if args.file is not None:
        if args.file == "-":
            if sys.stdin is None:  # started with standard input closed (<&-)
                raise InputError("standard input is closed; pipe the sentences in, or give --file FILE")
            return translate_lines(model, _text(sys.stdin.buffer, "standard input"), args)
        with open(args.file, "rb") as f:
            return translate_lines(model, _text(f, args.file), args)
    al = model.translate(args.text, beam_size=args.beam, max_len=args.max_len)
    replace_unk = not args.keep_unk
    if args.json:
        trace = al.to_dict()
        for h, written in zip(al.hypotheses, trace.get("hypotheses", []), strict=True):
            written["translation"] = model.text_of(h, replace_unk)  # each n-best entry's text, as printed
        if not replace_unk:  # --keep-unk: no <unk> was replaced, so no copy was made
            trace["unk_copies"] = {}
            for h in trace.get("hypotheses", []):
                h["unk_copies"] = {}
        print_json({"translation": model.text_of(al, replace_unk), **trace})
    else:
        hyps = al.hypotheses or [al]
        if len(hyps) > 1:  # the n-best list, ranked by log p / tokens: that column first
            print(f"{'log p/tok':>9}  {'log p':>8}  {'tokens':>6}  translation")
        for h in hyps:
            prefix = f"{h.ranking_score:9.3f}  {h.log_prob:8.3f}  {len(h.target_tokens):6d}  " if len(hyps) > 1 else ""
            print(prefix + model.text_of(h, replace_unk))
        print("alignment (source-target):", al.to_pharaoh())
    unknown = [piece if piece == word else f"{piece} (in {word})" for piece, word in al.unknown_words()]
    if unknown:
        print("unknown words:", ", ".join(unknown), file=sys.stderr)
    return 0


def _text(stream: BinaryIO, name: str) -> TextIO:
    """A file, pipe or standard input as text: UTF-8 with a leading byte-order mark dropped (UTF-16 or
    UTF-32 after their mark), bytes that do not decode read as U+FFFD (noted once), lines cut at
    ``\n``, ``\r\n`` or ``\r`` as every sentence file is (:func:`attnviz.data.multi30k.text_lines`). Its
    start is looked at without being consumed, so a pipe works: NUL bytes there (without a UTF-16 or
    UTF-32 mark) mean a binary file."""
    buffered = stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream)
    head = buffered.peek(8192)[:8192]
    if why := looks_binary(head):  # UTF-16 and UTF-32 (NUL bytes and all) are text after their mark
        raise InputError(f"{name} {why}")
    return io.TextIOWrapper(buffered, encoding=bom_encoding(head), errors="replace", newline=None)


def _chunks(lines: Iterable[str]) -> Iterator[list[tuple[int, str]]]:
    """The numbered lines in chunks of at most ``FILE_CHUNK``: each chunk is the lines that have arrived,
    so a slow writer (a terminal, ``tail -f``) gets each line's translation as it is typed, and a file
    is decoded in full chunks. A reader thread keeps at most two chunks read ahead."""
    arrived: queue.Queue = queue.Queue(maxsize=2 * FILE_CHUNK)
    end, failed = object(), []

    def read() -> None:
        try:
            for item in enumerate((line.rstrip("\r\n") for line in lines), start=1):
                arrived.put(item)
        except BaseException as e:  # raised again where the lines are used
            failed.append(e)
        finally:
            arrived.put(end)

    threading.Thread(target=read, name="attnviz-translate-input", daemon=True).start()
    while (item := arrived.get()) is not end:
        chunk = [item]
        while len(chunk) < FILE_CHUNK:
            try:
                item = arrived.get_nowait()
            except queue.Empty:
                break
            if item is end:
                arrived.put(end)  # seen again by the outer loop, after this chunk
                break
            chunk.append(item)
        yield chunk
    if failed:
        raise failed[0]


def translate_lines(model: Translator, lines: TextIO, args: argparse.Namespace) -> int:
    """One translation per input line, in order. A line the model cannot read (too long, say)
    gives an empty output line and one note on standard error naming it; the rest is decoded.
    Exit code 0 when every non-empty line was translated, else 2 (as a failed model in ``evaluate``)."""
    refused, garbled = 0, False
    with counter(" lines") as done:
        for chunk in _chunks(lines):
            not_read, garbled = _translate_chunk(model, chunk, args, garbled)
            refused += not_read
            done.update(len(chunk))
    return 2 if refused else 0


def _translate_chunk(
    model: Translator, chunk: list[tuple[int, str]], args: argparse.Namespace, garbled: bool
) -> tuple[int, bool]:
    """Translate and print one chunk of numbered lines: how many it could not read, and whether bad
    bytes have been said (``garbled``: said in an earlier chunk already)."""
    numbers, sources, notes = [], [], {}
    for number, line in chunk:
        if not line.strip():
            continue
        if "\ufffd" in line and not garbled:  # bytes that are not UTF-8, read as U+FFFD
            garbled = True
            note(
                f"attnviz translate: line {number} (and maybe more) is not UTF-8: its bad bytes are read as "
                "\ufffd; convert the file (iconv -f latin1 -t utf-8) for exact words"
            )
        try:
            sources.append(model.source(line))
            numbers.append(number)
        except InputError as e:
            notes[number] = str(e)
            note(f"attnviz translate: line {number}: not translated: {e}")
    outputs = model.translate_batch(sources, beam_size=args.beam, max_len=args.max_len, replace_unk=not args.keep_unk)
    translated = dict(zip(numbers, outputs, strict=True))
    for number, _ in chunk:
        if args.json:
            entry = {"line": number, "error": notes[number]} if number in notes else {"line": number}
            print_json({**entry, "translation": translated.get(number, "")})
        else:
            print(translated.get(number, ""))
    sys.stdout.flush()
    return len(notes), garbled
