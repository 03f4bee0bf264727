"""Finding model servers on this computer: fake Ollama, llama.cpp, vLLM and LM Studio servers on
127.0.0.1 (ports chosen by the system, passed as candidates)."""

from __future__ import annotations

import asyncio

import pytest

from core.local_models.discovery import Candidate, find_local_servers, profile_for
from tests.core.local_models.fake_servers import (
    LLAMACPP_MODELS,
    LMSTUDIO_MODELS,
    LMSTUDIO_V0,
    OLLAMA_TAGS,
    VLLM_MODELS,
    json_routes,
    serve,
)


def _find(candidates, **kw):
    return asyncio.run(find_local_servers(candidates, **kw))


def test_each_kind_of_server_is_found_with_its_models_and_sizes():
    with serve(json_routes({"/api/tags": OLLAMA_TAGS})) as ollama, \
            serve(json_routes({"/v1/models": LLAMACPP_MODELS})) as llamacpp, \
            serve(json_routes({"/v1/models": VLLM_MODELS})) as vllm, \
            serve(json_routes({"/v1/models": LMSTUDIO_MODELS,
                               "/api/v0/models": LMSTUDIO_V0})) as lmstudio:
        reports = _find([
            Candidate("ollama", ollama, "Ollama"),
            Candidate("openai", llamacpp, "llama.cpp server"),
            Candidate("openai", vllm, "vLLM"),
            Candidate("openai", lmstudio, "LM Studio"),
        ])
    by_program = {r.program: r for r in reports}
    assert set(by_program) == {"Ollama", "llama.cpp server", "vLLM", "LM Studio"}

    ollama_models = by_program["Ollama"].models
    assert [m.name for m in ollama_models] == ["llama3.1:8b"]  # the embedding model is left out
    assert ollama_models[0].size_bytes == 4920753328
    assert "4.9 GB on disk" in ollama_models[0].describe()
    assert "8.0B parameters" in ollama_models[0].describe()

    llama = by_program["llama.cpp server"].models[0]
    assert llama.size_bytes == 4677120000 and llama.parameters == "7.6B"
    assert by_program["vLLM"].models[0].context_length == 32768
    studio = by_program["LM Studio"].models
    assert [m.name for m in studio] == ["phi-3.5-mini-instruct"]
    assert studio[0].loaded is False and studio[0].quantisation == "Q4_K_M"


def test_one_click_profiles_use_the_servers_address():
    with serve(json_routes({"/api/tags": OLLAMA_TAGS})) as ollama, \
            serve(json_routes({"/v1/models": LLAMACPP_MODELS})) as llamacpp:
        reports = _find([Candidate("ollama", ollama, "Ollama"),
                         Candidate("openai", llamacpp, "llama.cpp server")])
    ollama_report, llamacpp_report = reports
    profile = profile_for(ollama_report, ollama_report.models[0])
    assert profile.model == "ollama_chat/llama3.1:8b"
    assert profile.api_bases == [f"http://127.0.0.1:{ollama}"]
    assert "this computer" in profile.name
    other = profile_for(llamacpp_report, llamacpp_report.models[0])
    assert other.model == "openai/qwen2.5-7b-instruct-q4_k_m.gguf"
    assert other.api_bases == [f"http://127.0.0.1:{llamacpp}/v1"]
    assert other.context_window == 32768


def test_nothing_listening_is_reported_as_not_found_quickly():
    with serve(json_routes({})) as port:
        pass  # the port is closed again: nothing answers there
    [report] = _find([Candidate("openai", port, "LM Studio")], timeout_s=0.5)
    assert not report.found and report.models == [] and report.problem == ""


def test_something_else_on_the_port_is_explained():
    with serve(json_routes({"/": {"hello": 1}})) as port:
        [report] = _find([Candidate("ollama", port, "Ollama")])
    assert not report.found
    assert f"port {port}" in report.problem and "Ollama" in report.problem


def test_only_this_computer_is_ever_asked():
    for host in ("192.168.1.10", "10.0.0.2", "example.org", "8.8.8.8"):
        with pytest.raises(ValueError, match="only looks for servers on this computer"):
            _find([Candidate("ollama", 11434, "Ollama")], host=host)


def test_a_proxy_in_the_environment_is_not_used(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing there: would fail
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    with serve(json_routes({"/api/tags": OLLAMA_TAGS})) as port:
        [report] = _find([Candidate("ollama", port, "Ollama")])
    assert report.found
