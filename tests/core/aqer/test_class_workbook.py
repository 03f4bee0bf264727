"""Issue 27 on a teacher's class workbook (``class_workbook``: Powergrading answers with a title
row, a blank row, the header in row 3, a Total column, a Comments column with three comments, an
absent student, two chatbot rows and a question split 13 vs 11), through ``evaldesk aqer`` and
the session code the wizard runs (tiny encoder; the real model in the last test)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from openpyxl import load_workbook

from core import cli
from core.aqer.inputs import check_answers, guess_roles, read_answers, read_responses
from core.aqer.model import AqerChoices, AqerSettings, ColumnRoles
from core.aqer.pipeline import aqer
from core.aqer.report import read_report
from core.embeddings import Encoder as RealEncoder
from tests.core.aqer.class_workbook import (
    ABSENT,
    IEP,
    QUESTIONS,
    SPLIT_QUESTION,
    class_workbook,
)
from tests.core.cli.aqer_routes_support import TinyEncoder

AI_ROWS = ["--llm-worker", "ChatGPT", "--llm-worker", "Gemini"]


@pytest.fixture(autouse=True)
def tiny_encoder(monkeypatch):
    monkeypatch.setattr("core.embeddings.Encoder", TinyEncoder)


@pytest.fixture(scope="module")
def titled(tmp_path_factory) -> Path:
    """The class workbook as the teacher keeps it: title, blank row, header in row 3."""
    return class_workbook(tmp_path_factory.mktemp("class") / "period 3.xlsx")


@pytest.fixture(scope="module")
def workbook(tmp_path_factory) -> Path:
    """The same class with the header in row 1, so each point below is tested on its own (the
    title row is the first test's; the route tests use the whole shape)."""
    return class_workbook(tmp_path_factory.mktemp("class") / "period 3.xlsx", title=False)


def run(*argv) -> int:
    try:
        return cli.main(["aqer", *map(str, argv)])
    except SystemExit as exc:
        return int(exc.code)


def scores(path: Path) -> dict[str, float]:
    workers = read_report(path)["Workers"]
    return {w: s for w, s in zip(workers["worker"], workers["score"]) if pd.notna(s)}


def prepared(path: Path, **options):
    columns = {"format": "wide", "wide_rows": "worker", "worker_col": "Student",
               "grade_col": "Total", "ignore_cols": ["Comments"],
               "llm_workers": ["ChatGPT", "Gemini"], **options}
    return read_responses(path, ColumnRoles(**columns))


# ------------------------------------------------------------------ 2. the title row


def test_the_title_row_is_not_the_header_and_the_row_used_is_said(titled, tmp_path, capsys):
    workbook = titled
    sheets, read = read_answers(workbook)
    assert read.header_row == 3 and read.rows[0] == 4
    assert list(read.frame.columns)[:2] == ["Student", QUESTIONS[1]]
    assert "Row 3 is read as the header" in read.header_note
    guessed = guess_roles(read, sheets)
    assert guessed.roles.format == "wide" and guessed.roles.worker_col == "Student"
    # nothing tells the teacher to type a name into cell B1
    check = check_answers(read, AqerChoices(columns=guessed.roles))
    assert check.ok, [i.message for i in check.errors]
    assert not any("B1" in i.message for i in check.issues)

    out = tmp_path / "o.xlsx"
    assert run(workbook, "-o", out, *AI_ROWS, "--grade-col", "Total") == 0
    err = capsys.readouterr().err
    assert "header: Row 3 is read as the header" in err and "--header-row" in err
    readme = dict(load_workbook(out)["Read me"].iter_rows(min_row=2, max_col=2, values_only=True))
    assert readme["Header row"].startswith("Row 3 is read as the header")
    # chosen with --header-row: the same table; a row that cannot be the header is said
    assert run(workbook, "-o", tmp_path / "chosen.xlsx", *AI_ROWS, "--grade-col", "Total",
               "--header-row", "3") == 0
    assert "Row 3 is the header (as chosen)" in capsys.readouterr().err
    assert scores(tmp_path / "chosen.xlsx") == scores(out)
    assert run(workbook, "-o", tmp_path / "bad.xlsx", "--header-row", "2") == 1
    assert "Row 2 cannot be the header row: row 2 is empty" in capsys.readouterr().err


# ------------------------------------------------------------------ 3. the Comments column


def test_a_comments_column_is_left_out_before_the_run_with_the_reason(workbook, tmp_path,
                                                                     capsys):
    sheets, read = read_answers(workbook)
    guessed = guess_roles(read, sheets)
    assert "Comments" in guessed.roles.ignore_cols
    note = next(n for n in guessed.notes if "'Comments'" in n)
    assert "looks like notes" in note and "its header names a note" in note
    assert "only 3 of 32 rows have something in it" in note
    assert run(workbook, "-o", tmp_path / "o.xlsx", *AI_ROWS, "--grade-col", "Total") == 0
    err = capsys.readouterr().err
    assert "left out 'Comments'" in err
    # the student with "extra time (IEP)" scores as in the same class without the column
    without = class_workbook(tmp_path / "no comments.xlsx", comments=False, title=False)
    assert run(without, "-o", tmp_path / "without.xlsx", *AI_ROWS, "--grade-col", "Total") == 0
    assert scores(tmp_path / "o.xlsx") == pytest.approx(scores(tmp_path / "without.xlsx"))
    # kept on purpose (--keep-col): scored as a question, and the check says what it looks like
    assert run(workbook, "-o", tmp_path / "kept.xlsx", *AI_ROWS, "--grade-col", "Total",
               "--keep-col", "Comments") == 0
    kept = scores(tmp_path / "kept.xlsx")
    assert kept[IEP] > scores(tmp_path / "o.xlsx")[IEP]  # three filled cells beat every blank
    setup = AqerChoices(columns=guessed.roles.model_copy(update={"ignore_cols": []}))
    warning = next(i for i in check_answers(read, setup).warnings if "looks like notes" in
                   i.message)
    assert "Comments" in warning.message


def test_a_mostly_empty_or_dated_column_is_proposed_too(tmp_path):
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["Student", "Q1", "Q2", "Q3", "Handed in", "Extra"])
    for k in range(12):
        sheet.append([f"s{k}", "bill of rights", "speech", "congress", f"2024-03-{k + 1:02d}",
                      "see me" if k == 3 else None])
    book.save(tmp_path / "dated.xlsx")
    sheets, read = read_answers(tmp_path / "dated.xlsx")
    roles = guess_roles(read, sheets).roles
    assert roles.ignore_cols == ["Handed in", "Extra"]


# ------------------------------------------------------------------ 4. the absent student


def test_an_absent_student_does_not_reset_everyone_s_score(workbook, tmp_path):
    encoder = TinyEncoder()
    result = aqer(prepared(workbook), encoder)
    workers = result.workers.set_index("worker")
    assert pd.isna(workers.loc[ABSENT, "score"])
    assert workers.loc[ABSENT, "note"] == "absent? no answers; not scored"
    absent = [n for n in result.warnings if n.topic == "Absent?"]
    assert [n.worker for n in absent] == [ABSENT]
    assert not any(n.topic == "Empty answer" and n.worker == ABSENT for n in result.warnings)
    # the others score as in the same class without that row
    without = class_workbook(tmp_path / "without.xlsx", leave_out=(ABSENT,), title=False)
    alone = aqer(prepared(without), encoder).workers.set_index("worker")["score"]
    assert workers["score"].dropna().to_dict() == pytest.approx(alone.to_dict())
    # asked for: scored as the weakest (the old behaviour), and everyone else moves
    kept = aqer(prepared(workbook), encoder, settings=AqerSettings(keep_absent=True))
    k = kept.workers.set_index("worker")["score"]
    assert k[ABSENT] == 0 and k.drop(ABSENT).min() > 0
    # the Run page and the results count the same people, either way
    check = check_answers(read_answers(workbook)[1], AqerChoices(columns=ColumnRoles(
        format="wide", wide_rows="worker", worker_col="Student", grade_col="Total",
        ignore_cols=["Comments"], llm_workers=["ChatGPT", "Gemini"])))
    assert "from 29 workers" in check.prepared.describe(False)
    assert "answered nothing (absent?), not scored: 'Jonas Weber'" in check.prepared.describe()
    assert result.workers["score"].notna().sum() == 29
    assert "from 30 workers" in check.prepared.describe(True)
    assert kept.workers["score"].notna().sum() == 30
    page = [i.message for i in check.warnings if "absent?" in i.message]
    assert page == [absent[0].message]  # the page says it as the results do


def test_keep_absent_on_the_command_line(workbook, tmp_path, capsys):
    assert run(workbook, "-o", tmp_path / "o.xlsx", *AI_ROWS, "--grade-col", "Total") == 0
    assert "absent? not scored (no answers): 'Jonas Weber'" in capsys.readouterr().err
    assert run(workbook, "-o", tmp_path / "k.xlsx", *AI_ROWS, "--grade-col", "Total",
               "--keep-absent") == 0
    assert "30 workers scored" in capsys.readouterr().err
    assert scores(tmp_path / "k.xlsx")[ABSENT] == 0


# ------------------------------------------------------------------ 5. the split question


def test_the_common_mistake_is_named_as_the_consensus_not_the_best_answer(workbook, tmp_path,
                                                                         capsys):
    result = aqer(prepared(workbook), TinyEncoder())
    questions = result.questions.set_index("question")
    camps = questions.loc[SPLIT_QUESTION, "camps"]
    assert "secretary of state" in camps and "speaker of the house" in camps
    assert re.match(r"\d+ answers like “.+”, \d+ like “.+”", camps)
    notice = next(n for n in result.warnings if n.topic == "Answers split into camps"
                  and n.question == SPLIT_QUESTION)
    assert "check this question by hand" in notice.message
    # a question everyone answered alike is not flagged
    assert questions.loc[QUESTIONS[1], "camps"] == ""
    assert run(workbook, "-o", tmp_path / "o.xlsx", *AI_ROWS, "--grade-col", "Total") == 0
    assert "answers split into camps on" in capsys.readouterr().err
    header = [c.value for c in load_workbook(tmp_path / "o.xlsx")["Questions"][1]]
    assert "Best answer" not in header
    assert "Answer closest to the class's consensus" in header
    assert "Answers split into camps" in header


# ------------------------------------------------------------------ 6. AI on the workers' scale


def test_ai_answers_stand_on_the_workers_scale(workbook, tmp_path, capsys):
    result = aqer(prepared(workbook), TinyEncoder())
    workers = result.workers.dropna(subset=["score"])
    x, y = workers["similarity_to_others"].to_numpy(), workers["score"].to_numpy()
    order = np.argsort(x)
    for _, row in result.llm_summary.iterrows():
        assert row["score_on_workers_scale"] == pytest.approx(
            np.interp(row["mean_score"], x[order], y[order]))
        assert row["score_on_workers_scale"] != pytest.approx(row["mean_score"])
    assert run(workbook, "-o", tmp_path / "o.xlsx", *AI_ROWS, "--grade-col", "Total") == 0
    err = capsys.readouterr().err
    assert re.search(r"AI ChatGPT: 0\.\d\d on the workers' 0-1 scale, above \d+% of the workers",
                     err)
    assert "length and style move it too, not only correctness" in err
    summary = read_report(tmp_path / "o.xlsx")["LLM summary"]
    assert {"score_on_workers_scale", "percentile_among_workers"} <= set(summary.columns)


# ------------------------------------------------------------------ 7. and 8. numbers, words


def test_one_interval_per_number_and_no_exponents(workbook, tmp_path, capsys):
    out = tmp_path / "o.xlsx"
    assert run(workbook, "-o", out, *AI_ROWS, "--grade-col", "Total") == 0
    err = capsys.readouterr().err
    assert "left out (choose it as the expert grades" not in err  # --grade-col Total was taken
    assert "-0.00" not in err
    tables = read_report(out)
    agreement = tables["Agreement"].set_index(["comparison", "statistic"])
    row = agreement.loc[("AQER score vs expert grade (per worker)", "Pearson r")]
    comparison = tables["Comparison"].set_index("Condition").loc["AQER"]
    assert row["ci_low"] == pytest.approx(comparison["r 95% CI low"])
    assert row["ci_high"] == pytest.approx(comparison["r 95% CI high"])
    book = load_workbook(out)
    formats = {c.number_format for ws in book.worksheets for r in ws.iter_rows() for c in r}
    assert not any("E+" in f or "E-" in f for f in formats), formats
    texts = [c.value for ws in book.worksheets for r in ws.iter_rows() for c in r
             if isinstance(c.value, str)]
    assert not [t for t in texts if re.search(r"\d\.?\d*e[-+]\d\d", t)]
    assert not [t for t in texts if "-0.00" in t]
    readme = dict(book["Read me"].iter_rows(min_row=2, max_col=2, values_only=True))
    # one grade per person: said so, not "the mean grade of the answers"
    assert readme["Expert grades"].startswith("Each person's own grade")
    assert readme["Tolerance (RMSE of weights)"] == "0.000001"
    workers_words = next(t for t in texts if t.startswith("One row per worker, best first"))
    assert "the grade your sheet gives each person" in workers_words
    assert "mean of the grades" not in workers_words


def test_the_device_is_named_alike_when_every_vector_is_cached(workbook):
    from core.aqer.session import CACHED_DEVICE
    from core.aqer.session.choices import open_answers
    from core.aqer.session.results import run_choices
    from core.project import Project

    with Project.create_untitled(method="aqer") as project:
        opened = open_answers(project, AqerChoices(), workbook)
        setup = opened.choices.model_copy(
            update={"columns": guess_roles(opened.read, opened.sheets).roles})
        first = run_choices(project, setup)
        assert first.result.device == "cpu"
        again = run_choices(project, setup.model_copy(update={
            "settings": setup.settings.model_copy(update={"max_iterations": 50})}))
        # the model did not run: said so, never the setting "auto"
        assert again.result.device == CACHED_DEVICE


@pytest.mark.slow
def test_the_split_question_with_the_real_embedding_model(workbook):
    """The bundled all-MiniLM-L6-v2 (imported before the stand-in replaces it): question 8's
    wrong "secretary of state" is the answer closest to the consensus, and the question is
    flagged with both camps; the chatbots' full sentences, all right, sit low on the scale."""
    result = aqer(prepared(workbook), RealEncoder())
    questions = result.questions.set_index("question")
    assert "secretary of state" in questions.loc[SPLIT_QUESTION, "best_response"]
    camps = questions.loc[SPLIT_QUESTION, "camps"]
    assert "secretary of state" in camps and "speaker of the house" in camps
    flagged = [q for q, c in questions["camps"].items() if c]
    assert len(flagged) <= 3  # a signal, not noise on every question
    for _, row in result.llm_summary.iterrows():
        assert row["percentile_among_workers"] < 50 and row["score_on_workers_scale"] < 0.6


def test_instructions_name_a_row_where_the_layout_has_rows(workbook):
    """Issue 27: "add the AI's answers with a model column" said to a teacher whose sheet has a
    row per student."""
    from core.aqer.session import AqerSession
    from core.project import Project

    with Project.create_untitled(method="aqer") as project:
        session = AqerSession.open(project)
        opened = session.open_answers(workbook)
        session.save_choices(opened.choices.model_copy(
            update={"columns": guess_roles(opened.read, opened.sheets).roles}))
        asyncio.run(session.run())  # the chatbot rows not ticked: no AI answers
        judge, why = session.judge_to_check()
    assert judge is None
    assert "add a row for each AI" in why and "--llm-worker" in why
    assert "model column" not in why and "column beside" not in why


@pytest.mark.parametrize("ticked", [False, True])
def test_the_page_and_the_export_count_the_people_without_a_grade_alike(tmp_path, ticked):
    """Issue 27: "No grade for 2 people" on the page but 1 in the export. With a Grades sheet,
    the Columns page's check and the exported Warnings say the same, whether the chatbot rows
    are ticked as AI answers (then no one lacks a grade) or not (then both are people)."""
    from core.aqer.session.choices import open_answers
    from core.aqer.session.results import run_choices
    from core.project import Project

    path = class_workbook(tmp_path / "graded.xlsx", grades="sheet", title=False)
    with Project.create_untitled(method="aqer") as project:
        opened = open_answers(project, AqerChoices(), path)
        setup = opened.choices.model_copy(
            update={"columns": guess_roles(opened.read, opened.sheets).roles})
        assert setup.columns.grades_sheet == "Grades"
        if ticked:
            setup = setup.with_columns(llm_workers=["ChatGPT", "Gemini"])
        page = [i.message for i in check_answers(opened.read, setup).warnings
                if "No grade for" in i.message]
        export = [n.message for n in run_choices(project, setup).result.warnings
                  if "No grade for" in n.message]
    assert page == export
    assert len(page) == (0 if ticked else 1)
    if not ticked:
        assert "No grade for 2 people: 'ChatGPT', 'Gemini'" in page[0]
