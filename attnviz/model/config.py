"""Model configuration: one dataclass, stored in every checkpoint and used to rebuild the model."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from attnviz.errors import CheckpointError, ConfigError, check_field_types

STYLES = ("bahdanau", "luong")


def other_style(style: str) -> str:
    """The decoder style that is not ``style``: what the app's flip and a sibling model use."""
    return STYLES[1] if style == STYLES[0] else STYLES[0]


ENCODERS = ("gru", "lstm", "transformer")
CELLS = ("gru", "lstm")
LSTM_CELL_INITS = ("zeros", "bridge")


@dataclass
class ModelConfig:
    """Sizes and choices of an encoder-decoder with attention."""

    src_vocab_size: int
    tgt_vocab_size: int
    score: str = "additive"  # a name in attnviz.SCORES
    style: str = "bahdanau"  # decoder style: "bahdanau" (attend with s_{t-1}) or "luong" (with h_t)
    encoder: str = "gru"  # "gru", "lstm" or "transformer"
    bidirectional: bool = True  # RNN encoders only
    cell: str = "gru"  # decoder RNN: "gru" or "lstm"
    emb_dim: int = 128
    hidden_dim: int = 256  # decoder state size; RNN encoders use it per direction
    attn_dim: int = 256  # inner size of concat/additive scores and of the local-p predictor
    enc_layers: int = 1
    dec_layers: int = 1
    heads: int = 4  # Transformer encoder
    dropout: float = 0.1
    input_feeding: bool = False  # Luong only: feed h~_{t-1} into the next RNN input
    tie_embeddings: bool = False  # output layer shares the target embedding matrix
    window: int = 5  # half-width D of local attention
    local_content: str = "general"  # content score inside the local window
    max_src_len: int = 100  # longest source (tokens + <eos>) location attention can address
    attentional_bias: bool = False  # Luong only: h~_t = tanh(W_c [c_t; h_t] + b_c) (JoeyNMT's attention vector)
    lstm_cell_init: str = "zeros"  # LSTM decoder: first cell state "zeros", or "bridge" (h_0 itself, as JoeyNMT)

    def __post_init__(self) -> None:
        from attnviz.model.scores import get_score

        self._check_types()
        get_score(self.score)
        get_score(self.local_content)
        for name, allowed in (("style", STYLES), ("encoder", ENCODERS), ("cell", CELLS)):
            if getattr(self, name) not in allowed:
                raise ConfigError(f"unknown {name} {getattr(self, name)!r}; choose one of {allowed}")
        for name in ("src_vocab_size", "tgt_vocab_size", "emb_dim", "hidden_dim", "attn_dim"):
            if not 1 <= getattr(self, name) <= 100_000:
                raise ConfigError(f"{name} must be between 1 and 100000, got {getattr(self, name)}")
        for name in ("enc_layers", "dec_layers", "heads"):
            if not 1 <= getattr(self, name) <= 16:
                raise ConfigError(f"{name} must be between 1 and 16, got {getattr(self, name)}")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"dropout must be in [0, 1), got {self.dropout}")
        if not 1 <= self.window <= 50:
            raise ConfigError(f"window must be between 1 and 50, got {self.window}")
        if not 2 <= self.max_src_len <= 2000:
            raise ConfigError(f"max_src_len must be between 2 and 2000, got {self.max_src_len}")
        if self.attentional_bias and self.style != "luong":
            raise ConfigError("attentional_bias belongs to the Luong decoder; set style='luong' or drop it")
        if self.lstm_cell_init not in LSTM_CELL_INITS:
            raise ConfigError(f"unknown lstm_cell_init {self.lstm_cell_init!r}; choose one of {LSTM_CELL_INITS}")
        if self.input_feeding and self.style != "luong":
            raise ConfigError("input_feeding belongs to the Luong decoder; set style='luong' or drop it")
        if self.encoder == "transformer" and self.emb_dim % self.heads:
            below, above = self.emb_dim // self.heads * self.heads, (self.emb_dim // self.heads + 1) * self.heads
            raise ConfigError(
                f"a Transformer encoder splits its embedding over {self.heads} attention heads, so emb_dim (--emb) "
                f"must be a multiple of {self.heads}: got {self.emb_dim}, give e.g. {above}"
                + (f" or {below}" if below else "")
                + " (or set the recipe's model.heads)"
            )

    def _check_types(self) -> None:
        """JSON types first, so a checkpoint's ``"hidden_dim": true`` is an error, not a TypeError."""
        check_field_types(self)

    @property
    def memory_dim(self) -> int:
        """Size of one encoder annotation (the keys and values of attention)."""
        if self.encoder == "transformer":
            return self.emb_dim
        return self.hidden_dim * (2 if self.bidirectional else 1)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> ModelConfig:
        if not isinstance(d, dict):
            raise CheckpointError("the model config must be a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise CheckpointError(
                f"the model config has fields this attnviz does not know: {unknown}; it was made by another version"
            )
        check_scores_known(d)
        try:
            return cls(**d)
        except TypeError as e:
            raise CheckpointError(f"the model config is incomplete: {e}") from e


def check_scores_known(config: dict) -> None:
    """Raise :class:`CheckpointError` when a stored model config names a score function (``score``,
    ``local_content``) this attnviz has not registered: a checkpoint of a newer or extended attnviz."""
    from attnviz.model.scores import SCORES

    for key in ("score", "local_content"):
        name = config.get(key)
        if isinstance(name, str) and name not in SCORES:
            raise CheckpointError(
                f"the model uses the score function {name!r}, which this attnviz does not have (it has "
                f"{', '.join(sorted(SCORES))}); open it with the attnviz, or the code that registers {name!r}, "
                "that trained it"
            )
