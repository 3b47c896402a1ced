"""What the app needs that is not Streamlit: background training jobs, stranded runs, uploads, warm-up,
model slots."""

from attnviz.server.jobs import ACTIVE, REGISTRY, JobSnapshot, TrainingJob
from attnviz.server.siblings import (
    default_score,
    default_style,
    front_example,
    matches,
    model_tasks,
    sibling,
    slots,
    task_of,
)
from attnviz.server.stranded import discard_stranded, keep_stranded, resume_stranded, stranded_runs
from attnviz.server.uploads import (
    MAX_UPLOAD_MB,
    MAX_UPLOAD_ROWS,
    Stored,
    WebSessions,
    hold_for_training,
    hold_upload,
    release_upload,
    server_folder,
    session_disconnected,
    session_seen,
    store_upload,
    use_web_sessions,
)
from attnviz.server.warm import front_page, siblings

__all__ = [
    "ACTIVE",
    "MAX_UPLOAD_MB",
    "MAX_UPLOAD_ROWS",
    "REGISTRY",
    "JobSnapshot",
    "Stored",
    "TrainingJob",
    "WebSessions",
    "default_score",
    "default_style",
    "discard_stranded",
    "front_example",
    "front_page",
    "hold_for_training",
    "hold_upload",
    "keep_stranded",
    "matches",
    "model_tasks",
    "release_upload",
    "resume_stranded",
    "server_folder",
    "session_disconnected",
    "session_seen",
    "sibling",
    "siblings",
    "slots",
    "store_upload",
    "stranded_runs",
    "task_of",
    "use_web_sessions",
]
