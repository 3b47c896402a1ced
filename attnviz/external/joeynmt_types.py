"""The types of the JoeyNMT config values the import reads besides the model sizes (which
:class:`attnviz.model.ModelConfig` checks): a config is untrusted input, so a list where a mapping
belongs or a word where a number belongs is named before anything reads it."""

from __future__ import annotations

from attnviz.errors import CheckpointError

_SPECIALS = ("unk", "pad", "bos", "eos")

# the config values the import reads besides the sizes (ModelConfig checks those): their types
_SECTIONS = (
    "data",
    "data.src",
    "data.trg",
    "data.special_symbols",
    "model.encoder.embeddings",
    "model.decoder.embeddings",
)
_VALUES = {
    "model_dir": str,
    "data.src.voc_file": str,
    "data.trg.voc_file": str,
    "data.src.lang": str,
    "data.trg.lang": str,
    "data.src.lowercase": bool,
    "data.trg.lowercase": bool,
    "data.src.max_length": int,
    "model.encoder.embeddings.scale": bool,
    "model.decoder.embeddings.scale": bool,
    "model.decoder.input_feeding": bool,
    "data.special_symbols.lang_tags": list,
    **{f"data.special_symbols.{k}_token": str for k in _SPECIALS},
    **{f"data.special_symbols.{k}_id": int for k in _SPECIALS},
}
_TYPE_NAMES = {
    str: "a string",
    bool: "true or false",
    int: "a whole number",
    list: "a list of strings",
    dict: "a mapping",
}


def _lookup(cfg: dict, dotted: str) -> object:
    value = cfg
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def check_types(cfg: dict, name: str) -> None:
    """Each value the import reads has the type JoeyNMT gives it (absent or null: the default)."""
    for dotted, kind in [*((d, dict) for d in _SECTIONS), *_VALUES.items()]:
        value = _lookup(cfg, dotted)
        good = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
        if kind is list and good:
            good = all(isinstance(v, str) for v in value)
        if value is not None and not good:
            raise CheckpointError(f"{name}: {dotted} is {value!r:.60}; it must be {_TYPE_NAMES[kind]}")
