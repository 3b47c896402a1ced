"""Your model, Hugging Face folder: what a browser is told names what its user gave (the zip's file
name, the path typed), never a path of the server: not its upload folder, not its temporary folder,
not the folders it allows."""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attnviz.server import server_folder
from attnviz.store import hf_roots
from attnviz_app import page_file
from tests.support.hf_models import SOURCE, marian_folder
from tests.support.paths import APP

PICKLED = b'{"model_type": "marian", "is_encoder_decoder": true}'


@pytest.fixture(autouse=True)
def hf_folders(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_HF_FOLDERS", str(tmp_path_factory.getbasetemp()))


def page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(page_file("yours/yours.py")).run()
    at.segmented_control(key="yours_hf_how").set_value("Upload a zip").run()
    return at


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buffer.getvalue()


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    return at.file_uploader(key="yours_hf_zip").set_value((name, data, "application/zip")).run()


def shown(at: AppTest) -> str:
    """Every message and caption the page shows."""
    parts = [*at.error, *at.warning, *at.info, *at.success, *at.caption, *at.markdown]
    return "\n".join(p.value for p in parts)


def assert_no_server_path(text: str, *more: Path) -> None:
    for path in (server_folder(), Path(tempfile.gettempdir()), *hf_roots(), *more):
        assert str(path) not in text, path
    assert "attnviz-uploads" not in text and "server-" not in text


def test_a_refused_zip_is_named_by_its_file_name(tmp_path):
    at = upload(page(), "my-marian.zip", zipped({"config.json": PICKLED, "pytorch_model.bin": b"never read"}))
    assert not at.exception
    error = at.error[0].value.replace("\\", "")  # markdown escapes
    assert error.startswith("The upload my-marian.zip holds only pytorch_model.bin"), error
    assert error.endswith("save_pretrained(folder, safe_serialization=True)"), error  # a code, not a word: no stop
    assert_no_server_path(shown(at), tmp_path)


def test_a_folder_outside_the_allowed_ones_is_refused_without_listing_the_server_folders():
    at = page()
    at.segmented_control(key="yours_hf_how").set_value("Path on the server").run()
    at.text_input(key="yours_hf_path").set_value("/etc/../root").run()
    assert not at.exception
    assert "ATTNVIZ_HF_FOLDERS" in at.error[0].value.replace("\\", "")
    assert_no_server_path(shown(at))


def test_a_zipped_model_is_named_after_its_upload_and_read_from_it(tmp_path):
    folder = marian_folder(tmp_path / "files")
    at = upload(page(), "opus-tiny.zip", zipped({p.name: p.read_bytes() for p in folder.iterdir()}))
    at.text_input(key="yours_hf_text").set_value(SOURCE).run()
    assert not at.exception and not at.error
    caption = next(c.value for c in at.caption if "decoder layers" in c.value).replace("\\", "")
    assert caption.startswith("opus-tiny: marian") and "Read offline from the upload opus-tiny.zip" in caption
    assert_no_server_path(shown(at), tmp_path)
