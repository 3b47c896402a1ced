"""Hugging Face encoder-decoder models (MarianMT, T5, BART, mBART, NLLB, M2M100) read from a local
folder, offline: nothing is fetched from a hub and no code from the folder runs.

:func:`load_hf` checks the folder (a ``config.json`` of a text encoder-decoder, weights as
safetensors, a tokenizer) and loads it with ``transformers`` (an optional extra:
``pip install -e '.[hf]'``) in float32 with ``local_files_only=True``, ``trust_remote_code=False`` and the eager
attention that returns its weights. :meth:`HFModel.translate` decodes (greedy or beam, through
``model.generate``) and :meth:`HFModel.force` goes through a given reference; both then run the
model once over the whole target with ``output_attentions=True`` and keep every layer's and head's
cross-attention (:class:`attnviz.external.trace.CrossAttention`), which becomes the ``Alignment``
every attnviz view reads.
"""

from __future__ import annotations

import json
import math
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from attnviz.errors import CheckpointError, InputError, refuse_url
from attnviz.external.pieces import group_pieces, word_marker
from attnviz.external.trace import CrossAttention
from attnviz.store import MAX_DEPTH, too_deep

if TYPE_CHECKING:
    from types import ModuleType

    from transformers import BatchEncoding, PreTrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

MAX_SOURCE_CHARS = 2000
MAX_SOURCE_PIECES = 512
MAX_BEAM = 16
MAX_NEW_TOKENS = 512
MAX_CONFIG_BYTES = 2**20
FLOATS = {"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"}  # safetensors' names of weight types
MAX_UNSTORED = 10_000_000  # weights a config may describe beyond twice those stored (random-initialised ones)
PICKLES = ("pytorch_model.bin", "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack", "model.ckpt")


def _transformers() -> ModuleType:
    try:
        import transformers
    except ImportError:
        raise CheckpointError(
            "reading a Hugging Face folder needs the transformers package: pip install -e '.[hf]' "
            "(or pip install transformers sentencepiece)"
        ) from None
    return transformers


def check_folder(folder: str | Path, label: str | None = None) -> dict:
    """The folder's ``config.json`` as a dict, after the checks that need no ``transformers``: a
    folder, a config of a text encoder-decoder without custom code, weights as safetensors. Errors
    name the folder ``label`` (default: its path; the app passes what its user gave)."""
    refuse_url(str(folder), "a Hugging Face model folder")
    path = Path(folder).expanduser()
    config_name = f"config.json of {label}" if label else str(path / "config.json")
    label = label or str(path)
    if not path.is_dir():
        raise CheckpointError(f"{label} is not a folder; give the folder that holds config.json and model.safetensors")
    config_file = path / "config.json"
    if not config_file.is_file():
        raise CheckpointError(
            f"{label} holds no config.json, so it is not a Hugging Face model folder; save one with "
            "model.save_pretrained(folder) and tokenizer.save_pretrained(folder)"
        )
    deep = False
    try:
        with config_file.open("rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise CheckpointError(f"{config_name} is over {MAX_CONFIG_BYTES // 2**20} MB; it is not a model config")
        config = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{config_name} is not valid JSON ({e})") from None
    except RecursionError:  # deeper than the parser goes
        deep = True
    if deep or too_deep(config):
        raise CheckpointError(
            f"{config_name} nests more than {MAX_DEPTH} levels; it is not a transformers model config"
        )
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str):
        raise CheckpointError(f"{config_name} names no model_type; it is not a transformers model config")
    if config.get("auto_map"):
        raise CheckpointError(
            f"{config_name} asks for the model's own Python code (auto_map); attnviz runs no code from a model "
            "folder: use a model whose architecture transformers ships"
        )
    if not config.get("is_encoder_decoder", False):
        raise CheckpointError(
            f"{label} holds a {config['model_type']} model, which is not an encoder-decoder; attnviz shows the "
            "cross-attention of translation models (Marian, T5, BART, mBART, NLLB, M2M100)"
        )
    if not any(path.glob("*.safetensors")):
        pickled = [name for name in PICKLES if (path / name).exists()]
        what = f"only {', '.join(pickled)} (pickled weights, which can run code when read)" if pickled else "no weights"
        raise CheckpointError(
            f"{label} holds {what}; attnviz reads model.safetensors only: convert it where you trust the file with "
            "AutoModelForSeq2SeqLM.from_pretrained(folder).save_pretrained(folder, safe_serialization=True)"
        )
    return config


@dataclass
class Info:
    """What a loaded model is, for a caption and the layer and head pickers."""

    name: str
    model_type: str
    layers: int  # decoder layers
    heads: int  # cross-attention heads per decoder layer
    parameters: int
    vocab_size: int
    marker: str | None  # the tokenizer's word-boundary marker (attnviz.external.pieces.MARKERS)


class HFModel:
    """A loaded encoder-decoder and its tokenizer. Read-only after loading: one may serve several threads
    (the tokenizer's language settings, the only state a call changes, are set under a lock)."""

    def __init__(
        self, folder: Path, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, label: str | None = None
    ) -> None:
        self.folder, self.model, self.tokenizer = folder, model, tokenizer
        self.label = label or str(folder)  # how errors name the folder
        cfg = model.config
        layers = _first(cfg, "decoder_layers", "num_decoder_layers", "num_layers", "num_hidden_layers")
        heads = _first(cfg, "decoder_attention_heads", "num_heads", "num_attention_heads")
        vocab = list(tokenizer.get_vocab())
        self.info = Info(
            folder.name,
            cfg.model_type,
            int(layers),
            int(heads),
            sum(p.numel() for p in model.parameters()),
            len(vocab),
            word_marker(vocab),
        )
        codes = getattr(tokenizer, "lang_code_to_id", None) or {}  # M2M100's language tokens are not "special"
        added = getattr(tokenizer, "added_tokens_decoder", None) or {}
        special = set(tokenizer.all_special_ids) | {cfg.pad_token_id, cfg.decoder_start_token_id}
        special |= {i for i in codes.values() if isinstance(i, int)} | {i for i, t in added.items() if t.special}
        self._special = special - {None, tokenizer.unk_token_id}  # <unk> stands for a word: it stays
        eos = model.generation_config.eos_token_id
        self._eos = (set(eos if isinstance(eos, list) else [eos]) | {tokenizer.eos_token_id}) - {None}
        self._lock = threading.Lock()
        # the tokenizer's own languages: a call without a language uses these, never the last call's
        self._default_langs = {a: getattr(tokenizer, a) for a in ("src_lang", "tgt_lang") if hasattr(tokenizer, a)}

    def languages(self) -> list[str]:
        """The language codes the tokenizer knows (NLLB ``eng_Latn``, mBART ``en_XX``, M2M100 ``__en__``), if any."""
        codes = getattr(self.tokenizer, "lang_code_to_id", None) or {}
        if not codes:
            extra = getattr(self.tokenizer, "additional_special_tokens", None) or []
            codes = {t: None for t in extra if (t.startswith("__") and t.endswith("__")) or "_" in t.strip("_")}
        return sorted(codes)

    def _language_id(self, code: str) -> int:
        for token in (code, f"__{code}__"):
            ids = self.tokenizer.convert_tokens_to_ids([token])
            if ids and ids[0] is not None and ids[0] != self.tokenizer.unk_token_id:
                return int(ids[0])
        raise InputError(
            f"{code!r} is not a language code of this tokenizer; choose one of {', '.join(self.languages())}"
        )

    def _encode(
        self, text: str, reference: str | None, source_lang: str | None, target_lang: str | None
    ) -> tuple[BatchEncoding, torch.Tensor | None]:
        text = text.strip()
        if not text:
            raise InputError("the source text is empty; type a sentence to translate")
        if len(text) > MAX_SOURCE_CHARS:
            raise InputError(f"the source text has {len(text)} characters; the limit is {MAX_SOURCE_CHARS}")
        with self._lock:
            for attr, code in (("src_lang", source_lang), ("tgt_lang", target_lang)):
                if attr not in self._default_langs:
                    continue
                if code:
                    self._language_id(code)  # checked before the tokenizer is changed: a refused code leaves no trace
                setattr(self.tokenizer, attr, code or self._default_langs[attr])
            enc = self.tokenizer(text, return_tensors="pt", truncation=False)
            labels = None
            if reference is not None:
                labels = self.tokenizer(text_target=reference.strip(), return_tensors="pt").input_ids  # [1, tgt]
        if enc.input_ids.shape[1] > MAX_SOURCE_PIECES:
            raise InputError(f"the source is {enc.input_ids.shape[1]} pieces long; the limit is {MAX_SOURCE_PIECES}")
        return enc, labels

    @torch.inference_mode()
    def translate(
        self,
        text: str,
        beam_size: int = 1,
        max_new_tokens: int | None = None,
        source_lang: str | None = None,
        target_lang: str | None = None,
        *,
        beam: int | None = None,
    ) -> CrossAttention:
        """``text`` translated greedily (``beam_size=1``) or by beam search; with ``beam_size > 1`` the n-best
        list, best first, is in :attr:`CrossAttention.hypotheses`. ``target_lang`` (a language code) is forced
        as the first target token, as multilingual models (NLLB, mBART-50, M2M100) need. ``beam`` is the old
        name of ``beam_size`` (:meth:`attnviz.Translator.translate`'s): it still works, with a warning."""
        if beam is not None:
            warnings.warn(
                "HFModel.translate: write beam_size= (beam= is its old name)", DeprecationWarning, stacklevel=2
            )
            beam_size = beam
        if not 1 <= beam_size <= MAX_BEAM:
            raise InputError(f"the beam size must be between 1 and {MAX_BEAM}, got {beam_size}")
        enc, _ = self._encode(text, None, source_lang, target_lang)
        n_src = enc.input_ids.shape[1]
        limit = max_new_tokens or min(MAX_NEW_TOKENS, 2 * n_src + 10)
        if not 1 <= limit <= MAX_NEW_TOKENS:
            raise InputError(f"max_new_tokens must be between 1 and {MAX_NEW_TOKENS}, got {limit}")
        options = {
            "max_new_tokens": limit,
            "num_beams": beam_size,
            "num_return_sequences": beam_size,
            "do_sample": False,
        }
        if target_lang:
            options["forced_bos_token_id"] = self._language_id(target_lang)
        try:
            out = self.model.generate(**enc, **options, return_dict_in_generate=True)  # sequences [beam, 1 + new]
        except (ValueError, TypeError, KeyError) as e:  # the folder's generation_config.json or config.json
            raise CheckpointError(
                f"{self.label}: the model's generation settings do not work ({_short(e, self.folder, self.label)})"
            ) from None
        hyps = [self._trace(enc, self._labels(seq), source_lang) for seq in out.sequences]
        best = hyps[0]
        best.hypotheses = hyps if beam_size > 1 else []
        return best

    @torch.inference_mode()
    def force(
        self, text: str, reference: str, source_lang: str | None = None, target_lang: str | None = None
    ) -> CrossAttention:
        """The decoder forced through ``reference`` (tokenized as the model's training targets): its
        attention while producing each reference token, and each token's log-probability."""
        if not reference.strip():
            raise InputError("the reference is empty; type the translation to align on")
        enc, labels = self._encode(text, reference, source_lang, target_lang)
        return self._trace(enc, labels, source_lang)

    def _labels(self, sequence: torch.Tensor) -> torch.Tensor:
        """A generated sequence without its start token and without padding after ``</s>``: ``[1, tgt]``."""
        ids = sequence[1:].tolist()
        end = next((k + 1 for k, i in enumerate(ids) if i in self._eos), len(ids))
        return torch.tensor([ids[:end]])

    def _trace(self, enc: BatchEncoding, labels: torch.Tensor, source_lang: str | None) -> CrossAttention:
        """One forward pass over ``labels`` with every attention returned, as a :class:`CrossAttention`."""
        out = self.model(**enc, labels=labels, output_attentions=True, output_hidden_states=True)
        cross = torch.stack(out.cross_attentions)[:, 0]  # [layers, heads, tgt, src]
        encoder = torch.stack(out.encoder_attentions)[:, 0]  # [enc_layers, enc_heads, src, src]
        log_probs = out.logits[0].float().log_softmax(-1).gather(-1, labels[0, :, None])[:, 0]  # [tgt]
        src_ids, tgt_ids = enc.input_ids[0].tolist(), labels[0].tolist()
        src_pieces, tgt_pieces = self._pieces(src_ids), self._pieces(tgt_ids)
        text_of = self._piece_text
        source = group_pieces(src_pieces, [i in self._special for i in src_ids], self.info.marker, "source", text_of)
        tgt_special = [i in self._special for i in tgt_ids]
        ends = [k for k, i in enumerate(tgt_ids) if i in self._eos and all(tgt_special[k:])]  # </s>, specials after
        target = group_pieces(tgt_pieces, tgt_special, self.info.marker, "target", text_of, ends[0] if ends else None)
        unk = self.tokenizer.unk_token_id
        return CrossAttention(
            source=source,
            target=target,
            source_pieces=src_pieces,
            target_pieces=tgt_pieces,
            attention=cross.float().numpy(),
            encoder_attention=encoder.float().numpy(),
            encoder_states=out.encoder_last_hidden_state[0].float().numpy(),  # [src, d_model]
            decoder_states=out.decoder_hidden_states[-1][0].float().numpy(),  # [tgt, d_model]
            token_log_probs=log_probs.numpy().astype(np.float64),
            source_unknown=[i == unk for i in src_ids],
            model_type=self.info.model_type,
            text=self.tokenizer.decode(tgt_ids, skip_special_tokens=True),
        )

    def _pieces(self, ids: list[int]) -> list[str]:
        """The tokenizer's pieces of ``ids``; an id past its vocabulary (a config padded beyond the
        tokenizer, as T5's and mBART's are) as ``<id N>``."""
        pieces = self.tokenizer.convert_ids_to_tokens(ids)
        return [f"<id {i}>" if piece is None else piece for i, piece in zip(ids, pieces, strict=True)]

    def _piece_text(self, piece: str) -> str:
        """The text of byte-level pieces written together (``Ã©`` -> ``é``)."""
        return self.tokenizer.convert_tokens_to_string([piece])


def load_hf(folder: str | Path, device: str = "cpu", label: str | None = None) -> HFModel:
    """The encoder-decoder in ``folder`` with its tokenizer, read offline from safetensors; one
    :class:`~attnviz.errors.CheckpointError` that says what to do for a folder that is not one,
    naming the folder ``label`` (default: its path; the app passes what its user gave, so that a
    browser is shown no path of the server)."""
    config = check_folder(folder, label)
    path = Path(folder).expanduser().resolve()
    transformers = _transformers()
    transformers.logging.set_verbosity_error()  # attnviz reports what matters itself, in one line
    transformers.logging.disable_progress_bar()
    local = {"local_files_only": True, "trust_remote_code": False}
    _check_sizes(transformers, path, config, local, label)
    label = label or str(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. Marian's "Recommended: pip install sacremoses"
            tokenizer = transformers.AutoTokenizer.from_pretrained(path, **local)
    except MemoryError:
        raise
    except Exception as e:  # an untrusted folder: whatever transformers raises is the folder's fault
        raise CheckpointError(
            f"{label}: the tokenizer could not be read ({_short(e, path, label)}); save it into the folder with "
            "tokenizer.save_pretrained(folder)"
        ) from None
    try:
        model = transformers.AutoModelForSeq2SeqLM.from_pretrained(
            path, **local, use_safetensors=True, attn_implementation="eager", dtype=torch.float32
        )
    except MemoryError:
        raise
    except Exception as e:  # as above
        raise CheckpointError(
            f"{label}: a {config['model_type']} model that transformers cannot load as a text encoder-decoder "
            f"({_short(e, path, label)})"
        ) from None
    return HFModel(path, model.to(device).eval(), tokenizer, label)


def _stored_values(path: Path, label: str | None) -> int:
    """How many weights the folder's safetensors files hold, from their headers (nothing else is read):
    floating-point tensors only, so that bytes stored as integers count for no weights."""
    from safetensors import SafetensorError, safe_open

    total = 0
    for file in sorted(path.glob("*.safetensors")):
        try:
            with safe_open(file, "pt") as f:
                slices = [f.get_slice(k) for k in f.keys()]  # noqa: SIM118
                total += sum(math.prod(x.get_shape()) for x in slices if x.get_dtype() in FLOATS)
        except (SafetensorError, OSError) as e:
            raise CheckpointError(
                f"{f'{file.name} of {label}' if label else file}: not a safetensors file ({_short(e, path, label)}); "
                "save the model again"
            ) from None
    return total


def _check_sizes(transformers: ModuleType, path: Path, config: dict, local: dict, label: str | None) -> None:
    """Refuse a config that describes more weights than the folder holds: transformers would fill the
    missing ones with random values, so a small edited config could make it allocate any amount of memory.
    The model is built on the meta device (no memory) to count its parameters."""
    stored = _stored_values(path, label)
    label = label or str(path)
    try:
        cfg = transformers.AutoConfig.from_pretrained(path, **local)
        with torch.device("meta"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            described = sum(p.numel() for p in transformers.AutoModelForSeq2SeqLM.from_config(cfg).parameters())
    except MemoryError:
        raise
    except Exception as e:  # an untrusted config: whatever transformers raises is its fault
        raise CheckpointError(
            f"{label}: a {config['model_type']} config that transformers cannot build as a text encoder-decoder "
            f"({_short(e, path, label)})"
        ) from None
    if described > 2 * stored + MAX_UNSTORED:  # sinusoidal positions and tied weights are not stored
        raise CheckpointError(
            f"{label}: config.json describes {described:,} weights but the safetensors files hold {stored:,}; give "
            "the config.json saved with these weights"
        )


def _first(config: PreTrainedConfig, *names: str) -> int:
    """The first of ``names`` the config sets (architectures name their sizes differently)."""
    return next((int(v) for v in (getattr(config, n, None) for n in names) if v), 0)


def _short(e: BaseException, path: Path | None = None, label: str | None = None) -> str:
    """``e`` in one short line, the folder's ``path`` written as its ``label``."""
    text = " ".join(str(e).split())
    if path is not None and label:
        text = text.replace(str(path), label)
    return text[:300] + ("…" if len(text) > 300 else "")
