"""Shared test set-up: every test runs with its own EvalDesk home and an in-memory keyring."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

#: The real data sets, read in place (never copied into the app).
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


class MemoryKeyring:
    """A keyring backend that keeps passwords in a dict (tests must never touch the real one)."""

    priority = 100

    def __init__(self) -> None:
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        from keyring.errors import PasswordDeleteError

        if self.passwords.pop((service, username), None) is None:
            raise PasswordDeleteError("not found")


@pytest.fixture(autouse=True)
def evaldesk_home(tmp_path, monkeypatch) -> Path:
    """Settings, cache, logs and data of this test live under ``tmp_path/home``."""
    home = tmp_path / "home"
    monkeypatch.setenv("EVALDESK_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def memory_keyring(monkeypatch) -> MemoryKeyring:
    import keyring
    import keyring.backend

    class _Backend(keyring.backend.KeyringBackend):
        priority = 100
        store = MemoryKeyring()

        def get_password(self, service, username):
            return self.store.get_password(service, username)

        def set_password(self, service, username, password):
            self.store.set_password(service, username, password)

        def delete_password(self, service, username):
            self.store.delete_password(service, username)

    backend = _Backend()
    backend.store = MemoryKeyring()
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    yield backend.store
    keyring.set_keyring(previous)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip(f"the shared data sets are not beside this checkout ({SHARED_DATA})")
    return SHARED_DATA


_scripted_names = itertools.count()


@pytest.fixture
def scripted_llm():
    """``scripted_llm(replies, **kw)`` makes a ``core.llm.ScriptedLLM`` with a unique name,
    closed after the test (the real gateway path with a fake model)."""
    from core.llm import ScriptedLLM

    made = []

    def make(replies=None, **kwargs):
        kwargs.setdefault("name", f"s{next(_scripted_names)}")
        llm = ScriptedLLM(replies, **kwargs)
        made.append(llm)
        return llm

    yield make
    for llm in made:
        llm.close()
