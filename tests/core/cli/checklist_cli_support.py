"""Shared by the ``evaldesk checklist`` CLI tests: the scripted model ``scripted_model``
(named ``scripted/ie-cli``), the input files ``inputs``, a three-question checklist file and the
arguments of ``checklist score`` with both."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.core.interacteval_support import BUILD_REPLIES


@pytest.fixture
def scripted_model():
    from core.llm import ScriptedLLM

    def reply(messages):
        prompt = "\n".join(m["content"] for m in messages)  # a re-ask adds messages
        for key, value in BUILD_REPLIES.items():
            if key in prompt:
                return value
        if "The questions:" in prompt:
            if "BROKEN" in prompt:
                return "no idea"
            good = "good summary" in prompt
            return {"q1": "yes", "q2": "Yes" if good else "no", "q3": "YES" if good else "no"}
        raise AssertionError(prompt[:200])

    llm = ScriptedLLM(reply, name="ie-cli")
    yield llm
    llm.close()


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "def.txt").write_text("Coherence - the collective quality of all sentences.\n",
                                      encoding="utf-8")
    pd.DataFrame({
        "source": [f"Article {i}" for i in range(6)],
        "text": [f"Sample summary {i}" for i in range(6)],
        "score": ["1", "1.5", "2.33", "3", "4", "5"],
    }).to_excel(tmp_path / "samples.xlsx", index=False)
    (tmp_path / "anna.txt").write_text("- Check the flow\n- Check pronouns\n", encoding="utf-8")
    rows = []
    for doc in ("d1", "d2"):
        for system, quality, human in (("M1", "good summary", 4.5), ("M2", "weak text", 2.0),
                                       ("M3", "good summary too", 4.0)):
            rows.append({"doc_id": doc, "system_id": system, "source": f"Article {doc}",
                         "summary": f"A {quality} of {doc}.", "Coherence": str(human)})
    pd.DataFrame(rows).to_excel(tmp_path / "items.xlsx", index=False)
    return tmp_path


def three_questions(folder):
    """``folder/c.xlsx``: one dimension, Coherence, with the questions A?, B? and C?."""
    from core.interacteval import Checklist, ChecklistItem, write_checklists

    checklist = folder / "c.xlsx"
    write_checklists(checklist, [Checklist(dimension="Coherence", items=[
        ChecklistItem(question="A?"), ChecklistItem(question="B?"),
        ChecklistItem(question="C?")])])
    return checklist


def score_args(inputs) -> list[str]:
    """``checklist score`` of ``inputs``' items.xlsx (column summary) with the three-question
    checklist and the scripted model, kept in ``inputs/p.evaldesk``, written to r.xlsx."""
    return ["checklist", "score", "--checklist", str(three_questions(inputs)), "--items",
            str(inputs / "items.xlsx"), "--text-col", "summary", "--model", "scripted/ie-cli",
            "--project", str(inputs / "p.evaldesk"), "-o", str(inputs / "r.xlsx")]
