"""What-if: which steps changed, the two targets step by step, a replaced word, the figure with the
changed steps outlined."""

from __future__ import annotations

from attnviz.plots import changed_steps, replace_word, source_words, step_table, whatif_figure
from tests.support.alignments import make_alignment


def test_changed_steps_and_replaced_words():
    assert changed_steps(["a", "b", "<eos>"], ["a", "c", "<eos>", "x"]) == [1, 3]
    assert replace_word(["the", "cat", "."], 1, "dog", char_level=False) == "the dog ."
    assert replace_word(list("12 may"), 0, "3", char_level=True) == "32 may"
    pieces = ["ein", "orange@@", "farbenen", "hut"]
    assert source_words(pieces, char_level=False) == ["ein", "orangefarbenen", "hut"]
    assert replace_word(pieces, 1, "rote", char_level=False) == "ein rote hut"  # the word whole, not a piece
    assert replace_word(pieces, 2, "ball", char_level=False) == "ein orangefarbenen ball"


def test_the_step_table_marks_the_changed_steps():
    table = step_table(["a", "b"], ["a", "c", "d"], ("original", "forced"))
    assert list(table.columns) == ["step", "original", "forced", "changed"]
    assert table["forced"].tolist() == ["a", "c", "d"] and table["original"].tolist() == ["a", "b", ""]
    assert table["changed"].tolist() == [False, True, True]


def test_whatif_figure_fits_a_narrow_page_with_labels_apart():
    words = ["the", "small", "dog", "does", "not", "eat", "the", "big", "red", "apple", "of", "the", "girl"]
    a, b = make_alignment(words, words, seed=1), make_alignment(words, words, seed=2)
    fig = whatif_figure(a, b, [1], ("original", "forced"), max_width=880, title="Bahdanau · m · forced")
    assert fig.layout.width <= 880 and fig.layout.xaxis.tickangle in (-60, -90, 0)
    assert "Bahdanau" in fig.layout.title.text


def test_each_changed_step_on_the_map_is_outlined():
    a, b = make_alignment(["a", "b"], ["x", "y"], seed=1), make_alignment(["a", "b"], ["x", "z"], seed=2)
    fig = whatif_figure(a, b, [1, 7], ("original", "forced"))  # step 7 is past the target: no outline
    assert [(s.y0, s.y1) for s in fig.layout.shapes if s.type == "rect"] == [(0.5, 1.5)]
