"""The user's own folders below the temporary folder (attnviz/data/scratch.py): named for the user,
made private, and refused by name (with the setting that moves them) when unusable or another's."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from attnviz.data import own_folder, user_temp
from attnviz.errors import DataError


def test_each_user_has_a_folder_of_their_own_below_the_temporary_folder():
    path = user_temp("attnviz-x")
    assert path.parent == Path(tempfile.gettempdir())
    mine = str(os.getuid()) if hasattr(os, "getuid") else ""
    assert path.name.startswith("attnviz-x-") and path.name.endswith(mine)


def test_a_missing_folder_is_made_private_with_its_parents(tmp_path):
    path = own_folder(tmp_path / "a" / "b", "ATTNVIZ_X")
    assert path.is_dir() and (os.name != "posix" or path.stat().st_mode & 0o077 == 0)
    assert own_folder(path, "ATTNVIZ_X") == path  # there already: the same folder


def test_a_file_in_the_way_is_refused_naming_the_setting(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(DataError, match=r"cannot use .*f .*set ATTNVIZ_X to a folder of yours"):
        own_folder(tmp_path / "f", "ATTNVIZ_X")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a folder away needs root")
def test_a_folder_another_user_made_is_refused_not_trusted(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)  # nobody
    with pytest.raises(DataError, match="belongs to another user; set TMPDIR"):
        own_folder(theirs, "TMPDIR")
