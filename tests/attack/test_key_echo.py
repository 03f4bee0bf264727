"""Attack suite, secrets (issue 30): a provider whose 401 answer repeats the key.

Many gateways answer a wrong key with "Incorrect API key provided: sk-...". The fake server on
127.0.0.1 here does that for every request, and echoes the request's key headers back in the
body and in a header of its answer. The key was printed by ``evaldesk llm test``, shown in the
profile dialog's Test result, written into the exported workbook's notes and stored twice in the
project's results. Now every text a provider sends back passes one step (``core.secrets.redact``)
before it reaches a message, a log, the project or an export.

Each case gives the key one way (EvalDesk's environment variable, the provider's own variable,
the password store, the profile dialog) and reaches the server one way (straight over HTTP, the
path of a self-hosted model; through litellm, the path of a priced model; through litellm's
Router, a profile with two addresses), then searches every place a person or a file could see:
the terminal output, the dialog, the workbook (inside its zipped parts), the project file's
bytes (and its journal), the log and every file under the home folder.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.cli import main
from tests.attack._faults import hostile_server, save_profile, score_args
from tests.attack.test_secrets import files_under, hits
from tests.desktop.conftest import qloop  # noqa: F401 - the GUI tests' event loop fixture

PROFILE = "Team server"
#: Models that take each path: unpriced -> straight over HTTP; priced -> litellm.
DIRECT_MODEL = "openai/attack-model"
LITELLM_MODEL = "openai/gpt-4o-mini"
EVERY_REQUEST = "ABCD?"


@pytest.fixture
def fake_home(tmp_path, monkeypatch):
    """HOME (and the XDG folders) under the test's folder, so every file written is searched."""
    home = tmp_path / "userhome"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    return home


def _profile(base: str, path: str) -> dict:
    if path == "direct":
        return {"model": DIRECT_MODEL, "api_bases": [base]}
    if path == "litellm":
        return {"model": LITELLM_MODEL, "api_bases": [base]}
    return {"model": DIRECT_MODEL, "api_bases": [base, base.replace("127.0.0.1", "localhost")]}


def _give_key(source: str, secret: str, monkeypatch, memory_keyring) -> None:
    if source == "environment":
        monkeypatch.setenv("EVALDESK_API_KEY_TEAM_SERVER", secret)
    elif source == "provider variable":
        monkeypatch.setenv("OPENAI_API_KEY", secret)
    elif source == "keyring":
        memory_keyring.set_password("EvalDesk", PROFILE, secret)
    else:
        raise AssertionError(source)


def _run_cli(tmp_path: Path) -> list[int]:
    project = tmp_path / "work.evaldesk"
    return [
        main(["llm", "test", "--profile", PROFILE]),
        main(score_args(tmp_path, project, tmp_path / "scores.xlsx", PROFILE)),
        main(["project", "info", str(project)]),
    ]


def _assert_nowhere(secret: str, tmp_path: Path, *seen: str) -> None:
    """``secret`` in no text shown and in no file under ``tmp_path`` (the EvalDesk home, the
    user's home, the project and its journal, the workbooks and their zipped parts)."""
    written = files_under(tmp_path)
    assert any(p.suffix == ".xlsx" and p.name.startswith("scores") for p in written)
    assert any(p.suffix == ".evaldesk" for p in written)
    for text in seen:
        assert secret not in text
        assert secret[:12] not in text
    assert hits(secret, tmp_path) == []
    assert hits(secret[:12], tmp_path) == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("path", ["direct", "litellm", "router"])
@pytest.mark.parametrize("source", ["environment", "provider variable", "keyring"])
def test_a_key_repeated_in_401_answers_reaches_no_output_and_no_file(
        path, source, tmp_path, evaldesk_home, fake_home, monkeypatch, memory_keyring, capsys):
    secret = f"sk-proj-Echo{path.title()}{source.title().replace(' ', '')}9f3K2xQ7LmA0"
    with hostile_server("401_echo_key", victims=EVERY_REQUEST) as server:
        save_profile(PROFILE, server.base, max_retries=0, **_profile(server.base, path))
        _give_key(source, secret, monkeypatch, memory_keyring)
        codes = _run_cli(tmp_path)
        sent = [h.get("Authorization", "") for h, _ in server.requests]
    out = capsys.readouterr()
    # the server got the key, said it back, and every call failed as an authentication failure
    assert sent and all(s == f"Bearer {secret}" for s in sent), sent
    assert codes[0] == 1 and codes[2] == 0, out.err
    assert "refused the API key" in out.err and "Incorrect API key provided: ***" in out.err
    _assert_nowhere(secret, tmp_path, out.out, out.err)
    from tests.attack._faults import notes

    said = notes(tmp_path / "scores.xlsx")
    assert set(said) == {"A", "B", "C", "D"}
    # (litellm's Router rests servers that keep failing: later texts may say that instead)
    assert all("Incorrect API key provided: ***" in n or "None of the servers" in n
               for n in said.values()), said
    assert any("Incorrect API key provided: ***" in n for n in said.values()), said


@pytest.mark.timeout(180)
@pytest.mark.usefixtures("qloop")
def test_a_key_typed_in_the_profile_dialog_and_echoed_reaches_nothing(
        qtbot, tmp_path, evaldesk_home, fake_home, memory_keyring, capsys):
    """The Done-means case: the key typed in the profile dialog, the dialog's Test, the saved
    profile used by the command line (test, scoring run with an export, project info), the
    Settings window's Test, and a library that logs the provider's raw words: then the key is
    looked for in the terminal output, both dialogs, the log, the workbook, the project file's
    bytes and every file under both home folders."""
    from core.settings import Settings, SettingsStore
    from desktop.errors import log_file, setup_logging
    from desktop.settings_dialog import SettingsDialog

    secret = "sk-proj-DialogEcho7Hq2Lm9Xc4Vb8Nz1"
    setup_logging()
    shown: list[str] = []
    try:
        with hostile_server("401_echo_key", victims=EVERY_REQUEST) as server:
            dialog = SettingsDialog(Settings(), SettingsStore())
            qtbot.addWidget(dialog)
            editor = dialog.add_profile()
            editor.name_edit.setText(PROFILE)
            editor.service_radio.setChecked(True)
            editor.model_edit.setText(DIRECT_MODEL)
            editor.bases_edit.setPlainText(server.base)
            editor.key_edit.setText(secret)
            editor.test_button.click()  # before the key is saved: the key typed is used
            qtbot.waitUntil(lambda: editor.test_button.isEnabled(), timeout=30_000)
            shown.append(editor.test_result.text())
            assert "refused the API key" in shown[-1], shown[-1]
            editor.buttons.accepted.emit()
            assert memory_keyring.passwords[("EvalDesk", PROFILE)] == secret
            dialog.select_profile(PROFILE)
            dialog.test_selected()  # the Settings window's own Test button
            qtbot.waitUntil(lambda: dialog.test_button.isEnabled()
                            and "refused" in dialog.test_result.text(), timeout=30_000)
            shown.append(dialog.test_result.text())
            dialog.close()
            with ThreadPoolExecutor(1) as pool:  # the commands run their own event loop
                codes = pool.submit(_run_cli, tmp_path).result(150)
            assert all(h.get("Authorization") == f"Bearer {secret}" for h, _ in server.requests)
        # a library that logs what the provider said (litellm does at its debug level)
        logging.getLogger("LiteLLM").warning("AuthenticationError: Incorrect API key provided: "
                                             "%s", secret)
        try:
            raise RuntimeError(f"Incorrect API key provided: {secret}")
        except RuntimeError:
            logging.getLogger("evaldesk").exception("A call failed")
        for handler in logging.getLogger().handlers:
            handler.flush()
    finally:
        root = logging.getLogger()
        for handler in [h for h in root.handlers if getattr(h, "_evaldesk", False)]:
            root.removeHandler(handler)
            handler.close()
    out = capsys.readouterr()
    assert codes[0] == 1, out.err
    assert log_file().is_file() and "Incorrect API key provided: ***" in log_file().read_text()
    assert str(log_file()).startswith(str(evaldesk_home))
    _assert_nowhere(secret, tmp_path, out.out, out.err, *shown)
    assert all("Incorrect API key provided: ***" in text for text in shown), shown


def test_redact_hides_keys_tokens_and_headers_but_not_model_names():
    """The one step every provider's text passes: the profile's own key (also cut short or
    URL-encoded), keys of any provider by their shape, bearer and basic tokens, named values
    (``api_key=``, ``"x-api-key": ...``), keys inside addresses; and words, model names and
    numbers left alone."""
    from core.secrets import redact

    own = "myOwnKey+8h2k/4p6s"  # no known shape: found because it is the profile's key
    cases = {
        f"Incorrect API key provided: {own}.": "Incorrect API key provided: ***.",
        f"{{'Authorization': 'Bearer {own}'}}": "{'Authorization': 'Bearer ***'}",
        f"key {own[:12]}... is wrong": "key ***... is wrong",
        f"sent {own.replace('+', '%2B').replace('/', '%2F')}": "sent ***",
        "Incorrect API key provided: sk-proj-Abc123xyz987QWE.": "Incorrect API key provided: ***.",
        "anthropic sk-ant-api03-AbCdEf123456_-xyz rejected": "anthropic *** rejected",
        "Authorization: Bearer abc.def-ghi_jkl": "Authorization: Bearer ***",
        "{'Authorization': 'Bearer tok12345678'}": "{'Authorization': 'Bearer ***'}",
        'headers: {"x-api-key": "zzzzzzzz1234", "api-key": "qqqq5678"}':
            'headers: {"x-api-key": "***", "api-key": "***"}',
        "api_key=hunter22 and password: swordfish": "api_key=*** and password: ***",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==": "Authorization: Basic ***",
        "google AIzaSyA1234567890abcdefghijklmnopqrstuv": "google ***",
        "groq gsk_abcdefghij1234567890 / hf_abcdefghijklmnop": "groq *** / ***",
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig": "jwt ***",
        "random zQ7pLm2RtY9vWx4KbN8cDf3Gh here": "random *** here",
        "azure 0123456789abcdef0123456789abcdef": "azure ***",
        "at https://u:pw123456@gw.example/v1?api-key=abc":
            "at https://u:***@gw.example/v1?api-key=***",
        # left alone
        "Token limit exceeded; Basic plan; bearer token missing":
            "Token limit exceeded; Basic plan; bearer token missing",
        "model 'Meta-Llama-3.1-8B-Instruct-Q4_K_M' not found (gpt-4o-mini-2024-07-18)":
            "model 'Meta-Llama-3.1-8B-Instruct-Q4_K_M' not found (gpt-4o-mini-2024-07-18)",
        "Rate limit reached on tokens per min (TPM): Limit 30000, Used 29000":
            "Rate limit reached on tokens per min (TPM): Limit 30000, Used 29000",
    }
    for raw, expected in cases.items():
        assert redact(raw, [own]) == expected, raw


def test_litellm_exception_strings_are_redacted_by_classify(monkeypatch):
    """litellm's own exception (its class name, the provider, the body) through ``classify``,
    with the key in the environment only: hidden."""
    import httpx
    import litellm

    from core.llm._errors import classify

    secret = "sk-envonly-Q2w3E4r5T6y7U8i9"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(401, request=request)
    exc = litellm.AuthenticationError(
        message=f"AuthenticationError: OpenAIException - Incorrect API key provided: {secret}. "
                f"Headers: {{'Authorization': 'Bearer {secret}'}}",
        llm_provider="openai", model="gpt-4o-mini", response=response)
    assert secret in str(exc)
    failure = classify(exc, model="openai/gpt-4o-mini", api_base="", profile="p")
    assert failure.kind == "auth"
    assert secret not in failure.message and secret[:10] not in failure.message
    assert "Incorrect API key provided: ***" in failure.message


def test_failures_do_not_chain_the_providers_exception():
    """The provider's exception (with its raw words) is not kept as the failure's cause, so a
    traceback in a log cannot show it."""
    import asyncio

    from core.llm import Gateway, LLMFailure
    from core.llm._cache import MemoryCache
    from core.settings import ModelProfile

    secret = "sk-chain-Zx8Cv7Bn6Mm5Ll4"
    with hostile_server("401_echo_key", victims=EVERY_REQUEST) as server:
        profile = ModelProfile(name="p", model=DIRECT_MODEL, api_bases=[server.base],
                               timeout_s=5, max_retries=0)
        gateway = Gateway(profile, cache=MemoryCache(), api_key=secret)
        with pytest.raises(LLMFailure) as caught:
            asyncio.run(gateway.complete_text("hello"))
    failure = caught.value
    assert failure.kind == "auth" and secret not in failure.message
    assert failure.__cause__ is None and failure.__suppress_context__
    import traceback

    assert secret not in "".join(traceback.format_exception(failure))


def test_an_answer_that_repeats_the_key_is_stored_without_it():
    """A server that echoes the request (a debugging proxy) may put the key in a good answer:
    it is not stored, logged or exported."""
    from types import SimpleNamespace

    from core.llm import Gateway
    from core.llm._cache import MemoryCache
    from core.settings import ModelProfile

    secret = "sk-answer-Hh7Jj6Kk5Ll4"
    profile = ModelProfile(name="p", model=DIRECT_MODEL, api_bases=["http://127.0.0.1:9/v1"])
    gateway = Gateway(profile, cache=MemoryCache(), api_key=secret)
    response = SimpleNamespace(
        choices=[SimpleNamespace(message=SimpleNamespace(content=f"you sent Bearer {secret}"),
                                 finish_reason="stop")],
        usage=SimpleNamespace(prompt_tokens=1, completion_tokens=1), model="m",
        _hidden_params={"unpriced": True})
    assert gateway._reply(response, 0.1).content == "you sent Bearer ***"


def test_the_environment_key_variable_is_redacted_without_being_remembered(monkeypatch):
    from core.secrets import redact

    monkeypatch.setenv("EVALDESK_API_KEY_SOMEONE", "plainwords-with-no-shape")
    assert redact("said plainwords-with-no-shape") == "said ***"
    assert os.environ["EVALDESK_API_KEY_SOMEONE"]
