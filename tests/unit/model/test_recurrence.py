"""The reordered recurrence that trains a Bahdanau decoder computes what stepping the decoder computes.

Training (train mode, with gradient) runs :mod:`attnviz.model.recurrence`; everything else steps the
decoder as the paper writes it. The two orders of the same sums differ by float rounding only,
relative to each tensor's largest value: in float64 everything agrees to 1e-10 (the reordering
changes no maths); in float32 the loss, the logits and the attention agree to 1e-5 and the
gradients to 1e-3 (a gradient summed over steps in float32 is itself only that close to float64's:
about 6e-5 stepped and 1.5e-4 reordered for additive attention's W_a).
"""

import pytest
import torch

from attnviz.data import PAD_ID
from attnviz.model import SCORES
from attnviz.training.loss import smoothed_cross_entropy
from tests.support.tiny import padded_batch, tiny_model


def _train_pass(score: str, fast: bool, dtype: torch.dtype, monkeypatch, bf16: bool = False) -> dict[str, torch.Tensor]:
    """One training forward and backward of a tiny Bahdanau model (``bf16``: under bf16 autocast):
    the loss, what the model reports and every gradient."""
    model = tiny_model(score, "bahdanau", dropout=0.0).to(dtype).train()
    if not fast:
        monkeypatch.setattr(model.decoder, "_trains_fast", lambda: False)
    src, lengths, tgt_in = padded_batch()
    tgt_in[1, 3:] = PAD_ID  # a shorter target, as in a padded batch
    gold = torch.roll(tgt_in, -1, dims=1)  # [B, T] any targets will do
    scored = gold != PAD_ID  # [B, T]
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        assert model.decoder._trains_fast() == fast
        out = model(src, lengths, tgt_in, scored=scored)
        loss, _ = smoothed_cross_entropy(out.logits, gold[scored], 0.1, PAD_ID)
    probe = torch.linspace(-1, 1, out.attention.weights.numel(), dtype=dtype).view_as(out.attention.weights)
    probe = probe.to(out.attention.weights.dtype)
    loss = loss + (out.attention.weights * probe).sum()  # as a guided alignment loss reads the weights
    loss.backward()
    att = out.attention
    seen = {"loss": loss, "logits": out.logits, "weights": att.weights, "context": att.context, "queries": out.queries}
    seen["scores"] = att.scores.masked_fill(att.scores.isinf(), 0)  # -inf at padding and outside a window
    if att.positions is not None:
        seen["positions"] = att.positions
    seen = {name: x.float() for name, x in seen.items()}
    return {**seen, **{n: p.grad for n, p in model.named_parameters() if p.grad is not None}}


@pytest.mark.parametrize("score", sorted(SCORES))
@pytest.mark.parametrize(
    ("dtype", "outputs", "gradients"), [(torch.float32, 1e-5, 1e-3), (torch.float64, 1e-10, 1e-10)]
)
def test_the_training_recurrence_gives_the_stepped_loss_outputs_and_gradients(
    score, dtype, outputs, gradients, monkeypatch
):
    fast = _train_pass(score, True, dtype, monkeypatch)
    plain = _train_pass(score, False, dtype, monkeypatch)
    assert fast.keys() == plain.keys()
    for name, expected in plain.items():
        tolerance = gradients if "." in name else outputs  # parameters are named module.weight
        scale = expected.detach().abs().max().clamp_min(1e-3)  # relative to the tensor's largest value
        torch.testing.assert_close(fast[name].detach(), expected.detach(), atol=tolerance * scale, rtol=0, msg=name)


@pytest.mark.parametrize("score", ["additive", "general", "dot", "local_p"])
def test_under_bf16_autocast_the_training_recurrence_is_as_exact_as_the_stepped_one(score, monkeypatch):
    """bf16 rounds every product to 8 bits of mantissa in either order, so the two orders do not agree
    to float32's tolerance (a summed gradient can differ by a tenth of its largest value). Measured
    against float64's exact numbers, though, the reordered recurrence is as close as the stepped one
    for the loss, every output and every gradient."""
    exact = _train_pass(score, False, torch.float64, monkeypatch)
    fast = _train_pass(score, True, torch.float32, monkeypatch, bf16=True)
    plain = _train_pass(score, False, torch.float32, monkeypatch, bf16=True)
    assert fast.keys() == plain.keys() == exact.keys()

    def error(seen: dict[str, torch.Tensor], name: str) -> float:
        truth = exact[name].detach()
        return ((seen[name].detach().double() - truth).abs().max() / truth.abs().max().clamp_min(1e-3)).item()

    for name in exact:
        assert error(fast, name) <= 1.5 * error(plain, name) + 0.01, name


@pytest.mark.parametrize("score", ["additive", "local_p"])
def test_what_the_app_reads_is_stepped_as_the_paper_writes_it(score):
    """Evaluation mode, or no gradient, or an LSTM, several layers: the plain recurrence."""
    model = tiny_model(score, "bahdanau", dropout=0.0)
    assert not model.decoder._trains_fast()  # tiny_model is in eval mode
    model.train()
    assert model.decoder._trains_fast()
    with torch.no_grad():
        assert not model.decoder._trains_fast()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert model.decoder._trains_fast()  # training under bf16 autocast reorders too
    for options in ({"cell": "lstm"}, {"dec_layers": 2}):
        assert not tiny_model(score, "bahdanau", **options).train().decoder._trains_fast()
