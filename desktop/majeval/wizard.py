"""The MAJ-Eval wizard: task → documents → find stakeholders → personas → items → run → results.

A :class:`desktop.wizard.WizardShell` with one page class per step in
:mod:`desktop.majeval.pages`. The pages only collect choices and show outcomes; what is kept in
the project, and every step's work, is in :mod:`core.majeval.session` (the command line uses the
same functions). Every model call runs through :mod:`desktop.runner` with progress and Cancel;
every choice and every edit is stored in the project as soon as it is made, so reopening the
project restores the wizard where it was, with the results shown without asking the model again.
Choices that cannot be read are kept aside in the project and the first page says so.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import QComboBox, QLabel

from core.majeval import session as st
from desktop.majeval.pages import IN_ORDER
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.usage import format_usage
from desktop.wizard import WizardShell, open_method_wizard

__all__ = ["PAGES", "MajEvalWizard", "open_wizard"]

log = logging.getLogger("evaldesk.majeval")

PAGES = ("task", "documents", "extraction", "personas", "items", "run", "results", "check")


class MajEvalWizard(WizardShell):
    """The MAJ-Eval wizard page shown in the main window."""

    METHOD, OBJECT_NAME = "majeval", "majevalWizard"
    HOME_TIP = ("Back to the home screen. Everything is kept in the project; open MAJ-Eval "
                "again to carry on.")
    PAGE_CLASSES = IN_ORDER

    def __init__(self, main_window: Any, project: Any,
                 llm_factory: st.LLMFactory | None = None) -> None:
        # what the pages read while they are built
        self.llm_factory = llm_factory or st.default_llm_factory
        self.state, self.state_problem = st.open_state(project)
        self.docs: list[Any] = st.load_documents(project, self.state)
        self.opened_items: st.OpenedItems | None = None
        self.run: Any = None
        self.alphas: list[Any] = []
        self.humans: list[Any] = []
        self.active_llm: Any = None
        self._usage_label: QLabel | None = None
        self._profile_combos: list[QComboBox] = []
        self._filling_profiles = False
        super().__init__(main_window, project, session=st)
        self._usage_timer = QTimer(self)
        self._usage_timer.setInterval(400)
        self._usage_timer.timeout.connect(self._show_usage)

    # ================================================================ shared by the pages
    @property
    def editor(self) -> Any:
        return self.pages["personas"].editor

    @property
    def results(self) -> Any:
        return self.pages["results"].results

    def save(self) -> None:
        st.save_state(self.project, self.state)

    def chosen_profile(self) -> Any:
        """The model profile chosen for this project (the default one when it is gone)."""
        settings = self.main_window.settings
        try:
            return settings.profile(self.state.profile or None)
        except (KeyError, ValueError):
            return settings.profile() if settings.profiles else None

    def model(self) -> str:
        """The model of the chosen profile, its name only (for what is said on screen)."""
        profile = self.chosen_profile()
        return profile.model if profile is not None else ""

    def model_used(self) -> Any:
        """The chosen profile as a run records it: its model and every setting that changes
        an answer (part of the choices a run is made with); "" when there is none."""
        profile = self.chosen_profile()
        return profile if profile is not None else ""

    def llm(self, run_id: int | None = None) -> Any:
        profile = self.chosen_profile()
        if profile is None:
            raise RuntimeError("There is no model profile. Add one in Settings → Models.")
        self.active_llm = self.llm_factory(profile, self.project, run_id)
        return self.active_llm

    def start_step(self, what: str, panel: RunPanel, step: Any, title: str, on_done: Any,
                   usage_label: QLabel | None = None) -> Any:
        """Run ``step`` in ``panel`` (the shell's step lifecycle; ``what`` names it in
        :attr:`step_ended`), showing the model's usage in ``usage_label`` while it runs."""
        self._usage_label = usage_label
        if usage_label is not None:
            self.active_llm = None
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
        usage = getattr(self.active_llm, "usage", None)
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
        chosen = self.state.profile or self.main_window.settings.default_profile
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
        if name and name != self.state.profile:
            self.state.profile = name
            self.save()
            self.fill_profiles()
            self.fill_outdated_notice()
            self.pages["run"].fill()

    def check_results_current(self) -> None:
        """Mark the results shown as out of date when the choices changed since they were
        made (they are never shown as current; Export is off for them)."""
        if self.run is None:
            return
        self.results.set_out_of_date(
            st.run_differences(self.project, self.state, self.run, self.model_used()))

    def fill_outdated_notice(self) -> None:
        """Say so when the task or the documents changed after the personas were written, when
        the built-in demo model wrote them, and when another model is chosen now."""
        from html import escape

        from core.llm.identity import DEMO_NOTE, describe_model, is_demo_model, model_differences

        reason = st.personas_out_of_date(self.project, self.state)
        made_by = st.personas_made_by(self.project, self.state)
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

    def show_run(self, run: Any, *, show: bool = True) -> Any:
        """Compute the agreement statistics (executor) and show the results page (``show``
        False: fill it, and stay on the page shown)."""
        import asyncio

        self.run = run

        async def go() -> None:
            loop = asyncio.get_running_loop()
            alphas, humans = await loop.run_in_executor(None, st.agreement, run)
            if self.retired or self.project.closed:
                return  # the wizard left (or its project closed) while the statistics ran
            self.alphas, self.humans = alphas, humans
            self.results.set_run(run, self.alphas, self.humans)
            self.pages["results"].fill_stability()
            self.check_results_current()
            if show:
                self.show_page("results")
            self.step_ended.emit("results", "finished")

        from desktop.errors import spawn

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
        run = st.load_run(self.project, self.state, self.model_used())
        page = self.state.page if self.state.page in PAGES else "task"
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
        if self.state.page != key:
            self.state.page = key
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


def open_wizard(main_window: Any, llm_factory: st.LLMFactory | None = None) -> MajEvalWizard:
    """Show the MAJ-Eval wizard for the open project (creating an untitled project if none)."""
    return open_method_wizard(  # type: ignore[return-value]
        main_window, MajEvalWizard, "llm_factory", llm_factory)
