"""Word links from attention: argmax, threshold, symmetrisation, words of a model with its reverse,
a corpus."""

import numpy as np
import pytest

from attnviz.data.pairs import Corpus, make_pair
from attnviz.decoding import argmax_links
from attnviz.errors import DataError, InputError
from attnviz.links.extract import (
    SYMMETRIC,
    _word_alignment,
    align_corpus,
    align_words,
    symmetrise,
    threshold_links,
    transpose,
)
from attnviz.links.reading import Reading
from tests.support.tiny import WORD, tiny_translator

# 4 source x 4 target words. Forward (one link per target word): t0-s0, t1-s1, t2-s2, t3-s0.
# Backward (one per source word): s0-t0, s1-t1, s2-t2, s3-t2. (0, 3) touches no other link.
FWD = {(0, 0), (1, 1), (2, 2), (0, 3)}
BWD = {(0, 0), (1, 1), (2, 2), (3, 2)}


def test_argmax_and_threshold_links():
    w = np.array([[0.7, 0.2, 0.1], [0.1, 0.45, 0.45], [0.0, 0.0, 0.0]])  # [tgt, src]
    assert argmax_links(w) == {(0, 0), (1, 1)}  # ties go to the first source; an all-zero row has no link
    assert threshold_links(w, 0.3) == {(0, 0), (1, 1), (2, 1)}
    assert threshold_links(w, 0.8) == set()
    with pytest.raises(InputError, match=r"in \(0, 1\]"):
        threshold_links(w, 0.0)
    assert transpose({(0, 2), (1, 0)}) == {(2, 0), (0, 1)}


def test_intersection_and_union():
    assert symmetrise(FWD, BWD, "intersection") == {(0, 0), (1, 1), (2, 2)}
    assert symmetrise(FWD, BWD, "union") == FWD | BWD


def test_grow_diag_adds_neighbours_and_final_adds_the_rest():
    # (3, 2) neighbours (2, 2) and aligns the unaligned source word 3: grown.
    # (0, 3) neighbours no link: only "final" adds it (target 3 is unaligned, source 0 is not).
    assert symmetrise(FWD, BWD, "grow-diag") == {(0, 0), (1, 1), (2, 2), (3, 2)}
    assert symmetrise(FWD, BWD, "grow-diag-final") == {(0, 0), (1, 1), (2, 2), (3, 2), (0, 3)}
    assert symmetrise(FWD, BWD, "grow-diag-final-and") == {(0, 0), (1, 1), (2, 2), (3, 2)}


def test_final_and_adds_links_whose_words_are_both_unaligned():
    fwd, bwd = {(0, 1)}, {(1, 0)}  # no agreement, not neighbours of anything aligned
    assert symmetrise(fwd, bwd, "intersection") == set()
    assert symmetrise(fwd, bwd, "grow-diag") == set()
    assert symmetrise(fwd, bwd, "grow-diag-final-and") == {(0, 1), (1, 0)}
    with pytest.raises(InputError, match="unknown symmetrisation"):
        symmetrise(fwd, bwd, "grow")


def test_align_words_on_a_reversing_model(trained):
    wa = align_words(trained, "a b c d", "d c b a")
    assert wa.source_words == ["a", "b", "c", "d"] and wa.target_words == ["d", "c", "b", "a"]
    assert wa.links == [(0, 3), (1, 2), (2, 1), (3, 0)] and wa.to_pharaoh() == "0-3 1-2 2-1 3-0"
    with pytest.raises(InputError, match="as the reverse model"):
        align_words(trained, "a b", "b a", "union")
    with pytest.raises(InputError, match="unknown method"):
        align_words(trained, "a b", "b a", "best")


def test_symmetric_methods_lie_between_intersection_and_union(trained):
    # reversing is its own inverse, so the model serves as its own reverse model
    links = {m: set(align_words(trained, "a b c d", "d c b a", m, reverse=trained).links) for m in SYMMETRIC}
    forward = set(align_words(trained, "a b c d", "d c b a").links)
    assert links["intersection"] <= forward <= links["union"]
    for method in ("grow-diag", "grow-diag-final", "grow-diag-final-and"):
        assert links["intersection"] <= links[method] <= links["union"]
    assert links["grow-diag"] <= links["grow-diag-final-and"] <= links["grow-diag-final"]


def test_align_corpus_reads_the_given_words(trained):
    aligned = align_corpus(trained, [["a", "b", "c", "d"]], [["d", "c", "b", "a"]])
    assert aligned.links == [[(0, 3), (1, 2), (2, 1), (3, 0)]] and aligned.skipped == {} and aligned.aligned == 1
    # "c." is one given word: the model's "c" and "." are merged back into it, never a fourth word
    words = align_corpus(trained, [["a", "b", "c."]], [["c", "b", "a"]])
    assert len(words.links[0]) == 3 and {i for i, _ in words.links[0]} <= {0, 1, 2}
    with pytest.raises(DataError, match="line 1: an empty sentence"):
        align_corpus(trained, [[]], [["a"]])


def test_align_corpus_reads_unknown_words_and_skips_a_pair_too_long(trained):
    long = ["a"] * trained.max_source_tokens + ["b"]
    aligned = align_corpus(trained, [["a", "zebra", "b"], long, ["c"]], [["b", "qq", "a"], ["a"], ["c"]])
    assert aligned.links[0] is not None and len(aligned.links[0]) == 3  # zebra, qq: <unk> inside the sentence
    assert aligned.unknown[0] == (1, 1) and aligned.with_unknown() == [0]
    assert aligned.links[1] is None and "this model reads at most" in aligned.skipped[1]
    assert aligned.links[2] == [(0, 0)] and aligned.aligned == 2


def test_align_corpus_in_chunks_gives_the_links_of_one_pass(trained, monkeypatch):
    """The corpus is forced a chunk at a time (its attention dropped once it is links): the links,
    the skipped pairs and their numbers are those of the corpus in one pass."""
    from attnviz.links import extract

    long = ["a"] * trained.max_source_tokens + ["b"]
    sources = [["a", "b", "c", "d"], long, ["c"], ["a", "zebra", "b"], ["d", "c"]]
    targets = [["d", "c", "b", "a"], ["a"], ["c"], ["b", "qq", "a"], ["c", "d"]]
    whole = align_corpus(trained, sources, targets)
    monkeypatch.setattr(extract, "CORPUS_CHUNK", 2)
    forced = []
    batch = type(trained).align_batch
    monkeypatch.setattr(
        type(trained), "align_batch", lambda self, s, t, **kw: forced.append(len(s)) or batch(self, s, t, **kw)
    )
    chunked = align_corpus(trained, sources, targets)
    assert forced == [1, 2, 1]  # pairs 0-1 (1 too long: skipped), 2-3, 4: two at most at once
    assert (chunked.links, chunked.skipped, chunked.unknown) == (whole.links, whole.skipped, whole.unknown)
    assert chunked.skipped.keys() == {1}


def _letters_to_digits(flip: bool):
    pairs = []
    for k in range(12):
        letters = [chr(ord("a") + (k + i) % 6) for i in range(3)]
        digits = [str((k + i) % 6) for i in range(3)]
        src, tgt = (digits, letters) if flip else (letters, digits)
        pairs.append(make_pair(" ".join(src), " ".join(tgt), WORD, WORD, []))
    return Corpus("letters", pairs, pairs[:2], pairs[:2], WORD, WORD, True, [])


def test_a_reverse_model_of_the_wrong_direction_is_refused():
    forward, backward = (tiny_translator(_letters_to_digits(flip)) for flip in (False, True))
    assert align_words(forward, "a b c", "0 1 2", "intersection", reverse=backward).links
    for same_direction in (forward, tiny_translator(_letters_to_digits(False), "dot", "luong")):
        with pytest.raises(InputError, match="reads the model's own direction"):
            align_words(forward, "a b c", "0 1 2", "grow-diag-final", reverse=same_direction)
    forward.meta["task"], backward.meta["task"] = "multi30k-en-fr", "multi30k-de-en"
    with pytest.raises(InputError, match=r"translates multi30k-de-en; .* a multi30k-fr-en model"):
        align_corpus(forward, [["a", "b"]], [["0", "1"]], "union", reverse=backward)
    backward.meta["task"] = "multi30k-fr-en"
    assert align_corpus(forward, [["a", "b"]], [["0", "1"]], "union", reverse=backward).aligned == 1


def test_text_where_words_go_and_a_name_where_a_model_goes_are_refused(trained):
    with pytest.raises(DataError, match="pair 1 is text; align_corpus takes each sentence as a list of its words"):
        align_corpus(trained, ["a b"], ["b a"])
    with pytest.raises(InputError, match=r"reverse must be a loaded model .*got str"):
        align_words(trained, "a b", "b a", "union", reverse="multi30k-en-de-additive-bahdanau")


def test_a_symmetric_method_without_a_reverse_model_says_which_model_and_how_to_give_it(trained, monkeypatch):
    with pytest.raises(InputError, match="give a model of the opposite direction as the reverse model") as e:
        align_words(trained, "a b", "b a", "grow-diag-final")
    assert "reverse=attnviz.load(NAME) in Python, --reverse-model NAME on the command line" in str(e.value)
    monkeypatch.setitem(trained.meta, "task", "multi30k-en-fr")  # the fixture is shared: set back after
    with pytest.raises(InputError, match="union combines both directions; give a multi30k-fr-en model as the reverse"):
        align_words(trained, "a b", "b a", "union")


def test_a_weight_equal_to_the_threshold_is_a_link():
    w = np.array([[0.5, 0.25, 0.25], [0.125, 0.125, 0.75]])  # [tgt, src], exact in binary
    assert threshold_links(w, 0.25) == {(0, 0), (1, 0), (2, 0), (2, 1)}
    assert threshold_links(w, 0.75) == {(2, 1)}


def test_grow_diag_grows_along_a_diagonal():
    # the intersection is (0, 0); the union's (1, 1) touches it only diagonally and aligns new words
    fwd, bwd = {(0, 0), (1, 1)}, {(0, 0)}
    assert symmetrise(fwd, bwd, "grow-diag") == {(0, 0), (1, 1)}
    assert symmetrise({(0, 0), (1, 0)}, {(0, 0)}, "grow-diag") == {(0, 0), (1, 0)}  # a side neighbour, too


def test_grow_diag_scans_as_moses_symal_does():
    """The grow steps are greedy, so the order they visit links decides ties: symal visits (target,
    source) points target-major, its neighbours in (target, source) steps (-1, 0), (0, -1), ...; a scan
    source-major gave 0-1 1-2 2-0 2-1 here, where symal gives 0-0 0-1 1-2 2-1."""
    fwd = {(0, 1), (1, 2), (2, 0)}  # one source word per target word
    bwd = {(0, 0), (1, 2), (2, 1)}  # one target word per source word
    for method in ("grow-diag", "grow-diag-final", "grow-diag-final-and"):
        assert symmetrise(fwd, bwd, method) == {(0, 0), (0, 1), (1, 2), (2, 1)}, method


def _reading(weights, source, target):
    return Reading(
        np.array(weights, dtype=float), source, target, list(range(len(source))), list(range(len(target))), None, ""
    )


def test_the_reverse_models_links_are_transposed_before_they_are_combined():
    fwd = _reading([[0, 0, 1], [1, 0, 0]], ["x", "y", "z"], ["a", "b"])  # a-z, b-x: links (2, 0), (0, 1)
    bwd = _reading([[0, 1], [1, 0], [1, 0]], ["a", "b"], ["x", "y", "z"])  # x-b, y-a, z-a
    # the reverse links as (source, target): (0, 1), (1, 0), (2, 0)
    assert _word_alignment(fwd, bwd, "intersection", 0.3).links == [(0, 1), (2, 0)]
    assert _word_alignment(fwd, bwd, "union", 0.3).links == [(0, 1), (1, 0), (2, 0)]
