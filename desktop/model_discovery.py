"""“Look for models on this computer”: the model servers already running here (Ollama, LM Studio,
the llama.cpp server, vLLM), what each serves, and a profile in one click.

Only this computer's own addresses are asked, with short timeouts, and only when this window
opens or the user presses “Look again” (``core.local_models.discovery``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from core.local_models.discovery import (
    DEFAULT_CANDIDATES,
    Candidate,
    FoundModel,
    ServerReport,
    find_local_servers,
    profile_for,
)
from core.settings import Settings
from core.words import count
from desktop.errors import spawn
from desktop.views import HeaderedTableModel

__all__ = ["DiscoveryDialog", "FoundModelsTableModel"]

log = logging.getLogger("evaldesk.discovery")

_Index = QModelIndex | QPersistentModelIndex


class FoundModelsTableModel(HeaderedTableModel):
    """The models found, one per row: model, server, address, details, profile."""

    HEADERS = ("Model", "Served by", "Address", "Size and details", "Profile")

    def __init__(self, settings: Settings, parent=None) -> None:
        super().__init__(parent)
        self._settings = settings
        self._rows: list[tuple[ServerReport, FoundModel]] = []

    def set_reports(self, reports: Sequence[ServerReport]) -> None:
        self.beginResetModel()
        self._rows = [(report, model) for report in reports if report.found
                      for model in report.models]
        self.endResetModel()

    def refresh(self) -> None:
        if self._rows:
            self.dataChanged.emit(self.index(0, 4), self.index(len(self._rows) - 1, 4))

    def row(self, number: int) -> tuple[ServerReport, FoundModel]:
        return self._rows[number]

    def has_profile(self, number: int) -> bool:
        report, model = self._rows[number]
        wanted = profile_for(report, model)
        return any(p.model == wanted.model and p.api_bases == wanted.api_bases
                   for p in self._settings.profiles)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)


    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        report, model = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return model.name
            if column == 1:
                return report.program
            if column == 2:
                return report.base_url
            if column == 3:
                return model.describe()
            if column == 4:
                return "added" if self.has_profile(index.row()) else ""
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 4:
                return ("A profile for this model exists in Settings."
                        if self.has_profile(index.row())
                        else "Select the row and press “Add as a profile”.")
            if column == 2:
                return "An address of this computer: your texts do not leave it."
        return None




class DiscoveryDialog(QDialog):
    """Finds the servers when opened; “Add as a profile” (or a double-click) makes a profile."""

    profile_added = Signal(str)
    #: Where to look. Tests replace it with the ports of their fake servers.
    candidates: Sequence[Candidate] = DEFAULT_CANDIDATES

    def __init__(self, settings: Settings, save: Callable[[], bool],
                 parent: QWidget | None = None, *, start: bool = True) -> None:
        super().__init__(parent)
        self.settings = settings
        self._save = save
        self.reports: list[ServerReport] | None = None
        self._task: asyncio.Task | None = None
        self.setWindowTitle("Models on this computer")
        self.setObjectName("discoveryDialog")
        self.resize(980, 520)

        intro = QLabel(
            "EvalDesk asks this computer (and nothing else) whether Ollama, LM Studio, a "
            "llama.cpp server or vLLM is running, and which models they offer. A model served "
            "here keeps your texts on this computer. Add one as a profile, then choose it in "
            "a wizard."
        )
        intro.setWordWrap(True)
        intro.setObjectName("intro")
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.model = FoundModelsTableModel(settings, self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.verticalHeader().hide()
        self.view.setAlternatingRowColors(True)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.view.doubleClicked.connect(lambda _i: self.add_selected())
        self.view.selectionModel().selectionChanged.connect(self._update_buttons)
        self.model.modelReset.connect(self._update_buttons)

        self.again_button = QPushButton("Look again")
        self.again_button.setToolTip("Ask this computer's usual ports again (after starting a "
                                     "server or loading a model).")
        self.again_button.clicked.connect(self.search)
        self.add_button = QPushButton("Add as a profile")
        self.add_button.setObjectName("primaryButton")
        self.add_button.setToolTip("Make a model profile for the selected model (one click).")
        self.add_button.clicked.connect(self.add_selected)
        self.added_label = QLabel()
        self.added_label.setObjectName("okText")
        self.added_label.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.again_button)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.added_label, 1)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.status)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)
        layout.addWidget(close)
        self._update_buttons()
        if start:
            self.search()

    # -- searching ----------------------------------------------------------------------------
    @Slot()
    def search(self) -> asyncio.Task | None:
        if self._task is not None and not self._task.done():
            return self._task
        places = ", ".join(f"{c.usual} (port {c.port})" for c in self.candidates)
        self.status.setText(f"Looking on this computer for {places}…")
        self.again_button.setEnabled(False)
        candidates = list(self.candidates)

        async def _go() -> None:
            try:
                reports = await find_local_servers(candidates)
            except Exception as exc:
                log.warning("Looking for local servers failed", exc_info=True)
                if isValid(self):
                    self.status.setText(f"Could not look: {type(exc).__name__}: {exc}")
                    self.again_button.setEnabled(True)
                return
            if isValid(self):
                self.show_reports(reports)

        try:
            self._task = spawn(_go(), where="looking for models on this computer")
        except RuntimeError:  # no event loop
            self.status.setText("Could not look: the app is not ready yet. Try again.")
            self.again_button.setEnabled(True)
            return None
        return self._task

    def show_reports(self, reports: Sequence[ServerReport]) -> None:
        self.reports = list(reports)
        self.model.set_reports(reports)
        self.again_button.setEnabled(True)
        found = [r for r in reports if r.found]
        missing = [r for r in reports if not r.found and not r.problem]
        models = sum(len(r.models) for r in found)
        lines = []
        if found:
            servers = ", ".join(f"{r.program} (port {r.port})" for r in found)
            lines.append(f"Found {count(models, 'model')} on {servers}.")
            empty = [r for r in found if not r.models]
            if empty:
                lines.append("No chat model is available yet on " + ", ".join(
                    f"{r.program}" for r in empty) + ": pull or load one there, then look again.")
        else:
            lines.append("No model server is running on this computer.")
        if missing:
            lines.append("Nothing answered for " + ", ".join(
                f"{r.candidate.usual} (port {r.port})" for r in missing) + ".")
        lines += [r.problem for r in reports if r.problem]
        if not found:
            lines.append("Start Ollama or LM Studio (with its local server switched on) and "
                         "press “Look again”, or download a model file instead.")
        self.status.setText(" ".join(lines))
        if models:
            self.view.selectRow(0)

    # -- profiles -----------------------------------------------------------------------------
    def selected_row(self) -> int | None:
        rows = self.view.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    @Slot()
    def _update_buttons(self, *_args) -> None:
        row = self.selected_row()
        self.add_button.setEnabled(row is not None and not self.model.has_profile(row))

    @Slot()
    def add_selected(self) -> str | None:
        """Add a profile for the selected model; returns its name."""
        row = self.selected_row()
        if row is None or self.model.has_profile(row):
            return None
        report, found = self.model.row(row)
        profile = profile_for(report, found)
        self.settings.upsert_profile(profile)
        saved = self._save()
        self.model.refresh()
        self._update_buttons()
        self.added_label.setText(
            f"Added the profile “{profile.name}”." + ("" if saved else
                                                        " (It could not be saved to disk.)"))
        self.profile_added.emit(profile.name)
        return profile.name

    def done(self, result: int) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        super().done(result)
