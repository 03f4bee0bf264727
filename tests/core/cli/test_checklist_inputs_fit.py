"""``evaldesk checklist score`` with a text longer than the model reads at once: refused before
any call, by name, with what to do (the issue's 32 KB text used to be sent, took 385 s and
failed). A checklist too long for one prompt with a text is asked in parts, and the text gets
the score the whole checklist in one call gives."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from tests.core.cli.checklist_cli_support import (  # noqa: F401 (fixtures)
    inputs,
    scripted_model,
    three_questions,
)

SUMMEVAL = Path("/work/shared/data/summeval/summeval.json")


def _long_text(size: int = 32_000) -> str:
    """About ``size`` characters of real news text (SummEval's articles one after another)."""
    if SUMMEVAL.exists():
        articles = list(dict.fromkeys(r["source"] for r in json.loads(SUMMEVAL.read_text())))
    else:  # pragma: no cover - the shared data is there on the project's machines
        articles = ["The council met on Tuesday to discuss the flood defences of the town. "]
    text = ""
    for article in articles:
        if len(text) >= size:
            break
        text += " ".join(article.split()) + "\n\n"
    return text[:size]


def test_a_32_kb_text_is_refused_before_any_call(inputs, scripted_model, capsys):  # noqa: F811
    items = pd.read_excel(inputs / "items.xlsx")
    items.loc[3, "summary"] = _long_text()
    assert len(items.loc[3, "summary"]) == 32_000
    items.to_excel(inputs / "items.xlsx", index=False)
    out = inputs / "r.xlsx"
    code = main(["checklist", "score", "--checklist", str(three_questions(inputs)), "--items",
                 str(inputs / "items.xlsx"), "--text-col", "summary", "--model",
                 "scripted/ie-cli", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert scripted_model.calls == 0 and not out.exists()
    assert "Nothing was sent to the model" in err, err
    assert "The text in row 5 with its source, scored on Coherence, is too long" in err
    assert "scored on Coherence" in err
    assert "too long for 'scripted/ie-cli'" in err and "8,192" in err
    assert "shorten the text" in err.casefold() and "larger context window" in err


def test_dry_run_says_why_it_cannot_start(inputs, scripted_model, capsys):  # noqa: F811
    items = pd.read_excel(inputs / "items.xlsx")
    items.loc[0, "summary"] = _long_text()
    items.to_excel(inputs / "items.xlsx", index=False)
    code = main(["checklist", "score", "--checklist", str(three_questions(inputs)), "--items",
                 str(inputs / "items.xlsx"), "--text-col", "summary", "--model",
                 "scripted/ie-cli", "--dry-run", "-o", str(inputs / "r.xlsx")])
    err = capsys.readouterr().err
    assert code == 1 and scripted_model.calls == 0
    assert "The text in row 2" in err


# ------------------------------------------------------------- a checklist asked in parts
@pytest.fixture
def answering():
    from core.llm import ScriptedLLM

    def reply(messages):
        import re

        prompt = messages[-1]["content"]
        keys = re.findall(r"^(q\d+)\. ", prompt, re.MULTILINE)
        # yes to even-numbered questions: the same answers whichever part asks
        return {k: "yes" if int(k[1:]) % 2 == 0 else "no" for k in keys}

    small = ScriptedLLM(reply, name="ie-parts", context_window=4096)
    big = ScriptedLLM(reply, name="ie-whole")
    yield small, big
    small.close()
    big.close()


async def test_a_long_checklist_is_asked_in_parts_with_the_same_score(answering):
    from core.interacteval import Checklist, ChecklistItem, ScoringSettings, TextItem
    from core.interacteval.checklist_scoring import score_text
    from core.interacteval.grounded import note_question
    from core.interacteval.inputs import read_notes
    from core.llm import Gateway, MemoryCache

    notes = read_notes(Path("/work/shared/data/interacteval/summeval/coherence/"
                            "human_llm_attributes.txt")).attributes
    checklist = Checklist(dimension="Coherence", definition="How well the sentences hang "
                          "together.", items=[ChecklistItem(question=note_question(a.text))
                                              for a in notes])  # the grounded path's 62
    record = json.loads(SUMMEVAL.read_text())[0]
    item = TextItem(id="d1-M1", text=record["system_output"], source=record["source"])
    small, big = answering
    parts = await score_text(checklist, item, Gateway(
        small.profile(context_window=4096, max_tokens=512), cache=MemoryCache()),
        settings=ScoringSettings())
    whole = await score_text(checklist, item, Gateway(
        big.profile(context_window=200_000, max_tokens=4096), cache=MemoryCache()),
        settings=ScoringSettings())
    assert big.calls == 1 and small.calls >= 2
    assert parts.status == whole.status == "ok"
    assert parts.score == whole.score == 1 + 4 * 31 / 62
    assert [a.answer for a in parts.answers] == [a.answer for a in whole.answers]
    # every request held the whole text and its source
    assert all(record["system_output"].strip() in r.prompt for r in small.requests)


# ------------------------------------------------------------------- MAJ-Eval, same rule
def test_majeval_run_refuses_an_item_too_long_before_any_call(tmp_path, capsys):
    from core.llm import ScriptedLLM

    model = ScriptedLLM(lambda messages: {}, name="majeval-cli-long")
    pd.DataFrame({"group": ["Parents", "Parents"], "name": ["Dana Ray", "Eli Stone"],
                  "perspective": ["Fun questions.", "Short questions."]}).to_excel(
        tmp_path / "p.xlsx", index=False, sheet_name="Personas")
    pd.DataFrame({"id": ["q1", "q2"],
                  "content": ["Q: What does a fox eat? A: Mice.", _long_text()],
                  "story": ["A fox story.", "A long story."]}).to_excel(
        tmp_path / "items.xlsx", index=False)
    (tmp_path / "task.txt").write_text("Judge QA pairs for children.\n", encoding="utf-8")
    try:
        code = main(["majeval", "run", "--personas", str(tmp_path / "p.xlsx"), "--items",
                     str(tmp_path / "items.xlsx"), "--task-file", str(tmp_path / "task.txt"),
                     "--model", model.model, "-o", str(tmp_path / "r.xlsx")])
    finally:
        model.close()
    err = capsys.readouterr().err
    assert code == 1, err
    assert model.calls == 0 and not (tmp_path / "r.xlsx").exists()
    assert "Nothing was sent to the model" in err
    assert "The item “q2” (row 3) with its context, debated by the group Parents, is too long" \
        in err


def test_checklist_build_refuses_a_rated_sample_too_long_before_any_call(
        inputs, scripted_model, capsys):  # noqa: F811
    samples = pd.read_excel(inputs / "samples.xlsx", dtype=str)
    samples.loc[5, "source"] = _long_text()  # the sample with score 5, always suggested
    samples.to_excel(inputs / "samples.xlsx", index=False)
    code = main(["checklist", "build", "--dimension", "Coherence",
                 "--definition-file", str(inputs / "def.txt"),
                 "--samples", str(inputs / "samples.xlsx"),
                 "--notes", str(inputs / "anna.txt"),
                 "--model", "scripted/ie-cli", "-o", str(inputs / "c.xlsx")])
    err = capsys.readouterr().err
    assert code == 1, err
    assert scripted_model.calls == 0 and not (inputs / "c.xlsx").exists()
    assert "Nothing was sent to the model" in err
    assert "The rated sample in row 7 is too long for 'scripted/ie-cli'" in err
    assert "choose a shorter sample" in err.casefold()
