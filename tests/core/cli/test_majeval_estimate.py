"""``evaldesk majeval run --dry-run``: the estimate, and no model call; a real run prints the
estimate beside the actual figures."""

from __future__ import annotations

import pandas as pd

from core.cli import main
from tests.core.cli.majeval_cli_support import inputs, model  # noqa: F401 (fixtures)


def _personas(folder):
    pd.DataFrame({"group": ["Parents", "Parents", "Teachers"],
                  "name": ["Dana Ray", "Eli Stone", "Ms Amy Lee"],
                  "perspective": ["Fun questions.", "Short questions.", "Real life."]}
                 ).to_excel(folder / "p.xlsx", index=False, sheet_name="Personas")
    return folder / "p.xlsx"


def test_dry_run_prints_the_estimate_and_calls_no_model(inputs, model, capsys):  # noqa: F811
    args = ["majeval", "run", "--personas", str(_personas(inputs)), "--items",
            str(inputs / "items.xlsx"), "--task-file", str(inputs / "task.txt"),
            "--model", model.model, "--project", str(inputs / "p.evaldesk"),
            "-o", str(inputs / "r.xlsx")]
    code = main([*args, "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert model.calls == 0 and not (inputs / "r.xlsx").exists()
    # 3 items: Parents (2 agents) 2 first evaluations + 2 to 6 turns + 0 to 2 finals + 1
    # summary; Teachers (1 agent) 1 + 1
    assert "21 to 39 calls to scripted/majeval-cli, no cost" in out
    assert "a guess: no call to this model was measured yet" in out

    code = main(args)
    err = capsys.readouterr().err
    assert code == 0, err
    made = model.calls
    assert "Estimate: 21 to 39 calls" in err and f"made {made}" in err

    code = main([*args, "--dry-run"])
    out = capsys.readouterr().out
    assert model.calls == made
    assert "No model calls: every result is already in the project." in out
    assert "Already done and kept in the project: 6 debates" in out


def test_items_under_a_title_row_are_read_and_the_header_row_can_be_chosen(
        inputs, model, capsys):  # noqa: F811
    """Issue 27: a title above the items' table is not taken as the header."""
    from openpyxl import load_workbook

    book = load_workbook(inputs / "items.xlsx")
    book.active.insert_rows(1, 2)
    book.active["A1"] = "Questions the model wrote about the story (week 5)"
    book.save(inputs / "items.xlsx")
    args = ["majeval", "run", "--personas", str(_personas(inputs)), "--items",
            str(inputs / "items.xlsx"), "--task-file", str(inputs / "task.txt"),
            "--model", model.model, "-o", str(inputs / "r.xlsx"), "--dry-run"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "Row 3 is read as the header" in captured.err + captured.out
    assert "21 to 39 calls" in captured.out  # the 3 items, as without the title
    assert main([*args, "--header-row", "3"]) == 0
    assert "21 to 39 calls" in capsys.readouterr().out
    assert model.calls == 0
