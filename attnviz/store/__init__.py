"""Files: where models live, safe writes and name reservations, safetensors checkpoints, the catalog."""

from attnviz.store.catalog import list_models, load, model_roots, shareable_meta, visible_to
from attnviz.store.checkpoint import load_checkpoint, read_header, save
from attnviz.store.files import (
    STAGING,
    check_output,
    clean_stale_temp,
    free_path,
    hold_lock,
    is_locked,
    move_no_clobber,
    release_lock,
    reserve_name,
    shipped_names,
    slugify,
)
from attnviz.store.paths import (
    SUFFIX,
    ModelWarning,
    checkout_dir,
    data_roots,
    models_dir,
    pretrained_dir,
    read_manifest,
    recipe_path,
    upload_root,
)

__all__ = [
    "STAGING",
    "SUFFIX",
    "ModelWarning",
    "check_output",
    "checkout_dir",
    "clean_stale_temp",
    "data_roots",
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
    "upload_root",
    "visible_to",
]
