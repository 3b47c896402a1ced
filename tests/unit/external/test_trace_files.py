"""The files a trace is downloaded as: the matrix CSV has a row per target step and no formula, the
Pharaoh line counts the words of the text and leaves out the links of ``<eos>``, a pair of decodes fits one file."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from attnviz.external import (
    attention_json,
    difference_csv,
    matrix_csv,
    pair_csv,
    pair_json,
    pharaoh_text,
    read_attention,
)
from attnviz.external.file_links import score_files
from attnviz.external.trace_files import matrix_frame
from attnviz.store.checkpoint import load_checkpoint
from tests.support.alignments import make_alignment


def test_csv_rows_are_target_steps(app_models_dir):
    tr = load_checkpoint(app_models_dir / "toyfr-localp-luong.safetensors")
    al = tr.translate("=cmd the cat .")
    frame = pd.read_csv(io.StringIO(matrix_csv(al, "scores")))
    assert len(frame) == len(al.target_tokens)
    assert frame.columns[2] == f"0:{al.source_tokens[0]}" == "0:="  # position first: never a formula


def test_a_repeated_source_word_names_two_columns_once_each():
    al = make_alignment(["the", "cat", "saw", "the", "dog"], ["x"], seed=4)
    header = matrix_csv(al).removeprefix("\ufeff").splitlines()[0].split(",")
    assert header == ["step", "target", "0:the", "1:cat", "2:saw", "3:the", "4:dog", "5:<eos>"]
    assert len(set(header)) == len(header)
    assert list(matrix_frame(al).iloc[0, 2:]) == list(al.weights[0])


def test_pharaoh_leaves_out_the_links_of_eos():
    al = make_alignment(["a", "b"], ["x", "y"], seed=3)
    al.weights[:] = 0
    al.weights[0, 1] = al.weights[1, 2] = al.weights[2, 0] = 1  # x<-b, y<-<eos>, <eos><-a
    assert pharaoh_text(al).split() == ["1-0"]


def test_pharaoh_counts_the_words_of_the_text_and_scores_against_itself():
    """Subword pieces are joined, as gold files and attnviz attention --gold count: the file a
    subword model's Export gives is its own gold (AER 0), where piece indices were refused."""
    al = make_alignment(["un@@", "known", "cat"], ["chat", "in@@", "con@@", "nu"], seed=1)
    al.weights[:] = 0
    al.weights[0, 2] = 1  # chat <- cat
    al.weights[1:4, 0] = 1  # in@@ con@@ nu <- un@@
    al.weights[4, 3] = 1  # <eos> <- <eos>
    line = pharaoh_text(al)
    assert line.split() == ["0-1", "1-0"]
    read = read_attention(attention_json({"m": al}).encode(), "m.json")
    corpus, _ = score_files([read], [line.strip()])
    assert corpus[0]["AER"] == 0.0, corpus


def test_the_everything_json_reads_back_under_the_model_name():
    al = make_alignment(["a", "b"], ["x"], seed=5)
    text = attention_json({"multi30k-de-en-additive-luong": al}, metadata={"sentence": "a b"})
    back = read_attention(text.encode(), "m.json")
    assert list(back.alignments) == ["multi30k-de-en-additive-luong"]
    assert back.alignments["multi30k-de-en-additive-luong"].target_tokens == al.target_tokens
    assert back.metadata["sentence"] == "a b"


def test_the_pair_in_one_file():
    panels = {"Bahdanau": make_alignment(["a"], ["x"], seed=1), "Luong": make_alignment(["a"], ["x", "y"], seed=2)}
    models = {"Bahdanau": "m-b", "Luong": "m-l"}
    text = pair_json(panels, models, "a")
    doc = json.loads(text)
    assert doc["metadata"] == {"sentence": "a", "models": models}
    assert [m["name"] for m in doc["matrices"]] == ["Bahdanau", "Luong"]
    back = read_attention(text.encode(), "pair.json")  # the same schema as any attention file
    assert back.alignments["Luong"].target_tokens == ["x", "y", "<eos>"]
    assert back.metadata["models"]["Luong"] == "m-l"
    frame = pd.read_csv(io.StringIO(pair_csv(panels, models)))
    assert len(frame) == 2 * 3 + 2 * 2 and set(frame["panel"]) == {"Bahdanau", "Luong"}
    assert list(frame.columns) == ["panel", "model", "step", "target", "position", "source", "weights"]


def test_the_csv_gives_back_every_float32_exactly():
    """Raw scores reach the hundreds (general on toy-fr: 176.7); six digits lost up to 5e-4 there."""
    al = make_alignment(["a", "b"], ["x"], seed=2)
    al.scores = (al.scores * 90).astype(np.float32)  # scores from -200 to 200
    al.weights = al.weights.astype(np.float32)
    for values in ("scores", "weights"):
        frame = pd.read_csv(io.StringIO(matrix_csv(al, values)))
        assert np.array_equal(frame.iloc[:, 2:].to_numpy(np.float32), al.matrix(values).astype(np.float32))


def test_the_difference_csv_holds_each_cells_signed_difference_over_the_common_steps():
    a = make_alignment(["a", "b"], ["x", "y", "z"], seed=1)
    b = make_alignment(["a", "b"], ["x", "w"], seed=2)  # a shorter decode that wrote w at step 1
    frame = pd.read_csv(io.StringIO(difference_csv(a, b)))
    assert list(frame["target"]) == ["x", "y / w", "z / <eos>"]
    assert np.allclose(frame.iloc[:, 2:].to_numpy(), a.weights[:3] - b.weights[:3], atol=1e-9)
    assert (frame.iloc[:, 2:].to_numpy() < 0).any() and (frame.iloc[:, 2:].to_numpy() > 0).any()  # signs kept
