"""Where a profile sends texts, and the per-project rule for the cloud notice."""

from __future__ import annotations

import pytest

from core.privacy import destination, needs_cloud_notice, remember_cloud_notice
from core.project import Project
from core.settings import ModelProfile, bundled_profile


def _profile(model, *bases, **kw):
    return ModelProfile(name=kw.pop("name", "p"), model=model, api_bases=list(bases), **kw)


@pytest.mark.parametrize("profile, kind, words", [
    (bundled_profile(), "this_computer", "demo model for trying the app"),
    (_profile("evaldesk-local/qwen", gguf_path="/m/q.gguf"), "this_computer",
     "your texts do not leave it"),
    (_profile("ollama_chat/llama3.1", "http://127.0.0.1:11434"), "this_computer",
     "your texts do not leave it"),
    (_profile("ollama/llama3.1"), "this_computer", "do not leave it"),
    (_profile("openai/qwen", "http://localhost:1234/v1"), "this_computer", "do not leave it"),
    (_profile("openai/qwen", "http://[::1]:8000/v1"), "this_computer", "do not leave it"),
    (_profile("openai/gpt-4o-mini"), "cloud", "Sent to OpenAI"),
    (_profile("anthropic/claude-sonnet-4-5"), "cloud", "Sent to Anthropic"),
    (_profile("gemini/gemini-2.0-flash"), "cloud", "Sent to Google"),
    (_profile("hosted_vllm/qwen", "http://10.1.2.3:8000/v1"), "network",
     "Sent to the server at 10.1.2.3 on your network"),
    (_profile("openai/qwen", "http://127.0.0.1:8000/v1", "https://api.together.xyz/v1"),
     "cloud", "Sent to api.together.xyz"),
    (_profile("openai/gpt-4o", "https://api.openai.com/v1"), "cloud", "Sent to OpenAI"),
])
def test_each_profile_says_where_texts_go(profile, kind, words):
    where = destination(profile)
    assert where.kind == kind and words in where.label
    assert where.leaves_computer == (kind != "this_computer")


def test_the_notice_is_asked_once_per_project_and_destination(tmp_path):
    openai = _profile("openai/gpt-4o-mini", name="work")
    claude = _profile("anthropic/claude-sonnet-4-5")
    local = _profile("ollama_chat/llama3.1", "http://127.0.0.1:11434")
    project = Project.create(tmp_path / "a.evaldesk")
    try:
        assert not needs_cloud_notice(project, local)
        assert needs_cloud_notice(project, openai)
        assert remember_cloud_notice(project, openai, "J. Smith")
        assert not needs_cloud_notice(project, openai)
        assert needs_cloud_notice(project, claude)  # another company: asked again
    finally:
        project.close()
    other = Project.create(tmp_path / "b.evaldesk")
    try:
        assert needs_cloud_notice(other, openai)  # per project
    finally:
        other.close()
    reopened = Project.open(tmp_path / "a.evaldesk")
    try:
        assert not needs_cloud_notice(reopened, openai)  # kept in the file
    finally:
        reopened.close()


def test_without_a_project_the_notice_is_always_asked():
    openai = _profile("openai/gpt-4o-mini")
    assert needs_cloud_notice(None, openai)
    assert not remember_cloud_notice(None, openai, "me")


def test_the_scripted_stand_in_model_keeps_texts_on_this_computer():
    from core.llm import ScriptedLLM

    with ScriptedLLM(lambda messages: {}, name="privacy") as llm:
        assert not destination(llm.profile()).leaves_computer
