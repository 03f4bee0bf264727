"""Where the agreement is shown, a judge that ignores the texts is flagged and the length
baseline sits beside it (issue 28, point 1): InteractEval's and MAJ-Eval's results pages, with a
made-up run of 30 or 300 texts (pytest-qt, offscreen)."""

from __future__ import annotations

import random

import pytest

from core.interacteval import TextScore
from core.interacteval.agreement import agreement_rows, human_agreement
from core.interacteval.model import QuestionAnswer
from core.majeval.agreement import LENGTH_GROUP, within_group_alpha
from core.majeval.agreement import human_agreement as majeval_agreement
from core.majeval.model import (
    AgentResult,
    DebateSettings,
    Dimension,
    GroupResult,
    Item,
    ItemResult,
    Persona,
    Scale,
)
from core.majeval.pipeline import EvaluationRun
from desktop.interacteval.results import ResultsView as ChecklistResults
from desktop.majeval.results import ResultsView as DebateResults

QUESTIONS = ["Does it use precise words?", "Does it vary its words?", "Is it idiomatic?",
             "Does it avoid repetition?", "Is the register right?", "Are the words spelt?"]


def _essays(n: int, *, alike: bool) -> list[TextScore]:
    """Essays whose human score follows the words they use; a judge that answers alike gives
    most of them the pattern YNYNYN (the others' answers follow their length)."""
    rng = random.Random(n)
    out = []
    for i in range(n):
        quality = rng.randint(0, 6)
        words = 60 + rng.randint(0, 200)
        if alike:
            pattern = "YNYNYN" if i % 8 < 5 else ("YYYYYN" if words > 160 else "NNNNYN")
        else:
            pattern = "".join("Y" if k < quality else "N" for k in range(6))
            pattern = pattern[::-1] if i % 2 else pattern
        answers = [QuestionAnswer(number=k + 1, question=q, answer="yes" if a == "Y" else "no")
                   for k, (q, a) in enumerate(zip(QUESTIONS, pattern, strict=True))]
        yes = pattern.count("Y")
        out.append(TextScore(text_id=f"E{i:03d}", dimension="Vocabulary", status="ok",
                             score=1 + 4 * yes / 6, yes=yes, answered=6, questions=6,
                             answers=answers, human=1 + quality * 4 / 6,
                             text=" ".join(["word"] * words), source_id="P1"))
    return out


def _Run(scores):
    """A checklist scoring run as the results view gets it (the built-in model's name)."""
    from core.interacteval import Checklist, ChecklistItem, ScoringRun, ScoringSettings

    return ScoringRun(scores=scores, settings=ScoringSettings(),
                      model="gemma-3-270m (built-in)",
                      checklists=[Checklist(dimension="Vocabulary",
                                            items=[ChecklistItem(question=q)
                                                   for q in QUESTIONS])])


@pytest.mark.parametrize("n", [30, 300])
def test_checklist_results_flag_a_judge_answering_alike(qtbot, n):
    view = ChecklistResults()
    qtbot.addWidget(view)
    view.resize(1280, 800)
    run = _Run(_essays(n, alike=True))
    view.set_run(run)
    assert not view.banner.isHidden()
    assert "may not be reading the texts" in view.banner.text()
    assert "got exactly the same answers (YNYNYN)" in view.banner.text()
    view.set_agreement(agreement_rows(human_agreement(run.scores, n_boot=50)))
    view.tabs.setCurrentIndex(2)
    compared = {view.agreement_model.value(r, "compared")
                for r in range(view.agreement_model.rowCount())}
    assert compared == {"Checklist", "Text length alone (baseline)"}
    headline = view.agreement_headline.text()
    assert "Text length alone" in headline
    assert "Careful: the checklist of Vocabulary may not be reading the texts" in headline
    view.show()
    view.grab().save(f"/tmp/i28a-checklist-alike-{n}.png")


def test_checklist_results_stay_quiet_for_a_judge_that_reads(qtbot):
    view = ChecklistResults()
    qtbot.addWidget(view)
    run = _Run(_essays(30, alike=False))
    view.set_run(run)
    assert view.banner.isHidden()
    view.set_agreement(agreement_rows(human_agreement(run.scores, n_boot=0)))
    assert "Careful" not in view.agreement_headline.text()


def _debate(n: int, *, alike: bool) -> EvaluationRun:
    personas = [Persona(id=f"{g}{k}", group=g, name=f"{g} {k}")
                for g in ("Patients", "Clinicians") for k in range(2)]
    rng = random.Random(n)
    items, inputs = [], []
    for i in range(n):
        quality = rng.randint(1, 5)
        inputs.append(Item(id=f"a{i:03d}", content=" ".join(["word"] * rng.randint(20, 120)),
                           human={"Safety": float(quality)}))
        groups = []
        for g in ("Patients", "Clinicians"):
            score = 3 if alike else quality
            agents = [AgentResult(persona_id=f"{g}{k}", agent=f"{g} {k}", final={"Safety": score})
                      for k in range(2)]
            groups.append(GroupResult(item_id=f"a{i:03d}", group=g, agents=agents,
                                      initial_mean={"Safety": float(score)},
                                      final_mean={"Safety": float(score)}))
        items.append(ItemResult(item_id=f"a{i:03d}", status="ok", groups=groups,
                                overall={"Safety": groups[0].final_mean["Safety"]}))
    return EvaluationRun(items=items, personas=personas, dimensions=[Dimension(name="Safety")],
                         scale=Scale(), settings=DebateSettings(), task="Judge answers.",
                         model="gemma-3-270m (built-in)", item_inputs=inputs)


@pytest.mark.parametrize("n", [30, 300])
def test_debate_results_flag_a_panel_scoring_alike(qtbot, n):
    view = DebateResults()
    qtbot.addWidget(view)
    view.resize(1280, 800)
    run = _debate(n, alike=True)
    view.set_run(run, alphas=within_group_alpha(run), humans=majeval_agreement(run, n_boot=50))
    assert not view.alert.isHidden()
    assert f"every one of the {n} items got the same score (3)" in view.alert.text() \
        or f"{n} of {n} items got exactly the same answers" in view.alert.text()
    groups = {view.human_model.rows()[r]["group"] for r in range(view.human_model.rowCount())}
    assert LENGTH_GROUP in groups
    assert "Text length alone" in view.human_headline.text() or \
        "undefined" in view.human_headline.text()
    view.tabs.setCurrentIndex(3)
    view.show()
    view.grab().save(f"/tmp/i28a-debate-alike-{n}.png")


def test_debate_results_stay_quiet_for_a_panel_that_reads(qtbot):
    view = DebateResults()
    qtbot.addWidget(view)
    run = _debate(30, alike=False)
    view.set_run(run, alphas=within_group_alpha(run), humans=majeval_agreement(run, n_boot=0))
    assert view.alert.isHidden()
    assert "Text length alone" in view.human_headline.text()
