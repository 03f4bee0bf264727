"""Shared by the ``evaldesk majeval`` CLI tests: the scripted model ``model`` and the input
files ``inputs`` (a study text, a task and three items)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.core.majeval.majeval_support import (
    GROUPS,
    SYNTHESIS,
    evaluation,
    item_of,
    kind,
    speaker,
    turn,
)
from tests.core.majeval.majeval_support import (
    STUDY as DOC,
)
from tests.core.majeval.majeval_support import (
    STUDY_EXTRACT as EXTRACT,
)
from tests.core.majeval.prompt_kinds import unfenced


def persona_reply(messages):
    text = unfenced(messages[-1]["content"])
    if "Stakeholder group: Parents" in text:
        return {"personas": [
            {"perspective_no": 1, "name": "Dana Ray", "demographics": "A mother of two.",
             "perspective": "I want fun, short questions.", "specialty": "Bedtime stories.",
             "psychological_traits": "Cheerful.", "social_relationships": "Talks to teachers."},
            {"perspective_no": 2, "name": "Eli Stone", "demographics": "A father.",
             "perspective": "Long questions bore my son.", "specialty": "Football coach.",
             "psychological_traits": "Impatient.", "social_relationships": "Other dads."}]}
    return {"personas": [
        {"perspective_no": 1, "name": "Ms Amy Lee", "demographics": "A preschool teacher.",
         "perspective": "Link stories to life.", "specialty": "Early literacy.",
         "psychological_traits": "Calm.", "social_relationships": "Works with parents."}]}


def reply(messages):
    what = kind(messages)
    if what == "extract":
        return EXTRACT
    if what == "group":
        return GROUPS
    if what == "persona":
        return persona_reply(messages)
    if what == "aggregate":
        return SYNTHESIS
    good = "fox" in item_of(messages)
    if "BROKEN" in item_of(messages) and speaker(messages) == "Eli Stone":
        return "not JSON"
    if what == "phase1":
        return evaluation(5 if good else 2)
    if what == "turn":
        return turn("NO MORE COMMENTS", 5 if good else 2, done=True)
    raise AssertionError(what)


@pytest.fixture
def model():
    from core.llm import ScriptedLLM

    llm = ScriptedLLM(reply, name="majeval-cli")
    yield llm
    llm.close()


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "study.txt").write_text(DOC, encoding="utf-8")
    (tmp_path / "task.txt").write_text("Judge QA pairs for reading stories with children "
                                       "aged 3 to 6.\n", encoding="utf-8")
    pd.DataFrame({
        "id": ["q1", "q2", "q3"],
        "qa pair": ["Q: What does a fox eat? A: Mice.", "Q: Why? A: Because.",
                    "Q: What colour is a fox? A: Red."],
        "story": ["A fox story.", "A sky story.", "Another fox story."],
        "expert": ["5", "2", "4"],
    }).to_excel(tmp_path / "items.xlsx", index=False)
    return tmp_path
