"""Training: the fit loop, loss, guided alignment, distributed runs, recipes, adaptation, the speed benchmark."""

from attnviz.training.adapt import MAX_STEPS as MAX_ADAPT_STEPS
from attnviz.training.adapt import AdaptConfig, adapt, check_adapt_size
from attnviz.training.bench import TRANSLATE_TOKENS, run_bench
from attnviz.training.config import Progress, TrainConfig
from attnviz.training.distributed import SingleProcess, join_torchrun
from attnviz.training.fit import build_translator, fit
from attnviz.training.recipes import Recipe, recipe_differences, run_recipe, unfinished
from attnviz.training.resume_state import drop_state, move_state

__all__ = [
    "MAX_ADAPT_STEPS",
    "TRANSLATE_TOKENS",
    "AdaptConfig",
    "Progress",
    "Recipe",
    "SingleProcess",
    "TrainConfig",
    "adapt",
    "build_translator",
    "check_adapt_size",
    "drop_state",
    "fit",
    "join_torchrun",
    "move_state",
    "recipe_differences",
    "run_bench",
    "run_recipe",
    "unfinished",
]
