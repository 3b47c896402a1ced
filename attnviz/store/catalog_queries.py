"""The catalog's questions: which (score, decoder style) models a task has, the sibling of a model
in the other style, why a combination is missing, and what the app opens on. Explore's score box
and Bahdanau | Luong | Both toggle, and the Train page's "train the missing sibling", all ask
these questions here, of the entries :func:`attnviz.store.list_models` returns."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.errors import ConfigError
from attnviz.model import SCORES, STYLES, Attention
from attnviz.store.entry import PRETRAINED, ModelEntry

# The first task found here opens the app: real language a newcomer can type (English source).
PREFERRED_TASKS = ("multi30k-en-fr", "multi30k-en-de", "multi30k-de-en", "toy-fr", "dates")
# ... and the first score of these shipped in both styles (else the first shipped one).
PREFERRED_SCORES = ("dot", "general", "additive")
# The sentence a task opens on where its checkpoints' own example (the corpus's first test
# sentence of median length) holds a word the models never learned ("igloo"). Each is
# translated right by every shipped model of its task (`attnviz translate --model NAME`).
FRONT_EXAMPLES = {
    "multi30k-en-fr": "A black dog is running on the beach.",  # Un chien noir court sur la plage.
    "multi30k-en-de": "A black dog is running on the beach.",  # Ein schwarzer Hund rennt am Strand.
    "multi30k-de-en": "Ein schwarzer Hund läuft am Strand.",  # A black dog running on the beach.
}


@dataclass(frozen=True)
class Slot:
    """One (score, style) combination of a task: its model, or why there is none."""

    score: str
    style: str
    entry: ModelEntry | None  # the model, when one exists
    reason: str | None  # why there is no model (None when there is one)

    @property
    def available(self) -> bool:
        return self.entry is not None


def task_of(entry: ModelEntry) -> str:
    """A catalog entry's task; models of unknown data are grouped as "other"."""
    return entry.task or "other"


def sizes_problem(config: dict, score: str, style: str) -> str | None:
    """Why a model with ``config``'s sizes cannot use ``score`` (None when it can).

    Attention's own constructor decides (dot-style scores compare the decoder state with the
    encoder annotation, so their sizes must agree); the style does not change the sizes.
    """
    del style  # both decoder styles query with a state of hidden_dim
    memory = config.get("emb_dim") if config.get("encoder") == "transformer" else None
    if memory is None:
        memory = config.get("hidden_dim", 1) * (2 if config.get("bidirectional", True) else 1)
    try:
        with torch.device("meta"):  # the size check only: no weights are allocated
            Attention(
                score, int(config.get("hidden_dim", 1)), int(memory), 1, 2, 1, config.get("local_content", "general")
            )
    except ConfigError as e:
        return f"impossible with these sizes: {e}"
    return None


def _variant(entry: ModelEntry) -> str:
    """What a model's name says after its decoder style: ``-guided`` for a guided twin
    (``multi30k-de-en-additive-bahdanau-guided``), ``""`` for its plain sibling."""
    return entry.name.rpartition(f"-{entry.style}")[2] if entry.style else ""


def _pick(matches: list[ModelEntry], like: ModelEntry | None) -> ModelEntry | None:
    """Of several checkpoints for one slot, the one that comes from where ``like`` comes from, of
    the same variant where there is one (a guided twin's sibling is the other style's twin)."""
    if not matches:
        return None
    if like is not None:
        same = [m for m in matches if m.source == like.source]
        twin = [m for m in same if _variant(m) == _variant(like)]
        if twin or same:
            return (twin or same)[0]
    return matches[0]


def matches(models: list[ModelEntry], task: str, score: str, style: str) -> list[ModelEntry]:
    """Every checkpoint of ``task`` with this score and decoder style."""
    return [m for m in models if task_of(m) == task and (m.score, m.style) == (score, style)]


def slots(
    models: list[ModelEntry], task: str, config: dict | None = None, like: ModelEntry | None = None
) -> dict[tuple[str, str], Slot]:
    """Every registered score × decoder style of ``task``: ``{(score, style): Slot}``.

    ``config`` (a model config of the task) lets a missing slot say when its sizes make it
    impossible; ``like`` breaks ties between checkpoints (a trained model's sibling is
    preferably trained too).
    """
    of_task = [m for m in models if task_of(m) == task]
    out = {}
    for score in SCORES:
        found = {style: _pick(matches(of_task, task, score, style), like) for style in STYLES}
        for style, entry in found.items():
            reason = None
            if entry is None:
                reason = (config and sizes_problem(config, score, style)) or _missing(task, score, style, found)
            out[score, style] = Slot(score, style, entry, reason)
    return out


def _missing(task: str, score: str, style: str, found: dict[str, ModelEntry | None]) -> str:
    """Why a possible slot is empty, and the way to fill it: from its sibling when one exists."""
    if any(entry is not None for entry in found.values()):
        return f"no {score}/{style} model for {task} yet: train the missing sibling on the Train page"
    return f"no {score} model for {task} in either style yet: train one on the Train page (score function {score})"


def sibling(models: list[ModelEntry], entry: ModelEntry, style: str) -> ModelEntry | None:
    """The model of the same task and score in ``style`` (``entry`` itself for its own style)."""
    if entry.style == style:
        return entry
    return slots(models, task_of(entry), like=entry)[entry.score, style].entry


def guided_twin(models: list[ModelEntry], entry: ModelEntry) -> ModelEntry | None:
    """The guided twin of a plain model (same task, score and style, its attention trained towards
    eflomal's links: ``...-additive-bahdanau-guided``); None for a twin or where there is none."""
    if _variant(entry):
        return None
    twins = [m for m in matches(models, task_of(entry), entry.score, entry.style) if _variant(m) == "-guided"]
    return next((m for m in twins if m.source == entry.source), twins[0] if twins else None)


def front_example(models: list[ModelEntry], task: str) -> str | None:
    """The sentence ``task`` opens on: its entry in FRONT_EXAMPLES when a shipped model of the
    task is listed, else the example of its first model that has one."""
    if task in FRONT_EXAMPLES and any(task_of(m) == task and m.source == PRETRAINED for m in models):
        return FRONT_EXAMPLES[task]
    return next((m.example for m in models if task_of(m) == task and m.example), None)


def model_tasks(models: list[ModelEntry]) -> list[str]:
    """The tasks that have models, the preferred real-language ones first."""
    found = list(dict.fromkeys(task_of(m) for m in models))
    return sorted(found, key=lambda t: PREFERRED_TASKS.index(t) if t in PREFERRED_TASKS else len(PREFERRED_TASKS))


def default_score(models: list[ModelEntry], task: str) -> str | None:
    """The score to open ``task`` on: one shipped in both styles (dot, general, additive first)."""
    grid = slots(models, task)
    have = [s for s in SCORES if any(grid[s, st].available for st in STYLES)]
    both = [s for s in have if all(grid[s, st].available for st in STYLES)]
    for group in (both, have):
        for score in (*PREFERRED_SCORES, *SCORES):
            if score in group:
                return score
    return None


def default_style(models: list[ModelEntry], task: str, score: str) -> str:
    """Luong where it exists (its h_t queries align more sharply), else the style that does."""
    grid = slots(models, task)
    return next((st for st in ("luong", "bahdanau") if grid[score, st].available), "luong")


def front_entry(models: list[ModelEntry]) -> ModelEntry | None:
    """The model the app opens on: the first task's default score, in its default style."""
    found = model_tasks(models)
    if not found:
        return None
    score = default_score(models, found[0])
    return slots(models, found[0])[score, default_style(models, found[0], score)].entry if score else None
