"""Shared pieces of the InteractEval wizard tests: a scripted model that answers every stage
(it follows the component names it is given, so edits between steps show in its replies) and
scores texts by the sample set's human scores."""

from __future__ import annotations

import csv
import re

from PySide6.QtCore import Qt

from core.interacteval.session import sample_folder

USER = "Test Person"


def human_scores() -> dict[str, dict[str, float]]:
    """answer text -> {dimension: human score} from the sample texts."""
    with open(sample_folder() / "texts.csv", encoding="utf-8", newline="") as handle:
        return {r["answer"]: {"Clarity": float(r["Clarity"]), "Accuracy": float(r["Accuracy"])}
                for r in csv.DictReader(handle)}


def _numbered(prompt: str, after: str) -> list[str]:
    block = prompt.split(after, 1)[1]
    out = []
    for line in block.splitlines():
        match = re.match(r"^\s*(\d+)\.\s+(.*)$", line)
        if match:
            out.append(match.group(2).strip())
        elif out and not line.strip():
            break
    return out


def scripted_reply(messages):
    """The scripted model: one rule per prompt template."""
    prompt = "\n".join(str(m.get("content") or "") for m in messages)
    if "What would you keep in mind" in prompt:
        return {"considerations": ["Check that each sentence leads to the next.",
                                   "Check that the words suit a child.",
                                   "Check that nothing stated is false."]}
    if "Which components of" in prompt:
        return {"components": ["Plain words", "Order of ideas"]}
    user = str(messages[-1].get("content") or "")
    if "Sort the notes under the components" in prompt:
        head, notes = user.split("The notes, numbered:", 1)
        components = re.findall(r"^\s*\d+\.\s+(.*)$", head, re.MULTILINE)
        n_notes = len(re.findall(r"^\s*\d+\.\s", notes, re.MULTILINE))
        groups = [list(range(1 + i, n_notes + 1, len(components)))
                  for i in range(len(components))]
        return {"clusters": [{"component": c, "notes": g} for c, g in zip(components, groups)]}
    if "Write exactly one key question" in prompt:
        names = re.findall(r"^\d+\.\s+(.*)$", user, re.MULTILINE)
        return {"key_questions": [{"component": n, "question": f"Is the text good on {n}?"}
                                  for n in names]}
    if "write two to five sub-questions" in prompt:
        names = re.findall(r"Component: (.*)", user)
        return {"groups": [{"component": n, "sub_questions": [f"Does the text do {n} well?",
                                                              f"Does the text avoid poor {n}?"]}
                           for n in names]}
    if "Check every question against these rules" in prompt:
        refs = re.findall(r"^\[(\d+\.\d+)\] \(.*?\) (.*)$", prompt, re.MULTILINE)
        return {"questions": [{"question": q, "based_on": [r]} for r, q in refs]}
    if "Evaluation steps:" in prompt:  # the single judge: the human score, rounded
        dimension = "Clarity" if "rate the Clarity" in prompt else "Accuracy"
        for text, scores in human_scores().items():
            if text in prompt:
                return {"reasons": "It reads as the people rated it.",
                        "score": round(scores[dimension])}
        return {"reasons": "Nothing stood out.", "score": 3}
    if "q1" in prompt:
        n = len(re.findall(r"^q\d+\. ", prompt, re.MULTILINE))
        dimension = "Clarity" if "Clarity" in prompt.split("The questions")[0] else "Accuracy"
        for text, scores in human_scores().items():
            if text in prompt:
                yes = round((scores[dimension] - 1) / 4 * n)
                return {f"q{i}": ("yes" if i <= yes else "no") for i in range(1, n + 1)}
        return {f"q{i}": "yes" for i in range(1, n + 1)}
    raise AssertionError("unexpected prompt: " + prompt[:300])


def click(qtbot, button) -> None:
    assert button.isEnabled(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def wait_step(qtbot, wiz, what: str, timeout: int = 20_000) -> str:
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
