"""Grab screenshots of the real app for the README: ``resources/screenshots/*.png``.

Run it on a display (or under ``xvfb-run``) with an empty EvalDesk home, so the pictures show
what a new user sees::

    EVALDESK_HOME=$(mktemp -d) xvfb-run -s "-screen 0 1280x800x24" \\
        .venv/bin/python -m desktop._screenshots
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import ClassVar

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from core import paths, secrets
from core.settings import ModelProfile
from desktop.app import start
from desktop.settings_dialog import SettingsDialog


def _wait(ms: int) -> None:
    app = QApplication.instance()
    end = QTimer()
    end.setSingleShot(True)
    end.start(ms)
    while end.isActive():
        app.processEvents()


def _memory_keyring() -> None:
    """Keep the example key in memory: a screenshot run must not touch the real keyring."""
    import keyring
    import keyring.backend

    class _Memory(keyring.backend.KeyringBackend):
        priority = 1
        store: ClassVar[dict[tuple[str, str], str]] = {}

        def get_password(self, service, username):
            return self.store.get((service, username))

        def set_password(self, service, username, password):
            self.store[(service, username)] = password

        def delete_password(self, service, username):
            self.store.pop((service, username), None)

    keyring.set_keyring(_Memory())


def main(out: Path | None = None) -> int:
    out = out or paths.resources_dir() / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    SettingsDialog.detect_devices = staticmethod(lambda: ["cpu"])  # no torch import for a picture
    _memory_keyring()
    session = start()
    window = session.window
    window.resize(1280, 800)
    window.settings.upsert_profile(
        ModelProfile(name="Department Ollama", model="ollama/llama3.1:8b",
                     api_bases=["http://gpu-server.local:11434"], max_concurrency=8)
    )
    window.settings.upsert_profile(ModelProfile(name="GPT-4o mini", model="openai/gpt-4o-mini"))
    _wait(300)
    home = out / "home.png"
    window.grab().save(str(home))

    secrets.set_api_key("GPT-4o mini", "sk-example-not-a-real-key")
    dialog = window.open_settings()
    dialog.select_profile("GPT-4o mini")
    _wait(400)
    settings = out / "settings.png"
    dialog.grab().save(str(settings))

    editor = dialog.edit_profile()
    _wait(300)
    editor.grab().save(str(out / "profile.png"))
    editor.reject()
    dialog.reject()
    for path in sorted(out.glob("*.png")):
        print(f"{path}  {path.stat().st_size // 1024} KB")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
