"""Untitled projects left from earlier sessions: describe them (without changing them), and the
home screen's "Unsaved projects from earlier sessions" section that offers Open and Discard.

An untitled project is saved continuously in EvalDesk's own folder until the user chooses a name
(Save As). When EvalDesk stops or the user leaves such a project without saving, its file stays;
:func:`unsaved_projects` finds those files again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.project import Project, ProjectError
from core.words import count
from desktop.methods import METHODS
from desktop.widgets import hint_label

__all__ = [
    "RECOVERY_EXPLAINED",
    "UnsavedProject",
    "UnsavedProjectsSection",
    "describe_unsaved",
    "discard_unsaved",
    "holds_work",
    "unsaved_projects",
]

log = logging.getLogger("evaldesk.recovery")

#: The one sentence that says what the listed projects are.
RECOVERY_EXPLAINED = (
    "These projects were never saved under a name (EvalDesk was closed without saving them, or "
    "stopped unexpectedly); open one to continue and use File → Save As to keep it, or discard "
    "it if you no longer need it."
)


@dataclass(frozen=True)
class UnsavedProject:
    """What the home screen shows about one untitled project file."""

    path: Path
    modified: datetime | None
    method: str = ""
    title: str = ""
    first_input: str = ""
    inputs: int = 0
    artefacts: int = 0
    runs: int = 0
    problem: str = ""

    @property
    def name(self) -> str:
        """The title, else the first input's name, else "Untitled project"."""
        return self.title or self.first_input or "Untitled project"

    @property
    def method_name(self) -> str:
        info = METHODS.get(self.method)
        return info.name if info is not None else "No method chosen yet"

    def summary(self) -> str:
        """One line: method, what it holds and when it last changed."""
        parts = [self.method_name]
        if self.problem:
            parts.append("could not be read")
        else:
            parts.append(count(self.inputs, "input"))
            if self.artefacts:
                parts.append(count(self.artefacts, "generated or edited item"))
            if self.runs:
                parts.append(count(self.runs, "run"))
        if self.modified is not None:
            parts.append(f"last changed {_when(self.modified)}")
        return " · ".join(parts)


def _when(moment: datetime) -> str:
    local = moment.astimezone()
    today = datetime.now().astimezone().date()
    clock = local.strftime("%H:%M")
    if local.date() == today:
        return f"today at {clock}"
    return f"{local.day} {local.strftime('%b %Y')} at {clock}"


def _parse(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp) if stamp else None
    except ValueError:
        return None


#: (path, size, mtime_ns) → description: listing again does not re-read an unchanged file.
_cache: dict[tuple[str, int, int], UnsavedProject] = {}


def describe_unsaved(path: Path) -> UnsavedProject:
    """Read what ``path`` holds, read-only (the file is never changed or locked by this)."""
    try:
        stat = path.stat()
    except OSError as exc:
        return UnsavedProject(path, None, problem=f"{path} could not be read: {exc.strerror}.")
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key in _cache:
        return _cache[key]
    file_time = datetime.fromtimestamp(stat.st_mtime).astimezone()
    try:
        with Project.open(path, read_only=True) as project:
            info = project.info()
            inputs = project.list_inputs()
    except ProjectError as exc:
        described = UnsavedProject(path, file_time, problem=str(exc))
    except OSError as exc:
        described = UnsavedProject(path, file_time,
                                   problem=f"{path} could not be read: {exc.strerror or exc}.")
    else:
        described = UnsavedProject(
            path,
            _parse(info.modified_at) or file_time,
            method=info.method,
            title=info.title,
            first_input=inputs[0].name if inputs else "",
            inputs=info.inputs,
            artefacts=info.artefacts,
            runs=info.runs,
        )
    _cache[key] = described
    return described


def unsaved_projects() -> list[UnsavedProject]:
    """Untitled projects from earlier sessions, newest first (those open now are left out)."""
    try:
        found = Project.list_untitled()
    except OSError as exc:  # the data folder cannot be read or made
        log.warning("Could not list unsaved projects: %s", exc)
        return []
    return [describe_unsaved(path) for path in found]


def holds_work(project: Project) -> bool:
    """True when closing ``project`` would keep something (inputs, items, edits, runs, LLM
    calls): the same things :meth:`Project.close` looks at before deleting an empty one."""
    try:
        info = project.info()
    except ProjectError:
        return True  # when in doubt, ask
    return bool(info.inputs or info.artefacts or info.edits or info.runs or info.llm.calls)


def discard_unsaved(path: Path) -> None:
    """Delete the untitled project ``path``: opened first (so one in use elsewhere is refused
    with :class:`core.project.ProjectLocked`), then :meth:`Project.discard`."""
    project = Project.open(path)
    try:
        project.discard()
    finally:
        project.close()  # harmless after discard; releases the lock if discard refused


class _UnsavedRow(QFrame):
    """One unsaved project: its name and summary, with Open and Discard."""

    def __init__(self, item: UnsavedProject, section: UnsavedProjectsSection) -> None:
        super().__init__()
        self.item = item
        self.setObjectName("unsavedRow")
        self.setStyleSheet("QFrame#unsavedRow { background: #f5f7fa; border: 1px solid #e4e8ee;"
                           " border-radius: 6px; }")
        name = QLabel(f"<b>{_escape(item.name)}</b>")
        name.setTextFormat(Qt.TextFormat.RichText)
        summary = QLabel(item.summary())
        summary.setObjectName("hint")
        texts = QVBoxLayout()
        texts.setSpacing(2)
        texts.addWidget(name)
        texts.addWidget(summary)
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Open this project to continue; use File → Save As to keep "
                                    "it under a name of your choice.")
        self.open_button.clicked.connect(
            lambda: section.open_requested.emit(str(item.path)))
        self.discard_button = QPushButton("Discard…")
        self.discard_button.setToolTip("Delete this unsaved project (you are asked first).")
        self.discard_button.clicked.connect(
            lambda: section.discard_requested.emit(str(item.path)))
        tip = f"{item.path}\n{item.problem}" if item.problem else str(item.path)
        self.setToolTip(tip)
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 8, 12, 8)
        row.addLayout(texts, 1)
        row.addWidget(self.open_button)
        row.addWidget(self.discard_button)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class UnsavedProjectsSection(QFrame):
    """The home screen's list of unsaved projects; hidden while there are none."""

    open_requested = Signal(str)
    discard_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.title = QLabel("Unsaved projects from earlier sessions")
        self.title.setObjectName("sectionTitle")
        self.explanation = hint_label(RECOVERY_EXPLAINED)
        self.rows_layout = QVBoxLayout()
        self.rows_layout.setSpacing(6)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 14, 18, 14)
        layout.setSpacing(8)
        layout.addWidget(self.title)
        layout.addWidget(self.explanation)
        layout.addLayout(self.rows_layout)
        self.rows: list[_UnsavedRow] = []
        self.refresh()

    def refresh(self) -> None:
        """List the unsaved projects again (read-only)."""
        for row in self.rows:
            self.rows_layout.removeWidget(row)
            row.deleteLater()
        self.rows = [_UnsavedRow(item, self) for item in unsaved_projects()]
        for row in self.rows:
            self.rows_layout.addWidget(row)
        self.setVisible(bool(self.rows))

    def paths(self) -> list[Path]:
        return [row.item.path for row in self.rows]
