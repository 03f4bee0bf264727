"""evaluate() end to end with a scripted panel: results, resume after cancel, alpha, workbook."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from core.majeval import (
    DebateSettings,
    evaluate,
    human_agreement,
    within_group_alpha,
    write_results,
)
from core.runs import Cancelled, CancelToken

from .majeval_support import SYNTHESIS, evaluation, item_of, kind, persona, speaker, turn, units_in

Q = "Overall quality"
PERSONAS = [persona("Teachers", "Ms Amy Lee"), persona("Teachers", "Mr Bo Chen"),
            persona("Parents", "Dana Ray"), persona("Parents", "Eli Stone")]
#: Phase 1 scores by agent and item: they disagree; after the debate everyone has the item's
#: "true" score (sky 2, fox 5).
FIRST = {("Ms Amy Lee", "sky"): 3, ("Mr Bo Chen", "sky"): 1, ("Dana Ray", "sky"): 4,
         ("Eli Stone", "sky"): 2, ("Ms Amy Lee", "fox"): 5, ("Mr Bo Chen", "fox"): 3,
         ("Dana Ray", "fox"): 5, ("Eli Stone", "fox"): 4}
AFTER = {"sky": 2, "fox": 5}


def panel(messages):
    what, who = kind(messages), speaker(messages)
    if what == "aggregate":
        return SYNTHESIS
    topic = "sky" if "sky" in item_of(messages) else "fox"
    if what == "phase1":
        return evaluation(FIRST[(who, topic)], f"{who} on the {topic}")
    if what == "turn":
        return turn(f"NO MORE COMMENTS after hearing the others on the {topic}", AFTER[topic],
                    done=True)
    raise AssertionError(what)


async def test_every_item_and_group_gets_scores_feedback_and_overall(scripted, items):
    llm, gateway = scripted(panel)
    run = await evaluate(PERSONAS, items, "Judge QA pairs.", gateway, model=llm.model)
    assert [r.item_id for r in run.items] == ["q1", "q2"]
    sky = run.items[0]
    assert sky.status == "ok" and [g.group for g in sky.groups] == ["Teachers", "Parents"]
    teachers = sky.groups[0]
    assert teachers.initial_mean == {Q: 2.0} and teachers.final_mean == {Q: 2.0}
    assert sky.groups[1].initial_mean == {Q: 3.0}
    assert sky.overall == {Q: 2.0} and run.items[1].overall == {Q: 5.0}
    assert all(g.feedback.startswith("Agreement:") for g in run.groups)
    # 4 agents x 2 items phase 1, 4 x 2 turns, 2 groups x 2 items aggregator
    assert llm.calls == 8 + 8 + 4


async def test_resume_after_cancel_repeats_no_call(scripted, items, tmp_path):
    from core.llm import Gateway
    from core.project import Project

    clean_llm, clean = scripted(panel)
    await evaluate(PERSONAS, items, "Judge QA pairs.", clean)
    expected = clean_llm.calls

    cancel = CancelToken()
    answered = []

    def stopping(messages):
        answered.append(1)
        if len(answered) == 7:
            cancel.cancel()  # Cancel pressed while the 7th answer comes in
        return panel(messages)

    with Project.create(tmp_path / "p.evaldesk") as project:
        llm, gateway = scripted(stopping, cache=project, max_concurrency=1)
        with pytest.raises(Cancelled):
            await evaluate(PERSONAS, items, "Judge QA pairs.", gateway,
                           store=units_in(project, model="m"), model="m", max_units=1,
                           cancel=cancel)
        first = [json.dumps(r.messages) for r in llm.requests]
        assert project.list_runs("majeval")[-1].status == "cancelled"

        again = Gateway(gateway.profile, cache=project)  # same model, a new session
        run = await evaluate(PERSONAS, items, "Judge QA pairs.", again,
                             store=units_in(project, model="m"), model="m")
        second = [json.dumps(r.messages) for r in llm.requests[len(first):]]
        # only the answer that was in flight when Cancel was pressed is asked again
        assert len(set(first) & set(second)) <= 1
        assert len(first) + len(second) <= expected + 1
        assert run.reused >= 1  # at least one debate was committed before the cancel
        assert all(r.status == "ok" for r in run.items)

        before = llm.calls
        rerun = await evaluate(PERSONAS, items, "Judge QA pairs.",
                               Gateway(gateway.profile, cache=project),
                               store=units_in(project, model="m"), model="m")
        assert llm.calls == before and rerun.reused == 4  # a finished run makes no call


async def test_a_failed_agent_is_retried_on_resume(scripted, items, tmp_path):
    from core.llm import Gateway
    from core.project import Project

    broken = {"on": True}

    def flaky(messages):
        if broken["on"] and speaker(messages) == "Eli Stone" and kind(messages) == "phase1":
            return "no JSON here"
        return panel(messages)

    with Project.create(tmp_path / "p.evaldesk") as project:
        llm, gateway = scripted(flaky, cache=project)
        run = await evaluate(PERSONAS, items, "Judge QA pairs.", gateway, store=units_in(project))
        parents = [g for g in run.groups if g.group == "Parents"]
        assert all(g.status == "partial" for g in parents)
        assert all(r.status == "partial" for r in run.items)
        stored = project.get_results(run.run_id, "group_result", status="failed")
        assert len(stored) == 2 and "Eli Stone" in stored[0].error
        broken["on"] = False
        seen = llm.calls
        run2 = await evaluate(PERSONAS, items, "Judge QA pairs.",
                              Gateway(gateway.profile, cache=project), store=units_in(project))
        assert all(r.status == "ok" for r in run2.items)
        assert run2.reused == 2  # the teachers' debates were not redone
        redone = llm.requests[seen:]
        assert not any(speaker(r.messages) in ("Ms Amy Lee", "Mr Bo Chen") for r in redone)
        # Dana's phase 1 answer came from the cache; only Eli and what follows were asked
        assert not any(speaker(r.messages) == "Dana Ray" and kind(r.messages) == "phase1"
                       for r in redone)


async def test_alpha_within_groups_rises_when_the_debate_brings_agreement(scripted, items):
    from core.stats import krippendorff_alpha

    _llm, gateway = scripted(panel)
    run = await evaluate(PERSONAS, items, "Judge QA pairs.", gateway)
    alphas = {a.group: a for a in within_group_alpha(run)}
    teachers = alphas["Teachers"]
    assert teachers.before.value == pytest.approx(
        krippendorff_alpha([[3, 5], [1, 3]], "ordinal").value)
    assert teachers.after.value == pytest.approx(1.0)
    assert teachers.after.value > teachers.before.value
    assert alphas["Parents"].before.n_raters == 2


async def test_workbook_sheets_and_columns(scripted, items, tmp_path):
    llm, gateway = scripted(panel)
    run = await evaluate(PERSONAS, items, "Judge QA pairs.", gateway, model=llm.model,
                         settings=DebateSettings(rounds=2))
    path = tmp_path / "results.xlsx"
    write_results(path, run, alphas=within_group_alpha(run),
                  humans=human_agreement(run, n_boot=0))
    sheets = pd.read_excel(path, sheet_name=None)
    assert list(sheets) == ["Items", "Group scores", "Agent scores", "Feedback", "Transcripts",
                            "Personas", "Evidence", "Agreement", "Read me"]
    assert list(sheets["Items"].columns) == ["item", "content", "context", "status", Q, "note"]
    assert sheets["Items"]["content"].tolist() == [i.content for i in items]  # the judged text
    assert list(sheets["Group scores"].columns)[:5] == ["item", "group", "dimension",
                                                        "initial_mean", "final_mean"]
    assert list(sheets["Agent scores"].columns)[:7] == ["item", "group", "agent", "dimension",
                                                        "initial", "final", "finalised_by"]
    assert list(sheets["Feedback"].columns) == ["item", "group", "text"]
    assert list(sheets["Transcripts"].columns)[:6] == ["item", "group", "turn", "speaker",
                                                       "reason chosen", "message"]
    assert list(sheets["Personas"].columns) == [
        "group", "name", "demographics", "perspective", "specialty", "psychological_traits",
        "social_relationships", "evidence", "document", "page", "group_description"]
    assert sheets["Items"][Q].tolist() == [2.0, 5.0]
    agents = sheets["Agent scores"]
    assert set(agents.finalised_by) == {"no more comments"} and len(agents) == 8
    agreement = sheets["Agreement"]
    assert "Krippendorff's alpha (ordinal)" in set(agreement.statistic)
    assert {"Spearman rho", "Kendall tau-b", "Pearson r"} <= set(agreement.statistic)
    # two items only: correlations are undefined and say why, never a number
    human = agreement[agreement.human_dimension == Q]
    assert human.value.isna().all() and human.note.str.startswith("Not computed").all()


async def test_long_messages_are_split_visibly_and_failures_are_marked(scripted, items,
                                                                      tmp_path):
    long_text = ("This is a long remark about the question. " * 500).strip()

    def chatty(messages):
        if kind(messages) == "turn" and speaker(messages) == "Ms Amy Lee":
            return turn(long_text, 2, done=True)
        if kind(messages) == "aggregate" and "fox" in messages[1]["content"]:
            return "no JSON"
        return panel(messages)

    _llm, gateway = scripted(chatty)
    run = await evaluate(PERSONAS, items[:1] + items[1:], "Judge QA pairs.", gateway)
    path = tmp_path / "results.xlsx"
    write_results(path, run)
    sheets = pd.read_excel(path, sheet_name=None)
    transcript = sheets["Transcripts"]
    parts = transcript[transcript.message.str.startswith("(part ", na=False)]
    assert len(parts) >= 3 and parts.message.iloc[0].startswith("(part 1 of ")
    feedback = sheets["Feedback"]
    assert feedback.text.str.startswith("FAILED: The aggregator's summary failed").sum() == 2
    items_sheet = sheets["Items"]
    assert items_sheet.status.tolist() == ["ok", "partial"]
    assert items_sheet[Q].tolist() == [2.0, 4.25]  # the scores stand; the summary is missing


async def test_a_group_of_one_persona_is_evaluated_alone_and_its_agreement_is_undefined(
        scripted, items, tmp_path):
    alone = [*PERSONAS[:2], persona("Librarians", "Ms Lou Park")]

    def reply(messages):
        if speaker(messages) == "Ms Lou Park":
            assert kind(messages) == "phase1"  # never asked to debate with nobody
            return evaluation(3, "Ms Lou Park alone")
        return panel(messages)

    _llm, gateway = scripted(reply)
    run = await evaluate(alone, items, "Judge QA pairs.", gateway)
    librarians = [g for g in run.groups if g.group == "Librarians"]
    assert all(g.turns == [] and g.stop_reason.startswith("one agent") for g in librarians)
    assert all(g.initial_mean == g.final_mean == {Q: 3.0} for g in librarians)
    alphas = {a.group: a for a in within_group_alpha(run)}
    assert alphas["Librarians"].one_agent
    assert alphas["Librarians"].before.value is None and alphas["Librarians"].after.value is None
    assert alphas["Librarians"].after.reason.startswith("one agent")
    assert not alphas["Teachers"].one_agent and alphas["Teachers"].after.value == 1.0
    path = tmp_path / "results.xlsx"
    write_results(path, run, alphas=within_group_alpha(run))
    sheets = pd.read_excel(path, sheet_name=None)
    groups = sheets["Group scores"]
    lib = groups[groups.group == "Librarians"]
    assert lib.change.isna().all()
    assert lib.note.str.contains("undefined change: one agent").all()
    teachers = groups[groups.group == "Teachers"]
    assert teachers.change.tolist() == [0.0, 1.0]  # sky 2 -> 2, fox 4 -> 5
    agreement = sheets["Agreement"]
    rows = agreement[agreement.group == "Librarians"]
    assert rows.value.isna().all() and rows.note.str.contains("one agent").all()


async def test_an_agent_failing_mid_debate_leaves_both_means_and_both_alphas(scripted, items):
    from core.llm import ScriptedError

    def reply(messages):
        if kind(messages) == "turn" and speaker(messages) == "Mr Bo Chen" \
                and "sky" in item_of(messages):
            return ScriptedError(500, "server exploded")
        return panel(messages)

    _llm, gateway = scripted(reply)
    run = await evaluate(PERSONAS, items, "Judge QA pairs.", gateway)
    teachers = run.items[0].groups[0]
    assert teachers.group == "Teachers" and teachers.status == "partial"
    assert teachers.initial_mean == {Q: 3.0}  # Lee alone: Chen's 1 is left out of both
    assert teachers.final_mean == {Q: 2.0}
    assert "Mr Bo Chen failed during the debate" in teachers.note
    alpha = {a.group: a for a in within_group_alpha(run)}["Teachers"]
    # Chen's phase 1 sky score is missing before the debate too: one unit pairable in both
    assert alpha.before.n_units == alpha.after.n_units == 1


async def test_simple_roles_carry_the_group_description_and_a_new_one_is_debated_again(
        scripted, items, tmp_path):
    from core.project import Project

    seen = []

    def reply(messages):
        if kind(messages) == "phase1":
            seen.append(re.search(r"<identity-\w+>(.*?)</identity-", messages[0]["content"],
                                  re.DOTALL).group(1))  # the persona's fenced description
        return panel(messages)

    settings = DebateSettings(simple_roles=True)
    about = {"Teachers": "Preschool teachers who often read books to their students.",
             "Parents": "Parents who read stories at bedtime."}
    with Project.create(tmp_path / "p.evaldesk") as project:
        llm, gateway = scripted(reply, cache=project)
        run = await evaluate(PERSONAS, items, "Judge QA pairs.", gateway, settings=settings,
                             store=units_in(project, settings=settings), group_descriptions=about)
        assert "You are Ms Amy Lee, one of the Teachers (preschool teachers who often read " \
            "books to their students); your specialty: reading with children." in seen
        assert run.group_descriptions == about
        calls = llm.calls
        again = await evaluate(PERSONAS, items, "Judge QA pairs.", gateway, settings=settings,
                               store=units_in(project, settings=settings), group_descriptions=about)
        assert llm.calls == calls and again.reused == 4  # nothing changed: nothing asked
        changed = {**about, "Parents": "Grandparents who care for children after school."}
        await evaluate(PERSONAS, items, "Judge QA pairs.", gateway, settings=settings,
                       store=units_in(project, settings=settings), group_descriptions=changed)
        redone = {speaker(r.messages) for r in llm.requests[calls:]}
        assert redone == {"Dana Ray", "Eli Stone"}  # only the parents' roles changed


async def test_each_running_debate_says_where_it_is(scripted, items, tmp_path):
    """Issue 28, point 9: the debate table read "waiting, 0 of 6" for 14 minutes while the
    turns ran. While a debate runs, ``live`` says where it is; a finished one leaves it."""
    from core.majeval import session as st
    from core.project import Project

    seen: list[dict[str, str]] = []
    live: dict[str, str] = {}

    def watching(messages):
        seen.append(dict(live))  # what the table would show at this moment
        return panel(messages)

    with Project.create(tmp_path / "p.evaldesk") as project:
        st.personas.save_personas(project, PERSONAS)
        state = st.MajEvalChoices(task="Judge QA pairs.", item_list=items)
        llm, gateway = scripted(watching, cache=project, max_concurrency=1)
        run = await st.debates.run_debates(project, state, lambda _run_id: gateway, model=llm.model,
                                   max_units=1, live=live)
        assert all(r.status == "ok" for r in run.items) and live == {}
        notes = [note for snapshot in seen for note in snapshot.values()]
        assert "judging alone: 0 of 2" in notes and "judging alone: 1 of 2" in notes
        assert "debating: turn 1 of at most 6" in notes
        assert "debating: turn 2 of at most 6" in notes
        assert "summing up the views" in notes
    # the table of a run under way: the debate in ``live`` is "running" with its line
    running = next(snapshot for snapshot in seen if snapshot)
    ((key, note),) = running.items()
    with Project.create(tmp_path / "q.evaldesk") as fresh:
        st.personas.save_personas(fresh, PERSONAS)
        rows = st.debates.unit_statuses(fresh, state, llm.model, live={key: note})
        assert [(r["status"], r["note"]) for r in rows].count(("running", note)) == 1
        assert {r["status"] for r in rows} == {"running", "waiting"}
