"""JoeyNMT 2.x recurrent models (config YAML, vocabulary files, ``.ckpt``) as attnviz models.

JoeyNMT's recurrent decoder is Luong-shaped whatever its ``attention``: the RNN steps first, the
new top state ``h_t`` queries attention (``bahdanau``: attnviz's ``additive`` score, ``luong``:
``general``), the attention vector ``h~_t = tanh(W [h_t; c_t] + b)`` feeds the output layer (no
bias) and, with input feeding, the next RNN input. Its bridge ``tanh(W [fwd; bwd] + b)`` starts
every decoder layer from the same state, and an LSTM's cell from that state too. attnviz's
Luong decoder does the same with ``attentional_bias`` and ``lstm_cell_init="bridge"``; the
bridge is tiled per layer, ``[h_t; c_t]`` reordered to attnviz's ``[c_t; h_t]``, scaled
embeddings folded into the table, and the vocabularies reordered to attnviz's special ids. The
attention of the imported model equals JoeyNMT's on the same tokens (tests/unit/external).

The checkpoint is read with ``torch.load(weights_only=True)``: a pickle that needs code is refused.
Imported: recurrent encoder (bidirectional, as JoeyNMT 2.3 requires) and decoder, GRU or LSTM, word
or character level. Refused with a message: Transformers, subword levels (their tokenizers are not
attnviz's), ``init_hidden: last``, activations other than tanh, sizes attnviz ties (encoder and
decoder hidden size, source and target embedding size) that differ.
"""

from __future__ import annotations

import io
import pickle
import re
import tempfile
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import TypeVar

import torch
import yaml

from attnviz.data import EOS, UNK, Tokenizer, Vocab
from attnviz.decoding import Translator
from attnviz.errors import CheckpointError
from attnviz.external.joeynmt_types import check_types
from attnviz.external.joeynmt_weights import SOURCES, convert_weights
from attnviz.model import ModelConfig, build_model
from attnviz.store import SUFFIX, save

MAX_CKPT_BYTES = 500 * 2**20
MAX_TEXT_BYTES = 20 * 2**20  # a config or a vocabulary file
_JOEY_SPECIALS = (("unk", "<unk>", 0), ("pad", "<pad>", 1), ("bos", "<s>", 2), ("eos", "</s>", 3))
_ATTNVIZ_SPECIAL = {"unk": UNK, "pad": "<pad>", "bos": "<bos>", "eos": EOS}
_SPACE_ESCAPE = "▁"  # JoeyNMT's character level writes a space as this


def read_config(text: str, name: str = "config") -> dict:
    """The ``model`` and ``data`` sections of a JoeyNMT YAML config (``yaml.safe_load``: no tags run)."""
    try:
        cfg = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise CheckpointError(f"{name}: not valid YAML ({' '.join(str(e).split())[:160]})") from None
    except RecursionError:
        raise CheckpointError(f"{name}: nested too deeply to be a JoeyNMT config") from None
    if not isinstance(cfg, dict) or not isinstance(cfg.get("model"), dict):
        raise CheckpointError(f"{name}: not a JoeyNMT config (no 'model' section); give the config.yaml of the model")
    for side in ("encoder", "decoder"):
        if not isinstance(cfg["model"].get(side), dict):
            raise CheckpointError(f"{name}: model.{side} is missing; give the config.yaml the model was trained with")
    check_types(cfg, name)
    return cfg


def read_state(data: bytes, name: str = "checkpoint") -> dict[str, torch.Tensor]:
    """The ``model_state`` of a JoeyNMT ``.ckpt``, loaded without running pickled code."""
    if len(data) > MAX_CKPT_BYTES:
        raise CheckpointError(f"{name}: over the {MAX_CKPT_BYTES // 2**20} MB limit of a checkpoint here")
    try:
        with warnings.catch_warnings():  # torch's notes on an old pickle protocol: the error below says enough
            warnings.simplefilter("ignore")
            ckpt = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        if re.search(r"Unsupported operand|invalid load key", str(e)):  # not a pickle at all
            raise CheckpointError(
                f"{name}: not a checkpoint torch.load can read; give the .ckpt JoeyNMT saved"
            ) from None
        found = re.search(r"GLOBAL ([\w.]+)", str(e))
        what = f"it holds an object of type {found.group(1)}" if found else "it holds objects other than tensors"
        raise CheckpointError(
            f"{name}: refused: {what}, and loading it would run code from the file; attnviz reads only tensors, "
            "numbers and strings (torch.load(weights_only=True)). Re-save it as {'model_state': model.state_dict()}"
        ) from None
    except (RuntimeError, EOFError, ValueError, OSError):
        raise CheckpointError(f"{name}: not a checkpoint torch.load can read; give the .ckpt JoeyNMT saved") from None
    state = ckpt.get("model_state", ckpt) if isinstance(ckpt, dict) else None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"{name}: no model_state of tensors; give the .ckpt JoeyNMT saved (best.ckpt)")
    for key, value in state.items():
        if not value.is_floating_point() or not torch.isfinite(value).all():
            what = "is not floating point" if not value.is_floating_point() else "holds NaN or infinite values"
            raise CheckpointError(f"{name}: {key} {what}; give a checkpoint of a trained model")
    return state


def _specials(data_cfg: dict) -> dict[str, tuple[str, int]]:
    special = data_cfg.get("special_symbols") or {}
    return {k: (special.get(f"{k}_token", tok), special.get(f"{k}_id", i)) for k, tok, i in _JOEY_SPECIALS}


def joey_vocab(lines: list[str], data_cfg: dict) -> list[str]:
    """JoeyNMT's id order: the special tokens at their ids, then the file's tokens (as ``Vocabulary``)."""
    specials = _specials(data_cfg)
    extra = list((data_cfg.get("special_symbols") or {}).get("lang_tags") or [])
    itos: list[str] = []
    first = [specials[k][0] for k in ("unk", "pad", "bos", "eos")]  # JoeyNMT's Vocabulary adds them in this order
    for tok in [*first, *extra, *(line.rstrip("\r\n") for line in lines)]:
        if tok and tok not in itos:
            itos.append(tok)
    for key, (tok, i) in specials.items():
        if i >= len(itos) or itos[i] != tok:
            raise CheckpointError(
                f"the vocabulary does not put {tok!r} at id {i} as the config's {key}_id says: give the vocabulary "
                "file the model was trained with"
            )
    return itos


def _permutation(itos: list[str], data_cfg: dict, level: str) -> tuple[list[str], torch.Tensor]:
    """attnviz's vocabulary and, for each of its ids, the JoeyNMT id it comes from."""
    specials = _specials(data_cfg)
    special_ids = {i: _ATTNVIZ_SPECIAL[k] for k, (_, i) in specials.items()}
    order = [specials[k][1] for k in ("pad", "unk", "bos", "eos")]  # attnviz ids 0..3
    tokens = [special_ids[i] for i in order]
    for i, tok in enumerate(itos):
        if i not in special_ids:
            order.append(i)
            tokens.append(" " if level == "char" and tok == _SPACE_ESCAPE else tok)
    Vocab(tokens)  # a token spelled like one of attnviz's specials: refused here, with the reason
    return tokens, torch.tensor(order)


_Value = TypeVar("_Value")


def _get(
    cfg: dict, key: str, default: _Value, allowed: tuple[_Value, ...] | None = None, where: str = "model"
) -> _Value:
    value = cfg.get(key, default)
    if allowed is not None and value not in allowed:
        raise CheckpointError(f"{where}.{key} is {value!r}; attnviz imports JoeyNMT models with {key} in {allowed}")
    return value


_JOEY_KEYS = {  # an attnviz ModelConfig size -> the JoeyNMT config.yaml key model_config reads it from
    "emb_dim": "model.encoder.embeddings.embedding_dim",
    "hidden_dim": "model.decoder.hidden_size",
    "attn_dim": "model.decoder.hidden_size",
    "enc_layers": "model.encoder.num_layers",
    "dec_layers": "model.decoder.num_layers",
}


def model_config(cfg: dict) -> ModelConfig:
    """The attnviz :class:`ModelConfig` of a JoeyNMT recurrent model, or a message saying what does not fit."""
    enc, dec = cfg["model"]["encoder"], cfg["model"]["decoder"]
    _get(enc, "type", "recurrent", ("recurrent",), "model.encoder")
    _get(dec, "type", "transformer", ("recurrent",), "model.decoder")
    _get(enc, "bidirectional", True, (True,), "model.encoder")
    _get(dec, "init_hidden", "bridge", ("bridge", "zero"), "model.decoder")
    _get(dec, "activation", "tanh", ("tanh",), "model.decoder")
    enc_emb = (enc.get("embeddings") or {}).get("embedding_dim")
    dec_emb = (dec.get("embeddings") or {}).get("embedding_dim")
    for side, size, key in (
        ("encoder", enc_emb, "embeddings.embedding_dim"),
        ("decoder", dec.get("hidden_size"), "hidden_size"),
    ):
        if size is None:
            raise CheckpointError(f"model.{side}.{key} is missing; give the config.yaml the model was trained with")
    if enc_emb != dec_emb or enc.get("hidden_size") != dec.get("hidden_size"):
        raise CheckpointError(
            f"encoder and decoder sizes differ (embeddings {enc_emb} and {dec_emb}, hidden {enc.get('hidden_size')} "
            f"and {dec.get('hidden_size')}); attnviz models share one embedding size and one hidden size"
        )
    for side in ("src", "trg"):
        _get(cfg.get("data", {}).get(side, {}), "level", "word", ("word", "char"), f"data.{side}")
    style = _get(dec, "attention", "bahdanau", ("bahdanau", "luong"), "model.decoder")
    try:
        return ModelConfig(
            src_vocab_size=4,
            tgt_vocab_size=4,
            score="additive" if style == "bahdanau" else "general",
            style="luong",  # JoeyNMT attends with the new state h_t, whatever its attention is called
            encoder=_get(enc, "rnn_type", "gru", ("gru", "lstm"), "model.encoder"),
            cell=_get(dec, "rnn_type", "gru", ("gru", "lstm"), "model.decoder"),
            emb_dim=enc_emb,
            hidden_dim=dec["hidden_size"],
            attn_dim=dec["hidden_size"],
            enc_layers=enc.get("num_layers", 1),
            dec_layers=dec.get("num_layers", 1),
            dropout=0.0,
            input_feeding=bool(dec.get("input_feeding", True)),
            attentional_bias=True,
            lstm_cell_init="bridge",
            tie_embeddings=False,
        )
    except (TypeError, ValueError) as e:  # named by the config.yaml key the value came from, not attnviz's field
        field, _, rest = str(e).partition(" ")
        said = f"{_JOEY_KEYS[field]} {rest}" if field in _JOEY_KEYS else str(e)
        raise CheckpointError(f"the config's model sizes do not fit attnviz: {said}") from None


def import_joeynmt(
    config_text: str,
    src_vocab_lines: list[str],
    trg_vocab_lines: list[str],
    ckpt: bytes,
    name: str = "joeynmt",
    ckpt_name: str = "checkpoint",
) -> Translator:
    """An attnviz :class:`Translator` from a JoeyNMT config's text, its two vocabulary files' lines and the
    ``.ckpt``'s bytes. Every mismatch raises :class:`CheckpointError` naming it."""
    cfg = read_config(config_text)
    acfg = model_config(cfg)
    state = read_state(ckpt, ckpt_name)
    data = cfg.get("data") or {}
    levels = {side: (data.get(side) or {}).get("level", "word") for side in ("src", "trg")}
    vocabs = []
    for side, lines, key in (("src", src_vocab_lines, "src_embed"), ("trg", trg_vocab_lines, "trg_embed")):
        itos = joey_vocab(lines, data)
        rows = state.get(f"{key}.lut.weight")
        if rows is not None and rows.shape[0] != len(itos):
            raise CheckpointError(
                f"the {side} vocabulary has {len(itos)} tokens (specials included) but the checkpoint's {key} has "
                f"{rows.shape[0]} rows; give the vocabulary file the model was trained with"
            )
        vocabs.append(_permutation(itos, data, levels[side]))
    (src_tokens, src_order), (tgt_tokens, tgt_order) = vocabs
    fields = {**acfg.to_dict(), "src_vocab_size": len(src_tokens), "tgt_vocab_size": len(tgt_tokens)}
    longest = max(int((data.get("src") or {}).get("max_length", 0) or 0) + 1, 100)
    acfg = ModelConfig(**{**fields, "max_src_len": min(longest, 2000)})
    model = build_model(acfg)
    weights = convert_weights(cfg, state, src_order, tgt_order, acfg)
    expected = model.state_dict()
    for key, value in weights.items():
        if key not in expected or expected[key].shape != value.shape:
            need = " × ".join(map(str, expected[key].shape)) if key in expected else "no such weight"
            raise CheckpointError(
                f"the checkpoint's {SOURCES.get(key, key)} does not fit the model its config describes: converted "
                f"to attnviz's {key} it is {' × '.join(map(str, value.shape))}, where that model needs {need}; "
                "give the config the model was trained with"
            )
    model.load_state_dict(weights, strict=True)
    tokenizers = [
        Tokenizer(kind=levels[side], lowercase=bool((data.get(side) or {}).get("lowercase", False)))
        for side in ("src", "trg")
    ]
    meta = {
        "name": name,
        "imported_from": "JoeyNMT",
        "joeynmt_attention": cfg["model"]["decoder"].get("attention", "bahdanau"),
        "languages": [str((data.get(side) or {}).get("lang", "")) for side in ("src", "trg")],
        "parameters": model.num_parameters(),
    }
    return Translator(model, Vocab(src_tokens), Vocab(tgt_tokens), *tokenizers, meta=meta)


def _read_text(path: Path, what: str) -> list[str]:
    if not path.is_file():
        raise CheckpointError(f"{path}: no {what} there; give its path")
    with path.open("rb") as f:
        data = f.read(MAX_TEXT_BYTES + 1)
    if len(data) > MAX_TEXT_BYTES:
        raise CheckpointError(f"{path}: over the {MAX_TEXT_BYTES // 2**20} MB limit of a {what}")
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise CheckpointError(f"{path}: the {what} is not UTF-8 text") from None


def import_joeynmt_files(
    config: str | Path,
    ckpt: str | Path | None = None,
    src_vocab: str | Path | None = None,
    trg_vocab: str | Path | None = None,
) -> Translator:
    """:func:`import_joeynmt` from files on disk. ``config`` may be the model folder (its ``config.yaml``);
    missing paths are found as JoeyNMT finds them: ``best.ckpt`` and ``src_vocab.txt`` / ``trg_vocab.txt`` in
    the folder of the config (or its ``model_dir``), or the config's ``voc_file``."""
    config = Path(config)
    if config.is_dir():
        if not (config / "config.yaml").is_file():
            raise CheckpointError(f"{config} is not a JoeyNMT model folder (no config.yaml); give the config's path")
        config = config / "config.yaml"
    text = "\n".join(_read_text(config, "JoeyNMT config"))
    cfg = read_config(text, str(config))
    model_config(cfg)  # what does not fit attnviz is said before any other file is looked for
    folders = [config.parent]
    if cfg.get("model_dir"):
        folders.append(config.parent / str(cfg["model_dir"]))

    def find(given: str | Path | None, names: list[str], what: str) -> Path:
        if given is not None:
            return Path(given)
        for folder in folders:
            for n in names:
                if n and (folder / n).is_file():
                    return folder / n
        raise CheckpointError(f"no {what} next to {config} ({', '.join(n for n in names if n)}); give its path")

    data = cfg.get("data") or {}
    vocab_paths = [
        find(v, [str((data.get(side) or {}).get("voc_file") or ""), f"{side}_vocab.txt"], f"{side} vocabulary")
        for v, side in ((src_vocab, "src"), (trg_vocab, "trg"))
    ]
    ckpt_path = find(ckpt, ["best.ckpt", "latest.ckpt"], "checkpoint")
    if not ckpt_path.is_file():
        raise CheckpointError(f"{ckpt_path}: no checkpoint there; give the .ckpt JoeyNMT saved")
    if ckpt_path.stat().st_size > MAX_CKPT_BYTES:
        raise CheckpointError(f"{ckpt_path}: over the {MAX_CKPT_BYTES // 2**20} MB limit of a checkpoint here")
    return import_joeynmt(
        text,
        _read_text(vocab_paths[0], "vocabulary"),
        _read_text(vocab_paths[1], "vocabulary"),
        ckpt_path.read_bytes(),
        config.parent.name,
        str(ckpt_path),
    )


def import_joeynmt_zip(data: bytes, name: str = "model.zip") -> Translator:
    """:func:`import_joeynmt` from a zip of a JoeyNMT model folder (``config.yaml``, ``src_vocab.txt``,
    ``trg_vocab.txt``, ``best.ckpt`` or another ``.ckpt``, at any depth), read in memory; sizes checked
    before anything is decompressed."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = [i for i in archive.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError):
        raise CheckpointError(f"{name}: not a zip archive; zip the JoeyNMT model folder") from None
    if sum(i.file_size for i in infos) > MAX_CKPT_BYTES + 3 * MAX_TEXT_BYTES:
        raise CheckpointError(f"{name}: its files unpack to more than {MAX_CKPT_BYTES // 2**20} MB; zip only one model")

    def member(*names: str, suffix: str | None = None) -> bytes:
        found = [i for i in infos if Path(i.filename).name in names or (suffix and i.filename.endswith(suffix))]
        found.sort(key=lambda i: (Path(i.filename).name not in names, i.filename))
        if not found:
            raise CheckpointError(f"{name}: no {' or '.join(names)} inside; zip the JoeyNMT model folder")
        try:
            return archive.read(found[0])
        except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError, zlib.error) as e:
            raise CheckpointError(
                f"{name}: {found[0].filename} could not be unpacked ({e}); zip the folder again"
            ) from None

    def lines(raw: bytes, what: str) -> list[str]:
        try:
            return raw.decode("utf-8").splitlines()
        except UnicodeDecodeError:
            raise CheckpointError(f"{name}: the {what} is not UTF-8 text") from None

    text = "\n".join(lines(member("config.yaml"), "config"))
    cfg = read_config(text, f"{name}: config.yaml")
    model_config(cfg)
    src, trg = lines(member("src_vocab.txt"), "vocabulary"), lines(member("trg_vocab.txt"), "vocabulary")
    return import_joeynmt(text, src, trg, member("best.ckpt", suffix=".ckpt"), Path(name).stem, f"{name}: the .ckpt")


def checkpoint_bytes(translator: Translator) -> bytes:
    """The attnviz ``.safetensors`` checkpoint of ``translator``, as bytes (a download)."""
    with tempfile.TemporaryDirectory() as folder:
        return save(translator, Path(folder) / f"model{SUFFIX}").read_bytes()
