"""``evaldesk majeval personas`` then ``evaldesk majeval run`` with a scripted model, in
process, and the files they write read back with pandas."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from core.cli import main
from tests.core.cli.majeval_cli_support import inputs, model  # noqa: F401 (fixtures)
from tests.core.majeval.majeval_support import kind


def test_personas_then_run(inputs, model, capsys):  # noqa: F811
    personas = inputs / "personas.xlsx"
    code = main(["majeval", "personas", str(inputs / "study.txt"), "--task-file",
                 str(inputs / "task.txt"), "--model", model.model, "-o", str(personas)])
    assert code == 0, capsys.readouterr().err
    sheet = pd.read_excel(personas, sheet_name="Personas", dtype=str, keep_default_na=False)
    # the editor's words as column titles ("Who they are", not demographics)
    assert "Who they are" in sheet.columns and "demographics" not in sheet.columns
    assert sheet["Group"].tolist() == ["Parents", "Parents", "Teachers"]
    assert sheet["Name"].tolist() == ["Dana Ray", "Eli Stone", "Ms Amy Lee"]
    assert sheet["Evidence"].iloc[0] == "Parents told us that questions should be fun and short."
    assert sheet["Document"].iloc[0] == "study.txt" and sheet["Page"].iloc[0] == "1"
    assert sheet["Group description"].tolist() == ["Parents of young children."] * 2 + [
        "Preschool teachers."]

    results = inputs / "results.xlsx"
    code = main(["majeval", "run", "--personas", str(personas), "--items",
                 str(inputs / "items.xlsx"), "--task-file", str(inputs / "task.txt"),
                 "--human-col", "expert", "--model", model.model, "--no-bootstrap",
                 "-o", str(results)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "3 items x 2 stakeholder groups (3 agents)" in err
    assert "group Teachers has one persona, so it cannot debate" in err
    sheets = pd.read_excel(results, sheet_name=None)
    assert sheets["Items"]["Overall quality"].tolist() == [5.0, 2.0, 5.0]
    # the judged text stands beside its scores
    items_in = pd.read_excel(inputs / "items.xlsx")
    assert sheets["Items"]["content"].tolist() == items_in["qa pair"].tolist()
    agreement = sheets["Agreement"]
    overall = agreement[(agreement.group == "All groups (overall score)")
                         & (agreement.stage == "after debate")
                         & (agreement.statistic == "Spearman rho")]
    assert overall.human_dimension.tolist() == ["expert"] and overall.n.tolist() == [3]
    assert overall.value.iloc[0] == pytest.approx(0.866, abs=1e-3)


def test_failed_debates_give_exit_code_3_and_bad_personas_exit_1(inputs, model, capsys):  # noqa: F811
    pd.DataFrame({"group": ["Parents", "Parents"], "name": ["Dana Ray", "Eli Stone"],
                  "perspective": ["Fun questions.", "Short questions."]}).to_excel(
        inputs / "p.xlsx", index=False, sheet_name="Personas")
    pd.DataFrame({"content": ["Q: BROKEN? A: yes."]}).to_excel(inputs / "one.xlsx",
                                                              index=False)
    code = main(["majeval", "run", "--personas", str(inputs / "p.xlsx"), "--items",
                 str(inputs / "one.xlsx"), "--task-file", str(inputs / "task.txt"),
                 "--model", model.model, "-o", str(inputs / "r.xlsx")])
    assert code == 3
    agents = pd.read_excel(inputs / "r.xlsx", sheet_name="Agent scores")
    eli = agents[agents.agent == "Eli Stone"].iloc[0]
    assert eli.status == "failed" and pd.isna(eli.final) and "expected form" in eli.note

    pd.DataFrame({"group": ["Parents"], "name": [""], "perspective": ["x"]}).to_excel(
        inputs / "bad.xlsx", index=False, sheet_name="Personas")
    code = main(["majeval", "run", "--personas", str(inputs / "bad.xlsx"), "--items",
                 str(inputs / "one.xlsx"), "--task-file", str(inputs / "task.txt"),
                 "--model", model.model, "-o", str(inputs / "r2.xlsx")])
    err = capsys.readouterr().err
    assert code == 1
    assert 'bad.xlsx, sheet "Personas", row 2, column B ("name"): name is empty' in err


def test_simple_roles_are_built_from_the_group_description_in_the_personas_file(
        inputs, model, capsys):  # noqa: F811
    pd.DataFrame({"group": ["Parents", "Parents"], "name": ["Dana Ray", "Eli Stone"],
                  "perspective": ["Fun questions.", "Short questions."],
                  "specialty": ["Bedtime stories.", ""],
                  "group_description": ["Parents of young children.", ""]}).to_excel(
        inputs / "p.xlsx", index=False, sheet_name="Personas")
    code = main(["majeval", "run", "--personas", str(inputs / "p.xlsx"), "--items",
                 str(inputs / "items.xlsx"), "--task-file", str(inputs / "task.txt"),
                 "--simple-roles", "--model", model.model, "-o", str(inputs / "r.xlsx")])
    assert code == 0, capsys.readouterr().err
    systems = {re.search(r"<identity-\w+>(.*?)</identity-", r.messages[0]["content"]).group(1)
               for r in model.requests if kind(r.messages) == "phase1"}  # the fenced persona
    assert systems == {
        ("You are Dana Ray, one of the Parents (parents of young children); your specialty: "
        "bedtime stories."),
        "You are Eli Stone, one of the Parents (parents of young children)."}


def copying(messages):
    """A model too small for the task: it hands back the description of the form."""
    what = kind(messages)
    if what == "extract":
        return {"stakeholders": [{"name": "group name", "characteristics": "one sentence",
                                  "perspectives": [{"perspective": "...",
                                                    "evidence": "the supporting sentence, "
                                                                "copied from the text"}]}]}
    if what in ("phase1", "final"):
        return {"rationale": "your reasons in at most four sentences",
                "scores": {"Overall quality": 3}}
    if what == "turn":
        return {"message": "what you say to the group in at most four sentences",
                "no_more_comments": False, "scores": {"Overall quality": 3}}
    if what == "aggregate":
        return {"agreement": "your summary of the points they share",
                "disagreement": "who differs from whom and why", "overall": "..."}
    raise AssertionError(what)


def test_a_model_that_copies_the_instructions_fails_visibly_with_exit_code_3(inputs, capsys):  # noqa: F811
    from core.llm import ScriptedLLM

    llm = ScriptedLLM(copying, name="majeval-copies")
    try:
        code = main(["majeval", "personas", str(inputs / "study.txt"), "--task-file",
                     str(inputs / "task.txt"), "--model", llm.model, "-o",
                     str(inputs / "personas.xlsx")])
        err = capsys.readouterr().err
        assert code == 3, err
        assert "repeated the instructions instead of answering" in err
        assert "try a larger model" in err
        assert not (inputs / "personas.xlsx").exists()  # nothing made up

        pd.DataFrame({"group": ["Parents", "Parents"], "name": ["Dana Ray", "Eli Stone"],
                      "perspective": ["Fun questions.", "Short questions."]}).to_excel(
            inputs / "p.xlsx", index=False, sheet_name="Personas")
        code = main(["majeval", "run", "--personas", str(inputs / "p.xlsx"), "--items",
                     str(inputs / "items.xlsx"), "--task-file", str(inputs / "task.txt"),
                     "--model", llm.model, "-o", str(inputs / "r.xlsx")])
        err = capsys.readouterr().err
        assert code == 3, err
        assert "Most debates (3 of 3) failed because the model repeated the instructions" in err
        book = pd.read_excel(inputs / "r.xlsx", sheet_name=None)
        assert book["Items"].status.tolist() == ["failed"] * 3
        assert book["Items"]["Overall quality"].isna().all()  # never the example's 3
        readme = book["Read me"]
        first = readme.iloc[0].astype(str).tolist()
        assert first[0] == "WARNING" and "too small for MAJ-Eval" in first[1]
    finally:
        llm.close()


def test_a_run_with_a_project_resumes_and_asks_nothing_again(inputs, model, capsys):  # noqa: F811
    """With --project the command line keeps every finished debate, through the same session
    as the app: the same command again asks the model nothing."""
    pd.DataFrame({"group": ["Parents", "Parents"], "name": ["Dana Ray", "Eli Stone"],
                  "perspective": ["Fun questions.", "Short questions."]}).to_excel(
        inputs / "p.xlsx", index=False, sheet_name="Personas")
    command = ["majeval", "run", "--personas", str(inputs / "p.xlsx"), "--items",
               str(inputs / "items.xlsx"), "--task-file", str(inputs / "task.txt"),
               "--model", model.model, "--project", str(inputs / "study.evaldesk"),
               "--no-bootstrap", "-o", str(inputs / "r.xlsx")]
    assert main(command) == 0, capsys.readouterr().err
    calls = model.calls
    assert main(command) == 0, capsys.readouterr().err
    assert model.calls == calls
    from core.majeval.session.choices import load_choices
    from core.project import Project

    with Project.open(inputs / "study.evaldesk") as project:
        state = load_choices(project)
        assert [i.id for i in state.item_list] == ["q1", "q2", "q3"]
        assert state.items.columns == {"content": "qa pair", "context": "story", "id": "id"}


def test_keep_references_keeps_the_reference_list(tmp_path):
    """`majeval personas --keep-references` is accepted and kept in the project's choices."""
    from core.cli import build_parser

    args = build_parser("majeval").parse_args(
        ["majeval", "personas", "doc.md", "--task-file", "t.txt", "--model", "m",
         "--keep-references", "-o", "p.xlsx"])
    assert args.keep_references is True
    assert build_parser("majeval").parse_args(
        ["majeval", "personas", "doc.md", "--task-file", "t.txt", "--model", "m", "-o",
         "p.xlsx"]).keep_references is False
