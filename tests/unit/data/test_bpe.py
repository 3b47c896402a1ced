"""Subword units: BPE learning and segmentation, corpora cut into pieces, and a subword model that
trains, saves, loads and translates back into words."""

from __future__ import annotations

import random

import pytest

from attnviz.data import load_corpus
from attnviz.data.bpe import BPE, MAX_WORD_CHARS, copy_source_words, copyable, join_pieces, learn_bpe, word_spans
from attnviz.errors import ConfigError, InputError
from attnviz.store.checkpoint import load_checkpoint, save
from attnviz.training.config import TrainConfig
from attnviz.training.fit import build_translator, fit

# Sennrich et al. (2016)'s example vocabulary, as a stream of word tokens.
WORDS = ["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3


def test_learns_the_most_frequent_pairs_first():
    merges = learn_bpe(WORDS, 4)
    # (e, s) and (s, t</w>) both occur 9 times: the alphabetically first wins, then the
    # merged "es" joins the final "t"; then (l, o) with 7; then (n, e), (e, w) or (w, est</w>) with 6.
    assert merges[:3] == [("e", "s"), ("es", "t</w>"), ("l", "o")]
    assert merges[3] == ("e", "w")


def test_learning_stops_when_no_pair_repeats():
    assert learn_bpe(["abc", "xyz"], 100) == []
    assert len(learn_bpe(WORDS, 1000)) < 20  # every word ends up one symbol; nothing left to merge


def test_segment_replays_merges_in_rank_order():
    bpe = BPE(learn_bpe(WORDS, 3))  # e+s, es+t</w>, l+o
    assert bpe.segment("lowest") == ("lo@@", "w@@", "est")
    assert bpe.segment("newest") == ("n@@", "e@@", "w@@", "est")
    assert bpe.segment("x") == ("x",)
    assert BPE([]).segment("abc") == ("a@@", "b@@", "c")


def test_pieces_join_back_into_the_words():
    rng = random.Random(0)
    alphabet = "abcdeéßøλ日本🙂"
    bpe = BPE.learn(("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9))) for _ in range(3000)), 200)
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(500)]
    assert join_pieces(bpe.segment_all(words)) == words
    assert join_pieces(["a@@", "b@@"]) == ["ab"]  # a dangling piece still yields its word


def test_word_spans_and_copies_of_whole_source_words():
    source = ["ein", "orange@@", "farb@@", "enen", "Hut", "<eos>"]
    assert word_spans(source) == [(0, 1), (1, 4), (1, 4), (1, 4), (4, 5), (5, 6)]
    # a copy of any piece gives the whole word; consecutive copies of one word give it once
    out = copy_source_words(["a", "<unk>", "<unk>", "hat", "<unk>"], {1: 2, 2: 3, 4: 1}, source)
    assert out == ["a", "orangefarbenen", "hat", "orangefarbenen"]
    assert copy_source_words(["a", "<unk>", "<unk>"], {1: 0, 2: 4}, source) == ["a", "ein", "Hut"]
    assert word_spans(["x@@"]) == [(0, 1)] and word_spans([]) == []


def test_overlong_words_stay_whole():
    word = "a" * (MAX_WORD_CHARS + 1)
    assert BPE.learn(WORDS, 10).segment(word) == (word,)


def test_equal_merges_are_equal_and_hash_alike():
    a, b = BPE(learn_bpe(WORDS, 5)), BPE(learn_bpe(WORDS, 5))
    assert a == b and hash(a) == hash(b) and a != BPE(learn_bpe(WORDS, 4))


def _tsv(tmp_path, n: int = 60) -> str:
    rng = random.Random(1)
    stems = ["haus", "garten", "tür", "hund", "katze", "baum"]
    rows = ["de\ten"]
    for _ in range(n):
        a, b = rng.sample(stems, 2)
        rows.append(f"Das {a}{b} ist groß.\tThe {b} {a} is big.")
    path = tmp_path / "pairs.tsv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return f"{path}?src=de&tgt=en"


def test_corpus_cut_into_subwords(tmp_path):
    spec = _tsv(tmp_path)
    words = load_corpus(spec, dedupe=False, n_valid=5, n_test=5)
    pieces = load_corpus(spec, dedupe=False, n_valid=5, n_test=5, subwords=[6, 0])
    assert pieces.source_tokenizer.bpe is not None and pieces.target_tokenizer.bpe is None
    assert "subword units: 6 source and 0 target BPE merges" in pieces.notes[-1]
    for w, p in zip(words.train + words.test, pieces.train + pieces.test, strict=True):
        assert p.target_tokens == w.target_tokens
        assert join_pieces(p.source_tokens) == w.source_tokens
        assert p.source_tokens == pieces.source_tokenizer.tokenize(p.source)
    assert sum(len(p.source_tokens) for p in pieces.train) > sum(len(p.source_tokens) for p in words.train)


@pytest.mark.parametrize("bad", [-1, [1, 2, 3], "many", [True, 2], 10**6])
def test_bad_subword_settings_are_refused(tmp_path, bad):
    with pytest.raises(ConfigError, match="subwords"):
        load_corpus(_tsv(tmp_path), subwords=bad)


def test_built_in_tasks_refuse_subwords():
    with pytest.raises(ConfigError, match="built-in tasks"):
        load_corpus("toy-fr", subwords=100)


def test_subword_model_trains_saves_and_translates_words(tmp_path):
    corpus = load_corpus(_tsv(tmp_path), dedupe=False, n_valid=5, n_test=5, subwords=20)
    tr = build_translator(corpus, seed=0, emb_dim=16, hidden_dim=24, attn_dim=12, dropout=0.0)
    fit(tr, corpus, TrainConfig(epochs=2, batch_size=16, patience=None))
    path = tmp_path / "bpe.safetensors"
    save(tr, path)
    loaded = load_checkpoint(path)
    assert loaded.src_tokenizer == corpus.source_tokenizer and loaded.tgt_tokenizer == corpus.target_tokenizer
    al = loaded.translate("Das Hausgarten ist groß.", beam_size=2)
    assert al.source_tokens[:-1] == corpus.source_tokenizer.split("Das Hausgarten ist groß.")
    assert "@@" not in loaded.text_of(al)
    assert all("@@" not in t for t in loaded.translate_batch(["Das Hausgarten ist groß.", "Der Baumhund."]))
    with pytest.raises(InputError):
        loaded.translate("   ")


def test_a_piece_never_starts_with_a_combining_mark():
    bpe = BPE.learn(["abc", "abd", "abc"], 3)  # no merge knows these letters: each word falls to its characters
    assert bpe.segment("हिन्दी") == ("हि@@", "न्@@", "दी")  # vowel signs and the virama stay on their letter
    assert bpe.segment("🏖️") == ("🏖️",)  # an emoji keeps its variation selector
    assert bpe.segment("👨\u200d👩\u200d👧") == ("👨\u200d👩\u200d👧",)  # a zero-width-joined sequence is one
    assert bpe.segment("🇩🇪") == ("🇩🇪",) and bpe.segment("👍🏽") == ("👍🏽",)  # a flag, a skin tone
    assert bpe.segment("xyz") == ("x@@", "y@@", "z")


def test_an_unk_may_copy_a_word_or_a_number_not_punctuation():
    assert copyable(["Zoe", ",", "42", "«", "Xylo@@", "phon", "…", "l'homme"]) == [
        True,
        False,
        True,
        False,
        True,
        True,
        False,
        True,
    ]
    assert copyable([",", "!"]) == [True, True]  # punctuation alone: any of it
    assert copyable([]) == []
