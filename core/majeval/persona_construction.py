"""Stage 2, step 2: one persona per distinct perspective of each group (paper 3.1, Table 13),
and the "simple role" personas of the paper's ablation (A.3).

One call per group (groups concurrently): the model writes a person with the five attributes
for every numbered perspective. A reply must be usable (:func:`usable_personas`): every persona
has a person's name (not a word of our form such as "persona", nor the group's name) and the
number of one of the perspectives it was given; a reply that is not is asked again once.
A perspective the reply left out is asked for again alone (one more call); if that fails too it
is listed in ``failures`` (with the kind, e.g. "copied_instructions") and has no persona. Every
persona keeps its perspective's evidence, document and page.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.llm import LLMFailure, Rejection, copied_instructions
from core.majeval import _prompts
from core.majeval.inputs import PERSONA_COLUMN_TITLES
from core.majeval.model import (
    PERSONA_ATTRIBUTES,
    JsonLLM,
    Persona,
    Perspective,
    StageFailure,
    StakeholderGroup,
    generic_name,
    persona_id,
)
from core.prompts import WholeNumber
from core.runs import CancelToken, Progress
from core.words import count

__all__ = ["PersonaConstruction", "construct_personas", "persona_id", "simple_role",
           "usable_personas"]

STAGE = "Persona construction"
TEMPLATE = "persona_construction"
#: The fewest words a usable persona field has (a field answered "1" or "open" says nothing).
_WORDS_AT_LEAST = {"name": 1, "demographics": 2, "perspective": 3, "specialty": 1,
                   "psychological_traits": 1, "social_relationships": 1}



#: One persona as the model writes it: the number of its perspective, a name and the persona's
#: five attributes (``PERSONA_ATTRIBUTES``, the same fields as :class:`Persona`). No docstring:
#: it would become part of the reply's JSON schema (and so of every cached request).
class _Written(BaseModel):
    perspective_no: WholeNumber
    name: str
    demographics: str = ""
    perspective: str = ""
    specialty: str = ""
    psychological_traits: str = ""
    social_relationships: str = ""


assert tuple(_Written.model_fields)[2:] == PERSONA_ATTRIBUTES  # the attributes, in their order


class PersonaReply(BaseModel):
    personas: list[_Written] = Field(default_factory=list)


def persona_schema(count: int) -> type[PersonaReply]:
    """The reply's form for ``count`` perspectives: a :class:`PersonaReply` whose JSON schema
    (what a model with structured output is held to) asks for one to ``count`` personas, each for
    one of the numbers 1 to ``count``, with every field filled and kept short (a small model
    otherwise repeats itself until the answer is cut off). The reply is still checked in full
    (:func:`usable_personas`)."""

    def tighten(schema: dict[str, Any]) -> None:
        written = schema.get("$defs", {}).get("_Written", {})
        fields = written.get("properties", {})
        for key, value in fields.items():
            if key == "perspective_no":
                value["enum"] = list(range(1, count + 1))
            else:
                value["maxLength"] = 80 if key == "name" else 300
        written["required"] = list(fields)
        schema.get("properties", {}).get("personas", {}).update(minItems=1, maxItems=count)
        schema["required"] = ["personas"]

    return prompts.held_to(PersonaReply, tighten)


@dataclass
class PersonaConstruction:
    """Stage 2 step 2: the personas in group order, and what failed."""

    personas: list[Persona] = field(default_factory=list)
    failures: list[StageFailure] = field(default_factory=list)


def _clause(text: str) -> str:
    """A sentence as a clause: spacing tidied, the end mark dropped, and a capitalised first
    word lowercased ("Preschool teachers who ..." -> "preschool teachers who ...", but
    "AI developers" stays)."""
    text = " ".join(str(text).split()).rstrip(" .;:!")
    first = text.split(" ", 1)[0] if text else ""
    if first[:1].isupper() and first[1:] == first[1:].lower():
        text = text[0].lower() + text[1:]
    return text


def simple_role(persona: Persona, description: str = "") -> str:
    """The paper's "simple role" ablation (A.3: "You are a preschool teacher who often reads
    books to your students"): one sentence instead of the five attributes, built from the
    group's ``description`` and the persona's specialty. Ours: the persona's name is kept so
    agents stay distinguishable in the debate."""
    sentence = f"You are {persona.name}, one of the {persona.group}"
    about = _clause(description)
    if about:
        sentence += f" ({about})"
    specialty = _clause(persona.specialty)
    if specialty:
        sentence += f"; your specialty: {specialty}"
    return sentence + "."


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def _listing(perspectives: Sequence[Perspective]) -> str:
    return "\n".join(f"{i}. {_clean(p.perspective)}" for i, p in enumerate(perspectives, 1))


def _field_title(name: str) -> str:
    """A persona field in the editor's words ("Who they are")."""
    return PERSONA_COLUMN_TITLES.get(name, name)


def usable_personas(group: str, count: int) -> Callable[[PersonaReply], Rejection | None]:
    """The stage's check of a reply for ``count`` perspectives of ``group``."""

    def fold(text: str) -> str:
        return " ".join(text.casefold().split())

    def check(reply: PersonaReply) -> Rejection | None:
        for w in reply.personas:
            if not w.name.strip():
                return Rejection(f"the persona for perspective {w.perspective_no} has no name")
            if generic_name(w.name) or fold(w.name) == fold(group):
                return copied_instructions(f"the persona name \u201c{w.name}\u201d")
            for field_name, words in _WORDS_AT_LEAST.items():
                value = w.name if field_name == "name" else getattr(w, field_name)
                why = prompts.says_nothing(value, words=words)
                if why:
                    return Rejection(
                        f"the persona {w.name}'s “{_field_title(field_name)}” "
                        f"(\u201c{' '.join(str(value).split())[:60]}\u201d) {why}; "
                        + ("give the persona a person's name" if field_name == "name" else
                           "write it in a sentence"),
                        advice="The model filled the personas with single letters, numbers "
                               "or single words: it is too small for this step; try a larger "
                               "model.")
            if not 1 <= w.perspective_no <= count:
                return Rejection(
                    f"the persona {w.name} is for perspective number {w.perspective_no}, but the "
                    f"perspectives are numbered 1 to {count}")
        return None

    return check


async def construct_personas(groups: Sequence[StakeholderGroup], task: str, llm: JsonLLM, *,
                             progress: Progress | None = None,
                             cancel: CancelToken | None = None) -> PersonaConstruction:
    """Personas for every consolidated perspective of every group."""
    progress = progress or Progress()
    progress.start("Writing personas", total=len(groups))

    async def ask(group: StakeholderGroup, perspectives: Sequence[Perspective]) -> PersonaReply:
        return await _prompts.ask(llm, TEMPLATE, persona_schema(len(perspectives)), {
            "task": task, "group": group.name,
            "description": group.description or "",
            "perspectives": _listing(perspectives)},
            check=usable_personas(group.name, len(perspectives)), cancel=cancel,
            refuse_loops=True)

    async def one(group: StakeholderGroup) -> tuple[list[Persona], list[StageFailure]]:
        wanted = list(group.perspectives)
        written: dict[int, _Written] = {}
        failures: list[StageFailure] = []
        try:
            reply = await ask(group, wanted)
            for w in reply.personas:
                if 1 <= w.perspective_no <= len(wanted) and w.name.strip():
                    written.setdefault(w.perspective_no - 1, w)
        except LLMFailure as failure:
            if len(wanted) == 1:  # asking alone would be the same request
                failures.append(StageFailure(stage=STAGE, where=f"group {group.name}",
                                             kind=failure.kind, message=failure.message))
                written = {}
                wanted_alone: list[int] = []
            else:
                wanted_alone = list(range(len(wanted)))
        else:
            wanted_alone = [i for i in range(len(wanted)) if i not in written]
        for i in wanted_alone:  # left out (or the whole call failed): ask alone
            p = wanted[i]
            try:
                alone = await ask(group, [p])
            except LLMFailure as failure:
                failures.append(StageFailure(
                    stage=STAGE, where=f"group {group.name}, perspective “{p.perspective}”",
                    kind=failure.kind, message=failure.message))
                continue
            usable = [w for w in alone.personas if w.name.strip()]
            if usable:
                written[i] = usable[0]
            else:
                failures.append(StageFailure(
                    stage=STAGE, where=f"group {group.name}, perspective “{p.perspective}”",
                    message="The model wrote no persona for this perspective."))
        personas: list[Persona] = []
        for i, p in enumerate(wanted):
            chosen = written.get(i)
            if chosen is None:
                continue
            personas.append(Persona(
                id=persona_id(group.name, p.id, chosen.name), group=group.name,
                name=_clean(chosen.name), demographics=_clean(chosen.demographics),
                perspective=_clean(chosen.perspective), specialty=_clean(chosen.specialty),
                psychological_traits=_clean(chosen.psychological_traits),
                social_relationships=_clean(chosen.social_relationships),
                perspective_id=p.id, evidence=p.evidence, document=p.document, page=p.page))
        progress.advance(1, f"{group.name}: {count(len(personas), 'persona')}")
        return personas, failures

    outcomes = await asyncio.gather(*(one(g) for g in groups))
    result = PersonaConstruction()
    for personas, failures in outcomes:
        result.personas.extend(_distinct_names(personas))
        result.failures.extend(failures)
    return result


def _distinct_names(personas: list[Persona]) -> list[Persona]:
    """Two personas of one group with the same name get " (2)" appended: agents are named in
    the debate, so names must differ."""
    seen: dict[str, int] = {}
    out = []
    for p in personas:
        key = p.name.casefold()
        seen[key] = seen.get(key, 0) + 1
        out.append(p if seen[key] == 1 else p.model_copy(update={"name": f"{p.name} ({seen[key]})"}))
    return out
