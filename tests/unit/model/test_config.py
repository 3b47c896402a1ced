"""ModelConfig refuses bad values with a message and round-trips through a dict."""

import pytest

from attnviz.errors import ConfigError
from attnviz.model.config import ModelConfig


def test_config_rejects_bad_values_with_a_message():
    with pytest.raises(ConfigError, match="unknown style"):
        ModelConfig(10, 10, style="transformer")
    with pytest.raises(ConfigError, match="input_feeding"):
        ModelConfig(10, 10, style="bahdanau", input_feeding=True)
    with pytest.raises(ConfigError, match="dropout"):
        ModelConfig(10, 10, dropout=1.5)
    with pytest.raises(ConfigError) as e:
        ModelConfig(10, 10, encoder="transformer", emb_dim=10, heads=4)
    assert str(e.value) == (
        "a Transformer encoder splits its embedding over 4 attention heads, so emb_dim (--emb) must be a multiple "
        "of 4: got 10, give e.g. 12 or 8 (or set the recipe's model.heads)"
    )
    with pytest.raises(ConfigError, match=r"got 3, give e\.g\. 4 \(or set"):  # no multiple below: none offered
        ModelConfig(10, 10, encoder="transformer", emb_dim=3, heads=4)
    assert ModelConfig.from_dict(ModelConfig(10, 12).to_dict()) == ModelConfig(10, 12)
