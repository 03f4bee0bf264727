"""What the InteractEval session keeps in a project: the wizard state and the texts file."""

from __future__ import annotations

from core.interacteval.inputs import TextsSetup
from core.interacteval.model import Dimension
from core.interacteval.session import (
    STATE_KIND,
    WizardState,
    open_state,
    open_texts_file,
    save_state,
    store_texts_file,
)
from core.project import Project
from core.project.payloads import UNREADABLE_SUFFIX


def test_a_state_that_cannot_be_read_is_kept_aside_and_named(tmp_path):
    with Project.create(tmp_path / "s.evaldesk") as project:
        bad = {"dimensions": "not a list", "page": "build"}
        project.put_artefact(STATE_KIND, "state", bad, origin="human")

        state, problem = open_state(project)

        assert state == WizardState()
        assert "InteractEval choices" in problem and "kept in the project" in problem
        (kept,) = project.list_artefacts(STATE_KIND + UNREADABLE_SUFFIX)
        assert kept.payload == bad  # the original is not saved over
        save_state(project, state)
        assert project.list_artefacts(STATE_KIND + UNREADABLE_SUFFIX)[0].payload == bad


def test_a_state_saved_by_a_newer_evaldesk_is_not_replaced(tmp_path):
    with Project.create(tmp_path / "n.evaldesk") as project:
        newer = {**WizardState(dimensions=[Dimension(name="Clarity")]).model_dump(mode="json"),
                 "_payload_version": 99}
        project.put_artefact(STATE_KIND, "state", newer, origin="human")
        state, problem = open_state(project)
        assert state.dimensions == [] and "newer EvalDesk" in problem
        (kept,) = project.list_artefacts(STATE_KIND + UNREADABLE_SUFFIX)
        assert kept.payload == newer


def test_a_state_saved_before_versions_still_opens(tmp_path):
    with Project.create(tmp_path / "o.evaldesk") as project:
        old = WizardState(dimensions=[Dimension(name="Clarity")], current="Clarity")
        project.put_artefact(STATE_KIND, "state", old.model_dump(mode="json"), origin="human")
        state, problem = open_state(project)
        assert problem == "" and state == old


def test_a_texts_file_that_is_gone_is_read_from_the_project_without_new_temp_folders(tmp_path):
    texts = tmp_path / "texts.csv"
    texts.write_text("text\nhello\n", encoding="utf-8")
    with Project.create(tmp_path / "t.evaldesk") as project:
        setup = store_texts_file(project, TextsSetup(), texts)
        texts.unlink()
        first, _setup, note = open_texts_file(project, setup)
        again, _setup, _note = open_texts_file(project, setup)
        assert first == again and first.read_text(encoding="utf-8") == "text\nhello\n"
        assert "copy saved in the project" in note
