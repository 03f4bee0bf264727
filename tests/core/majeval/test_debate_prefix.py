"""The layout of a debate agent's requests for providers' prompt caches: the long part
(persona, task, item, the group's first evaluations) is a prefix that stays the same, byte for
byte, across the agent's turns and its final evaluation; the discussion comes after it and
only grows, so every request of an agent repeats its previous one as a prefix."""

from __future__ import annotations

from itertools import pairwise

from core.majeval import (
    DEFAULT_DIMENSION,
    DebateSettings,
    Item,
    Scale,
    evaluate_individually,
    free_debate,
)

from .majeval_support import evaluation, kind, persona, speaker, turn

PANEL = [persona("Teachers", "Ms Amy Lee"), persona("Teachers", "Mr Bo Chen"),
         persona("Teachers", "Dr Cara Diaz")]
ITEM = Item(id="q1", content="Q: Why is the sky blue? A: Because of the sea.",
            context="A story about the sea.")


async def debate(scripted, rounds=2):
    said: dict[str, int] = {}

    own = {"Ms Amy Lee": 4, "Mr Bo Chen": 2, "Dr Cara Diaz": 1}  # nobody gives in

    def reply(messages):
        who, what = speaker(messages), kind(messages)
        if what == "phase1":
            return evaluation(own[who], f"{who} has reasons.")
        if what == "turn":
            said[who] = said.get(who, 0) + 1
            return turn(f"{who} keeps arguing, round {said[who]}.", own[who])
        if what == "final":
            return evaluation(3, f"{who} ends here.")
        raise AssertionError(what)

    llm, gateway = scripted(reply)
    agents = await evaluate_individually(PANEL, ITEM, "Judge QA pairs.", [DEFAULT_DIMENSION],
                                         Scale(), gateway)
    result = await free_debate(PANEL, ITEM, "Judge QA pairs.", [DEFAULT_DIMENSION], Scale(),
                               gateway, agents, settings=DebateSettings(rounds=rounds))
    return llm, result


async def test_an_agents_prefix_is_byte_equal_across_its_turns_and_final(scripted):
    llm, result = await debate(scripted)
    assert result.stop_reason.startswith("the turn limit")  # turns and finals both happened
    by_agent: dict[str, list[tuple[str, list[dict]]]] = {}
    for request in llm.requests:
        by_agent.setdefault(speaker(request.messages), []).append(
            (kind(request.messages), request.messages))
    for name, calls in by_agent.items():
        kinds = [k for k, _ in calls]
        assert kinds[0] == "phase1" and kinds[-1] == "final" and "turn" in kinds, (name, kinds)
        phase1_system = calls[0][1][0]["content"]
        phase2 = [messages for k, messages in calls if k != "phase1"]
        systems = {messages[0]["content"] for messages in phase2}
        assert len(systems) == 1, name  # one prefix for every turn and the final evaluation
        system = systems.pop()
        assert system.startswith(phase1_system)  # phase 1's request is a prefix of it too
        assert "The first evaluations of everyone in your group" in system
        for other in PANEL:  # every agent's first evaluation is in the prefix
            assert f"{other.name} has reasons." in system
        assert "keeps arguing" not in system  # the discussion is not
        # the user message starts with the discussion, which only grows: each request's
        # discussion is a prefix of the next one's
        discussions = [messages[-1]["content"].split("\n\n", 1)[0] for messages in phase2]
        for before, after in pairwise(discussions):
            if "(nobody has spoken yet)" not in before:
                assert after.startswith(before), (before, after)


async def test_the_final_evaluation_repeats_the_last_turn_as_a_prefix(scripted):
    llm, _ = await debate(scripted)
    for name in {p.name for p in PANEL}:
        mine = [r.messages for r in llm.requests if speaker(r.messages) == name]
        last_turn = [m for m in mine if kind(m) == "turn"][-1]
        final = next(m for m in mine if kind(m) == "final")
        assert final[0] == last_turn[0]
        head = last_turn[1]["content"].split("\n\nIt is your turn")[0]
        assert final[1]["content"].startswith(head)
