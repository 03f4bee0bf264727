"""The issue's "done means" for AQER: the same workbook through ``evaldesk aqer`` and through the
session calls the wizard's pages make (``TheWizardsCalls``) gives the same exported workbook,
cell by cell.

Only the two cells that say when the workbook was written and when it was scored (Read me rows
"Date" and "Scored on") may differ; every other cell of every sheet must be equal.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import Workbook, load_workbook

from core import cli
from tests.core.aqer.aqer_support import FACTS
from tests.core.cli.aqer_routes_support import TheWizardsCalls, TinyEncoder, answers_workbook

#: Read me rows whose value is a time (when the workbook was written / scored).
TIMES = {"Date", "Scored on"}


@pytest.fixture(autouse=True)
def tiny_encoder(monkeypatch):
    # both routes make their encoder through core.embeddings.Encoder (the session's default)
    monkeypatch.setattr("core.embeddings.Encoder", TinyEncoder)


def wide_workbook(path: Path) -> Path:
    """A wide sheet: a row per question under "Prompt", a column per person, a "Bot" column."""
    book = Workbook()
    sheet = book.active
    sheet.title = "Answers"
    people = ["Ana", "Ben", "Chloe", "David"]
    sheet.append(["Prompt", *people, "Bot"])
    for k, (question, (right, wrong)) in enumerate(FACTS.items()):
        answers = [wrong if (p == 0 or (p == 2 and k % 2)) else right for p in range(4)]
        sheet.append([question, *answers, wrong if k == 1 else right])
    book.save(path)
    return path


def through_the_cli(source: Path, out: Path, *options: str) -> None:
    code = cli.main(["aqer", str(source), "-o", str(out), "--llm-col", "Bot", *options])
    assert code == 0


def through_the_wizards_session(source: Path, out: Path, wide: bool = False) -> None:
    """What the wizard does when the user picks the file (choosing the wide layout for a wide
    sheet), keeps the guessed columns, ticks "Bot" as AI answers, keeps the last of repeated
    answers (when asked) and presses Score, then Export."""
    from core.project import Project

    with Project.create_untitled(method="aqer") as project:
        wizard = TheWizardsCalls(project)
        assert wizard.session.problem == ""
        wizard.choose_file(source)
        if wide != (wizard.session.choices.columns.format == "wide"):
            wizard.choose_layout("wide" if wide else "long")
        check = wizard.check()
        assert check.ok and check.needs_duplicate_choice != wide
        wizard.save_columns(llm_cols=["Bot"])
        if check.needs_duplicate_choice:
            wizard.save(duplicates="last")
        assert wizard.check().ok
        wizard.score_and_export(out)


def cells(path: Path) -> dict[str, list[tuple]]:
    book = load_workbook(path)
    return {ws.title: [tuple(c.value for c in row) for row in ws.iter_rows()]
            for ws in book.worksheets}


def same_cells(a: dict[str, list[tuple]], b: dict[str, list[tuple]]) -> int:
    """Assert both workbooks hold the same cells (but the times); the number compared."""
    assert list(a) == list(b)
    compared = 0
    for name, rows_a in a.items():
        assert len(rows_a) == len(b[name]), name
        for r, (row_a, row_b) in enumerate(zip(rows_a, b[name]), start=1):
            if name == "Read me" and row_a[:1] in {(t,) for t in TIMES}:
                assert row_b[0] == row_a[0]
                continue
            assert row_a == row_b, f"sheet {name}, row {r}"
            compared += len(row_a)
    return compared


def test_the_cli_and_the_wizard_export_the_same_workbook(tmp_path):
    source = answers_workbook(tmp_path / "class 3B.xlsx")
    through_the_cli(source, tmp_path / "cli.xlsx", "--duplicates", "last")
    through_the_wizards_session(source, tmp_path / "wizard.xlsx")
    a, b = cells(tmp_path / "cli.xlsx"), cells(tmp_path / "wizard.xlsx")
    assert {"Workers", "Answers", "AI answers", "Agreement", "Raw numbers", "Read me"} <= set(a)
    assert same_cells(a, b) > 300
    readme: dict = {}
    for row in a["Read me"]:  # the "About this workbook" rows, up to the sheet list
        if row[0] is None:
            break
        readme.setdefault(row[0], row[1])
    # what the routes share is what the user chose, named in the workbook
    assert readme["Input file"] == str(source.resolve())
    assert readme["Sheet"] == "Class 3B"
    assert readme["Duplicate answers"] == "kept the last answer of each worker"
    models = {row[0] for row in a["AI summary"][1:]}
    assert models == {"Bot"}
    graded = [row for row in a["Agreement"][1:] if row[0]]
    assert graded  # the "Grade" column was found by both routes


def test_a_wide_sheet_gives_the_same_workbook_through_both_routes(tmp_path):
    source = wide_workbook(tmp_path / "wide.xlsx")
    through_the_cli(source, tmp_path / "cli.xlsx", "--format", "wide")
    through_the_wizards_session(source, tmp_path / "wizard.xlsx", wide=True)
    a, b = cells(tmp_path / "cli.xlsx"), cells(tmp_path / "wizard.xlsx")
    assert same_cells(a, b) > 100
    workers = {row[1] for row in a["Workers"][1:]}  # Rank, Worker, ...
    assert workers == {"Ana", "Ben", "Chloe", "David"}  # "Prompt" held the questions
    assert {row[0] for row in a["AI summary"][1:]} == {"Bot"}


def through_the_wizard_with_its_guess(source: Path, out: Path, grades: Path | None = None) -> dict:
    """What the wizard does with a new file: its guess (layout, columns, the grade column or
    the grades sheet, the answers read as blank) kept as it is, then Score and Export."""
    from core.project import Project

    with Project.create_untitled(method="aqer") as project:
        wizard = TheWizardsCalls(project)
        wizard.choose_file(source)
        if grades is not None:  # "Choose a grades file…" on the Columns page
            wizard.choose_grades_file(grades)
        assert wizard.check().ok
        wizard.score_and_export(out)
        return wizard.session.choices.model_dump()


@pytest.mark.parametrize("shape", ["column", "sheet", "file"])
def test_a_gradebook_gives_the_same_agreement_through_both_routes(tmp_path, shape, capsys):
    from tests.core.aqer.gradebook import gradebook, grades_file_of

    source = gradebook(tmp_path / f"exam {shape}.xlsx", grades=shape)
    grades = grades_file_of(source) if shape == "file" else None
    options = ["--grades-file", str(grades)] if grades else []
    assert cli.main(["aqer", str(source), "-o", str(tmp_path / "cli.xlsx"), *options]) == 0
    said = capsys.readouterr().err
    assert "layout: wide (a row per person) (guessed" in said
    setup = through_the_wizard_with_its_guess(source, tmp_path / "wizard.xlsx", grades)
    a, b = cells(tmp_path / "cli.xlsx"), cells(tmp_path / "wizard.xlsx")
    assert same_cells(a, b) > 300
    assert setup["format"] == "wide" and setup["worker_col"] == "Student"
    agreement = {(row[0], row[1]): row for row in a["Agreement"][1:] if row[0]}
    spearman = agreement[("AQER score vs expert grade (per worker)", "Spearman rho")]
    assert spearman[7] == (30 if shape == "column" else 28)  # n: people with a grade
    questions = {row[0] for row in a["Questions"][1:]}
    assert len(questions) == 10 and "Average grade" not in questions
    warnings = " ".join(str(row[1]) for row in a["Warnings"][1:])
    assert "read as blank" in warnings
    if shape == "sheet":
        assert "'Emma Rosi' (row 6)" in warnings and "expert grades from the sheet" in said
    elif shape == "file":
        assert "'Emma Rosi' (row 6)" in warnings and "expert grades from the file" in said
        assert "Grades file checksum (SHA-256)" in {row[0] for row in a["Read me"]}
    else:
        assert "expert grades 'Average grade'" in said


@pytest.mark.parametrize("shape", ["grades sheet", "keep absent", "header chosen",
                                   "comments kept"])
def test_the_class_workbook_gives_the_same_workbook_through_both_routes(tmp_path, shape):
    """Issue 27's class workbook (title row, header in row 3, Comments, an absent student, two
    chatbot rows, a split question): the wizard's guess plus the user's choices, and the same
    choices on the command line."""
    from core.project import Project
    from tests.core.aqer.class_workbook import ABSENT, class_workbook

    source = class_workbook(tmp_path / "period 3.xlsx",
                            grades="sheet" if shape == "grades sheet" else "column").resolve()
    options = ["--llm-worker", "ChatGPT", "--llm-worker", "Gemini"]
    choices: dict = {"llm_workers": ["ChatGPT", "Gemini"]}
    if shape != "grades sheet":
        options += ["--grade-col", "Total"]
        choices["grade_col"] = "Total"
    with Project.create_untitled(method="aqer") as project:
        wizard = TheWizardsCalls(project)
        wizard.choose_file(source)
        if shape == "header chosen":  # the Header row box on the first page: read again
            wizard.choose_header_row(3)
            assert wizard.session.choices.header_row == 3
            assert wizard.read.header_note.startswith("Row 3 is the header (as chosen)")
            options += ["--header-row", "3"]
        roles = wizard.session.choices.columns
        ignore = [c for c in roles.ignore_cols if c != "Total"]
        if shape == "comments kept":  # unticked under "Leave out"
            ignore.remove("Comments")
            options += ["--keep-col", "Comments"]
        wizard.save_columns(**choices, ignore_cols=ignore)
        if shape == "keep absent":  # the box on the Columns page
            settings = wizard.session.choices.settings
            wizard.save(settings=settings.model_copy(update={"keep_absent": True}))
            options += ["--keep-absent"]
        assert wizard.check().ok
        wizard.score_and_export(tmp_path / "wizard.xlsx")
    assert cli.main(["aqer", str(source), "-o", str(tmp_path / "cli.xlsx"), *options]) == 0
    a, b = cells(tmp_path / "cli.xlsx"), cells(tmp_path / "wizard.xlsx")
    assert same_cells(a, b) > 1000
    workers = {row[1]: row for row in a["Workers"][1:]}  # Rank, Worker, Score, ...
    if shape != "comments kept":  # (his comment "absent" would be his only answer)
        assert (workers[ABSENT][2] == 0) == (shape == "keep absent")
    assert {row[0] for row in a["AI summary"][1:]} == {"ChatGPT", "Gemini"}
    readme = {row[0]: row[1] for row in a["Read me"] if row[0]}
    assert ("Comments" in readme.get("Columns left out", "")) == (shape != "comments kept")
