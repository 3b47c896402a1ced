"""JoeyNMT 2.x recurrent checkpoints imported into attnviz: on tiny models trained here with
JoeyNMT's own code, the imported model's attention equals JoeyNMT's (forced and greedy decoding),
for its Bahdanau and Luong attention, GRU and LSTM, with and without input feeding; bad input
(a pickle that needs code, mismatched vocabularies, a folder that is not a model) is refused in one line."""

from __future__ import annotations

import argparse
import random
from types import SimpleNamespace

import pytest
import torch
import yaml

joey_model = pytest.importorskip(
    "joeynmt.model",
    reason="JoeyNMT is not installed: python -m pip install --no-deps -r requirements-joeynmt.txt",
)
from joeynmt.config import _check_special_symbols  # noqa: E402
from joeynmt.search import recurrent_greedy  # noqa: E402
from joeynmt.vocabulary import Vocabulary  # noqa: E402

from attnviz.errors import CheckpointError  # noqa: E402
from attnviz.external import import_joeynmt_files  # noqa: E402
from attnviz.store import load, save  # noqa: E402
from tests.support.cli import run  # noqa: E402
from tests.support.joeynmt_files import joey_config, joey_state  # noqa: E402

WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]
SPECIALS = SimpleNamespace(**_check_special_symbols({}))


def model_cfg(
    attention: str, rnn: str, layers: int, feeding: bool, init_hidden: str, scale: bool, tied: bool = False
) -> dict:
    emb = {"embedding_dim": 16 if tied else 12, "scale": scale}
    side = {"type": "recurrent", "rnn_type": rnn, "hidden_size": 16, "num_layers": layers, "embeddings": emb}
    return {
        "initializer": "xavier_uniform",
        "tied_embeddings": tied,
        "tied_softmax": tied,
        "encoder": {**side, "bidirectional": True},
        "decoder": {**side, "attention": attention, "input_feeding": feeding, "init_hidden": init_hidden},
    }


def batch(vocab: Vocabulary, sentences: list[list[str]], bos: bool, eos: bool) -> torch.Tensor:
    ids = [
        ([vocab.bos_index] if bos else []) + [vocab.lookup(t) for t in s] + ([vocab.eos_index] if eos else [])
        for s in sentences
    ]
    width = max(map(len, ids))
    return torch.tensor([row + [vocab.pad_index] * (width - len(row)) for row in ids])


def train_joey(cfg: dict, steps: int = 120):
    """A JoeyNMT model that learns to reverse short sentences, trained with its own modules."""
    torch.manual_seed(0)
    rng = random.Random(0)
    vocab = Vocabulary(WORDS, SPECIALS)
    model = joey_model.build_model(cfg, src_vocab=vocab, trg_vocab=vocab)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(steps):
        sents = sorted(
            ([rng.choice(WORDS) for _ in range(rng.randint(2, 6))] for _ in range(16)), key=len, reverse=True
        )
        src = batch(vocab, sents, bos=False, eos=True)
        trg = batch(vocab, [s[::-1] for s in sents], bos=True, eos=True)
        lengths = (src != vocab.pad_index).sum(1)
        mask = (src != vocab.pad_index).unsqueeze(1)
        enc_out, enc_hidden = model._encode(src, lengths, mask)
        out, _, _, _ = model._decode(enc_out, enc_hidden, mask, trg[:, :-1], unroll_steps=trg.size(1) - 1)
        loss = torch.nn.functional.cross_entropy(
            out.reshape(-1, out.size(-1)), trg[:, 1:].reshape(-1), ignore_index=vocab.pad_index
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval(), vocab


def write_model(folder, cfg: dict, model, vocab: Vocabulary) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    data = {"src": {"lang": "x", "level": "word"}, "trg": {"lang": "y", "level": "word"}}
    (folder / "config.yaml").write_text(yaml.safe_dump({"name": "tiny", "data": data, "model": cfg}))
    vocab.to_file(folder / "src_vocab.txt")
    vocab.to_file(folder / "trg_vocab.txt")
    checkpoint = {"model_state": model.state_dict(), "stats_state": {"steps": 120, "best_ckpt_score": 0.5}}
    torch.save(checkpoint, folder / "best.ckpt")


def joey_forced(model, vocab, source: list[str], target: list[str]) -> torch.Tensor:
    src = batch(vocab, [source], bos=False, eos=True)
    trg = batch(vocab, [target], bos=True, eos=False)
    mask = (src != vocab.pad_index).unsqueeze(1)
    with torch.no_grad():
        enc_out, enc_hidden = model._encode(src, torch.tensor([src.size(1)]), mask)
        _, _, att, _ = model._decode(enc_out, enc_hidden, mask, trg, unroll_steps=trg.size(1))
    return att[0]  # [tgt + 1, src + 1]


def joey_greedy(model, vocab, source: list[str]) -> tuple[list[str], torch.Tensor]:
    src = batch(vocab, [source], bos=False, eos=True)
    mask = (src != vocab.pad_index).unsqueeze(1)
    with torch.no_grad():
        enc_out, enc_hidden = model._encode(src, torch.tensor([src.size(1)]), mask)
        ids, _, att = recurrent_greedy(mask, 20, model, enc_out, enc_hidden)
    tokens = [vocab._itos[i] for i in ids[0].tolist()]
    return tokens, torch.as_tensor(att[0])


VARIANTS = {
    "bahdanau-gru-feeding": ("bahdanau", "gru", 1, True, "bridge", False),
    "luong-lstm-2layers": ("luong", "lstm", 2, False, "bridge", True),
    "luong-gru-zero-init": ("luong", "gru", 1, True, "zero", False),
    "bahdanau-lstm-2layers-feeding": ("bahdanau", "lstm", 2, True, "bridge", False),
    "luong-gru-tied": ("luong", "gru", 1, True, "bridge", False, True),
}
SENTENCES = [["a", "b", "c"], ["h", "g", "a", "d", "e"], ["f", "f", "b", "c", "a", "h"]]


@pytest.fixture(scope="module", params=list(VARIANTS))
def joey(request, tmp_path_factory):
    cfg = model_cfg(*VARIANTS[request.param])
    model, vocab = train_joey(cfg)
    folder = tmp_path_factory.mktemp(request.param)
    write_model(folder, cfg, model, vocab)
    return model, vocab, folder


def test_the_imported_attention_equals_joeynmts(joey, tmp_path):
    model, vocab, folder = joey
    imported = load(str(save(import_joeynmt_files(folder), tmp_path / "tiny.safetensors")))  # through the store
    for source in SENTENCES:
        target = source[::-1]
        expected = joey_forced(model, vocab, source, target)
        al = imported.align(" ".join(source), " ".join(target))
        assert al.source_tokens == [*source, "<eos>"] and al.target_tokens == [*target, "<eos>"]
        torch.testing.assert_close(torch.as_tensor(al.weights), expected, atol=1e-5, rtol=1e-4)
        tokens, att = joey_greedy(model, vocab, source)
        al = imported.translate(" ".join(source))
        assert al.target_tokens == [t if t != "</s>" else "<eos>" for t in tokens]
        torch.testing.assert_close(torch.as_tensor(al.weights), att, atol=1e-5, rtol=1e-4)


def test_the_tiny_models_learned_their_task(joey):
    model, vocab, _ = joey
    tokens, _ = joey_greedy(model, vocab, ["a", "b", "c"])
    assert tokens[:3] == ["c", "b", "a"]  # the equality above is between trained attention, not noise


def test_a_checkpoint_that_needs_code_is_refused(joey, tmp_path):
    model, _, folder = joey
    torch.save({"model_state": model.state_dict(), "args": argparse.Namespace(lr=0.1)}, tmp_path / "evil.ckpt")
    with pytest.raises(CheckpointError, match=r"evil\.ckpt: refused: it holds an object of type argparse\.Namespace"):
        import_joeynmt_files(folder, ckpt=tmp_path / "evil.ckpt")


def test_mismatched_vocabularies_and_configs_are_refused(joey, tmp_path):
    _, _, folder = joey
    short = tmp_path / "short.txt"
    short.write_text("\n".join((folder / "src_vocab.txt").read_text().splitlines()[:-1]))
    with pytest.raises(CheckpointError, match=r"the src vocabulary has 11 tokens .* has 12 rows"):
        import_joeynmt_files(folder, src_vocab=short)
    cfg = yaml.safe_load((folder / "config.yaml").read_text())
    cfg["model"]["decoder"]["hidden_size"] = 32
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(CheckpointError, match="sizes differ"):
        import_joeynmt_files(tmp_path / "config.yaml", ckpt=folder / "best.ckpt")
    cfg["model"]["decoder"] = {**cfg["model"]["decoder"], "type": "transformer", "hidden_size": 16}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(CheckpointError, match=r"model.decoder.type is 'transformer'"):
        import_joeynmt_files(tmp_path / "config.yaml", ckpt=folder / "best.ckpt")


def test_cli_imports_and_refuses_in_one_line(joey, tmp_path, capsys, monkeypatch):
    _, _, folder = joey
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "models"))
    code, out, err = run(capsys, "import-joeynmt", str(folder / "config.yaml"), "--out", "tiny")
    assert code == 0 and "tiny.safetensors" in out
    assert load(str(tmp_path / "models" / "tiny.safetensors")).translate("a b c").target_tokens[:3] == ["c", "b", "a"]
    code, out, err = run(capsys, "import-joeynmt", str(tmp_path), "--out", "other")
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and "not a JoeyNMT model folder" in err


@pytest.mark.parametrize(
    ("attention", "rnn", "layers", "feeding"), [("bahdanau", "gru", 1, True), ("luong", "lstm", 2, False)]
)
def test_the_folders_other_tests_write_have_joeynmts_names_and_shapes(attention, rnn, layers, feeding):
    """tests/support/joeynmt_files.py stands in for JoeyNMT where it is not needed: it must match it."""
    cfg = joey_config(attention, rnn, layers, feeding)
    vocab = Vocabulary(["a", "b", "c"], SPECIALS)
    real = joey_model.build_model(cfg["model"], src_vocab=vocab, trg_vocab=vocab).state_dict()
    fake = joey_state(cfg, len(vocab), len(vocab))
    assert {k: tuple(v.shape) for k, v in fake.items()} == {k: tuple(v.shape) for k, v in real.items()}
