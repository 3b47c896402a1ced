"""Exports: CSV cells a spreadsheet would run are quoted, the matrix CSV has a row per target step,
changed steps and replaced words."""

from __future__ import annotations

import io

import pandas as pd

from attnviz.plots.exports import changed_steps, matrix_csv, replace_token
from attnviz.store.checkpoint import load_checkpoint
from tests.support.alignments import make_alignment


def test_export_helpers():
    assert changed_steps(["a", "b", "<eos>"], ["a", "c", "<eos>", "x"]) == [1, 3]
    assert replace_token(["the", "cat", "."], 1, "dog", char_level=False) == "the dog ."
    assert replace_token(list("12 may"), 0, "3", char_level=True) == "32 may"
    pieces = ["ein", "orange@@", "farbenen", "hut"]
    assert replace_token(pieces, 1, "rot", char_level=False) == "ein rotfarbenen hut"
    assert replace_token(pieces, 3, "ball", char_level=False) == "ein orangefarbenen ball"


def test_csv_rows_are_target_steps(app_models_dir):
    tr = load_checkpoint(app_models_dir / "toyfr-localp-luong.safetensors")
    al = tr.translate("=cmd the cat .")
    frame = pd.read_csv(io.StringIO(matrix_csv(al, "scores")))
    assert len(frame) == len(al.target_tokens)
    assert frame.columns[2] == f"0:{al.source_tokens[0]}" == "0:="  # position first: never a formula


def test_a_repeated_source_word_names_two_columns_once_each():
    from attnviz.plots.exports import matrix_frame

    al = make_alignment(["the", "cat", "saw", "the", "dog"], ["x"], seed=4)
    header = matrix_csv(al).splitlines()[0].split(",")
    assert header == ["step", "target", "0:the", "1:cat", "2:saw", "3:the", "4:dog", "5:<eos>"]
    assert len(set(header)) == len(header)
    assert list(matrix_frame(al).iloc[0, 2:]) == list(al.weights[0])


def test_the_csv_guard_also_quotes_a_formula_behind_leading_spaces():
    from attnviz.plots.exports import safe_cell

    assert safe_cell("  =1+1") == "'  =1+1" and safe_cell(" @SUM(1)") == "' @SUM(1)"
    assert safe_cell("a = b") == "a = b" and safe_cell("la maison") == "la maison"


def test_pharaoh_leaves_out_the_links_of_eos_unless_asked():
    from attnviz.plots.exports import pharaoh_text

    al = make_alignment(["a", "b"], ["x", "y"], seed=3)
    al.weights[:] = 0
    al.weights[0, 1] = al.weights[1, 2] = al.weights[2, 0] = 1  # x<-b, y<-<eos>, <eos><-a
    assert pharaoh_text(al).split() == ["1-0"]
    assert pharaoh_text(al, with_eos=True).split() == ["1-0", "2-1", "0-2"]


def test_file_stems_carry_the_model_and_a_slug_of_the_sentence():
    from attnviz.plots.exports import file_stem, slug

    assert file_stem("toy-fr-general-luong", "The café, où l'on mange!", "weights") == (
        "toy-fr-general-luong-The-cafe-ou-l-on-mange-weights"
    )
    assert len(slug("word " * 40)) <= 40 and not slug("word " * 40).endswith("-")
    assert file_stem("", "???") == "attnviz"


def test_several_models_name_a_file_whole():
    from attnviz.plots.exports import file_stem, models_slug

    five = ["multi30k-de-en-additive-bahdanau", "multi30k-de-en-additive-luong", "multi30k-de-en-general-luong",
            "multi30k-de-en-dot-luong", "multi30k-de-en-additive-bahdanau-guided"]  # fmt: skip
    both = models_slug(five[:2])
    assert both == "multi30k-de-en-additive-bahdanau-vs-luong"
    all_five = models_slug(five)
    assert all_five == ("multi30k-de-en-additive-bahdanau-vs-additive-luong-vs-general-luong-vs-dot-luong"
                        "-vs-additive-bahdanau-guided")  # fmt: skip
    stem = file_stem(all_five, "Ein Mann mit einem roten Hut spielt Gitarre auf der Straße.", "figure-weights")
    assert stem.startswith(all_five + "-Ein-Mann") and stem.endswith("-figure-weights")
    assert models_slug(["m-plain", "m-plain-guided"]) == "m-plain-vs-plain-guided"  # a twin keeps a part of its own
    assert models_slug(["a-x", "b-y"]) == "a-x-vs-b-y"
    assert models_slug(["x"] + [f"task-model-{k}" for k in range(60)]) == f"{61}-models"
    assert models_slug([f"task-model-{k}-long-name" for k in range(20)]) == "task-model-20-models"
    assert models_slug(["same", "same"]) == "same" and models_slug([]) == ""


def test_the_everything_json_reads_back_under_the_model_name():
    from attnviz.external import read_attention
    from attnviz.plots.exports import alignment_json

    al = make_alignment(["a", "b"], ["x"], seed=5)
    back = read_attention(alignment_json(al, "multi30k-de-en-additive-luong", "a b").encode(), "m.json")
    assert list(back.alignments) == ["multi30k-de-en-additive-luong"]
    assert back.alignments["multi30k-de-en-additive-luong"].target_tokens == al.target_tokens
    assert back.metadata["sentence"] == "a b"


def test_the_pair_in_one_file():
    import io
    import json

    import pandas as pd

    from attnviz.external import read_attention
    from attnviz.plots.exports import pair_csv, pair_json

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
