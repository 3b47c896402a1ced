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

from attnviz.data import TASKS, load_corpus
from attnviz.decoding import Alignment, Translator
from attnviz.devices import available_devices, bf16_supported, pick_device
from attnviz.errors import AttnvizError, CheckpointError, ConfigError, DataError, InputError
from attnviz.evaluation import Evaluation, evaluate
from attnviz.explain import Attribution, CellMath, attribute, cell_numbers, latex_lines
from attnviz.model import SCORES, Attention, ModelConfig, Score, Seq2Seq, build_model, register
from attnviz.store import ModelEntry, list_models, load, load_checkpoint, read_history, save
from attnviz.training import Progress, Recipe, TrainConfig, build_translator, fit, run_recipe

__all__ = [
    "SCORES",
    "TASKS",
    "Alignment",
    "Attention",
    "AttnvizError",
    "Attribution",
    "CellMath",
    "CheckpointError",
    "ConfigError",
    "DataError",
    "Evaluation",
    "InputError",
    "ModelConfig",
    "ModelEntry",
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

FIGURES = ("show", "show_both", "show_steps")  # from attnviz.plots, imported on first use: the CLI needs no Plotly


def __getattr__(name: str):
    if name in FIGURES:
        from attnviz import plots

        return getattr(plots, name)
    raise AttributeError(f"module 'attnviz' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *FIGURES])
