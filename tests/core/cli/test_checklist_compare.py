"""``evaldesk checklist compare``: checklists from people's notes only, the models' think-aloud
only, and both, each scoring the same texts; the Comparison sheet read back with openpyxl; a
re-run with --project asks the model nothing."""

from __future__ import annotations

from core.cli import main
from tests.core.cli.test_checklist import inputs, scripted_model  # noqa: F401 (fixtures)


def test_the_three_checklists_are_built_scored_and_compared(
        inputs, scripted_model, capsys):  # noqa: F811
    from openpyxl import load_workbook

    args = ["checklist", "compare", "--dimension", "Coherence",
            "--definition-file", str(inputs / "def.txt"), "--samples",
            str(inputs / "samples.xlsx"), "--notes", str(inputs / "anna.txt"),
            "--model", "scripted/ie-cli", "--items", str(inputs / "items.xlsx"),
            "--text-col", "summary", "--project", str(inputs / "p.evaldesk"),
            "-o", str(inputs / "compare.xlsx")]
    assert main(args) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    calls = scripted_model.calls
    book = load_workbook(inputs / "compare.xlsx", read_only=True)
    assert book.sheetnames[:3] == ["Comparison", "Checklists", "Scores"]
    rows = list(book["Comparison"].iter_rows(values_only=True))
    body = [dict(zip(rows[0], r)) for r in rows[1:]]
    assert [r["condition"] for r in body] == [
        "Checklist from people's notes only", "Checklist from the models' think-aloud only",
        "Checklist from both (the method)"]
    assert {r["statistic"] for r in body} == {"Spearman rho per source document, averaged"}
    assert all(r["documents"] == 2 for r in body)
    human = body[0]
    assert human["vs_combined_difference"] is None
    assert "not enough units" in human["vs_combined_note"]
    assert "cannot be compared: not enough units" in err
    # the people's notes reach only the human and combined builds
    prompts = [p for p in scripted_model.prompts if "Check pronouns" in p]
    assert prompts
    scores = list(book["Scores"].iter_rows(values_only=True))
    assert len(scores) == 1 + 3 * 6

    assert main(args) == 0
    assert scripted_model.calls == calls  # nothing asked again


def test_an_unknown_condition_is_named(inputs, scripted_model, capsys):  # noqa: F811
    code = main(["checklist", "compare", "--dimension", "Coherence", "--definition-file",
                 str(inputs / "def.txt"), "--samples", str(inputs / "samples.xlsx"),
                 "--model", "scripted/ie-cli", "--items", str(inputs / "items.xlsx"),
                 "--conditions", "human,crowd", "-o", str(inputs / "c.xlsx")])
    assert code == 1
    assert "Unknown condition crowd" in capsys.readouterr().err
