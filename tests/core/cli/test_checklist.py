"""``evaldesk checklist build`` and ``evaldesk checklist score`` end to end with a scripted
model (``--model scripted/<name>``), in process."""

from __future__ import annotations

import pandas as pd

from core.cli import main
from tests.core.cli.checklist_cli_support import (  # noqa: F401 (fixtures)
    inputs,
    score_args,
    scripted_model,
    three_questions,
)


def test_build_then_score(inputs, scripted_model, capsys):  # noqa: F811
    checklist = inputs / "checklist.xlsx"
    code = main(["checklist", "build", "--dimension", "Coherence",
                 "--definition-file", str(inputs / "def.txt"),
                 "--samples", str(inputs / "samples.xlsx"),
                 "--notes", str(inputs / "anna.txt"),
                 "--model", "scripted/ie-cli", "-o", str(checklist)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "4 of 6" in err  # four samples suggested from six
    assert "2 notes from anna" in err
    sheet = pd.read_excel(checklist, sheet_name="Checklist", dtype=str)
    assert list(sheet.question) == ["Does each sentence follow from the last?",
                                    "Are transitions between ideas clear?",
                                    "Is there a clear beginning and end?"]
    attributes = pd.read_excel(checklist, sheet_name="Attributes", dtype=str)
    assert set(attributes.source) == {"scripted/ie-cli", "anna"}
    # the think-aloud showed the samples with scores 1, 2.33, 4 and 5 (rows 2, 4, 6, 7)
    think_aloud = scripted_model.prompts[0]
    assert "Sample summary 0" in think_aloud and "Sample summary 5" in think_aloud
    assert "Sample summary 1" not in think_aloud

    results = inputs / "results.xlsx"
    code = main(["checklist", "score", "--checklist", str(checklist),
                 "--items", str(inputs / "items.xlsx"), "--model", "scripted/ie-cli",
                 "-o", str(results)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert 'column "Coherence"' in err  # human scores found by the dimension's name
    assert "6 of 6 texts scored" in err
    scores = pd.read_excel(results, sheet_name="Scores")
    assert list(scores.score) == [5.0, 1 + 4 / 3, 5.0] * 2
    assert list(scores.source_id) == ["d1"] * 3 + ["d2"] * 3
    assert list(scores.system) == ["M1", "M2", "M3"] * 2
    assert list(scores.human_score) == [4.5, 2.0, 4.0] * 2
    texts = pd.read_excel(inputs / "items.xlsx")
    assert list(scores.text) == list(texts["summary"])  # the judged text beside its score
    agreement = pd.read_excel(results, sheet_name="Agreement")
    assert "per-source-document averaged" in set(agreement.kind)
    answers = pd.read_excel(results, sheet_name="Answers")
    assert len(answers) == 18


def test_score_with_failed_items_exits_3(inputs, scripted_model, capsys):  # noqa: F811
    from core.interacteval import Checklist, ChecklistItem, write_checklists

    checklist = inputs / "c.xlsx"
    write_checklists(checklist, [Checklist(dimension="Coherence", definition="d", items=[
        ChecklistItem(question=q) for q in ("A?", "B?", "C?")])])
    items = inputs / "few.csv"
    pd.DataFrame({"id": ["a", "b"], "text": ["A good summary.", "BROKEN"]}).to_csv(items,
                                                                                  index=False)
    results = inputs / "r.xlsx"
    code = main(["checklist", "score", "--checklist", str(checklist), "--items", str(items),
                 "--model", "scripted/ie-cli", "-o", str(results)])
    err = capsys.readouterr().err
    assert code == 3
    assert "1 text(s) have no score" in err
    scores = pd.read_excel(results, sheet_name="Scores")
    failed = scores[scores.text_id == "b"].iloc[0]
    assert failed.status == "failed" and pd.isna(failed.score)


def test_score_with_project_resumes_without_calls(inputs, scripted_model, capsys):  # noqa: F811
    args = score_args(inputs)
    assert main(args) == 0
    calls = scripted_model.calls
    assert calls == 6
    assert main(args) == 0
    assert scripted_model.calls == calls
    assert "6 scores were kept" in pd.read_excel(inputs / "r.xlsx", sheet_name="Read me"
                                                 ).to_string()


def test_score_names_a_missing_column(inputs, scripted_model, capsys):  # noqa: F811
    checklist = inputs / "c.xlsx"
    from core.interacteval import Checklist, ChecklistItem, write_checklists

    write_checklists(checklist, [Checklist(dimension="Coherence",
                                           items=[ChecklistItem(question="A?")])])
    code = main(["checklist", "score", "--checklist", str(checklist), "--items",
                 str(inputs / "items.xlsx"), "--text-col", "summry", "--model",
                 "scripted/ie-cli", "-o", str(inputs / "r.xlsx")])
    err = capsys.readouterr().err
    assert code == 1
    assert '"summry"' in err and '"summary"' in err  # suggests the close match


def test_human_col_needs_dimension_with_several(inputs, scripted_model, capsys):  # noqa: F811
    from core.interacteval import Checklist, ChecklistItem, write_checklists

    checklist = inputs / "c.xlsx"
    write_checklists(checklist, [
        Checklist(dimension="Coherence", items=[ChecklistItem(question="A?")]),
        Checklist(dimension="Fluency", items=[ChecklistItem(question="B?")])])
    code = main(["checklist", "score", "--checklist", str(checklist), "--items",
                 str(inputs / "items.xlsx"), "--human-col", "Coherence", "--model",
                 "scripted/ie-cli", "-o", str(inputs / "r.xlsx")])
    assert code == 1
    assert "DIMENSION=COLUMN" in capsys.readouterr().err


def test_unknown_profile(inputs, capsys):  # noqa: F811
    code = main(["checklist", "build", "--dimension", "Coherence", "--definition-file",
                 str(inputs / "def.txt"), "--samples", str(inputs / "samples.xlsx"),
                 "--profile", "Nope", "-o", str(inputs / "c.xlsx")])
    assert code == 1
    assert "no model profile called 'Nope'" in capsys.readouterr().err


def test_an_id_like_column_is_not_taken_as_text_id(inputs, scripted_model, capsys):  # noqa: F811
    checklist = three_questions(inputs)
    items = inputs / "models.csv"
    pd.DataFrame({"model_id": ["gpt", "gpt"], "text": ["A good summary.", "A weak one."]}
                 ).to_csv(items, index=False)
    results = inputs / "r.xlsx"
    code = main(["checklist", "score", "--checklist", str(checklist), "--items", str(items),
                 "--model", "scripted/ie-cli", "-o", str(results)])
    assert code == 0, capsys.readouterr().err
    scores = pd.read_excel(results, sheet_name="Scores", dtype=str)
    assert list(scores.text_id) == ["row 2", "row 3"]
    assert list(scores.system) == ["gpt", "gpt"]


def test_think_aloud_samples_travel_with_the_checklist_and_are_left_out(
    inputs, scripted_model, capsys  # noqa: F811
):
    checklist = inputs / "checklist.xlsx"
    assert main(["checklist", "build", "--dimension", "Coherence",
                 "--definition-file", str(inputs / "def.txt"),
                 "--samples", str(inputs / "samples.xlsx"),
                 "--model", "scripted/ie-cli", "-o", str(checklist)]) == 0
    samples = pd.read_excel(checklist, sheet_name="Samples", dtype=str)
    assert list(samples.text) == ["Sample summary 0", "Sample summary 2", "Sample summary 4",
                                  "Sample summary 5"]
    rows = [{"id": f"x{i}", "doc_id": "d1", "summary": text, "Coherence": human}
            for i, (text, human) in enumerate([
                ("A good summary.", 5), ("A weak text.", 1), ("Another good summary.", 4),
                ("sample summary 5", 2)])]  # the last one is a think-aloud sample
    pd.DataFrame(rows).to_excel(inputs / "mixed.xlsx", index=False)
    results = inputs / "r.xlsx"
    args = ["checklist", "score", "--checklist", str(checklist), "--items",
            str(inputs / "mixed.xlsx"), "--model", "scripted/ie-cli", "-o", str(results)]
    capsys.readouterr()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "1 scored text is a think-aloud sample (Coherence: x3)" in err
    scores = pd.read_excel(results, sheet_name="Scores", dtype=str)
    assert list(scores.think_aloud_sample) == ["no", "no", "no", "yes"]
    agreement = pd.read_excel(results, sheet_name="Agreement", dtype=str)
    pooled = agreement[agreement.kind == "pooled over all texts"]
    assert set(pooled.n) == {"3"}
    assert pooled.note.str.contains("1 think-aloud sample left out").all()
    assert "left out of the agreement" in pd.read_excel(
        results, sheet_name="Read me").to_string()

    assert main([*args, "--include-samples"]) == 0
    agreement = pd.read_excel(results, sheet_name="Agreement", dtype=str)
    pooled = agreement[agreement.kind == "pooled over all texts"]
    assert set(pooled.n) == {"4"}
    assert "included in the agreement" in pd.read_excel(
        results, sheet_name="Read me").to_string()


def test_compare_and_score_take_the_same_text_columns_explained_alike(capsys):
    from core.cli import build_parser

    def column_options(action: str) -> dict[str, tuple]:
        sub = build_parser()._subparsers._group_actions[0].choices["checklist"]
        parser = sub._subparsers._group_actions[0].choices[action]
        return {a.option_strings[0]: (a.required, a.metavar, a.default, a.help)
                for a in parser._actions
                if a.option_strings and a.option_strings[0] in {
                    "--items", "--sheet", "--text-col", "--source-col", "--source-id-col",
                    "--id-col", "--system-col", "--human-col"}}

    score, compare = column_options("score"), column_options("compare")
    assert len(score) == 8 and compare == score
    assert all(help_ for _r, _m, _d, help_ in compare.values())


def test_build_in_a_project_keeps_a_persons_edited_step(inputs, scripted_model, capsys):  # noqa: F811
    """Issue 28, point 6 on the command line: ``checklist build --project`` over a project where
    a person renamed the components keeps them (and says so), unless --replace-edits."""
    from core.interacteval.session import stages
    from core.project import Project

    project_path = inputs / "p.evaldesk"
    args = ["checklist", "build", "--dimension", "Coherence",
            "--definition-file", str(inputs / "def.txt"), "--samples", str(inputs / "samples.xlsx"),
            "--notes", str(inputs / "anna.txt"), "--model", "scripted/ie-cli",
            "--project", str(project_path), "-o", str(inputs / "checklist.xlsx")]
    assert main(args) == 0
    with Project.open(project_path) as project:
        # Anna put Structure first (the scripted model answers for these two names only)
        stages.edit_stage(project, "Coherence", "components", ["Structure", "Logical flow"],
                           who="Anna")
    capsys.readouterr()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "“components” of Coherence was edited by Anna" in err and "--replace-edits" in err
    with Project.open(project_path) as project:
        assert stages.get_stage(project, "Coherence", "components").value == [
            "Structure", "Logical flow"]

    assert main([*args[:-2], "--replace-edits", *args[-2:]]) == 0
    with Project.open(project_path) as project:
        assert stages.get_stage(project, "Coherence", "components").value == [
            "Logical flow", "Structure"]
        aside = stages.replaced_version(project, "Coherence", "components")
        assert aside["value"] == ["Structure", "Logical flow"] and aside["edited_by"] == "Anna"
