"""The model manager: recommended model files (and whether they fit this computer), downloads
with progress, pause, resume and cancel, and “Use a model file I already have”.

All the work is in ``core.local_models``; a download or a copy runs in the loop's executor and
reports through ``core.runs.Progress`` (adapted to a Qt signal here). A file that is ready gets
a model profile at once. Closing the window pauses a download (what was downloaded is kept).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from core.local_models import catalogue
from core.local_models.catalogue import BUNDLED_DEMO, Computer, RecommendedModel, fit, format_size
from core.local_models.download import DownloadError, discard_partial, download_model, partial_state
from core.local_models.files import (
    ModelFile,
    NotAModelFile,
    import_model_file,
    installed_models,
    profile_for_file,
)
from core.runs import Cancelled, CancelToken, Progress, ProgressState
from core.settings import Settings
from desktop.errors import spawn
from desktop.runner import QtProgress
from desktop.views import HeaderedTableModel
from desktop.widgets import hint_label

__all__ = ["InstalledTableModel", "ModelManagerDialog", "RecommendedTableModel"]

log = logging.getLogger("evaldesk.model_manager")

_Index = QModelIndex | QPersistentModelIndex
_RED = QColor("#a61b1b")


class RecommendedTableModel(HeaderedTableModel):
    """The recommended files: name, size, memory, licence, fits here, state."""

    HEADERS = ("Model", "Parameters", "File size", "Memory needed", "Licence", "Fits here? Speed",
               "On this computer")

    def __init__(self, models: Sequence[RecommendedModel], here: Computer, folder: Path,
                 parent=None) -> None:
        super().__init__(parent)
        self._models = list(models)
        self._here = here
        self._folder = folder
        self.busy: dict[str, str] = {}   # key -> "Downloading 35%"

    def model(self, row: int) -> RecommendedModel:
        return self._models[row]

    def row_of(self, key: str) -> int | None:
        return next((i for i, m in enumerate(self._models) if m.key == key), None)

    def update(self, here: Computer | None = None) -> None:
        if here is not None:
            self._here = here
        if self._models:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(len(self._models) - 1, len(self.HEADERS) - 1))

    def state(self, model: RecommendedModel) -> str:
        if model.key in self.busy:
            return self.busy[model.key]
        if (self._folder / model.file_name).exists():
            return "Downloaded"
        have = partial_state(model, self._folder)
        if have:
            return f"Paused at {format_size(have)} of {format_size(model.size_bytes)}"
        return ""

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._models)


    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._models):
            return None
        model = self._models[index.row()]
        column = index.column()
        verdict = fit(model, self._here, already=partial_state(model, self._folder))
        if role == Qt.ItemDataRole.DisplayRole:
            return (model.name, model.parameters, format_size(model.size_bytes),
                    format_size(model.ram_bytes), model.licence.split(" (")[0],
                    (f"yes, {verdict.speed_class} here" if verdict.ok and verdict.speed_class
                     else "yes" if verdict.ok else "no: see why"), self.state(model))[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 5:
                return verdict.summary
            if column == 4:
                return f"{model.licence}\n{model.licence_url}"
            if column == 0:
                return f"{model.good_for}\n\nQuality: {model.quality}"
        if role == Qt.ItemDataRole.ForegroundRole and column == 5 and not verdict.ok:
            return _RED
        return None




class InstalledTableModel(HeaderedTableModel):
    """The model files EvalDesk knows: name, where, size, licence, how it was checked."""

    HEADERS = ("Model file", "Where", "Size", "Licence", "Checked", "Profile")

    def __init__(self, settings: Settings, parent=None) -> None:
        super().__init__(parent)
        self._settings = settings
        self._files: list[ModelFile] = []

    def set_files(self, files: Sequence[ModelFile]) -> None:
        self.beginResetModel()
        self._files = list(files)
        self.endResetModel()

    def file(self, row: int) -> ModelFile:
        return self._files[row]

    def has_profile(self, row: int) -> bool:
        path = self._files[row].path
        return any(p.is_local and p.gguf_path == path for p in self._settings.profiles)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._files)


    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._files):
            return None
        item = self._files[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 1:
                if not item.exists:
                    return "missing: " + item.path
                return ("used where it is: " if item.linked else "") + item.path
            return (item.name, None, format_size(item.size_bytes), item.licence,
                    item.verified or "not recorded",
                    "added" if self.has_profile(index.row()) else "")[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 3 and item.licence_url:
                return item.licence_url
            if column == 0 and item.quality:
                return f"Quality: {item.quality}"
            if column == 1:
                return item.path
        if role == Qt.ItemDataRole.ForegroundRole and column == 1 and not item.exists:
            return _RED
        return None




def _table(model: QAbstractTableModel) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().hide()
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    view.horizontalHeader().setStretchLastSection(True)
    return view


class ModelManagerDialog(QDialog):
    """Recommended model files, downloads and imported files. Open it with ``open()``."""

    profile_added = Signal(str)
    #: The list shown and how this computer is measured (tests replace them).
    recommended: Sequence[RecommendedModel] = catalogue.RECOMMENDED
    measure: Callable[[Path], Computer] = staticmethod(catalogue.computer)

    def __init__(self, settings: Settings, save: Callable[[], bool],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self._save = save
        self.folder = catalogue.models_dir()
        self.here = type(self).measure(self.folder)
        self.cancel_token: CancelToken | None = None
        self.active: RecommendedModel | None = None
        self.task: asyncio.Task | None = None
        self.running = False   # a download or an import is under way
        self._discard_after = False
        # progress from the worker thread, coalesced to the latest state per pass of the loop
        # (a signal per downloaded piece from another thread can crash Qt)
        self._relay = QtProgress(self)
        self._relay.changed.connect(self._show_progress)
        self.setWindowTitle("Model files for this computer")
        self.setObjectName("modelManager")
        self.resize(1100, 720)

        intro = QLabel(
            "A model file runs inside EvalDesk on this computer: your texts do not leave it. "
            f"Pick one that fits this computer. {BUNDLED_DEMO}"
        )
        intro.setWordWrap(True)
        intro.setObjectName("intro")
        self.computer_label = hint_label()

        self.recommended_model = RecommendedTableModel(type(self).recommended, self.here,
                                                       self.folder, self)
        self.recommended_view = _table(self.recommended_model)
        self.recommended_view.selectionModel().selectionChanged.connect(self._selected)
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setOpenExternalLinks(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)

        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setTextVisible(True)
        self.progress_bar.hide()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.download_button = QPushButton("Download")
        self.download_button.setObjectName("primaryButton")
        self.download_button.clicked.connect(self.start_download)
        self.pause_button = QPushButton("Pause")
        self.pause_button.setToolTip("Stop for now; what was downloaded is kept. Resume later, "
                                     "even after closing EvalDesk.")
        self.pause_button.clicked.connect(self.pause)
        self.cancel_button = QPushButton("Cancel download…")
        self.cancel_button.setToolTip("Stop and delete what was downloaded of this file.")
        self.cancel_button.clicked.connect(self.cancel_download)
        actions = QHBoxLayout()
        actions.addWidget(self.download_button)
        actions.addWidget(self.pause_button)
        actions.addWidget(self.cancel_button)
        actions.addWidget(self.progress_bar, 1)

        recommended_box = QGroupBox("Recommended model files")
        recommended_layout = QVBoxLayout(recommended_box)
        recommended_layout.addWidget(self.computer_label)
        recommended_layout.addWidget(self.recommended_view, 3)
        recommended_layout.addWidget(self.details)
        recommended_layout.addLayout(actions)
        recommended_layout.addWidget(self.status)

        self.installed_model = InstalledTableModel(settings, self)
        self.installed_view = _table(self.installed_model)
        self.installed_view.selectionModel().selectionChanged.connect(self._update_buttons)
        self.import_button = QPushButton("Use a model file I already have…")
        self.import_button.setToolTip("A .gguf file from a USB stick, a network drive or "
                                      "another program. It is checked before it is used.")
        self.import_button.clicked.connect(self.choose_file)
        self.profile_button = QPushButton("Add a profile for it")
        self.profile_button.clicked.connect(self.add_profile_for_selected)
        installed_buttons = QHBoxLayout()
        installed_buttons.addWidget(self.import_button)
        installed_buttons.addWidget(self.profile_button)
        installed_buttons.addStretch(1)
        installed_box = QGroupBox("Model files you have")
        installed_layout = QVBoxLayout(installed_box)
        installed_layout.addWidget(self.installed_view, 2)
        installed_layout.addLayout(installed_buttons)

        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(recommended_box, 3)
        layout.addWidget(installed_box, 2)
        layout.addWidget(close)
        self.refresh()
        self.recommended_view.selectRow(0)

    # -- display ------------------------------------------------------------------------------
    def refresh(self) -> None:
        here = self.here
        self.computer_label.setText(
            f"This computer: {format_size(here.total_ram)} of memory, "
            f"{format_size(here.free_disk)} free in {here.folder}. Models that will not fit "
            "are marked “no”; hover over it to see why.")
        self.recommended_model.update(here)
        self.installed_model.set_files(installed_models(self.folder))
        self._selected()

    def selected(self) -> RecommendedModel | None:
        rows = self.recommended_view.selectionModel().selectedRows()
        return self.recommended_model.model(rows[0].row()) if rows else None

    @Slot()
    def _selected(self, *_args) -> None:
        model = self.selected()
        if model is not None:
            verdict = fit(model, self.here, already=partial_state(model, self.folder))
            warn = "" if verdict.ok else "<br><span style='color:#a61b1b'><b>Will not fit " \
                                         "this computer well.</b></span>"
            self.details.setText(
                f"<b>{model.name}</b> ({model.parameters} parameters, {model.file_name}): "
                f"{model.good_for}<br><b>Quality to expect:</b> {model.quality}<br>"
                f"<b>Licence:</b> <a href='{model.licence_url}'>{model.licence}</a>. "
                f"<b>From:</b> <a href='{model.page_url}'>{model.page_url}</a>. "
                f"{verdict.summary}{warn}")
        self._update_buttons()

    @Slot()
    def _update_buttons(self, *_args) -> None:
        model = self.selected()
        running = self.running
        done = model is not None and (self.folder / model.file_name).exists()
        have = partial_state(model, self.folder) if model is not None else 0
        self.download_button.setEnabled(model is not None and not running and not done)
        self.download_button.setText("Resume" if have and not running else "Download")
        this_one = running and self.active is not None and model is not None and \
            self.active.key == model.key
        self.pause_button.setEnabled(this_one)
        self.cancel_button.setEnabled(this_one or (bool(have) and not running))
        rows = self.installed_view.selectionModel().selectedRows()
        self.profile_button.setEnabled(
            bool(rows) and not self.installed_model.has_profile(rows[0].row())
            and self.installed_model.file(rows[0].row()).exists)
        self.import_button.setEnabled(not running)

    def _set_status(self, text: str, kind: str = "") -> None:
        self.status.setObjectName({"error": "errorText", "ok": "okText"}.get(kind, ""))
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)
        self.status.setText(text)

    @Slot(object)
    def _show_progress(self, state: ProgressState) -> None:
        if not isValid(self):
            return
        fraction = state.fraction
        if fraction is None:
            self.progress_bar.setRange(0, 0)
        else:
            self.progress_bar.setRange(0, 1000)
            self.progress_bar.setValue(int(fraction * 1000))
        if state.total and state.total > 1_000_000:
            amount = f"{format_size(state.done)} of {format_size(state.total)}"
            self.progress_bar.setFormat(f"{amount} ({fraction * 100:.0f}%)" if fraction
                                        is not None else amount)
        else:
            self.progress_bar.setFormat("%p%")
        self._set_status(f"{state.stage}. {state.detail}".strip())
        if self.active is not None and fraction is not None:
            self.recommended_model.busy[self.active.key] = f"{state.stage.split(' ')[0]} " \
                                                           f"{fraction * 100:.0f}%"
            self.recommended_model.update()

    def _listener(self) -> Progress:
        return self._relay.progress

    # -- downloads ----------------------------------------------------------------------------
    @Slot()
    def start_download(self) -> asyncio.Task | None:
        model = self.selected()
        if model is None or self.running:
            return None
        self.running = True
        self.active = model
        self.cancel_token = token = CancelToken()
        self.destroyed.connect(lambda *_: token.cancel())  # a closed window pauses it
        self._discard_after = False
        self.progress_bar.show()
        self._set_status(f"Starting the download of {model.name}…")
        run = functools.partial(download_model, model, progress=self._listener(),
                                cancel=self.cancel_token, folder=self.folder)

        async def _go() -> None:
            loop = asyncio.get_running_loop()
            outcome: Any
            try:
                outcome = await loop.run_in_executor(None, run)
            except Cancelled:
                outcome = "paused"
            except DownloadError as exc:
                outcome = exc
            except Exception as exc:
                log.warning("Download failed", exc_info=True)
                outcome = DownloadError(f"The download stopped: {type(exc).__name__}: {exc}. "
                                        "What was downloaded is kept; press Resume.")
            if isValid(self):
                self._download_ended(model, outcome)

        try:
            self.task = spawn(_go(), where="downloading a model file")
        except RuntimeError:
            self.running = False
            self._set_status("The download could not start: the app is not ready.", "error")
            return None
        self._update_buttons()
        return self.task

    def _download_ended(self, model: RecommendedModel, outcome: Any) -> None:
        self.running = False
        self.recommended_model.busy.pop(model.key, None)
        self.progress_bar.hide()
        self.here = type(self).measure(self.folder)
        if self._discard_after:
            discard_partial(model, self.folder)
            self._set_status(f"Cancelled: the partial download of {model.name} was deleted.")
        elif outcome == "paused":
            self._set_status(
                f"Paused at {format_size(partial_state(model, self.folder))} of "
                f"{format_size(model.size_bytes)}. Press Resume to continue (also after "
                "closing EvalDesk).")
        elif isinstance(outcome, DownloadError):
            self._set_status(str(outcome), "error")
        else:
            name = self._add_profile(outcome.model)
            repaired = ((" 1 damaged piece was fetched again." if outcome.repaired_pieces == 1 else f" {outcome.repaired_pieces} damaged pieces were fetched again.")
                        if outcome.repaired_pieces else "")
            self._set_status(
                f"{model.name} is ready ({outcome.verified}).{repaired} The profile “{name}” "
                "was added: choose it in a wizard, or make it the default in Settings.", "ok")
        self.active = None
        self.cancel_token = None
        self.refresh()

    @Slot()
    def pause(self) -> None:
        if self.cancel_token is not None:
            self.cancel_token.cancel()
            self._set_status("Pausing…")

    @Slot()
    def cancel_download(self) -> QMessageBox | None:
        model = self.active or self.selected()
        if model is None:
            return None
        have = partial_state(model, self.folder)
        box = QMessageBox(
            QMessageBox.Icon.Question, "Cancel the download",
            f"Stop downloading {model.name} and delete the {format_size(have)} downloaded so "
            "far? To keep them and continue later, choose Pause instead.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.button(QMessageBox.StandardButton.Yes).setText("Delete the download")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda result: self._cancel_confirmed(model)
                             if result == QMessageBox.StandardButton.Yes else None)
        box.open()
        return box

    def _cancel_confirmed(self, model: RecommendedModel) -> None:
        if self.running and self.cancel_token is not None:
            self._discard_after = True  # deleted once the worker has let go of the file
            self.cancel_token.cancel()
            return
        discard_partial(model, self.folder)
        self._set_status(f"The partial download of {model.name} was deleted.")
        self.refresh()

    # -- files the user has -------------------------------------------------------------------
    @Slot()
    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Choose a model file", str(Path.home()),
            "GGUF model files (*.gguf);;All files (*)")
        if path:
            self.ask_copy_or_link(path)

    def ask_copy_or_link(self, path: str) -> QMessageBox:
        box = QMessageBox(QMessageBox.Icon.Question, "Copy the model file?",
                          f"Copy {Path(path).name} into EvalDesk's folder ({self.folder})? "
                          "A copy keeps working when the USB stick or network drive is gone; "
                          "using it where it is saves disk space.", parent=self)
        copy = box.addButton("Copy it", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Use it where it is", QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def chosen(_result: int) -> None:
            clicked = box.clickedButton()
            role = box.buttonRole(clicked) if clicked is not None else None
            if role == QMessageBox.ButtonRole.RejectRole or clicked is None:
                return
            self.import_file(path, copy=clicked is copy)

        box.finished.connect(chosen)
        box.open()
        return box

    def import_file(self, path: str, *, copy: bool) -> asyncio.Task | None:
        """Check and import ``path`` (in the executor), then add a profile for it."""
        if self.running:
            return None
        self.running = True
        self._update_buttons()
        self.progress_bar.show()
        self._set_status(f"Checking {Path(path).name}…")
        token = CancelToken()
        self.cancel_token = token
        self.destroyed.connect(lambda *_: token.cancel())
        run = functools.partial(import_model_file, path, copy=copy, progress=self._listener(),
                                cancel=token, folder=self.folder)

        async def _go() -> None:
            loop = asyncio.get_running_loop()
            try:
                model = await loop.run_in_executor(None, run)
            except (NotAModelFile, OSError, Cancelled) as exc:
                if isValid(self):
                    self.progress_bar.hide()
                    self._set_status(str(exc), "error")
                return
            finally:
                if isValid(self):
                    self.cancel_token = None
                    self.running = False
            if isValid(self):
                self.progress_bar.hide()
                name = self._add_profile(model)
                where = "used where it is" if model.linked else f"copied to {model.path}"
                self._set_status(f"{model.name}: {where}. Licence: {model.licence}. The "
                                 f"profile “{name}” was added.", "ok")
                self.refresh()

        try:
            self.task = spawn(_go(), where="importing a model file")
        except RuntimeError:
            self.running = False
            self._set_status("The file could not be imported: the app is not ready.", "error")
            return None
        return self.task

    @Slot()
    def add_profile_for_selected(self) -> str | None:
        rows = self.installed_view.selectionModel().selectedRows()
        if not rows:
            return None
        name = self._add_profile(self.installed_model.file(rows[0].row()))
        self._set_status(f"The profile “{name}” was added.", "ok")
        self.refresh()
        return name

    def _add_profile(self, model: ModelFile) -> str:
        profile = profile_for_file(model)
        existing = next((p for p in self.settings.profiles
                         if p.is_local and p.gguf_path == profile.gguf_path), None)
        if existing is not None:
            return existing.name
        self.settings.upsert_profile(profile)
        if not self._save():
            log.warning("The new profile could not be saved")
        self.profile_added.emit(profile.name)
        return profile.name

    def done(self, result: int) -> None:
        if self.cancel_token is not None:
            self.cancel_token.cancel()  # a download pauses; its file is kept
        super().done(result)
