"""Checkpoints: one ``.safetensors`` file holding the weights and, in its JSON header, the
config, vocabularies, tokenizers, recipe and metrics; a model trained with an alignment history
also stores it there (:mod:`attnviz.store.history`). Loading never unpickles anything.

Writes are atomic (a temporary file in the same folder, fsync, then rename), so a crash
during a save leaves the previous file intact; the temporary file is locked while it is
written, and the next save removes those that a killed save left behind.

Loading checks the config's types and ranges and the weights' shapes (read from the
safetensors header, without reading a tensor) before it allocates the model, and refuses
weights that are not finite.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file
from torch.overrides import TorchFunctionMode

from attnviz.data import Tokenizer, Vocab
from attnviz.decoding import Translator
from attnviz.errors import AttnvizError, CheckpointError
from attnviz.model import ModelConfig, Seq2Seq
from attnviz.store.files import SHARED_MODE, clean_stale_temp, fcntl
from attnviz.store.header import MAX_DEPTH, MAX_HEADER_BYTES, too_deep, validate_header
from attnviz.store.history import FIELD, history_from, history_header, history_tensors, is_history_tensor
from attnviz.store.paths import SUFFIX
from attnviz.store.quantize import check_store, check_stored, decode_weights, encode_weights, store_of, weight_names

FORMAT = "attnviz-checkpoint"
FORMAT_VERSION = 2
INT8_FORMAT_VERSION = 3  # written only for int8 weights, so a reader without them refuses the file by its version
READS_VERSIONS = (1, 2, 3)  # 1: vocabularies as JSON lists; 2: one token per line, compact UTF-8 header; 3: int8
PICKLE_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle")
MAX_CHECKPOINT_BYTES = 512 * 1024 * 1024
AGAIN = "; copy the file again, or train it again"  # the way on from a damaged or edited checkpoint


def save(translator: Translator, path: str | Path, store: str = "fp32") -> Path:
    """Write ``translator`` to ``path`` (``.safetensors``) atomically, over a file already there (the
    command line asks for ``--force`` first: :func:`~attnviz.store.files.check_output`); return the
    path. ``store`` is how the weights are kept: ``"fp32"``, ``"fp16"`` or ``"int8"`` (see
    :mod:`attnviz.store.quantize`)."""
    path = Path(path)
    if path.suffix != SUFFIX:
        raise CheckpointError(f"checkpoints are saved as {SUFFIX} files; got {path.name!r}")
    if path.is_dir():
        raise CheckpointError(f"{path} is a folder; give a file name ending in {SUFFIX}")
    check_store(store)
    header = {
        "format": FORMAT,
        "format_version": INT8_FORMAT_VERSION if store == "int8" else FORMAT_VERSION,
        "config": translator.config.to_dict(),
        "src_vocab": _vocab_field(translator.src_vocab.to_list()),
        "tgt_vocab": _vocab_field(translator.tgt_vocab.to_list()),
        "src_tokenizer": translator.src_tokenizer.to_dict(),
        "tgt_tokenizer": translator.tgt_tokenizer.to_dict(),
        "meta": translator.meta,
    }
    tensors = encode_weights(translator.model.state_dict(), store)
    if translator.history is not None:
        header[FIELD] = history_header(translator.history)
        tensors.update(history_tensors(translator.history))
    text = _header_text(header, path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temp(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)  # marks the file as being written (see files.clean_stale_temp)
    try:
        save_file(tensors, tmp, metadata={"attnviz": text})
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
            header_bytes, size = int.from_bytes(f.read(8), "little"), os.fstat(f.fileno()).st_size
        if header_bytes > MAX_HEADER_BYTES or size > MAX_CHECKPOINT_BYTES:  # what read_header refuses
            raise CheckpointError(
                f"{path.name} would be {size / 2**20:.0f} MiB with a {header_bytes / 2**20:.1f} MiB header; attnviz "
                f"reads checkpoints of at most {MAX_CHECKPOINT_BYTES // 2**20} MiB with headers of at most "
                f"{MAX_HEADER_BYTES // 2**20} MiB, so it was not saved: store it smaller (store='int8'), or keep "
                "meta smaller"
            )
        os.chmod(tmp, SHARED_MODE)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        os.close(fd)
    return path


def _header_text(header: dict, name: str) -> str:
    """The header as compact JSON, or a CheckpointError for one that :func:`read_header` could not read
    back (nested too deep) or that cannot be written (a value JSON has no form for, a lone surrogate)."""
    if too_deep(header):
        raise CheckpointError(
            f"{name}: the model's meta nests more than {MAX_DEPTH} levels, which no attnviz reads back; keep it flatter"
        )
    try:
        text = json.dumps(header, ensure_ascii=False, separators=(",", ":"))
        text.encode("utf-8")
    except TypeError as e:  # a set, a tensor, a numpy number
        raise CheckpointError(
            f"{name}: the model's meta cannot be saved as JSON ({e}); keep it to JSON values"
        ) from None
    except UnicodeEncodeError as e:  # a lone surrogate, e.g. from text decoded with surrogateescape
        raise CheckpointError(
            f"{name}: the model's meta holds {e.object[e.start : e.end]!r}, which is not Unicode text and cannot be "
            "saved; remove it (or decode that text with errors='replace')"
        ) from None
    return text


def _vocab_field(tokens: list[str]) -> str | list[str]:
    """A vocabulary as one token per line (a third smaller than a JSON list); a list if a token holds a newline."""
    return tokens if any("\n" in t for t in tokens) else "\n".join(tokens)


def _vocab_from_field(value: object) -> Vocab:
    return Vocab.from_list(value.split("\n") if isinstance(value, str) else value)


def _refuse_unsafe(path: Path) -> None:
    if path.suffix.lower() in PICKLE_SUFFIXES:
        raise CheckpointError(
            f"{path.name}: pickle-based checkpoints ({', '.join(PICKLE_SUFFIXES)}) can run code when "
            f"loaded and are refused; attnviz loads only its own {SUFFIX} checkpoints"
        )
    with open(path, "rb") as f:
        head = f.read(9)
    # safetensors: an 8-byte little-endian header length, then the JSON header ("{")
    header_len = int.from_bytes(head[:8], "little") if len(head) == 9 else -1
    if 0 < header_len <= path.stat().st_size - 8 and head[8:9] == b"{":
        if header_len > MAX_HEADER_BYTES:
            raise CheckpointError(
                f"{path.name}: its header is {header_len / 2**20:.1f} MiB; checkpoint headers over "
                f"{MAX_HEADER_BYTES // 2**20} MiB are refused"
            )
        return
    if head[:2] == b"PK" or head[:1] == b"\x80":
        raise CheckpointError(
            f"{path.name}: this is a pickle/zip (torch.save) file; attnviz loads only {SUFFIX} checkpoints, "
            "which cannot run code"
        )


def read_header(path: str | Path) -> dict:
    """The JSON header of a checkpoint, validated; raises :class:`CheckpointError`."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint file at {path}")
    _refuse_unsafe(path)
    size = path.stat().st_size
    if size == 0:
        raise CheckpointError(f"{path.name} is empty; it is not a checkpoint (was a save interrupted?)")
    if size > MAX_CHECKPOINT_BYTES:
        raise CheckpointError(f"{path.name} is {size / 2**20:.0f} MiB; checkpoints over 512 MiB are refused")
    try:
        with safe_open(str(path), framework="pt") as f:
            metadata = f.metadata() or {}
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(
            f"{path.name} is not a readable safetensors file (corrupt or truncated): {e}{AGAIN}"
        ) from e
    if "attnviz" not in metadata:
        raise CheckpointError(f"{path.name} is a safetensors file but not an attnviz checkpoint (no attnviz header)")
    try:
        header = json.loads(metadata["attnviz"])
    except json.JSONDecodeError as e:
        raise CheckpointError(f"{path.name}: the attnviz header is not valid JSON ({e})") from e
    except RecursionError as e:
        raise CheckpointError(f"{path.name}: the attnviz header nests too deeply; it was not written by attnviz") from e
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CheckpointError(f"{path.name}: the header is not an attnviz checkpoint header")
    if header.get("format_version") not in READS_VERSIONS:
        raise CheckpointError(
            f"{path.name} was written in checkpoint format {header.get('format_version')!r}; this attnviz "
            f"reads formats {', '.join(map(str, READS_VERSIONS))}. Retrain or convert it with the attnviz that made it."
        )
    return validate_header(header, path.name)


def load_checkpoint(path: str | Path, device: str | torch.device = "cpu") -> Translator:
    """Rebuild a :class:`Translator` from a checkpoint; every mismatch is a CheckpointError."""
    path = Path(path)
    header = read_header(path)
    try:
        cfg = ModelConfig.from_dict(header["config"])
        src_vocab, tgt_vocab = _vocab_from_field(header["src_vocab"]), _vocab_from_field(header["tgt_vocab"])
        src_tok = Tokenizer.from_dict(header["src_tokenizer"], src_vocab.itos)
        tgt_tok = Tokenizer.from_dict(header["tgt_tokenizer"], tgt_vocab.itos)
    except KeyError as e:
        raise CheckpointError(f"{path.name}: the header lacks {e}{AGAIN}") from e
    except AttnvizError as e:
        raise CheckpointError(f"{path.name}: {e}") from e
    except (TypeError, AttributeError, ValueError) as e:  # a header field of the wrong JSON type
        raise CheckpointError(f"{path.name}: the header is malformed ({type(e).__name__}: {e}){AGAIN}") from e
    if (len(src_vocab), len(tgt_vocab)) != (cfg.src_vocab_size, cfg.tgt_vocab_size):
        raise CheckpointError(
            f"{path.name}: the vocabularies ({len(src_vocab)}, {len(tgt_vocab)} tokens) do not match the "
            f"model's ({cfg.src_vocab_size}, {cfg.tgt_vocab_size}); the file was edited or mixed up{AGAIN}"
        )
    model = _meta_model(cfg)  # the shapes to check the file against, then the weights' home
    expected = _expected_shapes(model)
    try:
        with _tensor_reader(path) as (f, read):
            stored = set(f.keys())
            history = {n for n in stored if is_history_tensor(n)}
            names = weight_names(stored - history)
            if names != set(expected):
                missing, extra = sorted(set(expected) - names)[:3], sorted(names - set(expected))[:3]
                raise CheckpointError(
                    f"{path.name}: the weights do not fit the architecture in its config "
                    f"(missing {missing}, unexpected {extra}){AGAIN}"
                )
            # dtypes and shapes from the file's header: nothing is read or allocated yet
            codes = {n: f.get_slice(n).get_dtype() for n in stored - history}
            shapes = {n: list(f.get_slice(n).get_shape()) for n in stored - history}
            check_stored(path.name, codes, shapes, stored)
            for name in sorted(names):
                if shapes[name] != expected[name]:
                    raise CheckpointError(
                        f"{path.name}: weight {name} has shape {shapes[name]}, the config needs {expected[name]}; "
                        "the config or the weights were edited"
                    )
            state = decode_weights(path.name, names, read)  # tensor by tensor, each float32 weight in memory of its own
            recorded = {name: read(name) for name in history}
    except (SafetensorError, OSError, RuntimeError) as e:
        raise CheckpointError(f"{path.name}: the weights cannot be read (corrupt or truncated): {e}{AGAIN}") from e
    bad = sorted(name for name, tensor in state.items() if not _finite(tensor))
    if bad:
        raise CheckpointError(
            f"{path.name}: weights {bad[:3]} hold NaN or infinite values (training diverged or the file "
            "was damaged); retrain with a lower learning rate or load an earlier checkpoint"
        )
    _assemble(model, state)
    model.to(device)
    history = history_from(header.get(FIELD), recorded, path.name)
    return Translator(model, src_vocab, tgt_vocab, src_tok, tgt_tok, header["meta"], history)


def _finite(tensor: torch.Tensor) -> bool:
    """Whether every value of ``tensor`` is finite: its least and greatest are (a NaN makes both NaN).
    No temporary of the tensor's size, where ``isfinite(tensor).all()`` makes several."""
    if tensor.numel() == 0:
        return True
    low, high = torch.aminmax(tensor)
    return bool(torch.isfinite(low)) and bool(torch.isfinite(high))


@contextlib.contextmanager
def _tensor_reader(path: Path) -> Iterator[tuple[safe_open, Callable[[str], torch.Tensor]]]:
    """The open checkpoint and a function reading one of its tensors into memory of its own, with
    ``pread(2)`` (safetensors 0.8 and later): no weight stays a view of a mapping of the file, which
    a copy over the file would change or cut short, and the file's pages are not held on top of
    the weights. An older safetensors only maps the file; each tensor is then copied out of it."""
    try:
        f = safe_open(str(path), framework="pt", backend="pread")
        read = f.get_tensor
    except TypeError:  # safetensors before 0.8: no backend argument
        f = safe_open(str(path), framework="pt")
        read = lambda name: f.get_tensor(name).clone()  # noqa: E731
    with f:
        yield f, read


def _assemble(model: Seq2Seq, state: dict[str, torch.Tensor]) -> None:
    """Give a model built by :func:`_meta_model` the tensors of ``state`` themselves (no copy), so
    loading holds the weights once. What ``__init__`` makes that the checkpoint does not store (a
    non-persistent buffer) must be made on the CPU there; one left on the meta device, or weights
    one module shares with another, stop the load here rather than give a model without values."""
    cfg = model.cfg
    params = [id(p) for _, p in model.named_parameters(remove_duplicate=False)]
    model.load_state_dict(state, assign=True)
    tensors = [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]
    tensors += [(f"{m}.{k}".lstrip("."), v) for m, mod in model.named_modules() for k, v in vars(mod).items()]
    empty = [name for name, t in tensors if isinstance(t, torch.Tensor) and t.is_meta]  # a plain tensor attribute too
    if empty or len(set(params)) != len(params):
        raise RuntimeError(
            f"the {cfg.score}/{cfg.style} model cannot be assembled from its checkpoint: "
            f"{empty[:3] or 'shared weights'} would hold no values of their own; give the module that "
            "makes them a CPU tensor in __init__ (see TransformerEncoder's positions), or untie the weights"
        )


def read_history(path: str | Path) -> dict | None:
    """The alignment history of the checkpoint at ``path`` as plain data for plots (see
    :meth:`attnviz.decoding.AlignmentHistory.to_dict`), read without the model's weights; None
    for a model trained without one (or whose history was malformed)."""
    path = Path(path)
    header = read_header(path)
    if FIELD not in header:
        return None
    try:
        with safe_open(str(path), framework="pt") as f:
            recorded = {name: f.get_tensor(name) for name in f.keys() if is_history_tensor(name)}  # noqa: SIM118
    except (SafetensorError, OSError, RuntimeError) as e:
        raise CheckpointError(f"{path.name}: the alignment history cannot be read (corrupt or truncated): {e}") from e
    history = history_from(header[FIELD], recorded, path.name)
    return None if history is None else history.to_dict()


def drop_owner(path: str | Path, owner: str) -> Path:
    """Share a model trained on an upload: rewrite its checkpoint (atomically, its weights in the
    precision they were stored in) without ``meta["owner"]``, so every session lists and loads it.
    Only ``owner``, the session recorded in the file, may do so; raises :class:`CheckpointError`."""
    path = Path(path)
    recorded = read_header(path)["meta"].get("owner")
    if recorded is None:
        return path  # shared already
    if recorded != owner:
        raise CheckpointError(f"{path.name} belongs to another session; only the session that trained it may share it")
    translator = load_checkpoint(path)
    translator.meta = {k: v for k, v in translator.meta.items() if k != "owner"}
    return save(translator, path, store=stored_as(path))


def as_stored(translator: Translator, store: str) -> Translator:
    """``translator`` with the weights a checkpoint saved with ``store`` would load (in place): what a
    user of the saved file explores, so measure it after this."""
    encoded = encode_weights(translator.model.state_dict(), check_store(store))
    state = decode_weights("the model", weight_names(set(encoded)), encoded.__getitem__)
    translator.model.load_state_dict(state)
    return translator


def stored_as(path: str | Path) -> str:
    """How the checkpoint at ``path`` keeps its weights: ``"fp32"``, ``"fp16"`` or ``"int8"``."""
    try:
        with safe_open(str(path), framework="pt") as f:
            codes = {n: f.get_slice(n).get_dtype() for n in f.keys() if not is_history_tensor(n)}  # noqa: SIM118
    except (SafetensorError, OSError) as e:
        raise CheckpointError(f"{Path(path).name} is not a readable safetensors file: {e}") from e
    return store_of({n: c for n, c in codes.items() if n in weight_names(set(codes))})


_INIT_OPS = frozenset(
    [getattr(torch.nn.init, name) for name in dir(torch.nn.init) if name.endswith("_") and not name.startswith("_")]
    + [torch.Tensor.normal_, torch.Tensor.uniform_, torch.Tensor.zero_, torch.Tensor.fill_]
)  # torch.nn.init's functions (what modules call) and the tensor methods they end in


class _NoInit(TorchFunctionMode):
    """Skips the in-place initialisation of new parameters: meta tensors hold no values, and torch
    runs those ops on them through Python decompositions that are slow to import."""

    def __torch_function__(
        self,
        func: Callable[..., object],
        types: tuple[type, ...],
        args: tuple[object, ...] = (),
        kwargs: dict[str, object] | None = None,
    ) -> object:
        if func in _INIT_OPS:
            return args[0] if args else (kwargs or {}).get("tensor")
        return func(*args, **(kwargs or {}))


def _meta_model(cfg: ModelConfig) -> Seq2Seq:
    """The model of ``cfg`` on the meta device, built without initialisation: no memory, no random draws."""
    with torch.device("meta"), _NoInit():
        return Seq2Seq(cfg)


def _expected_shapes(model: Seq2Seq) -> dict[str, list[int]]:
    """The weight shapes a model needs (of :func:`_meta_model`: no memory allocated)."""
    return {name: list(t.shape) for name, t in model.state_dict().items()}
