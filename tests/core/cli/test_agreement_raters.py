"""``evaldesk majeval rating-sheets`` and ``agreement`` with several raters: three people grade
the same 30 items blind in their own Excel sheets, the agreement command takes the three files
(and the agreed grades kept in the project), and the report marks every label's origin."""

from __future__ import annotations

import pandas as pd
from openpyxl import load_workbook

from core.cli import main
from tests.core.cli.majeval_cli_support import inputs, model  # noqa: F401 (fixtures)

N = 30


def _thirty_items(folder):
    ids = [f"q{k:02d}" for k in range(N)]
    pd.DataFrame({
        "id": ids,
        "qa pair": [f"Q: What does a fox eat? A: Mice ({k})." if k % 3 else
                    f"Q: Why is the sky blue? A: Because ({k})." for k in range(N)],
        "story": [f"Story {k}." for k in range(N)],
    }).to_excel(folder / "items.xlsx", index=False)
    pd.DataFrame({"group": ["Parents", "Parents"], "name": ["Dana Ray", "Eli Stone"],
                  "perspective": ["Fun questions.", "Short questions."]}).to_excel(
        folder / "p.xlsx", index=False, sheet_name="Personas")
    return ids


def _fill(path, grade):
    """Fill in a rating sheet as a rater does in Excel: a grade in every dimension row."""
    book = load_workbook(path)
    ws = book["Ratings"]
    for row in range(2, ws.max_row + 1):
        if not ws.cell(row, 4).value:  # a dimension's row (the question column is empty)
            ws.cell(row, 5).value = grade(ws.cell(row, 2).value)
    book.save(path)


def test_three_raters_grade_blind_in_excel_and_the_agreement_takes_all_files(
        inputs, model, capsys):  # noqa: F811
    ids = _thirty_items(inputs)
    project = inputs / "study.evaldesk"
    assert main(["majeval", "run", "--personas", str(inputs / "p.xlsx"), "--items",
                 str(inputs / "items.xlsx"), "--task-file", str(inputs / "task.txt"),
                 "--model", model.model, "--project", str(project), "--no-bootstrap",
                 "-o", str(inputs / "r.xlsx")]) == 0, capsys.readouterr().err
    capsys.readouterr()
    sheets = inputs / "sheets"
    code = main(["majeval", "rating-sheets", "--project", str(project), "--raters", "Anna",
                 "Ben", "Cleo", "--per-item", "3", "-o", str(sheets)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "30 items, each for 3 of 3 raters (Anna, Ben, Cleo): 30 items each" in err
    files = sorted(p.name for p in sheets.iterdir())
    assert files == [f"majeval-rating-sheet-{r}.xlsx" for r in ("Anna", "Ben", "Cleo")]
    anna = pd.read_excel(sheets / files[0], sheet_name="Ratings", dtype=str,
                         keep_default_na=False)
    assert sorted(set(anna["item"])) == ids and set(anna["rater"]) == {"Anna"}
    # each rater grades blind: fox answers good (the judge says 5), the others poor (2)
    good = {i for k, i in enumerate(ids) if k % 3}
    _fill(sheets / files[0], lambda i: 5 if i in good else 1)
    _fill(sheets / files[1], lambda i: 4 if i in good else 2)
    _fill(sheets / files[2], lambda i: (5 if i in good else 1) if i != "q03" else 1)
    # Ben's file also holds a row he copied twice: named, the first kept
    book = load_workbook(sheets / files[1])
    ws = book["Ratings"]
    ws.append([ws.cell(2, c).value for c in range(1, 9)])
    book.save(sheets / files[1])
    out = inputs / "agreement.xlsx"
    code = main(["majeval", "agreement", "--project", str(project), "--ratings",
                 *(str(sheets / f) for f in files), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "30 rated items compared" in err and "3 rater(s): Anna, Ben, Cleo" in err
    assert "rows 2 and 32 both rate item" in err
    assert "Between the people on Overall quality (Anna, Ben, Cleo): report" in err
    assert "Between the judge and the people on Overall quality" in err
    assert "Overall quality: Mean score corrected by your grades:" in err
    rel = pd.read_excel(out, sheet_name="Reliability")
    people = rel[rel.between == "between people"]
    assert set(people.statistic) >= {
        "Percent agreement", "Gwet's AC2 (quadratic weights)",
        "ICC(2,1): two-way random effects, absolute agreement, single rater"}
    assert (people.n == N).all() and (people.n_raters == 3).all()
    labels = pd.read_excel(out, sheet_name="Labels")
    assert len(labels) == N * 4  # the judge and three people on every item
    assert labels.groupby("origin").size().to_dict() == {"human": 3 * N, "judge": N}
    assert set(labels[labels.origin == "judge"].by) == {model.model}
    # the agreed grade of the item Cleo saw differently, kept in the project, then compared with
    from core.judge_check import load_ratings, save_adjudication, save_rating
    from core.project import Project

    with Project.open(project) as p:
        for f in files:
            from core.judge_check import read_ratings

            for r in read_ratings(sheets / f).ratings:
                save_rating(p, "majeval", r, blind=None)
        sources = [r for r in load_ratings(p, "majeval") if r.item_id == "q03"]
        save_adjudication(p, "majeval", "q03", decided_by="Dana", sources=sources,
                          scores={"Overall quality": 5.0})
    code = main(["majeval", "agreement", "--project", str(project), "--project-ratings",
                 "--agreed", "--no-bootstrap", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "1 items have an agreed grade" in err
    labels = pd.read_excel(out, sheet_name="Labels")
    decided = labels[labels.origin == "adjudicated"]
    assert list(decided.item) == ["q03"] and list(decided.by) == ["Dana"]
    assert "Cleo: Overall quality 1" in decided.decided_from.iloc[0]
    readme = pd.read_excel(out, sheet_name="Read me", header=None).astype(str).to_string()
    assert "the agreed grades" in readme
    # a sheet read as someone else's is refused by name; without the project's plan: say so
    code = main(["majeval", "rating-sheets", "--project", str(project), "--per-item", "2",
                 "-o", str(sheets)])
    assert code == 1 and "--per-item needs --raters" in capsys.readouterr().err
