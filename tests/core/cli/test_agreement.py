"""``evaldesk majeval agreement`` and ``evaldesk checklist agreement``: the judge-vs-people
report from a ratings workbook, written to Excel and read back; its numbers equal
core.judge_check's report on the same data."""

from __future__ import annotations

import pandas as pd
import pytest

from core.cli import main
from core.judge_check import Rating, export_ratings, judge_report
from tests.core.cli.majeval_cli_support import inputs, model  # noqa: F401 (fixtures)


def test_majeval_agreement_from_a_ratings_workbook(inputs, model, capsys):  # noqa: F811
    pd.DataFrame({"group": ["Parents", "Parents"], "name": ["Dana Ray", "Eli Stone"],
                  "perspective": ["Fun questions.", "Short questions."]}).to_excel(
        inputs / "p.xlsx", index=False, sheet_name="Personas")
    project = inputs / "study.evaldesk"
    assert main(["majeval", "run", "--personas", str(inputs / "p.xlsx"), "--items",
                 str(inputs / "items.xlsx"), "--task-file", str(inputs / "task.txt"),
                 "--model", model.model, "--project", str(project), "--no-bootstrap",
                 "-o", str(inputs / "r.xlsx")]) == 0, capsys.readouterr().err
    ratings = [Rating("q1", "Anna", {"Overall quality": 4.0}, note="good"),
               Rating("q2", "Anna", {"Overall quality": 3.0}),
               Rating("q3", "Anna", {"Overall quality": 2.0}),
               Rating("q1", "Ben", {"Overall quality": 5.0}),
               Rating("q2", "Ben", {"Overall quality": 1.0})]
    export_ratings(inputs / "ratings.xlsx", ratings)
    out = inputs / "agreement.xlsx"
    code = main(["majeval", "agreement", "--project", str(project), "--ratings",
                 str(inputs / "ratings.xlsx"), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "3 rated items compared" in err and "fewer than 25" in err
    dims = pd.read_excel(out, sheet_name="Dimensions")
    # judge: q1 5, q2 2, q3 5; people's mean: q1 4.5, q2 2, q3 2
    mae = dims[dims.statistic == "Mean absolute error"].iloc[0]
    assert mae.value == pytest.approx((0.5 + 0 + 3) / 3, abs=1e-4) and mae.n == 3
    from core.majeval.session.choices import load_choices
    from core.majeval.session.judge import judge_to_check
    from core.project import Project

    with Project.open(project) as p:
        judge, _ = judge_to_check(p, load_choices(p))
    expected = judge_report(judge, ratings, n_boot=1000).dimensions[0]
    kendall = dims[dims.statistic == "Kendall tau-b"].iloc[0]
    assert kendall.value == pytest.approx(expected.kendall.value, abs=1e-4)
    people = pd.read_excel(out, sheet_name="People")
    assert set(people.raters) == {"people only", "people and the judge"}
    gaps = pd.read_excel(out, sheet_name="Disagreements")
    assert gaps.item.iloc[0] == "q3" and gaps.judge_explanation.iloc[0]
    # one rater only; an unknown rater is named
    assert main(["majeval", "agreement", "--project", str(project), "--ratings",
                 str(inputs / "ratings.xlsx"), "--rater", "Ben", "--no-bootstrap",
                 "-o", str(out)]) == 0
    assert "2 rated items compared" in capsys.readouterr().err
    assert main(["majeval", "agreement", "--project", str(project), "--ratings",
                 str(inputs / "ratings.xlsx"), "--rater", "Cleo", "-o", str(out)]) == 1
    assert "Nobody called 'Cleo'" in capsys.readouterr().err


def test_majeval_agreement_without_results_says_so(inputs, capsys):  # noqa: F811
    from core.project import Project

    Project.create(inputs / "empty.evaldesk", method="majeval").close()
    export_ratings(inputs / "ratings.xlsx", [Rating("q1", "Anna", {"Overall quality": 4.0})])
    code = main(["majeval", "agreement", "--project", str(inputs / "empty.evaldesk"),
                 "--ratings", str(inputs / "ratings.xlsx"), "-o", str(inputs / "a.xlsx")])
    assert code == 1 and "run the debates first" in capsys.readouterr().err


def test_two_models_in_one_project_are_ranked_against_the_ratings(inputs, model, capsys):  # noqa: F811
    from core.judge_check import rank_judges
    from core.llm import ScriptedLLM
    from core.majeval.session.choices import load_choices
    from core.majeval.session.judge import judges_to_compare
    from core.project import Project
    from tests.core.cli.majeval_cli_support import reply

    pd.DataFrame({"group": ["Parents", "Parents"], "name": ["Dana Ray", "Eli Stone"],
                  "perspective": ["Fun questions.", "Short questions."]}).to_excel(
        inputs / "p.xlsx", index=False, sheet_name="Personas")
    project = inputs / "two.evaldesk"
    other = ScriptedLLM(reply, name="majeval-other")
    try:
        for name in (model.model, other.model):
            assert main(["majeval", "run", "--personas", str(inputs / "p.xlsx"), "--items",
                         str(inputs / "items.xlsx"), "--task-file", str(inputs / "task.txt"),
                         "--model", name, "--project", str(project), "--no-bootstrap",
                         "-o", str(inputs / "r.xlsx")]) == 0, capsys.readouterr().err
    finally:
        other.close()
    with Project.open(project) as p:
        candidates = judges_to_compare(p, load_choices(p))
    # each model's debates give two conditions: after and before the debate
    assert [key for _, key, _ in candidates] == [
        f"full:{model.model}", f"pre:{model.model}", f"full:{other.model}",
        f"pre:{other.model}"]
    assert candidates[2][0] == f"Full personas, after debate ({other.model})"
    ratings = [Rating(i, "Anna", {"Overall quality": v})
               for i, v in (("q1", 5.0), ("q2", 1.0), ("q3", 4.0))]
    ranks = rank_judges(candidates, ratings, n_boot=100)
    assert len(ranks) == 4 and ranks[0].value == pytest.approx(ranks[1].value)
    assert ranks[1].versus_best.reason.startswith("not enough units")
