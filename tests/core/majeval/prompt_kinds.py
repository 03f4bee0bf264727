"""Which MAJ-Eval prompt a scripted request answers, and as whom: shared by the engine's tests
and the wizard's scripted panel, so both follow the templates in resources/prompts/majeval/."""

from __future__ import annotations

import re
from typing import Any


def unfenced(text: str) -> str:
    """``text`` without the fences' tags around material (``core.prompts.fence``), their
    content kept: what a scripted model reads when it looks for a name or a number."""
    text = re.sub(r"<[a-z][a-z_]*-[0-9a-f]{8}>\n?", "", text)
    return re.sub(r"\n?</[a-z][a-z_]*-[0-9a-f]{8}>", "", text)


def speaker(messages: list[dict[str, Any]]) -> str:
    """The persona a request speaks as (from "You are <name>." in the system prompt)."""
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    # inside the persona's fence: "<identity-CODE>\nYou are ..." or, for a simple role, on
    # the fence's own line
    found = re.search(r"(?:^|<identity-[0-9a-f]+>)You are (.+?)(?:\.\n|\.$|, one of|\. |\.<)",
                      system, re.MULTILINE)
    return found.group(1) if found else ""


def kind(messages: list[dict[str, Any]]) -> str:
    """Which MAJ-Eval prompt a request comes from (tied to resources/prompts/majeval/)."""
    text = "\n".join(str(m.get("content") or "") for m in messages)
    if "neutral aggregator" in text:
        return "aggregate"
    if "Evaluation steps:" in text:
        return "judge"
    if "has ended" in text:
        return "final"
    if "It is your turn" in text:
        return "turn"
    if "Phase 1." in text:
        return "phase1"
    if "find out who cares" in text:
        return "extract"
    if "organise stakeholders" in text:
        return "group"
    if "write personas" in text:
        return "persona"
    return "?"
