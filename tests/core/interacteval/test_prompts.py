"""InteractEval's prompt templates show no example values a model could copy, and a run where
most texts fail because the model repeated the instructions says so."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from core.interacteval._prompts import load, template_path
from core.prompts import PLACEHOLDER_WORDS

TEMPLATES = sorted(p.stem for p in template_path("think_aloud").parent.glob("*.txt"))


def test_all_thirteen_templates_are_checked():
    # eight of the paper's steps, the single judge, three of the grounded path, and the merge
    # of components found in parts of notes too many for one prompt
    assert len(TEMPLATES) == 13


@pytest.mark.parametrize("name", TEMPLATES)
def test_templates_describe_the_reply_without_example_values(name):
    """A template may name the reply's keys but never shows a filled-in reply: the bundled
    model returned "first component" and the yes/no/yes pattern of the old examples."""
    template = load(name)
    text = template.system + "\n" + template.user
    assert not re.search(r"[{\[]\s*\"", text), "a JSON example with values"
    assert not re.search(r"\$first_keys", text)
    folded = " ".join(text.casefold().split())
    copyable = [w for w in PLACEHOLDER_WORDS if len(w) > 3 and f'"{w}"' in folded]
    assert not copyable
    assert "Does the text ...?" not in text and "..." not in text


# ------------------------------------------------------------------ most texts copied: said
@pytest.fixture
def copying_model():
    from core.llm import ScriptedLLM

    def reply(messages):
        prompt = "\n".join(m["content"] for m in messages)
        n = len(re.findall(r"^q\d+\. ", prompt, re.MULTILINE))
        if "GOOD" in prompt:
            return {f"q{i}": "yes" for i in range(1, n + 1)}
        return {f"q{i}": "yes/no" for i in range(1, n + 1)}  # the form, not an answer

    llm = ScriptedLLM(reply, name="ie-copying")
    yield llm
    llm.close()


def _checklist_file(path):
    from core.interacteval import Checklist, ChecklistItem, write_checklists

    write_checklists(path, [Checklist(dimension="Coherence", definition="Hangs together.",
                                      items=[ChecklistItem(question=q) for q in ("A?", "B?")])])
    return path


def test_a_run_where_most_texts_copied_the_instructions_says_so(tmp_path, copying_model, capsys):
    from core.cli import main

    checklist = _checklist_file(tmp_path / "c.xlsx")
    items = tmp_path / "items.csv"
    pd.DataFrame({"id": ["a", "b", "c"], "text": ["GOOD text.", "Other text.", "Third text."],
                  "Coherence": [4, 2, 3]}).to_csv(items, index=False)
    results = tmp_path / "r.xlsx"
    code = main(["checklist", "score", "--checklist", str(checklist), "--items", str(items),
                 "--model", "scripted/ie-copying", "-o", str(results)])
    err = capsys.readouterr().err
    assert code == 3
    assert "for 2 of 3 the model repeated the instructions" in err
    scores = pd.read_excel(results, sheet_name="Scores", dtype=str)
    copied = scores[scores.text_id != "a"]
    assert set(copied.status) == {"failed"} and copied.score.isna().all()
    assert copied.note.str.contains("try a larger model").all()
    readme = pd.read_excel(results, sheet_name="Read me", dtype=str)
    first = readme.iloc[0].tolist()
    assert "WARNING" in first and any("repeated the instructions" in str(v) for v in first)


def test_a_few_copies_are_failures_without_the_warning():
    from core.interacteval import ScoringSettings, TextScore
    from core.interacteval.pipeline import ScoringRun

    def score(i, kind):
        return TextScore(text_id=str(i), dimension="D", status="failed" if kind else "ok",
                         score=None if kind else 3.0, failure_kind=kind)

    run = ScoringRun(scores=[score(0, "copied_instructions"), score(1, ""), score(2, "")],
                     settings=ScoringSettings())
    assert run.copy_warning == ""
    run.scores[1] = score(1, "copied_instructions")
    assert "2 of 3" in run.copy_warning


def test_checklist_build_exits_3_when_the_model_copies(tmp_path, capsys):
    from core.cli import main
    from core.llm import ScriptedLLM

    (tmp_path / "def.txt").write_text("How well it hangs together.", encoding="utf-8")
    pd.DataFrame({"source": ["s"] * 4, "text": [f"Sample {i}" for i in range(4)],
                  "score": [1, 2, 3, 5]}).to_excel(tmp_path / "samples.xlsx", index=False)

    def reply(messages):
        prompt = "\n".join(m["content"] for m in messages)
        if "considerations" in prompt:
            return {"considerations": ["first consideration", "second consideration"]}
        raise AssertionError("the build should have stopped")

    with ScriptedLLM(reply, name="ie-copying-build"):
        code = main(["checklist", "build", "--dimension", "Coherence", "--definition-file",
                     str(tmp_path / "def.txt"), "--samples", str(tmp_path / "samples.xlsx"),
                     "--model", "scripted/ie-copying-build", "-o", str(tmp_path / "c.xlsx")])
    err = capsys.readouterr().err
    assert code == 3
    assert "repeated the instructions" in err and "try a larger model" in err
    assert not (tmp_path / "c.xlsx").exists()


def test_a_dimension_without_definition_is_said_to_have_none_in_every_prompt():
    from core.interacteval._common import dimension_values
    from core.interacteval.estimate import plan_build
    from core.interacteval.model import Dimension, TextItem
    from core.interacteval.single_judge import judge_values

    blank = Dimension(name="Coherence", definition="  \n")
    given = Dimension(name="Coherence", definition=" Flows well. ")
    assert dimension_values(blank) == {"dimension": "Coherence",
                                       "definition": "(no definition given)"}
    assert dimension_values(given)["definition"] == "Flows well."
    values = judge_values(blank, TextItem(id="1", text=" A text. "))
    assert values["definition"] == "(no definition given)" and values["text"] == "A text."
    plans = plan_build(blank, [], [], think_aloud=1)
    said = [plan.name for plan in plans if "(no definition given)" in str(plan.prompts[0])]
    assert said == ["think-aloud on Coherence", "components of Coherence",
                    "key questions of Coherence", "sub questions of Coherence",
                    "checklist of Coherence"]  # grouping notes needs no definition
