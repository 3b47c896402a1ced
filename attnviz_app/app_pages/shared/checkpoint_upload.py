"""Your own checkpoint from the browser: upload an attnviz ``.safetensors`` (checked as the CLI
checks it), private to this session until saved into the models folder; and share the models this
session trained on its uploads (private to it until then). attnviz.server.checkpoints does the work.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.server import (
    MAX_CHECKPOINT_UPLOAD_MB,
    MAX_CHECKPOINTS_PER_SESSION,
    remove_checkpoint,
    save_checkpoint,
    session_checkpoints,
    store_checkpoint,
    without_server_paths,
)
from attnviz.store import UPLOADED, ModelEntry, drop_owner, read_header
from attnviz_app.app_pages.shared.common import escape_markdown, refresh_models, session_id, style_name
from attnviz_app.app_pages.shared.uploads import session_holder

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

COUNT_KEY = "ckpt_upload_count"  # a new uploader after each upload: the next file starts afresh
MESSAGE_KEY = "ckpt_upload_message"  # (kind, text) of the last upload, save or share
HELP = (
    f"An attnviz checkpoint (.safetensors, at most {MAX_CHECKPOINT_UPLOAD_MB} MB), checked as `attnviz` checks one: "
    "its header, every weight's type and shape, finite weights. It stays private to this browser tab and is "
    "deleted when the tab's session ends, unless you save it into the models folder."
)

Opener = Callable[[ModelEntry], None]  # opens a model entry in the page that drew the panel


def _said(error: AttnvizError) -> str:
    """An error for the page: no path of the server's folders in it, escaped."""
    return escape_markdown(without_server_paths(str(error)))


def _describe(entry: ModelEntry) -> str:
    task = f", task {entry.task}" if entry.task else ""
    return f"{entry.name} ({entry.score}/{style_name(entry.style)}{task})"


def _renamed(name: str, file_name: str) -> bool:
    """Whether ``name`` is the file's stem with ``-uploaded`` added (another model had that name)."""
    stem = file_name.rsplit(".", 1)[0]
    return (
        name != stem
        and re.fullmatch(r".+-uploaded(-\d+)?", name) is not None
        and not re.fullmatch(r".+-uploaded(-\d+)?", stem)
    )


def _uploaded(key: str, models: list[ModelEntry], on_open: Opener | None) -> None:
    file = st.session_state.get(key)
    if file is None:
        return
    sid = session_id()
    try:
        entry = store_checkpoint(file.getvalue(), file.name, sid, session_holder(sid), {m.name for m in models})
    except AttnvizError as e:
        st.session_state[MESSAGE_KEY] = ("error", f"Not opened: {_said(e)}")
    else:
        note = " (renamed: a model of that name is listed already)" if _renamed(entry.name, file.name) else ""
        st.session_state[MESSAGE_KEY] = ("success", f"Opened {escape_markdown(_describe(entry))}{note}.")
        if on_open is not None:
            on_open(entry)
    st.session_state[COUNT_KEY] = st.session_state.get(COUNT_KEY, 0) + 1


def _save(entry: ModelEntry, name_key: str, on_open: Opener | None) -> None:
    try:
        saved = save_checkpoint(session_id(), entry.path, st.session_state.get(name_key) or entry.name)
    except AttnvizError as e:
        st.session_state[MESSAGE_KEY] = ("error", f"Not saved: {_said(e)}")
        return
    refresh_models()
    st.session_state[MESSAGE_KEY] = (
        "success",
        f"Saved as {escape_markdown(saved.name)} in the models folder: every session lists it now.",
    )
    if on_open is not None:
        on_open(ModelEntry.from_trained(saved, read_header(saved), session_id()))


def _share(entry: ModelEntry) -> None:
    try:
        drop_owner(entry.path, session_id())
    except AttnvizError as e:
        st.session_state[MESSAGE_KEY] = ("error", f"Not shared: {_said(e)}")
        return
    refresh_models()
    st.session_state[MESSAGE_KEY] = ("success", f"Shared {escape_markdown(entry.name)} with every session.")


def _remove(entry: ModelEntry) -> None:
    remove_checkpoint(session_id(), entry.path)
    st.session_state[MESSAGE_KEY] = ("info", f"Removed {escape_markdown(entry.name)}.")


def _uploaded_list(uploads: list[ModelEntry], on_open: Opener | None) -> None:
    st.caption("Uploaded in this tab (only this tab sees them; deleted when it closes unless saved):")
    for k, entry in enumerate(uploads):
        st.markdown(f"**{escape_markdown(_describe(entry))}**")
        name_key = f"ckpt_save_name_{k}"
        st.session_state.setdefault(name_key, entry.name)
        st.text_input(
            "Save as",
            key=name_key,
            help="A taken or shipped name gets -2, -3 ...: nothing is overwritten.",
            persist_state="session",
        )
        save, remove = st.columns(2)
        save.button(
            "Save",
            key=f"ckpt_save_{k}",
            on_click=_save,
            args=(entry, name_key, on_open),
            help="Copy it into the models folder under this name: every session lists it then.",
        )
        remove.button(
            "Remove",
            key=f"ckpt_remove_{k}",
            on_click=_remove,
            args=(entry,),
            help="Delete it now (closing this tab does too).",
        )


def _private_list(private: list[ModelEntry]) -> None:
    st.caption(
        "Trained on your upload in this tab: private to it (their vocabulary and examples show your data's words). "
        "Share one to list it for every session."
    )
    for k, entry in enumerate(private):
        left, right = st.columns([3, 2], vertical_alignment="center")
        left.markdown(escape_markdown(_describe(entry)))
        right.button("Share", key=f"ckpt_share_{k}", on_click=_share, args=(entry,))


def checkpoint_upload(
    models: list[ModelEntry], on_open: Opener | None = None, container: DeltaGenerator | None = None
) -> None:
    """The "Your own checkpoint" panel in ``container`` (the sidebar by default): an uploader, this
    session's uploaded checkpoints (save into the models folder, remove) and its private models
    trained on uploads (share). ``models`` is the page's model list; ``on_open(entry)`` opens an
    uploaded or saved model in the page (called from a widget callback, so it may set widget keys)."""
    sid = session_id()
    uploads = session_checkpoints(sid)
    private = [m for m in models if m.owner == sid and m.source != UPLOADED]
    message = st.session_state.pop(MESSAGE_KEY, None)  # shown once, after the action that set it
    box = (container or st.sidebar).expander("Your own checkpoint", expanded=bool(uploads or private or message))
    with box:
        if uploads:
            session_holder(sid)  # watch for the session's end: its uploads are deleted then
        key = f"ckpt_upload_{st.session_state.get(COUNT_KEY, 0)}"
        if len(uploads) < MAX_CHECKPOINTS_PER_SESSION:
            st.file_uploader(
                "Open an attnviz checkpoint", key=key, help=HELP, on_change=_uploaded, args=(key, models, on_open)
            )
        else:
            st.caption(f"{len(uploads)} checkpoints uploaded, the most a tab may hold: remove one to upload another.")
        if message:
            kind, text = message
            {"error": st.error, "success": st.success, "info": st.info}[kind](text)
            if kind == "error":  # also where the eye is: the panel may sit below the sidebar's fold
                st.toast(text, icon=":material/error:", duration="long")
        if uploads:
            _uploaded_list(uploads, on_open)
        if private:
            _private_list(private)
