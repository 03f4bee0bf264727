"""Shared by the InteractEval wizard tests: the scripted model as profiles "Scripted A" (the
default) and "Scripted B", and loading the sample set."""

from __future__ import annotations

import pytest

from tests.desktop.interacteval_support import USER, click, scripted_reply


@pytest.fixture
def scripted(window):
    from core.llm import ScriptedLLM

    llm = ScriptedLLM(scripted_reply, name="ie-wizard")
    window.settings.user_name = USER
    window.settings.upsert_profile(llm.profile(name="Scripted A"))
    window.settings.upsert_profile(llm.profile(name="Scripted B"))
    window.settings.default_profile = "Scripted A"
    yield llm
    llm.close()


def load_sample(qtbot, wiz):
    click(qtbot, wiz.pages["dimensions"].sample_button)
    qtbot.waitUntil(lambda: bool(wiz.choices.samples) and not wiz.busy, timeout=20_000)
