"""The methods' results as the judge: MAJ-Eval's overall scores with the groups' feedback,
InteractEval's checklist scores and answers with think-aloud samples held out."""

from __future__ import annotations

from core.interacteval.judge_check import judge_data as checklist_judge
from core.interacteval.model import (
    Checklist,
    ChecklistItem,
    QuestionAnswer,
    ScoringSettings,
    TextItem,
    TextScore,
)
from core.interacteval.pipeline import ScoringRun
from core.judge_check import Rating, judge_report
from core.majeval.judge_check import judge_data as debate_judge
from core.majeval.model import DebateSettings, Dimension, GroupResult, Item, ItemResult, Scale
from core.majeval.pipeline import EvaluationRun


def test_majeval_overall_scores_and_failed_items():
    items = [Item(id="a", content="Essay A", context="Prompt"), Item(id="b", content="Essay B")]
    results = [
        ItemResult(item_id="a", overall={"Clarity": 4.5},
                   groups=[GroupResult(item_id="a", group="Teachers", final_mean={"Clarity": 4.5},
                                       feedback="Clear and well argued.")]),
        ItemResult(item_id="b", status="failed", error="model down", overall={},
                   groups=[GroupResult(item_id="b", group="Teachers", status="failed",
                                       error="model down")]),
    ]
    run = EvaluationRun(items=results, personas=[], dimensions=[Dimension(name="Clarity")],
                        scale=Scale(minimum=1, maximum=7), settings=DebateSettings(), task="t",
                        model="m1", run_id=4, item_inputs=items, finished_at="2026-11-24 10:00")
    judge = debate_judge(run)
    assert judge.scale == (1, 7) and judge.model == "m1" and "run 4" in judge.source
    a, b = judge.items
    assert (a.text, a.context, a.scores) == ("Essay A", "Prompt", {"Clarity": 4.5})
    assert "Teachers (4.50): Clear and well argued." in a.explanation["Clarity"]
    assert b.scores == {"Clarity": None} and "failed" in b.explanation["Clarity"]
    assert not any(i.held_out for i in judge.items)


def test_interacteval_answers_and_think_aloud_samples_held_out():
    checklist = Checklist(dimension="Coherence", items=[ChecklistItem(question="Q one?"),
                                                        ChecklistItem(question="Q two?")])

    def score(text_id, yes, sample=False):
        answers = [QuestionAnswer(number=1, question="Q one?", answer="yes" if yes else "no"),
                   QuestionAnswer(number=2, question="Q two?", answer="yes")]
        return TextScore(text_id=text_id, dimension="Coherence", status="ok",
                         score=5.0 if yes else 3.0, answers=answers, think_aloud_sample=sample)

    run = ScoringRun(scores=[score("s1", True, sample=True), score("s2", False), score("s3", True),
                             TextScore(text_id="s4", dimension="Coherence", status="failed",
                                       note="no usable answer")],
                     settings=ScoringSettings(), model="m2", run_id=2, checklists=[checklist])
    judge = checklist_judge(run, [TextItem(id="s2", text="Summary two", source="Article")])
    assert judge.questions == {"Coherence": ["Q one?", "Q two?"]}
    s1, s2, _s3, s4 = judge.items
    assert s1.held_out and not s2.held_out
    assert (s2.text, s2.context) == ("Summary two", "Article")
    assert s2.answers["Coherence"] == {"Q one?": False, "Q two?": True}
    assert s2.explanation["Coherence"] == "Q1 No; Q2 Yes"
    assert s4.scores == {"Coherence": None} and "no usable answer" in s4.explanation["Coherence"]
    ratings = [Rating(i, "Anna", {"Coherence": v}, {"Coherence": {"Q one?": True}})
               for i, v in (("s1", 5.0), ("s2", 4.0), ("s3", 5.0))]
    report = judge_report(judge, ratings, n_boot=0)
    assert report.held_out == 1 and report.rated == 2
    assert report.questions[0].result.n == 2
    assert report.questions[0].result.judge_no_person_yes == 1
