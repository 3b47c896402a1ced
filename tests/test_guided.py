"""Guided alignment: the loss and its gradient, links carried through batching into training, where the
links come from (eflomal and its cache, a Pharaoh file, gold), recipes and the command line."""

import math
import random
from pathlib import Path

import pytest
import torch

from attnviz.cli.main import main as cli_main
from attnviz.data.pairs import Corpus, Pair, make_pair
from attnviz.data.tokenize import Tokenizer
from attnviz.errors import ConfigError, DataError, InputError
from attnviz.store import recipe_path
from attnviz.store.checkpoint import read_header
from attnviz.training import distributed
from attnviz.training.batches import make_batches
from attnviz.training.config import TrainConfig
from attnviz.training.fit import _loss_and_accuracy, fit
from attnviz.training.guided import guided_alignment_loss, piece_links, reference_alignment
from attnviz.training.guided_links import GuidedConfig, training_links
from attnviz.training.recipes import Recipe, run_recipe
from tests.conftest import WORD, reverse_corpus, tiny_translator
from tests.test_train import RECIPE


def test_reference_rows_are_uniform_over_linked_sources_and_masked_elsewhere():
    ref, mask = reference_alignment([[(0, 0), (2, 0), (1, 1)], [(1, 0)]], tgt_len=3, src_len=4)
    assert ref.shape == (2, 3, 4) and mask.tolist() == [[True, True, False], [True, False, False]]
    assert ref[0, 0].tolist() == [0.5, 0.0, 0.5, 0.0] and ref[0, 1].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert ref[0, 2].sum() == 0 and ref[1, 0].tolist() == [0.0, 1.0, 0.0, 0.0]
    with pytest.raises(InputError, match="outside the batch's 4 source and 3 target"):
        reference_alignment([[(4, 0)]], tgt_len=3, src_len=4)


def test_loss_by_hand():
    attention = torch.tensor([[[0.5, 0.25, 0.25], [0.1, 0.8, 0.1]]])  # [1, 2, 3]
    ref, mask = reference_alignment([[(0, 0), (1, 0)]], tgt_len=2, src_len=3)  # row 1 has no link
    loss = guided_alignment_loss(attention, ref, mask)
    # only row 0 counts: -(0.5 log 0.5 + 0.5 log 0.25)
    assert loss.item() == pytest.approx(-(0.5 * math.log(0.5) + 0.5 * math.log(0.25)), rel=1e-6)
    assert guided_alignment_loss(attention, torch.zeros_like(ref), torch.zeros_like(mask)).item() == 0.0
    with pytest.raises(InputError, match="disagree"):
        guided_alignment_loss(attention, ref[:, :1], mask)


def test_gradient_matches_finite_differences_and_pulls_towards_the_links():
    torch.manual_seed(0)
    scores = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)  # [B, T, S] energies
    ref, mask = reference_alignment([[(0, 0), (3, 1)], [(2, 2), (1, 2)]], tgt_len=3, src_len=4)

    def loss_of(energies):
        return guided_alignment_loss(torch.softmax(energies, dim=-1), ref.double(), mask)

    assert torch.autograd.gradcheck(loss_of, (scores,))
    loss_of(scores).backward()
    grad = scores.grad
    # through the softmax the gradient is (alpha - A) / |aligned rows|: negative on linked cells
    expected = (torch.softmax(scores, -1) - ref.double()) * mask.unsqueeze(-1) / mask.sum()
    torch.testing.assert_close(grad, expected.detach())
    assert grad[0, 0, 0] < 0 and grad[0, 1, 3] < 0 and torch.all(grad[0, 2] == 0)


def test_word_links_expand_to_pieces():
    assert piece_links([(0, 1), (1, 0)], ["Xylo@@", "phon", "ist"], ["is", "xylo@@", "phone"]) == [
        (0, 1), (0, 2), (1, 1), (1, 2), (2, 0),
    ]  # fmt: skip
    with pytest.raises(InputError, match="outside the 2 source and 2 target words"):
        piece_links([(2, 0)], ["a@@", "b", "c"], ["x", "y"])


# --- wired into training -------------------------------------------------------------------


def test_moving_attention_towards_the_links_lowers_the_loss():
    torch.manual_seed(1)
    attention = torch.softmax(torch.randn(2, 3, 5), dim=-1)  # [B, T, S]
    ref, mask = reference_alignment([[(0, 0), (4, 1), (2, 1)], [(3, 2)]], tgt_len=3, src_len=5)
    losses = [guided_alignment_loss((1 - a) * attention + a * ref, ref, mask).item() for a in (0, 0.25, 0.5, 0.9)]
    assert losses == sorted(losses, reverse=True) and losses[-1] < losses[0] / 3


def _numbered_corpus(n: int = 60) -> Corpus:
    """Pair k reads ``w<k> ...`` so a batch row names its pair; its links are a shifted diagonal."""
    pairs = []
    for k in range(n):
        length = 2 + k % 5
        words = [f"w{k}"] + [chr(ord("a") + (k + i) % 7) for i in range(length - 1)]
        pairs.append(make_pair(" ".join(words), " ".join(reversed(words)), WORD, WORD))
    return Corpus("numbered", pairs, [], [], WORD, WORD, False, [])


def _links_of(pair) -> list[tuple[int, int]]:
    n_src, n_tgt = len(pair.source_tokens), len(pair.target_tokens)
    return [(i, (i + len(pair.source)) % n_tgt) for i in range(n_src) if i % 2 == 0]


def test_links_travel_with_their_pairs_through_shuffling_and_bucketing():
    corpus = _numbered_corpus()
    src_vocab, tgt_vocab = corpus.build_vocabs()
    links = [_links_of(p) for p in corpus.train]
    by_name = {p.source_tokens[0]: p for p in corpus.train}
    batches = make_batches(corpus.train, src_vocab, tgt_vocab, 8, random.Random(3), links)
    assert [src[0, 0] for src, *_ in batches] != sorted(src[0, 0] for src, *_ in batches)  # really reordered
    seen = 0
    for src, lengths, tgt, grid in batches:
        assert grid.shape == (src.size(0), tgt.size(1) - 1, src.size(1)) and grid.dtype == torch.bool
        for row in range(src.size(0)):
            pair = by_name[src_vocab.decode([int(src[row, 0])])[0]]
            expected = torch.zeros_like(grid[row])
            for i, j in _links_of(pair):
                expected[j, i] = True
                # row j is the step that writes target token j; column i reads source token i
                assert tgt_vocab.decode([int(tgt[row, j + 1])])[0] == pair.target_tokens[j]
                assert src_vocab.decode([int(src[row, i])])[0] == pair.source_tokens[i]
            assert torch.equal(grid[row], expected)
            assert not grid[row, :, lengths[row] - 1 :].any()  # nothing on <eos> or padding
            seen += 1
    assert seen == len(corpus.train)
    assert all(len(b) == 3 for b in make_batches(corpus.train, src_vocab, tgt_vocab, 8, random.Random(3)))


def test_links_outside_their_pair_or_one_list_short_are_refused():
    corpus = _numbered_corpus(4)
    src_vocab, tgt_vocab = corpus.build_vocabs()
    bad = [[(0, 0)], [(0, 0)], [(4, 0)], [(0, 0)]]  # pair 3 has 4 source tokens (w2 c d e)
    with pytest.raises(InputError, match=r"training pair 3 \('w2 c d e'\): link 4-0 is outside its 4 source"):
        make_batches(corpus.train, src_vocab, tgt_vocab, 2, None, bad)
    with pytest.raises(InputError, match="3 link lists for 4 pairs"):
        make_batches(corpus.train, src_vocab, tgt_vocab, 2, None, bad[:3])


def _align_loss(translator, corpus, links) -> float:
    batches = make_batches(corpus.train, translator.src_vocab, translator.tgt_vocab, 64, None, links)
    translator.model.eval()
    with torch.no_grad():
        losses = [_loss_and_accuracy(translator.model, b, "cpu", 0.0, 1.0)[3] * b[0].size(0) for b in batches]
    return float(sum(losses)) / len(corpus.train)


@pytest.mark.parametrize(("score", "style"), [("additive", "bahdanau"), ("dot", "luong")])
def test_guided_training_pulls_attention_towards_the_links(score, style):
    corpus = reverse_corpus(120)
    links = [p.sure for p in corpus.train]  # anti-diagonal
    cfg = {"epochs": 5, "batch_size": 16, "lr": 1e-2, "patience": None, "seed": 0}
    plain, guided = tiny_translator(corpus, score, style), tiny_translator(corpus, score, style)
    fit(plain, corpus, TrainConfig(**cfg), links=links)  # weight 0: the links are not used
    steps = []
    fit(guided, corpus, TrainConfig(**cfg, guided_weight=1.0), callback=steps.append, links=links)
    aligns = [p.align_loss for p in steps if p.kind == "step"]
    assert aligns[-1] < 0.75 * aligns[0]
    assert _align_loss(guided, corpus, links) < 0.6 * _align_loss(plain, corpus, links)
    assert guided.meta["recipe"]["guided_weight"] == 1.0
    epochs = [p for p in steps if p.kind == "epoch"]
    assert all(p.as_row()["align_loss"] > 0 for p in epochs)


def test_a_guided_weight_without_links_is_a_config_error(corpus):
    with pytest.raises(ConfigError, match="needs the links of every training pair"):
        fit(tiny_translator(corpus), corpus, TrainConfig(epochs=1, guided_weight=0.3))
    with pytest.raises(ConfigError, match="guided_weight=11"):
        TrainConfig(guided_weight=11)


def test_a_rank_shards_the_links_with_its_rows():
    second = object.__new__(distributed.DDPGroup)  # rank 1 of 2, without a process group
    second.rank, second.world = 1, 2
    corpus = reverse_corpus(3)
    [(src, lengths, tgt, grid)] = make_batches(corpus.train[1:], *corpus.build_vocabs(), 2, None, [[(0, 0)], [(1, 2)]])
    (s, _, t, g), _ = second.shard((src, lengths, tgt, grid))
    assert g.shape == (1, t.size(1) - 1, s.size(1)) and torch.equal(g[0], grid[1, : t.size(1) - 1, : s.size(1)])
    (_, _, _, g), weight = second.shard((src[:1], lengths[:1], tgt[:1], grid[:1]))
    assert weight == 0 and not g.any()  # a rank without rows: no links either


# --- where the links come from -------------------------------------------------------------

BPE_WORDS = Tokenizer("word", lowercase=True)


def _subword_corpus() -> Corpus:
    """Two pairs whose source words are cut into pieces (as ``subwords`` would)."""
    pairs = [
        Pair("Xylophon spielt", "xylophone plays", ["xylo@@", "phon", "spielt"], ["xylophone", "plays"]),
        Pair("Ein Hund", "a dog", ["ein", "hu@@", "n@@", "d"], ["a", "dog"]),
    ]
    return Corpus("pieces", pairs, [], [], BPE_WORDS, BPE_WORDS, False, [])


def test_a_links_file_gives_word_links_that_become_piece_links(tmp_path):
    path = tmp_path / "links.txt"
    path.write_text("0-0 1-1\n0-0 1-1\n")
    links, source = training_links(_subword_corpus(), GuidedConfig(links=str(path)))
    assert source == str(path)
    assert links == [[(0, 0), (1, 0), (2, 1)], [(0, 0), (1, 1), (2, 1), (3, 1)]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0-0 1-1\n", r"links.txt line 2: the file has 1 lines for 2 training pairs"),
        ("0-0 1-1\n0-0\n0-0\n", r"links.txt line 3: the file has 3 lines for 2 training pairs"),
        ("0-0 1-1\n0-0 2-1\n", r"links.txt line 2: link 2-1 is outside its pair's 2 source and 2 target words"),
        ("0-0 1-1\n0-0 x\n", r"links.txt line 2: 'x' is not a Pharaoh link"),
    ],
)
def test_a_bad_links_file_is_an_error_naming_the_line(tmp_path, text, message):
    path = tmp_path / "links.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=message):
        training_links(_subword_corpus(), GuidedConfig(links=str(path)))


def test_missing_links_and_unknown_settings_are_config_errors(tmp_path):
    with pytest.raises(DataError, match="no links file at"):
        training_links(_subword_corpus(), GuidedConfig(links=str(tmp_path / "none.txt")))
    with pytest.raises(ConfigError, match="has no gold links"):
        training_links(_subword_corpus(), GuidedConfig(links="gold"))
    chars = Tokenizer("char")
    dates = Corpus("dates", [make_pair("ab", "ab", chars, chars)], [], [], chars, chars, False, [])
    with pytest.raises(ConfigError, match="character-level and eflomal aligns words"):
        training_links(dates, GuidedConfig())
    for bad in ({"weight": 0}, {"weight": "high"}, {"method": "mean"}, {"links": ""}):
        with pytest.raises(ConfigError):
            GuidedConfig(**bad)


def test_eflomal_links_are_computed_once_and_read_back_from_the_cache(tmp_path, monkeypatch):
    pytest.importorskip("eflomal")
    sentences = [("ein hund läuft", "a dog runs"), ("eine katze läuft", "a cat runs"), ("ein hund", "a dog"),
                 ("die katze schläft", "the cat sleeps"), ("der hund schläft", "the dog sleeps")] * 4  # fmt: skip
    corpus = Corpus("tiny", [make_pair(s, t, WORD, WORD) for s, t in sentences], [], [], WORD, WORD, False, [])
    links, source = training_links(corpus, GuidedConfig(), tmp_path)
    assert Path(source).parent == tmp_path and Path(source).name.startswith("eflomal-grow-diag-final-and-")
    assert len(links) == len(sentences) and all(links)
    assert (0, 0) in links[0]  # ein - a

    def no_second_run(*args, **kwargs):
        raise AssertionError("eflomal ran again")

    monkeypatch.setattr("attnviz.training.guided_links.run_eflomal", no_second_run)
    assert training_links(corpus, GuidedConfig(), tmp_path) == (links, source)
    corpus.train[0] = make_pair("ein hund rennt", "a dog runs", WORD, WORD)  # other words: another cache entry
    with pytest.raises(AssertionError, match="eflomal ran again"):
        training_links(corpus, GuidedConfig(), tmp_path)


# --- recipes and the command line ----------------------------------------------------------

GUIDED_RECIPE = {
    **RECIPE,
    "name": "tiny-guided",
    "train": {**RECIPE["train"], "epochs": 2},
    "guided": {"weight": 0.5, "links": "gold"},  # the copy task's diagonal gold links
}


def test_a_guided_recipe_records_its_weight_and_links_and_resumes(tmp_path):
    out = tmp_path / "tiny.safetensors"
    recipe = Recipe(**GUIDED_RECIPE)
    epochs = []
    run_recipe(recipe, out, callback=lambda p: epochs.append(p) if p.kind == "epoch" else None,
               should_stop=lambda: len(epochs) >= 1, evaluate_split=None)  # fmt: skip
    assert read_header(out)["meta"]["progress"]["epoch"] == 1
    model = run_recipe(recipe, out, resume=True, evaluate_split=None)
    meta = read_header(out)["meta"]
    assert [row["epoch"] for row in meta["history"]] == [1, 2] and model.meta["history"] == meta["history"]
    assert all(row["align_loss"] > 0 for row in meta["history"])
    assert meta["guided"] == {"weight": 0.5, "links": "gold", "method": "grow-diag-final-and",
                              "links_file": "gold links of the training pairs"}  # fmt: skip
    assert meta["recipe"]["guided_weight"] == 0.5 and meta["recipe_full"]["guided"] == GUIDED_RECIPE["guided"]


def test_recipes_without_guidance_read_as_before_and_bad_guided_fields_are_refused():
    plain = Recipe(**{k: v for k, v in GUIDED_RECIPE.items() if k != "guided"})
    assert "guided" not in plain.to_dict() and plain.guided_config() is None
    with pytest.raises(ConfigError, match=r"unknown guided settings \['decay'\]"):
        Recipe(**{**GUIDED_RECIPE, "guided": {"weight": 0.3, "decay": 0.5}})
    with pytest.raises(ConfigError, match="set the guided weight in the guided field"):
        Recipe(**{**GUIDED_RECIPE, "train": {"guided_weight": 0.3}})


def test_the_shipped_guided_recipe_is_its_unguided_twin_plus_guidance():
    guided = Recipe.from_file(recipe_path("multi30k-de-en-additive-bahdanau-guided"))
    plain = Recipe.from_file(recipe_path("multi30k-de-en-additive-bahdanau"))
    assert guided.guided_config() == GuidedConfig(weight=0.1, links="eflomal")

    def what(recipe: Recipe) -> dict:  # the recipe less its name, guidance and device (where it ran)
        train = {k: v for k, v in recipe.train.items() if k != "device"}
        return {**recipe.to_dict(), "name": None, "guided": None, "train": train}

    assert what(guided) == what(plain)


def test_the_cli_trains_with_guidance_from_flags(tmp_path, capsys):
    out = tmp_path / "cli.safetensors"
    args = ["train", "--data", "reverse", "--n-train", "48", "--emb", "8", "--hidden", "16", "--attn", "8", "--epochs",
            "1", "--out", str(out), "--quiet", "--guided-weight", "0.7", "--guided-links", "gold"]  # fmt: skip
    assert cli_main(args) == 0
    meta = read_header(out)["meta"]
    assert meta["guided"]["weight"] == 0.7 and meta["recipe"]["guided_weight"] == 0.7
    capsys.readouterr()
    missing = ["--guided-links", str(tmp_path / "none.txt"), "--out", str(tmp_path / "x.safetensors")]
    assert cli_main(["train", "--data", "reverse", "--max-steps", "1", *missing]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no links file at" in err
