"""``--repeats N`` on ``evaldesk majeval run`` and ``evaldesk checklist score``: the dry run counts
N x the calls, the repeats are real calls, the workbook gets a Stability sheet (each item's
spread, Krippendorff's alpha across the repeats) and the scores of repeat 0; a re-run with the
project makes no call."""

from __future__ import annotations

import pytest

from core.cli import main
from tests.core.cli.checklist_cli_support import (  # noqa: F401 (fixtures)
    inputs,
    score_args,
    scripted_model,
)
from tests.core.cli.majeval_conditions_support import HUMAN, files, model  # noqa: F401 (fixtures)


def _sheet(path, name):
    from openpyxl import load_workbook

    book = load_workbook(path, read_only=True)
    rows = list(book[name].iter_rows(values_only=True))
    return [dict(zip(rows[0], r)) for r in rows[1:]], book.sheetnames


def test_checklist_score_repeats(inputs, scripted_model, capsys):  # noqa: F811
    args = [*score_args(inputs), "--repeats", "3"]
    assert main([*args, "--dry-run"]) == 0
    assert "18 to 36 calls" in capsys.readouterr().out  # 6 texts x 3 repeats
    assert scripted_model.calls == 0

    assert main(args) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert scripted_model.calls == 18  # the repeats were asked, not read from the cache
    assert "Model calls: 18 calls" in err
    # the scripted model answers the same each time: the judge is steady
    assert "Coherence: The checklist judge gives much the same scores when asked again " \
           "(agreement between repeats 1.00 over 6 texts, 3 repeats)" in err
    rows, names = _sheet(inputs / "r.xlsx", "Stability")
    assert names[0] == "Scores" and "Stability" in names
    assert rows[0]["alpha"] == pytest.approx(1.0) and rows[0]["n"] == 6
    assert all(r["sd"] == 0 for r in rows[1:]) and len(rows) == 7

    assert main(args) == 0
    assert scripted_model.calls == 18  # every repeat kept in the project
    assert main([*args, "--dry-run"]) == 0
    assert "No model calls" in capsys.readouterr().out


def test_checklist_repeats_are_checked(inputs, scripted_model, capsys):  # noqa: F811
    code = main(["checklist", "score", "--checklist", str(inputs / "c.xlsx"), "--items",
                 str(inputs / "items.xlsx"), "--model", "scripted/ie-cli", "-o",
                 str(inputs / "r.xlsx"), "--repeats", "0"])
    assert code != 0
    assert "--repeats must be a whole number from 1 to 10" in capsys.readouterr().err


def _args(files, model, *more):  # noqa: F811
    return ["majeval", "run", "--personas", str(files / "p.xlsx"), "--items",
            str(files / "items.xlsx"), "--task-file", str(files / "task.txt"), "--human-col",
            "expert", "--model", model.model, "--project", str(files / "p.evaldesk"),
            "-o", str(files / "r.xlsx"), *more]


def test_majeval_run_repeats(files, model, capsys):  # noqa: F811
    assert main(_args(files, model, "--dry-run")) == 0
    once = capsys.readouterr().out
    assert main(_args(files, model, "--dry-run", "--repeats", "2")) == 0
    twice = capsys.readouterr().out
    # 12 items x 2 groups of 2: 120 to 264 calls once
    assert "120 to 264 calls" in once and "240 to 528 calls" in twice

    assert main(_args(files, model, "--repeats", "2")) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert model.calls == 2 * 24 * 5
    assert "The judge (Full personas, after debate) gives much the same scores when asked " \
           "again" in err
    rows, names = _sheet(files / "r.xlsx", "Stability")
    assert names[0] == "Items" and "Stability" in names
    assert rows[0]["condition"] == "Full personas, after debate"
    assert rows[0]["alpha"] == pytest.approx(1.0) and rows[0]["n"] == 12
    i3 = next(r for r in rows if r["unit"] == "i3")
    assert (i3["repeat 0"], i3["repeat 1"]) == (HUMAN["i3"], HUMAN["i3"])
    items, _ = _sheet(files / "r.xlsx", "Items")
    assert {r["item"]: r["Overall quality"] for r in items}["i3"] == HUMAN["i3"]

    made = model.calls
    assert main(_args(files, model, "--repeats", "2")) == 0
    assert model.calls == made


def test_majeval_conditions_repeats(files, model, capsys):  # noqa: F811
    out = str(files / "c.xlsx")
    args = [*_args(files, model)[:-2], "-o", out, "--conditions", "single-judge",
            "--repeats", "3"]
    assert main([*args, "--dry-run"]) == 0
    assert "36 calls" in capsys.readouterr().out
    assert main(args) == 0, capsys.readouterr().err
    assert model.calls == 36
    rows, names = _sheet(out, "Stability")
    assert names[:2] == ["Comparison", "Condition scores"] and "Stability" in names
    assert rows[0]["condition"] == "Single judge" and rows[0]["n"] == 12
    assert "The single judge gives much the same scores" in rows[0]["note"]
