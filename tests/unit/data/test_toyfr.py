"""toy-fr: the phenomena give the links they should, checked by hand; the lexicon serves users."""

from __future__ import annotations

import pandas as pd

from attnviz.data import LEXICON, load_corpus
from attnviz.data.toyfr import Clause, NounPhrase, generate, to_pair, unknown_words, vocabulary

CAT = ("cat", "chat", "m")
CAR = ("car", "voiture", "f")
GARDEN = ("garden", "jardin", "m")
BLACK = ("black", "noir")
SLEEP = ("sleep", "", "dormir", "intr")
EAT = ("eat", "", "manger", "trans")
SEE = ("see", "", "voir", "trans")


def links(pair, kind="sure"):
    return {(pair.source_tokens[i], pair.target_tokens[j]) for i, j in getattr(pair, kind)}


def test_deterministic_and_links_in_range():
    assert generate(50, seed=3) == generate(50, seed=3)
    assert generate(50, seed=3) != generate(50, seed=4)
    for pair in generate(500, seed=1):
        assert set(pair.sure) <= set(pair.possible)
        for i, j in pair.possible:
            assert 0 <= i < len(pair.source_tokens) and 0 <= j < len(pair.target_tokens)
        for j in range(len(pair.target_tokens)):  # every French word comes from somewhere
            assert any(jj == j for _, jj in pair.possible), pair


def test_adjective_after_noun_gives_crossing_links():
    pair = to_pair(Clause(NounPhrase("the", CAT, adjective=BLACK), SLEEP))
    assert pair.source == "the black cat sleeps." and pair.target == "le chat noir dort."
    assert {(1, 2), (2, 1)} <= set(pair.sure)  # black->noir crosses cat->chat


def test_negation_links_one_word_to_two():
    pair = to_pair(Clause(NounPhrase("the", CAT), EAT, object=NounPhrase("the", ("apple", "pomme", "f")), negated=True))
    assert pair.target == "le chat ne mange pas la pomme."
    assert {j for i, j in pair.sure if pair.source_tokens[i] == "not"} == {2, 4}
    assert ("does", "mange") in links(pair, "possible") - links(pair)


def test_de_le_contracts_to_du_two_words_to_one():
    door = NounPhrase("the", ("door", "porte", "f"), of=NounPhrase("the", GARDEN))
    pair = to_pair(Clause(door, SLEEP, preposition="near", place=NounPhrase("the", GARDEN)))
    assert pair.target == "la porte du jardin dort près du jardin."
    du = pair.target_tokens.index("du")
    assert {pair.source_tokens[i] for i, j in pair.sure if j == du} == {"of", "the"}
    assert ("near", "près") in links(pair) and ("near", "du") in links(pair)


def test_gender_and_number_agreement():
    pair = to_pair(Clause(NounPhrase("the", CAR, plural=True, adjective=BLACK), SLEEP))
    assert pair.target == "les voitures noires dorment."
    pair = to_pair(Clause("we", SEE, object=NounPhrase("a", CAR, adjective=("old", "vieux/vieille"))))
    assert pair.source == "we see an old car." and pair.target == "nous voyons une voiture vieille."


def test_questions_invert_or_use_est_ce_que():
    pair = to_pair(Clause("you", SEE, object=NounPhrase("the", CAT), question=True))
    assert pair.source == "do you see the cat?" and pair.target == "voyez vous le chat?"
    assert {("you", "vous"), ("see", "voyez")} <= links(pair)
    pair = to_pair(Clause(NounPhrase("the", CAT), SLEEP, question=True))
    assert pair.target == "est-ce que le chat dort?"
    assert ("does", "est-ce") in links(pair) and ("does", "que") in links(pair, "possible")


def test_lexicon_and_user_sentences():
    frame = pd.DataFrame(LEXICON)
    assert list(frame.columns) == ["english", "french", "pos", "gender"]
    assert len(frame) >= 200 and set(frame.loc[frame.pos == "noun", "gender"]) == {"m", "f"}
    assert unknown_words("The black cats do not eat my apples.") == []
    assert unknown_words("the zebra eats") == ["zebra"]
    known = vocabulary()
    assert all(t in known for p in generate(300, seed=2) for t in p.source_tokens)


def test_training_split_covers_the_lexicon():
    corpus = load_corpus("toy-fr", n_train=1000, n_valid=50, n_test=50)
    seen = {t for p in corpus.train for t in p.source_tokens}
    nouns = [row["english"] for row in LEXICON if row["pos"] == "noun"]
    assert all(n in seen or n + "s" in seen or n + "es" in seen for n in nouns if n not in ("mouse", "woman"))
