"""The model: score functions (one registry), the shared attention step, encoder, decoders, Seq2Seq, ModelConfig."""

from attnviz.model.attention import Attention, AttentionOutput, Memory, is_local, is_predictive
from attnviz.model.config import ENCODERS, STYLES, ModelConfig, check_scores_known, other_style
from attnviz.model.decoder import DecoderState, Recurrence, StepOutput
from attnviz.model.scores import SCORES, Score, get_score, register
from attnviz.model.seq2seq import Encoded, Seq2Seq, build_model

__all__ = [
    "ENCODERS",
    "SCORES",
    "STYLES",
    "Attention",
    "AttentionOutput",
    "DecoderState",
    "Encoded",
    "Memory",
    "ModelConfig",
    "Recurrence",
    "Score",
    "Seq2Seq",
    "StepOutput",
    "build_model",
    "check_scores_known",
    "get_score",
    "is_local",
    "is_predictive",
    "other_style",
    "register",
]
