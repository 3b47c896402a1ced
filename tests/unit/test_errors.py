"""The checks every layer shares: a JSON value of the wrong type and a URL where a local path is read
are errors that name what to fix."""

import pytest

from attnviz.errors import ConfigError, InputError, check_int, check_json_types, refuse_url

TYPES = {"epochs": "int", "lr": "float", "tie": "bool", "name": "str", "cap": "int | None", "sizes": "int | list[int]"}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"epochs": 2.0}, "epochs must be a whole number, got 2.0 (float)"),
        ({"epochs": True}, "epochs must be a whole number, got True (bool)"),
        ({"lr": "fast"}, "lr must be a number, got 'fast' (str)"),
        ({"lr": False}, "lr must be a number, got False (bool)"),
        ({"tie": 1}, "tie must be true or false, got 1 (int)"),
        ({"name": None}, "name must be a string, got None (NoneType)"),
        ({"cap": "10"}, "cap must be a whole number or null, got '10' (str)"),
    ],
)
def test_a_value_of_the_wrong_json_type_is_named(values, message):
    with pytest.raises(ConfigError) as e:
        check_json_types(values, TYPES)
    assert str(e.value) == message


def test_values_of_the_right_type_pass_and_a_type_json_cannot_name_is_left_to_its_reader():
    check_json_types({"epochs": 3, "lr": 1, "tie": False, "name": "x", "cap": None, "sizes": "anything"}, TYPES)
    with pytest.raises(ConfigError, match=r"^train\.lr must be a number"):
        check_json_types({"lr": []}, TYPES, owner="train.")


@pytest.mark.parametrize("given", ["https://x.org/a.csv", "HTTP://x", " ftp://h/f", "file:///etc/passwd", "hf://d/x"])
def test_a_url_is_refused_with_what_to_do(given):
    with pytest.raises(InputError, match="is a URL; attnviz reads a data file from this machine only"):
        refuse_url(given, "a data file")


@pytest.mark.parametrize("given", ["data/a.csv", "/tmp/https:/x", "multi30k-de-en", "C:/x.csv", "hf:wmt16"])
def test_a_local_path_or_a_name_passes(given):
    refuse_url(given, "a data file")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "beam size must be a whole number between 1 and 20, got 0"),
        ("3", "beam size must be a whole number between 1 and 20, got '3'"),
        (2.0, "beam size must be a whole number between 1 and 20, got 2.0"),
        (True, "beam size must be a whole number between 1 and 20, got True"),
    ],
)
def test_check_int_names_the_value_and_its_range(value, message):
    with pytest.raises(InputError) as caught:
        check_int(value, "beam size", 1, 20)
    assert str(caught.value) == message
    check_int(20, "beam size", 1, 20)
    with pytest.raises(ConfigError, match="n_train must be a whole number 0 or more, got -1"):
        check_int(-1, "n_train", 0, error=ConfigError)


def test_a_model_read_with_wrong_arguments_says_what_to_give():
    import attnviz

    with pytest.raises(InputError, match="give a model's name or a checkpoint's path, not NoneType"):
        attnviz.load(None)
    model = attnviz.load("toy-fr-dot-luong")
    with pytest.raises(InputError, match="got '3'"):
        model.translate("the cat", beam_size="3")
    with pytest.raises(InputError, match="the source's word 2 is empty or blank"):
        model.align(["the", " "], "le chat")


def test_one_string_where_a_list_is_asked_is_refused_not_read_as_characters(trained):
    """Iterated, a string gives its characters: align_batch aligned character pairs, bleu scored 0 for a
    perfect match, evaluate_checkpoints looked for a model named 't'."""
    from attnviz.evaluation import bleu, evaluate_checkpoints

    with pytest.raises(InputError, match=r"give a list of source sentences, not one str \('ab'\); for one, use align"):
        trained.align_batch("ab", "cd")
    with pytest.raises(InputError, match="give a list of hypotheses"):
        bleu("a b c d", "a b c d")
    assert bleu(["a b c d"], ["a b c d"]) == pytest.approx(100.0)
    with pytest.raises(InputError, match="give a list of model names or checkpoint paths, not one str"):
        evaluate_checkpoints("toy-fr-general-luong")
    with pytest.raises(InputError, match="give a list of sentences, not None"):
        trained.translate_batch(None)


def test_n_best_without_a_beam_wide_enough_is_refused_not_ignored(trained):
    with pytest.raises(InputError, match="n_best lists a beam's hypotheses; give beam_size=2 or more"):
        trained.translate("a b", n_best=5)
    with pytest.raises(InputError, match=r"n_best \(at most the beam size\) must be a whole number between 1 and 2"):
        trained.translate("a b", beam_size=2, n_best=5)
    assert len(trained.translate("a b", beam_size=3, n_best=2).hypotheses) == 2
