"""The wizard shell every method's wizard is built on: the steps along the top, one page class per
step, Home / Back / Next along the bottom, the busy state, the model profiles, and the life of
the long steps it starts (a wizard that closes stops them and waits for them to end).

A method's wizard is a subclass that lists its pages; each page is a :class:`WizardPage`
subclass in ``desktop/<method>/pages/`` that only collects input and shows output (the work is in
the method's ``core`` session)::

    class AqerWizard(WizardShell):
        METHOD, OBJECT_NAME = "aqer", "aqerWizard"
        HOME_TIP = "Back to the home screen. Everything you chose is kept in the project."
        PAGE_CLASSES = (FilePage, ColumnsPage, ModelPage, RunPage, ResultsPage)

    class FilePage(WizardPage):
        KEY, TITLE = "file", "Answers file"
        def refresh(self): ...                       # the page is shown: fill it from the session
        def next_state(self): return ready, message  # may Next be pressed, and if not, why

Steps along the top are buttons: a click goes to that step when :meth:`WizardPage.reachable`
allows it (they are disabled while a step runs, so they never look clickable when they are not).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, ClassVar

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QStackedWidget, QWidget

from core.privacy import destination, needs_cloud_notice
from core.project.interrupted import interrupted_runs
from desktop.cloud_notice import confirm_cloud_use
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome, start_step
from desktop.widgets import frame_layout, navigation, note_box, step_buttons

__all__ = ["WizardPage", "WizardShell", "open_method_wizard", "open_wizard"]

log = logging.getLogger("evaldesk.wizard")

_CURRENT_STEP = "color:#2563a8; font-weight:600; border:none;"
_OTHER_STEP = "color:#5f6b7a; border:none;"


class WizardPage(QWidget):
    """One step of a wizard. Subclasses set :attr:`KEY` and :attr:`TITLE` and build their
    widgets in ``__init__`` (after calling ``super().__init__(wizard)``)."""

    KEY: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    #: The text of the Next button on this page.
    NEXT_TEXT: ClassVar[str] = "Next"

    def __init__(self, wizard: WizardShell) -> None:
        super().__init__()
        self.wizard = wizard

    @property
    def session(self) -> Any:
        return self.wizard.session

    def refresh(self) -> None:
        """The page is about to be shown: fill it from the session (no model calls)."""

    def leave(self) -> None:
        """The page is about to be hidden: save what is being edited."""

    def next_state(self) -> tuple[bool, str]:
        """(Next may be pressed, and if not, why in a few words)."""
        return True, ""

    def shows_next(self) -> bool:
        """Whether this page has a Next button at all (the last page has none)."""
        return True

    def go_next(self) -> bool:
        """Next was pressed: return True when the page handled it itself (e.g. asked a
        question first), False to go to the following page."""
        return False

    def reachable(self) -> bool:
        """Whether the step button along the top may bring the user here now."""
        return True

    def busy_changed(self, busy: str) -> None:
        """A long step started ("what") or ended (""): enable or disable the page's buttons."""


class WizardShell(QWidget):
    """A method's wizard shown in the main window (see the module's docstring)."""

    METHOD: ClassVar[str] = ""
    OBJECT_NAME: ClassVar[str] = ""
    HOME_TIP: ClassVar[str] = (
        "Back to the home screen. Everything is kept in the project; open the method again to "
        "carry on."
    )
    PAGE_CLASSES: ClassVar[tuple[type[WizardPage], ...]] = ()
    #: The method's steps send texts to language models: a line above every step says whether
    #: they are de-identified, with the switch and the review page (:mod:`desktop.privacy`).
    SENDS_TEXTS: ClassVar[bool] = False

    #: The current page changed (its key).
    page_changed = Signal(str)
    #: A long step ended: (what, "finished" / "stopped" / "failed").
    step_ended = Signal(str, str)

    def __init__(self, main_window: Any, project: Any, session: Any = None) -> None:
        super().__init__()
        if self.OBJECT_NAME:
            self.setObjectName(self.OBJECT_NAME)
        self.main_window = main_window
        self.project = project
        self.session = session
        self.busy = ""
        self._tasks: set[asyncio.Task] = set()
        self._retired = False
        signal = getattr(main_window, "project_changed", None)
        if signal is not None:
            signal.connect(self._project_changed)

        self.pages: dict[str, WizardPage] = {}
        self.stack = QStackedWidget()
        for cls in self.PAGE_CLASSES:
            page = cls(self)
            self.pages[cls.KEY] = page
            self.stack.addWidget(page)
        self.keys = [cls.KEY for cls in self.PAGE_CLASSES]
        titles = {cls.KEY: cls.TITLE for cls in self.PAGE_CLASSES}
        self.steps_row, self.step_buttons = step_buttons(self.keys, titles, self.show_page)
        nav = navigation(self, self.HOME_TIP, self.go_home, message_name="errorText")
        frame_layout(self, self.steps_row, self.stack, nav)
        #: Says that a run of this method was interrupted (EvalDesk closed, killed or crashed
        #: while it ran), how far it got, and that starting it again resumes.
        self.interrupted_note = note_box()
        self.layout().insertWidget(1, self.interrupted_note)
        self.show_interrupted()
        self.privacy_line: Any = None
        if self.SENDS_TEXTS:
            from desktop.privacy import PrivacyLine

            self.privacy_line = PrivacyLine(self, self.privacy_profiles)
            self.layout().insertWidget(1, self.privacy_line)

    def show_interrupted(self) -> None:
        """Show or hide :attr:`interrupted_note` from the project's runs of this method."""
        found = []
        if self.METHOD and self.project is not None and not getattr(self.project, "closed", False):
            try:
                found = interrupted_runs(self.project, self.METHOD)
            except Exception:  # a note must never stop the wizard from opening
                log.exception("Reading the interrupted runs failed")
        self.interrupted_note.setText(found[0].sentence() if found else "")
        self.interrupted_note.setVisible(bool(found) and not self.busy)

    # ------------------------------------------------------------------ who and which model
    @property
    def who(self) -> str:
        """The person editing (Settings → your name), for the edit history."""
        settings = getattr(self.main_window, "settings", None)
        return (getattr(settings, "user_name", "") or "").strip() or "unnamed person"

    def profiles(self) -> list[Any]:
        return list(self.main_window.settings.profiles)

    def profile(self, name: str = "") -> Any:
        """The model profile called ``name`` (the default one when it is gone or "")."""
        settings = self.main_window.settings
        try:
            return settings.profile(name or None)
        except KeyError:
            return settings.profile() if settings.profiles else None

    def privacy_profiles(self) -> list[Any]:
        """The model profiles the method's next steps send texts to (for the privacy line)."""
        return []

    def after_cloud_notice(self, profile: Any, start: Callable[[], Any]) -> Any:
        """Start a run whose texts go to ``profile``'s model (or to each of a list of profiles,
        as when several assessors think aloud): at once when they stay on this computer (or the
        project already said "don't ask again" for that service), otherwise once the user
        agrees to the one plain notice (:func:`desktop.cloud_notice.confirm_cloud_use`), one
        notice per service. Returns what ``start`` returns, or None while a notice is open
        (``self.cloud_notice``) or when the user declined."""
        profiles = profile if isinstance(profile, (list, tuple)) else [profile]
        waiting, seen = [], set()
        for p in profiles:
            if p is None or not needs_cloud_notice(self.project, p):
                continue
            key = destination(p).key
            if key not in seen:
                seen.add(key)
                waiting.append(p)
        if not waiting:
            return start()
        first, rest = waiting[0], waiting[1:]
        self.cloud_notice = confirm_cloud_use(
            self, self.project, first,
            (lambda: self.after_cloud_notice(rest, start)) if rest else start, who=self.who)
        return None

    # ------------------------------------------------------------------------- navigation
    @property
    def page(self) -> str:
        widget = self.stack.currentWidget()
        return getattr(widget, "KEY", "")

    @property
    def current(self) -> WizardPage:
        return self.pages[self.page]

    def show_page(self, key: str) -> None:
        if key not in self.pages:
            raise KeyError(f"{type(self).__name__} has no page {key!r}")
        if self.busy and key != self.page:
            self.nav_message.setText("Wait for the running step to end (or Cancel it).")
            return
        if self.page and self.page != key:
            self.current.leave()
        self.stack.setCurrentWidget(self.pages[key])
        self.pages[key].refresh()
        self.page_shown(key)
        self.update_nav()
        self.page_changed.emit(key)

    def page_shown(self, key: str) -> None:
        """Hook: a page was shown (e.g. remember it in the session)."""

    def settings_changed(self) -> None:
        """The settings were saved (a profile added, renamed or removed): the model lists and
        the page shown follow at once, without reopening the project. Nothing is refreshed
        while a step runs (its page shows its run); the next page shown is filled anew."""
        fill = getattr(self, "fill_profiles", None)
        if callable(fill):
            fill()
        if self.page and not self.busy:
            self.current.refresh()
        self.update_nav()

    def update_nav(self) -> None:
        """Enable and label Back, Next and the step buttons for the current page."""
        key = self.page
        if not key:
            return
        page = self.pages[key]
        index = self.keys.index(key)
        self.back_button.setVisible(index > 0)
        self.back_button.setEnabled(not self.busy)
        self.next_button.setVisible(page.shows_next() and index < len(self.keys))
        self.next_button.setText(page.NEXT_TEXT)
        ready, message = page.next_state()
        self.next_button.setEnabled(ready and not self.busy)
        if self.busy:
            message = message or "A step is running; wait for it to end or press Cancel."
        self.nav_message.setText(message)
        for name, button in self.step_buttons.items():
            button.setStyleSheet(_CURRENT_STEP if name == key else _OTHER_STEP)
            button.setEnabled(not self.busy and (name == key or self.pages[name].reachable()))
        if self.privacy_line is not None:
            self.privacy_line.refresh()

    @Slot()
    def go_next(self) -> None:
        if not self.next_button.isEnabled() or not self.page:
            return
        if self.current.go_next():
            return
        index = self.keys.index(self.page)
        if index + 1 < len(self.keys):
            self.show_page(self.keys[index + 1])

    @Slot()
    def go_back(self) -> None:
        index = self.keys.index(self.page) if self.page else 0
        if index > 0:
            self.show_page(self.keys[index - 1])

    @Slot()
    def go_home(self) -> None:
        if self.page:
            self.current.leave()
        self.main_window.show_home()

    def start(self) -> None:
        """Show where the user left off (subclasses decide; the first page by default)."""
        self.show_page(self.keys[0])

    # ------------------------------------------------------------------------- long steps
    def set_busy(self, what: str) -> None:
        self.busy = what
        if what:
            self.interrupted_note.hide()
        else:
            self.show_interrupted()
        for page in self.pages.values():
            page.busy_changed(what)
        self.update_nav()

    def run_step(
        self,
        panel: RunPanel,
        step: Callable[..., Any],
        *,
        title: str,
        on_done: Callable[[RunOutcome[Any]], Any] | None = None,
        busy: str | None = None,
        background: bool = False,
    ) -> asyncio.Task:
        """Start ``step(progress, cancel)`` in ``panel`` (see :func:`desktop.runner.start_step`):
        the wizard is busy until it ends, then ``on_done(outcome)`` runs and
        :attr:`step_ended` is emitted. A retired wizard's steps are cancelled. A ``background``
        step (a short one: an export, the agreement) does not make the wizard busy: the user
        may go on."""
        what = busy if busy is not None else title
        if not background:
            self.set_busy(what)

        def done(outcome: RunOutcome[Any]) -> Any:
            if self._retired:
                return None
            if not background:
                self.set_busy("")
            try:
                if on_done is not None:
                    return on_done(outcome)
            finally:
                # what the step made may open the way on (documents added: Next), and the
                # page's own handler ran after the busy state ended (not once the project
                # was closed: the pages would read it)
                if not self._retired and not getattr(self.project, "closed", False):
                    self.update_nav()
                self.step_ended.emit(what, outcome.status)
            return None

        interrupt = getattr(self.project, "interrupt", None)  # Cancel stops a project query
        task = start_step(panel, step, title=title, on_done=done, on_cancel=interrupt)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    @property
    def running(self) -> bool:
        return bool(self._tasks)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if self._retired and not self._tasks:
            self.deleteLater()

    def retire(self) -> None:
        """The project closed or another wizard replaces this one: leave the window, stop what
        runs (finished work is kept in the project), and delete the wizard once every step has
        ended."""
        if self._retired:
            return
        self._retired = True
        if self.page:
            try:
                self.current.leave()
            except Exception:
                log.exception("Saving the page of a closing wizard failed")
        stack = getattr(self.main_window, "stack", None)
        if stack is not None and stack.indexOf(self) >= 0:
            if stack.currentWidget() is self:
                self.main_window.show_home()
            stack.removeWidget(self)
        self.hide()
        for task in list(self._tasks):
            task.cancel()
        if not self._tasks:
            self.deleteLater()

    @property
    def retired(self) -> bool:
        return self._retired

    @Slot(object)
    def _project_changed(self, project: Any) -> None:
        if project is not self.project and not self._retired:
            self.retire()


def open_wizard(main_window: Any, cls: type[WizardShell],
                make: Callable[[Any], WizardShell]) -> WizardShell:
    """Show the ``cls`` wizard for the open project (an untitled one when none is open): the one
    already open for this project, else a new one from ``make(project)``; a wizard of another
    project, or of another method in this window, is retired first."""
    project = main_window.ensure_project(method=cls.METHOD)
    if not project.method and cls.METHOD:
        project.set_method(cls.METHOD)
    for existing in main_window.findChildren(WizardShell):
        if existing.retired:
            continue
        if type(existing) is cls and existing.project is project and not project.closed:
            main_window.show_page(existing)
            return existing
        existing.retire()
    wizard = make(project)
    main_window.show_page(wizard)
    wizard.start()
    return wizard


def open_method_wizard(main_window: Any, cls: type[WizardShell], factory_name: str,
                       factory: Any) -> WizardShell:
    """:func:`open_wizard` for a method's wizard ``cls(main_window, project, factory)``; when a
    ``factory`` is given (the model or encoder maker; tests give fakes), the wizard, new or
    already open, uses it as its ``factory_name``."""
    wizard = open_wizard(main_window, cls, lambda project: cls(main_window, project, factory))
    if factory is not None:
        setattr(wizard, factory_name, factory)
    return wizard
