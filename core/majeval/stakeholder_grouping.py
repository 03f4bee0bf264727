"""Stage 2, step 1: stakeholder groups (paper 3.1: semantic grouping by an LLM).

One call sees every perspective of every document, numbered, with its stakeholder, and returns
groups of similar stakeholders; inside a group, perspectives that say the same thing are listed
together. The reply only points at numbers, so nothing is invented: each consolidated
perspective is the first original of its set and keeps the others' ids in ``merged``.

A reply must point back to the list (:func:`points_back`): at least one group, every group
named (not by a word of our form such as "group"), every number one of the list. A reply that
does not is asked again once, then the stage fails with the reason.

Our repairs of an otherwise usable reply (a small model needs them): a number used twice counts
where it first appears; a forgotten perspective joins the group of its stakeholder, or a new
group named after the stakeholder; groups left empty are dropped; groups with the same name are
joined.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.llm import LLMFailure, Rejection, copied_instructions
from core.majeval import _prompts
from core.majeval.model import (
    JsonLLM,
    Perspective,
    StageError,
    StageFailure,
    Stakeholder,
    StakeholderGroup,
    generic_name,
)
from core.majeval.perspective_extraction import normalise_name
from core.runs import CancelToken, Progress

__all__ = ["group_stakeholders", "grouping_schema", "numbered_perspectives", "points_back"]

STAGE = "Stakeholder grouping"
TEMPLATE = "stakeholder_grouping"


class _Group(BaseModel):
    name: str
    description: str = ""
    stakeholders: list[str] = Field(default_factory=list)
    perspectives: list[list[int]] = Field(default_factory=list)


class GroupingReply(BaseModel):
    groups: list[_Group] = Field(default_factory=list)


def grouping_schema(names: Sequence[str], count: int) -> type[GroupingReply]:
    """The reply's form for ``count`` numbered perspectives of the stakeholders ``names``: a
    :class:`GroupingReply` whose JSON schema (what a model with structured output is held to)
    allows only the listed stakeholder names and the numbers 1 to ``count``, at least one group
    and at most one per stakeholder, with short names and descriptions (a small model otherwise
    repeats itself until the answer is cut off). The reply is still checked in full
    (:func:`points_back`)."""
    listed = list(dict.fromkeys(" ".join(n.split()) for n in names if n.strip()))

    def tighten(schema: dict[str, Any]) -> None:
        group = schema.get("$defs", {}).get("_Group", {})
        fields = group.get("properties", {})
        fields.get("name", {})["maxLength"] = 80
        fields.get("description", {})["maxLength"] = 300
        if listed:
            fields.get("stakeholders", {}).update(
                items={"type": "string", "enum": listed}, minItems=1, maxItems=len(listed))
        fields.get("perspectives", {}).update(
            items={"type": "array", "minItems": 1, "maxItems": count,
                   "items": {"type": "integer", "enum": list(range(1, count + 1))}},
            minItems=1, maxItems=count)
        group["required"] = ["name", "description", "stakeholders", "perspectives"]
        groups = schema.get("properties", {}).get("groups", {})
        groups.update(minItems=1, maxItems=max(1, len(listed) or count))
        schema["required"] = ["groups"]

    return prompts.held_to(GroupingReply, tighten)


def numbered_perspectives(stakeholders: Sequence[Stakeholder]) -> list[Perspective]:
    """Every perspective in prompt order (number = position + 1); repeated ids only once."""
    seen: set[str] = set()
    out = []
    for holder in stakeholders:
        for p in holder.perspectives:
            if p.id not in seen:
                seen.add(p.id)
                out.append(p)
    return out


def _listing(stakeholders: Sequence[Stakeholder], perspectives: Sequence[Perspective]) -> str:
    about = {normalise_name(s.name): s.characteristics for s in stakeholders}
    lines = []
    for i, p in enumerate(perspectives, 1):
        who = p.stakeholder
        extra = about.get(normalise_name(who), "")
        line = f"{i}. [{who}{': ' + extra if extra else ''}] {p.perspective}"
        lines.append(" ".join(line.split()))  # one line each; the template fences the list
    return "\n".join(lines)


def points_back(count: int) -> Callable[[GroupingReply], Rejection | None]:
    """The stage's check of a grouping reply for ``count`` numbered perspectives."""

    def check(reply: GroupingReply) -> Rejection | None:
        if not reply.groups:
            return Rejection("there are no groups; put every stakeholder into a group")
        for group in reply.groups:
            if not group.name.strip() or generic_name(group.name):
                return copied_instructions(f"the group name \u201c{group.name}\u201d")
            unknown = sorted({n for numbers in group.perspectives for n in numbers
                              if not 1 <= n <= count})
            if unknown:
                listed = ", ".join(str(n) for n in unknown[:5])
                return Rejection(
                    f"group \u201c{group.name}\u201d lists perspective number(s) {listed}, but "
                    f"the list has numbers 1 to {count} only",
                    advice="The model's groups did not point back to the perspectives found: "
                           "try a larger model.")
        return None

    return check


async def group_stakeholders(
    stakeholders: Sequence[Stakeholder],
    task: str,
    llm: JsonLLM,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> list[StakeholderGroup]:
    """Group the stakeholders of all documents and merge repeated perspectives inside each
    group. Raises :class:`StageError` when the call fails or there is nothing to group."""
    progress = progress or Progress()
    perspectives = numbered_perspectives(stakeholders)
    if not perspectives:
        raise StageError("No stakeholder perspectives were found in the documents, so there is "
                         "nothing to group. Check the documents and the task description.",
                         stage=STAGE)
    progress.start("Grouping stakeholders", total=1)
    try:
        schema = grouping_schema([p.stakeholder for p in perspectives], len(perspectives))
        reply = await _prompts.ask(llm, TEMPLATE, schema, {
            "task": task, "stakeholders": _listing(stakeholders, perspectives)},
            check=points_back(len(perspectives)), cancel=cancel,
            refuse_loops=True)
    except LLMFailure as failure:
        raise StageError(f"Grouping the stakeholders did not work: {failure.message}",
                         stage=STAGE, failures=[StageFailure(
                             stage=STAGE, where="all stakeholders", kind=failure.kind,
                             message=failure.message)]) from failure
    progress.advance(1)
    return _build_groups(reply, perspectives)


def _build_groups(reply: GroupingReply, perspectives: Sequence[Perspective]
                  ) -> list[StakeholderGroup]:
    used: set[int] = set()
    groups: dict[str, StakeholderGroup] = {}
    order: list[str] = []

    def group_named(name: str, description: str = "") -> StakeholderGroup:
        key = normalise_name(name) or name
        if key not in groups:
            groups[key] = StakeholderGroup(name=" ".join(name.split()), description=description)
            order.append(key)
        elif description and not groups[key].description:
            groups[key].description = description
        return groups[key]

    def add(group: StakeholderGroup, numbers: list[int]) -> None:
        fresh = [n for n in numbers if 1 <= n <= len(perspectives) and n not in used]
        fresh = list(dict.fromkeys(fresh))
        if not fresh:
            return
        used.update(fresh)
        first = perspectives[fresh[0] - 1]
        group.perspectives.append(first)
        group.merged[first.id] = [perspectives[n - 1].id for n in fresh]
        for n in fresh:
            who = perspectives[n - 1].stakeholder
            if normalise_name(who) not in {normalise_name(s) for s in group.stakeholders}:
                group.stakeholders.append(who)

    home: dict[str, StakeholderGroup] = {}  # normalised stakeholder -> its group
    for proposed in reply.groups:
        if not proposed.name.strip():
            continue
        group = group_named(proposed.name, " ".join(proposed.description.split()))
        for name in proposed.stakeholders:
            home.setdefault(normalise_name(name), group)
        for numbers in proposed.perspectives:
            add(group, numbers)
    for n, p in enumerate(perspectives, 1):  # forgotten perspectives
        if n in used:
            continue
        group = home.get(normalise_name(p.stakeholder)) or group_named(p.stakeholder)
        home.setdefault(normalise_name(p.stakeholder), group)
        add(group, [n])
    return [groups[key] for key in order if groups[key].perspectives]
