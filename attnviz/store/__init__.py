"""Files: where models live, safe writes and name reservations, safetensors checkpoints, the catalog."""

from attnviz.store.catalog import (
    SUFFIX,
    ModelWarning,
    list_models,
    load,
    load_checkpoint,
    model_roots,
    models_dir,
    pretrained_dir,
    read_header,
    read_manifest,
    shareable_meta,
    visible_to,
)
from attnviz.store.checkpoint import clean_stale_temp, save
from attnviz.store.files import (
    STAGING,
    check_output,
    free_path,
    hold_lock,
    is_locked,
    move_no_clobber,
    release_lock,
    reserve_name,
    shipped_names,
    slugify,
)
from attnviz.store.paths import checkout_dir, recipe_path

__all__ = [
    "STAGING",
    "SUFFIX",
    "ModelWarning",
    "check_output",
    "checkout_dir",
    "clean_stale_temp",
    "free_path",
    "hold_lock",
    "is_locked",
    "list_models",
    "load",
    "load_checkpoint",
    "model_roots",
    "models_dir",
    "move_no_clobber",
    "pretrained_dir",
    "read_header",
    "read_manifest",
    "recipe_path",
    "release_lock",
    "reserve_name",
    "save",
    "shareable_meta",
    "shipped_names",
    "slugify",
    "visible_to",
]
