"""The Excel rating sheet made for one rater, and reading it back with its checks.

A rating sheet holds only what its rater may see: their own items (their share of the plan,
in the project's grading order), each item's text and context, an empty cell per dimension
(a drop-down of the scale's grades) and per checklist question (Yes/No), and their own
earlier grades if they have some. Never the judge's scores nor another rater's grades: a
rater who grades in Excel grades as blind as one who grades in the app.

Reading it back (:func:`read_rating_sheet`) checks every row and names it: a row naming
another rater than the one the sheet was made for, an item the judge did not score, a grade
off the scale or between its steps, a question the checklist does not ask, and two rows
rating the same thing. Items outside the rater's share are kept and said.

    write_rating_sheet("Anna.xlsx", judge, "Anna", plan.items_of("Anna"))
    got = read_rating_sheet("Anna.xlsx", judge, plan=plan)   # got.made_for == "Anna"
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core import judge_check
from core.judge_check import RATING_COLUMNS, RATINGS_SHEET, JudgeData, Rating, RatingsRead

if TYPE_CHECKING:  # pragma: no cover
    from core.grading.plan import GradingPlan
    from core.tables import ExportReport

__all__ = ["MADE_FOR", "SHEET_COLUMNS", "read_rating_sheet", "sheet_name", "write_rating_sheet"]

#: The Read me line naming the rater a sheet was made for.
MADE_FOR = "Made for"
#: The Ratings sheet's columns: the ratings workbook's (without when) and the item's words.
SHEET_COLUMNS = (*RATING_COLUMNS[:-1], "context", "text")
#: Excel's limit on a drop-down's list of values (characters).
_LIST_LIMIT = 255


def sheet_name(rater: str, method: str) -> str:
    """A file name for ``rater``'s sheet: "majeval-rating-sheet-Anna Lee.xlsx"."""
    safe = "".join(c if c.isalnum() or c in " -_." else "_" for c in rater).strip() or "rater"
    return f"{method}-rating-sheet-{safe}.xlsx"


def write_rating_sheet(path: str | Path, judge: JudgeData, rater: str, items: Sequence[str], *,
                       own: Iterable[Rating] = (),
                       readme: Sequence[tuple[str, str]] = ()) -> ExportReport:
    """Write the rating sheet of ``rater`` for ``items`` (in that order): one row per item and
    dimension, then one per checklist question, the item's context and text on its first row,
    ``own`` earlier grades of this rater filled in. A drop-down on each rating cell offers the
    scale's grades (Yes/No for a question)."""
    import pandas as pd

    from core.tables import Sheet, write_workbook

    who = rater.strip()
    if not who:
        raise ValueError("A rating sheet is made for one rater: give their name.")
    mine = {r.item_id: r for r in own if r.rater == who and not r.adjudicated}
    rows = []
    kinds: list[str] = []  # per row: "grade" or "yes/no"
    for item_id in items:
        item = judge.item(item_id)
        if item is None or item.held_out:
            continue
        earlier = mine.get(item_id)
        first = True
        for dim in judge.dimensions:
            value = earlier.scores.get(dim) if earlier is not None else None
            rows.append({"rater": who, "item": item_id, "dimension": dim, "question": "",
                         "rating": value, "note": earlier.note if earlier and first else "",
                         "context": item.context if first else "",
                         "text": item.text if first else ""})
            kinds.append("grade")
            first = False
            for question in judge.questions.get(dim, []):
                said = earlier.answers.get(dim, {}).get(question) if earlier else None
                rows.append({"rater": who, "item": item_id, "dimension": dim,
                             "question": question,
                             "rating": None if said is None else ("Yes" if said else "No"),
                             "note": "", "context": "", "text": ""})
                kinds.append("yes/no")
    frame = pd.DataFrame(rows, columns=list(SHEET_COLUMNS))
    low, high = judge.scale
    grades = ", ".join(f"{g:g}" for g in judge.grades())
    about = (f"Your ratings, {who}: one row per item and dimension (a grade from {low} to "
             f"{high}: {grades}), then one per checklist question (Yes or No; optional). Fill "
             "in the rating column (and a note if you like); leave the other columns as they "
             "are.")
    lines = [
        ("What this is", (f"A rating sheet for checking an AI judge ({judge.method}) in "
                         "EvalDesk. It shows no score of the judge and no other rater's "
                         "grades: grade each text on your own.")),
        (MADE_FOR, who),
        ("Items", (f"{len({r['item'] for r in rows})} items to grade, in the order to grade "
                  "them.")),
        ("Scale", f"from {low} (worst) to {high} (best), in steps of {judge.step:g}"),
        ("When done", ("Save the file and give it back; it is read into EvalDesk with Import "
                      "ratings (or evaldesk … agreement --ratings this file).")),
        *readme,
    ]
    report = write_workbook(path, [Sheet(RATINGS_SHEET, frame, description=about,
                                         widths={"text": 80, "context": 40, "note": 30})],
                            lines, readme_first=True)
    _drop_downs(report.path, kinds, judge.grades())
    return report


def _drop_downs(path: Path, kinds: Sequence[str], grades: Sequence[float]) -> None:
    """A drop-down of the allowed values on every rating cell (Excel's data validation)."""
    from openpyxl import load_workbook
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.datavalidation import DataValidation

    letter = get_column_letter(SHEET_COLUMNS.index("rating") + 1)
    listed = ",".join(f"{g:g}" for g in grades)
    if len(listed) + 2 <= _LIST_LIMIT:
        grade_rule = DataValidation(type="list", formula1=f'"{listed}"', allow_blank=True)
    else:
        grade_rule = DataValidation(type="decimal", operator="between",
                                    formula1=f"{min(grades):g}", formula2=f"{max(grades):g}",
                                    allow_blank=True)
    grade_rule.error = f"Choose one of the grades: {listed}"[:_LIST_LIMIT]
    grade_rule.errorTitle = "Not a grade"
    grade_rule.showErrorMessage = True
    yes_no = DataValidation(type="list", formula1='"Yes,No"', allow_blank=True)
    yes_no.error = "Answer Yes or No."
    yes_no.errorTitle = "Yes or No"
    yes_no.showErrorMessage = True
    book = load_workbook(path)
    sheet = book[RATINGS_SHEET]
    for row, kind in enumerate(kinds, start=2):
        (grade_rule if kind == "grade" else yes_no).add(f"{letter}{row}")
    sheet.add_data_validation(grade_rule)
    sheet.add_data_validation(yes_no)
    book.save(path)


def _made_for(path: Path) -> str:
    """The rater a sheet says it was made for ("" when it does not say)."""
    if path.suffix.lower() not in (".xlsx", ".xlsm"):
        return ""
    try:
        from openpyxl import load_workbook

        book = load_workbook(path, read_only=True)
    except Exception:  # noqa: BLE001 - read_ratings reports an unreadable file itself
        return ""
    try:
        for name in book.sheetnames:
            if name == RATINGS_SHEET:
                continue
            for row in book[name].iter_rows(min_row=1, max_row=30, max_col=2, values_only=True):
                if row and row[0] == MADE_FOR and row[1]:
                    return str(row[1]).strip()
    finally:
        book.close()
    return ""


def read_rating_sheet(path: str | Path, judge: JudgeData, *, plan: GradingPlan | None = None,
                      rater: str | None = None) -> RatingsRead:
    """Read a rating sheet (or any ratings workbook) against ``judge``: the checks of
    :func:`core.judge_check.read_ratings` with the judge's items, dimensions, questions and
    grades, rows naming another rater than the sheet was made for skipped and named, and
    items outside the rater's share of ``plan`` said (kept). ``rater``: the sheet must be
    this rater's (an error names both when it was made for someone else)."""
    path = Path(path)
    made_for = _made_for(path)
    if rater is not None and made_for and made_for.casefold() != rater.strip().casefold():
        out = RatingsRead(made_for=made_for)
        out.errors.append(f"{path.name} was made for {made_for}, not for {rater.strip()}: "
                          f"read it as {made_for}'s ratings, or give {rater.strip()} their "
                          "own sheet.")
        return out
    got = judge_check.read_ratings(
        path, scale=judge.scale, items=[i.item_id for i in judge.items if not i.held_out],
        dimensions=judge.dimensions, grades=judge.grades(), questions=judge.questions,
        rater=made_for or None)
    got.made_for = made_for
    if plan is not None and not got.errors:
        for who in dict.fromkeys(r.rater for r in got.ratings):
            mine = plan.items_of(who)
            if mine is None:
                got.problems.append(f"{who} is not one of the raters of the plan "
                                    f"({', '.join(plan.raters)}); their ratings are kept.")
                continue
            outside = [r.item_id for r in got.ratings if r.rater == who
                       and r.item_id not in set(mine)]
            if outside:
                got.problems.append(
                    f"{who} graded {len(outside)} item(s) that are not theirs in the plan "
                    f"({', '.join(outside[:5])}{' …' if len(outside) > 5 else ''}); the "
                    "grades are kept.")
    return got
