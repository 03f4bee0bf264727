"""The file dialogs of every screen, opening in one place: the folder of the project that is open
(when it has been saved under a name), else the folder of the most recent project, else the
user's Documents folder (or home). Exports suggest a file name there; nothing opens in the
program's own folder.

Each screen keeps a small ``ask_…`` method around these (tests replace that method), so the
screens only say what is asked: the title, the kinds of file and, for a save, the suggested name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

__all__ = [
    "SPREADSHEETS",
    "WORKBOOK",
    "ask_then",
    "open_file",
    "open_files",
    "save_file",
    "start_folder",
]

SPREADSHEETS = "Spreadsheets (*.xlsx *.xlsm *.xls *.csv *.tsv);;All files (*)"
WORKBOOK = "Excel workbooks (*.xlsx)"


def ask_then(ask: Callable[[], str | None], act: Callable[[str], Any]) -> None:
    """Ask for a file with ``ask`` (a screen's ``ask_…`` method) and, unless the user cancelled,
    hand the path to ``act``: the slot behind an Import/Export button."""
    path = ask()
    if path:
        act(path)


def start_folder(project: Any = None, recent: list[str] | None = None) -> str:
    """Where a file dialog opens: the saved project's folder, else the folder of the first recent
    project that still exists, else Documents (or home)."""
    if project is not None and not getattr(project, "is_temporary", True):
        folder = Path(project.path).parent
        if folder.is_dir():
            return str(folder)
    for path in recent or []:
        folder = Path(path).parent
        if Path(path).exists() and folder.is_dir():
            return str(folder)
    documents = Path.home() / "Documents"
    return str(documents if documents.is_dir() else Path.home())


def _folder_of(parent: QWidget | None) -> str:
    """The start folder for ``parent``'s window (its main window knows the project)."""
    widget = parent
    while widget is not None:
        finder = getattr(widget, "default_folder", None)
        if callable(finder):
            return finder()
        main = getattr(widget, "main_window", None)
        if main is not None and callable(getattr(main, "default_folder", None)):
            return main.default_folder()
        widget = widget.parentWidget()
    return start_folder()


def open_file(parent: QWidget | None, title: str, filters: str = SPREADSHEETS) -> str | None:
    """Ask for one file to read; None when the user cancels."""
    path, _ = QFileDialog.getOpenFileName(parent, title, _folder_of(parent), filters)
    return path or None


def open_files(parent: QWidget | None, title: str, filters: str) -> list[str]:
    """Ask for one or more files to read; [] when the user cancels."""
    paths, _ = QFileDialog.getOpenFileNames(parent, title, _folder_of(parent), filters)
    return list(paths)


def save_file(parent: QWidget | None, title: str, name: str,
              filters: str = WORKBOOK) -> str | None:
    """Ask where to write a new file, suggesting ``name`` in the start folder; None when the user
    cancels. A workbook's place is checked at once (:func:`core.tables.check_export_target`: a
    folder EvalDesk may not write in, someone else's file, another kind of file): the problem is
    said and the dialog opens again there, so an export never fails at its end. The answer is
    the exact file that will be written (``.xlsx`` added to a name without one)."""
    start = str(Path(_folder_of(parent)) / name)
    while True:
        path, _ = QFileDialog.getSaveFileName(parent, title, start, filters)
        if not path or filters != WORKBOOK:
            return path or None
        from core.tables import TableError, check_export_target  # not at start-up (~0.1 s)

        try:
            return str(check_export_target(path))
        except TableError as exc:
            QMessageBox.warning(parent, title, exc.message)
            start = path
