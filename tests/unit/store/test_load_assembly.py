"""A checkpoint's model is built on the meta device and given the file's tensors: every parameter and
buffer, and a forward pass, are bitwise those of a randomly initialised model the same weights are
copied into (the reference below), for fp32, fp16 and int8 files of every score, style, cell and
encoder; no memory is held twice, and no random number is drawn."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from attnviz.model.config import ModelConfig
from attnviz.model.scores import SCORES
from attnviz.model.seq2seq import Seq2Seq
from attnviz.store import checkpoint
from attnviz.store.checkpoint import load_checkpoint, read_header, save
from attnviz.store.history import is_history_tensor
from attnviz.store.quantize import SCALE_SUFFIX, _blocks, scale_shape, weight_names
from tests.support.tiny import padded_batch, tiny_translator

SIZES = {"emb_dim": 32, "hidden_dim": 40, "attn_dim": 24, "dropout": 0.0}  # rows of 80 columns: a block and a tail
VARIANTS = [
    *({"score": score, "style": style} for score in sorted(SCORES) for style in ("bahdanau", "luong")),
    {"score": "local_p", "style": "luong", "local_content": "concat", "input_feeding": True},
    {"score": "location", "style": "bahdanau", "max_src_len": 30},
    {"score": "general", "style": "luong", "cell": "lstm", "encoder": "lstm", "enc_layers": 2, "dec_layers": 2},
    {"score": "dot", "style": "luong", "cell": "lstm", "lstm_cell_init": "bridge", "attentional_bias": True},
    {"score": "additive", "style": "bahdanau", "encoder": "transformer", "heads": 4, "enc_layers": 2},
    {"score": "general", "style": "luong", "tie_embeddings": True, "bidirectional": False},
]


def _padded_dequantize(q: Tensor, scale: Tensor) -> Tensor:
    """int8 weights read back through a zero-padded copy of whole blocks (the reference arithmetic)."""
    flat = q.float().reshape(q.shape[0], -1)  # [rows, cols]
    blocks = _blocks(flat) * scale.float()[:, :, None]  # [rows, blocks, BLOCK]
    return blocks.reshape(q.shape[0], -1)[:, : flat.shape[1]].reshape(q.shape)


def reference_load(path: Path) -> Seq2Seq:
    """The reference model: ``Seq2Seq(cfg)`` randomly initialised, the file's weights copied into it, in
    eval mode (as a :class:`~attnviz.decoding.Translator` puts it)."""
    cfg = ModelConfig.from_dict(read_header(path)["config"])
    state = {}
    with safe_open(str(path), framework="pt") as f:
        for name in sorted(weight_names({n for n in f.keys() if not is_history_tensor(n)})):  # noqa: SIM118
            tensor = f.get_tensor(name)
            if tensor.dtype != torch.int8:
                state[name] = tensor.float()
                continue
            scale = f.get_tensor(name + SCALE_SUFFIX).float()
            if scale.dim() == 1:
                scale = scale[:, None].expand(scale_shape(list(tensor.shape)))
            state[name] = _padded_dequantize(tensor, scale)
        model = Seq2Seq(cfg)
        model.load_state_dict(state)
    return model.eval()


def _bits(t: Tensor) -> Tensor:
    """``t``'s bytes as integers: -0.0 and 0.0 differ, as do two NaNs of different payload."""
    return t.detach().contiguous().view(torch.int32 if t.element_size() == 4 else torch.uint8)


def _tensors(model: nn.Module) -> dict[str, Tensor]:
    """Every parameter and buffer (the non-persistent ones too), and every tensor a module keeps."""
    out = dict(model.named_parameters(remove_duplicate=False)) | dict(model.named_buffers(remove_duplicate=False))
    for prefix, module in model.named_modules():
        out |= {f"{prefix}.{k}".lstrip("."): v for k, v in vars(module).items() if isinstance(v, Tensor)}
    return out


def assert_bitwise_equal(got: nn.Module, want: nn.Module) -> None:
    assert [type(m) for m in got.modules()] == [type(m) for m in want.modules()]
    assert got.training == want.training
    a, b = _tensors(got), _tensors(want)
    assert list(a) == list(b)
    for name in a:
        x, y = a[name], b[name]
        assert (x.dtype, x.shape, x.stride(), x.device, x.requires_grad) == (
            y.dtype,
            y.shape,
            y.stride(),
            y.device,
            y.requires_grad,
        ), name
        assert type(x) is type(y) and x.is_contiguous(), name
        assert torch.equal(_bits(x), _bits(y)), f"{name} differs"


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(f"{x}" for x in v.values()))
def test_every_model_loads_bitwise_as_the_reference(corpus, tmp_path, variant):
    tr = tiny_translator(corpus, **{**SIZES, **variant})
    with torch.no_grad():  # weights of every size class: the tiny init leaves some all-zero or tiny
        for p in tr.model.parameters():
            p.mul_(3.0).add_(0.01)
    for store in ("fp32", "fp16", "int8"):
        path = save(tr, tmp_path / f"{store}.safetensors", store=store)
        loaded, want = load_checkpoint(path).model, reference_load(path)
        assert_bitwise_equal(loaded, want)
        src, lengths, tgt_in = padded_batch(len(tr.src_vocab))
        with torch.no_grad():
            got_out, want_out = loaded.eval()(src, lengths, tgt_in), want.eval()(src, lengths, tgt_in)
        pairs = [(got_out.logits, want_out.logits), (got_out.queries, want_out.queries)]
        pairs += [(getattr(got_out.attention, k), getattr(want_out.attention, k)) for k in ("weights", "context")]
        assert all(torch.equal(_bits(x), _bits(y)) for x, y in pairs), store


def test_an_int8_file_with_one_scale_a_row_loads_as_the_reference(corpus, tmp_path):
    tr = tiny_translator(corpus, **SIZES, score="general", style="luong")
    path = save(tr, tmp_path / "blocks.safetensors", store="int8")
    tensors = load_file(str(path))
    for scale in [k for k in tensors if k.endswith(SCALE_SUFFIX)]:
        tensors[scale] = tensors[scale].amax(dim=1)  # [rows]: one scale a row
    with safe_open(str(path), framework="pt") as f:
        metadata = f.metadata()
    rows = tmp_path / "rows.safetensors"
    save_file(tensors, str(rows), metadata=metadata)
    assert_bitwise_equal(load_checkpoint(rows).model, reference_load(rows))


def test_loading_draws_no_random_number_and_initialises_only_on_the_meta_device(saved, monkeypatch):
    _, path = saved
    devices, real = [], nn.Linear.reset_parameters
    record = lambda self: devices.append(self.weight.device.type) or real(self)  # noqa: E731
    monkeypatch.setattr(nn.Linear, "reset_parameters", record)
    torch.manual_seed(5)
    state = torch.get_rng_state()
    load_checkpoint(path)
    assert torch.equal(torch.get_rng_state(), state)
    assert devices and set(devices) == {"meta"}


def _mapped(path: Path) -> list[tuple[int, int]]:
    """The address ranges this process maps ``path`` at (Linux's /proc/self/maps)."""
    ranges = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5] == str(path):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            ranges.append((start, end))
    return ranges


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads Linux's /proc/self/maps")
def test_the_weights_hold_memory_of_their_own_not_a_mapping_of_the_file(saved, tmp_path):
    """A copy over the file (``cp``, not attnviz's atomic save) changes a mapped file in place: a model whose
    weights were views of it would change under the app, or crash reading a file cut short."""
    tr, path = saved
    copy = tmp_path / "copy.safetensors"
    copy.write_bytes(path.read_bytes())
    model = load_checkpoint(copy).model
    ranges = _mapped(copy.resolve())
    for name, t in _tensors(model).items():
        assert not any(a <= t.data_ptr() < b for a, b in ranges), f"{name} is a view of the file"
    copy.write_bytes(b"")  # cut short in place
    assert torch.equal(_bits(model.decoder.out.weight), _bits(tr.model.decoder.out.weight))


def test_a_module_that_leaves_a_tensor_on_the_meta_device_stops_the_load(saved, monkeypatch):
    """A buffer that __init__ makes with the default device and the checkpoint does not store would have no
    values; the load says which, and how to make it, rather than return such a model."""
    _, path = saved
    real = Seq2Seq.__init__

    def with_scratch(self, cfg):
        real(self, cfg)
        self.decoder.register_buffer("scratch", torch.zeros(3), persistent=False)

    monkeypatch.setattr(Seq2Seq, "__init__", with_scratch)
    with pytest.raises(RuntimeError, match=r"\['decoder.scratch'\] would hold no values.*CPU tensor in __init__"):
        checkpoint.load_checkpoint(path)


def test_a_safetensors_without_pread_loads_the_same_weights_copied_out_of_its_mapping(saved, monkeypatch):
    _, path = saved
    real = checkpoint.safe_open

    def mmap_only(*args, **kwargs):  # safetensors before 0.8: no backend argument
        if "backend" in kwargs:
            raise TypeError("safe_open() got an unexpected keyword argument 'backend'")
        return real(*args, **kwargs)

    monkeypatch.setattr(checkpoint, "safe_open", mmap_only)
    model = load_checkpoint(path).model
    ranges = _mapped(path.resolve())
    assert not any(a <= t.data_ptr() < b for t in _tensors(model).values() for a, b in ranges)
    assert_bitwise_equal(model, reference_load(path))
