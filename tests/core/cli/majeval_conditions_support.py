"""Shared by the ``evaldesk majeval run`` tests of conditions and repeats: twelve items with
their human ratings (``HUMAN``), the scripted model ``model`` whose debaters follow them, and
the input files ``files`` (personas, items, task)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.core.majeval.majeval_support import SYNTHESIS, evaluation, item_of, kind, turn

N_ITEMS = 12
#: item -> the human rating; the debaters follow it, the single judge does not.
HUMAN = {f"i{k}": 1 + k % 5 for k in range(N_ITEMS)}


def _item_id(text: str) -> str:
    return text.split(":", 1)[0].strip()


def reply(messages):
    what = kind(messages)
    if what == "aggregate":
        return SYNTHESIS
    system = messages[0]["content"]
    if "Evaluation steps:" in system:  # the single judge: scores that ignore the item
        content = messages[-1]["content"]
        which = next(k for k in HUMAN if f"{k}: " in content)
        return evaluation(1 + (int(which[1:]) * 7) % 5, "It reads well enough.")
    score = HUMAN[_item_id(item_of(messages))]
    if what == "turn":  # the simple roles say it otherwise (else their summaries are cached)
        simple = ", one of the " in system
        return turn("Same here, I agree." if simple else "I agree with the others.", score)
    return evaluation(score, "Fits the child.")


@pytest.fixture
def model():
    from core.llm import ScriptedLLM

    llm = ScriptedLLM(reply, name="majeval-conditions")
    yield llm
    llm.close()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "task.txt").write_text("Judge QA pairs for children.\n", encoding="utf-8")
    pd.DataFrame({"group": ["Parents", "Parents", "Teachers", "Teachers"],
                  "name": ["Dana Ray", "Eli Stone", "Amy Lee", "Bo Chan"],
                  "perspective": ["Fun.", "Short.", "Real life.", "Words."],
                  "group_description": ["Parents of young children.", "",
                                        "Preschool teachers.", ""]}
                 ).to_excel(tmp_path / "p.xlsx", index=False, sheet_name="Personas")
    pd.DataFrame({"id": list(HUMAN), "content": [f"{k}: Q: Why? A: Because." for k in HUMAN],
                  "expert": list(HUMAN.values())}).to_excel(tmp_path / "items.xlsx",
                                                            index=False)
    return tmp_path
