"""``evaldesk checklist compare``: checklists from people's notes only, the models' think-aloud
only, and both, each scoring the same texts; the Comparison sheet read back with openpyxl; a
re-run with --project asks the model nothing."""

from __future__ import annotations

import pytest

from core.cli import main
from tests.core.cli.checklist_cli_support import inputs, scripted_model  # noqa: F401 (fixtures)


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
        "Checklist from both (the method)", "Text length alone (number of words, the baseline)"]
    # two source documents are too few for the paper's paired test over documents: pooled
    assert {r["statistic"] for r in body} == {"Spearman rho pooled over all texts"}
    assert {r["compared"] for r in body} == {"pooled over all texts"}
    assert all("share few source documents (2 in all" in r["why_this_way"] for r in body)
    assert "How Coherence was compared: pooled over all texts: the texts share few" in err
    human = body[0]
    assert human["vs_combined_difference"] is None
    assert "not enough units" in human["vs_combined_note"]
    # every sentence names the dimension (issue 28, point 13)
    assert "cannot be compared against your ratings of Coherence: not enough units" in err
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


def _args(inputs, *extra):  # noqa: F811
    return ["checklist", "compare", "--dimension", "Coherence", "--definition-file",
            str(inputs / "def.txt"), "--samples", str(inputs / "samples.xlsx"), "--notes",
            str(inputs / "anna.txt"), "--model", "scripted/ie-cli-judge", "--items",
            str(inputs / "items.xlsx"), "--text-col", "summary", *extra]


@pytest.fixture
def judge_model():
    from core.llm import ScriptedLLM
    from tests.core.interacteval_support import BUILD_REPLIES

    def reply(messages):
        prompt = "\n".join(m["content"] for m in messages)
        for key, value in BUILD_REPLIES.items():
            if key in prompt:
                return value
        good = "good summary" in prompt
        if "Evaluation steps:" in prompt:
            return {"reasons": "Clear order of ideas." if good else "Jumps around.",
                    "score": 5 if good else 2}
        return {"q1": "yes", "q2": "yes" if good else "no", "q3": "yes" if good else "no"}

    llm = ScriptedLLM(reply, name="ie-cli-judge")
    yield llm
    llm.close()


def test_the_single_judge_is_a_condition_with_its_own_rows(inputs, judge_model,  # noqa: F811
                                                           capsys):
    from openpyxl import load_workbook

    args = _args(inputs, "--conditions", "combined,single-judge", "--project",
                 str(inputs / "j.evaldesk"), "-o", str(inputs / "judge.xlsx"))
    assert main(args) == 0
    err = capsys.readouterr().err
    judged = [r for r in judge_model.requests if "Evaluation steps:" in r.prompt]
    # the estimate before, beside what the run made after
    assert "Estimate: " in err
    assert f"made {len(judge_model.requests)}" in err.split("Calls: estimated")[1].split("\n")[0]
    assert len(judged) == 6  # one call per text and dimension
    book = load_workbook(inputs / "judge.xlsx", read_only=True)
    rows = list(book["Comparison"].iter_rows(values_only=True))
    body = [dict(zip(rows[0], r)) for r in rows[1:]]
    assert [r["condition"] for r in body] == [
        "Checklist from both (the method)",
        "Single judge, 1-5 with the definition (no checklist)",
        "Text length alone (number of words, the baseline)"]
    scores = [dict(zip(rows[0], r)) for rows in [list(book["Scores"].iter_rows(
        values_only=True))] for r in rows[1:]]
    judge = [s for s in scores if s["condition"].startswith("Single judge")]
    assert sorted(s["score"] for s in judge) == [2, 2, 5, 5, 5, 5]
    assert {s["note"] for s in judge} == {"Clear order of ideas.", "Jumps around."}
    calls = len(judge_model.requests)
    assert main(args) == 0
    assert len(judge_model.requests) == calls  # kept: nothing asked again


def test_dry_run_estimates_every_condition_and_calls_nothing(inputs, judge_model,  # noqa: F811
                                                             capsys):
    args = _args(inputs, "--conditions", "human,ai,combined,single-judge", "--dry-run",
                 "--project", str(inputs / "d.evaldesk"), "-o", str(inputs / "dry.xlsx"))
    assert main(args) == 0
    out = capsys.readouterr().out
    assert judge_model.requests == []
    assert not (inputs / "dry.xlsx").exists()
    # think-aloud once, 5 steps x 3 checklists, 6 texts x 3 checklists (at most 2 calls each),
    # 6 single-judge calls
    assert out.splitlines()[0].startswith("40 to 58 calls to scripted/ie-cli-judge")
    assert "think-aloud on Coherence" in out and "single judge" in out
    assert "human: components of Coherence" in out
    assert "Tokens:" in out and "Time:" in out
    # after the run, the same dry run says nothing is left to do
    run = _args(inputs, "--conditions", "human,ai,combined,single-judge", "--project",
                str(inputs / "d.evaldesk"), "-o", str(inputs / "dry.xlsx"))
    assert main(run) == 0
    capsys.readouterr()
    assert main(args) == 0
    assert "No model calls" in capsys.readouterr().out


def test_repeats_are_counted_run_kept_and_written_to_a_stability_sheet(
        inputs, judge_model, capsys):  # noqa: F811
    from openpyxl import load_workbook

    project = ["--conditions", "combined,single-judge", "--project", str(inputs / "r.evaldesk"),
               "-o", str(inputs / "repeats.xlsx")]
    assert main(_args(inputs, *project, "--dry-run")) == 0
    once = capsys.readouterr().out.splitlines()[0]
    assert main(_args(inputs, *project, "--dry-run", "--repeats", "3")) == 0
    out = capsys.readouterr().out
    assert judge_model.requests == []
    assert "made 3 times" in out and "the checklists are built once" in out
    # think-aloud 1 + 5 construction calls once; 6 scoring (at most 12) and 6 single-judge
    # calls x 3
    assert once.startswith("18 to 24 calls")
    assert out.splitlines()[0].startswith("42 to 60 calls")
    assert main(_args(inputs, *project, "--repeats", "3")) == 0
    err = capsys.readouterr().err
    judged = [r for r in judge_model.requests if "Evaluation steps:" in r.prompt]
    assert len(judged) == 3 * 6  # every repeat asked anew
    assert "The single judge gives much the same scores when asked again" in err
    assert "The judge (Checklist from both (the method)) gives" in err
    book = load_workbook(inputs / "repeats.xlsx", read_only=True)
    assert book.sheetnames[:4] == ["Comparison", "Checklists", "Scores", "Stability"]
    rows = list(book["Stability"].iter_rows(values_only=True))
    body = [dict(zip(rows[0], r)) for r in rows[1:]]
    summary = [r for r in body if str(r["unit"]).startswith("all texts")]
    assert [r["condition"] for r in summary] == [
        "Checklist from both (the method)",
        "Single judge, 1-5 with the definition (no checklist)"]
    assert all(r["alpha"] == pytest.approx(1.0) for r in summary)
    texts = [r for r in body if r["condition"].startswith("Single judge")
             and not str(r["unit"]).startswith("all texts")]
    assert len(texts) == 6
    assert all(r["repeat 0"] == r["repeat 1"] == r["repeat 2"] and r["sd"] == 0 for r in texts)
    calls = len(judge_model.requests)
    assert main(_args(inputs, *project, "--repeats", "3")) == 0
    assert len(judge_model.requests) == calls  # finished repeats: nothing asked again
    assert "Stability" in load_workbook(inputs / "repeats.xlsx", read_only=True).sheetnames


def test_repeats_out_of_range_are_refused(inputs, judge_model, capsys):  # noqa: F811
    assert main(_args(inputs, "--repeats", "11", "-o", str(inputs / "x.xlsx"))) == 1
    assert "--repeats must be a whole number from 1 to 10" in capsys.readouterr().err
    assert judge_model.requests == []
