"""``evaldesk majeval run --conditions full,pre,simple,single-judge``: the conditions run with a
scripted model, the Comparison sheet (read back with openpyxl), the results kept per
condition (a re-run makes no call, reopening reads them back)."""

from __future__ import annotations

import pytest

from core.cli import main
from tests.core.cli.majeval_conditions_support import (  # noqa: F401 (fixtures)
    HUMAN,
    N_ITEMS,
    files,
    model,
)


def _args(files, model, *more):  # noqa: F811
    return ["majeval", "run", "--personas", str(files / "p.xlsx"), "--items",
            str(files / "items.xlsx"), "--task-file", str(files / "task.txt"), "--human-col",
            "expert", "--model", model.model, "--project", str(files / "p.evaldesk"),
            "--conditions", "full,pre,simple,single-judge", "-o", str(files / "c.xlsx"), *more]


def _profile(model):  # noqa: F811
    """The profile the command line made for ``--model`` (what the wizard would have chosen)."""
    from core.cli._common import adhoc_profile

    return adhoc_profile(model.model)


def test_conditions_are_compared_and_kept(files, model, capsys):  # noqa: F811
    from openpyxl import load_workbook

    assert main(_args(files, model, "--dry-run")) == 0
    out = capsys.readouterr().out
    assert model.calls == 0 and not (files / "c.xlsx").exists()
    # 12 items x 2 groups of 2, twice (full and simple): 2 + 2 to 6 + 0 to 2 + 1 per debate;
    # 12 single-judge calls
    assert "252 to 540 calls" in out

    assert main(_args(files, model)) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    made = model.calls
    assert made == 2 * 24 * 5 + 12  # everyone agrees: one turn each, then the summary
    assert f"Calls: estimated 252 to 540, made {made}" in err
    # the sentence names the dimension (issue 28, point 13)
    assert ("Single judge agrees less well with your ratings of expert (the judges' Overall "
            "quality) than Full personas, after debate") in err

    book = load_workbook(files / "c.xlsx", read_only=True)
    assert book.sheetnames[:2] == ["Comparison", "Condition scores"]
    rows = list(book["Comparison"].iter_rows(values_only=True))
    header, body = rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]
    assert header[:4] == ("condition", "group", "dimension", "human_dimension")
    overall = {r["condition"]: r for r in body if r["group"] == "All groups (overall score)"}
    assert list(overall) == ["Full personas, after debate", "Full personas, before debate",
                             "Simple roles, after debate", "Single judge",
                             "Text length alone (number of words, the baseline)"]
    assert "How the conditions were compared: Spearman rho with the human ratings pooled " \
        "over all items" in err
    full = overall["Full personas, after debate"]
    assert full["value"] == pytest.approx(1.0) and full["n"] == N_ITEMS
    assert full["vs_full_difference"] is None  # the reference itself
    judge = overall["Single judge"]
    assert judge["vs_full_n"] == N_ITEMS and judge["vs_full_difference"] < 0
    assert judge["vs_full_ci_high"] < 0 and 0 <= judge["vs_full_p"] <= 1
    pre = overall["Full personas, before debate"]
    assert pre["vs_full_difference"] == pytest.approx(0.0)
    assert "about equally well" in pre["summary"]
    groups = {(r["condition"], r["group"]) for r in body}
    assert ("Simple roles, after debate", "Parents") in groups
    assert ("Single judge", "Parents") not in groups

    # unchanged conditions: no call, the same comparison
    assert main(_args(files, model)) == 0
    assert model.calls == made
    assert main(_args(files, model, "--dry-run")) == 0
    assert "No model calls" in capsys.readouterr().out


def test_results_per_condition_survive_reopening(files, model, capsys):  # noqa: F811
    from core.majeval import conditions as cd
    from core.majeval import session as st
    from core.project import Project

    assert main(_args(files, model)) == 0
    with Project.open(files / "p.evaldesk") as project:
        state = st.choices.load_choices(project)
        assert not state.settings.simple_roles  # the conditions left the choices alone
        kept = st.conditions.load_conditions(project, state, list(cd.CONDITIONS),
                                             _profile(model))
        assert list(kept) == list(cd.CONDITIONS)
        assert kept["single-judge"].scores[cd.ALL_GROUPS]["i3"] == {
            "Overall quality": float(1 + (3 * 7) % 5)}
        assert kept["full"].scores["Parents"]["i3"] == {"Overall quality": HUMAN["i3"]}
        assert st.conditions.missing_conditions(project, state, list(cd.CONDITIONS),
                                                _profile(model)) == []
        assert st.conditions.missing_conditions(project, state, ["full"],
                                                "scripted/other") == ["full"]


def test_an_unknown_condition_is_named(files, model, capsys):  # noqa: F811
    code = main(_args(files, model)[:-4] + ["--conditions", "full,panel", "-o",
                                            str(files / "c.xlsx")])
    assert code == 2 or code == 1
    assert "Unknown condition panel" in capsys.readouterr().err



def _sheet(path, name):
    from openpyxl import load_workbook

    book = load_workbook(path, read_only=True)
    try:
        return [tuple(r) for r in book[name].iter_rows(values_only=True)]
    finally:
        book.close()


def _readme(path):
    return {r[0]: r[1] for r in _sheet(path, "Read me") if r and r[0]}


def test_the_wizards_export_writes_the_same_comparison_sheet_as_the_cli(files, model):  # noqa: F811
    """The wizard's results export (``session.export.export_results`` with the choices) on
    the project the CLI ran the conditions in: the same Comparison and Condition scores sheets
    as the CLI's workbook, labelled in the Read me."""
    from core.majeval import conditions as cd
    from core.majeval import session as st
    from core.project import Project

    assert main(_args(files, model)) == 0
    calls = model.calls
    with Project.open(files / "p.evaldesk") as project:
        state = st.choices.load_choices(project)
        run = st.debates.load_run(project, state, _profile(model))
        assert run is not None
        target = st.export.export_results(project, run, files / "wizard.xlsx", choices=state)
    assert model.calls == calls  # exporting asks the model nothing
    cli, wizard = _sheet(files / "c.xlsx", "Comparison"), _sheet(target, "Comparison")
    assert len(cli) == len(wizard) > 1
    assert wizard == cli
    assert _sheet(target, "Condition scores") == _sheet(files / "c.xlsx", "Condition scores")
    header = wizard[0]
    body = [dict(zip(header, r)) for r in wizard[1:]]
    assert {r["statistic"] for r in body} == {"Spearman rho"}
    judge = next(r for r in body if r["condition"] == "Single judge")
    assert judge["vs_full_n"] == N_ITEMS and judge["ci_low"] is not None
    notes = _readme(target)
    assert notes["Conditions"] == "; ".join(f"{label} ({name})"
                                            for name, label in cd.CONDITIONS.items())
    assert "paired bootstrap" in notes["Statistic"] and "per group" in notes["Statistic"]
    assert "Conditions not run" not in notes
    # the results' own sheets are still there
    from openpyxl import load_workbook

    book = load_workbook(target, read_only=True)
    assert {"Items", "Group scores", "Comparison", "Condition scores"} <= set(book.sheetnames)
    book.close()


def test_the_wizards_export_names_the_conditions_not_run(files, model):  # noqa: F811
    from core.majeval import session as st
    from core.project import Project

    args = _args(files, model)
    args[args.index("--conditions") + 1] = "full,pre"
    assert main(args) == 0
    with Project.open(files / "p.evaldesk") as project:
        state = st.choices.load_choices(project)
        run = st.debates.load_run(project, state, _profile(model))
        target = st.export.export_results(project, run, files / "wizard.xlsx", choices=state)
    rows = _sheet(target, "Comparison")
    conditions = {dict(zip(rows[0], r))["condition"] for r in rows[1:]}
    assert conditions == {"Full personas, after debate", "Full personas, before debate",
                          "Text length alone (number of words, the baseline)"}
    assert _readme(target)["Conditions not run"].startswith(
        "Simple roles, after debate; Single judge")
