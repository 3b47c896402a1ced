"""Every option of every command has a help text, and the texts agree with the parser: a default
stated in a help is the option's real default, a ``--method`` that takes dtw says so, and an
option shared by several commands (--model, --beam, --device) reads the same in each."""

from __future__ import annotations

import argparse
import re

import pytest

from attnviz.cli.main import build_parser
from attnviz.cli.options import BEAM_HELP, MODEL_HELP
from attnviz.devices import DEVICES

_PARSER = build_parser([])
COMMANDS: dict[str, argparse.ArgumentParser] = next(a for a in _PARSER._actions if a.dest == "command").choices
# "default 0.3", "default: 8501", "(default auto: ...)": the first word after "default" as the help states it
_STATED = re.compile(r"\bdefault:? ([^\s;,)]+)")


def _actions(name: str) -> list[argparse.Action]:
    """The actions of command ``name``'s parser, -h/--help left out."""
    return [a for a in COMMANDS[name]._actions if not isinstance(a, argparse._HelpAction)]


def _option(name: str, flag: str) -> argparse.Action | None:
    return next((a for a in _actions(name) if flag in a.option_strings), None)


def _with(flag: str) -> list[tuple[str, argparse.Action]]:
    """(command, action) of every command that has ``flag``."""
    return [(name, a) for name in COMMANDS if (a := _option(name, flag)) is not None]


def _stated(help_text: str) -> str | None:
    found = _STATED.search(help_text)
    return found.group(1).rstrip(":") if found else None  # "default 1: greedy" states 1


def _same(stated: str, default: object) -> bool:
    """Whether a default written in a help (``5e-4``, ``8501``, ``auto``) is the action's value."""
    if isinstance(default, bool) or not isinstance(default, int | float):
        return stated == str(default)
    try:
        return float(stated) == float(default)
    except ValueError:
        return False


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_option_and_positional_has_a_help_text(name):
    missing = [a.option_strings or [a.dest] for a in _actions(name) if not (a.help or "").strip()]
    assert missing == [], f"attnviz {name}: give these a help text: {missing}"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_default_stated_in_a_help_is_the_real_one(name):
    for a in _actions(name):
        if a.default is None or a.default is False or a.default == argparse.SUPPRESS:
            continue
        stated = _stated(a.help or "")
        assert stated is not None, f"attnviz {name} {a.option_strings or a.dest}: say its default {a.default!r}"
        assert _same(stated, a.default), f"attnviz {name} {a.option_strings}: help says {stated}, not {a.default!r}"


def test_every_method_that_takes_dtw_says_so():
    methods = [(name, a) for name, a in _with("--method") if "dtw" in (a.choices or ())]
    assert {name for name, _ in methods} >= {"align", "align-eval", "attention", "hf", "align-report", "markup"}
    for name, a in methods:
        assert "dtw" in a.help, f"attnviz {name} --method takes dtw: mention it in its help"


def test_beam_reads_the_same_everywhere_and_states_its_default():
    beams = _with("--beam")
    assert {name for name, _ in beams} >= {"translate", "evaluate", "markup", "hf"}
    for name, a in beams:
        assert a.help == BEAM_HELP, f"attnviz {name} --beam"
        assert _same(_stated(a.help), a.default), f"attnviz {name} --beam: default {a.default!r}"


def test_device_states_its_real_default_and_every_device():
    devices = _with("--device")
    assert {name for name, _ in devices} >= {"translate", "align", "align-eval", "evaluate", "hf", "train"}
    for name, a in devices:
        assert a.help.startswith("where the model "), f"attnviz {name} --device"
        assert ", ".join(DEVICES) in a.help, f"attnviz {name} --device: list {DEVICES}"
        stated = _stated(a.help)
        if a.default is None:  # train: the recipe's device, else cpu; no literal default to state
            assert stated not in DEVICES and "the recipe's, else cpu" in a.help, f"attnviz {name} --device"
        else:
            assert stated == a.default, f"attnviz {name} --device: help says {stated}, default is {a.default!r}"


def test_model_reads_the_same_everywhere():
    models = _with("--model")
    assert {name for name, _ in models} >= {"translate", "align", "align-eval", "evaluate", "attribute"}
    for name, a in models:
        assert a.help.startswith(MODEL_HELP), f"attnviz {name} --model"
    replayed = next(a for a in _actions("replay") if a.dest == "models")
    assert replayed.help.startswith(MODEL_HELP)


def test_data_specs_use_one_placeholder():
    for name in COMMANDS:
        for a in _actions(name):
            text = a.help or ""
            if "?src=" in text:
                assert "src=..&" not in text and "?src=COL&tgt=COL" in text, f"attnviz {name} {a.option_strings}"
