"""The coordinator (pure) and the debate through the gateway with a scripted panel."""

from __future__ import annotations

import pytest

from core import prompts
from core.majeval import (
    DEFAULT_DIMENSION,
    Coordinator,
    DebateSettings,
    Dimension,
    Scale,
    aggregate,
    evaluate_individually,
    free_debate,
    is_challenged,
)

from .majeval_support import SYNTHESIS, evaluation, kind, persona, speaker, turn

Q = "Overall quality"
AGENTS = [("a", "Ms Amy Lee"), ("b", "Mr Bo Chen"), ("c", "Dr Cara Diaz")]


def coordinator(scores, rounds=3, agents=AGENTS, dims=(Q,)):
    return Coordinator(agents, list(dims), {a: dict(zip(dims, s if isinstance(s, tuple) else (s,)))
                                            for a, s in scores.items()}, rounds)


# ------------------------------------------------------------------------------ coordinator
def test_the_agent_furthest_from_the_median_speaks_first_with_a_readable_reason():
    c = coordinator({"a": 2, "b": 4, "c": 4})
    agent, reason = c.next_turn()
    assert agent == "a"
    assert reason == ("Ms Amy Lee's scores differ most from the others (Overall quality: 2 vs "
                      "median 4); Ms Amy Lee has not spoken yet.")


def test_disagreement_sums_over_dimensions_against_the_median_of_the_others():
    c = coordinator({"a": (1, 5), "b": (3, 3), "c": (4, 4)}, dims=("Clarity", "Fit"))
    assert c.disagreement("a") == abs(1 - 3.5) + abs(5 - 3.5)  # 3.0
    assert c.disagreement("b") == abs(3 - 2.5) + abs(3 - 4.5)  # 2.0
    assert c.disagreement("c") == abs(4 - 2) + abs(4 - 4)      # 2.0
    assert c.next_turn()[0] == "a"


def test_a_challenged_agent_answers_next_even_without_disagreement():
    c = coordinator({"a": 4, "b": 4, "c": 1})
    assert c.next_turn()[0] == "c"
    c.record("c", "I disagree with Lee: the answer is wrong.", {Q: 1})
    agent, reason = c.next_turn()
    assert agent == "a"  # named in the last message, although c still differs most
    assert reason.startswith("Dr Cara Diaz addressed Ms Amy Lee in the last message")


def test_ties_go_to_who_spoke_least_then_to_roster_order():
    c = coordinator({"a": 3, "b": 3, "c": 3})
    agent, reason = c.next_turn()
    assert agent == "a" and "Nobody disagrees" in reason and "first in the list" in reason
    c.record("a", "Fine.", {Q: 3})
    assert c.next_turn()[0] == "b"  # a has spoken, b and c not: b is earlier
    c.record("b", "Fine.", {Q: 3})
    agent, reason = c.next_turn()
    assert agent == "c" and "has spoken least" in reason


def test_early_stop_once_everyone_spoke_and_nobody_disagrees():
    c = coordinator({"a": 3, "b": 3, "c": 3})
    for a in ("a", "b", "c"):
        assert c.next_turn()[0] == a
        c.record(a, "I agree.", {Q: 3})
    assert c.next_turn() is None
    assert c.stopped_by == "consensus" and "nobody disagrees" in c.stop_reason


def test_no_more_comments_removes_an_agent_and_the_cap_stops_the_debate():
    c = coordinator({"a": 1, "b": 5, "c": 3}, rounds=1)
    assert c.cap == 3
    first = c.next_turn()[0]
    c.record(first, "NO MORE COMMENTS", {Q: 1 if first == "a" else 5}, finished=True)
    assert first not in c.active
    seen = [first]
    while (nxt := c.next_turn()) is not None:
        assert nxt[0] != first
        c.record(nxt[0], "Still disagree.", c.scores[nxt[0]])
        seen.append(nxt[0])
    assert len(seen) == 3 and c.stopped_by == "cap" and "turn limit" in c.stop_reason


@pytest.mark.parametrize(("message", "name", "expected"), [
    ("I disagree with Lee here.", "Ms Amy Lee", True),
    ("Amy, you missed the point", "Ms Amy Lee", True),
    ("amy, you missed the point", "Ms Amy Lee", False),  # not written as a name
    ("Ms Amy Lee is right", "Ms Amy Lee", True),
    ("ms amy lee is right", "Ms Amy Lee", True),  # the full name, in any case
    ("Mr Chen said so", "Ms Amy Lee", False),
    ("Ms. Smith and Dr. Jones", "Ms Amy Lee", False),
    ("Leeway is needed", "Ms Amy Lee", False),  # whole words only
    ("Lee's point is fair.", "Ms Amy Lee", True),
    ("I answer Bo: the question is fine.", "Mr Bo Chen", True),  # short names count too
])
def test_challenged_means_named_by_a_whole_word(message, name, expected):
    assert is_challenged(message, name) is expected


@pytest.mark.parametrize(("message", "name", "expected"), [
    ("I think this will help the child.", "Will Thompson", False),
    ("I hope the answer is simpler.", "Grace Hope", False),
    ("Will, I disagree: the answer is wrong.", "Will Thompson", True),
    ("Will this confuse a child? Maybe.", "Will Thompson", False),  # a question, not Will
    ("Hope is not a plan.", "Grace Hope", False),
    ("I agree with Will on the wording.", "Will Thompson", True),
    ("As Ms Hope said, it is too long.", "Grace Hope", True),
    ("Grace, you are right.", "Grace Hope", True),
    ("I HOPE SO.", "Grace Hope", False),
    ("Will Thompson is right.", "Will Thompson", True),
    ("Thompson is right.", "Will Thompson", True),
])
def test_names_that_are_common_words_count_only_when_written_as_names(message, name, expected):
    assert is_challenged(message, name) is expected


def test_a_common_word_does_not_give_the_floor_to_an_agent_named_like_it():
    c = coordinator({"a": 4, "b": 4, "c": 1},
                    agents=[("a", "Will Thompson"), ("b", "Grace Hope"), ("c", "Dr Cara Diaz")])
    assert c.next_turn()[0] == "c"
    c.record("c", "I hope this will help you see why the answer is wrong.", {Q: 1})
    agent, reason = c.next_turn()
    assert "addressed" not in reason  # nobody was named: Diaz still differs most
    assert agent == "c"


def _debate(c, says, turns):
    """Run the coordinator for ``turns`` turns; ``says[a]`` is what agent ``a`` says (scores
    never move). Returns the speakers in order."""
    order = []
    for _ in range(turns):
        nxt = c.next_turn()
        if nxt is None:
            break
        agent, _reason = nxt
        order.append(agent)
        c.record(agent, says[agent], c.scores[agent])
    return order


def test_every_agent_gets_the_floor_when_two_agents_answer_each_other():
    # 2 / 4 / 3 never move: a and b disagree with the median, c holds it. a and b name each
    # other every time (as the turn prompt asks: name whom you answer).
    c = coordinator({"a": 2, "b": 4, "c": 3}, rounds=3)
    says = {"a": "Mr Bo Chen, you are too generous.", "b": "Ms Amy Lee, you are too harsh.",
            "c": "Both have a point, Lee."}
    order = _debate(c, says, 9)
    assert len(order) == 9
    assert order != ["a", "b"] * 4 + ["a"]
    # every agent speaks before any agent speaks a third time
    third = next(i for i, a in enumerate(order) if order[: i + 1].count(a) == 3)
    assert set(order[:third]) == {"a", "b", "c"}
    assert order.count("c") >= 2
    # never more than two turns between the most and the least heard agent
    for i in range(1, len(order) + 1):
        counts = [order[:i].count(a) for a in "abc"]
        assert max(counts) - min(counts) <= 2


def test_one_who_has_not_spoken_outranks_one_who_spoke_twice_and_the_reason_says_so():
    c = coordinator({"a": 2, "b": 4, "c": 3}, rounds=3)
    says = {"a": "Mr Bo Chen, you are too generous.", "b": "Ms Amy Lee, you are too harsh.",
            "c": "I see it in the middle."}
    assert _debate(c, says, 4) == ["a", "b", "a", "b"]
    agent, reason = c.next_turn()
    assert agent == "c"  # a was addressed and disagrees, but has spoken twice
    assert reason.startswith("Everyone gets the floor: Ms Amy Lee and Mr Bo Chen have spoken "
                             "twice and Dr Cara Diaz has not spoken yet; ")


# ------------------------------------------------------------------ debate through a model
PANEL = [persona("Teachers", "Ms Amy Lee"), persona("Teachers", "Mr Bo Chen"),
         persona("Teachers", "Dr Cara Diaz")]


def item():
    from core.majeval import Item

    return Item(id="q1", content="Q: Why is the sky blue? A: Because of the sea.",
                context="A story.")


async def run_group(gateway, settings=None):
    agents = await evaluate_individually(PANEL, item(), "Judge QA pairs.", [DEFAULT_DIMENSION],
                                         Scale(), gateway)
    return await free_debate(PANEL, item(), "Judge QA pairs.", [DEFAULT_DIMENSION], Scale(),
                             gateway, agents, settings=settings or DebateSettings())


async def test_no_more_comments_finalises_and_the_others_debate_on(scripted):
    said = {}

    def reply(messages):
        who, what = speaker(messages), kind(messages)
        if what == "phase1":
            return evaluation({"Ms Amy Lee": 4, "Mr Bo Chen": 4, "Dr Cara Diaz": 1}[who])
        if what == "turn":
            said[who] = said.get(who, 0) + 1
            if who == "Dr Cara Diaz":
                return turn("NO MORE COMMENTS", 2, done=False)  # said in words only
            if who == "Ms Amy Lee":
                if said[who] == 1:
                    return turn("Diaz is too harsh; I keep 4.", 4)
                return turn("NO MORE COMMENTS", 4, done=True)
            return turn("I agree with Lee.", 4, done=True)
        raise AssertionError(what)

    _llm, gateway = scripted(reply)
    result = await run_group(gateway)
    speakers = [t.speaker for t in result.turns]
    assert speakers[0] == "Dr Cara Diaz"  # furthest from the median
    assert result.turns[0].finalised and result.turns[0].scores == {Q: 2}
    by_name = {a.agent: a for a in result.agents}
    assert by_name["Dr Cara Diaz"].finalised_by == "no more comments"
    assert by_name["Dr Cara Diaz"].final == {Q: 2}
    assert said["Dr Cara Diaz"] == 1  # never asked again
    assert by_name["Mr Bo Chen"].finalised_by == "no more comments"
    assert all(a.status == "ok" for a in result.agents)
    assert speakers == ["Dr Cara Diaz", "Ms Amy Lee", "Mr Bo Chen", "Ms Amy Lee"]
    assert result.stop_reason == "every agent gave its final evaluation"


async def test_turn_cap_then_each_remaining_agent_gives_a_final_evaluation(scripted):
    def reply(messages):
        who, what = speaker(messages), kind(messages)
        score = {"Ms Amy Lee": 5, "Mr Bo Chen": 3, "Dr Cara Diaz": 1}[who]
        if what == "phase1":
            return evaluation(score)
        if what == "turn":
            return turn(f"{who} keeps {score}.", score)
        if what == "final":
            return evaluation(score, "final word")
        raise AssertionError(what)

    llm, gateway = scripted(reply)
    result = await run_group(gateway, DebateSettings(rounds=2))
    debate = [t for t in result.turns if t.kind == "debate"]
    finals = [t for t in result.turns if t.kind == "final"]
    assert len(debate) == 2 * 3  # the cap: rounds x agents
    assert sorted(t.speaker for t in finals) == sorted(p.name for p in PANEL)
    assert all(a.finalised_by == "cap" for a in result.agents)
    assert "turn limit" in result.stop_reason
    assert sum(kind(r.messages) == "final" for r in llm.requests) == 3
    # the debaters with the same d alternate by who spoke least: Lee and Diaz, then Chen
    assert [t.speaker for t in debate][:2] == ["Ms Amy Lee", "Dr Cara Diaz"]


async def test_a_malformed_reply_and_a_failed_reask_mark_the_agent_failed(scripted):
    def reply(messages):
        who, what = speaker(messages), kind(messages)
        if what == "phase1":
            if who == "Mr Bo Chen":
                return "I would give it a four, I think."  # not JSON, also when asked again
            return evaluation(4 if who == "Ms Amy Lee" else 2)
        if what == "turn":
            return turn("NO MORE COMMENTS", 4 if who == "Ms Amy Lee" else 2, done=True)
        if what == "aggregate":
            return SYNTHESIS
        raise AssertionError(what)

    llm, gateway = scripted(reply)
    result = await run_group(gateway)
    chen = next(a for a in result.agents if a.agent == "Mr Bo Chen")
    assert chen.status == "failed" and chen.initial is None and chen.final is None
    assert "did not have the expected form" in chen.error
    asked = [r for r in llm.requests if speaker(r.messages) == "Mr Bo Chen"]
    assert len(asked) == 2  # the answer, then one re-ask with the error
    assert all(t.speaker != "Mr Bo Chen" for t in result.turns)  # left out of the debate
    final = await aggregate(result, item(), "Judge QA pairs.", [DEFAULT_DIMENSION], gateway)
    assert final.status == "partial" and "Mean of 2 of 3 agents" in final.error
    assert final.final_mean == {Q: 3.0}  # (4 + 2) / 2: nothing made up for Chen


async def test_a_failed_turn_removes_the_agent_and_the_debate_continues(scripted):
    from core.llm import ScriptedError

    def reply(messages):
        who, what = speaker(messages), kind(messages)
        score = {"Ms Amy Lee": 5, "Mr Bo Chen": 3, "Dr Cara Diaz": 3}[who]
        if what == "phase1":
            return evaluation(score)
        if what == "turn":
            if who == "Ms Amy Lee":
                return ScriptedError(500, "server exploded")
            return turn("NO MORE COMMENTS", score, done=True)
        raise AssertionError(what)

    _llm, gateway = scripted(reply)
    result = await run_group(gateway)
    assert result.turns[0].speaker == "Ms Amy Lee" and result.turns[0].error
    lee = next(a for a in result.agents if a.agent == "Ms Amy Lee")
    assert lee.status == "failed" and lee.final is None and lee.finalised_by == "failed"
    assert {a.agent for a in result.agents if a.status == "ok"} == {"Mr Bo Chen", "Dr Cara Diaz"}


async def test_aggregator_gets_our_mean_and_cannot_change_it(scripted):
    def reply(messages):
        who, what = speaker(messages), kind(messages)
        if what == "phase1":
            return evaluation({"Ms Amy Lee": 5, "Mr Bo Chen": 4, "Dr Cara Diaz": 1}[who])
        if what == "turn":
            return turn("NO MORE COMMENTS", {"Ms Amy Lee": 5, "Mr Bo Chen": 4,
                                             "Dr Cara Diaz": 2}[who], done=True)
        if what == "aggregate":
            return {**SYNTHESIS, "overall": "The average is 5."}  # the model's arithmetic
        raise AssertionError(what)

    llm, gateway = scripted(reply)
    result = await aggregate(await run_group(gateway), item(), "Judge QA pairs.",
                             [DEFAULT_DIMENSION], gateway)
    assert result.initial_mean == {Q: pytest.approx(10 / 3)}
    assert result.final_mean == {Q: pytest.approx(11 / 3)}
    prompt = next(r.prompt for r in llm.requests if kind(r.messages) == "aggregate")
    assert "Overall quality 3.67" in prompt
    assert result.feedback.startswith("Agreement: They agree it is clear.")
    assert result.status == "ok"


async def test_no_debate_keeps_phase_one_scores_and_simple_roles_use_one_sentence(scripted):
    def reply(messages):
        assert kind(messages) == "phase1"
        assert "Your specialty" not in messages[0]["content"]  # simple role: no attributes
        return evaluation({"Ms Amy Lee": 5, "Mr Bo Chen": 4, "Dr Cara Diaz": 1}[speaker(messages)])

    llm, gateway = scripted(reply)
    about = {"Teachers": "Preschool teachers who often read books to their students."}
    agents = await evaluate_individually(PANEL, item(), "t", [DEFAULT_DIMENSION], Scale(),
                                         gateway, simple_roles=True, role_descriptions=about)
    result = await free_debate(PANEL, item(), "t", [DEFAULT_DIMENSION], Scale(), gateway,
                               agents, settings=DebateSettings(no_debate=True))
    assert not result.turns and all(a.finalised_by == "no debate" for a in result.agents)
    assert [a.final for a in result.agents] == [{Q: 5}, {Q: 4}, {Q: 1}]
    system = llm.requests[0].messages[0]["content"]
    role = ("You are Ms Amy Lee, one of the Teachers (preschool teachers who often read books "
            "to their students); your specialty: reading with children.")
    assert system.startswith(prompts.MATERIAL_RULE)
    assert f"{prompts.fence(role, 'identity')}\n\n" in system  # the one sentence, in its fence


@pytest.mark.parametrize(("group", "description", "specialty", "expected"), [
    ("Teachers", "Preschool teachers who often read books to their students.",
     "Reading aloud.",
     ("You are Ana Ruiz, one of the Teachers (preschool teachers who often read books to their "
     "students); your specialty: reading aloud.")),
    ("AI developers", "AI engineers who build reading apps", "",
     "You are Ana Ruiz, one of the AI developers (AI engineers who build reading apps)."),
    ("Parents", "", "Speech therapy for toddlers.",
     "You are Ana Ruiz, one of the Parents; your specialty: speech therapy for toddlers."),
    ("Parents", "", "", "You are Ana Ruiz, one of the Parents."),
])
def test_a_simple_role_is_one_sentence_that_carries_the_role(group, description, specialty,
                                                               expected):
    from core.majeval import simple_role

    ana = persona(group, "Ana Ruiz", specialty=specialty)
    assert simple_role(ana, description) == expected


async def test_several_dimensions_and_scale_are_enforced(scripted):
    dims = [Dimension(name="Grammar"), Dimension(name="Fit", definition="Fits the story.")]

    def reply(messages):
        if kind(messages) == "phase1":
            if speaker(messages) == "Dr Cara Diaz":
                return {"rationale": "x", "scores": {"Grammar": 9, "Fit": 2}}  # off the scale
            return {"rationale": "x", "scores": {"Grammar": 4, "Fit": 3}}
        raise AssertionError

    llm, gateway = scripted(reply)
    agents = await evaluate_individually(PANEL, item(), "t", dims, Scale(), gateway)
    assert agents[0].initial.scores == {"Grammar": 4, "Fit": 3}
    assert agents[2].status == "failed" and "less than or equal to 5" in agents[2].error
    assert "- Fit: Fits the story." in llm.requests[0].messages[0]["content"]


# ------------------------------------------------------------- copies of our instructions
async def test_no_prompt_of_the_debate_carries_example_values(scripted):
    """The bundled model handed back our example ("your reasons, at most four sentences" with
    every score 3): the prompts now describe the form in words, with no value to copy."""
    dims = [Dimension(name="Grammar"), Dimension(name="Fit")]

    def reply(messages):
        what, who = kind(messages), speaker(messages)
        score = {"Ms Amy Lee": 5, "Mr Bo Chen": 3, "Dr Cara Diaz": 1}[who]
        if what in ("phase1", "final"):
            return {"rationale": f"{who} sees it so.", "scores": {"Grammar": score, "Fit": 2}}
        return {"message": f"{who} keeps it.", "no_more_comments": False,
                "scores": {"Grammar": score, "Fit": 2}}

    llm, gateway = scripted(reply)
    agents = await evaluate_individually(PANEL, item(), "t", dims, Scale(), gateway)
    await free_debate(PANEL, item(), "t", dims, Scale(), gateway, agents,
                      settings=DebateSettings(rounds=1))
    kinds = {kind(r.messages) for r in llm.requests}
    assert kinds == {"phase1", "turn", "final"}
    for r in llm.requests:
        sent = "\n".join(m["content"] for m in r.messages)
        assert '{"' not in sent and '": ' not in sent  # no JSON example
        assert 'one key per dimension ("Grammar", "Fit")' in sent
        assert "a whole number from 1 to 5" in sent


@pytest.mark.parametrize(("what", "copy"), [
    ("phase1", {"rationale": "your reasons in at most four sentences", "scores": {Q: 3}}),
    ("phase1", {"rationale": "...", "scores": {Q: 3}}),
    ("turn", {"message": "what you say to the group in at most four sentences",
              "no_more_comments": False, "scores": {Q: 3}}),
    ("turn", {"message": "your scores as they stand now", "no_more_comments": False,
              "scores": {Q: 3}}),
])
async def test_a_reply_that_repeats_the_instructions_fails_the_agent(scripted, what, copy):
    def reply(messages):
        who = speaker(messages)
        if kind(messages) == what and who == "Mr Bo Chen":
            return copy
        if kind(messages) == "phase1":
            return evaluation({"Ms Amy Lee": 4, "Mr Bo Chen": 2, "Dr Cara Diaz": 2}[who])
        return turn("NO MORE COMMENTS, I keep my view.", 4 if who == "Ms Amy Lee" else 2,
                    done=True)

    llm, gateway = scripted(reply)
    result = await run_group(gateway)
    chen = next(a for a in result.agents if a.agent == "Mr Bo Chen")
    assert chen.status == "failed" and chen.final is None
    assert chen.error_kind == "copied_instructions"
    assert "repeated the instructions instead of answering: try a larger model" in chen.error
    asked = [r for r in llm.requests if speaker(r.messages) == "Mr Bo Chen"
             and kind(r.messages) == what]
    assert len(asked) == 2  # asked again once
    assert "copied_instructions" in result.failure_kinds()


async def test_an_empty_debate_message_is_asked_again(scripted):
    said = []

    def reply(messages):
        who = speaker(messages)
        if kind(messages) == "phase1":
            return evaluation({"Ms Amy Lee": 4, "Mr Bo Chen": 2, "Dr Cara Diaz": 2}[who])
        said.append(who)
        if len(messages) == 2:
            return turn("", 3)
        return turn(f"{who} is done.", 3, done=True)

    llm, gateway = scripted(reply)
    result = await run_group(gateway)
    assert all(a.status == "ok" for a in result.agents)
    again = [r for r in llm.requests if len(r.messages) > 2]
    assert again and "the message is empty" in again[0].messages[-1]["content"]


# ------------------------------------------------------------------ one agent; same agents
async def test_a_group_of_one_persona_gives_its_own_evaluation_only(scripted):
    def reply(messages):
        assert kind(messages) in ("phase1", "aggregate"), kind(messages)
        if kind(messages) == "aggregate":
            return SYNTHESIS
        return evaluation(4, "Clear enough.")

    _llm, gateway = scripted(reply)
    alone = [persona("Teachers", "Ms Amy Lee")]
    agents = await evaluate_individually(alone, item(), "t", [DEFAULT_DIMENSION], Scale(),
                                         gateway)
    result = await free_debate(alone, item(), "t", [DEFAULT_DIMENSION], Scale(), gateway, agents)
    assert result.turns == []
    assert result.stop_reason.startswith("one agent: a group with a single persona cannot "
                                         "debate")
    assert result.agents[0].final == {Q: 4} and result.agents[0].finalised_by == "no debate"
    final = await aggregate(result, item(), "t", [DEFAULT_DIMENSION], gateway)
    assert final.status == "ok" and final.final_mean == {Q: 4.0}
    assert final.note.startswith("One agent")


async def test_means_before_and_after_are_over_the_same_agents(scripted):
    from core.llm import ScriptedError

    def reply(messages):
        who, what = speaker(messages), kind(messages)
        score = {"Ms Amy Lee": 5, "Mr Bo Chen": 3, "Dr Cara Diaz": 1}[who]
        if what == "phase1":
            return evaluation(score)
        if what == "turn":
            if who == "Ms Amy Lee":
                return ScriptedError(500, "server exploded")  # Lee fails mid-debate
            return turn(f"{who} agrees on 2.", 2, done=True)
        if what == "aggregate":
            return SYNTHESIS
        raise AssertionError(what)

    _llm, gateway = scripted(reply)
    debated = await run_group(gateway)
    result = await aggregate(debated, item(), "t", [DEFAULT_DIMENSION], gateway)
    assert result.final_mean == {Q: 2.0}
    assert result.initial_mean == {Q: 2.0}  # (3 + 1) / 2: Lee's 5 is left out of both
    assert "Ms Amy Lee failed during the debate and is left out of both" in result.note
    assert result.status == "partial"


@pytest.mark.parametrize("closing", [
    "Nothing to add.", "Nothing more to discuss.", "I agree with the others.", "I am done.",
    "NO MORE COMMENTS", "No more comments.", "I have nothing more to add.",
    "My scores are final.",
])
async def test_an_ordinary_closing_message_is_not_taken_for_a_copy(scripted, closing):
    def reply(messages):
        who = speaker(messages)
        if kind(messages) == "phase1":
            return evaluation({"Ms Amy Lee": 4, "Mr Bo Chen": 2, "Dr Cara Diaz": 3}[who])
        return turn(closing, 3, done=True)

    llm, gateway = scripted(reply)
    result = await run_group(gateway)
    assert all(a.status == "ok" for a in result.agents), [a.error for a in result.agents]
    assert not any(len(r.messages) > 2 for r in llm.requests)  # never asked again
