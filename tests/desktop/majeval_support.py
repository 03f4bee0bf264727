"""Shared pieces of the MAJ-Eval wizard tests (and its screenshot script): a scripted panel
that answers every MAJ-Eval prompt of the sample set through the real gateway
(``core.llm.ScriptedLLM``). It quotes real sentences of the sample documents as evidence, so the
evidence view can find them, and scores items by the sample's invented teacher ratings, with
disagreement in phase 1 that the debate settles."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt

from tests.core.majeval.prompt_kinds import kind, speaker, unfenced

USER = "Test Person"

#: document -> stakeholders -> [(perspective, evidence sentence copied from the document)]
FOUND = {
    "parents_views.md": {
        "parents": [
            ("Questions should feel like a conversation, not a test.",
             ("One mother said that a question should feel like a conversation and not like a "
             "spelling test at school.")),
            ("Answers must be correct and simple so they can be read aloud.",
             ("Many parents asked that the answers be correct and simple, because they often "
             "read the suggested answer aloud to check what their child said.")),
            ("Questions should connect the story to the child's own feelings.",
             ("Parents said such questions help children name their feelings, which they see as "
             "important at this age.")),
        ],
        "grandparents": [
            ("A wrong answer confuses carers who cannot check it.",
             ("A grandmother who cares for two children after school said she does not have time "
             "to look up whether an answer is right, so a wrong answer would confuse both her "
             "and the children.")),
        ],
    },
    "teachers_views.md": {
        "teachers": [
            ("Questions should move from what happened to why it happened.",
             "Teachers said that good questions move from the literal to the inferential."),
            ("Every question must be answerable from the section read.",
             ("Teachers wanted every question to be answerable from the story section that was "
             "read.")),
        ],
        "special-education teachers": [
            ("Avoid sarcasm and figurative language.",
             ("A special-education teacher asked that questions avoid sarcasm and figurative "
             "language that some children take literally.")),
        ],
    },
}

NAMES = {"Parents and carers": ["Maria Lopez", "Tom Becker", "Aisha Khan", "Rose Whitfield"],
         "Teachers": ["Ms Ellen Park", "Mr David Osei", "Ms Nora Lind"]}

#: item content starts -> the consensus score the debate reaches (the invented teacher rating).
TRUE = {"What did Pip chase": 4, "How do you think Pip": 5, "What is the photosynthetic": 1,
        "How many seeds": 2, "Why did Grandpa": 5, "What will Leo": 1}


def _dimensions(messages: list[dict[str, Any]]) -> list[str]:
    """The dimensions an agent is asked to score (named in the reply's description)."""
    text = "\n".join(str(m.get("content") or "") for m in messages)
    found = re.search(r"one key per dimension \((.*?)\), each set to", text)
    return re.findall(r'"([^"]+)"', found.group(1)) if found else ["Overall quality"]


def _truth(messages: list[dict[str, Any]]) -> int:
    text = "\n".join(str(m.get("content") or "") for m in messages)
    for start, score in TRUE.items():
        if start in text:
            return score
    return 3


def _scores(messages: list[dict[str, Any]], score: int) -> dict[str, int]:
    return {d: score for d in _dimensions(messages)}


def panel(messages: list[dict[str, Any]], stubborn: frozenset[str] = frozenset()) -> Any:
    """The scripted model: one rule per MAJ-Eval prompt. Personas named in ``stubborn`` keep
    their first score in the debate (so group means and agreement are not all perfect)."""
    what = kind(messages)
    user = unfenced(str(messages[-1].get("content") or ""))
    if what == "extract":
        doc = re.search(r"Document: (.+?) \(", user)
        found = FOUND.get(doc.group(1) if doc else "", {})
        return {"stakeholders": [
            {"name": name, "characteristics": f"{name.capitalize()} of young children.",
             "perspectives": [{"perspective": p, "evidence": e} for p, e in items]}
            for name, items in found.items()]}
    if what == "group":
        lines = re.findall(r"^(\d+)\. \[([^:\]]+)", user, re.MULTILINE)
        groups: dict[str, list[list[int]]] = {}
        members: dict[str, list[str]] = {}
        for number, who in lines:
            group = "Teachers" if "teacher" in who else "Parents and carers"
            groups.setdefault(group, []).append([int(number)])
            if who not in members.setdefault(group, []):
                members[group].append(who)
        return {"groups": [{"name": g, "description": f"People who read with children: {g}.",
                            "stakeholders": members[g], "perspectives": p}
                           for g, p in groups.items()]}
    if what == "persona":
        group = re.search(r"Stakeholder group: (.+)", user).group(1).strip()
        numbers = re.findall(r"^(\d+)\. (.+)$", user.split("Perspectives:", 1)[1], re.MULTILINE)
        names = NAMES.get(group, ["Alex Morgan", "Sam Reid", "Kim Ito", "Jo Marsh"])
        return {"personas": [{
            "perspective_no": int(n), "name": names[(int(n) - 1) % len(names)],
            "demographics": f"{names[(int(n) - 1) % len(names)]} is 38 and lives near a school.",
            "perspective": f"I believe: {text}", "specialty": "Reading aloud with children.",
            "psychological_traits": "Patient and careful.",
            "social_relationships": "Talks often with other parents and teachers."}
            for n, text in numbers]}
    truth = _truth(messages)
    who = speaker(messages)
    offset = (sum(map(ord, who)) % 3) - 1  # -1, 0 or +1: they disagree at first
    first = min(5, max(1, truth + offset))
    if what == "phase1":
        return {"rationale": f"{who}: first view, {first}.", "scores": _scores(messages, first)}
    if what == "turn":
        if who in stubborn and first != truth:
            return {"message": f"I still see it differently: {first}, because the wording "
                               "would lose a young child.", "no_more_comments": False,
                    "scores": _scores(messages, first)}
        return {"message": f"NO MORE COMMENTS. {who} agrees on {truth}.",
                "no_more_comments": True, "scores": _scores(messages, truth)}
    if what == "final":
        final = first if who in stubborn else truth
        return {"rationale": f"{who}: final {final}.", "scores": _scores(messages, final)}
    if what == "judge":  # the single judge: close to the ratings, but not on every item
        guess = truth if truth in (1, 5) else 6 - truth
        return {"rationale": f"It mostly suits the story: {guess}.",
                "scores": _scores(messages, guess)}
    if what == "aggregate":
        return {"agreement": "They agree the question suits the story.",
                "disagreement": "One persona first found the wording too hard.",
                "overall": f"Overall the group settles on {truth}."}
    raise AssertionError("unexpected prompt: " + user[:300])


def demo_panel(messages: list[dict[str, Any]]) -> Any:
    """The panel with two personas who hold on to their first view (for screenshots)."""
    return panel(messages, frozenset({"Tom Becker", "Mr David Osei", "Aisha Khan"}))


def click(qtbot, button) -> None:
    assert button.isEnabled(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def wait_step(qtbot, wiz, what: str, timeout: int = 30_000) -> str:
    """Wait for the wizard's next ``step_ended`` of ``what``; returns its status."""
    got: list[str] = []

    def on(name: str, status: str) -> None:
        if name == what:
            got.append(status)

    wiz.step_ended.connect(on)
    try:
        qtbot.waitUntil(lambda: bool(got), timeout=timeout)
    finally:
        wiz.step_ended.disconnect(on)
    return got[0]
