"""Hugging Face encoder-decoders from a local folder: the attention attnviz keeps equals what
transformers returns with ``output_attentions=True``, pieces read as words, the refusals."""

from __future__ import annotations

import json
import socket

import numpy as np
import pytest
import torch

from attnviz.errors import AttnvizError, CheckpointError, InputError
from attnviz.external import (
    CrossAttention,
    Pick,
    group_pieces,
    head_aer,
    load_hf,
    score_picks,
    word_reading,
    word_stack,
)
from attnviz.external.heads import word_matrices
from attnviz.links import directional_links, parse_pharaoh, read_words, score_table
from tests.support.hf_models import BUILDERS, GOLD, REFERENCE, SOURCE, m2m_folder, marian_folder


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def hf(request, tmp_path_factory):
    return load_hf(BUILDERS[request.param](tmp_path_factory.mktemp(request.param)))


def test_info_counts_the_decoder_layers_and_heads(hf):
    expected = {
        "marian": (3, 4, "▁"),
        "t5": (2, 2, "▁"),
        "bart": (2, 2, "Ġ"),
        "m2m_100": (2, 2, "▁"),
        "mbart": (2, 2, "▁"),
    }
    expected = expected[hf.info.model_type]
    assert (hf.info.layers, hf.info.heads, hf.info.marker) == expected


def test_forced_attention_equals_transformers(hf):
    c = hf.force(SOURCE, REFERENCE)
    enc = hf.tokenizer(SOURCE, return_tensors="pt")
    labels = hf.tokenizer(text_target=REFERENCE, return_tensors="pt").input_ids
    with torch.no_grad():
        out = hf.model(**enc, labels=labels, output_attentions=True)
    expected = torch.stack(out.cross_attentions)[:, 0].numpy()  # [layers, heads, tgt, src]
    assert c.attention.shape == (hf.info.layers, hf.info.heads, labels.shape[1], enc.input_ids.shape[1])
    np.testing.assert_allclose(c.attention, expected, atol=1e-6)
    assert c.source_pieces == hf.tokenizer.convert_ids_to_tokens(enc.input_ids[0])


def test_greedy_attention_equals_generate_step_by_step(hf):
    """Row t of every head is what ``generate(output_attentions=True)`` returned at step t."""
    c = hf.translate(SOURCE, max_new_tokens=8)
    enc = hf.tokenizer(SOURCE, return_tensors="pt")
    with torch.no_grad():
        out = hf.model.generate(
            **enc, max_new_tokens=8, num_beams=1, do_sample=False, output_attentions=True, return_dict_in_generate=True
        )
    assert c.target_pieces == hf.tokenizer.convert_ids_to_tokens(out.sequences[0, 1:])
    for t, step in enumerate(out.cross_attentions):  # step: one [1, heads, queries, src] per layer
        expected = torch.stack([layer[0, :, -1] for layer in step]).numpy()  # [layers, heads, src]
        np.testing.assert_allclose(c.attention[:, :, t], expected, atol=1e-5)


def test_alignments_are_heads_layers_and_the_average(hf):
    c = hf.force(SOURCE, REFERENCE)
    stack = c.head_stack()  # [layers, heads, tgt, src]
    np.testing.assert_allclose(c.alignment(1, 1).weights, stack[1, 1], atol=1e-6)
    np.testing.assert_allclose(c.alignment(1).weights, stack[1].mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(c.alignment().weights, stack.mean(axis=(0, 1)), atol=1e-6)
    np.testing.assert_allclose(c.alignment(heads=[(0, 1), (1, 0)]).weights, (stack[0, 1] + stack[1, 0]) / 2, atol=1e-6)
    al = c.alignment(0, 1)
    np.testing.assert_allclose(al.weights.sum(axis=1), 1.0, atol=1e-5)
    assert al.source_tokens[-1] == "<eos>" and al.target_tokens[-1] == "<eos>"
    assert al.scores.shape == al.weights.shape and np.allclose(np.exp(al.scores), al.weights, atol=1e-6)
    assert al.contexts.shape[0] == al.states.shape[0] == len(al.target_tokens)
    assert al.encoder_attention.shape[2:] == (len(al.source_tokens),) * 2
    assert len(c.alignments()) == 1 + hf.info.layers * (1 + hf.info.heads)
    with pytest.raises(InputError, match="out of range"):
        c.alignment(hf.info.layers)
    with pytest.raises(InputError, match="which layer"):
        c.alignment(None, 0)


def test_pieces_fold_into_tokens_and_words(hf):
    """A source token's column is the sum of its pieces' (special tokens gathered into <eos>); read as
    words, the sentence's own words come back and the gold file scores the links."""
    c = hf.force(SOURCE, REFERENCE)
    head = c.pieces_weights(2 % hf.info.layers, 1)  # [tgt_pieces, src_pieces]
    al = c.alignment(2 % hf.info.layers, 1)
    first = c.target.groups[0]
    for k, group in enumerate(c.source.groups):
        assert al.weights[0, k] == pytest.approx(head[first][:, group].sum(axis=1).mean(), abs=1e-6)
    language = [p for p in c.source_pieces if p.startswith("__") and p.endswith("__")]  # M2M100's "__en__"
    special = [i for i, p in enumerate(c.source_pieces) if p in [*hf.tokenizer.all_special_tokens, *language]]
    assert c.source.groups[-1] == special
    reading = read_words(al)
    assert reading.source_words == SOURCE.split() and reading.target_words == REFERENCE.split()
    links = directional_links(reading.weights, "dtw")
    assert {t for _, t in links} == set(range(len(REFERENCE.split())))
    gold = parse_pharaoh([GOLD], [(7, 7)])
    corpus, _ = score_table(gold, {"dtw": [sorted(links)]})
    assert corpus[0]["aligner"] == "dtw" and 0 <= corpus[0]["AER"] <= 1


def test_every_head_read_at_once_equals_each_read_alone(hf):
    c = hf.force(SOURCE, REFERENCE)
    stack, src, tgt = word_stack(c)
    assert (src, tgt) == (SOURCE.split(), REFERENCE.split())
    for layer in range(c.layers):
        for head in range(c.heads):
            np.testing.assert_allclose(stack[layer, head], word_reading(c, Pick(layer, head)).weights, atol=1e-9)
    gold = parse_pharaoh([GOLD], [(7, 7)])[0]
    aer = head_aer(c, gold)
    rows = score_picks(hf, [SOURCE.split()], [REFERENCE.split()], [gold])
    assert {(r["layer"], r["head"]): r["AER"] for r in rows if r["head"] is not None} == {
        (layer, head): round(aer[layer, head], 3) for layer in range(c.layers) for head in range(c.heads)
    }


def test_beam_gives_the_n_best_best_first(hf):
    c = hf.translate(SOURCE, beam_size=3, max_new_tokens=6)
    assert len(c.hypotheses) == 3 and c.hypotheses[0] is c
    al = c.alignment(0, 0)
    assert al.hypotheses[0] is al and len(al.hypotheses) == 3
    assert [h.target_tokens for h in al.hypotheses] == [h.target_tokens for h in c.hypotheses]


def test_the_old_beam_keyword_still_works_with_a_warning(hf):
    with pytest.warns(DeprecationWarning, match="beam_size"):
        old = hf.translate(SOURCE, beam=3, max_new_tokens=6)
    new = hf.translate(SOURCE, beam_size=3, max_new_tokens=6)
    assert [h.target_tokens for h in old.hypotheses] == [h.target_tokens for h in new.hypotheses]


def test_bad_input_is_one_clear_error(hf):
    with pytest.raises(InputError, match="empty"):
        hf.translate("  ")
    with pytest.raises(InputError, match="beam"):
        hf.translate(SOURCE, beam_size=0)
    with pytest.raises(InputError, match="reference is empty"):
        hf.force(SOURCE, "")
    with pytest.raises(InputError, match="language code"):
        hf.translate(SOURCE, target_lang="xx_YY")


def test_a_multilingual_model_forces_its_target_language(tmp_path):
    """M2M100: the target language token is forced first and left out of the shown target; the source's
    language token is gathered into <eos>."""
    model = load_hf(m2m_folder(tmp_path / "m2m"))
    assert {"en", "fr"} <= set(model.languages())
    c = model.translate(SOURCE, source_lang="en", target_lang="fr", max_new_tokens=4)
    assert c.target_pieces[0] == "__fr__" and "__fr__" not in c.target_tokens
    assert c.source_pieces[0] == "__en__" and c.source.groups[-1] == [0, len(c.source_pieces) - 1]
    f = model.force(SOURCE, REFERENCE, source_lang="en", target_lang="fr")
    assert read_words(f.alignment()).target_words == REFERENCE.split()


def test_a_refused_or_earlier_language_leaves_no_trace_on_the_shared_model(tmp_path):
    """The app shares one loaded model between sessions: a language code refused left the tokenizer set to it
    (every later call a bare KeyError), and one call's languages were the next call's without any."""
    folder = m2m_folder(tmp_path / "m2m")
    model, fresh = load_hf(folder), load_hf(folder)
    before = fresh.force(SOURCE, REFERENCE)
    with pytest.raises(InputError, match="language code"):
        model.translate(SOURCE, source_lang="en", target_lang="xx_YY", max_new_tokens=3)
    after = model.force(SOURCE, REFERENCE)
    assert (after.source_pieces, after.target_pieces) == (before.source_pieces, before.target_pieces)
    f = model.force(SOURCE, REFERENCE, source_lang="fr", target_lang="de")
    assert f.target_pieces[0] == "__de__" != before.target_pieces[0]
    after = model.force(SOURCE, REFERENCE)
    assert (after.source_pieces, after.target_pieces) == (before.source_pieces, before.target_pieces)


def test_loading_reaches_no_network(tmp_path, monkeypatch):
    folder = marian_folder(tmp_path / "m")

    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert load_hf(folder).translate(SOURCE, max_new_tokens=3).target_tokens


def _config(folder, **config):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "not a folder"),
        (lambda p: p, "no config.json"),
        (lambda p: _config(p / "gpt", model_type="gpt2"), "not an encoder-decoder"),
        (
            lambda p: _config(p / "custom", model_type="x", is_encoder_decoder=True, auto_map={"AutoModel": "m.M"}),
            "own Python code",
        ),
        (lambda p: _config(p / "noweights", model_type="marian", is_encoder_decoder=True), "no weights"),
    ],
)
def test_a_folder_that_is_not_a_model_is_refused(tmp_path, make, message):
    with pytest.raises(CheckpointError, match=message):
        load_hf(make(tmp_path))


def test_a_pickle_checkpoint_is_refused_unread(tmp_path):
    folder = _config(tmp_path / "pickled", model_type="marian", is_encoder_decoder=True)
    (folder / "pytorch_model.bin").write_bytes(b"not even read")
    with pytest.raises(CheckpointError, match=r"pytorch_model\.bin.*safetensors"):
        load_hf(folder)


def test_broken_json_and_a_missing_tokenizer_are_refused(tmp_path):
    folder = marian_folder(tmp_path / "m")
    for name in ("vocab.json", "source.spm", "target.spm", "tokenizer_config.json"):
        (folder / name).unlink()
    with pytest.raises(AttnvizError, match="tokenizer"):
        load_hf(folder)
    (folder / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_hf(folder)


@pytest.mark.parametrize(
    ("pieces", "special", "marker", "side", "tokens"),
    [
        (["▁the", "▁bla", "ck", "</s>"], [0, 0, 0, 1], "▁", "source", ["the", "bla@@", "ck", "<eos>"]),
        (["▁", "t", "he", "▁cat"], [0, 0, 0, 0], "▁", "source", ["t@@", "he", "cat"]),
        (["<s>", "the", "Ġbla", "ck", "</s>"], [1, 0, 0, 0, 1], "Ġ", "source", ["the", "bla@@", "ck", "<eos>"]),
        (["eng_Latn", "le", "▁chat", "</s>"], [1, 0, 0, 1], "▁", "target", ["le", "chat", "<eos>"]),
        (["un", "##believ", "##able", "day"], [0, 0, 0, 0], "##", "target", ["un@@", "believ@@", "able", "day"]),
        (["lo", "w</w>", "er</w>"], [0, 0, 0], "</w>", "source", ["lo@@", "w", "er"]),
        (["a", "b"], [0, 0], None, "source", ["a", "b"]),
        (
            ["c", "af", "Ã", "©", "Ġn", "a", "Ã", "¯", "ve"],
            [0] * 9,
            "Ġ",
            "source",
            ["c@@", "af@@", "é", "n@@", "a@@", "ï@@", "ve"],
        ),
        (["<s>", "Ġ", "â", "ĺ", "ķ", "Ġ.", "</s>"], [1, 0, 0, 0, 0, 0, 1], "Ġ", "target", ["☕", ".", "<eos>"]),
    ],
)
def test_pieces_become_attnviz_tokens(pieces, special, marker, side, tokens):
    grouping = group_pieces(pieces, [bool(s) for s in special], marker, side)
    assert grouping.tokens == tokens
    assert sorted(i for g in grouping.groups for i in g) == sorted(
        i for i in range(len(pieces)) if side == "source" or not special[i] or i == len(pieces) - 1
    )


def test_byte_pieces_that_write_one_character_make_one_token():
    """Byte-level BPE splits ``☕`` into three pieces and ``é`` into two: each character is one token
    (its pieces' positions one group), never a half character read as U+FFFD."""
    pieces = ["<s>", "Ġcaf", "Ã", "©", "Ġ", "â", "ĺ", "ķ", "</s>"]
    grouping = group_pieces(pieces, [True] + [False] * 7 + [True], "Ġ", "source")
    assert grouping.tokens == ["caf@@", "é", "☕", "<eos>"]
    assert grouping.groups == [[1], [2, 3], [4, 5, 6, 7], [0, 8]]
    assert grouping.rows[2] == [5, 6, 7]  # the bare Ġ writes no letter
    stray = group_pieces(["Ġa", "\u0122", "b", "c"], [False] * 4, "Ġ", "target")  # byte 0x80 starts nothing
    assert stray.groups == [[0], [1], [2], [3]] and stray.tokens == ["a@@", "\ufffd@@", "b@@", "c"]


def test_a_byte_level_model_reads_accents_and_emoji_as_typed(tmp_path):
    """The words of a byte-level BPE model (BART) are the words as typed, so markup can carry tags."""
    from tests.support.hf_models import bart_folder

    model = load_hf(bart_folder(tmp_path / "bart"))
    c = model.force("le café naïve ☕ .", "café ☕ .")
    reading = read_words(c.alignment())
    assert reading.source_words == ["le", "café", "naïve", "☕", "."]
    assert reading.target_words == ["café", "☕", "."]


def test_a_bare_marker_writes_no_row_so_a_word_weighs_its_text_pieces_alike():
    """Target "▁ bl ack" (a bare ▁ joined to "bl"): the word's row is the mean of its two text pieces'
    rows, in the one-head reading, in every head's word matrix and in the Alignment the views merge; the
    bare marker's source column is still summed into its word."""
    source = group_pieces(["▁chat", "▁", "no", "ir", "</s>"], [False] * 4 + [True], "▁", "source")
    target = group_pieces(["▁", "bl", "ack", "</s>"], [False] * 3 + [True], "▁", "target")
    assert target.tokens == ["bl@@", "ack", "<eos>"] and target.rows == [[1], [2], [3]]
    rows = np.array(  # [tgt_pieces, src_pieces]: ▁, bl, ack, </s> over ▁chat, ▁, no, ir, </s>
        [[0.62, 0.0, 0.38, 0.0, 0.0], [0.62, 0.1, 0.1, 0.18, 0.0], [0.3, 0.0, 0.7, 0.0, 0.0], [0, 0, 0, 0, 1.0]]
    )
    c = CrossAttention(
        source=source,
        target=target,
        source_pieces=["▁chat", "▁", "no", "ir", "</s>"],
        target_pieces=["▁", "bl", "ack", "</s>"],
        attention=rows[None, None],
        encoder_attention=np.zeros((1, 1, 5, 5)),
        encoder_states=np.zeros((5, 2)),
        decoder_states=np.zeros((4, 2)),
        token_log_probs=np.log([0.5, 0.5, 0.5, 0.5]),
        source_unknown=[False] * 5,
        model_type="marian",
    )
    expected = np.array([[(0.62 + 0.3) / 2, (0.1 + 0.1 + 0.18 + 0.7) / 2]])  # chat, noir
    words, src, tgt = word_matrices(c, [Pick(0, 0)])
    assert (src, tgt) == (["chat", "noir"], ["black"])
    np.testing.assert_allclose(words[0], expected)
    np.testing.assert_allclose(word_reading(c, Pick(0, 0)).weights, expected)
    np.testing.assert_allclose(read_words(c.alignment(0, 0)).weights, expected)
    assert c.alignment(0, 0).log_prob == pytest.approx(4 * np.log(0.5))  # the marker's probability counts
