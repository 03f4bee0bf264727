"""AQER's scores of the AI answers as the judge to check (core.aqer.judge_check): one item per
AI answer, the grading scale taken from the file's grades, compared by order only (AQER's
score is a similarity, not a grade), and the conditions as judges to pick from."""

from __future__ import annotations

import pandas as pd
import pytest

from core import stats
from core.aqer.inputs import guess_columns
from core.aqer.judge_check import DIMENSION, item_id
from core.aqer.model import AqerChoices, AqerCondition
from core.aqer.session import choices as ch
from core.aqer.session import conditions as cd
from core.aqer.session import judge as jd
from core.aqer.session import results as rs
from core.aqer.session import sample_path
from core.judge_check import Rating, judge_report, rank_judges, report_frames
from core.project import Project
from tests.core.aqer.aqer_support import TinyEncoder


@pytest.fixture
def scored():
    with Project.create_untitled(method="aqer") as project:
        opened = ch.open_answers(project, AqerChoices(), sample_path())
        setup = opened.choices.model_copy(update={
            "columns": guess_columns(opened.choices.columns, opened.read.frame.columns)})
        setup = setup.model_copy(update={"conditions": [AqerCondition(blank_answers="worst")]})
        ch.save_choices(project, setup)
        tiny = TinyEncoder()
        rs.run_choices(project, setup, tiny.factory)
        cd.run_conditions(project, setup, tiny.factory)
        yield project, setup


def _sheet_grades() -> list[Rating]:
    """The teacher's grades of the AI answers in the sample file, as one person's ratings."""
    sheet = pd.read_excel(sample_path(), sheet_name="Long")
    questions = list(dict.fromkeys(sheet["question"]))
    ai = sheet[sheet["is_llm"] == "yes"]
    return [Rating(item_id(r.worker, questions.index(r.question) + 1, r.question, r.response),
                   "Teacher", {DIMENSION: float(r.grade)}) for r in ai.itertuples()]


def test_ai_answers_are_the_items_with_aqers_scores_and_the_files_scale(scored):
    project, setup = scored
    judge, why = jd.judge_to_check(project, setup)
    assert why == "" and judge.method == "AQER" and judge.dimensions == [DIMENSION]
    stored = rs.load_result(project, setup)
    answers = stored.result.llm_answers
    assert len(judge.items) == len(answers) == 12
    first = judge.items[0]
    assert first.item_id.startswith("LLM A, question 1 (")
    assert first.text == "Canberra is the capital city of Australia."
    assert "What is the capital city of Australia?" in first.context
    assert first.scores[DIMENSION] == pytest.approx(answers["score"].iloc[0])
    assert "AQER score" in first.explanation[DIMENSION]
    assert judge.scale == (0, 2)  # the grades in the file go from 0 to 2
    assert not any(i.held_out for i in judge.items)


def test_report_compares_by_order_and_matches_the_results_agreement_table(scored):
    project, setup = scored
    judge, _ = jd.judge_to_check(project, setup)
    ratings = _sheet_grades()
    report = judge_report(judge, ratings)
    dim = report.dimensions[0]
    # the same pairs as the results' "AI answers, all models" row of the Agreement sheet
    table = rs.load_result(project, setup).result.agreement
    row = table[table["comparison"].str.startswith("AI answers, all models")
                & (table["statistic"].str.startswith("Kendall"))]
    assert dim.n == 12
    assert dim.kendall.value == pytest.approx(float(row["value"].iloc[0]))
    x = [judge.item(r.item_id).scores[DIMENSION] for r in ratings]
    y = [r.scores[DIMENSION] for r in ratings]
    assert dim.spearman.value == pytest.approx(stats.correlations(x, y).spearman.value)
    # a similarity is not a grade: no mean absolute error, said why; no made-up difference
    assert dim.mae is None and "not on the rating scale" in dim.mae_reason
    frames = report_frames(report)
    mae_row = frames["Dimensions"][frames["Dimensions"]["statistic"] == "Mean absolute error"]
    assert "not on the rating scale" in mae_row["note"].iloc[0]
    assert frames["Disagreements"]["difference"].isna().all()
    assert all(0 < g.rank_gap <= 1 for g in report.disagreements)
    assert report.disagreements == sorted(report.disagreements, key=lambda g: -g.rank_gap)
    assert "Judge's scale" in dict(report.describe())
    # two people: their alpha, but the judge is no rater on their scale
    ben = [Rating(r.item_id, "Ben", {DIMENSION: min(2.0, r.scores[DIMENSION] + 1)})
           for r in ratings]
    two = judge_report(judge, ratings + ben, n_boot=0)
    assert two.people[0].people.value is not None
    assert two.people[0].with_judge.value is None
    assert "not on the rating scale" in two.people[0].with_judge.reason


def test_conditions_are_the_judges_to_pick_and_one_becomes_the_projects_choice(scored):
    project, setup = scored
    candidates = jd.judges_to_compare(project, setup)
    names = [name for name, _, _ in candidates]
    assert names == ["AQER as set up (model all-MiniLM-L6-v2)",
                     "AQER (blank answers count as the weakest)"]
    assert [key for _, key, _ in candidates] == ["", names[1]]
    ranks = rank_judges(candidates, _sheet_grades())
    assert {r.name for r in ranks} == set(names) and all(r.n == 12 for r in ranks)
    chosen, done = cd.choose_condition(setup, names[1])
    assert chosen.settings.blank_answers == "worst"
    assert chosen.conditions == [AqerCondition(blank_answers=setup.settings.blank_answers)]
    assert done.startswith("The project now scores with the choices of AQER (blank answers "
                           "count as the weakest). The earlier choices stay")
    assert rs.load_result(project, chosen) is not None  # its results are already stored
    # the earlier choices are now the condition compared with
    assert [n for n, _, _ in jd.judges_to_compare(project, chosen)][1] == \
        "AQER (blank answers decided from the data)"
    same, said = cd.choose_condition(setup, "")
    assert same is setup and "nothing changed" in said


def test_no_ai_answers_says_what_to_do():
    with Project.create_untitled(method="aqer") as project:
        judge, why = jd.judge_to_check(project, AqerChoices())
        assert judge is None and "run AQER first" in why


def test_the_files_grades_of_the_ai_answers_become_one_raters_ratings(scored):
    project, setup = scored
    judge, _ = jd.judge_to_check(project, setup)
    ratings, notes = jd.file_grades(project, setup, judge)
    assert notes == [] and len(ratings) == 12
    assert {r.rater for r in ratings} == {"Grades in aqer_sample.xlsx"}
    expected = {(r.item_id, r.scores[DIMENSION]) for r in _sheet_grades()}
    assert {(r.item_id, r.scores[DIMENSION]) for r in ratings} == expected


def test_a_grade_stays_with_the_answer_it_was_given_to():
    """Another answer at the same place (the file changed) has another item name, so a grade
    kept in the project is never applied to an answer nobody graded."""
    first = item_id("LLM A", 2, "How many continents?", "Seven.")
    assert first.startswith("LLM A, question 2 (")
    assert item_id("LLM A", 2, "How many continents?", "Seven.") == first
    assert item_id("LLM A", 2, "How many continents?", "Eight.") != first
    assert item_id("LLM A", 2, "How many oceans?", "Seven.") != first


def test_choosing_a_condition_says_which_choices_the_project_now_scores_with():
    setup = AqerChoices(conditions=[AqerCondition(embedding_backend="torch"),
                                  AqerCondition(embedding_model="/models/e5-small/")])
    for key in ("AQER (through PyTorch)", "AQER (model e5-small)"):
        _chosen, done = cd.choose_condition(setup, key)
        assert done.startswith(f"The project now scores with the choices of {key}. ")


def test_choosing_a_backend_condition_keeps_the_earlier_backend_to_compare_with():
    """A condition that only runs the model another way (PyTorch) made the project's choice
    keeps the earlier way as a condition whose choices are the old setup's (so its stored
    results are found again)."""
    setup = AqerChoices(conditions=[AqerCondition(embedding_backend="torch")])
    chosen, _done = cd.choose_condition(setup, "AQER (through PyTorch)")
    assert chosen.embedding_backend == "torch"
    assert len(chosen.conditions) == 1
    before = chosen.conditions[0]
    assert before.embedding_backend == "auto"
    restored = before.apply(chosen)
    assert restored.embedding_backend == setup.embedding_backend
    assert restored.embedding_key() == setup.embedding_key()
