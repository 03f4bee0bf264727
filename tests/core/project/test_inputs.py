"""Input files: one rule for a file that is there, changed, or gone; one fingerprint."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from core.project import Project
from core.project.inputs import file_hash, fingerprint, open_input, store_input


@pytest.fixture
def project(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as p:
        yield p


def test_an_unchanged_file_is_read_where_it_was_chosen(project, tmp_path):
    source = tmp_path / "answers.csv"
    source.write_text("a,b\n1,2\n")
    ref = store_input(project, "answers", source)
    assert ref.content_hash == file_hash(source) and ref.file_name == "answers.csv"
    opened = open_input(project, "answers", ref)
    assert opened.path == source and opened.note == "" and not opened.changed


def test_a_changed_file_is_read_again_and_copied_again(project, tmp_path):
    source = tmp_path / "answers.csv"
    source.write_text("a,b\n1,2\n")
    ref = store_input(project, "answers", source)
    source.write_text("a,b\n1,3\n")
    opened = open_input(project, "answers", ref)
    assert opened.changed and "changed since it was last read" in opened.note
    assert opened.ref.content_hash == file_hash(source) != ref.content_hash
    assert project.get_input(opened.ref.input_id).payload == b"a,b\n1,3\n"


def test_a_file_that_is_gone_is_read_from_the_project_copy_in_one_reused_folder(
        project, tmp_path, evaldesk_home):
    source = tmp_path / "answers.csv"
    source.write_text("a,b\n1,2\n")
    ref = store_input(project, "answers", source)
    source.unlink()
    first = open_input(project, "answers", ref)
    assert first.path.read_text() == "a,b\n1,2\n" and first.path.name == "answers.csv"
    assert "no longer there" in first.note and "copy saved in the project" in first.note
    second = open_input(project, "answers", ref)
    assert second.path == first.path  # no new temporary folder per call
    assert len(list(first.path.parent.parent.iterdir())) == 1


def test_neither_file_nor_copy_says_what_to_do(project):
    from core.project.inputs import InputRef

    with pytest.raises(FileNotFoundError, match="Choose the file again"):
        open_input(project, "answers", InputRef(path="/nowhere/x.xlsx", file_name="x.xlsx"))


class Small(BaseModel):
    a: int
    b: list[str]


def test_fingerprint_is_stable_and_ignores_key_order():
    assert fingerprint({"a": 1, "b": [1, 2]}) == fingerprint({"b": [1, 2], "a": 1})
    assert fingerprint(Small(a=1, b=["x"])) == fingerprint({"b": ["x"], "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    assert len(fingerprint("x")) == 16
