"""The MAJ-Eval wizard: task → documents → find stakeholders → personas → items → run → results.

A :class:`desktop.wizard.WizardShell` with one page class per step in
:mod:`desktop.majeval.pages`. The pages only collect choices and show outcomes; what is kept in
the project, and every step's work, is the wizard's one :class:`MajEvalSession`
(``wizard.session``; the command line makes the same calls). Every model call runs through
:mod:`desktop.runner` with progress and Cancel;
every choice and every edit is stored in the project as soon as it is made, so reopening the
project restores the wizard where it was, with the results shown without asking the model again.
Choices that cannot be read are kept aside in the project and the first page says so.
"""

from __future__ import annotations

import asyncio
import logging
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QComboBox, QLabel

from core.llm import LLMFactory, gateway_for
from core.llm.identity import DEMO_NOTE, describe_model, is_demo_model, model_differences
from core.majeval.session import EvaluationRun, GroupAlpha, HumanAgreement, MajEvalSession
from core.settings import ModelProfile
from desktop.errors import spawn
from desktop.majeval.pages import IN_ORDER, PersonasPage, ResultsPage
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.usage import format_usage
from desktop.wizard import WizardShell, open_method_wizard

if TYPE_CHECKING:  # pragma: no cover
    from core.documents import Document
    from core.majeval.inputs import OpenedItems
    from core.majeval.session import MajEvalChoices
    from core.project import Project
    from desktop.majeval.persona_editor import PersonaEditor
    from desktop.majeval.results import ResultsView

__all__ = ["PAGES", "MajEvalWizard", "open_wizard"]

log = logging.getLogger("evaldesk.majeval")

PAGES = ("task", "documents", "extraction", "personas", "items", "run", "results", "check")


class MajEvalWizard(WizardShell):
    """The MAJ-Eval wizard page shown in the main window."""

    METHOD, OBJECT_NAME = "majeval", "majevalWizard"
    SENDS_TEXTS = True
    HOME_TIP = ("Back to the home screen. Everything is kept in the project; open MAJ-Eval "
                "again to carry on.")
    PAGE_CLASSES = IN_ORDER

    session: MajEvalSession

    def __init__(self, main_window: Any, project: Project,
                 llm_factory: LLMFactory | None = None) -> None:
        # what the pages read while they are built
        session = MajEvalSession.open(project, settings=main_window.settings,
                                      models=llm_factory or gateway_for)
        self.docs: list[Document] = session.documents()
        self.opened_items: OpenedItems | None = None
        self.run: EvaluationRun | None = None
        self.alphas: list[GroupAlpha] = []
        self.humans: list[HumanAgreement] = []
        self._usage_label: QLabel | None = None
        self._profile_combos: list[QComboBox] = []
        self._filling_profiles = False
        super().__init__(main_window, project, session=session)
        self._usage_timer = QTimer(self)
        self._usage_timer.setInterval(400)
        self._usage_timer.timeout.connect(self._show_usage)

    # ================================================================ shared by the pages
    @property
    def choices(self) -> MajEvalChoices:
        """MAJ-Eval's choices in this project (the session's)."""
        return self.session.choices

    @property
    def choices_problem(self) -> str:
        """Why the stored choices could not be read ("" when they could)."""
        return self.session.problem

    @property
    def llm_factory(self) -> LLMFactory:
        """What makes the models of the session's steps (tests give a scripted one)."""
        return self.session.models

    @llm_factory.setter
    def llm_factory(self, factory: LLMFactory) -> None:
        self.session.models = factory

    @property
    def editor(self) -> PersonaEditor:
        page = self.pages["personas"]
        assert isinstance(page, PersonasPage)
        return page.editor

    @property
    def results(self) -> ResultsView:
        page = self.pages["results"]
        assert isinstance(page, ResultsPage)
        return page.results

    def save(self) -> None:
        """Keep the choices as the pages changed them."""
        self.session.save_choices(self.session.choices)

    def chosen_profile(self) -> ModelProfile | None:
        """The model profile chosen for this project (the default one when it is gone)."""
        return self.session.profile()

    def privacy_profiles(self) -> list[ModelProfile]:
        profile = self.chosen_profile()
        return [profile] if profile is not None else []

    def settings_changed(self) -> None:
        self.session.settings = self.main_window.settings
        super().settings_changed()

    def model(self) -> str:
        """The model of the chosen profile, its name only (for what is said on screen)."""
        profile = self.chosen_profile()
        return profile.model if profile is not None else ""

    def start_step(self, what: str, panel: RunPanel, step: Any, title: str, on_done: Any,
                   usage_label: QLabel | None = None) -> Any:
        """Run ``step`` in ``panel`` (the shell's step lifecycle; ``what`` names it in
        :attr:`step_ended`), showing the session's usage (what the step's models used so far)
        in ``usage_label`` while it runs."""
        self._usage_label = usage_label
        if usage_label is not None:
            usage_label.show()
            self._usage_timer.start()

        def done(outcome: RunOutcome) -> Any:
            self._usage_timer.stop()
            self._show_usage()
            return on_done(outcome)

        return self.run_step(panel, step, title=title, on_done=done, busy=what)

    @Slot()
    def _show_usage(self) -> None:
        label = self._usage_label
        usage = self.session.usage
        if label is not None and usage is not None:
            label.setText("This step: " + format_usage(usage).removeprefix("LLM: "))

    def profile_combo(self) -> QComboBox:
        combo = QComboBox()
        combo.setMinimumWidth(240)
        combo.setToolTip("The language model (a profile from Settings → Models).")
        combo.currentIndexChanged.connect(self._profile_chosen)
        self._profile_combos.append(combo)
        return combo

    def fill_profiles(self) -> None:
        self._filling_profiles = True
        names = [p.name for p in self.profiles()]
        chosen = self.choices.profile or self.main_window.settings.default_profile
        for combo in self._profile_combos:
            combo.clear()
            combo.addItems(names)
            if chosen in names:
                combo.setCurrentText(chosen)
        self._filling_profiles = False

    @Slot(int)
    def _profile_chosen(self, _i: int) -> None:
        if self._filling_profiles:
            return
        combo = self.sender()
        name = combo.currentText() if isinstance(combo, QComboBox) else ""
        if name and name != self.choices.profile:
            self.choices.profile = name
            self.save()
            self.fill_profiles()
            self.fill_outdated_notice()
            self.pages["run"].fill()

    def check_results_current(self) -> None:
        """Mark the results shown as out of date when the choices changed since they were
        made (they are never shown as current; Export is off for them)."""
        if self.run is None:
            return
        self.results.set_out_of_date(self.session.run_differences(self.run))

    def fill_outdated_notice(self) -> None:
        """Say so when the task or the documents changed after the personas were written, when
        the built-in demo model wrote them, and when another model is chosen now."""
        reason = self.session.personas_out_of_date()
        made_by = self.session.personas_made_by()
        chosen = self.chosen_profile()
        other = made_by is not None and chosen is not None and \
            bool(model_differences(made_by, chosen))
        for label, place in ((self.pages["extraction"].extract_notice, "above"),
                             (self.pages["personas"].personas_notice,
                              "on the “Find stakeholders” page")):
            parts = []
            if made_by is not None and is_demo_model(made_by):
                parts.append("<b>These personas were written by the built-in demo model.</b> "
                             + DEMO_NOTE)
            if reason:
                parts.append(f"{reason} To bring the personas up to date, press “Find "
                             f"stakeholders again” {place}: personas you edited are kept. Or go "
                             "on with them as they are.")
            if other:
                parts.append(f"They were made with {escape(describe_model(made_by))}; the model "
                             f"chosen now is {escape(describe_model(chosen))}. “Find "
                             f"stakeholders again” ({place}) reads the documents again with it; "
                             "personas you edited are kept.")
            label.setText("<br>".join(parts))
            label.setVisible(bool(parts))

    def show_run(self, run: EvaluationRun, *, show: bool = True) -> Any:
        """Compute the agreement statistics (executor) and show the results page (``show``
        False: fill it, and stay on the page shown)."""
        self.run = run

        async def go() -> None:
            loop = asyncio.get_running_loop()
            alphas, humans = await loop.run_in_executor(None, self.session.agreement, run)
            if self.retired or self.project.closed:
                return  # the wizard left (or its project closed) while the statistics ran
            self.alphas, self.humans = alphas, humans
            self.results.set_run(run, self.alphas, self.humans)
            self.pages["results"].fill_stability()
            self.check_results_current()
            if show:
                self.show_page("results")
            self.step_ended.emit("results", "finished")

        return spawn(go(), where="showing the results")

    # ======================================================================== navigation
    def start(self) -> None:
        """Fill every page from the stored choices and show where the user left off."""
        self.pages["task"].fill()
        self.pages["documents"].fill()
        self.fill_profiles()
        self.pages["extraction"].fill()
        self.pages["items"].fill()  # the file itself is read when the Items page is shown
        self.pages["run"].fill()
        run = self.session.load_results()
        page = self.choices.page if self.choices.page in PAGES else "task"
        if run is not None:
            self.run = run
            if page == "results":
                self.show_run(run)
                page = "run"
        elif page in ("results", "check"):
            page = "run"
        self.show_page(page)

    def show_page(self, key: str) -> None:
        if key in ("results", "check") and self.run is None:
            key = "run"
        super().show_page(key)

    def page_shown(self, key: str) -> None:
        if self.choices.page != key:
            self.choices.page = key
            self.save()

    def update_nav(self) -> None:
        if not self.page:
            return
        for key in ("documents", "extraction", "run"):
            self.pages[key].busy_changed(self.busy)
        super().update_nav()
        if self.chosen_profile() is None:
            self.nav_message.setText("Add a language model in Settings → Models first.")

    def retire(self) -> None:
        """Stop the page timers first (they read the project, which may be closed now)."""
        self._usage_timer.stop()
        self.pages["run"].stop_timers()
        super().retire()

    @Slot()
    def go_home(self) -> None:
        self.editor.flush()
        self.pages["documents"].save_page_text()
        self.pages["task"].save_task()
        self.main_window.show_home()


def open_wizard(main_window: Any, llm_factory: LLMFactory | None = None) -> MajEvalWizard:
    """Show the MAJ-Eval wizard for the open project (creating an untitled project if none)."""
    return open_method_wizard(  # type: ignore[return-value]
        main_window, MajEvalWizard, "llm_factory", llm_factory)
