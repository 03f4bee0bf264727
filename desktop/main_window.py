"""The main window: menus, the home screen, the open project and the status bar.

Wizards add their pages with :meth:`MainWindow.show_page` and return with
:meth:`MainWindow.show_home`; they find the open project in ``main_window.project`` (opening an
untitled one with :meth:`MainWindow.ensure_project` when none is open), the settings in
``main_window.settings`` and the status bar's usage read-out in ``main_window.usage``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, QUrl, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QStackedWidget,
    QWidget,
)
from shiboken6 import isValid

from core import paths
from core.project import PROJECT_SUFFIX, Project, ProjectError, ProjectLocked
from core.settings import Settings, SettingsProblem, SettingsStore
from desktop import aqer as _aqer  # noqa: F401  (registers the AQER wizard; cheap)
from desktop import interacteval as _interacteval  # noqa: F401  (registers its wizard; cheap)
from desktop import majeval as _majeval  # noqa: F401  (registers the MAJ-Eval wizard; cheap)
from desktop.about import AboutDialog
from desktop.file_dialogs import start_folder
from desktop.first_run import FirstRunDialog
from desktop.home import HomePage
from desktop.methods import METHODS, wizard_for
from desktop.recent import RecentProjectsModel
from desktop.recovery import discard_unsaved, holds_work
from desktop.runner import cancel_all, running_count
from desktop.settings_dialog import SettingsDialog
from desktop.usage import UsageIndicator

__all__ = ["APP_TITLE", "MainWindow"]

APP_TITLE = "EvalDesk"
log = logging.getLogger("evaldesk.window")

#: How long a status-bar message stays (ms).
STATUS_MS = 6000


class MainWindow(QMainWindow):
    """EvalDesk's one main window."""

    #: The open project changed (new, opened, saved under another name, closed). Arg: Project|None
    project_changed = Signal(object)

    def __init__(self, store: SettingsStore, settings: Settings | None = None) -> None:
        super().__init__()
        self.store = store
        self.settings = settings if settings is not None else store.load()
        self.project: Project | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.about_dialog: AboutDialog | None = None
        #: The open "Save this project before closing?" question, if any.
        self.leave_box: QMessageBox | None = None
        #: The question asked when the window closes while a step runs (None when none).
        self.stop_box: QMessageBox | None = None
        self._stop_confirmed = False
        self.second_method_box: QMessageBox | None = None
        self._close_confirmed = False
        self.setObjectName("mainWindow")
        self.resize(1200, 780)
        self.setMinimumSize(960, 640)

        self.recent = RecentProjectsModel(self.settings.recent_projects, self)
        self.recent.paths_changed.connect(self._recent_changed)

        self.stack = QStackedWidget()
        self.home = HomePage(self.recent)
        self.home.method_requested.connect(self.start_method)
        self.home.open_recent_requested.connect(self.open_project)
        self.home.open_project_requested.connect(self.open_project_dialog)
        self.home.new_project_requested.connect(self.new_project)
        self.home.open_unsaved_requested.connect(self.open_project)
        self.home.discard_unsaved_requested.connect(self.discard_unsaved_project)
        self.project_changed.connect(lambda _project: self.home.unsaved.refresh())
        self.stack.addWidget(self.home)
        self.setCentralWidget(self.stack)

        self.usage = UsageIndicator()
        self.project_changed.connect(self.usage.start_project)
        self.usage.engine_message.connect(self.status)
        self.project_label = QLabel()
        self.project_label.setObjectName("hint")
        self.statusBar().addPermanentWidget(self.project_label)
        self.statusBar().addPermanentWidget(self.usage)

        self._build_menus()
        self._update_title()

    # -- menus --------------------------------------------------------------------------------
    def _action(self, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.triggered.connect(slot)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.new_action = self._action(
            "&New project", self.new_project, QKeySequence.StandardKey.New,
            "Start an untitled project; choose where to save it later.",
        )
        self.open_action = self._action(
            "&Open project…", self.open_project_dialog, QKeySequence.StandardKey.Open,
            "Open an EvalDesk project file (.evaldesk).",
        )
        self.recent_menu = QMenu("Recent &projects", self)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.save_action = self._action(
            "&Save", self.save_project, QKeySequence.StandardKey.Save,
            "EvalDesk saves every change as it happens; an untitled project asks for a name.",
        )
        self.save_as_action = self._action(
            "Save &As…", self.save_project_as, QKeySequence.StandardKey.SaveAs,
            "Save the project under a new name or in another folder.",
        )
        self.close_project_action = self._action(
            "&Close project", self.close_project, None, "Close the project and go home."
        )
        self.quit_action = self._action("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        file_menu.addAction(self.new_action)
        file_menu.addAction(self.open_action)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        file_menu.addAction(self.save_action)
        file_menu.addAction(self.save_as_action)
        file_menu.addAction(self.close_project_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)

        settings_menu = bar.addMenu("&Settings")
        self.settings_action = self._action(
            "&Settings…", self.open_settings, QKeySequence.StandardKey.Preferences,
            "Language models, API keys, embeddings and your name.",
        )
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        settings_menu.addAction(self.settings_action)
        self.privacy_action = self._action(
            "&Names and identifiers in this project…", self.open_privacy, None,
            "Whether names and other identifiers are replaced before texts leave this computer; "
            "the names lists and a sample of this project's texts.",
        )
        settings_menu.addAction(self.privacy_action)

        help_menu = bar.addMenu("&Help")
        self.home_action = self._action(
            "The three &methods", self.show_home, None,
            "Back to the home screen, which explains each method.",
        )
        self.log_action = self._action(
            "Open the &log folder", self.open_log_folder, None,
            "The folder with EvalDesk's log files (useful when reporting a problem).",
        )
        self.welcome_action = self._action(
            "&Welcome and sample data…", self.open_welcome, None,
            "Show the welcome again: the three methods, the model to start with and samples.",
        )
        self.about_action = self._action("&About EvalDesk", self.open_about)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        help_menu.addAction(self.home_action)
        help_menu.addAction(self.welcome_action)
        help_menu.addAction(self.log_action)
        help_menu.addSeparator()
        help_menu.addAction(self.about_action)

    @Slot()
    def open_privacy(self) -> Any:
        """The project's de-identification: the switch, names lists and review sample."""
        from desktop.privacy import open_privacy

        if self.project is None:
            self.statusBar().showMessage("Open or start a project first: the choices are kept "
                                         "in the project.", 8000)
            return None
        dialog = open_privacy(self, self.project, self.settings.user_name)
        wizard = self.stack.currentWidget()
        line = getattr(wizard, "privacy_line", None)
        if line is not None:
            dialog.finished.connect(lambda _r: line.refresh())
        return dialog

    def _fill_recent_menu(self) -> None:
        self.recent.refresh()
        self.recent_menu.clear()
        paths_ = self.recent.paths()
        if not paths_:
            empty = self.recent_menu.addAction("No recent projects")
            empty.setEnabled(False)
            return
        for row, path in enumerate(paths_):
            name = Path(path).name
            if self.recent.exists(row):
                action = self.recent_menu.addAction(name)
                action.setToolTip(path)
                action.triggered.connect(lambda _=False, p=path: self.open_project(p))
            else:
                action = self.recent_menu.addAction(f"{name} (not found)")
                action.setEnabled(False)
        self.recent_menu.addSeparator()
        clear = self.recent_menu.addAction("Remove entries that were not found")
        clear.setEnabled(not all(self.recent.exists(r) for r in range(len(paths_))))
        clear.triggered.connect(self.recent.remove_missing)

    # -- pages --------------------------------------------------------------------------------
    def show_page(self, page: QWidget) -> None:
        """Show a wizard page in the window (added to the stack the first time)."""
        if self.stack.indexOf(page) < 0:
            self.stack.addWidget(page)
        self.stack.setCurrentWidget(page)

    @Slot()
    def show_home(self) -> None:
        self.home.refresh()
        self.stack.setCurrentWidget(self.home)

    @Slot(str)
    def start_method(self, key: str) -> QMessageBox | None:
        """Open the wizard of ``key``; without one, say what it will do and what to prepare.
        When the open project already holds another method's work, ask first: a new project
        (the default), or this one."""
        opener = wizard_for(key)
        if opener is not None:
            project = self.project
            if (project is not None and not project.closed and project.method
                    and project.method != key and key in METHODS
                    and project.method in METHODS and holds_work(project)):
                return self._ask_second_method(key, opener)
            opener(self)
            return None
        info = METHODS[key]
        return self.show_message(
            f"{info.name}: wizard coming soon",
            f"The {info.name} wizard is coming in the next release of EvalDesk.",
            QMessageBox.Icon.Information,
            informative=(
                f"What it will do: {info.what_it_does}\n\n"
                f"What you can prepare now: {info.you_bring}\n\n{info.needs_llm}"
            ),
        )

    def _ask_second_method(self, key: str, opener: Callable[[Any], Any]) -> QMessageBox:
        """The open project holds another method's work: start ``key`` in a new project, or
        in this one (each method keeps its own work in it), or not at all."""
        have, want = METHODS[self.project.method].name, METHODS[key].name
        box = QMessageBox(QMessageBox.Icon.Question, f"Start {want} in a new project?",
                          f"“{self.project_name()}” holds {have} work. Start {want} in a new "
                          "project?", QMessageBox.StandardButton.NoButton, self)
        box.setInformativeText(
            f"A new project keeps the two evaluations apart (recommended). If you start {want} "
            f"in this project, its {have} work stays as it is and both are kept in the one file.")
        new = box.addButton("New project", QMessageBox.ButtonRole.AcceptRole)
        here = box.addButton("This project", QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(new)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(button: Any) -> None:
            self.second_method_box = None
            if button is new:
                self.leave_project_then(lambda: (self._start_new_project(key), opener(self)))
            elif button is here:
                opener(self)

        box.buttonClicked.connect(answered)
        self.second_method_box = box
        box.open()
        return box

    # -- messages -----------------------------------------------------------------------------
    def show_message(
        self,
        title: str,
        text: str,
        icon: QMessageBox.Icon = QMessageBox.Icon.Information,
        informative: str = "",
    ) -> QMessageBox:
        """A window-modal message opened with ``open()`` (never ``exec()``); returns the box."""
        box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, self)
        if informative:
            box.setInformativeText(informative)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.open()
        return box

    def status(self, text: str) -> None:
        self.statusBar().showMessage(text, STATUS_MS)

    # -- settings -----------------------------------------------------------------------------
    def save_settings(self) -> bool:
        try:
            self.store.save(self.settings)
        except SettingsProblem as exc:
            log.warning("Settings not saved: %s", exc)
            self.status(str(exc))
            return False
        return True

    @Slot()
    def open_settings(self) -> SettingsDialog:
        if (
            self.settings_dialog is not None
            and isValid(self.settings_dialog)
            and self.settings_dialog.isVisible()
        ):
            self.settings_dialog.raise_()
            self.settings_dialog.activateWindow()
            return self.settings_dialog
        dialog = SettingsDialog(self.settings, self.store, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.settings_saved.connect(self._settings_saved)
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    @Slot()
    def _settings_saved(self) -> None:
        """A profile added in Settings appears in the open wizard's lists at once."""
        shown = self.stack.currentWidget()
        changed = getattr(shown, "settings_changed", None)
        if callable(changed):
            changed()

    @Slot()
    def open_about(self) -> AboutDialog:
        dialog = AboutDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.about_dialog = dialog
        dialog.open()
        return dialog

    @Slot()
    def open_welcome(self):
        """Show the first-run welcome again (it keeps the current model choice preselected)."""
        dialog = FirstRunDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.first_run_dialog = dialog
        dialog.open()
        return dialog

    @Slot()
    def open_log_folder(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(paths.user_log_dir())))

    # -- recent projects ----------------------------------------------------------------------
    @Slot(list)
    def _recent_changed(self, paths_: list[str]) -> None:
        self.settings.recent_projects = list(paths_)
        self.save_settings()

    def _remember(self, path: Path) -> None:
        self.settings.add_recent(path)
        self.recent.set_paths(self.settings.recent_projects)
        self.save_settings()

    # -- projects -----------------------------------------------------------------------------
    def _set_project(self, project: Project | None) -> None:
        if self.project is not None and self.project is not project:
            try:
                self.project.close()
            except Exception:  # closing must never stop the user
                log.exception("Closing %s failed", self.project)
            stop_local_engines()
        self.project = project
        self._update_title()
        self.project_changed.emit(project)

    def project_name(self) -> str:
        if self.project is None:
            return ""
        if self.project.is_temporary:
            return self.project.title or "Untitled project"
        return self.project.path.stem

    def _update_title(self) -> None:
        name = self.project_name()
        self.setWindowTitle(f"{APP_TITLE} — {name}" if name else APP_TITLE)
        if self.project is None:
            self.project_label.setText("No project open")
            self.project_label.setToolTip("")
        elif self.project.is_temporary:
            self.project_label.setText(f"{name} (not saved under a name yet)")
            self.project_label.setToolTip(
                "Your work is kept safe in EvalDesk's own folder. Use File → Save As to give "
                "the project a name and a place."
            )
        else:
            self.project_label.setText(name)
            self.project_label.setToolTip(str(self.project.path))

    def ensure_project(self, method: str | None = None) -> Project:
        """The open project, or a new untitled one (what a wizard calls when it starts)."""
        if self.project is None:
            self._start_new_project(method=method)
        assert self.project is not None
        return self.project

    # -- leaving an untitled project ---------------------------------------------------------
    def must_ask_before_leaving(self) -> bool:
        """True when the open project is untitled and holds work (leaving it needs a question)."""
        project = self.project
        return (project is not None and not project.closed and project.is_temporary
                and holds_work(project))

    def leave_project_then(self, proceed: Callable[[], object]) -> QMessageBox | None:
        """Run ``proceed`` (which closes or replaces the open project) now, unless the project is
        untitled and holds work: then ask "Save this project before closing?" (window-modal,
        ``open()``, never blocking) and run ``proceed`` after Save… (once saved) or Don't save.
        Cancel runs nothing. Returns the question box, or None when nothing was asked."""
        if not self.must_ask_before_leaving():
            proceed()
            return None
        if self.leave_box is not None and isValid(self.leave_box) and self.leave_box.isVisible():
            self.leave_box.raise_()
            self.leave_box.activateWindow()
            return self.leave_box
        name = self.project_name()
        box = QMessageBox(QMessageBox.Icon.Question, "Save this project?",
                          "Save this project before closing?", QMessageBox.StandardButton.NoButton,
                          self)
        box.setInformativeText(
            f"“{name}” has not been saved under a name yet. If you don't save it, EvalDesk keeps "
            "it for you: it is listed on the home screen under “Unsaved projects from earlier "
            "sessions”, where you can open it again or discard it."
        )
        save = box.addButton("Save…", QMessageBox.ButtonRole.AcceptRole)
        save.setToolTip("Choose a name and a folder for the project, then continue.")
        dont = box.addButton("Don't save", QMessageBox.ButtonRole.DestructiveRole)
        dont.setToolTip("Continue without choosing a name; the project stays in EvalDesk's own "
                        "folder and is listed under unsaved projects.")
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(save)
        box.setEscapeButton(cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(button) -> None:
            self.leave_box = None
            if button is save:
                if self.save_project_as():
                    proceed()
            elif button is dont:
                proceed()
                self.status("The untitled project was kept; find it on the home screen under "
                            "“Unsaved projects from earlier sessions”.")

        box.buttonClicked.connect(answered)
        self.leave_box = box
        box.open()
        return box

    @Slot()
    def new_project(self, method: str | None = None) -> Project | None:
        """Start an untitled project (asking first to save an untitled one that holds work).
        Returns the new project, or None when a question is open or it failed."""
        made: list[Project | None] = []
        self.leave_project_then(lambda: made.append(self._start_new_project(method)))
        return made[0] if made else None

    def _start_new_project(self, method: str | None = None) -> Project | None:
        try:
            project = Project.create_untitled(method=method or None)
        except ProjectError as exc:
            self.show_message("Could not start a new project", str(exc),
                              QMessageBox.Icon.Warning)
            return None
        self._set_project(project)
        self.status("New untitled project. It is saved as you work; use Save As to name it.")
        return project

    def ask_open_path(self) -> str | None:
        """Ask for a project file to open (tests replace this)."""
        path, _ = QFileDialog.getOpenFileName(
            self, "Open an EvalDesk project", self.default_folder(),
            f"EvalDesk projects (*{PROJECT_SUFFIX});;All files (*)",
        )
        return path or None

    def ask_save_path(self) -> str | None:
        """Ask where to save the project (tests replace this)."""
        suggested = str(Path(self.default_folder()) / f"{self.project_name() or 'project'}"
                        f"{PROJECT_SUFFIX}")
        path, _ = QFileDialog.getSaveFileName(
            self, "Save the project as", suggested, f"EvalDesk projects (*{PROJECT_SUFFIX})"
        )
        return path or None

    def default_folder(self) -> str:
        """Where every file dialog opens (:func:`desktop.file_dialogs.start_folder`)."""
        return start_folder(self.project, self.recent.paths())

    @Slot()
    def open_project_dialog(self) -> bool:
        path = self.ask_open_path()
        return self.open_project(path) if path else False

    @Slot(str)
    def open_project(self, path: str | Path, break_lock: bool = False) -> bool:
        """Open ``path``; on failure explain in a message box and keep the current project.
        An untitled project with work is not left without asking (:meth:`leave_project_then`);
        while that question is open this returns False and opens ``path`` after the answer."""
        target = Path(path)
        if self.project is not None and not self.project.closed and _same(target,
                                                                          self.project.path):
            self.show_home()
            self.status(f"{target.name} is already open.")
            return True
        if not target.exists():
            self.recent.refresh()
            self.show_message(
                f"Could not open {target.name}",
                f"The project file {target} was not found.",
                QMessageBox.Icon.Warning,
                informative="It may have been moved, renamed or deleted, or it is on a drive "
                "that is not connected. Use File → Open project… to find it.",
            )
            return False
        if self.must_ask_before_leaving():
            self.leave_project_then(lambda: self._open_existing(target, break_lock))
            return False
        return self._open_existing(target, break_lock)

    def _open_existing(self, target: Path, break_lock: bool = False) -> bool:
        try:
            project = Project.open(target, break_lock=break_lock)
        except ProjectLocked as exc:
            self._offer_break_lock(target, exc)
            return False
        except ProjectError as exc:
            self.show_message(
                f"Could not open {target.name}", _naming(str(exc), target),
                QMessageBox.Icon.Warning,
            )
            return False
        except OSError as exc:
            self.show_message(
                f"Could not open {target.name}",
                f"{target} could not be read: {exc.strerror or exc}.",
                QMessageBox.Icon.Warning,
                informative="Check that the file is on a connected drive and that you may read "
                "it, then try again.",
            )
            return False
        self._set_project(project)
        if project.is_temporary:  # an unsaved project from an earlier session
            self.show_project_work()
            self.status("Opened an unsaved project. Use File → Save As to give it a name and a "
                        "place.")
            return True
        self._remember(project.path)
        self.show_project_work()
        self.status(f"Opened {project.path.name}.")
        try:
            orphans = project.orphaned_results()
        except ProjectError:
            orphans = 0
        if orphans:  # runs deleted by another program: their results are never any run's
            self.show_message(
                f"{project.path.name}: results without their run",
                f"{project.path.name} holds {orphans} results whose run is no longer in it "
                "(deleted, perhaps by another program). They are ignored: no run shows or "
                "exports them, and a new run never takes their place.",
            )
        return True

    def show_project_work(self) -> None:
        """Go where the open project's work is: its method's wizard, which shows the furthest
        step reached (the results when they exist); the home screen when no method was
        started yet or its wizard cannot open."""
        project = self.project
        opener = wizard_for(project.method) if project is not None and project.method else None
        if opener is None:
            self.show_home()
            return
        try:
            opener(self)
        except Exception:  # the project is open either way; the home screen lists the methods
            log.exception("Opening the %s wizard of %s failed", project.method, project)
            self.show_home()

    def _offer_break_lock(self, target: Path, exc: ProjectLocked) -> QMessageBox:
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            f"{target.name} is in use",
            _naming(str(exc), target),
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setInformativeText(
            "Open it here only if you are sure nobody is using it (for example EvalDesk stopped "
            "on another computer). Two copies of EvalDesk writing to one project can damage it."
        )
        anyway = box.addButton("Open anyway", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(
            lambda button: self.open_project(target, break_lock=True) if button is anyway
            else None
        )
        box.open()
        return box

    @Slot()
    def save_project(self) -> bool:
        if self.project is None:
            self.status("There is no project to save. Start one from the home screen.")
            return False
        if self.project.is_temporary:
            return self.save_project_as()
        self.status("All changes are saved automatically.")
        return True

    @Slot()
    def save_project_as(self) -> bool:
        if self.project is None:
            self.status("There is no project to save. Start one from the home screen.")
            return False
        chosen = self.ask_save_path()
        if not chosen:
            return False
        target = Path(chosen)
        if target.suffix.lower() != PROJECT_SUFFIX:
            target = target.with_name(target.name + PROJECT_SUFFIX)
        try:
            self.project.save_as(target)
        except ProjectError as exc:
            self.show_message(f"Could not save {target.name}", _naming(str(exc), target),
                              QMessageBox.Icon.Warning)
            return False
        self._remember(self.project.path)
        self._update_title()
        self.project_changed.emit(self.project)
        self.status(f"Saved as {self.project.path}. From now on every change is saved there.")
        return True

    @Slot()
    def close_project(self, then: Callable[[], object] | None = None) -> QMessageBox | None:
        """Close the project and go home (asking first about untitled work), then run ``then``.
        Returns the question box when one was opened."""
        def close_now() -> None:
            if self.project is not None:
                self._set_project(None)
                self.show_home()
                self.status("Project closed.")
            if callable(then):  # (a menu action passes its "checked" flag here)
                then()

        return self.leave_project_then(close_now)

    # -- unsaved projects from earlier sessions -----------------------------------------------
    @Slot(str)
    def discard_unsaved_project(self, path: str | Path) -> QMessageBox:
        """Ask (window-modal, ``open()``) before deleting the unsaved project ``path``."""
        target = Path(path)
        box = QMessageBox(QMessageBox.Icon.Warning, "Discard this unsaved project?",
                          "Discard this unsaved project?", QMessageBox.StandardButton.NoButton,
                          self)
        box.setInformativeText(
            "Its inputs, edits and results are deleted from this computer. This cannot be "
            "undone. To keep it instead, open it and use File → Save As."
        )
        discard = box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(
            lambda button: self._discard_now(target) if button is discard else None)
        box.open()
        return box

    def _discard_now(self, target: Path) -> None:
        try:
            discard_unsaved(target)
        except ProjectLocked as exc:
            self.show_message("Could not discard the project", _naming(str(exc), target),
                              QMessageBox.Icon.Warning,
                              informative="It is open in another EvalDesk window. Close it "
                              "there first.")
        except (ProjectError, OSError) as exc:
            self.show_message("Could not discard the project", _naming(str(exc), target),
                              QMessageBox.Icon.Warning,
                              informative="The file was left as it was.")
        else:
            self.status("The unsaved project was discarded.")
        self.home.unsaved.refresh()

    def ask_stop_running(self, proceed: Callable[[], object]) -> QMessageBox:
        """A step is running and the window is closing: ask before stopping it (finished work
        is kept either way); ``proceed`` runs after "Stop and close". Returns the question."""
        if self.stop_box is not None and isValid(self.stop_box) and self.stop_box.isVisible():
            self.stop_box.raise_()
            return self.stop_box
        n = running_count()
        box = QMessageBox(QMessageBox.Icon.Warning, "Stop the running step?",
                          ("A step is still running." if n == 1 else
                           f"{n} steps are still running.") + " Close EvalDesk and stop it?",
                          QMessageBox.StandardButton.NoButton, self)
        box.setInformativeText(
            "Everything finished so far is kept in the project; running the step again later "
            "goes on where it stopped. Keep running to let it finish first.")
        stop = box.addButton("Stop and close", QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton("Keep running", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(button: Any) -> None:
            self.stop_box = None
            if button is stop:
                proceed()

        box.buttonClicked.connect(answered)
        self.stop_box = box
        box.open()
        return box

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._close_confirmed and not self._stop_confirmed and running_count():
            event.ignore()

            def stop() -> None:
                self._stop_confirmed = True
                cancel_all()  # each step stops after its current piece of work
                QTimer.singleShot(0, self.close)

            self.ask_stop_running(stop)
            return
        if not self._close_confirmed and self.must_ask_before_leaving():
            event.ignore()

            def confirmed() -> None:
                self._close_confirmed = True
                QTimer.singleShot(0, self.close)

            self.leave_project_then(confirmed)
            return
        self._close_confirmed = False
        self._stop_confirmed = False
        self._set_project(None)
        super().closeEvent(event)


def stop_local_engines() -> None:
    """Stop the local model's engine process, if one was started (a closed project's runs are
    over; the next run starts it again). Imports nothing when no model was used."""
    llm = sys.modules.get("core.llm")
    if llm is not None:
        try:
            llm.stop_engines()
        except Exception:  # stopping must never stop the user
            log.exception("Stopping the local model's engine failed")


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _naming(message: str, target: Path) -> str:
    """``message``, with the file named if it does not name it already."""
    return message if target.name in message else f"{target}: {message}"
