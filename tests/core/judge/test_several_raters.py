"""Several raters, blind, with adjudication (core.judge_check and core.grading): ratings kept in
the project with a version (old projects still read), the blind mark, agreed grades as their
own kind of rating, the balanced assignment with overlap, each rater's progress and queue."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from core.grading import plan as gp
from core.grading.adjudication import adjudicate, disputes
from core.judge_check import (
    AGREED,
    JudgeData,
    JudgeItem,
    Rating,
    grading_order,
    judge_report,
    load_adjudications,
    load_ratings,
    rater_names,
    record_unblinding,
    save_adjudication,
    save_rating,
)
from core.project import Project

QUESTION = "Is every claim supported by the source?"


def _judge(n: int = 30, *, seed: int = 0) -> JudgeData:
    rng = np.random.default_rng(seed)
    items = [JudgeItem(item_id=f"S{k:03d}", text=f"Summary {k}. " + "word " * int(rng.integers(20, 90)),
                       context=f"Article {k}",
                       scores={"Coherence": float(rng.integers(1, 6)),
                               "Relevance": float(rng.integers(2, 6))},
                       answers={"Coherence": {QUESTION: bool(rng.random() < 0.8)}})
             for k in range(n)]
    return JudgeData(method="InteractEval", items=items, dimensions=["Coherence", "Relevance"],
                     questions={"Coherence": [QUESTION]}, model="judge-model",
                     source="project run 1")


@pytest.fixture
def project(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as p:
        yield p


def test_old_ratings_still_read_and_new_ones_carry_a_version(project):
    # a rating as EvalDesk stored it before several blind raters: no version, kind or blind mark
    old = {"item_id": "S001", "rater": "Anna", "scores": {"Coherence": 4},
           "answers": {"Coherence": {QUESTION: True}}, "note": "fine"}
    project.put_artefact("interacteval.rating", '["Anna", "S001"]', old, origin="human")
    got = load_ratings(project, "interacteval")
    assert len(got) == 1 and got[0].scores == {"Coherence": 4.0} and got[0].note == "fine"
    assert got[0].kind == "human" and got[0].blind is None
    assert got[0].origin == "human (Anna)"
    # saving it again rewrites the same artefact in the new shape
    save_rating(project, "interacteval", Rating("S001", "Anna", {"Coherence": 5.0}))
    stored = project.get_artefact("interacteval.rating", '["Anna", "S001"]').payload
    assert stored["version"] == 2 and stored["kind"] == "human" and stored["blind"] is True
    assert len(load_ratings(project, "interacteval")) == 1


def test_grades_after_seeing_the_report_are_marked_not_blind(project):
    save_rating(project, "majeval", Rating("S001", "Anna", {"Coherence": 3.0}))
    save_rating(project, "majeval", Rating("S001", "Ben", {"Coherence": 4.0}))
    record_unblinding(project, "majeval", "Anna", "the report")
    record_unblinding(project, "majeval", "Anna", "the report")  # the first time is kept
    save_rating(project, "majeval", Rating("S002", "Anna", {"Coherence": 2.0}))
    save_rating(project, "majeval", Rating("S002", "Ben", {"Coherence": 2.5}))
    blind = {(r.rater, r.item_id): r.blind for r in load_ratings(project, "majeval")}
    assert blind == {("Anna", "S001"): True, ("Ben", "S001"): True, ("Anna", "S002"): False,
                     ("Ben", "S002"): True}
    assert [r.origin for r in load_ratings(project, "majeval")][2] == "human (Anna, not blind)"
    # read from someone's own file: not recorded
    save_rating(project, "majeval", Rating("S003", "Cleo", {"Coherence": 1.0}), blind=None)
    assert load_ratings(project, "majeval")[-1].blind is None


def test_an_agreed_grade_is_its_own_kind_and_never_replaces_a_raters_grade(project):
    anna = save_rating(project, "majeval", Rating("S004", "Anna", {"Coherence": 1.0},
                                                  note="incoherent"))
    ben = save_rating(project, "majeval", Rating("S004", "Ben", {"Coherence": 5.0}))
    agreed = save_adjudication(project, "majeval", "S004", decided_by="Cleo",
                               sources=[anna, ben], scores={"Coherence": 2.0},
                               note="the second paragraph breaks the thread")
    assert agreed.kind == "adjudicated" and agreed.at
    assert [r.rater for r in load_ratings(project, "majeval")] == ["Anna", "Ben"]
    got = load_adjudications(project, "majeval")
    assert len(got) == 1 and got[0].scores == {"Coherence": 2.0} and got[0].rater == "Cleo"
    assert [(s.rater, s.scores, s.note) for s in got[0].sources] == [
        ("Anna", {"Coherence": 1.0}, "incoherent"), ("Ben", {"Coherence": 5.0}, "")]
    assert got[0].sources[0].at == anna.at  # when each grade was given
    assert got[0].origin == "adjudicated (Cleo, from Anna, Ben)"
    # a second decision replaces the first, kept in the history with who decided
    save_adjudication(project, "majeval", "S004", decided_by="Dan", sources=[anna, ben],
                      scores={"Coherence": 3.0})
    assert [r.scores for r in load_adjudications(project, "majeval")] == [{"Coherence": 3.0}]
    assert [e.who for e in project.list_edits(kind="majeval.rating")][-2:] == ["Cleo", "Dan"]
    with pytest.raises(ValueError, match="agreed grade"):
        save_adjudication(project, "majeval", "S004", decided_by="Dan", sources=[anna])
    assert rater_names(project) == ["Anna", "Ben", "Dan"]


def test_rater_names_lists_everyone_for_de_identification(project):
    save_rating(project, "majeval", Rating("S001", "Anna Lee", {"Coherence": 3.0}))
    save_rating(project, "interacteval", Rating("S001", "Ben Ode", {"Coherence": 3.0}))
    save_adjudication(project, "majeval", "S001", decided_by="Dr Cleo Park",
                      sources=load_ratings(project, "majeval"), scores={"Coherence": 3.0})
    gp.make_plan(project, "majeval", _judge(10), ["Anna Lee", "Eve Moss"], 2, who="Lead")
    record_unblinding(project, "interacteval", "Finn Roe", "the report")
    assert set(rater_names(project)) == {"Anna Lee", "Ben Ode", "Dr Cleo Park", "Eve Moss",
                                         "Finn Roe"}


@pytest.mark.parametrize(("n", "raters", "k"), [(30, 3, 2), (30, 3, 3), (300, 4, 2),
                                                (300, 5, 3), (7, 3, 2)])
def test_assignment_is_balanced_and_overlaps(n, raters, k):
    items = [f"i{j}" for j in range(n)]
    names = [f"R{j}" for j in range(raters)]
    got = gp.assign(items, names, k, seed=3)
    loads = [len(v) for v in got.values()]
    assert max(loads) - min(loads) <= 1 and sum(loads) == n * k
    per_item = {i: [r for r in names if i in got[r]] for i in items}
    assert all(len(v) == k for v in per_item.values())  # every item to exactly k raters
    for r in names:  # each rater's items keep the given order
        assert got[r] == [i for i in items if i in set(got[r])]
    shared = [len(set(got[a]) & set(got[b])) for a, b in itertools.combinations(names, 2)]
    expected = n * k * (k - 1) / (raters * (raters - 1))  # shares of a perfectly even design
    assert min(shared) >= 1 and max(shared) - min(shared) <= max(2, 0.2 * expected)
    assert gp.assign(items, names, k, seed=3) == got  # the same seed, the same assignment


def test_assignment_refuses_what_cannot_give_agreement():
    with pytest.raises(ValueError, match="from 2 to 3 raters"):
        gp.assign(["a", "b"], ["A", "B", "C"], 1, seed=0)
    with pytest.raises(ValueError, match="named twice"):
        gp.assign(["a"], ["A", "A "], 2, seed=0)
    with pytest.raises(ValueError, match="at least two raters"):
        gp.assign(["a"], ["A"], 1, seed=0)


def test_plan_queue_and_progress_per_rater(project):
    judge = _judge(30)
    plan = gp.make_plan(project, "interacteval", judge, ["Anna", "Ben", "Cleo"], 2, who="Lead")
    assert gp.load_plan(project, "interacteval") == plan
    assert plan.made_by == "Lead" and "each for 2 of 3 raters" in plan.describe()
    assert [e.who for e in project.list_edits(kind="interacteval.grading_plan")] == ["Lead"]
    choice = gp.order_choice(project, "interacteval")
    order = grading_order(judge, choice.seed)
    queue = gp.rater_queue(judge, choice, rater="Anna", plan=plan)
    assert queue == [i for i in order if i in set(plan.items["Anna"])] and len(queue) == 20
    # someone outside the plan is offered every item
    assert gp.rater_queue(judge, choice, rater="Zoe", plan=plan) == order
    for item in queue[:5]:
        save_rating(project, "interacteval", Rating(item, "Anna", {"Coherence": 3.0}))
    outside = next(i for i in order if i not in set(plan.items["Anna"]))
    save_rating(project, "interacteval", Rating(outside, "Anna", {"Coherence": 3.0}))
    progress = {p.rater: p for p in gp.rater_progress(judge, load_ratings(
        project, "interacteval"), plan)}
    assert (progress["Anna"].graded, progress["Anna"].assigned, progress["Anna"].outside) == (
        5, 20, 1)
    assert progress["Ben"].graded == 0 and progress["Ben"].remaining == 20
    assert progress["Anna"].sentence() == "Anna: 5 of 20 graded, 1 more outside their items"


def test_a_drawn_sample_is_recorded_offered_first_and_used_for_the_corrected_mean(project):
    judge = _judge(60)
    drawn = gp.draw_sample(project, "majeval", judge, 20, who="Lead", seed=11)
    again = gp.drawn_sample(project, "majeval")
    assert again.items == drawn.items and again.seed == 11 and again.drawn_by == "Lead"
    assert len(set(drawn.items)) == 20 and "20 of 60 items drawn at random by Lead" in \
        again.describe()
    choice = gp.order_choice(project, "majeval")
    queue = gp.rater_queue(judge, choice, rater="Anna", sample=again)
    assert set(queue[:20]) == set(drawn.items) and len(queue) == 60
    # grade 12 of the drawn items and 5 others: only the drawn ones correct the mean
    rng = np.random.default_rng(0)
    graded = list(drawn.items[:12]) + [i for i in queue[20:25]]
    for item in graded:
        save_rating(project, "majeval", Rating(item, "Anna", {
            "Coherence": float(rng.integers(1, 6)), "Relevance": 3.0}))
    ratings = load_ratings(project, "majeval")
    random, how = gp.report_sample(project, "majeval", judge, {r.item_id for r in ratings})
    assert random == set(drawn.items[:12]) and how.startswith("12 graded of the 20 of 60")
    report = judge_report(judge, ratings, random_items=random, random_how=how, n_boot=0)
    row = next(c for c in report.corrected if c.dimension == "Coherence" and not c.group)
    assert row.result.n_graded == 12 and row.result.n_graded_not_random == 5


def test_the_fewer_grades_order_is_recorded_and_keeps_its_random_part(project):
    judge = _judge(40)
    other = _judge(40, seed=5)
    choice = gp.choose_order(project, "interacteval", judge, gp.FEWER_GRADES, who="Lead",
                             others=[other])
    assert choice.order == gp.FEWER_GRADES and choice.by == "Lead"
    assert sorted(choice.items) == sorted(i.item_id for i in judge.items)
    assert sum(choice.random_part) == 20
    assert gp.order_choice(project, "interacteval") == choice  # recorded, not recomputed
    # the random part of the order: the first graded ones count, an ungraded one ends the run
    randoms = [i for i, r in zip(choice.items, choice.random_part, strict=True) if r]
    chosen = [i for i, r in zip(choice.items, choice.random_part, strict=True) if not r]
    got, how = gp.random_items(judge, choice, None, set(randoms[:6]) | set(chosen[:4])
                               | {randoms[7]})
    assert got == set(randoms[:6]) and "first 6 items" in how
    back = gp.choose_order(project, "interacteval", judge, gp.RANDOM, who="Ben")
    assert back.order == gp.RANDOM and back.seed == choice.seed


def test_disputes_beyond_the_threshold_and_the_agreed_grade_in_the_report(project):
    judge = _judge(30)
    ids = [i.item_id for i in judge.items]
    rng = np.random.default_rng(2)
    bases = []
    for k, item in enumerate(ids):
        base = float(rng.integers(1, 6))
        bases.append(base)
        for rater, shift in (("Anna", 0.0), ("Ben", 0.5 if k % 3 else 2.0), ("Cleo", 0.0)):
            save_rating(project, "interacteval", Rating(
                item, rater, {"Coherence": min(5.0, base + shift), "Relevance": 4.0},
                {"Coherence": {QUESTION: not (rater == "Cleo" and k == 4)}},
                note=f"{rater} on {item}"))
    ratings = load_ratings(project, "interacteval")
    wide = disputes(judge, ratings, threshold=1.0)
    big = {d.item_id for d in wide if any(x.question == "" for x in d.disputes)}
    # the items Ben graded 2 points higher (where the scale leaves room), not the half points
    assert big == {ids[k] for k in range(30) if k % 3 == 0 and bases[k] <= 3}
    assert all(x.spread > 1.0 for d in wide for x in d.disputes if not x.question)
    assert ids[4] in {d.item_id for d in wide}  # Cleo answered the question differently
    assert len(disputes(judge, ratings, threshold=0.0)) >= len(wide)
    first = wide[0]
    assert [r for r, _ in first.disputes[0].grades] == ["Anna", "Ben", "Cleo"]
    assert {n for _, n in first.notes} == {f"{r} on {first.item_id}" for r in ("Anna", "Ben",
                                                                              "Cleo")}
    adjudicate(project, "interacteval", first, decided_by="Dana",
               scores={"Coherence": 4.5}, allowed=judge.grades())
    with pytest.raises(ValueError, match="not one of the grades"):
        adjudicate(project, "interacteval", first, decided_by="Dana",
                   scores={"Coherence": 4.2}, allowed=judge.grades())
    agreed = load_adjudications(project, "interacteval")
    again = disputes(judge, ratings, threshold=1.0, adjudications=agreed)
    assert again[0].adjudication is not None and again[0].disputes[0].agreed == 4.5
    # the judge compared with the agreed grade on that item, the raters' mean elsewhere
    mean = judge_report(judge, ratings, n_boot=0)
    agreed_report = judge_report(judge, ratings, rater=AGREED, adjudications=agreed, n_boot=0)
    assert agreed_report.rater == AGREED and agreed_report.adjudicated == 1
    assert agreed_report.dimensions[0].mae != mean.dimensions[0].mae
    people = [r for r in agreed_report.agreement if r.between == "between people"]
    assert people[0].raters == "Anna, Ben, Cleo"  # the decider is not a rater
    labels = agreed_report.labels
    origins = {(row["origin"], row["by"]) for row in labels if row["item"] == first.item_id}
    assert origins == {("judge", "judge-model"), ("human", "Anna"), ("human", "Ben"),
                       ("human", "Cleo"), ("adjudicated", "Dana")}
    decided = next(r for r in labels if r["origin"] == "adjudicated")
    assert decided["label"] == 4.5 and "Anna: Coherence" in decided["decided_from"]
