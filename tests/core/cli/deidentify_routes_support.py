"""Shared by the de-identification route tests: texts that hold people's names and other
identifiers, the names the user gives, and fake models (answering over HTTP, from a recording
server) that speak of the people they were shown by their placeholders, as a real model told
about placeholders does."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from core.settings import ModelProfile, Settings, SettingsStore
from tests.core.interacteval_support import BUILD_REPLIES
from tests.core.majeval.majeval_support import GROUPS, item_of, kind
from tests.core.majeval.prompt_kinds import unfenced

#: Every value that must not leave the computer when de-identification is on.
NAMES = ("Maria Lopez", "Maria", "Lopez", "Jake Miller", "Jake", "Miller", "Sarah Chen", "Chen",
         "Tom Berg", "Berg", "Dana Ray", "Eli Stone", "Amy Lee")
PATTERNS = ("sarah.chen@lincoln.example.org", "555-201-3344", "4 March 2021",
            "2023-11-05", "20231234", "http://lincoln.example.org/staff")

STUDY = """Parents and shared reading

Dr. Sarah Chen, the school nurse, wrote to us from sarah.chen@lincoln.example.org (phone 555-201-3344). Parents told us that questions should be fun and short. Maria Lopez's mother said that long questions make her child lose interest.

Teachers in preschools use stories every day. Teachers want questions that connect the story with the real world. On 4 March 2021 Tom Berg explained that children learn new words when a question links the story to their own lives (see http://lincoln.example.org/staff).
"""
NAMES_FILE = "Student name\nMaria Lopez\nJake Miller\n\nPeople:\nTom Berg\n"


def placeholders(text: str) -> list[str]:
    return list(dict.fromkeys(re.findall(r"\[[A-Z]+ \d+\]", text)))


def sentence_with(text: str, words: str) -> str:
    """The sentence of ``text`` (as the model was shown it) that holds ``words``."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n", unfenced(text)):
        if words in sentence:
            return sentence.strip()
    raise AssertionError(f"no sentence with {words!r} in {text[:300]!r}")


def majeval_reply(messages: list[dict[str, Any]]) -> Any:
    """MAJ-Eval's stages: evidence quoted from the text as shown, placeholders spoken of."""
    what = kind(messages)
    text = "\n".join(str(m.get("content") or "") for m in messages)
    shown = placeholders(text)
    if what == "extract":
        chunk = messages[1]["content"]
        found = []
        if "fun and short" in chunk:
            mother = sentence_with(chunk, "long questions")
            child = placeholders(mother)[0] if placeholders(mother) else "the child"
            found.append({"name": "Parents", "characteristics": "Read at home.", "perspectives": [
                {"perspective": "Questions should be fun and short.",
                 "evidence": sentence_with(chunk, "fun and short")},
                {"perspective": f"Long questions lose the interest of a child like {child}.",
                 "evidence": mother}]})
        if "real world" in chunk:
            found.append({"name": "preschool teachers", "characteristics": "Use stories.",
                          "perspectives": [
                              {"perspective": "Link the story to children's own lives.",
                               "evidence": sentence_with(chunk, "learn new words")}]})
        return {"stakeholders": found}
    if what == "group":
        return GROUPS
    if what == "persona":
        who = shown[0] if shown else "a child"
        if "Stakeholder group: Parents" in unfenced(messages[-1]["content"]):
            return {"personas": [
                {"perspective_no": 1, "name": "Dana Ray", "demographics": f"Knows {who}'s family.",
                 "perspective": "I want fun, short questions.", "specialty": "Bedtime stories.",
                 "psychological_traits": "Cheerful.", "social_relationships": "Talks to teachers."},
                {"perspective_no": 2, "name": "Eli Stone", "demographics": "A father.",
                 "perspective": "Long questions bore my son.", "specialty": "Football coach.",
                 "psychological_traits": "Impatient.", "social_relationships": "Other dads."}]}
        return {"personas": [
            {"perspective_no": 1, "name": "Ms Amy Lee", "demographics": f"Teaches with {who}.",
             "perspective": "Link stories to life.", "specialty": "Early literacy.",
             "psychological_traits": "Calm.", "social_relationships": "Works with parents."}]}
    item = item_of(messages)
    students = [p for p in placeholders(item or text) if p.startswith("[STUDENT")]
    about = students[0] if students else "the child"
    good = "fox" in item
    if what == "phase1":
        return {"rationale": f"{about} answered the question.", "scores": {
            "Overall quality": 5 if good else 2}}
    if what == "turn":
        return {"message": f"I agree about {about}.", "no_more_comments": True,
                "scores": {"Overall quality": 5 if good else 2}}
    if what == "aggregate":
        return {"agreement": f"All agree {about} did well.", "disagreement": "None.",
                "overall": f"Suitable; {about} is named."}
    raise AssertionError(what)


def interacteval_reply(messages: list[dict[str, Any]]) -> Any:
    """InteractEval's stages: the build steps' canned answers, with the people shown in the
    think-aloud spoken of; Yes/No scores."""
    prompt = "\n".join(str(m.get("content") or "") for m in messages)
    shown = placeholders(prompt)
    for key, value in BUILD_REPLIES.items():
        if key in prompt:
            if key == "What would you keep in mind" and shown:
                return {"considerations": [(f"Check that ideas follow logically, as "
                                            f"{shown[0]} does."),
                                           "Check that the text is organised."]}
            return value
    if "The questions:" in prompt:
        good = "good summary" in prompt
        return {"q1": "yes", "q2": "Yes" if good else "no", "q3": "YES" if good else "no"}
    raise AssertionError(prompt[:300])


def majeval_inputs(folder) -> None:
    (folder / "study.txt").write_text(STUDY, encoding="utf-8")
    (folder / "task.txt").write_text("Judge QA pairs for reading stories with children aged 3 "
                                     "to 6.\n", encoding="utf-8")
    (folder / "names.txt").write_text(NAMES_FILE, encoding="utf-8")
    pd.DataFrame({
        "id": ["q1", "q2", "q3"],
        "qa pair": ["Q: What does a fox eat? A: Mice, wrote Jake Miller (student ID 20231234).",
                    "Q: Why? A: Because, said Maria Lopez on 2023-11-05.",
                    "Q: What colour is a fox? A: Red. Ask Jake at 555-201-3344."],
        "story": ["A fox story.", "A sky story.", "Another fox story."],
        "expert": ["5", "2", "4"],
    }).to_excel(folder / "items.xlsx", index=False)


def interacteval_inputs(folder) -> None:
    (folder / "def.txt").write_text("Coherence - the collective quality of all sentences.\n",
                                    encoding="utf-8")
    (folder / "names.txt").write_text(NAMES_FILE, encoding="utf-8")
    pd.DataFrame({
        "source": [f"Article {i}" for i in range(4)],
        "text": ["Maria Lopez wrote this sample summary on 4 March 2021.",
                 "Sample summary by Jake Miller (student ID 20231234).",
                 "Sample summary 2, marked by Tom Berg.", "Sample summary 3."],
        "score": ["1", "2.5", "4", "5"],
    }).to_excel(folder / "samples.xlsx", index=False)
    rows = []
    for doc in ("d1", "d2"):
        for system, quality, human in (("M1", "good summary", 4.5), ("M2", "weak text", 2.0),
                                       ("M3", "good summary too", 4.0)):
            rows.append({"doc_id": doc, "system_id": system, "source": f"Article {doc}",
                         "summary": f"A {quality} of {doc} by Maria Lopez "
                                    f"(sarah.chen@lincoln.example.org).",
                         "Coherence": str(human)})
    pd.DataFrame(rows).to_excel(folder / "items.xlsx", index=False)


def fake_profile(server, name: str = "Fake cloud") -> ModelProfile:
    """A model profile at the recording server, kept in Settings (as the user would)."""
    profile = ModelProfile(name=name, model="openai/fake-model", api_bases=[server.api_base],
                           max_retries=0, max_concurrency=2)
    store = SettingsStore()
    settings = store.load()
    settings.upsert_profile(profile)
    store.save(settings)
    return profile


def found_in(text: str, values) -> list[str]:
    """The values of ``values`` that stand in ``text`` as words."""
    return [v for v in values
            if re.search(rf"(?<![\w@.]){re.escape(v)}(?![\w@])", text)]


__all__ = ["NAMES", "PATTERNS", "Settings", "fake_profile", "found_in", "interacteval_inputs",
           "interacteval_reply", "majeval_inputs", "majeval_reply"]
