"""What the app needs that is not Streamlit: background training jobs, stranded runs, warm-up, model slots."""

from attnviz.server.jobs import ACTIVE, REGISTRY, JobSnapshot, TrainingJob, is_file_spec
from attnviz.server.siblings import default_score, default_style, matches, model_tasks, sibling, slots, task_of
from attnviz.server.stranded import discard_stranded, keep_stranded, resume_stranded, stranded_runs
from attnviz.server.warm import front_page, siblings

__all__ = [
    "ACTIVE",
    "REGISTRY",
    "JobSnapshot",
    "TrainingJob",
    "default_score",
    "default_style",
    "discard_stranded",
    "front_page",
    "is_file_spec",
    "keep_stranded",
    "matches",
    "model_tasks",
    "resume_stranded",
    "sibling",
    "siblings",
    "slots",
    "stranded_runs",
    "task_of",
]
