"""Model files the user already has: the GGUF check, import by copy or in place, the profile."""

from __future__ import annotations

import pytest

from core.local_models.files import (
    NotAModelFile,
    import_model_file,
    installed_models,
    profile_for_file,
    read_gguf,
)
from core.machine import default_local_concurrency
from core.runs import Cancelled, CancelToken, Progress
from core.settings import LOCAL_MODEL_PREFIX
from tests.core.local_models.fake_servers import gguf_bytes


@pytest.fixture
def usb_stick(tmp_path):
    folder = tmp_path / "usb"
    folder.mkdir()
    path = folder / "Good-Model-Q4_K_M.gguf"
    path.write_bytes(gguf_bytes(300_000, name="Good Model", licence="mit"))
    return path


def test_a_gguf_file_says_its_name_licence_and_context(usb_stick):
    info = read_gguf(usb_stick)
    assert info.version == 3 and info.name == "Good Model" and info.licence == "mit"
    assert info.architecture == "llama" and info.context_length == 4096


@pytest.mark.parametrize("content, reason", [
    (b"PK\x03\x04 a zip file really", "not a GGUF model file"),
    (b"GGUF", "not a GGUF model file"),
    (b"GGUF\x03\x00\x00\x00\x00\x00", "ends too early"),
    (b"GGUF\x09\x00\x00\x00" + b"\x00" * 20, "version EvalDesk does not know"),
])
def test_other_files_are_refused_with_a_plain_reason(tmp_path, content, reason):
    path = tmp_path / "thing.gguf"
    path.write_bytes(content)
    with pytest.raises(NotAModelFile, match=reason):
        read_gguf(path)


def test_import_by_copy_puts_the_file_in_the_models_folder(usb_stick, tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    states = []
    model = import_model_file(usb_stick, folder=folder, progress=Progress(states.append))
    copied = folder / usb_stick.name
    assert model.path == str(copied) and copied.read_bytes() == usb_stick.read_bytes()
    assert model.licence == "mit (as the file says)" and not model.linked
    assert states[-1].done == states[-1].total == usb_stick.stat().st_size
    [listed] = installed_models(folder)
    assert listed.name == "Good Model (1M)" and listed.path == str(copied)
    profile = profile_for_file(listed)
    assert profile.is_local and profile.gguf_path == str(copied)
    assert profile.model == LOCAL_MODEL_PREFIX + "Good-Model-Q4_K_M"
    assert profile.context_window == 4096
    assert profile.max_concurrency == default_local_concurrency()  # from this computer


def test_import_in_place_links_the_file_without_copying(usb_stick, tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    model = import_model_file(usb_stick, copy=False, folder=folder)
    assert model.linked and model.path == str(usb_stick.resolve())
    assert not list(folder.glob("*.gguf"))
    [listed] = installed_models(folder)
    assert listed.linked and listed.path == model.path and listed.exists


def test_a_cancelled_copy_leaves_no_half_file(usb_stick, tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(Cancelled):
        import_model_file(usb_stick, folder=folder, cancel=cancel)
    assert list(folder.iterdir()) == [] and usb_stick.exists()


def test_importing_a_file_that_is_not_a_model_changes_nothing(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    bad = tmp_path / "notes.gguf"
    bad.write_text("my notes")
    with pytest.raises(NotAModelFile, match="notes.gguf is not a GGUF model file"):
        import_model_file(bad, folder=folder)
    assert list(folder.iterdir()) == []


def test_the_bundled_model_file_is_a_gguf_file(bundled_gguf):
    info = read_gguf(bundled_gguf)
    assert info.architecture.startswith("gemma")
