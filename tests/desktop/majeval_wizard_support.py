"""Fixtures and steps shared by the MAJ-Eval wizard tests: free Qt wrappers on the GUI thread
after each test, the scripted panel as the default profile, and the walks to the Personas page
and through a whole run."""

from __future__ import annotations

import pytest

from tests.desktop.majeval_support import USER, click, panel, wait_step


@pytest.fixture(autouse=True)
def _collect_on_the_gui_thread(qapp):
    """Free this test's Qt wrappers caught in reference cycles (matplotlib canvases, models)
    here, on the GUI thread, rather than in a later test's worker thread."""
    yield
    import gc

    qapp.processEvents()
    gc.collect()


def use_scripted(window, llm, **options) -> None:
    """Make ``llm`` the window's default model profile, "Scripted" (no retries; ``options``
    set more of the profile, e.g. max_concurrency)."""
    window.settings.upsert_profile(llm.profile(name="Scripted", max_retries=0, **options))
    window.settings.default_profile = "Scripted"


@pytest.fixture
def scripted(window):
    from core.llm import ScriptedLLM

    llm = ScriptedLLM(panel, name="mj-wizard")
    window.settings.user_name = USER
    use_scripted(window, llm)
    yield llm
    llm.close()


def to_personas(qtbot, wiz):
    """Sample set loaded, personas made (the wizard is left on the Personas page)."""
    click(qtbot, wiz.pages["task"].sample_button)
    assert wait_step(qtbot, wiz, "sample") == "finished", wiz.pages["task"].sample_panel.message_label.text()
    wiz.show_page("extraction")
    click(qtbot, wiz.pages["extraction"].extract_button)
    assert wait_step(qtbot, wiz, "extraction") == "finished", \
        wiz.pages["extraction"].extract_panel.message_label.text()
    assert wiz.page == "personas"


def run_all(qtbot, wiz):
    wiz.show_page("run")
    click(qtbot, wiz.pages["run"].run_button)
    assert wait_step(qtbot, wiz, "run") == "finished", wiz.pages["run"].run_panel.message_label.text()
    assert wait_step(qtbot, wiz, "results") == "finished"
