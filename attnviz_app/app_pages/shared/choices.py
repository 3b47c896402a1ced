"""Select boxes whose labels follow the data (a sentence's tokens, a task's models, a training's probes),
kept on one of their options.

Streamlit sends a select box's value back as the label the browser shows. After the labels change (a new
sentence, another task), a browser that still shows an old label sends it back, and Streamlit hands the
page that label as a plain string, none of the options: a step box crashed comparing it with a number, a
score box fell back to its default and switched the model. :func:`keep_choice` reads such a label back to
the option it stood for, and writes the value every run, so the browser redraws the box with this run's
label."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st

_T = TypeVar("_T")


def _labels_key(key: str) -> str:
    return f"{key}__labels"  # the labels the box showed last run, and the option each stood for


def keep_choice(key: str, options: Sequence[_T], label: Callable[[Any], str], default: _T) -> _T:
    """The box ``key``'s value as one of ``options`` (``default`` when it is none of them and no label it
    showed stands for one), written back to the session before the box is drawn."""
    value = st.session_state.get(key, default)
    if value not in options:
        shown = st.session_state.get(_labels_key(key), {})
        value = shown.get(value, default) if isinstance(value, str) else default
        if value not in options:
            value = default
    st.session_state[key] = value
    st.session_state[_labels_key(key)] = {label(option): option for option in options}
    return value
