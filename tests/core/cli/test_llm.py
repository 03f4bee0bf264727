"""``evaldesk llm test``."""

from __future__ import annotations

import asyncio

import pytest

from core.cli import main
from core.settings import ModelProfile, Settings, SettingsStore
from tests.core.llm.fault_server import FaultServer


def test_llm_test_with_a_model_string(scripted_llm, capsys):
    llm = scripted_llm({"JSON object": {"reply": "ready"}}, name="cli")
    assert main(["llm", "test", "--model", llm.model]) == 0
    out = capsys.readouterr().out
    assert "Reply:    ready" in out
    assert "Latency:" in out and "Tokens:" in out and "Cost:     $0.000000" in out
    assert llm.calls == 1


def test_llm_test_with_a_saved_profile_and_api_base(scripted_llm, capsys):
    llm = scripted_llm({"JSON object": {"reply": "ready"}}, name="saved")
    settings = Settings()
    settings.upsert_profile(ModelProfile(name="Team server", model=llm.model))
    SettingsStore().save(settings)
    code = main(["llm", "test", "--profile", "Team server", "--api-base", "http://127.0.0.1:9/v1"])
    assert code == 0
    assert llm.requests[0].api_base == "http://127.0.0.1:9/v1"


def test_llm_test_with_an_unknown_profile(capsys):
    assert main(["llm", "test", "--profile", "Nope"]) == 1
    err = capsys.readouterr().err
    assert "no model profile called 'Nope'" in err
    assert "Built-in local model" in err  # lists the profiles there are


async def test_llm_test_reports_a_wrong_key(capsys):
    server = await FaultServer().start()
    try:
        code = await asyncio.to_thread(
            main, ["llm", "test", "--model", "openai/x", "--api-base", server.base("auth")]
        )
    finally:
        await server.stop()
    assert code == 1
    err = capsys.readouterr().err
    assert "API key" in err and "Incorrect API key provided" in err


def test_llm_without_a_subcommand_shows_help(capsys):
    assert main(["llm"]) == 2
    assert "test" in capsys.readouterr().out


@pytest.mark.slow
def test_llm_test_with_the_default_profile_runs_offline(bundled_model, capsys):
    assert main(["llm", "test"]) == 0
    out = capsys.readouterr().out
    assert "Reply:" in out and "Cost:     $0.000000" in out
