"""``evaldesk checklist score --dry-run``: the estimate, and no model call; its count is the
calls a run makes, and a re-run with --project estimates none."""

from __future__ import annotations

from core.cli import main
from tests.core.cli.checklist_cli_support import (  # noqa: F401 (fixtures)
    inputs,
    score_args,
    scripted_model,
)


def test_dry_run_estimates_the_calls_of_the_run_and_makes_none(
        inputs, scripted_model, capsys):  # noqa: F811
    args = score_args(inputs)
    assert main([*args, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert scripted_model.calls == 0 and not (inputs / "r.xlsx").exists()
    # 6 texts x 1 dimension: one call each (at most one more for unanswered questions)
    assert "6 to 12 calls to scripted/ie-cli, no cost" in out

    assert main(args) == 0
    assert scripted_model.calls == 6
    assert "Calls: estimated" in capsys.readouterr().err

    assert main([*args, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "No model calls" in out and "6 texts scored on a dimension" in out


def test_one_question_per_call_is_planned_per_question():
    from core.interacteval import Checklist, ChecklistItem, ScoringSettings
    from core.interacteval.estimate import plan_scoring
    from core.interacteval.model import TextItem

    checklist = Checklist(dimension="Coherence", items=[
        ChecklistItem(question=q) for q in ("A?", "B?", "C?")])
    texts = [TextItem(id="a", text="One."), TextItem(id="b", text="Two."),
             TextItem(id="c", text="  ")]
    plan, done = plan_scoring([checklist], texts, ScoringSettings(mode="per_question"))
    assert done == 0 and len(plan[0].prompts) == 6 and not plan[0].maybe
    assert "B?" in plan[0].prompts[1][-1]["content"] + plan[0].prompts[1][0]["content"]


def _title_above(path, title: str) -> None:
    """The sheet at ``path`` with a title and a blank row above its table (as people keep it)."""
    from openpyxl import load_workbook

    book = load_workbook(path)
    sheet = book.active
    sheet.insert_rows(1, 2)
    sheet["A1"] = title
    book.save(path)


def test_texts_under_a_title_row_are_read_and_the_header_row_can_be_chosen(
        inputs, scripted_model, capsys):  # noqa: F811
    """Issue 27: a title above the texts' table is not taken as the header."""
    _title_above(inputs / "items.xlsx", "Summaries to score - batch 2")
    args = score_args(inputs)
    assert main([*args, "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert "6 to 12 calls" in captured.out
    assert "Row 3 is read as the header" in captured.err
    assert main([*args, "--dry-run", "--header-row", "3"]) == 0
    assert "6 to 12 calls" in capsys.readouterr().out
    assert main([*args, "--dry-run", "--header-row", "2"]) == 1
    assert "Row 2 cannot be the header row" in capsys.readouterr().err
