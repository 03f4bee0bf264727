"""What the InteractEval session keeps in a project: the wizard state, the texts file, the
checklists and every scored text (committed as it finishes, so resuming after a cancel repeats no
call)."""

from __future__ import annotations

import re

import pytest

from core.interacteval import (
    Checklist,
    ChecklistItem,
    ScoringSettings,
    TextItem,
)
from core.interacteval.inputs import TextsSetup
from core.interacteval.model import Dimension
from core.interacteval.pipeline import RESULT_KIND
from core.interacteval.session import export as ie_export
from core.interacteval.session import scoring, stages
from core.interacteval.session.choices import (
    CHOICES_KIND,
    InteractEvalChoices,
    open_choices,
    open_texts_file,
    save_choices,
    store_texts_file,
)
from core.interacteval.session.stages import load_checklists, save_checklist
from core.project import Project
from core.project.payloads import UNREADABLE_SUFFIX
from core.runs import Cancelled, CancelToken, Progress

from .conftest import FakeLLM, failure


def test_a_state_that_cannot_be_read_is_kept_aside_and_named(tmp_path):
    with Project.create(tmp_path / "s.evaldesk") as project:
        bad = {"dimensions": "not a list", "page": "build"}
        project.put_artefact(CHOICES_KIND, "state", bad, origin="human")

        state, problem = open_choices(project)

        assert state == InteractEvalChoices()
        assert "InteractEval choices" in problem and "kept in the project" in problem
        (kept,) = project.list_artefacts(CHOICES_KIND + UNREADABLE_SUFFIX)
        assert kept.payload == bad  # the original is not saved over
        save_choices(project, state)
        assert project.list_artefacts(CHOICES_KIND + UNREADABLE_SUFFIX)[0].payload == bad


def test_a_state_saved_by_a_newer_evaldesk_is_not_replaced(tmp_path):
    with Project.create(tmp_path / "n.evaldesk") as project:
        newer = {**InteractEvalChoices(dimensions=[Dimension(name="Clarity")]).model_dump(mode="json"),
                 "_payload_version": 99}
        project.put_artefact(CHOICES_KIND, "state", newer, origin="human")
        state, problem = open_choices(project)
        assert state.dimensions == [] and "newer EvalDesk" in problem
        (kept,) = project.list_artefacts(CHOICES_KIND + UNREADABLE_SUFFIX)
        assert kept.payload == newer


def test_a_state_saved_before_versions_still_opens(tmp_path):
    with Project.create(tmp_path / "o.evaldesk") as project:
        old = InteractEvalChoices(dimensions=[Dimension(name="Clarity")], current="Clarity")
        project.put_artefact(CHOICES_KIND, "state", old.model_dump(mode="json"), origin="human")
        state, problem = open_choices(project)
        assert problem == "" and state == old


def test_a_texts_file_that_is_gone_is_read_from_the_project_without_new_temp_folders(tmp_path):
    texts = tmp_path / "texts.csv"
    texts.write_text("text\nhello\n", encoding="utf-8")
    with Project.create(tmp_path / "t.evaldesk") as project:
        setup = store_texts_file(project, TextsSetup(), texts)
        texts.unlink()
        first, _setup, note = open_texts_file(project, setup)
        again, _setup, _note = open_texts_file(project, setup)
        assert first == again and first.read_text(encoding="utf-8") == "text\nhello\n"
        assert "copy saved in the project" in note


# ------------------------------------------------------------------- scoring kept in a project
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
        fenced = prompt.split("The text:\n")[1].split("\n")[0]  # <text-CODE>…</text-CODE>
        asked.append(re.sub(r"</?text-[0-9a-f]+>", "", fenced))
        if len(asked) == 3:
            cancel.cancel()  # the user presses Cancel while the third answer comes in
        return _reply_by_text(messages, schema)

    llm = FakeLLM(reply)
    items = _items()
    with Project.create(tmp_path / "p.evaldesk", method="interacteval") as project:
        with pytest.raises(Cancelled):
            await scoring.score_texts([checklist], items, llm, model="fake", project=project,
                              cancel=cancel)
        (run,) = project.list_runs("interacteval", "score")
        assert run.status == "cancelled"
        committed = project.get_results(run.id, RESULT_KIND)
        assert len(committed) == 3 and len(asked) == 3

        states = []
        result = await scoring.score_texts([checklist], items, llm, model="fake", project=project,
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
        first = await scoring.score_texts([checklist], items, llm, model="fake", project=project)
        same = await scoring.score_texts([checklist], items, llm, model="fake", project=project)
        assert len(llm.calls) == 2 and same.reused == 2 and same.run_id == first.run_id
        legacy = await scoring.score_texts([checklist], items, llm, model="fake", project=project,
                                   settings=ScoringSettings(counting="legacy"))
        assert legacy.run_id != first.run_id and len(llm.calls) == 4
        edited = checklist.model_copy(deep=True)
        edited.items[0].question = "Does it flow well?"
        again = await scoring.score_texts([edited], items, llm, model="fake", project=project)
        assert again.run_id not in (first.run_id, legacy.run_id) and len(llm.calls) == 6


async def test_failed_texts_are_retried_on_resume(tmp_path, checklist):
    from core.project import Project

    replies = [failure("The server had an error.", "server"), {"q1": "yes", "q2": "yes"}]
    llm = FakeLLM({"ChecklistAnswers": replies})
    items = _items(1)
    with Project.create(tmp_path / "p.evaldesk") as project:
        first = await scoring.score_texts([checklist], items, llm, project=project)
        assert first.scores[0].status == "failed"
        (stored,) = project.get_results(first.run_id, RESULT_KIND)
        assert stored.status == "failed" and "server" in stored.error
        second = await scoring.score_texts([checklist], items, llm, project=project)
    assert second.scores[0].status == "ok" and second.scores[0].score == 5.0


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
        run_id = scoring.open_scoring_run(project, [checklist], settings, profile.model)
        gateway = Gateway(profile, cache=project, run_id=run_id)
        with pytest.raises(Cancelled):
            await scoring.score_texts([checklist], items, gateway, settings=settings,
                              model=profile.model, project=project, run_id=run_id,
                              progress=Progress(listener), cancel=cancel)
        finished = {r.payload["text_id"] for r in project.get_results(run_id, RESULT_KIND)}
        assert len(finished) == 2
        before = llm.calls

        run_id = scoring.open_scoring_run(project, [checklist], settings, profile.model)
        gateway = Gateway(profile, cache=project, run_id=run_id)
        result = await scoring.score_texts([checklist], items, gateway, settings=settings,
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
        run = await scoring.score_texts([with_samples, other], items, llm, project=project)
        flags = {(s.dimension, s.text_id): s.think_aloud_sample for s in run.scores}
        assert flags[("Coherence", "t1")] is True
        assert sum(flags.values()) == 1  # not t0/t2, and not t1 on Fluency (not its sample)
        stored = {r.payload["text_id"]: r.payload["think_aloud_sample"]
                  for r in project.get_results(run.run_id, RESULT_KIND)
                  if r.payload["dimension"] == "Coherence"}
        assert stored == {"t0": False, "t1": True, "t2": False}
        # samples given for the run (the wizard's choice) take the place of the checklist's
        again = await scoring.score_texts([with_samples, other], items, llm, project=project,
                                  samples={"Coherence": ["Text number 2."]})
        assert [s.text_id for s in again.scores if s.think_aloud_sample] == ["t2"]
        assert again.run_id != run.run_id  # other samples: another run


async def test_scores_kept_under_the_keys_of_earlier_versions_are_reused(tmp_path, checklist):
    """Scored texts were keyed as a JSON list [dimension, text id, hash of text and source]
    before the one keying scheme (core.runs.unit_key); that is the same string, so a run
    started by an earlier EvalDesk resumes without asking again (no migration needed)."""
    import hashlib
    import json

    item = _items(1)[0]
    digest = hashlib.sha256(json.dumps([item.text, item.source], ensure_ascii=False)
                            .encode("utf-8")).hexdigest()[:12]
    old_key = json.dumps([checklist.dimension, item.id, digest], ensure_ascii=False)
    llm = FakeLLM(_reply_by_text)
    with Project.create(tmp_path / "k.evaldesk") as project:
        run_id = scoring.open_scoring_run(project, [checklist], ScoringSettings(), "fake")
        kept = {"text_id": item.id, "dimension": checklist.dimension, "status": "ok",
                "score": 4.0, "answered": 2, "questions": 2}
        project.put_result(run_id, RESULT_KIND, old_key, kept)
        run = await scoring.score_texts([checklist], [item], llm, project=project,
                                        model="fake", run_id=run_id)
    assert llm.calls == [] and run.reused == 1 and run.scores[0].score == 4.0


def test_a_deleted_question_is_named_in_the_exports(tmp_path):
    """Issue 28, point 13: a question deleted in the checklist editor was nowhere in the
    export. The results workbook and the checklist workbook name it, with who and when; a
    reworded question is not taken for a deleted one."""
    import pandas as pd

    from core.interacteval import Checklist, ChecklistItem, ScoringSettings, TextScore
    from core.interacteval.pipeline import ScoringRun
    from core.project import Project

    with Project.create(tmp_path / "p.evaldesk") as project:
        made = Checklist(dimension="Word choice", items=[
            ChecklistItem(question="Are the words precise?"),
            ChecklistItem(question="Is the vocabulary varied?"),
            ChecklistItem(question="Does it avoid slang?")])
        stages.save_checklist(project, made)
        reworded = made.model_copy(deep=True)
        reworded.items[0].question = "Are the words exact?"
        stages.edit_checklist(project, reworded, who="Anna")
        fewer = reworded.model_copy(update={"items": reworded.items[:2]}, deep=True)
        stages.edit_checklist(project, fewer, who="Anna")
        gone = stages.deleted_questions(project, "Word choice")
        assert [(q, who) for q, who, _ in gone] == [("Does it avoid slang?", "Anna")]

        state = InteractEvalChoices(dimensions=[Dimension(name="Word choice")])
        ie_export.export_checklists(project, state, tmp_path / "lists.xlsx")
        text = pd.read_excel(tmp_path / "lists.xlsx", sheet_name="Read me",
                             header=None).to_string()
        assert "questions deleted" in text and "Does it avoid slang?" in text

        run = ScoringRun(scores=[TextScore(text_id="e1", dimension="Word choice", status="ok",
                                           score=3.0)],
                         settings=ScoringSettings(), model="m", checklists=[fewer])
        ie_export.export_results(project, run, tmp_path / "results.xlsx")
        results = pd.read_excel(tmp_path / "results.xlsx", sheet_name="Read me",
                                header=None).to_string()
        assert "Does it avoid slang?" in results and "by Anna" in results
        assert "Are the words precise?" not in results  # reworded, not deleted
