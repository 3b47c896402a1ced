"""Reading attention as words: <eos> hidden and renormalised, subword pieces merged."""

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.links.reading import caption, hide_eos, merge_pieces, read, whole_rows


def rows(n_tgt: int, n_src: int, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).random((n_tgt, n_src))
    return w / w.sum(axis=1, keepdims=True)  # [tgt, src] softmax-like rows


def test_hide_eos_drops_the_last_column_and_renormalises():
    w = np.array([[0.2, 0.3, 0.5], [0.0, 0.0, 1.0], [0.6, 0.4, 0.0]])
    hidden, eos_mass = hide_eos(w, ["a", "b", "<eos>"])
    np.testing.assert_allclose(hidden, [[0.4, 0.6], [0.0, 0.0], [0.6, 0.4]])
    np.testing.assert_allclose(eos_mass, [0.5, 1.0, 0.0])
    with pytest.raises(InputError, match="does not end with <eos>"):
        hide_eos(w, ["a", "b", "c"])


def test_hide_eos_keeps_a_local_p_row_its_own_total():
    # local-p multiplies the window's softmax by a Gaussian: its rows sum to less than 1
    w = np.array([[0.1, 0.04, 0.0], [0.2, 0.1, 0.1], [0.0, 0.0, 0.3]])
    hidden, eos_mass = hide_eos(w, ["a", "b", "<eos>"], keep_total=True)
    np.testing.assert_allclose(hidden[0], [0.1, 0.04])  # nothing on <eos>: the row as the model weighted it
    np.testing.assert_allclose(hidden[1], [0.4 * 2 / 3, 0.4 / 3])  # its total, 0.4, over the two words
    np.testing.assert_allclose(hidden[2], [0.0, 0.0])
    np.testing.assert_allclose(eos_mass, [0.0, 0.1, 0.3])
    assert not whole_rows(w) and whole_rows(rows(3, 4)) and whole_rows(np.array([[0.5, 0.5], [0.0, 0.0]]))
    assert caption(True, False, whole=False).endswith("keeps its total (less than 1).")
    read_off = read(w, ["a", "b", "<eos>"], ["x", "y", "z"], merge=False, hide=False)
    assert read_off.caption.endswith("(under 1 in all).")
    # link extraction reads distributions: hidden, each row sums to 1 again (the all-<eos> row stays 0)
    read_on = read(w, ["a", "b", "<eos>"], ["x", "y", "z"], merge=False)
    np.testing.assert_allclose(read_on.weights.sum(axis=1), [1.0, 1.0, 0.0])
    assert read_on.caption.endswith("so each row still sums to 1.")


def test_source_pieces_are_summed_and_target_pieces_averaged():
    w = np.array(
        [
            [0.1, 0.2, 0.3, 0.4],  # xylo@@
            [0.5, 0.1, 0.1, 0.3],  # phone
            [0.2, 0.2, 0.2, 0.4],  # is
        ]
    )
    merged, src_words, tgt_words, src_index, tgt_index = merge_pieces(
        w, ["Xylo@@", "phon", "ist", "<eos>"], ["xylo@@", "phone", "is"]
    )
    assert src_words == ["Xylophon", "ist", "<eos>"] and tgt_words == ["xylophone", "is"]
    assert src_index == [0, 0, 1, 2] and tgt_index == [0, 0, 1]
    # row 0 = mean of rows 0 and 1 = [.3, .15, .2, .35]; columns 0+1 summed
    np.testing.assert_allclose(merged, [[0.45, 0.2, 0.35], [0.4, 0.2, 0.4]])


def test_read_gives_word_rows_that_sum_to_one():
    src = ["ein", "orange@@", "farb@@", "enen", "Hut", "<eos>"]
    tgt = ["an", "orange", "hat", "<eos>"]
    reading = read(rows(len(tgt), len(src)), src, tgt)
    assert reading.source_words == ["ein", "orangefarbenen", "Hut"]
    assert reading.target_words == ["an", "orange", "hat", "<eos>"]
    assert reading.weights.shape == (4, 3)
    np.testing.assert_allclose(reading.weights.sum(axis=1), 1.0)
    assert reading.source_index == [0, 1, 1, 1, 2, -1]
    assert "merged" in reading.caption and "<eos> is hidden" in reading.caption


def test_read_without_pieces_says_only_what_it_did():
    src, tgt = ["a", "b", "<eos>"], ["x", "y", "<eos>"]
    w = rows(3, 3, seed=1)
    reading = read(w, src, tgt)
    assert reading.source_words == ["a", "b"] and "merged" not in reading.caption
    raw = read(w, src, tgt, hide=False, merge=False)
    np.testing.assert_array_equal(raw.weights, w)
    assert raw.caption == caption(False, False) and raw.eos_mass is None


def test_read_checks_the_shape():
    with pytest.raises(InputError, match="do not match 2 target and 3 source"):
        read(np.ones((3, 3)) / 3, ["a", "b", "<eos>"], ["x", "<eos>"])


def test_eos_share_is_the_mean_weight_on_the_source_eos_over_the_target_words():
    from attnviz.links import eos_column, eos_share

    weights = np.array([[0.6, 0.4], [0.2, 0.8], [0.0, 1.0]])  # rows: "a", "b", the final <eos>
    source, target = ["x", "<eos>"], ["a", "b", "<eos>"]
    assert eos_column(weights, source, target).tolist() == [0.4, 0.8]  # the stopping row left out
    assert eos_share(weights, source, target) == pytest.approx(0.6)
    assert eos_share(weights[:2], source, target[:2]) == pytest.approx(0.6)  # a decode cut before <eos>
    assert eos_share(weights, ["x", "y"], target) is None  # no <eos> column
    with pytest.raises(InputError, match="do not match"):
        eos_share(weights, source, target[:2])
