"""A model whose arithmetic overflows float32 is refused with a CheckpointError by every decoding
path, instead of NaN weights and a text of <pad> tokens; the attention keeps exact zeros off the
source even on a row that overflowed."""

import pytest
import torch

from attnviz.errors import CheckpointError
from attnviz.model import Attention
from tests.support.tiny import tiny_translator

SENTENCE = "a b c d"


@pytest.fixture(scope="module")
def overflowing(corpus):
    tr = tiny_translator(corpus, score="general", style="luong")
    with torch.no_grad():
        tr.model.decoder.out.bias.fill_(float("inf"))  # every logit beyond float32, in every decoding path
    return tr


@pytest.mark.parametrize(
    "decode",
    [
        lambda tr: tr.translate(SENTENCE),
        lambda tr: tr.translate(SENTENCE, beam_size=3),
        lambda tr: tr.translate_batch([SENTENCE, "b a"]),
        lambda tr: tr.translate_batch([SENTENCE, "b a"], beam_size=3),
    ],
    ids=["greedy", "beam", "greedy batch", "beam batch"],
)
def test_every_decoding_path_refuses_an_overflowing_model(overflowing, decode):
    with pytest.raises(CheckpointError, match="overflows float32"):
        decode(overflowing)


def test_a_sane_model_decodes_as_before(corpus):
    tr = tiny_translator(corpus, score="general", style="luong")
    al = tr.translate(SENTENCE, beam_size=3)
    assert al.weights.sum(1) == pytest.approx(1.0, abs=1e-5)
    assert tr.translate_batch([SENTENCE], beam_size=3) == [tr.text_of(al)]


def test_padding_stays_zero_where_a_row_overflows():
    att = Attention("general", 4, 4, 4).eval()
    att.score.W_a.weight.data = torch.eye(4) * 3e38
    values = torch.tensor([[[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 0, 0]]])  # [1, 3, 4]: the last one padding
    memory = att.prepare(values, torch.tensor([[True, True, False]]))
    weights = att(torch.tensor([[[-2.0, -2.0, 0, 0]]]), memory, torch.tensor([0])).weights  # [1, 1, 3]
    assert weights[0, 0, :2].isnan().all()  # the real positions overflowed (the decoder refuses them)
    assert weights[0, 0, 2].item() == 0.0  # the padded one is exactly 0, as for every row
