"""What the MAJ-Eval tests share (the command line's tests too): personas, items, the scripted
panel's replies, a study about the stakeholders, and the store a session run keeps its
debates in."""

from __future__ import annotations

import re
from typing import Any

from core.documents import Document, Page
from core.majeval import Persona
from tests.core.majeval.prompt_kinds import kind, speaker  # noqa: F401 (used by the tests)


def persona(group: str, name: str, **kw: Any) -> Persona:
    values = {"demographics": f"{name} is 40 and works in a school.",
                  "perspective": f"{name} cares about age-appropriate questions.",
                  "specialty": "Reading with children.", "psychological_traits": "Patient.",
                  "social_relationships": "Works with parents."}
    values.update(kw)
    return Persona(id=f"{group}/{name}", group=group, name=name, **values)


def item_of(messages: list[dict[str, Any]]) -> str:
    text = messages[0]["content"]
    found = re.search(r"content to judge:\n<content-([0-9a-f]+)>\n?(.*?)\n?</content-\1>", text,
                      re.DOTALL)
    return found.group(2) if found else ""


def evaluation(score: int, why: str = "fine", dim: str = "Overall quality") -> dict:
    return {"rationale": why, "scores": {dim: score}}


def turn(message: str, score: int, done: bool = False, dim: str = "Overall quality") -> dict:
    return {"message": message, "no_more_comments": done, "scores": {dim: score}}


SYNTHESIS = {"agreement": "They agree it is clear.", "disagreement": "Lee finds it too hard.",
             "overall": "Mostly suitable."}


def units_in(project: Any, *, task: str = "Judge QA pairs.", settings: Any = None,
             model: str = "") -> Any:
    """The store a session run keeps its debates in (``core.project.units.RunUnits`` over the
    project run of these choices): what ``evaluate(store=...)`` resumes from."""
    from core.majeval import DEFAULT_DIMENSION, DebateSettings, Scale
    from core.majeval.pipeline import RESULT_KIND
    from core.majeval.session.debates import open_evaluation_run
    from core.project.units import RunUnits

    run_id = open_evaluation_run(project, task, [DEFAULT_DIMENSION], Scale(),
                                 settings or DebateSettings(), model)
    return RunUnits(project, run_id, RESULT_KIND)


# ------------------------------------------------------------ a study about the stakeholders
PAGES = [
    ("Parents read with their children at bedtime.\n\nParents told us that questions should be "
    "fun and short."),
    "Teachers want questions that connect the story with the real world.\n\n" + "Filler. " * 300,
    "The parents also said that pictures help children answer.",
]
DOC = Document(path="study.pdf", name="study.pdf", kind="pdf",
               pages=[Page(number=i, text=t) for i, t in enumerate(PAGES, 1)])


def extraction_reply(messages):
    """The scripted extraction: the last chunk's first answer quotes a sentence that is not in
    the text (and gives one perspective no quote); asked again, it quotes the text."""
    text = messages[1]["content"]
    # asked again: after the first answer, or (when that would not fit the model's window)
    # with the problem added to the request itself
    reasked = len(messages) > 2 or "could not be used" in text
    found = []
    if "fun and short" in text:
        found.append({"name": "Parents", "characteristics": "Read at home.", "perspectives": [
            {"perspective": "Questions should be fun and short.",
             "evidence": "Parents told us that questions should be fun and short."}]})
    if "real world" in text:
        found.append({"name": "teachers", "characteristics": "", "perspectives": [
            {"perspective": "Link the story to the real world.",
             "evidence": "Teachers want questions that connect the story to real life."}]})
    if "pictures help" in text:
        quote = "The parents also said that pictures help children answer."
        found.append({"name": "The parents", "characteristics": "", "perspectives": [
            {"perspective": "Pictures help children answer.",
             "evidence": quote if reasked else
             "A sentence that is nowhere in the document at all, really."},
            {"perspective": "questions should be fun and short",
             "evidence": quote if reasked else ""}]})
    return {"stakeholders": found}


# --------------------------------------------- a short study as a text file, and its answers
STUDY = """Parents and shared reading

Many parents read with their children at bedtime. Parents told us that questions should be fun and short. One mother said that long questions make her child lose interest.

Teachers in preschools use stories every day. Teachers want questions that connect the story with the real world. A teacher explained that children learn new words when a question links the story to their own lives.
"""

STUDY_EXTRACT = {"stakeholders": [
    {"name": "Parents", "characteristics": "Read with their children at home.",
     "perspectives": [
         {"perspective": "Questions should be fun and short.",
          "evidence": "Parents told us that questions should be fun and short."},
         {"perspective": "Long questions lose the child's interest.",
          "evidence": "One mother said that long questions make her child lose interest."}]},
    {"name": "preschool teachers", "characteristics": "Use stories in class.",
     "perspectives": [
         {"perspective": "Questions should link the story to the real world.",
          "evidence": "Teachers want questions that connect the story with the real world."}]}]}
GROUPS = {"groups": [
    {"name": "Parents", "description": "Parents of young children.",
     "stakeholders": ["Parents"], "perspectives": [[1], [2]]},
    {"name": "Teachers", "description": "Preschool teachers.",
     "stakeholders": ["preschool teachers"], "perspectives": [[3]]}]}
