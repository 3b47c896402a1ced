"""Recipes: everything needed to rebuild a model (data spec, vocabulary, model and training
settings), stored as JSON in ``pretrained/recipes/`` and inside every checkpoint."""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from safetensors import SafetensorError

from attnviz.data import Corpus, Link, load_corpus
from attnviz.decoding import Translator
from attnviz.errors import AttnvizWarning, CheckpointError, ConfigError, check_json_types
from attnviz.evaluation import evaluate
from attnviz.model import ModelConfig
from attnviz.store import STORES, as_stored, load_checkpoint, read_header, recipe_path, save
from attnviz.training.config import Progress, TrainConfig, TrainResult
from attnviz.training.distributed import SingleProcess
from attnviz.training.fit import build_translator, fit
from attnviz.training.guided_links import CACHE_DIR, LINKS_DIR, GuidedConfig, read_text_file, training_links
from attnviz.training.resume_state import check_epoch_size, drop_state, read_state, state_path, write_state

MAX_RECIPE_BYTES = 2**20  # a shipped recipe takes about 1 KB
_MODEL_KEYS = {f.name for f in fields(ModelConfig)} - {"src_vocab_size", "tgt_vocab_size"}
_TRAIN_KEYS = {f.name for f in fields(TrainConfig)} - {"guided_weight"}  # set by the recipe's guided field
_GUIDED_KEYS = {f.name for f in fields(GuidedConfig)}
_DATA_KEYS = {
    "n_train",
    "n_valid",
    "n_test",
    "seed",
    "min_len",
    "max_len",
    "lowercase",
    "target_lowercase",
    "dedupe",
    "subwords",
}


@dataclass
class Recipe:
    """How one model is made. ``model`` and ``train`` hold ModelConfig/TrainConfig fields;
    ``guided`` (empty: off) GuidedConfig fields, e.g. ``{"weight": 0.3, "links": "eflomal"}``."""

    name: str
    data: str  # a data spec, see attnviz.data.spec
    data_options: dict = field(default_factory=dict)
    min_freq: int = 1
    max_vocab: int | None = None
    model: dict = field(default_factory=dict)
    train: dict = field(default_factory=dict)
    eval_beam: int = 1
    eval_valid: bool = False  # also measure BLEU on the validation split (stored as metrics["valid"])
    store: str = "fp32"  # how the checkpoint keeps the weights: fp32, fp16 or int8 (attnviz.store.quantize)
    guided: dict = field(default_factory=dict)  # guided alignment training (attnviz.training.guided_links)

    def __post_init__(self) -> None:
        if "guided_weight" in self.train:
            raise ConfigError(
                f'recipe {self.name!r}: set the guided weight in the guided field, e.g. "guided": '
                '{"weight": 0.3, "links": "eflomal"}, not as train.guided_weight'
            )
        for label, given, allowed in (
            ("model", self.model, _MODEL_KEYS),
            ("train", self.train, _TRAIN_KEYS),
            ("data_options", self.data_options, _DATA_KEYS),
            ("guided", self.guided, _GUIDED_KEYS),
        ):
            unknown = sorted(set(given) - allowed)
            if unknown:
                raise ConfigError(
                    f"recipe {self.name!r}: unknown {label} settings {unknown}; allowed: {sorted(allowed)}"
                )
        data_types = {key: load_corpus.__annotations__[key] for key in _DATA_KEYS}
        check_json_types(self.data_options, data_types, owner="data_options.")
        self.guided_config()
        if self.store not in STORES:
            raise ConfigError(f"recipe {self.name!r}: unknown store {self.store!r}; choose one of {', '.join(STORES)}")

    def guided_config(self) -> GuidedConfig | None:
        """The guided training settings, or None when the recipe trains without guidance."""
        return GuidedConfig(**self.guided) if self.guided else None

    def to_dict(self) -> dict:
        """The recipe as JSON; one without guidance has no ``guided`` key, so it reads as before
        guidance existed (and unfinished trainings of older recipes still resume)."""
        data = asdict(self)
        if not self.guided:
            del data["guided"]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Recipe:
        """A recipe from its JSON object; an older recipe's ``"half": true`` reads as ``"store": "fp16"``."""
        data = dict(data)
        if "half" in data:
            half = data.pop("half")
            data.setdefault("store", "fp16" if half is True else "fp32")
        _check_fields(data)
        return cls(**data)

    @classmethod
    def from_file(cls, path: str | Path) -> Recipe:
        """A recipe from its JSON file (UTF-8, a byte-order mark allowed), at most :data:`MAX_RECIPE_BYTES`;
        a shipped model's name (``toy-fr-dot-luong``) where no such file is reads the recipe it was built from."""
        path = Path(path)
        shipped = recipe_path(path.stem) if path.parent == Path() and path.suffix in ("", ".json") else None
        if not path.exists() and shipped is not None and shipped.is_file():
            path = shipped
        advice = f"give a recipe's JSON file, such as {recipe_path('toy-fr-dot-luong')}, or a shipped model's name"
        text = read_text_file(path, MAX_RECIPE_BYTES, "recipe file", advice, ConfigError)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}: not a JSON recipe ({e})") from e
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: a recipe must be a JSON object")
        try:
            return cls.from_dict(data)
        except TypeError as e:
            raise ConfigError(f"{path}: {e}") from e


def _check_fields(data: dict) -> None:
    """Refuse a recipe object with an unknown field, without ``name`` or ``data``, or with a field of the
    wrong JSON type (by :class:`Recipe`'s own annotations), naming it, before the dataclass sees it."""
    types = {f.name: f.type for f in fields(Recipe)}
    unknown = sorted(set(data) - set(types))
    if unknown:
        raise ConfigError(f"unknown recipe fields {unknown}; a recipe has {', '.join(types)}")
    missing = [key for key in ("name", "data") if key not in data]
    if missing:
        raise ConfigError(f'a recipe needs {" and ".join(missing)}, e.g. "name": "my-model", "data": "toy-fr"')
    check_json_types(data, types, owner="recipe field ")


def unfinished(recipe: Recipe, out: str | Path) -> dict | None:
    """The saved progress of an interrupted training of ``recipe`` at ``out``, or None."""
    meta = _meta_of(out)  # missing or unreadable: start afresh (the save is atomic, so this is rare)
    if not meta.get("progress") or not _same_recipe(meta.get("recipe_full"), recipe):
        return None
    return meta["progress"]


def recipe_differences(out: str | Path, recipe: Recipe) -> str:
    """For a checkpoint at ``out`` holding an unfinished training of another recipe than ``recipe``: the
    settings that differ, ``train.epochs: 4 there, 6 asked; train.seed: 0 there, 3 asked``; ``""`` when it
    holds none."""
    meta = _meta_of(out)
    stored = meta.get("recipe_full")
    if not meta.get("progress") or not isinstance(stored, dict):
        return ""
    try:
        stored = Recipe.from_dict(stored).to_dict()
    except (ConfigError, TypeError, ValueError):
        return "a recipe this version cannot read"
    there, asked = _flat(stored), _flat(recipe.to_dict())
    found = [
        f"{key}: {_shown(there, key)} there, {_shown(asked, key)} asked"
        for key in sorted(set(there) | set(asked))
        if there.get(key, _ABSENT) != asked.get(key, _ABSENT)
    ]
    return "; ".join(found[:6]) + (f"; and {len(found) - 6} more" if len(found) > 6 else "")


_ABSENT = object()


def _flat(data: dict, prefix: str = "") -> dict:
    """``{"train": {"epochs": 4}}`` as ``{"train.epochs": 4}``."""
    flat = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _shown(flat: dict, key: str) -> str:
    """One setting of a :func:`_flat` recipe as a message shows it."""
    value = flat.get(key, _ABSENT)
    return "the default" if value is _ABSENT else json.dumps(value, ensure_ascii=False)[:40]


def _meta_of(out: str | Path) -> dict:
    """The meta of the checkpoint at ``out``; empty when there is none or it is unreadable."""
    try:
        return read_header(out).get("meta") or {}
    except CheckpointError:
        return {}


def _same_recipe(stored: object, recipe: Recipe) -> bool:
    """Whether a checkpoint's stored recipe is ``recipe``, the stored one read as a recipe is read today
    (an older version's fields converted: ``half`` is ``store``)."""
    if stored == recipe.to_dict():
        return True
    if not isinstance(stored, dict):
        return False
    try:
        return Recipe.from_dict(stored).to_dict() == recipe.to_dict()
    except (ConfigError, TypeError, ValueError):
        return False


def run_recipe(
    recipe: Recipe | str | Path,
    out: str | Path | None = None,
    callback: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    evaluate_split: str | None = "test",
    resume: bool = False,
    meta: dict | None = None,
    group: SingleProcess | None = None,
    eval_n: int | None = None,
    on_measure: Callable[[str, int, int], None] | None = None,
) -> Translator:
    """Load the data, build and train the model, measure it, and save it to ``out`` atomically. ``recipe`` is a
    :class:`Recipe`, a recipe's JSON file or a shipped model's name.

    With ``out`` the checkpoint is also written after every epoch, so a crash loses at most
    one epoch of work; ``resume=True`` continues such an unfinished checkpoint of the same
    recipe from its last saved epoch (see :func:`attnviz.training.fit.fit`). ``meta`` is stored in
    the checkpoint's meta from the first save on (e.g. ``{"owner": session_id}``). With a
    distributed ``group`` every rank trains, and rank 0 alone measures and saves.

    The model is measured on the first ``eval_n`` pairs of ``evaluate_split`` (all of them when
    None; 0 measures nothing); ``on_measure(split, n, of)`` hears of each split before it is
    measured (see :func:`measure`).
    """
    if not isinstance(recipe, Recipe):  # a recipe file, or a shipped model's name (Recipe.from_file)
        recipe = Recipe.from_file(recipe)
    guided = recipe.guided_config()
    train_cfg = TrainConfig(**recipe.train, guided_weight=guided.weight if guided else 0.0)
    train_cfg.hardware()  # no GPU or no bf16 here: say so before loading the data
    main = group is None or group.is_main
    progress = unfinished(recipe, out) if resume and out else None
    if resume and out and progress is None and _meta_of(out).get("progress"):  # never train afresh over saved epochs
        raise ConfigError(
            f"{out} holds an unfinished training of another recipe than {recipe.name!r}; it was left as it is: "
            "resume it with its own recipe, or train into another file"
        )
    corpus = load_corpus(recipe.data, **recipe.data_options)
    links, links_file = _guided_links(corpus, guided, out, group) if guided else (None, None)
    if progress:
        translator = load_checkpoint(out)
        state = read_state(out, progress.get("epoch"), progress.get("step"))
        if state is None:  # missing, damaged or for another epoch: say the resume is not the same run
            warnings.warn(
                f"{Path(out).name}: no usable resume state for epoch {progress.get('epoch')} "
                f"({state_path(out).name} is missing, damaged or of another epoch); Adam, the data order and "
                "dropout start afresh, so this is not the run an uninterrupted one would have been",
                AttnvizWarning,
                stacklevel=2,
            )
        progress = {**progress, "state": state}
    else:
        translator = build_translator(
            corpus,
            min_freq=recipe.min_freq,
            max_vocab=recipe.max_vocab,
            seed=recipe.train.get("seed", 0),
            **recipe.model,
        )
    translator.meta["recipe_full"] = recipe.to_dict()
    if guided:
        translator.meta["guided"] = {**guided.to_dict(), "links_file": links_file}
    translator.meta.update(meta or {})
    if out:
        check_epoch_size(translator.model.num_parameters())
    # every epoch in full precision, so a resumed training goes on from the weights it had
    on_epoch_end = (lambda tr, result: _save_epoch(tr, result, out)) if out else None
    result = fit(
        translator, corpus, train_cfg, callback, should_stop, on_epoch_end, resume=progress, group=group, links=links
    )
    translator.meta.update(
        {
            "name": recipe.name,
            "recipe_full": recipe.to_dict(),
            "train_seconds": round(result.seconds, 1),  # includes the epochs before a resume
            "history": result.history,
            "stopped": result.stopped,
            "parameters": translator.model.num_parameters(),
            "data_notes": corpus.notes,
        }
    )
    # a stopped run is saved at once in full precision, to be resumed (and measured and stored then)
    store = "fp32" if result.stopped else recipe.store
    if store != "fp32":  # the weights its file keeps: measured, returned and explored as stored
        as_stored(translator, store)
    if evaluate_split and corpus.split(evaluate_split) and main and eval_n != 0 and not result.stopped:
        measure(translator, recipe, corpus, evaluate_split, n=eval_n, on_measure=on_measure)
    if out and main:
        if not result.stopped:  # finished: nothing to resume (and its room goes to the final save)
            drop_state(out)
        _save(translator, out, store)
    return translator


def _save_epoch(translator: Translator, result: TrainResult, out: str | Path) -> None:
    """After an epoch: the checkpoint, in full precision, and beside it what a resume needs to go on as
    this run would (:mod:`attnviz.training.resume_state`). The checkpoint comes first and never fails for
    the side file's sake; the state is best effort (a stale one is ignored: read_state checks the epoch)."""
    try:
        _save(translator, out, "fp32")
    except CheckpointError:
        if not state_path(out).is_file():
            raise
        drop_state(out)  # a full disk: the side file gives its room to the checkpoint
        _save(translator, out, "fp32")
    if result.resume_state is not None:
        try:
            write_state(out, result.resume_state)
        except (OSError, SafetensorError):  # no room for it: a resume then starts Adam and the shuffle afresh
            with contextlib.suppress(OSError):
                drop_state(out)


def _save(translator: Translator, out: str | Path, store: str) -> Path:
    """``save``, a failed write (a full disk, a folder turned read-only) as one line naming the file."""
    try:
        return save(translator, out, store=store)
    except (OSError, SafetensorError) as e:
        detail = e.strerror if isinstance(e, OSError) and e.strerror else " ".join(str(e).split())[:200]
        raise CheckpointError(
            f"could not write {out} ({detail}); free some disk space or choose a writable folder"
        ) from e


def _guided_links(
    corpus: Corpus, guided: GuidedConfig, out: str | Path | None, group: SingleProcess | None
) -> tuple[list[list[Link]], str]:
    """The guided links of ``corpus.train``, eflomal's cached next to ``out``. Distributed, rank 0
    makes them first and the other ranks read its cache, so every rank trains on the same links."""
    cache = Path(out).parent / LINKS_DIR if out else CACHE_DIR
    group = group or SingleProcess()
    made = training_links(corpus, guided, cache) if group.is_main else None
    group.agree(False, 0.0)  # a barrier: rank 0's cache is written
    return made or training_links(corpus, guided, cache)


def measure(
    translator: Translator,
    recipe: Recipe,
    corpus: Corpus,
    split: str = "test",
    n: int | None = None,
    on_measure: Callable[[str, int, int], None] | None = None,
) -> dict:
    """Evaluate as the recipe asks (beam, validation BLEU) on the first ``n`` pairs of each split
    (all when None) and store it as ``meta["metrics"]``. ``on_measure(split, pairs, of)`` is
    called before each split is decoded: the pairs measured, of how many."""

    def first(name: str, pairs: list) -> list:
        chosen = pairs if n is None else pairs[:n]
        if on_measure is not None:
            on_measure(name, len(chosen), len(pairs))
        return chosen

    report = evaluate(translator, first(split, corpus.split(split)), beam_size=recipe.eval_beam)
    metrics = {**report.to_dict(), "split": split}
    if recipe.eval_valid and corpus.valid:
        valid = evaluate(translator, first("valid", corpus.valid), beam_size=recipe.eval_beam, align=False)
        metrics["valid"] = {k: valid.to_dict()[k] for k in ("n", "bleu", "bleu_cased")}
    translator.meta["metrics"] = metrics
    return metrics


def remeasure(recipe: Recipe, path: str | Path) -> dict:
    """Measure a trained checkpoint again with the current evaluation code and rewrite its
    metrics in place, atomically; the weights are saved as the recipe stores them (unchanged when
    the file already does), and measured as stored."""
    translator = as_stored(load_checkpoint(path), recipe.store)
    measure(translator, recipe, load_corpus(recipe.data, **recipe.data_options))
    stored = Recipe.from_dict(translator.meta.get("recipe_full") or recipe.to_dict()).to_dict()
    translator.meta["recipe_full"] = {
        **stored,
        "eval_beam": recipe.eval_beam,
        "eval_valid": recipe.eval_valid,
        "store": recipe.store,
    }
    _save(translator, path, recipe.store)
    return translator.meta["metrics"]
