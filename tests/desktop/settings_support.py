"""Shared by the settings dialog tests: open the dialog, fill a service profile, and a fake
``core.llm`` whose connection check answers ``FakeCheck``."""

from __future__ import annotations

import asyncio
import sys
import types
from dataclasses import dataclass

from desktop.settings_dialog import ProfileDialog, SettingsDialog


def _open_settings(qtbot, window) -> SettingsDialog:
    window.settings_action.trigger()
    dialog = window.settings_dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def _fill_service_profile(dialog: ProfileDialog, name: str, model: str, bases: str = "",
                          key: str = "") -> None:
    dialog.name_edit.setText(name)
    dialog.service_radio.setChecked(True)
    dialog.model_edit.setText(model)
    dialog.bases_edit.setPlainText(bases)
    if key:
        dialog.key_edit.setText(key)


@dataclass
class FakeCheck:
    ok: bool
    message: str = ""
    reply: str = ""
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    warning: str = ""


def _fake_llm(monkeypatch, check=None, error=None):
    calls = []

    async def check_connection(profile, api_key):
        calls.append((profile, api_key))
        await asyncio.sleep(0)
        if error is not None:
            raise error
        return check

    module = types.ModuleType("core.llm")
    module.check_connection = check_connection
    module.add_usage_listener = lambda callback: None
    monkeypatch.setitem(sys.modules, "core.llm", module)
    return calls
