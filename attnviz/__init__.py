"""attnviz: explore attention alignments in sequence-to-sequence models.

The public API::

    import attnviz
    model = attnviz.load("dates-additive-bahdanau")     # a shipped model, or a .safetensors path
    al = model.translate("saturday 22nd of november 2026", beam_size=4)
    al.weights, al.scores, al.contexts, al.source_tokens, al.target_tokens, al.hypotheses
    model.align(source, reference)                       # forced decoding on a given target
    cell = attnviz.cell_numbers(model, al, t=0, s=2)     # every number of one cell, from the parameters
    attnviz.show(al), attnviz.show_both(a, b), attnviz.show_steps(al)  # Plotly figures (Jupyter draws them)
    attnviz.read_history("models/mine.safetensors")      # how its attention formed, as plain data
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see; at run time each name is imported on first use
    from attnviz.data import TASKS, load_corpus
    from attnviz.decoding import Alignment, Translator
    from attnviz.devices import DeviceWarning, available_devices, bf16_supported, pick_device
    from attnviz.errors import AttnvizError, AttnvizWarning, CheckpointError, ConfigError, DataError, InputError
    from attnviz.evaluation import Evaluation, evaluate
    from attnviz.explain import Attribution, CellMath, attribute, cell_numbers, latex_lines
    from attnviz.model import SCORES, Attention, ModelConfig, Score, Seq2Seq, build_model, register
    from attnviz.plots import show, show_both, show_steps
    from attnviz.store import ModelEntry, ModelWarning, list_models, load, load_checkpoint, read_history, save
    from attnviz.training import Progress, Recipe, TrainConfig, build_translator, fit, run_recipe

__all__ = [
    "SCORES",
    "TASKS",
    "Alignment",
    "Attention",
    "AttnvizError",
    "AttnvizWarning",
    "Attribution",
    "CellMath",
    "CheckpointError",
    "ConfigError",
    "DataError",
    "DeviceWarning",
    "Evaluation",
    "InputError",
    "ModelConfig",
    "ModelEntry",
    "ModelWarning",
    "Progress",
    "Recipe",
    "Score",
    "Seq2Seq",
    "TrainConfig",
    "Translator",
    "attribute",
    "available_devices",
    "bf16_supported",
    "build_model",
    "build_translator",
    "cell_numbers",
    "evaluate",
    "fit",
    "latex_lines",
    "list_models",
    "load",
    "load_checkpoint",
    "load_corpus",
    "pick_device",
    "read_history",
    "register",
    "run_recipe",
    "save",
    "show",
    "show_both",
    "show_steps",
]

# every public name and the subpackage it comes from: imported on first use, so that `import attnviz`
# (and the `attnviz` command, which imports only what its command needs) does not load torch, pandas
# and Plotly up front
_WHERE: dict[str, str] = {
    "TASKS": "attnviz.data",
    "load_corpus": "attnviz.data",
    "Alignment": "attnviz.decoding",
    "Translator": "attnviz.decoding",
    "available_devices": "attnviz.devices",
    "bf16_supported": "attnviz.devices",
    "pick_device": "attnviz.devices",
    "AttnvizError": "attnviz.errors",
    "AttnvizWarning": "attnviz.errors",
    "DeviceWarning": "attnviz.devices",
    "ModelWarning": "attnviz.store",
    "CheckpointError": "attnviz.errors",
    "ConfigError": "attnviz.errors",
    "DataError": "attnviz.errors",
    "InputError": "attnviz.errors",
    "Evaluation": "attnviz.evaluation",
    "evaluate": "attnviz.evaluation",
    "Attribution": "attnviz.explain",
    "CellMath": "attnviz.explain",
    "attribute": "attnviz.explain",
    "cell_numbers": "attnviz.explain",
    "latex_lines": "attnviz.explain",
    "Attention": "attnviz.model",
    "ModelConfig": "attnviz.model",
    "SCORES": "attnviz.model",
    "Score": "attnviz.model",
    "Seq2Seq": "attnviz.model",
    "build_model": "attnviz.model",
    "register": "attnviz.model",
    "show": "attnviz.plots",
    "show_both": "attnviz.plots",
    "show_steps": "attnviz.plots",
    "list_models": "attnviz.store",
    "load": "attnviz.store",
    "load_checkpoint": "attnviz.store",
    "read_history": "attnviz.store",
    "save": "attnviz.store",
    "ModelEntry": "attnviz.store",
    "Progress": "attnviz.training",
    "Recipe": "attnviz.training",
    "TrainConfig": "attnviz.training",
    "build_translator": "attnviz.training",
    "fit": "attnviz.training",
    "run_recipe": "attnviz.training",
}


# The role subpackages, reached as ``attnviz.links.for_reading(...)`` after a plain ``import attnviz``.
SUBPACKAGES = (
    *("data", "decoding", "devices", "errors", "evaluation", "explain", "external", "links", "model", "plots"),
    *("server", "store", "training"),
)


def __getattr__(name: str) -> Any:
    if name == "__version__":  # without importing torch
        from attnviz.version import package_version

        return package_version()
    if name in SUBPACKAGES:
        return importlib.import_module(f"attnviz.{name}")  # importing it also sets the attribute
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'attnviz' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    """What tab completion offers: the public names, the role subpackages and ``__version__``."""
    return sorted({*__all__, *SUBPACKAGES, "__version__"})
