"""``evaldesk aqer`` end to end on files, with every kind of bad input (tiny encoder).

The real bundled model runs in ``test_cli_real_model.py``; here ``core.embeddings.Encoder`` is
replaced by the hashed bag of words so each run takes milliseconds.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import cli
from core.aqer.model import (
    CONVERGENCE_COLUMNS,
    LLM_ANSWER_COLUMNS,
    QUESTION_COLUMNS,
    RESPONSE_COLUMNS,
    WORKER_COLUMNS,
)
from core.paths import resources_dir
from tests.core.aqer.aqer_support import FACTS, HashedBagOfWords

SAMPLE = resources_dir() / "samples" / "aqer_sample.xlsx"


@pytest.fixture(autouse=True)
def tiny_encoder(monkeypatch):
    class TinyEncoder(HashedBagOfWords):
        def __init__(self, model_path="", device="auto", batch_size=32):
            super().__init__()
            self.max_seq_length = 256

        def truncated(self, texts):
            return [len(t) > 1000 for t in texts]

    monkeypatch.setattr("core.embeddings.Encoder", TinyEncoder)


def run(*argv: str) -> int:
    try:
        return cli.main(["aqer", *map(str, argv)])
    except SystemExit as exc:  # argparse usage errors
        return int(exc.code)


def good_rows(n_workers: int = 4) -> list[list[str]]:
    rows = []
    for w in range(n_workers):
        for q, (right, wrong) in FACTS.items():
            rows.append([q, f"w{w}", right if w else wrong])
    return rows


def write_xlsx(path: Path, header: list, rows: list[list], sheet: str = "Answers") -> Path:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = sheet
    ws.append(header)
    for row in rows:
        ws.append(row)
    wb.save(path)
    return path


def sheets(path: Path) -> dict[str, pd.DataFrame]:
    """The workbook as the contract's tables (its sheets use the results page's words)."""
    from core.aqer.report import read_report

    return read_report(path)


def test_sample_end_to_end_sheets_and_columns_follow_the_contract(tmp_path, capsys):
    out = tmp_path / "result.xlsx"
    assert run(SAMPLE, "-o", out, "--grade-col", "grade") == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out)
    assert "Embedding answers" in captured.err and "Wrote" in captured.err
    book = sheets(out)
    assert list(book) == [
        "Workers",
        "Responses",
        "Questions",
        "LLM answers",
        "LLM summary",
        "Convergence",
        "Agreement",
        "Comparison",  # graded: the conditions side by side
        "Warnings",
        "Raw numbers",
        "Read me",
    ]
    assert list(book["Workers"].columns)[: len(WORKER_COLUMNS)] == WORKER_COLUMNS
    assert {"simplified_score", "rasa_skill", "f1", "bleu1", "expert_grade"} <= set(
        book["Workers"].columns
    )
    assert list(book["Responses"].columns) == [*RESPONSE_COLUMNS, "grade"]  # graded
    assert list(book["Questions"].columns) == QUESTION_COLUMNS
    assert list(book["LLM answers"].columns) == LLM_ANSWER_COLUMNS
    assert list(book["Convergence"].columns) == CONVERGENCE_COLUMNS
    assert len(book["Workers"]) == 8 and len(book["Questions"]) == 6
    assert set(book["LLM answers"]["model"]) == {"LLM A", "LLM B"}
    assert book["Workers"]["weight"].sum() == pytest.approx(1.0)
    # Farid skipped a question: listed, and scored on 5 answers.
    assert book["Workers"].set_index("worker").loc["Farid", "answered"] == 5
    assert "Farid" in set(book["Warnings"]["worker"])
    readme = book["Read me"].astype(str).to_string()
    assert "hashed-bag-of-words" in readme and "Tolerance" in readme
    assert "Weight 0" in readme and "Warning 1" in readme


def test_sample_wide_sheet_gives_the_same_scores(tmp_path):
    long_out, wide_out = tmp_path / "long.xlsx", tmp_path / "wide.xlsx"
    assert run(SAMPLE, "-o", long_out) == 0
    args = ["--sheet", "Wide", "--format", "wide", "--question-col", "question"]
    assert run(SAMPLE, "-o", wide_out, *args, "--llm-col", "LLM A", "--llm-col", "LLM B") == 0
    a = sheets(long_out)["Workers"].set_index("worker").sort_index()
    b = sheets(wide_out)["Workers"].set_index("worker").sort_index()
    pd.testing.assert_series_equal(a["score"], b["score"])
    la = sheets(long_out)["LLM summary"].set_index("model")["mean_score"]
    lb = sheets(wide_out)["LLM summary"].set_index("model")["mean_score"]
    pd.testing.assert_series_equal(la, lb)


def test_usage_errors_exit_2(tmp_path):
    assert run(SAMPLE) == 2  # no -o
    assert run(SAMPLE, "-o", tmp_path / "x.csv") == 2
    assert run(SAMPLE, "-o", tmp_path / "x.xlsx", "--format", "tall") == 2
    assert run(SAMPLE, "-o", tmp_path / "x.xlsx", "--max-iterations", "0") == 2
    assert run(SAMPLE, "-o", tmp_path / "x.xlsx", "--tolerance", "-1") == 2


def expect_error(capsys, *argv, contains: list[str]) -> str:
    assert run(*argv) == 1
    err = capsys.readouterr().err
    for text in contains:
        assert text in err, err
    return err


def test_missing_and_misnamed_columns(tmp_path, capsys):
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "pupil", "response"], good_rows())
    out = tmp_path / "o.xlsx"
    expect_error(capsys, path, "-o", out, contains=["'worker'", "'pupil'", "--worker-col"])
    assert not out.exists()
    assert run(path, "-o", out, "--worker-col", "pupil") == 0
    expect_error(
        capsys,
        path,
        "-o",
        out,
        "--worker-col",
        "pupil",
        "--response-col",
        "respnse",
        contains=['"respnse"', "a.xlsx", "Answers", 'did you mean "response"?'],
    )


def test_columns_are_guessed_with_the_wizards_synonyms(tmp_path):
    """"student", "Question ID" and "Answer" are found without options, as in the wizard."""
    rows = good_rows()
    path = write_xlsx(tmp_path / "a.xlsx", ["Question ID", "student", "Answer"], rows)
    out = tmp_path / "o.xlsx"
    assert run(path, "-o", out) == 0
    assert set(sheets(out)["Workers"]["worker"]) == {"w0", "w1", "w2", "w3"}


def test_one_worker_or_one_question(tmp_path, capsys):
    one_worker = [r for r in good_rows() if r[1] == "w1"]
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "worker", "response"], one_worker)
    expect_error(capsys, path, "-o", tmp_path / "o.xlsx",
                 contains=["at least 2 workers", "finds 1 worker"])
    first_q = next(iter(FACTS))
    one_question = [r for r in good_rows() if r[0] == first_q]
    path = write_xlsx(tmp_path / "b.xlsx", ["question", "worker", "response"], one_question)
    expect_error(capsys, path, "-o", tmp_path / "o.xlsx", contains=["at least 2 questions"])


def test_duplicate_rows(tmp_path, capsys):
    rows = good_rows() + [[next(iter(FACTS)), "w2", "Lyon"]]
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "worker", "response"], rows)
    out = tmp_path / "o.xlsx"
    expect_error(capsys, path, "-o", out, contains=["'w2'", "rows 14, 26", "--duplicates"])
    assert run(path, "-o", out, "--duplicates", "last") == 0
    warnings = sheets(out)["Warnings"]
    assert (warnings["topic"] == "Duplicate answer").sum() == 1
    assert warnings.loc[warnings["topic"] == "Duplicate answer", "row"].iloc[0] == 14


def test_empty_and_whitespace_answers_are_listed(tmp_path):
    rows = good_rows()
    rows[0][2] = ""
    rows[7][2] = "   "
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "worker", "response"], rows)
    out = tmp_path / "o.xlsx"
    assert run(path, "-o", out, "--blank-answers", "missing") == 0
    warnings = sheets(out)["Warnings"]
    empty = warnings[warnings["topic"] == "Empty answer"]
    assert sorted(empty["row"].tolist()) == [2, 9]
    assert empty["message"].str.contains("does not count").all()
    assert len(sheets(out)["Responses"]) == len(rows) - 2


def test_all_answers_identical(tmp_path):
    rows = [[q, f"w{w}", "same"] for q in FACTS for w in range(3)]
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "worker", "response"], rows)
    out = tmp_path / "o.xlsx"
    assert run(path, "-o", out) == 0
    book = sheets(out)
    assert (book["Workers"]["score"] == 1).all()
    assert book["Warnings"]["message"].str.contains("do not discriminate").any()


def test_numbers_and_dates_in_answer_cells_are_kept_as_text(tmp_path):
    rows = good_rows()
    rows[1][2] = 8
    rows[2][2] = 3.25
    rows[3][2] = datetime.date(1969, 7, 20)
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "worker", "response"], rows)
    out = tmp_path / "o.xlsx"
    assert run(path, "-o", out) == 0
    texts = set(sheets(out)["Responses"]["response"].astype(str))
    assert {"8", "3.25", "1969-07-20"} <= texts


def test_very_long_answer_is_warned_and_kept(tmp_path):
    rows = good_rows()
    rows[1][2] = "eight legs " + "x" * 39_989  # more than an Excel cell holds: a CSV
    path = tmp_path / "a.csv"
    pd.DataFrame(rows, columns=["question", "worker", "response"]).to_csv(path, index=False)
    out = tmp_path / "o.xlsx"
    assert run(path, "-o", out) == 0
    book = sheets(out)
    notes = book["Warnings"][book["Warnings"]["topic"] == "Answer too long for the model"]
    assert len(notes) == 1 and "40,000 characters" in notes["message"].iloc[0]
    assert "Long texts" in book  # the full answer is kept beyond Excel's cell limit


def test_formula_without_saved_value_is_an_error_and_formula_text_stays_text(tmp_path, capsys):
    rows = good_rows()
    rows[1][2] = "=1+1"  # openpyxl writes a real formula without a cached result
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "worker", "response"], rows)
    expect_error(capsys, path, "-o", tmp_path / "o.xlsx", contains=["C3", "formula"])

    from openpyxl import load_workbook

    rows = good_rows()
    path = write_xlsx(tmp_path / "b.xlsx", ["question", "worker", "response"], rows)
    wb = load_workbook(path)
    cell = wb.active["C3"]
    cell.value = '=HYPERLINK("http://example.invalid","click")'
    cell.data_type = "s"  # typed as text, not a formula
    wb.save(path)
    out = tmp_path / "o.xlsx"
    assert run(path, "-o", out) == 0
    written = load_workbook(out)["Answers"]  # column C: the answers
    values = [c.value for c in written["C"]]
    assert not any(isinstance(v, str) and v.startswith("=") for v in values)
    assert any(isinstance(v, str) and "HYPERLINK" in v for v in values)


def test_wide_sheet_with_an_empty_header(tmp_path, capsys):
    header = ["worker", *FACTS]
    rows = [[f"w{w}", *[right for right, _ in FACTS.values()]] for w in range(3)]
    header[3] = None
    path = write_xlsx(tmp_path / "a.xlsx", header, rows)
    expect_error(
        capsys,
        path,
        "-o",
        tmp_path / "o.xlsx",
        "--format",
        "wide",
        contains=["Column D", "no header", "D1"],
    )


def test_worker_column_entirely_empty(tmp_path, capsys):
    rows = [[q, "", a] for q, a in [(r[0], r[2]) for r in good_rows()]]
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "worker", "response"], rows)
    expect_error(capsys, path, "-o", tmp_path / "o.xlsx", contains=["worker", "empty"])


def test_non_utf8_csv(tmp_path):
    rows = good_rows()
    rows[1][2] = "a café has eight légs"
    text = "question;worker;response\n" + "\n".join(";".join(r) for r in rows) + "\n"
    path = tmp_path / "answers.csv"
    path.write_bytes(text.encode("cp1252"))
    out = tmp_path / "o.xlsx"
    assert run(path, "-o", out) == 0
    book = sheets(out)
    assert "a café has eight légs" in set(book["Responses"]["response"])
    assert book["Warnings"]["message"].str.contains("UTF-8").any()


def test_file_that_is_not_a_spreadsheet(tmp_path, capsys):
    path = tmp_path / "photo.xlsx"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    expect_error(capsys, path, "-o", tmp_path / "o.xlsx", contains=["photo.xlsx"])
    expect_error(
        capsys, tmp_path / "missing.xlsx", "-o", tmp_path / "o.xlsx", contains=["does not exist"]
    )


def test_llm_workers_and_joint_scoring_from_the_cli(tmp_path):
    rows = good_rows() + [[q, "Bot", right] for q, (right, _) in FACTS.items()]
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "worker", "response"], rows)
    out = tmp_path / "o.xlsx"
    assert run(path, "-o", out, "--llm-worker", "Bot") == 0
    assert "Bot" not in set(sheets(out)["Workers"]["worker"])
    assert set(sheets(out)["LLM answers"]["model"]) == {"Bot"}
    assert run(path, "-o", out, "--llm-worker", "Bot", "--llm-as-workers", "--no-baselines") == 0
    workers = sheets(out)["Workers"]
    assert "Bot" in set(workers["worker"]) and "rasa_skill" not in workers.columns


def test_blank_answers_rule_is_detected_or_chosen_and_recorded(tmp_path, capsys):
    rows = good_rows()
    rows[7][2] = ""  # w1 left the second question blank
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "worker", "response"], rows)
    out = tmp_path / "o.xlsx"
    assert run(path, "-o", out) == 0
    assert "blank answers: count as the weakest answer (decided from the data)" in (
        capsys.readouterr().err
    )
    book = sheets(out)
    readme = dict(zip(book["Read me"].iloc[:, 0], book["Read me"].iloc[:, 1]))
    assert readme["Blank answers"].startswith("Counted as the weakest answer. Decided from the data")
    assert book["Workers"].set_index("worker").loc["w1", "blank"] == 1
    assert run(path, "-o", out, "--blank-answers", "missing") == 0
    assert "blank answers: do not count (your choice)" in capsys.readouterr().err
    book = sheets(out)
    readme = dict(zip(book["Read me"].iloc[:, 0], book["Read me"].iloc[:, 1]))
    assert readme["Blank answers"].startswith("Not counted. Chosen by you")
    assert "blank" not in book["Workers"].columns
    assert run(path, "-o", out, "--blank-answers", "zero") == 2


def test_llm_summary_places_each_ai_among_the_workers(tmp_path, capsys):
    out = tmp_path / "result.xlsx"
    assert run(SAMPLE, "-o", out) == 0
    err = capsys.readouterr().err
    assert "on the workers' 0-1 scale, above" in err and "(like for like; mean similarity" in err
    assert "length and style move it too" in err
    book = sheets(out)
    summary = book["LLM summary"]
    assert "percentile_among_workers" in summary.columns
    assert summary["percentile_among_workers"].between(0, 100).all()
    workers = book["Workers"]["similarity_to_others"]
    order = workers.argsort()
    for _, row in summary.iterrows():
        below = (workers < row["mean_score"]).mean() * 100
        assert row["percentile_among_workers"] == pytest.approx(below)
        # on the workers' scale: the score a worker with the AI's similarity would have
        scale = np.interp(row["mean_score"], workers.iloc[order], book["Workers"]["score"].iloc[order])
        assert row["score_on_workers_scale"] == pytest.approx(scale)
        assert 0 <= row["score_on_workers_scale"] <= 1
    readme = dict(zip(book["Read me"].iloc[:, 0], book["Read me"].iloc[:, 1]))
    assert "like for like" in readme["AI answers compared with"]
    assert readme["Scored on"].endswith("UTC")


def test_one_column_chosen_for_two_roles_is_refused_as_in_the_wizard(tmp_path, capsys):
    """The wizard's answer checks run on the command line too (before, the CLI scored the
    answers with the answer column as the question, and wrote a workbook)."""
    path = write_xlsx(tmp_path / "a.xlsx", ["question", "worker", "response"], good_rows())
    out = tmp_path / "o.xlsx"
    expect_error(capsys, path, "-o", out, "--question-col", "response",
                 contains=["a.xlsx", "is chosen for both the questions and the answers"])
    assert not out.exists()


def test_with_a_project_the_second_run_embeds_nothing(tmp_path, monkeypatch):
    """The CLI goes through the project's embedding cache, as the wizard does."""
    made = []

    class Counted(HashedBagOfWords):
        def __init__(self, model_path="", device="auto", batch_size=32):
            super().__init__()
            made.append(self)

    monkeypatch.setattr("core.embeddings.Encoder", Counted)
    project = tmp_path / "answers.evaldesk"
    assert run(SAMPLE, "-o", tmp_path / "one.xlsx", "--project", project) == 0
    assert len(made) == 1 and len(made[0].texts_seen) == 57
    assert run(SAMPLE, "-o", tmp_path / "two.xlsx", "--project", project,
               "--max-iterations", "3") == 0
    assert len(made) == 1  # every answer came from the project: the model was not even loaded


def test_a_sheet_that_is_not_there_is_named_with_the_sheets_that_are(tmp_path, capsys):
    out = tmp_path / "o.xlsx"
    expect_error(capsys, SAMPLE, "-o", out, "--sheet", "Lnog",
                 contains=["'Lnog'", "'Long'", "'Wide'", "--sheet"])
    assert not out.exists()


def test_a_gradebook_with_left_out_columns_grades_and_words_read_as_blank(tmp_path, capsys):
    from tests.core.aqer.gradebook import gradebook

    path = gradebook(tmp_path / "exam.xlsx")
    out = tmp_path / "o.xlsx"
    assert run(path, "-o", out, "--ignore-col", "Q10. What melts ice?", "--blank-token", "n/a",
               "--blank-token", "-") == 0
    said = capsys.readouterr().err
    book = sheets(out)
    assert len(book["Questions"]) == 9 and "Average grade" not in set(book["Questions"]["question"])
    assert "left out 'Q10. What melts ice?'" in said and "expert grades 'Average grade'" in said
    blank = [m for m in book["Warnings"]["message"] if "read as blank" in m]
    assert len(blank) == 1 and "D5 ('n/a')" in blank[0] and "'?'" not in blank[0]
    # no grades: the column of numbers is still no question
    assert run(path, "-o", out, "--grade-col", "") == 0
    assert "no expert grades" in capsys.readouterr().err
    book = sheets(out)
    assert len(book["Questions"]) == 10 and "Agreement" not in book
    # a typo in a header: the CLI asks about the close name
    typo = write_xlsx(tmp_path / "t.xlsx", ["Qestion", "worker", "response"], good_rows())
    expect_error(capsys, typo, "-o", out, contains=["is it 'Qestion'?", "--question-col"])
