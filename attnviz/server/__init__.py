"""What the app needs that is not Streamlit: background training and adaptation jobs, stranded runs,
uploads (the server's folder, who holds which file, when a session ends), uploaded checkpoints, warm-up."""

from attnviz.server.adapt_jobs import (
    ADAPTATIONS,
    MAX_APP_PAIRS,
    Adaptations,
    AdaptJob,
    AdaptSnapshot,
    save_adapted,
    upload_bitext,
)
from attnviz.server.checkpoints import (
    MAX_CHECKPOINT_UPLOAD_MB,
    MAX_CHECKPOINTS_PER_SESSION,
    checkpoint_folder,
    is_uploaded_checkpoint,
    remove_checkpoint,
    save_checkpoint,
    session_checkpoints,
    store_checkpoint,
    uploaded_model,
    without_server_paths,
)
from attnviz.server.jobs import ACTIVE, REGISTRY, JobSnapshot, TrainingJob
from attnviz.server.stranded import discard_stranded, keep_stranded, resume_stranded, stranded_runs
from attnviz.server.upload_folder import remove_server_folder, server_folder
from attnviz.server.upload_ledger import (
    MAX_UPLOAD_MB,
    MAX_UPLOAD_ROWS,
    Stored,
    hold_for_training,
    hold_upload,
    release_upload,
    store_upload,
)
from attnviz.server.warm import front_page
from attnviz.server.web_sessions import WebSessions, session_disconnected, session_seen, use_web_sessions

__all__ = [
    "ACTIVE",
    "ADAPTATIONS",
    "MAX_APP_PAIRS",
    "MAX_CHECKPOINTS_PER_SESSION",
    "MAX_CHECKPOINT_UPLOAD_MB",
    "MAX_UPLOAD_MB",
    "MAX_UPLOAD_ROWS",
    "REGISTRY",
    "AdaptJob",
    "AdaptSnapshot",
    "Adaptations",
    "JobSnapshot",
    "Stored",
    "TrainingJob",
    "WebSessions",
    "checkpoint_folder",
    "discard_stranded",
    "front_page",
    "hold_for_training",
    "hold_upload",
    "is_uploaded_checkpoint",
    "keep_stranded",
    "release_upload",
    "remove_checkpoint",
    "remove_server_folder",
    "resume_stranded",
    "save_adapted",
    "save_checkpoint",
    "server_folder",
    "session_checkpoints",
    "session_disconnected",
    "session_seen",
    "store_checkpoint",
    "store_upload",
    "stranded_runs",
    "upload_bitext",
    "uploaded_model",
    "use_web_sessions",
    "without_server_paths",
]
