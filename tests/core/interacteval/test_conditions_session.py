"""InteractEval's conditions in a project (``session.conditions.run_conditions`` / ``load_conditions``,
the one route of the wizard and ``evaldesk checklist compare``): each condition is built and
scored, kept per condition, read back after reopening without a call, and an unchanged
condition re-runs with zero calls. The single-judge baseline's replies are validated."""

from __future__ import annotations

import asyncio

import pytest

from core.interacteval import Attribute, Dimension, ScoredSample, TextItem
from core.interacteval import conditions as cd
from core.interacteval.session import conditions as ie_conditions
from core.interacteval.session.choices import InteractEvalChoices
from core.llm import gateway_for
from core.project import Project
from tests.core.interacteval_support import BUILD_REPLIES
from tests.core.repeat_support import RepeatSpy

DIM = Dimension(name="Coherence", definition="How well the text hangs together.")


def _reply(messages):
    prompt = "\n".join(m["content"] for m in messages)
    for key, value in BUILD_REPLIES.items():
        if key in prompt:
            return value
    if "The questions:" in prompt:
        good = "good" in prompt.split("The text:")[1]
        return {"q1": "yes", "q2": "yes" if good else "no", "q3": "yes" if good else "no"}
    if "Evaluation steps:" in prompt:
        good = "good" in prompt.split("The text:")[1]
        return {"reasons": "The ideas follow on in this one.", "score": 5 if good else 2}
    raise AssertionError(prompt[:200])


def _state() -> InteractEvalChoices:
    samples = [ScoredSample(source=f"Article {i}", text=f"Sample {i}.", score=s)
               for i, s in enumerate([1.0, 2.0, 4.0, 5.0])]
    return InteractEvalChoices(
        dimensions=[DIM], current=DIM.name, samples=samples, chosen={DIM.name: [0, 1, 2, 3]},
        assessors=["Thinker"], builder="Thinker",
        notes={DIM.name: [Attribute(text="Pronouns point somewhere clear.", source="Anna",
                                    source_kind="person")]})


def _items() -> list[TextItem]:
    return [TextItem(id=f"{d}-{k}", text=f"A {'good' if k % 2 else 'weak'} text {k} of {d}.",
                     source=f"Article {d}", source_id=d, human={DIM.name: 4.0 if k % 2 else 2.0})
            for d in ("d1", "d2") for k in range(3)]


def _run(project, llm, names, items):
    profile = llm.profile()
    models = ie_conditions.ConditionModels(assessors={"Thinker": profile.model},
                                     builder=profile.model, scorer=profile.model)
    gateway = gateway_for(profile, project)
    return models, asyncio.run(ie_conditions.run_conditions(
        project, _state(), names, items, models, assessors={"Thinker": gateway},
        builder=gateway, scorer_for_run=lambda run_id: gateway_for(profile, project, run_id)))


def test_conditions_are_kept_reopened_without_calls_and_rerun_for_free(
        tmp_path, scripted_llm):
    llm = scripted_llm(_reply)
    items = _items()
    names = ["human", "ai", "combined", "single-judge"]
    path = tmp_path / "c.evaldesk"
    with Project.create(path) as project:
        models, runs = _run(project, llm, names, items)
        assert list(runs) == names
        for name in names:
            run = runs[name]
            assert run.complete and not run.problems
            assert len(run.scores) == len(items)
            assert {s.score for s in run.scores} == ({5.0, 2.0} if name == "single-judge"
                                                     else {5.0, 1 + 4 / 3})
        assert runs["single-judge"].checklists == []
        assert runs["human"].checklists[0].items  # the condition's own checklist
        # the people's note reached the human and combined builds only
        built = [r.prompt for r in llm.requests if "Which components of" in r.prompt]
        assert sum("Pronouns point" in p for p in built) == 2
        calls = len(llm.requests)

    with Project.open(path) as project:
        state = _state()
        kept = ie_conditions.load_conditions(project, state, names, items, models)
        assert {n: [s.score for s in r.scores] for n, r in kept.items()} == {
            n: [s.score for s in r.scores] for n, r in runs.items()}
        assert len(llm.requests) == calls  # reading them back asks nothing
        _models, again = _run(project, llm, names, items)
        assert len(llm.requests) == calls  # an unchanged condition makes no call
        assert all(r.complete for r in again.values())
        est = ie_conditions.estimate_conditions(project, state, names, items, models,
                                          {"Thinker": llm.profile()})
        assert est.calls_max == 0
        rows = cd.comparison_rows({n: r.scores for n, r in kept.items()}, items, n_boot=0)
        assert [r["condition"] for r in rows] == [*(cd.CONDITIONS[n] for n in names),
                                                  cd.LENGTH]


def test_a_changed_note_makes_only_the_conditions_that_use_notes_missing(
        tmp_path, scripted_llm):
    llm = scripted_llm(_reply)
    items = _items()
    with Project.create(tmp_path / "n.evaldesk") as project:
        models, _runs = _run(project, llm, ["human", "ai", "combined"], items)
        state = _state()
        state.notes[DIM.name].append(Attribute(text="No jumps.", source="Ben",
                                               source_kind="person"))
        kept = ie_conditions.load_conditions(project, state, ["human", "ai", "combined"], items,
                                       models)
        assert list(kept) == ["ai"]


def test_the_estimate_counts_build_and_scoring_calls_before_a_run(tmp_path, scripted_llm):
    llm = scripted_llm(_reply)
    items = _items()
    profile = llm.profile()
    models = ie_conditions.ConditionModels(assessors={"Thinker": profile.model},
                                     builder=profile.model, scorer=profile.model)
    with Project.create(tmp_path / "e.evaldesk") as project:
        est = ie_conditions.estimate_conditions(project, _state(), ["human", "ai", "single-judge"],
                                          items, models, {"Thinker": profile})
    # think-aloud once, 5 construction calls per checklist, one scoring call per text (at
    # most 2) per checklist, one single-judge call per text
    assert est.calls == 1 + 2 * 5 + 2 * 6 + 6
    assert est.calls_max == est.calls + 2 * 6
    assert any("think-aloud" in s.name for s in est.stages)
    assert "single judge" in " ".join(s.name for s in est.stages)


@pytest.mark.parametrize("reply, kind", [
    ({"reasons": "It reads well.", "score": 7}, None),
    ({"reasons": "", "score": 3}, None),
    ({"reasons": "a few sentences in your own words on what you noticed in this text",
      "score": 4}, "copied_instructions"),
])
def test_a_single_judge_reply_out_of_range_empty_or_copied_is_a_failure(
        tmp_path, scripted_llm, reply, kind):
    from core.interacteval.single_judge import judge_text

    llm = scripted_llm({"Evaluation steps": reply})
    item = _items()[1]
    with Project.create(tmp_path / "j.evaldesk") as project:
        score = asyncio.run(judge_text(DIM, item, gateway_for(llm.profile(), project)))
    assert score.status == "failed" and score.score is None
    assert "single judge failed on text d1-1" in score.note
    if kind:
        assert score.failure_kind == kind
    assert len(llm.requests) == 2  # asked once more with the problem


def test_the_single_judge_prompt_carries_the_definition_and_the_text(tmp_path, scripted_llm):
    from core.interacteval.single_judge import judge_text

    llm = scripted_llm(_reply)
    item = _items()[1]
    with Project.create(tmp_path / "p.evaldesk") as project:
        score = asyncio.run(judge_text(DIM, item, gateway_for(llm.profile(), project)))
    assert score.status == "ok" and score.score == 5.0
    assert score.note == "The ideas follow on in this one."
    prompt = llm.requests[0].prompt
    assert DIM.definition in prompt and item.text in prompt and "Article d1" in prompt


def test_think_aloud_samples_are_left_out_of_the_comparison():
    from core.interacteval import TextScore

    items = _items()
    def scores(flag_first: bool):
        return [TextScore(text_id=i.id, dimension=DIM.name, status="ok",
                          score=(5.0 if k == 0 else i.human[DIM.name]),
                          think_aloud_sample=flag_first and k == 0)
                for k, i in enumerate(items)]

    kept = cd.comparison_rows({"combined": scores(False)}, items, n_boot=0)[0]
    left_out = cd.comparison_rows({"combined": scores(True)}, items, n_boot=0)[0]
    # the first text (scored against its human score) counts only when it is not a sample
    assert left_out["value"] == pytest.approx(1.0)
    assert kept["value"] < 1.0


def test_a_condition_that_could_not_be_built_says_why_after_reopening(tmp_path, scripted_llm):
    llm = scripted_llm(_reply)
    items = _items()
    path = tmp_path / "p.evaldesk"
    profile = llm.profile()
    models = ie_conditions.ConditionModels(assessors={"Thinker": profile.model},
                                     builder=profile.model, scorer=profile.model)
    state = _state()
    state.notes = {}
    with Project.create(path) as project:
        gateway = gateway_for(profile, project)
        runs = asyncio.run(ie_conditions.run_conditions(
            project, state, ["human"], items, models, assessors={"Thinker": gateway},
            builder=gateway, scorer_for_run=lambda run_id: gateway))
        assert runs["human"].scores == [] and not runs["human"].complete
        assert "no people's notes" in runs["human"].problems[0]
    with Project.open(path) as project:
        kept = ie_conditions.load_conditions(project, state, ["human"], items, models)
        assert "no people's notes" in kept["human"].problems[0]


def _run_repeats(project, llm, names, items, repeats, seen):
    profile = llm.profile()
    models = ie_conditions.ConditionModels(assessors={"Thinker": profile.model},
                                     builder=profile.model, scorer=profile.model)
    gateway = gateway_for(profile, project)
    return models, asyncio.run(ie_conditions.run_conditions(
        project, _state(), names, items, models, assessors={"Thinker": gateway},
        builder=gateway, repeats=repeats,
        scorer_for_run=lambda run_id: RepeatSpy(gateway_for(profile, project, run_id), seen)))


def _asked(llm, what):
    return sum(what in r.prompt for r in llm.requests)


def test_conditions_repeated_are_real_calls_kept_reopened_and_free_to_run_again(
        tmp_path, scripted_llm):
    llm = scripted_llm(_reply)
    items = _items()
    names = ["human", "combined", "single-judge"]
    path = tmp_path / "r.evaldesk"
    seen: list[int] = []
    profile = llm.profile()
    with Project.create(path) as project:
        models = ie_conditions.ConditionModels(assessors={"Thinker": profile.model},
                                         builder=profile.model, scorer=profile.model)
        once = ie_conditions.estimate_conditions(project, _state(), names, items, models,
                                           {"Thinker": profile})
        thrice = ie_conditions.estimate_conditions(project, _state(), names, items, models,
                                             {"Thinker": profile}, repeats=3)
        # the scoring and single-judge calls x 3, the checklists built once
        scoring = 2 * len(items) + len(items)
        assert thrice.calls == once.calls + 2 * scoring
        assert any("(repeat 2)" in s.name for s in thrice.stages)
        models, runs = _run_repeats(project, llm, names, items, 3, seen)
        # what comes back is repeat 0's
        assert all(r.complete for r in runs.values())
        assert {s.score for s in runs["single-judge"].scores} == {5.0, 2.0}
        assert _asked(llm, "Which components of") == 2  # built once per checklist condition
        # the scripted builds give both conditions the same checklist (so one scoring run
        # serves both), but each repeat is asked anew
        assert _asked(llm, "The questions:") == 3 * len(items)
        assert _asked(llm, "Evaluation steps:") == 3 * len(items)
        assert sorted(set(seen)) == [0, 1, 2]
        assert seen.count(0) == seen.count(1) == seen.count(2) == 2 * len(items)
        calls = len(llm.requests)
        _models, _again = _run_repeats(project, llm, names, items, 3, seen)
        assert len(llm.requests) == calls  # finished repeats make no call
        assert ie_conditions.estimate_conditions(project, _state(), names, items, models,
                                           {"Thinker": profile}, repeats=3).calls_max == 0

    with Project.open(path) as project:
        kept = ie_conditions.load_condition_repeats(project, _state(), names, items, models, 3)
        assert len(llm.requests) == calls  # reopening asks nothing
        assert {n: len(r) for n, r in kept.items()} == {n: 3 for n in names}
        assert [s.score for s in kept["human"][0].scores] == [
            s.score for s in runs["human"].scores]
        assert len({r.run_id for r in kept["single-judge"]}) == 3
        entries = ie_conditions.condition_stability(kept)
        assert [(c, d) for c, d, _ in entries] == [(cd.CONDITIONS[n], DIM.name) for n in names]
        assert all(s.n_repeats == 3 and s.alpha.value == pytest.approx(1.0)
                   for _, _, s in entries)
        lines = ie_conditions.condition_stability_lines(entries)
        assert lines[-1].startswith("The single judge gives much the same scores")
        assert cd.CONDITIONS["human"] in lines[0]
        # asking for more repeats than were run: as far as they go
        assert {n: len(r) for n, r in ie_conditions.load_condition_repeats(
            project, _state(), names, items, models, 5).items()} == {n: 3 for n in names}
        assert ie_conditions.estimate_conditions(project, _state(), names, items, models,
                                           {"Thinker": profile}, repeats=4).calls == scoring


def test_one_stability_line_per_condition_names_the_flagged_dimensions():
    from core.stats import repeat_stability

    steady = repeat_stability({"a": [1, 1], "b": [3, 3], "c": [5, 5]}, who="the single judge",
                              unit_name="text")
    shaky = repeat_stability({"a": [1, 5], "b": [5, 1], "c": [3, 2]}, who="the single judge",
                             unit_name="text")
    label = cd.CONDITIONS["single-judge"]
    lines = ie_conditions.condition_stability_lines([(label, "Clarity", steady),
                                               (label, "Accuracy", shaky)])
    assert len(lines) == 1
    assert lines[0].startswith("The single judge gives different scores when asked again on "
                               "Accuracy (agreement between repeats: Clarity 1.00; Accuracy ")
    assert lines[0].endswith("treat single scores with care.")
    assert ie_conditions.condition_stability_lines([(label, "Clarity", steady)]) == [steady.sentence]
    # too few texts scored in every repeat: said, naming whose repeats
    lonely = repeat_stability({"a": [2, 2, 2], "b": [None, None, 4]}, who="the single judge",
                              unit_name="text")
    line, = ie_conditions.condition_stability_lines([(label, "Clarity", lonely)])
    assert line.startswith("How alike the 3 repeats of the single judge are cannot be said: ")
