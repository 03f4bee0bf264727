"""MAJ-Eval's data types: inputs, the output of every stage, and the debate results.

The stages of the paper (Chen et al., sections 3.1-3.2) each take the previous stage's output,
so a person can check and edit every result before the next one runs:

    documents -> perspectives (per document, with evidence, document and page)
              -> stakeholder groups (consolidated perspectives pointing back to the originals)
              -> personas (five attributes each, one per distinct perspective)
              -> per item and group: phase 1 evaluations -> debate turns -> final evaluations
              -> group result (mean computed by us + aggregator's synthesis) -> item result

Scores are whole numbers on the run's scale (default 1-5 Likert). A failed call marks its agent,
group or item ``failed`` with a plain message; no score is ever filled in for it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, Field, create_model

from core.llm import JsonLLM
from core.prompts import WholeNumber
from core.settings import ModelProfile

__all__ = [
    "COPIED",
    "DEFAULT_DIMENSION",
    "FINALISED_BY",
    "PERSONA_ATTRIBUTES",
    "PERSONA_FIELD_WORDS",
    "REQUIRED_PERSONA_FIELDS",
    "AgentEvaluation",
    "AgentResult",
    "DebateSettings",
    "DebateTurn",
    "Dimension",
    "GroupResult",
    "Item",
    "ItemResult",
    "JsonLLM",
    "Persona",
    "Perspective",
    "RunModel",
    "Scale",
    "StageError",
    "StageFailure",
    "Stakeholder",
    "StakeholderGroup",
    "debate_reply_schema",
    "evaluation_schema",
    "generic_name",
    "persona_id",
    "persona_problem",
    "personas_fingerprint",
]

#: The model a run is (or was) made with: a profile (its model and every setting that changes
#: an answer), a run's recorded model (:func:`core.llm.identity.model_fields`), or a model
#: string alone ("" or None when not known).
RunModel: TypeAlias = ModelProfile | Mapping[str, object] | str | None

#: The five persona attributes of the paper (section 3.1, step 2), as field names.
PERSONA_ATTRIBUTES = ("demographics", "perspective", "specialty", "psychological_traits",
                      "social_relationships")

#: How an agent's final evaluation came about (``AgentResult.finalised_by``):
#: "no more comments" (it said so), "cap" (asked at the turn cap), "consensus" (the debate
#: stopped early because nobody disagreed; its current scores are final), "no debate" (the
#: no-debate option: phase 1 scores are final), "failed" (no final evaluation).
FINALISED_BY = ("no more comments", "cap", "consensus", "no debate", "failed")
FinalisedBy = Literal["no more comments", "cap", "consensus", "no debate", "failed"]

#: The failure kind of a reply that repeated our instructions instead of answering
#: (``core.llm.copied_instructions``): the model is too small for the step.
COPIED = "copied_instructions"


#: Words that name a field of our form, not a stakeholder, group or person ("stakeholder",
#: "name"): a reply that uses one as a name repeated the form instead of answering.
GENERIC_NAMES = frozenset({
    "name", "names", "stakeholder", "stakeholders", "stakeholder group", "persona", "personas",
    "person", "people", "group", "groups", "member", "members", "unknown", "none", "null",
    "nobody", "n/a", "other", "others", "anonymous", "somebody", "someone",
})


def generic_name(text: str) -> bool:
    """Whether ``text`` is a word of our form rather than a name (:data:`GENERIC_NAMES`)."""
    folded = " ".join(str(text).casefold().split()).strip(" .,;:!?\"'`()[]{}<>")
    return folded in GENERIC_NAMES


class StageError(Exception):
    """A stage could not produce a result at all; ``str()`` is a plain message naming it."""

    def __init__(self, message: str, *, stage: str = "",
                 failures: Sequence[StageFailure] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.stage = stage
        #: What failed on the way (chunks, groups), with kinds.
        self.failures = list(failures)


class StageFailure(BaseModel):
    """Something that failed inside a stage without stopping it (one chunk, one group)."""

    stage: str
    where: str  #: "Chan2023.pdf, pages 3-4", "group Teachers", ...
    kind: str = ""
    message: str


# ------------------------------------------------------------------------------------ inputs
class Dimension(BaseModel):
    """A quality dimension the agents score (name + definition shown in the prompt)."""

    name: str = Field(min_length=1)
    definition: str = ""


#: The default when the user gives no dimensions (MAJEVAL.md).
DEFAULT_DIMENSION = Dimension(
    name="Overall quality",
    definition="How good and how appropriate the content is for the task, all things considered.",
)


class Scale(BaseModel):
    """A whole-number rating scale; ``labels`` name some points (default: 5-point Likert)."""

    minimum: int = 1
    maximum: int = 5
    labels: dict[int, str] = Field(default_factory=lambda: {
        1: "very poor", 2: "poor", 3: "acceptable", 4: "good", 5: "excellent"})

    def describe(self) -> str:
        named = ", ".join(f"{k} = {v}" for k, v in sorted(self.labels.items())
                          if self.minimum <= k <= self.maximum)
        text = f"a whole number from {self.minimum} to {self.maximum}"
        return f"{text} ({named})" if named else text


class Item(BaseModel):
    """One piece of content to evaluate, with its context (story section, source text, target
    summary). ``human`` holds human ratings by human dimension name; ``row`` the sheet row."""

    id: str
    content: str
    context: str = ""
    human: dict[str, float] = Field(default_factory=dict)
    row: int | None = None

    def fingerprint(self) -> str:
        return _digest([self.content, self.context])


# ------------------------------------------------------------------------- persona creation
class Perspective(BaseModel):
    """One perspective of a stakeholder on the task, with the evidence quoted from a document.
    ``page`` is where the quote was found (None: not found word for word or nearly, so
    ``chunk_pages`` tells which pages the model read); ``match`` is the share of the quote's
    words found in order on that page (1.0 = word for word)."""

    id: str
    stakeholder: str
    perspective: str
    evidence: str = ""
    document: str = ""
    page: int | None = None
    match: float | None = None
    chunk_pages: list[int] = Field(default_factory=list)


class Stakeholder(BaseModel):
    """A stakeholder named in one document, with its perspectives (stage 1 output)."""

    name: str
    characteristics: str = ""
    document: str = ""
    perspectives: list[Perspective] = Field(default_factory=list)


class StakeholderGroup(BaseModel):
    """Stakeholders of similar kind (stage 2, step 1). ``perspectives`` are the consolidated
    distinct perspectives of the group: each is one of the originals (nothing invented), and
    ``merged`` maps its id to the ids of the originals that say the same thing."""

    name: str
    description: str = ""
    stakeholders: list[str] = Field(default_factory=list)
    perspectives: list[Perspective] = Field(default_factory=list)
    merged: dict[str, list[str]] = Field(default_factory=dict)


class Persona(BaseModel):
    """A stakeholder persona: an agent of one group. The five attributes are one or two
    sentences each; ``perspective_id``/``evidence``/``document``/``page`` trace it back to a
    sentence in a document. ``origin`` says where it came from, ``edited`` whether a person
    changed it."""

    id: str
    group: str
    name: str
    demographics: str = ""
    perspective: str = ""
    specialty: str = ""
    psychological_traits: str = ""
    social_relationships: str = ""
    perspective_id: str = ""
    evidence: str = ""
    document: str = ""
    page: int | None = None
    origin: Literal["generated", "human", "imported"] = "generated"
    edited: bool = False

    def fingerprint(self) -> str:
        """What the agent is told (edits change it, so a debate with edited personas reruns)."""
        return _digest([self.group, self.name, *(getattr(self, a) for a in PERSONA_ATTRIBUTES)])


#: What every persona must have, wherever it comes from (the editor, an imported sheet, the
#: CLI, the model): one rule, checked by :func:`persona_problem`.
REQUIRED_PERSONA_FIELDS = ("group", "name", "perspective")

#: How the required fields are called on screen and in messages.
PERSONA_FIELD_WORDS = {"group": "a group", "name": "a name", "perspective": "a perspective"}


def persona_id(group: str, perspective_id: str, name: str = "") -> str:
    """A stable id for a persona (the project key of its artefact)."""
    text = f"{group.casefold()}\x1f{perspective_id}\x1f{name.casefold()}"
    return "a" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def persona_problem(values: Persona | Mapping[str, Any]) -> str:
    """Why these persona fields are not a valid persona ("" when they are): every persona needs
    a group, a name and a perspective (the agent is told to argue from it)."""
    get = values.get if isinstance(values, Mapping) else (lambda k: getattr(values, k, ""))
    missing = [PERSONA_FIELD_WORDS[f] for f in REQUIRED_PERSONA_FIELDS
               if not str(get(f) or "").strip()]
    if not missing:
        return ""
    return "a persona needs " + " and ".join(missing) + " (its perspective is what it argues from)"


def personas_fingerprint(personas: Sequence[Persona]) -> str:
    return _digest([p.fingerprint() for p in personas])


# ----------------------------------------------------------------------------------- debate
class DebateSettings(BaseModel):
    """Run options. ``rounds``: the turn cap is ``rounds`` x number of agents of a group.
    ``no_debate`` and ``simple_roles`` are the paper's ablations (5.4, A.3)."""

    rounds: int = Field(default=3, ge=1, le=20)
    no_debate: bool = False
    simple_roles: bool = False


class AgentEvaluation(BaseModel):
    """One agent's scores by dimension with its rationale (phase 1, or a final evaluation)."""

    persona_id: str
    agent: str
    scores: dict[str, int]
    rationale: str = ""


class DebateTurn(BaseModel):
    """One turn of phase 2 (``kind`` "debate") or a final evaluation asked at the cap
    (``kind`` "final"). ``reason`` is the coordinator's sentence on why this agent spoke;
    ``scores`` the agent's scores after the turn; ``finalised`` True when the agent said NO
    MORE COMMENTS (or gave its final evaluation at the cap). A failed turn has ``error``."""

    turn: int
    speaker: str
    persona_id: str
    reason: str
    message: str = ""
    scores: dict[str, int] | None = None
    finalised: bool = False
    kind: Literal["debate", "final"] = "debate"
    error: str = ""
    error_kind: str = ""


class AgentResult(BaseModel):
    """One agent in one debate: its phase 1 evaluation and final scores (None when failed)."""

    persona_id: str
    agent: str
    initial: AgentEvaluation | None = None
    final: dict[str, int] | None = None
    final_rationale: str = ""
    finalised_by: FinalisedBy = "failed"
    status: Literal["ok", "failed"] = "ok"
    error: str = ""
    error_kind: str = ""


class GroupResult(BaseModel):
    """One stakeholder group on one item. ``initial_mean``/``final_mean``: per dimension, the
    mean over the agents that have scores (computed by us, never by the model). ``status``
    "ok"; "partial" (an agent or the synthesis failed, the mean is over the others and
    ``error`` says what failed); "failed" (no agent gave scores: no mean)."""

    item_id: str
    group: str
    status: Literal["ok", "partial", "failed"] = "ok"
    error: str = ""
    agents: list[AgentResult] = Field(default_factory=list)
    turns: list[DebateTurn] = Field(default_factory=list)
    stop_reason: str = ""
    initial_mean: dict[str, float] = Field(default_factory=dict)
    final_mean: dict[str, float] = Field(default_factory=dict)
    feedback: str = ""
    feedback_error: str = ""
    feedback_error_kind: str = ""
    note: str = ""
    """What the numbers need said beside them (a one-agent group; agents left out of both
    means)."""

    def failure_kinds(self) -> set[str]:
        """The kinds of the failures inside this debate (agents, turns, the summary)."""
        kinds = {a.error_kind for a in self.agents if a.status != "ok"}
        kinds |= {t.error_kind for t in self.turns if t.error}
        if self.feedback_error:
            kinds.add(self.feedback_error_kind)
        return {k for k in kinds if k}

    @property
    def copied(self) -> bool:
        """Whether something in this debate failed because the model repeated the
        instructions instead of answering."""
        return self.status != "ok" and COPIED in self.failure_kinds()


class ItemResult(BaseModel):
    """One item: every group's result and, per dimension, the mean of the groups' final means.
    ``status`` "failed" when a group failed (no overall score then: a mean without that group
    would mean something else); "partial" when a group was partial."""

    item_id: str
    status: Literal["ok", "partial", "failed"] = "ok"
    error: str = ""
    overall: dict[str, float] = Field(default_factory=dict)
    groups: list[GroupResult] = Field(default_factory=list)


# --------------------------------------------------------------------- reply schemas (JSON)
@cache
def _scores_model(names: tuple[str, ...], minimum: int, maximum: int) -> type[BaseModel]:
    # keyed by the dimensions' names only: the fields' own names (d0, d1...) are ours, and a
    # reply using them is refused (with populate_by_name a reply's "d0" counted as the first
    # dimension, and a dimension named "d1" could be taken for the second); a score of true or
    # false is refused too (:data:`core.prompts.WholeNumber`)
    fields: dict[str, Any] = {
        f"d{i}": (WholeNumber, Field(alias=name, ge=minimum, le=maximum))
        for i, name in enumerate(names)
    }
    return create_model("Scores", **fields)


@cache
def _evaluation_model(names: tuple[str, ...], minimum: int, maximum: int) -> type[BaseModel]:
    scores = _scores_model(names, minimum, maximum)
    return create_model("Evaluation", rationale=(str, ...), scores=(scores, ...))


@cache
def _debate_model(names: tuple[str, ...], minimum: int, maximum: int) -> type[BaseModel]:
    scores = _scores_model(names, minimum, maximum)
    return create_model("DebateReply", message=(str, ...), no_more_comments=(bool, ...),
                        scores=(scores, ...))


def evaluation_schema(dimensions: Sequence[Dimension], scale: Scale) -> type[BaseModel]:
    """The reply of phase 1 and of a final evaluation: ``{"rationale": "...", "scores":
    {"<dimension>": n, ...}}`` with every dimension required and n on the scale."""
    return _evaluation_model(tuple(d.name for d in dimensions), scale.minimum, scale.maximum)


def debate_reply_schema(dimensions: Sequence[Dimension], scale: Scale) -> type[BaseModel]:
    """The reply of a debate turn: ``{"message": "...", "no_more_comments": false, "scores":
    {...}}`` (the agent's current scores, changed or not)."""
    return _debate_model(tuple(d.name for d in dimensions), scale.minimum, scale.maximum)


def scores_of(reply: BaseModel) -> dict[str, int]:
    """The scores of an evaluation or debate reply, keyed by dimension name."""
    return dict(reply.scores.model_dump(by_alias=True))  # type: ignore[attr-defined]


def _digest(values: Any) -> str:
    text = json.dumps(values, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
