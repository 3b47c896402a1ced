"""Time and peak memory of translating one long sentence with its full trace, at beam 1 and 10.

    python benchmarks/long_input.py                     # 200 tokens, beams 1 and 10, on the CPU
    python benchmarks/long_input.py --no-eos --json     # every decode runs its full max_len steps
    python benchmarks/long_input.py --device cuda --json
    python benchmarks/long_input.py --tokens 99         # the shipped models' own limit

The sentence repeats the model's example sentence until it is ``--tokens`` tokens long. Every
shipped model reads at most 99 tokens (``max_src_len`` 100); for a longer ``--tokens`` the limit is
lifted on the loaded copy, which only RNN encoders without location attention allow (their weights
do not depend on it), so the figures are those of real weights on an input longer than any they
were trained on. ``--no-eos`` forbids ``<eos>`` so that every decode runs ``max_len`` steps
(2 x tokens + 10), the worst case for the trace's memory.

Each beam width runs in a fresh process, after loading the model and one warm-up decode of a
12-token sentence: ``seconds`` is the median of ``--repeats`` decodes; ``peak_mb`` the growth of the
process's peak resident set over the decodes (VmHWM reset after the warm-up; Linux) or, on a GPU,
of ``torch.cuda.max_memory_allocated``; ``live_mb`` the most memory the C allocator had handed out
at any decoder step, less what it had before (glibc only; the rest of ``peak_mb`` is memory freed
but kept by the allocator); ``needed_mb`` the size of what the result keeps (the trace arrays of the
hypotheses returned).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import dataclasses
import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_MODEL = "multi30k-de-en-additive-bahdanau"
MB = 2**20
MALLINFO2_FIELDS = (  # glibc's struct mallinfo2, in order; every field a size_t
    "arena",
    "ordblks",
    "smblks",
    "hblks",
    "hblkhd",
    "usmblks",
    "fsmblks",
    "uordblks",
    "fordblks",
    "keepcost",
)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in MALLINFO2_FIELDS]


def _allocated_reader():
    """A function returning the bytes glibc's malloc has handed out and not had back, or None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallinfo2 = libc.mallinfo2
    except (OSError, AttributeError):  # not glibc, or glibc before 2.33
        return None
    mallinfo2.restype = _MallInfo2

    def allocated() -> int:
        info = mallinfo2()
        return info.uordblks + info.hblkhd  # the heap's chunks in use + the mmapped ones

    return allocated


def _status_kb(field: str) -> int | None:
    """A field of /proc/self/status in kB (VmRSS, VmHWM), or None off Linux."""
    try:
        lines = Path("/proc/self/status").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    return next((int(line.split()[1]) for line in lines if line.startswith(field + ":")), None)


def _reset_peak_rss() -> bool:
    """Reset VmHWM to the current resident set (Linux 4.0+)."""
    try:
        Path("/proc/self/clear_refs").write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


def long_sentence(translator, tokens: int) -> str:
    """The model's example sentence repeated, as many words as give at most ``tokens`` tokens."""
    words = (translator.meta.get("example") or "a").split()
    count = lambda text: len(translator.src_tokenizer.cut(text)[0])  # noqa: E731
    chosen: list[str] = []
    for k in range(tokens * 4):
        candidate = [*chosen, words[k % len(words)]]
        if count(" ".join(candidate)) <= tokens:
            chosen = candidate
        if count(" ".join(chosen)) == tokens:
            break
    return " ".join(chosen)


def fit_length(translator, tokens: int) -> bool:
    """Let ``translator`` read ``tokens`` tokens; True when its limit had to be lifted."""
    cfg = translator.config
    if tokens <= translator.max_source_tokens:
        return False
    if cfg.encoder == "transformer" or "location" in (cfg.score, cfg.local_content):
        raise SystemExit(
            f"{tokens} tokens: this model reads at most {translator.max_source_tokens}, and its weights depend "
            "on that limit (a Transformer encoder or location attention); use --tokens at most the limit"
        )
    translator.model.cfg = dataclasses.replace(cfg, max_src_len=tokens + 1)
    return True


def measure(model: str, tokens: int, beam: int, device: str, no_eos: bool, repeats: int, threads: int) -> dict:
    """One beam width, in the calling process: see the module doc."""
    import torch

    from attnviz.devices import describe, pick_device
    from attnviz.store import load
    from attnviz.training.bench import forbid_eos

    torch.set_num_threads(threads)
    translator = load(model, device=device)
    limit = translator.max_source_tokens
    lifted = fit_length(translator, tokens)
    if no_eos:
        translator.model = forbid_eos(translator.model)
    text = long_sentence(translator, tokens)
    on_gpu = translator.device.type == "cuda"
    allocated = None if on_gpu else _allocated_reader()
    live = [0]
    if allocated is not None:
        step = translator.model.decoder.step

        def step_and_sample(*args, **kwargs):
            out = step(*args, **kwargs)
            live[0] = max(live[0], allocated())
            return out

        translator.model.decoder.step = step_and_sample

    def sync() -> None:
        if on_gpu:
            torch.cuda.synchronize()

    translator.translate(long_sentence(translator, 12), beam_size=beam)  # warm-up on a short sentence
    sync()
    if on_gpu:
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        reset = _reset_peak_rss()
        base = (_status_kb("VmRSS") or 0) * 1024
    live_base = live[0] = allocated() if allocated is not None else 0
    times, result = [], None
    for _ in range(repeats):
        result = None  # each decode measured alone, without the last one's result
        start = time.perf_counter()
        result = translator.translate(text, beam_size=beam)
        sync()
        times.append(time.perf_counter() - start)
    if on_gpu:
        peak = torch.cuda.max_memory_allocated() - base
    else:
        hwm = _status_kb("VmHWM")
        peak = hwm * 1024 - base if reset and hwm is not None else None
    kept = result.hypotheses or [result]  # a beam's best is the first of its n-best list
    needed = sum(
        getattr(al, name).nbytes
        for al in kept
        for name in ("weights", "scores", "contexts", "states", "token_log_probs", "positions")
        if getattr(al, name) is not None
    )
    return {
        "model": model,
        "device": describe(pick_device(device)),
        "tokens": len(result.source_tokens) - 1,
        "limit": limit,
        "limit_lifted": lifted,
        "no_eos": no_eos,
        "beam": beam,
        "steps": len(result.target_tokens),
        "hypotheses": len(result.hypotheses),
        "seconds": round(statistics.median(times), 4),
        "peak_mb": None if peak is None else round(peak / MB, 1),
        "live_mb": round((live[0] - live_base) / MB, 1) if allocated is not None else None,
        "needed_mb": round(needed / MB, 2),
    }


def _child(queue, *args) -> None:
    try:
        queue.put(measure(*args))
    except (Exception, SystemExit) as e:  # the parent waits on the queue: always answer
        queue.put({"error": str(e) or type(e).__name__})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"a model name or checkpoint (default {DEFAULT_MODEL})")
    parser.add_argument("--tokens", type=int, default=200, help="source tokens, <eos> not counted (default 200)")
    parser.add_argument("--beams", type=int, nargs="+", default=[1, 10], help="beam widths (default 1 10)")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, mps or auto")
    parser.add_argument("--no-eos", action="store_true", help="forbid <eos>: every decode runs max_len steps")
    parser.add_argument("--repeats", type=int, default=3, help="timed decodes per beam width (default 3)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1, as the app decodes)")
    parser.add_argument("--json", action="store_true", help="one JSON object per beam width")
    args = parser.parse_args()
    from attnviz.devices import pick_device
    from attnviz.errors import AttnvizError

    try:
        pick_device(args.device)
    except AttnvizError as e:
        raise SystemExit(f"long_input.py: {e}") from None
    context = multiprocessing.get_context("spawn")  # a fresh process per beam width: its own peak memory
    rows = []
    for beam in args.beams:
        queue = context.Queue()
        child = context.Process(
            target=_child,
            args=(queue, args.model, args.tokens, beam, args.device, args.no_eos, args.repeats, args.threads),
        )
        child.start()
        rows.append(queue.get())
        child.join()
        if "error" in rows[-1]:
            raise SystemExit(f"long_input.py: beam {beam}: {rows[-1]['error']}")
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return
    first = rows[0]
    lifted = f" (the model's limit, {first['limit']}, lifted)" if first["limit_lifted"] else ""
    forbidden = ", <eos> forbidden" if first["no_eos"] else ""
    print(f"{first['model']} on {first['device']}: {first['tokens']} tokens{lifted}{forbidden}")
    print(f"{'beam':>4} {'steps':>5} {'seconds':>8} {'peak MB':>8} {'live MB':>8} {'needed MB':>9}")
    for r in rows:
        print(
            f"{r['beam']:>4} {r['steps']:>5} {r['seconds']:>8.3f} {r['peak_mb']!s:>8} {r['live_mb']!s:>8} "
            f"{r['needed_mb']:>9.2f}"
        )


if __name__ == "__main__":
    main()
