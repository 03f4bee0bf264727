"""A profile with the same model name but another server, seed, temperature or answer length is
another judge (issue 28, point 5): scoring with it makes calls, and the scores of the first
profile are not shown as current under it. Seen in the app: such a profile made 0 calls and
showed the old scores under the new profile's name.

The judge is a fake OpenAI-compatible server on 127.0.0.1 that answers Yes to every question
of every text."""

from __future__ import annotations

import json
import socket

import pandas as pd
import pytest
from aiohttp import web

from core.interacteval import Checklist, ChecklistItem
from core.interacteval.inputs import TextsSetup, open_texts
from core.interacteval.session import building, scoring, stages
from core.interacteval.session import choices as ie_choices
from core.llm import gateway_for
from core.project import Project
from core.settings import ModelProfile

MODEL = "openai/judge"


class JudgeServer:
    """Answers "yes" to every question it is asked (the keys of the reply's JSON schema)."""

    def __init__(self) -> None:
        self.calls = 0
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> JudgeServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._answer)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _answer(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.calls += 1
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
        content = json.dumps({key: "yes" for key in schema.get("properties", {})})
        return web.json_response({
            "id": "x", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}})


@pytest.fixture
async def servers():
    made = [await JudgeServer().start(), await JudgeServer().start()]
    yield made
    for server in made:
        await server.stop()


def _setup(tmp_path):
    pd.DataFrame({"text": [f"An essay about topic {i}." for i in range(4)],
                  "Word choice": [2, 3, 4, 5]}).to_excel(tmp_path / "texts.xlsx", index=False)
    project = Project.create(tmp_path / "p.evaldesk", method="interacteval")
    state, _ = ie_choices.open_choices(project)
    checklist = Checklist(dimension="Word choice", definition="Precise, varied words.",
                          items=[ChecklistItem(question="Are the words precise?"),
                                 ChecklistItem(question="Is the vocabulary varied?")])
    stages.save_checklist(project, checklist, origin="imported")
    from core.interacteval import Dimension

    state.dimensions = [Dimension(name="Word choice", definition="Precise, varied words.")]
    state.texts = ie_choices.store_texts_file(project, TextsSetup(), tmp_path / "texts.xlsx")
    path, state.texts, _ = ie_choices.open_texts_file(project, state.texts)
    opened = open_texts(path, state.texts, ["Word choice"])
    state.texts = opened.setup
    return project, state, list(opened.read.items)


async def _score(project, state, items, profile):
    plan = scoring.plan_scoring(project, state, items, profile)
    llm = gateway_for(profile, project, plan.run_id)
    run = await scoring.score_texts(plan.checklists, plan.items, llm, project=project,
                                    settings=plan.settings, model=plan.model,
                                    run_id=plan.run_id, samples=plan.samples)
    return run, llm


@pytest.mark.parametrize("change, words", [
    ("server", "the server"), ("seed", "the seed (0 then, 7 now)"),
    ("temperature", "the temperature (0 then, 0.7 now)"),
    ("max_tokens", "the longest answer (1024 tokens then, 2000 now)")])
async def test_the_same_model_with_other_settings_is_asked_and_old_scores_are_not_current(
        tmp_path, servers, change, words):
    first_server, second_server = servers
    first = ModelProfile(name="Judge", model=MODEL, api_bases=[first_server.base])
    update = {"server": {"api_bases": [second_server.base]}, "seed": {"seed": 7},
              "temperature": {"temperature": 0.7}, "max_tokens": {"max_tokens": 2000}}[change]
    second = first.model_copy(update={"name": "Judge, changed", **update})
    project, state, items = _setup(tmp_path)
    with project:
        run, llm = await _score(project, state, items, first)
        assert llm.usage.calls == 4 and all(s.status == "ok" for s in run.scores)
        checklists = stages.all_checklists(project, state)
        shown = scoring.load_run(project, ie_choices.open_choices(project)[0], checklists)
        assert scoring.results_out_of_date(project, state, shown, checklists, first) == []

        stale = scoring.results_out_of_date(project, state, shown, checklists, second)
        assert stale and words in " ".join(stale), stale

        calls_before = first_server.calls + second_server.calls
        again, llm2 = await _score(project, state, items, second)
        assert llm2.usage.calls == 4, "the changed profile must ask its model"
        assert first_server.calls + second_server.calls == calls_before + 4
        assert again.run_id != run.run_id
        assert again.model_settings[{"server": "api_bases"}.get(change, change)] != \
            run.model_settings[{"server": "api_bases"}.get(change, change)]
        reopened = scoring.load_run(project, ie_choices.open_choices(project)[0], checklists)
        assert reopened.run_id == again.run_id
        assert scoring.results_out_of_date(project, state, reopened, checklists, second) == []
        assert scoring.results_out_of_date(project, state, reopened, checklists, first) != []

        # the first profile again: its scores are still in the project, no call is made
        back, llm3 = await _score(project, state, items, first)
        assert llm3.usage.calls == 0 and back.run_id == run.run_id


async def test_an_unchanged_profile_makes_no_call_and_a_renamed_one_neither(tmp_path, servers):
    server = servers[0]
    profile = ModelProfile(name="Judge", model=MODEL, api_bases=[server.base])
    project, state, items = _setup(tmp_path)
    with project:
        run, _ = await _score(project, state, items, profile)
        renamed = profile.model_copy(update={"name": "My judge", "max_concurrency": 2})
        again, llm = await _score(project, state, items, renamed)
        assert llm.usage.calls == 0 and again.run_id == run.run_id
        checklists = stages.all_checklists(project, state)
        assert scoring.results_out_of_date(project, state, again, checklists, renamed) == []


def test_the_results_say_the_model_and_its_settings():
    from core.llm.identity import describe_model, profiles_of

    profile = ModelProfile(name="Judge", model=MODEL, api_bases=["http://127.0.0.1:9/v1"],
                           seed=3, temperature=0.2, max_tokens=700)
    from core.llm.identity import model_fields

    fields = model_fields(profile)
    assert describe_model(fields) == ("openai/judge (on the server http://127.0.0.1:9/v1, "
                                      "temperature 0.2, seed 3, answers of at most 700 tokens)")
    other = profile.model_copy(update={"name": "Other", "seed": 4})
    assert profiles_of([profile, other], fields) == ["Judge"]


async def test_a_build_step_made_by_another_builder_setting_is_not_current(tmp_path):
    """The construction steps' "is this current?" counts the builder's model and settings
    too: the same model with another seed makes the step out of date, and running it asks."""
    from core.interacteval import Attribute, Dimension
    from core.llm import Gateway, MemoryCache, ScriptedLLM
    from tests.core.interacteval_support import BUILD_REPLIES

    with Project.create(tmp_path / "p.evaldesk") as project, \
            ScriptedLLM(BUILD_REPLIES, name="builder-switch") as llm:
        state, _ = ie_choices.open_choices(project)
        state.dimensions = [Dimension(name="Coherence", definition="Hangs together.")]
        state.notes = {"Coherence": [Attribute(text=t, source="Anna", source_kind="person")
                                     for t in ("Ideas follow on.", "Clear order.", "No jumps.")]}
        first = llm.profile(name="A", max_retries=0)
        second = first.model_copy(update={"name": "B", "seed": 7})
        cache = MemoryCache()
        await building.run_build_steps(project, state, "Coherence", ["components"],
                                      Gateway(first, cache=cache))
        stored = stages.get_stage(project, "Coherence", "components")
        assert stored.input == stages.stage_input(project, state, "Coherence", "components",
                                                   first)
        assert stored.input != stages.stage_input(project, state, "Coherence", "components",
                                                   second)
        calls = llm.calls
        await building.run_build_steps(project, state, "Coherence", ["components"],
                                      Gateway(second, cache=cache))
        assert llm.calls == calls + 1  # another seed: asked, not taken from the first's answer
        assert stages.get_stage(project, "Coherence", "components").input == \
            stages.stage_input(project, state, "Coherence", "components", second)


def test_a_key_inside_a_server_address_is_never_recorded():
    from core.llm.identity import describe_model, model_fields

    profile = ModelProfile(name="Gateway", model=MODEL,
                           api_bases=["https://user:sk-secret-123@gw.example/v1?api-key=abc"])
    fields = model_fields(profile)
    assert "sk-secret-123" not in str(fields) and "abc" not in str(fields)
    assert "***" in describe_model(fields)
