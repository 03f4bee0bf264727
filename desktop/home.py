"""The home screen: what the three methods do, a button to start each, recent projects and
unsaved projects from earlier sessions."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.methods import METHODS, MethodInfo, wizard_for
from desktop.recent import ExistsRole, PathRole, RecentProjectsModel
from desktop.recovery import UnsavedProjectsSection
from desktop.widgets import add_parts, hbox, hint_label

__all__ = ["COMING_SOON", "HomePage", "MethodCard"]

#: Label of a method button while no wizard is registered for it.
COMING_SOON = "Wizard coming in the next release"

#: The order of the cards (the method most people start with in the middle is not a goal:
#: cheapest and most self-contained first).
CARD_ORDER = ("aqer", "majeval", "interacteval")


def _section(title: str, text: str) -> QLabel:
    label = QLabel(f"<b>{title}</b><br>{text}")
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    return label


class MethodCard(QFrame):
    """One method in plain words, with its start button."""

    start_requested = Signal(str)

    def __init__(self, info: MethodInfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.info = info
        self.setObjectName("card")
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        title = QLabel(info.name)
        title.setObjectName("cardTitle")
        tagline = QLabel(info.tagline)
        tagline.setObjectName("cardTagline")
        tagline.setWordWrap(True)
        self.what = _section("What it does", info.what_it_does)
        self.when = _section("Use it when", info.use_it_when)
        self.bring = _section("What you bring", info.you_bring)
        llm = hint_label(info.needs_llm)
        self.button = QPushButton()
        self.button.setObjectName("primaryButton")
        self.button.clicked.connect(lambda: self.start_requested.emit(self.info.key))

        layout = add_parts(QVBoxLayout(self), (title, tagline, self.what, self.when, self.bring,
                                               1, llm, self.button))
        layout.setContentsMargins(18, 16, 18, 16)
        layout.setSpacing(10)
        self.refresh()

    def refresh(self) -> None:
        """Label the button by whether a wizard is registered for this method."""
        ready = wizard_for(self.info.key) is not None
        self.button.setObjectName("primaryButton" if ready else "comingButton")
        self.button.style().unpolish(self.button)
        self.button.style().polish(self.button)
        if ready:
            self.button.setText(f"Start {self.info.name}")
            self.button.setToolTip(f"Open the {self.info.name} wizard.")
        else:
            self.button.setText(COMING_SOON)
            self.button.setToolTip(
                f"The {self.info.name} wizard is not in this version yet. Click to see what it "
                "will do and what you can prepare now."
            )


class HomePage(QWidget):
    """The first page: three method cards and the recent projects."""

    method_requested = Signal(str)
    open_recent_requested = Signal(str)
    open_project_requested = Signal()
    new_project_requested = Signal()
    #: Open / Discard an untitled project from an earlier session. Arg: its path
    open_unsaved_requested = Signal(str)
    discard_unsaved_requested = Signal(str)

    def __init__(self, recent: RecentProjectsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.recent = recent

        title = QLabel("Welcome to EvalDesk")
        title.setObjectName("pageTitle")
        intro = QLabel(
            "EvalDesk helps you judge AI-generated text with three published research methods. "
            "Pick the one that fits your situation; each wizard walks you through the steps, "
            "shows you everything the AI produced so you can check and edit it, and saves "
            "your work as you go."
        )
        intro.setWordWrap(True)
        intro.setObjectName("intro")

        self.unsaved = UnsavedProjectsSection()
        self.unsaved.open_requested.connect(self.open_unsaved_requested)
        self.unsaved.discard_requested.connect(self.discard_unsaved_requested)

        self.cards: dict[str, MethodCard] = {}
        cards_row = QHBoxLayout()
        cards_row.setSpacing(16)
        for key in CARD_ORDER:
            card = MethodCard(METHODS[key])
            card.start_requested.connect(self.method_requested)
            self.cards[key] = card
            cards_row.addWidget(card, 1)

        recent_title = QLabel("Recent projects")
        recent_title.setObjectName("sectionTitle")
        recent_hint = hint_label(
            "A project is one file that keeps your inputs, your edits and every result. "
            "Double-click a project to open it."
        )
        self.recent_view = QListView()
        self.recent_view.setModel(recent)
        self.recent_view.setObjectName("recentList")
        self.recent_view.setSelectionMode(QListView.SelectionMode.SingleSelection)
        self.recent_view.setEditTriggers(QListView.EditTrigger.NoEditTriggers)
        self.recent_view.setMinimumHeight(90)
        self.recent_view.setMaximumHeight(150)
        self.recent_view.doubleClicked.connect(self._open_index)
        self.empty_label = QLabel("No recent projects yet. Start with one of the methods above.")
        self.empty_label.setObjectName("hint")

        self.new_button = QPushButton("New project")
        self.new_button.setToolTip("Start an untitled project; you choose where to save it later.")
        self.new_button.clicked.connect(self.new_project_requested)
        self.open_button = QPushButton("Open a project…")
        self.open_button.setToolTip("Find an EvalDesk project file (.evaldesk) on this computer.")
        self.open_button.clicked.connect(self.open_project_requested)
        self.open_selected_button = QPushButton("Open selected")
        self.open_selected_button.clicked.connect(self._open_selected)
        self.remove_button = QPushButton("Remove from list")
        self.remove_button.setToolTip("Forget this entry. The project file itself is not touched.")
        self.remove_button.clicked.connect(self._remove_selected)
        buttons = hbox(self.new_button, self.open_button, 1, self.open_selected_button,
                       self.remove_button)

        content = QWidget()
        content.setObjectName("homeContent")
        layout = add_parts(QVBoxLayout(content), (title, intro, self.unsaved, cards_row))
        layout.setContentsMargins(28, 22, 28, 22)
        layout.setSpacing(12)
        layout.addSpacing(10)
        add_parts(layout, (recent_title, recent_hint, self.recent_view, self.empty_label, buttons,
                           1))

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

        recent.modelReset.connect(self._update_recent_state)
        recent.rowsRemoved.connect(self._update_recent_state)
        recent.rowsInserted.connect(self._update_recent_state)
        self.recent_view.selectionModel().selectionChanged.connect(self._update_recent_state)
        self._update_recent_state()

    def refresh(self) -> None:
        """Relabel the method buttons (a wizard may have registered) and re-check the files."""
        for card in self.cards.values():
            card.refresh()
        self.recent.refresh()
        self.unsaved.refresh()

    def showEvent(self, event) -> None:
        for card in self.cards.values():
            card.refresh()
        super().showEvent(event)

    # -- recent projects ------------------------------------------------------------------------
    def _selected_row(self) -> int | None:
        rows = self.recent_view.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    @Slot()
    def _update_recent_state(self, *args) -> None:
        has_any = self.recent.rowCount() > 0
        self.recent_view.setVisible(has_any)
        self.empty_label.setVisible(not has_any)
        row = self._selected_row()
        self.open_selected_button.setVisible(has_any)
        self.remove_button.setVisible(has_any)
        self.open_selected_button.setEnabled(row is not None and self.recent.exists(row))
        self.remove_button.setEnabled(row is not None)

    @Slot(QModelIndex)
    def _open_index(self, index: QModelIndex) -> None:
        if index.isValid():
            self.open_recent_requested.emit(index.data(PathRole))

    @Slot()
    def _open_selected(self) -> None:
        row = self._selected_row()
        if row is not None:
            index = self.recent.index(row, 0)
            if index.data(ExistsRole):
                self.open_recent_requested.emit(index.data(PathRole))

    @Slot()
    def _remove_selected(self) -> None:
        row = self._selected_row()
        if row is not None:
            self.recent.removeRows(row, 1)
