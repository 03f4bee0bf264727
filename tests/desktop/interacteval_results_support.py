"""Shared by the InteractEval results tests: the scripted model (default profile "Scripted A")
beside a model that copies the answer form ("Copier"), the sample set with two small
checklists on the Score page, and waiting until no step runs."""

from __future__ import annotations

import re

import pytest

from core.interacteval import Checklist, ChecklistItem
from core.interacteval.session.stages import save_checklist
from desktop.interacteval import open_interacteval_wizard
from tests.desktop.interacteval_support import USER, click, scripted_reply


def _copying_reply(messages):
    prompt = "\n".join(str(m.get("content") or "") for m in messages)
    n = len(re.findall(r"^q\d+\. ", prompt, re.MULTILINE))
    return {f"q{i}": "yes/no" for i in range(1, n + 1)}  # the form, not an answer


@pytest.fixture
def scripted(window):
    from core.llm import ScriptedLLM

    llm = ScriptedLLM(scripted_reply, name="ie-results")
    copier = ScriptedLLM(_copying_reply, name="ie-results-copier")
    window.settings.user_name = USER
    window.settings.upsert_profile(llm.profile(name="Scripted A"))
    window.settings.upsert_profile(copier.profile(name="Copier"))
    window.settings.default_profile = "Scripted A"
    yield llm
    llm.close()
    copier.close()


def ready(qtbot, window):
    """The sample set with two small checklists, on the Score page with the texts read."""
    wiz = open_interacteval_wizard(window)
    click(qtbot, wiz.pages["dimensions"].sample_button)
    qtbot.waitUntil(lambda: bool(wiz.choices.samples) and not wiz.busy, timeout=20_000)
    for name in ("Clarity", "Accuracy"):
        save_checklist(window.project, Checklist(dimension=name, definition=f"{name}.", items=[
            ChecklistItem(component="A", question=f"Is the {name.lower()} fine?"),
            ChecklistItem(component="A", question="Is it short?"),
            ChecklistItem(component="B", question="Is it for a child?")]))
    wiz.show_page("score")
    qtbot.waitUntil(lambda: wiz.opened_texts is not None and not wiz.busy, timeout=20_000)
    return wiz


def settle(qtbot, wiz):
    """Wait until no step of the wizard runs (the agreement is computed in the executor after
    scoring): a step ending after the test's window is gone would touch deleted widgets."""
    qtbot.waitUntil(lambda: not wiz._tasks, timeout=30_000)
