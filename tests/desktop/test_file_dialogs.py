"""Every file dialog opens in the project's folder (issue 13, point 17): exports and imports of
both LLM wizards and their editors, asked through desktop.file_dialogs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from desktop.file_dialogs import start_folder


class Asked:
    """Stands in for QFileDialog's static functions: records the folder each dialog opened in
    and answers as if the user cancelled."""

    def __init__(self, monkeypatch) -> None:
        self.folders: list[tuple[str, str]] = []
        for name in ("getOpenFileName", "getOpenFileNames", "getSaveFileName"):
            monkeypatch.setattr(QFileDialog, name, staticmethod(self._answer(name)))

    def _answer(self, name):
        def answer(parent, title, folder, filters, *args, **kwargs):
            self.folders.append((title, folder))
            return ([] if name == "getOpenFileNames" else "", "")

        return answer


@pytest.fixture
def saved(window, tmp_path):
    folder = tmp_path / "Class 7B"
    folder.mkdir()
    window.ask_save_path = lambda: str(folder / "study.evaldesk")
    window.new_project()
    assert window.save_project_as()
    return folder


def test_start_folder_prefers_the_saved_project_then_a_recent_one(tmp_path):
    class Proj:
        is_temporary = False
        path = tmp_path / "a" / "p.evaldesk"

    (tmp_path / "a").mkdir()
    recent = tmp_path / "b" / "old.evaldesk"
    recent.parent.mkdir()
    recent.write_bytes(b"x")
    assert start_folder(Proj(), [str(recent)]) == str(tmp_path / "a")
    Proj.is_temporary = True
    assert start_folder(Proj(), [str(tmp_path / "gone.evaldesk"), str(recent)]) == str(
        tmp_path / "b")
    assert Path(start_folder(None, [])) in (Path.home(), Path.home() / "Documents")


def test_majeval_dialogs_open_in_the_project_folder(window, saved, monkeypatch):
    from desktop.majeval import open_majeval_wizard

    asked = Asked(monkeypatch)
    wiz = open_majeval_wizard(window)
    assert wiz.pages["documents"].ask_document_paths() == []
    assert wiz.pages["items"].ask_items_path() is None
    assert wiz.pages["results"].ask_export_path() is None
    editor = wiz.pages["personas"].editor
    assert editor.ask_path(save=True) is None and editor.ask_path(save=False) is None
    assert len(asked.folders) == 5
    for title, folder in asked.folders:
        assert Path(folder) == saved or Path(folder).parent == saved, title
    export = next(f for t, f in asked.folders if t == "Export the results")
    assert Path(export) == saved / "majeval-results.xlsx"


def test_interacteval_dialogs_open_in_the_project_folder(window, saved, monkeypatch):
    from desktop.interacteval import open_interacteval_wizard

    asked = Asked(monkeypatch)
    wiz = open_interacteval_wizard(window)
    assert wiz.pages["samples"].ask_samples_path() is None
    assert wiz.pages["think_aloud"].ask_notes_path() is None
    assert wiz.pages["checklist"].ask_checklist_export_path() is None
    assert wiz.pages["checklist"].ask_checklist_import_path() is None
    assert wiz.pages["score"].ask_texts_path() is None
    assert wiz.pages["results"].ask_results_path() is None
    assert len(asked.folders) == 6
    for title, folder in asked.folders:
        assert Path(folder) == saved or Path(folder).parent == saved, title


def test_the_main_window_uses_the_same_folder(window, saved, monkeypatch):
    asked = Asked(monkeypatch)
    assert window.ask_open_path() is None
    assert Path(asked.folders[-1][1]) == saved


def test_aqer_exports_open_in_the_project_folder(window, saved, monkeypatch):
    from desktop.aqer import open_aqer_wizard

    asked = Asked(monkeypatch)
    wiz = open_aqer_wizard(window)
    assert wiz.pages["file"].ask_template_path() is None
    assert wiz.pages["results"].ask_export_path() is None
    assert [Path(f) for _t, f in asked.folders] == [saved / "aqer-template.xlsx",
                                                    saved / "answers-aqer.xlsx"]


def test_ask_then_hands_the_chosen_path_on_and_does_nothing_when_cancelled():
    from desktop.file_dialogs import ask_then

    done: list[str] = []
    ask_then(lambda: "/tmp/out.xlsx", done.append)
    ask_then(lambda: None, done.append)
    ask_then(lambda: "", done.append)
    assert done == ["/tmp/out.xlsx"]


def test_an_export_place_that_cannot_be_written_is_said_at_once_and_asked_again(
        tmp_path, monkeypatch):
    """Issue 30: the wizard's export dialog checks the place chosen before anything runs (a
    folder EvalDesk may not write in, someone else's workbook, another kind of file) and names
    the exact file it will write."""
    from PySide6.QtWidgets import QMessageBox

    from desktop.file_dialogs import save_file

    theirs = tmp_path / "grades.xlsx"
    theirs.write_bytes(b"not ours")
    answers = iter([str(theirs), str(tmp_path / "notes.csv"), str(tmp_path / "results")])
    asked: list[str] = []
    said: list[str] = []

    def dialog(parent, title, start, filters, *args, **kwargs):
        asked.append(start)
        return next(answers), filters

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(dialog))
    monkeypatch.setattr(QMessageBox, "warning",
                        staticmethod(lambda parent, title, text: said.append(text)))
    chosen = save_file(None, "Export the results", "results.xlsx")
    assert chosen == str(tmp_path / "results.xlsx")
    assert "was not written by EvalDesk" in said[0] and "ending in .xlsx" in said[1]
    assert asked[1:] == [str(theirs), str(tmp_path / "notes.csv")]  # opened again there
