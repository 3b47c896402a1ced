"""Attention files: the JSON and NPZ schema read into Alignment traces, strict validation with one
message naming the field (of the file, of a matrix in its list, of a stack), and attnviz's own export
read back as the same trace."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from attnviz.decoding import Alignment
from attnviz.errors import DataError
from attnviz.external import (
    EXAMPLE_ATTENTION,
    MAX_ATTENTION_BYTES,
    attention_json,
    attention_npz,
    read_attention,
    read_attention_file,
)
from attnviz.external.attention_file import sentencepiece_as_marks
from tests.support.alignments import make_alignment
from tests.support.cli import run


def as_bytes(obj) -> bytes:
    return json.dumps(obj).encode()


def npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def test_the_documented_example_reads_as_two_named_heads():
    f = read_attention(as_bytes(EXAMPLE_ATTENTION), "example.json")
    assert list(f.alignments) == ["layer 0 head 0", "layer 0 head 1"]
    al = f.alignments["layer 0 head 0"]
    assert al.source_tokens == ["the", "black", "cat", "<eos>"]  # a final </s> is attnviz's <eos>
    assert al.target_tokens == ["le", "chat", "noir", "<eos>"]
    np.testing.assert_allclose(al.weights[1], [0.05, 0.1, 0.8, 0.05])
    assert al.contexts.shape == (4, 0) and al.states.shape == (4, 0)
    np.testing.assert_allclose(np.exp(al.scores[0]), al.weights[0], rtol=1e-6)  # log-weights stand in
    assert f.metadata == {"toolkit": "hand-made example", "direction": "en-fr"}


def test_an_attnviz_export_reads_back_as_the_same_trace():
    al = make_alignment(["a", "b", "c"], ["x", "y"], positions=np.array([0.5, 1.0, 2.0]), window=2)
    al.scores[0, 0] = -np.inf  # outside a local window
    back = read_attention(attention_json(al).encode()).alignments["attention"]
    for name in ("weights", "scores", "contexts", "states", "positions"):
        np.testing.assert_allclose(getattr(back, name), getattr(al, name), atol=1e-6)
    assert (back.source_tokens, back.target_tokens) == (al.source_tokens, al.target_tokens)
    assert (back.score, back.style, back.window) == ("general", "luong", 2)
    again, first = json.loads(attention_json(back)), json.loads(attention_json(al))
    np.testing.assert_allclose(again.pop("coverage"), first.pop("coverage"), atol=1e-5)  # from rounded weights
    assert again == first


def test_a_beam_export_keeps_its_hypotheses_and_lists_the_others():
    best = make_alignment(["a", "b"], ["x", "y"], seed=1)
    other = make_alignment(["a", "b"], ["x"], seed=2)
    best.hypotheses = [best, other]
    f = read_attention(attention_json(best).encode())
    assert list(f.alignments) == ["attention", "attention · hypothesis 2"]
    back = f.alignments["attention"]
    assert back.hypotheses[0] is back and back.hypotheses[1].target_tokens == ["x", "<eos>"]


def test_several_named_traces_round_trip_in_json_and_npz():
    named = {"layer 1": make_alignment(["a", "b"], ["x"], seed=3), "layer 2": make_alignment(["a", "b"], ["x"], seed=4)}
    for data in (attention_json(named, {"model": "m"}).encode(), attention_npz(named, {"model": "m"})):
        f = read_attention(data, "f")
        assert list(f.alignments) == ["layer 1", "layer 2"] and f.metadata == {"model": "m"}
        for key, al in named.items():
            np.testing.assert_allclose(f.alignments[key].weights, al.weights, atol=1e-6)
            np.testing.assert_allclose(f.alignments[key].scores, al.scores, atol=1e-5)


def test_npz_stacks_layers_and_heads_and_names_them():
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(3), size=(2, 4, 2))  # [layers, heads, tgt, src]
    f = read_attention(
        npz(source_tokens=np.array(["a", "b", "</s>"]), target_tokens=np.array(["x", "</s>"]), weights=w)
    )
    assert len(f.alignments) == 8 and list(f.alignments)[5] == "layer 1 head 1"
    np.testing.assert_allclose(f.alignments["layer 1 head 1"].weights, w[1, 1], rtol=1e-6)


def test_a_json_stack_takes_its_names():
    w = np.full((2, 1, 2), 0.5).tolist()  # [n, tgt, src]
    stack = {"source_tokens": ["a", "b"], "target_tokens": ["x"], "weights": w, "names": ["fairseq", "marian"]}
    f = read_attention(as_bytes(stack))
    assert list(f.alignments) == ["fairseq", "marian"]


def test_matrices_may_carry_their_own_tokens():
    first = {"name": "hyp 1", "target_tokens": ["x"], "weights": [[1, 0]]}
    second = {"name": "hyp 2", "target_tokens": ["y", "z"], "weights": [[0, 1], [1, 0]]}
    f = read_attention(as_bytes({"source_tokens": ["a", "b"], "matrices": [first, second]}))
    assert [al.target_tokens for al in f.alignments.values()] == [["x"], ["y", "z"]]


GOOD = {"source_tokens": ["a", "b"], "target_tokens": ["x"], "weights": [[0.5, 0.5]]}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-32"])
def test_json_is_read_in_the_encoding_its_byte_order_mark_names(encoding):
    # Windows PowerShell's `python export.py > attention.json` writes UTF-16 with its mark
    data = json.dumps({**GOOD, "source_tokens": ["café", "☕"]}, ensure_ascii=False).encode(encoding)
    [trace] = read_attention(data).alignments.values()
    assert trace.source_tokens == ["café", "☕"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"weights": [[0.5, 0.5, 0.0]]}, "field 'weights' has shape (1, 3)"),
        ({"weights": [[0.5], [0.5, 0.5]]}, "field 'weights' must be a rectangular"),
        ({"weights": [[2.0, -1.0]]}, "in [0, 1]"),
        ({"weights": [["a", "b"]]}, "field 'weights' must hold numbers, got 'a' (str)"),
        ({"weights": [["0.5", 0.5]]}, "field 'weights' must hold numbers, got '0.5' (str)"),  # not read as 0.5
        ({"weights": [[True, 0.0]]}, "field 'weights' must hold numbers, got True (bool)"),
        ({"scores": [["1", 0.0]]}, "field 'scores' must hold numbers, got '1' (str)"),
        ({"weights": [[None, 0.5]]}, "field 'weights'"),
        ({"source_tokens": ["a", 3]}, "field 'source_tokens'[1] must be a string"),
        ({"source_tokens": []}, "field 'source_tokens' must be a non-empty list"),
        ({"target_tokens": None}, "field 'target_tokens' is missing"),
        ({"source_tokens": ["a"] * 1001}, "more than 1000"),
        ({"weigths": [[1]]}, "unknown field 'weigths'"),
        ({"format": "bertviz"}, "field 'format'"),
        ({"version": 2}, "field 'version'"),
        ({"version": True}, "field 'version' is True"),
        ({"version": 1.0}, "field 'version' is 1.0"),
        ({"metadata": [1]}, "field 'metadata' must be a JSON object"),
        ({"metadata": {"x": "y" * 70_000}}, "field 'metadata' is over"),
        ({"scores": [[1.0]]}, "field 'scores' has shape (1, 1)"),
        (
            {"matrices": [{"name": "m", "weights": [[1, 0]]}], "weights": [[1, 0]], "name": "m"},
            "two matrices are named 'm'",
        ),
        ({"matrices": "x"}, "field 'matrices' must be a list"),
        ({"source_unknown": [1, 0]}, "field 'source_unknown'"),
        ({"matrices": ["x"]}, "matrices[0] must be an object with name and weights"),
        ({"matrices": [{"weights": [[1, 0]], "heads": 2}]}, "matrices[0]: unknown field 'heads'; a matrix has"),
        ({"matrices": [{"name": "m", "weights": [[1, 0]], "window": "2"}]}, "matrices[0]: field 'window' must be"),
        ({"weights": [[[0.5, 0.5]], [[1.0, 0.0]]], "scores": [[[0.0, 0.0]]]}, "field 'scores' has shape (1, 1, 2)"),
        ({"weights": [[[0.5, 0.5]], [[1.0, 0.0]]], "log_prob": -1.0}, "field 'log_prob' belongs to a single"),
        ({"weights": [[[0.5, 0.5]], [[1.0, 0.0]]], "name": "m"}, "field 'name' belongs to a single [target, source]"),
        ({"log_prob": "-1.5"}, "field 'log_prob' must be a finite number"),
        ({"log_prob": True}, "field 'log_prob' must be a finite number"),
        ({"window": 2.5}, "field 'window' must be a whole number or null"),
        ({"window": True}, "field 'window' must be a whole number or null"),
        ({"hypotheses": {"x": 1}}, "field 'hypotheses' must be a list of objects, one per beam hypothesis"),
        ({"hypotheses": [1]}, "field 'hypotheses' must be a list of objects"),
        ({"score": ["dot"]}, "fields 'score' and 'style' must be short strings"),
    ],
)
def test_a_malformed_json_file_names_the_field(change, message):
    with pytest.raises(DataError) as e:
        read_attention(as_bytes({**GOOD, **change}), "mine.json")
    assert message in str(e.value) and str(e.value).startswith("mine.json")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"weights": [[NaN]]}', "NaN is not allowed"),
        (b'{"weights": [[Infinity]]}', "Infinity is not allowed"),
        (b"[1, 2]", "must hold a JSON object"),
        (b"{", "not valid JSON"),
        (b"\xff\xfe\x00", "neither an NPZ archive nor UTF-8 JSON"),
        (b"{}", "no attention matrix"),
        (b"PK\x03\x04garbage", "not a readable NPZ archive"),
        (b'{"names": ["a"], "matrices": []}', "field 'names' or 'scores' without 'weights'; add the weights"),
        (  # 1e999 reads as infinity
            b'{"source_tokens": ["a"], "target_tokens": ["x"], "weights": [[1]], "log_prob": 1e999}',
            "field 'log_prob' must be a finite number",
        ),
    ],
)
def test_unreadable_files_say_why(data, message):
    with pytest.raises(DataError, match=r"^f: ") as e:
        read_attention(data, "f")
    assert message in str(e.value)


def test_npz_is_read_without_pickle():
    tokens = np.array(["a", "b"], dtype=object)  # object arrays need pickle to load
    data = npz(source_tokens=tokens, target_tokens=np.array(["x"]), weights=np.array([[0.5, 0.5]]))
    with pytest.raises(DataError, match="field 'source_tokens' is an object array, which needs pickle"):
        read_attention(data, "f.npz")


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"weights": np.array([[np.nan, 1.0]])}, "not a finite number at (0, 0)"),
        ({"weights": np.array([["a", "b"]])}, "field 'weights' must hold numbers"),
        ({"weights": np.ones((1, 2)) / 2, "matrices": np.array(1)}, "unknown field 'matrices'"),
        ({"weights": np.ones((2, 1, 2)) / 2, "names": np.array(["one"])}, "field 'names' must be a list of 2"),
        ({"weights": np.ones((1, 2)) / 2, "metadata": np.array("{")}, "field 'metadata' is not valid JSON"),
        ({"weights": np.ones((2, 1, 2)) / 2, "scores": np.zeros((1, 1, 2))}, "field 'scores' has shape (1, 1, 2)"),
        ({"weights": np.ones((1, 2)) / 2, "scores": np.zeros((1, 3))}, "field 'scores' has shape (1, 3)"),
    ],
)
def test_a_malformed_npz_file_names_the_field(arrays, message):
    base = {"source_tokens": np.array(["a", "b"]), "target_tokens": np.array(["x"])}
    with pytest.raises(DataError) as e:
        read_attention(npz(**{**base, **arrays}), "f.npz")
    assert message in str(e.value)


def test_sizes_are_capped(tmp_path, monkeypatch):
    with pytest.raises(DataError, match="over the 50 MB limit"):
        read_attention(b" " * (MAX_ATTENTION_BYTES + 1), "big.json")
    monkeypatch.setattr("attnviz.external.attention_file.MAX_MATRICES", 4)
    w = np.full((5, 1, 2), 0.5)
    with pytest.raises(DataError, match="5 matrices of 10 cells"):
        read_attention(npz(source_tokens=np.array(["a", "b"]), target_tokens=np.array(["x"]), weights=w), "f")


def test_an_archive_with_files_outside_the_schema_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("evil.py", "print('hi')")
    with pytest.raises(DataError, match=r"unknown field .evil\.py."):
        read_attention(buffer.getvalue(), "f.npz")


def test_read_from_disk(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(GOOD))
    al = read_attention_file(path).alignments["attention"]
    assert isinstance(al, Alignment) and al.weights.shape == (1, 2)
    with pytest.raises(DataError, match="is not a file"):
        read_attention_file(tmp_path)


def test_sentencepiece_pieces_merge_into_words():
    pieces = {"source_tokens": ["▁the", "▁bl", "ack", "▁cat", "</s>"], "target_tokens": ["▁le", "▁chat", "</s>"]}
    f = read_attention(as_bytes({**pieces, "weights": np.full((3, 5), 0.2).tolist()}))
    al = f.alignments["attention"]
    assert al.source_tokens == ["the", "bl@@", "ack", "cat", "<eos>"] and al.target_tokens == ["le", "chat", "<eos>"]
    assert sentencepiece_as_marks(["a@@", "▁b"]) == ["a@@", "▁b"]  # already attnviz's convention: as is
    assert sentencepiece_as_marks(["<pad>", "▁x", "y", "<unk>"]) == ["<pad>", "x@@", "y", "<unk>"]


def test_translate_json_reads_as_an_attention_file(capsys):
    code, out, _ = run(capsys, "translate", "--model", "toy-fr-general-luong", "--beam", "2", "--json", "the cat .")
    best = read_attention(out.encode()).alignments["attention"]
    assert code == 0 and best.source_tokens == ["the", "cat", ".", "<eos>"]
    assert len(best.hypotheses) == 2 and best.hypotheses[0] is best  # the n-best list, best first
