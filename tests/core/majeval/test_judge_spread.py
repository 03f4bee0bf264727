"""A MAJ-Eval panel that ignores the items is caught (issue 28, point 1): six glaucoma
patient-education answers (two safe, two mediocre, two unsafe) rated by a clinician, debated
by a scripted panel that either scores every answer alike (flagged in the Read me and the
Agreement sheet) or reads them (not flagged). The length baseline (the answers' number of
words against the clinician's ratings) sits beside the agreement, checked against scipy."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats as sps

from core.majeval import Item, evaluate, human_agreement, within_group_alpha, write_results
from core.majeval.agreement import BASELINE, LENGTH_GROUP, judge_spreads

from .majeval_support import SYNTHESIS, evaluation, item_of, kind, persona, turn

Q = "Overall quality"
PERSONAS = [persona("Patients", "Ann Moss"), persona("Patients", "Ben Hart"),
            persona("Clinicians", "Dr Cai Wu"), persona("Clinicians", "Dr Dee Lund")]
ANSWERS = [  # (id, answer, the clinician's rating, what a careful reader would give)
    ("safe-1", ("Use your drops every day even when your eyes feel fine; glaucoma damage is "
                "silent. Keep your eye appointments."), 5, 5),
    ("safe-2", ("Never stop your glaucoma drops without asking your eye doctor. Tell the doctor "
                "about other medicines you take, and come to every pressure check."), 5, 5),
    ("so-so-1", "Drops help with glaucoma. Try to use them.", 3, 3),
    ("so-so-2", ("Glaucoma is about eye pressure. Some people use drops and some have laser "
                 "treatment, it depends on the person and what the doctor thinks."), 3, 3),
    ("unsafe-1", "If your eyes feel fine you can skip the drops for a while.", 1, 1),
    ("unsafe-2", ("Glaucoma drops are optional; carrots and rest will bring the pressure down "
                  "on their own, so many patients stop the drops after a month."), 1, 1),
]


@pytest.fixture
def answers() -> list[Item]:
    return [Item(id=i, content=text, context="A patient asks about glaucoma.",
                 human={Q: float(rating)}) for i, text, rating, _ in ANSWERS]


def _panel(reads: bool):
    careful = {text: score for _i, text, _r, score in ANSWERS}

    def reply(messages):
        what = kind(messages)
        if what == "aggregate":
            return SYNTHESIS
        score = careful[item_of(messages)] if reads else 3
        if what == "phase1":
            return evaluation(score)
        if what == "turn":
            return turn("NO MORE COMMENTS", score, done=True)
        raise AssertionError(what)
    return reply


async def _workbook(scripted, answers, tmp_path, reads):
    llm, gateway = scripted(_panel(reads))
    run = await evaluate(PERSONAS, answers, "Judge glaucoma answers for patients.", gateway,
                         model=llm.model)
    path = tmp_path / f"{'reads' if reads else 'alike'}.xlsx"
    write_results(path, run, alphas=within_group_alpha(run), humans=human_agreement(run))
    return run, pd.read_excel(path, sheet_name=None)


async def test_a_panel_scoring_every_answer_alike_is_flagged(scripted, answers, tmp_path):
    run, book = await _workbook(scripted, answers, tmp_path, reads=False)
    readme = book["Read me"]
    warnings = readme[readme.iloc[:, 0] == "WARNING"].iloc[:, 1].tolist()
    assert len(warnings) == 1
    assert "may not be reading the items" in warnings[0]
    assert "every one of the 6 items got the same score (3)" in warnings[0] \
        or "6 of 6 items got exactly the same answers" in warnings[0]
    agreement = book["Agreement"]
    flagged = agreement[agreement.note.fillna("").str.contains("FLAGGED")]
    assert set(flagged.statistic) == {"share with the most common answers",
                                      "share with the most common score"}
    assert set(flagged.value) == {1.0}
    ((_dim, spread),) = judge_spreads(run)
    assert spread.flagged and spread.top_pattern == "3, 3, 3, 3"


async def test_a_panel_that_reads_the_answers_is_not_flagged(scripted, answers, tmp_path):
    run, book = await _workbook(scripted, answers, tmp_path, reads=True)
    readme = book["Read me"]
    assert not (readme.iloc[:, 0] == "WARNING").any()
    assert not book["Agreement"].note.fillna("").str.contains("FLAGGED").any()
    ((_dim, spread),) = judge_spreads(run)
    assert not spread.flagged


async def test_the_length_baseline_sits_beside_the_agreement(scripted, answers, tmp_path):
    _run, book = await _workbook(scripted, answers, tmp_path, reads=True)
    agreement = book["Agreement"]
    rows = agreement[agreement.group == LENGTH_GROUP]
    assert set(rows.stage) == {BASELINE} and set(rows.human_dimension) == {Q}
    lengths = [len(text.split()) for _i, text, _r, _s in ANSWERS]
    ratings = [r for _i, _t, r, _s in ANSWERS]
    for statistic, value in (("Spearman rho", sps.spearmanr(lengths, ratings).statistic),
                             ("Kendall tau-b", sps.kendalltau(lengths, ratings).statistic),
                             ("Pearson r", sps.pearsonr(lengths, ratings).statistic)):
        row = rows[rows.statistic == statistic].iloc[0]
        assert row.value == pytest.approx(value, abs=1e-12)
        assert row.n == 6
        assert "baseline the personas must beat" in row.note
    # the same kind of correlation and the same bootstrap as the personas' row beside it
    overall = agreement[(agreement.group == "All groups (overall score)")
                        & (agreement.stage == "after debate")
                        & (agreement.statistic == "Spearman rho")].iloc[0]
    length = rows[rows.statistic == "Spearman rho"].iloc[0]
    assert overall.kind == length.kind
    assert overall.note.split(";")[0] == length.note.split(";")[0]  # bootstrap: pairs, seed
