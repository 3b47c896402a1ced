"""The Translator: decoding with traces (greedy, beam, forced), unknown words, <unk> replaced, input
checks, forced attention, decoding from threads."""

import copy

import numpy as np
import pytest
import torch

from attnviz.data.vocab import BOS_ID, UNK_ID
from attnviz.errors import InputError
from attnviz.model.scores import SCORES
from tests.support.tiny import TINY_OPTIONS, tiny_translator


def test_trained_reverse_model_attends_anti_diagonally(trained):
    al = trained.translate("a b c d e")
    assert al.hard_links()[:5] == [(4, 0), (3, 1), (2, 2), (1, 3), (0, 4)]


def test_trace_shapes_and_rows(trained):
    al = trained.translate("b a d")
    T, S = len(al.target_tokens), len(al.source_tokens)
    assert al.source_tokens == ["b", "a", "d", "<eos>"]
    assert al.target_tokens[-1] == "<eos>"
    assert al.weights.shape == al.scores.shape == (T, S)
    assert al.contexts.shape == (T, trained.config.memory_dim)
    assert al.states.shape == (T, trained.config.hidden_dim)
    assert np.allclose(al.weights.sum(1), 1.0, atol=1e-5)
    assert al.token_log_probs.shape == (T,) and al.log_prob <= 0


def test_beam_returns_ranked_nbest_each_with_its_alignment(trained):
    al = trained.translate("a b c d", beam_size=4)
    assert 1 < len(al.hypotheses) <= 4
    assert al.hypotheses[0].target_tokens == al.target_tokens
    for h in al.hypotheses:
        assert h.weights.shape == (len(h.target_tokens), len(h.source_tokens))
    assert al.output_tokens == ["d", "c", "b", "a"]


def test_align_forces_the_reference_and_matches_free_decoding(trained):
    free = trained.translate("a b c")
    forced = trained.align("a b c", "c b a")
    assert forced.target_tokens == ["c", "b", "a", "<eos>"]
    assert np.allclose(forced.weights, free.weights, atol=1e-5)
    other = trained.align("a b c", "a a")
    assert other.weights.shape == (3, 4)


def test_unknown_words_stay_visible_and_flagged(trained):
    al = trained.translate("a Zebra b")
    assert al.source_tokens[:3] == ["a", "Zebra", "b"]
    assert al.source_unknown == [False, True, False, False]


def test_translations_replace_unk_by_the_attended_source_word(trained):
    tr = copy.deepcopy(trained)
    with torch.no_grad():
        tr.model.decoder.out.bias[UNK_ID] = 1e4  # the model now says <unk> at every step
    text = "a Zebra b"
    al = tr.translate(text, max_len=4)
    assert al.target_tokens == ["<unk>"] * 4
    copied = tr.text_of(al)
    assert "<unk>" not in copied
    assert set(copied.split()) <= {"a", "Zebra", "b"}
    copies = list(al.unk_copies().values())  # consecutive copies of one word give it once
    assert copied.split() == [al.source_tokens[s] for i, s in enumerate(copies) if i == 0 or copies[i - 1] != s]
    assert tr.text_of(al, replace_unk=False) == "<unk> <unk> <unk> <unk>"
    batch = tr.translate_batch([text, "c d"], replace_unk=True)
    assert "<unk>" not in " ".join(batch)
    assert set(batch[1].split()) <= {"c", "d"}
    assert tr.translate_batch([text], replace_unk=False)[0].split()[0] == "<unk>"
    with torch.no_grad():
        tr.model.decoder.out.bias[BOS_ID] = 2e4  # <bos> at every step: written, as translate and beam search write it
    assert (
        tr.translate_batch([text]) == [tr.text_of(tr.translate(text))] == [tr.translate_batch([text], beam_size=2)[0]]
    )
    assert set(tr.translate_batch([text])[0].split()) == {"<bos>"}


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "empty"), ("   \n\t ", "empty"), ("\x00\x01", "empty"), ("a " * 1500, "characters"), ("a " * 150, "tokens")],
)
def test_bad_input_raises_a_typed_error(trained, text, message):
    with pytest.raises(InputError, match=message):
        trained.translate(text)


def test_bad_beam_and_target_raise(trained):
    with pytest.raises(InputError, match="beam size"):
        trained.translate("a b", beam_size=0)
    with pytest.raises(InputError, match="empty"):
        trained.align("a b", " ")


def test_html_and_emoji_pass_through_as_tokens(trained):
    al = trained.translate("<script>alert(1)</script> 😀")
    assert "😀" in al.source_tokens and "script" in al.source_tokens


@pytest.mark.parametrize("style", ["bahdanau", "luong"])
@pytest.mark.parametrize("score", sorted(SCORES))
def test_every_score_and_style_decodes_with_a_trace(corpus, score, style):
    tr = tiny_translator(corpus, score=score, style=style)
    al = tr.translate("a b c", beam_size=2)
    assert al.weights.shape[1] == 4
    if score in ("local_m", "local_p"):
        assert al.positions is not None and al.positions.shape == (len(al.target_tokens),)
        assert al.window == TINY_OPTIONS.get("window", 5)
    else:
        assert al.positions is None


def test_transformer_encoder_attention_is_in_the_trace(corpus):
    tr = tiny_translator(corpus, encoder="transformer", heads=2, enc_layers=2)
    al = tr.translate("a b c")
    assert al.encoder_attention.shape == (2, 2, 4, 4)  # [layers, heads, src, src]
    assert np.allclose(al.encoder_attention.sum(-1), 1.0, atol=1e-5)


def test_decoding_the_shared_model_from_threads_matches_sequential(trained):
    from concurrent.futures import ThreadPoolExecutor

    texts = ["a b c", "d e f g", "h a", "b b c d e"] * 4
    sequential = [trained.translate(t).weights for t in texts]
    with ThreadPoolExecutor(8) as pool:
        parallel = list(pool.map(lambda t: trained.translate(t).weights, texts))
    assert all(np.array_equal(a, b) for a, b in zip(sequential, parallel, strict=True))
    assert torch.is_inference_mode_enabled() is False


def test_forcing_attention_at_one_step_changes_what_follows(trained):
    base = trained.translate("a b c d")
    n = len(base.source_tokens)
    onto_a = [1.0 if i == 0 else 0.0 for i in range(n)]  # step 0 should read "d"; force it onto "a"
    al = trained.translate("a b c d", overrides={0: onto_a})
    assert np.allclose(al.weights[0], onto_a)
    assert al.output_tokens[0] == "a" != base.output_tokens[0]
    assert np.allclose(al.weights[1:2].sum(1), 1.0)
    with pytest.raises(InputError, match="give 5 weights"):
        trained.translate("a b c d", overrides={0: [1.0, 0.0]})
    with pytest.raises(InputError, match="greedy"):
        trained.translate("a b c d", beam_size=2, overrides={0: onto_a})
    # a step the decoder never reaches, or a key read from JSON, would force nothing: refused by name
    for step in ("0", -1, True, 1.0, 14):
        with pytest.raises(InputError, match=r"an override's step is .*from 0 to 13"):
            trained.translate("a b c d", max_len=14, overrides={step: onto_a})
    assert np.allclose(trained.translate("a b c d", overrides={np.int64(0): onto_a}).weights[0], onto_a)


def test_align_on_given_words_cuts_inside_each_word(trained):
    from attnviz.data import EOS, join_pieces

    al = trained.align(["a", "b.", "zebra"], ["c", "a"])
    assert al.source_tokens == ["a", "b@@", ".", "zebra", EOS]  # "b." is the model's b and ., marked to join back
    assert join_pieces(al.source_text_tokens) == ["a", "b.", "zebra"]
    assert al.source_unknown[:2] == [False, False] and al.source_unknown[3]  # zebra: <unk> inside the sentence
    assert al.weights.shape == (3, 5)
    typed = trained.align("a b. zebra", "c a")  # typed text: the tokenizer finds the words
    assert typed.source_tokens == ["a", "b", ".", "zebra", EOS]
    assert np.allclose(al.weights, typed.weights)  # the same tokens reach the model either way
    with pytest.raises(InputError, match="the source's word 2 is empty or blank"):
        trained.align(["a", ""], ["a"])


def test_a_list_where_text_goes_and_text_where_a_list_goes_are_refused(trained, corpus):
    with pytest.raises(InputError, match="the source's word 1 holds a space; give the sentence as text"):
        trained.translate(["a b c"])  # one sentence in a list would be read as one word
    with pytest.raises(InputError, match="the target's word 2 holds a space"):
        trained.align("a b", ["b", "a c"])
    with pytest.raises(InputError, match="give a list of sentences, not one str"):
        trained.translate_batch("a b c")
    from attnviz.evaluation import evaluate

    for wrong, named in ((corpus, "Corpus"), (["a b"], "other things"), ("a b", "str")):
        with pytest.raises(InputError, match=f"evaluate takes a list of sentence pairs .*got .*{named}"):
            evaluate(trained, wrong)
