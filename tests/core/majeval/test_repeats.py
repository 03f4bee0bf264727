"""MAJ-Eval's repeat runs (``core.majeval.session.repeats``, ``core.majeval.repeats``): repeat k is made of real calls with repeat
index k, kept per repeat in the project (reopening reads them, a finished repeat re-runs with
zero calls), repeat 0 is the ordinary run; the stability is Krippendorff's alpha (interval)
across the repeats, checked against a direct computation."""

from __future__ import annotations

import threading

import pytest

from core.majeval import DebateSettings, Item
from tests.core.majeval.majeval_support import SYNTHESIS, evaluation, item_of, kind, persona, turn
from tests.core.repeat_support import RepeatSpy

N_ITEMS = 10
HUMAN = {f"i{k}": 1 + k % 5 for k in range(N_ITEMS)}


def _debate_reply(messages):
    what = kind(messages)
    if what == "aggregate":
        return SYNTHESIS
    score = HUMAN[item_of(messages).split(":", 1)[0]]
    if what == "turn":
        return turn("I agree with the others.", score)
    return evaluation(score, "Fits the child.")


class _Judge:
    """The single judge: per item, the score of the n-th time it is asked (so repeats differ)."""

    def __init__(self, scores):
        self.scores, self.asked, self.lock = scores, {}, threading.Lock()

    def __call__(self, messages):
        content = messages[-1]["content"]
        which = next(k for k in HUMAN if f"{k}: " in content)
        with self.lock:
            n = self.asked.get(which, 0)
            self.asked[which] = n + 1
        return evaluation(self.scores(which, n), "It reads well enough.")


@pytest.fixture
def project(tmp_path):
    from core.majeval import session as st
    from core.project import Project

    with Project.create(tmp_path / "p.evaldesk") as project:
        st.personas.save_personas(project, [persona("Parents", "Dana Ray"), persona("Parents", "Eli Stone"),
                                   persona("Teachers", "Amy Lee")], origin="generated")
        state = st.choices.load_choices(project)
        state.task = "Judge QA pairs for children."
        state.item_list = [Item(id=k, content=f"{k}: Q: Why? A: Because.", context="A story.",
                                human={"Overall quality": v}) for k, v in HUMAN.items()]
        st.choices.save_choices(project, state)
        yield project


def _factory(project, llm, seen):
    from core.llm import gateway_for

    return lambda run_id: RepeatSpy(gateway_for(llm.profile(max_retries=0), project, run_id), seen)


async def test_repeats_are_real_calls_kept_per_repeat_and_free_to_run_again(
        project, scripted_llm):
    from core.majeval import session as st
    from core.majeval.repeats import stability
    from core.majeval.session.repeats import load_repeats, run_repeats
    from core.stats import krippendorff_alpha

    state = st.choices.load_choices(project)
    llm = scripted_llm(_Judge(lambda item, n: 1 + (int(item[1:]) + 2 * n) % 5))
    seen: list[int] = []
    by_repeat = await run_repeats(project, state, _factory(project, llm, seen),
                                  ["single-judge"], 3, model=llm.model)
    assert llm.calls == 3 * N_ITEMS  # no repeat was answered from the cache
    assert sorted(set(seen)) == [0, 1, 2] and seen.count(1) == N_ITEMS
    scores = [[r["single-judge"].scores["All groups (overall score)"][i]["Overall quality"]
               for i in HUMAN] for r in by_repeat]
    assert scores[1] == [float(1 + (k + 2) % 5) for k in range(N_ITEMS)]

    (label, dim, result), = stability(by_repeat, state.item_list, ["Overall quality"])
    assert (label, dim) == ("Single judge", "Overall quality")
    assert result.alpha.value == pytest.approx(krippendorff_alpha(scores, "interval").value)
    assert result.flagged and "The single judge gives different scores when asked again" \
        in result.sentence

    # again: every repeat is kept, no call; reopening reads them back
    again = await run_repeats(project, state, _factory(project, llm, []), ["single-judge"], 3,
                              model=llm.model)
    assert llm.calls == 3 * N_ITEMS
    kept = load_repeats(project, state, ["single-judge"], 3, llm.model)
    assert len(kept) == 3
    assert [r["single-judge"].scores for r in kept] == [r["single-judge"].scores for r in again]
    assert len(load_repeats(project, state, ["single-judge"], 4, llm.model)) == 3


async def test_repeat_0_is_the_ordinary_run(project, scripted_llm):
    from core.majeval import session as st
    from core.majeval.repeats import stability
    from core.majeval.session.repeats import load_repeats, run_repeats

    state = st.choices.load_choices(project)
    llm = scripted_llm(_debate_reply)
    seen: list[int] = []
    first = await st.debates.run_debates(project, state, _factory(project, llm, seen), model=llm.model)
    one_run = llm.calls
    assert set(seen) == {0} and one_run > 0
    by_repeat = await run_repeats(project, state, _factory(project, llm, seen), None, 2,
                                  model=llm.model)
    assert llm.calls == 2 * one_run  # repeat 0 was kept; repeat 1 made its own calls
    assert seen.count(1) == one_run
    assert st.choices.load_choices(project).run_id == first.run_id  # the choices keep repeat 0's run
    overall = {r.item_id: r.overall for r in first.items}
    assert by_repeat[0]["full"].scores["All groups (overall score)"] == overall
    assert st.debates.load_run(project, state, llm.model).run_id == first.run_id
    assert st.debates.load_run(project, state, llm.model, repeat=1).run_id != first.run_id
    (label, _, result), = stability(load_repeats(project, state, None, 2, llm.model),
                                    state.item_list, ["Overall quality"])
    assert label == "Full personas, after debate"
    assert result.alpha.value == pytest.approx(1.0) and not result.flagged


async def test_the_estimate_counts_every_repeat_still_to_run(project, scripted_llm):
    from core.majeval import session as st
    from core.majeval.session import conditions as cd
    from core.majeval.session.repeats import run_repeats

    state = st.choices.load_choices(project)
    llm = scripted_llm(_Judge(lambda item, n: 3))
    profile = llm.profile()
    one = cd.estimate_conditions(project, state, ["single-judge"], profile)
    three = cd.estimate_conditions(project, state, ["single-judge"], profile, repeats=3)
    assert (one.calls, three.calls) == (N_ITEMS, 3 * N_ITEMS)
    await run_repeats(project, state, _factory(project, llm, []), ["single-judge"], 2,
                      model=profile)
    left = cd.estimate_conditions(project, state, ["single-judge"], profile, repeats=3)
    assert left.calls == N_ITEMS
    debates = st.debates.estimate_run(project, state.model_copy(
        update={"settings": DebateSettings()}), profile, repeats=2)
    assert debates.calls == 2 * st.debates.estimate_run(project, state, profile).calls


def test_too_many_repeats_are_refused(project):
    import asyncio

    from core.majeval import session as st
    from core.majeval.session.repeats import run_repeats

    with pytest.raises(ValueError, match="1 to 10 times"):
        asyncio.run(run_repeats(project, st.choices.load_choices(project), lambda _: None, None, 11))
