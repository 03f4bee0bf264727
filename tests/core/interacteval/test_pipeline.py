"""The stages in a row through the real gateway (scripted model), and scoring with a project:
every scored text committed as it finishes, so resuming after a cancel repeats no call."""

from __future__ import annotations

import pytest

from core.interacteval import (
    Attribute,
    Checklist,
    ChecklistItem,
    ScoringSettings,
    StageError,
    TextItem,
    build_checklist,
    load_checklists,
    save_checklist,
    score_texts,
    session,
)
from core.interacteval.pipeline import RESULT_KIND
from core.runs import Cancelled, CancelToken, Progress
from tests.core.interacteval_support import BUILD_REPLIES

from .conftest import FakeLLM, failure


@pytest.fixture
def scripted():
    from core.llm import ScriptedLLM

    made = []

    def make(replies, **kw):
        llm = ScriptedLLM(replies, name=f"ie-pipeline-{len(made)}", **kw)
        made.append(llm)
        return llm

    yield make
    for llm in made:
        llm.close()


async def test_build_checklist_through_the_gateway(scripted, coherence, samples):
    from core.llm import Gateway, MemoryCache

    llm = scripted(BUILD_REPLIES)
    cache = MemoryCache()
    gateway = Gateway(llm.profile(), cache=cache)
    notes = [Attribute(text="No jumps between topics.", source="Anna", source_kind="person")]
    states = []
    build = await build_checklist(coherence, samples, assessors={"Scripted": gateway},
                                  builder=gateway, notes=notes, progress=Progress(states.append))
    assert llm.calls == 6  # think-aloud + five construction steps
    assert [a.source for a in build.attributes] == ["Scripted", "Scripted", "Anna"]
    assert build.components == ["Logical flow", "Structure"]
    checklist = build.checklist
    assert checklist.questions == ["Does each sentence follow from the last?",
                                   "Are transitions between ideas clear?",
                                   "Is there a clear beginning and end?"]
    first = checklist.items[0]
    assert first.component == "Logical flow"
    assert first.key_question == "Do the ideas follow logically?"
    assert {a.source for a in first.source_attributes} == {"Scripted", "Anna"}
    assert "No jumps between topics." in llm.prompts[1]  # people's notes reach the extraction
    assert {s.stage for s in states} >= {"Think-aloud on Coherence",
                                         "Reviewing the questions of Coherence"}
    # the same build again is answered from the cache: no new call
    again = await build_checklist(coherence, samples, assessors={"Scripted": gateway},
                                  builder=gateway, notes=notes)
    assert llm.calls == 6
    assert again.checklist == checklist


async def test_build_without_any_attribute_fails_plainly(coherence, samples):
    bad = FakeLLM({"Considerations": failure("Wrong API key.", "auth")})
    with pytest.raises(StageError) as err:
        await build_checklist(coherence, samples, assessors={"Bad": bad}, builder=bad)
    assert "Wrong API key." in str(err.value) and "Coherence" in str(err.value)


async def test_build_with_notes_only_and_no_validation(coherence, samples, attributes):
    llm = FakeLLM({
        "Components": {"components": ["Flow"]},
        "Clusters": {"clusters": [{"component": "Flow", "notes": [1, 2, 3, 4, 5]}]},
        "KeyQuestions": {"key_questions": [{"component": "Flow", "question": "Flows?"}]},
        "SubQuestions": {"groups": [{"component": "Flow", "sub_questions": ["A?", "B?"]}]},
    })
    build = await build_checklist(coherence, samples, assessors={}, builder=llm,
                                  notes=attributes, validate=False)
    assert build.checklist.questions == ["A?", "B?"]
    assert not build.validated
    assert [c[1].__name__ for c in llm.calls] == ["Components", "Clusters", "KeyQuestions",
                                                  "SubQuestions"]


# ---------------------------------------------------------------------------------- scoring
@pytest.fixture
def checklist() -> Checklist:
    return Checklist(dimension="Coherence", definition="Hangs together.", items=[
        ChecklistItem(component="Flow", question="Does it flow?"),
        ChecklistItem(component="Flow", question="Is it organised?")])


def _items(n=6):
    return [TextItem(id=f"t{i}", text=f"Text number {i}.", source="Article", source_id="d1",
                     human={"Coherence": float(i % 5 + 1)}) for i in range(n)]


def _reply_by_text(messages, schema):
    prompt = messages[-1]["content"]
    number = int(prompt.split("Text number ")[1].split(".")[0])
    return {"q1": "yes" if number % 2 else "no", "q2": "yes"}


async def test_scoring_commits_each_text_and_resume_after_cancel_repeats_nothing(
    tmp_path, checklist
):
    from core.project import Project

    cancel = CancelToken()
    asked: list[str] = []

    def reply(messages, schema):
        prompt = messages[-1]["content"]
        asked.append(prompt.split("The text:\n")[1].split("\n")[0])
        if len(asked) == 3:
            cancel.cancel()  # the user presses Cancel while the third answer comes in
        return _reply_by_text(messages, schema)

    llm = FakeLLM(reply)
    items = _items()
    with Project.create(tmp_path / "p.evaldesk", method="interacteval") as project:
        with pytest.raises(Cancelled):
            await session.score_texts([checklist], items, llm, model="fake", project=project,
                              cancel=cancel)
        (run,) = project.list_runs("interacteval", "score")
        assert run.status == "cancelled"
        committed = project.get_results(run.id, RESULT_KIND)
        assert len(committed) == 3 and len(asked) == 3

        states = []
        result = await session.score_texts([checklist], items, llm, model="fake", project=project,
                                   progress=Progress(states.append))
    assert len(asked) == 6
    assert sorted(asked) == sorted(i.text for i in items)  # every text asked exactly once
    assert result.reused == 3
    assert [s.text_id for s in result.scores] == [i.id for i in items]
    assert all(s.status == "ok" for s in result.scores)
    assert [s.score for s in result.scores] == [3.0, 5.0, 3.0, 5.0, 3.0, 5.0]
    assert states[-1].done == 6 and states[-1].total == 6
    assert result.run_id == run.id


async def test_changed_settings_or_checklist_start_a_new_run(tmp_path, checklist):
    from core.project import Project

    llm = FakeLLM(_reply_by_text)
    items = _items(2)
    with Project.create(tmp_path / "p.evaldesk") as project:
        first = await session.score_texts([checklist], items, llm, model="fake", project=project)
        same = await session.score_texts([checklist], items, llm, model="fake", project=project)
        assert len(llm.calls) == 2 and same.reused == 2 and same.run_id == first.run_id
        legacy = await session.score_texts([checklist], items, llm, model="fake", project=project,
                                   settings=ScoringSettings(counting="legacy"))
        assert legacy.run_id != first.run_id and len(llm.calls) == 4
        edited = checklist.model_copy(deep=True)
        edited.items[0].question = "Does it flow well?"
        again = await session.score_texts([edited], items, llm, model="fake", project=project)
        assert again.run_id not in (first.run_id, legacy.run_id) and len(llm.calls) == 6


async def test_failed_texts_are_retried_on_resume(tmp_path, checklist):
    from core.project import Project

    replies = [failure("The server had an error.", "server"), {"q1": "yes", "q2": "yes"}]
    llm = FakeLLM({"ChecklistAnswers": replies})
    items = _items(1)
    with Project.create(tmp_path / "p.evaldesk") as project:
        first = await session.score_texts([checklist], items, llm, project=project)
        assert first.scores[0].status == "failed"
        (stored,) = project.get_results(first.run_id, RESULT_KIND)
        assert stored.status == "failed" and "server" in stored.error
        second = await session.score_texts([checklist], items, llm, project=project)
    assert second.scores[0].status == "ok" and second.scores[0].score == 5.0


async def test_duplicate_text_ids_are_refused(checklist):
    items = [TextItem(id="x", text="a"), TextItem(id="x", text="b")]
    with pytest.raises(ValueError, match="x"):
        await score_texts([checklist], items, FakeLLM({}))


async def test_checklist_artefact_round_trip(tmp_path, checklist):
    from core.project import Project

    with Project.create(tmp_path / "p.evaldesk") as project:
        save_checklist(project, checklist)
        project.record_edit(("interacteval.checklist", "Coherence"), "items.1.question",
                            "Is it organised?", "Is it well organised?", who="Ben")
        (loaded,) = load_checklists(project)
        assert loaded.items[1].question == "Is it well organised?"
        assert project.get_artefact("interacteval.checklist", "Coherence").edited


async def test_cancel_and_resume_through_the_gateway(tmp_path, scripted, checklist):
    """The real path: gateway with the project as cache, one call at a time, Cancel pressed
    after two texts are scored. The resumed run asks only for the texts not yet scored."""
    from core.interacteval import open_scoring_run
    from core.llm import Gateway
    from core.project import Project

    llm = scripted(lambda messages: _reply_by_text(messages, None), delay_s=0.02)
    profile = llm.profile(max_concurrency=1)
    items = _items(5)
    settings = ScoringSettings()
    cancel = CancelToken()

    def listener(state):
        if state.done >= 2:
            cancel.cancel()

    with Project.create(tmp_path / "p.evaldesk") as project:
        run_id = open_scoring_run(project, [checklist], settings, profile.model)
        gateway = Gateway(profile, cache=project, run_id=run_id)
        with pytest.raises(Cancelled):
            await session.score_texts([checklist], items, gateway, settings=settings,
                              model=profile.model, project=project, run_id=run_id,
                              progress=Progress(listener), cancel=cancel)
        finished = {r.payload["text_id"] for r in project.get_results(run_id, RESULT_KIND)}
        assert len(finished) == 2
        before = llm.calls

        run_id = open_scoring_run(project, [checklist], settings, profile.model)
        gateway = Gateway(profile, cache=project, run_id=run_id)
        result = await session.score_texts([checklist], items, gateway, settings=settings,
                                   model=profile.model, project=project, run_id=run_id)
    assert result.reused == 2
    assert all(s.status == "ok" for s in result.scores)
    asked = [p.split("Text number ")[1].split(".")[0] for p in llm.prompts]
    for text_id in finished:  # a text scored before the cancel was never asked again
        assert asked.count(text_id.removeprefix("t")) == 1
    assert llm.calls - before <= 3  # the three missing texts (one may have been in flight)
    assert gateway.usage.calls == llm.calls - before


async def test_a_text_that_is_a_think_aloud_sample_is_flagged(tmp_path, checklist):
    """The same text as one of the dimension's think-aloud samples (case and spacing aside) is
    scored and flagged; the flag is stored, and comes back with a resumed run."""
    from core.interacteval import ScoredSample
    from core.project import Project

    items = _items(3)
    with_samples = checklist.model_copy(update={"samples": [
        ScoredSample(text="  text NUMBER 1. ", score=4.0),
        ScoredSample(text="A sample that is not scored.", score=1.0)]})
    other = Checklist(dimension="Fluency", items=[ChecklistItem(question="Fluent?")])
    llm = FakeLLM(lambda messages, schema: {"q1": "yes", "q2": "yes"})
    with Project.create(tmp_path / "p.evaldesk") as project:
        run = await session.score_texts([with_samples, other], items, llm, project=project)
        flags = {(s.dimension, s.text_id): s.think_aloud_sample for s in run.scores}
        assert flags[("Coherence", "t1")] is True
        assert sum(flags.values()) == 1  # not t0/t2, and not t1 on Fluency (not its sample)
        stored = {r.payload["text_id"]: r.payload["think_aloud_sample"]
                  for r in project.get_results(run.run_id, RESULT_KIND)
                  if r.payload["dimension"] == "Coherence"}
        assert stored == {"t0": False, "t1": True, "t2": False}
        # samples given for the run (the wizard's choice) take the place of the checklist's
        again = await session.score_texts([with_samples, other], items, llm, project=project,
                                  samples={"Coherence": ["Text number 2."]})
        assert [s.text_id for s in again.scores if s.think_aloud_sample] == ["t2"]
        assert again.run_id != run.run_id  # other samples: another run
