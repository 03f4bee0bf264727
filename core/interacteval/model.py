"""InteractEval's data types: the inputs, the output of every stage, and the scoring results.

Every stage of the paper (Chu, Kim & Yi, CHI '25, sections 3.3-3.5) is a separate coroutine
that takes the previous stage's output, so a person can edit each result before the next stage
runs:

    think-aloud attributes  ->  components  ->  attribute clusters  ->  key questions
        ->  sub-questions  ->  (validation)  ->  checklist  ->  checklist scores

Every attribute keeps its source (the model profile or the person who said it), and every
checklist question keeps the attributes it came from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from core import runs
from core.llm import JsonLLM

__all__ = [
    "ANSWER_COLUMNS",
    "CHECKLIST_COLUMNS",
    "SCORE_COLUMNS",
    "Attribute",
    "AttributeCluster",
    "AttributeClusters",
    "Checklist",
    "ChecklistItem",
    "Dimension",
    "JsonLLM",
    "KeyQuestion",
    "QuestionAnswer",
    "ScoredSample",
    "ScoringSettings",
    "StageError",
    "StageFailure",
    "SubQuestionGroup",
    "TextItem",
    "TextScore",
    "ThinkAloudResult",
]

#: Columns of the ``Checklist`` sheet (the checklist file and the results workbook).
CHECKLIST_COLUMNS = ["dimension", "component", "key_question", "question", "source_attributes",
                     "edited_by"]
#: Columns of the ``Scores`` sheet; ``human_score`` follows when the texts carry human scores
#: and ``legacy_score`` when the legacy count was chosen.
SCORE_COLUMNS = ["text_id", "source_id", "system", "dimension", "status", "score", "answered",
                 "questions", "unanswered", "think_aloud_sample", "note"]
#: Columns of the ``Answers`` sheet.
ANSWER_COLUMNS = ["text_id", "dimension", "question_no", "question", "answer", "raw_answer"]


class StageError(runs.StageError):
    """A construction step could not produce a result (the model failed, or its answer was
    unusable). ``str()`` is a plain message naming the step and the dimension (``where``);
    ``kind`` is the ``LLMFailure`` kind behind it ("copied_instructions", ...), if any."""

    def __init__(
        self, message: str, *, stage: str = "", dimension: str = "", kind: str = ""
    ) -> None:
        super().__init__(message, stage=stage, where=dimension, kind=kind)
        self.dimension = dimension


# ------------------------------------------------------------------------------------ inputs
class Dimension(BaseModel):
    """A quality dimension to rate (e.g. Coherence) and its definition (the rubric)."""

    name: str = Field(min_length=1)
    definition: str = ""


class ScoredSample(BaseModel):
    """A sample text with its human score, shown to the think-aloud assessors.

    ``source`` is the article or input the text is about ("" when there is none); ``dimension``
    is "" when the sample serves every dimension; ``row`` is its spreadsheet row, if any."""

    source: str = ""
    text: str
    score: float
    dimension: str = ""
    row: int | None = None


class Attribute(BaseModel):
    """One think-aloud attribute ("check whether the sentences connect logically").

    ``source`` names who said it: a model profile's name or a person's name.
    ``source_kind`` is "model", "person", or "unknown" (typed into a checklist file by hand)."""

    text: str
    source: str = ""
    source_kind: Literal["model", "person", "unknown"] = "unknown"

    def label(self) -> str:
        """``[model: GPT-4] text`` - how the attribute is written in checklist files."""
        if self.source_kind == "unknown" and not self.source:
            return self.text
        return f"[{self.source_kind}: {self.source}] {self.text}"


class StageFailure(BaseModel):
    """Something that failed inside a stage without stopping it (one model's think-aloud)."""

    who: str
    kind: str = ""
    message: str


# ----------------------------------------------------------------------------- stage outputs
class ThinkAloudResult(BaseModel):
    """Stage 1: the attributes of one dimension from every model (and, merged in, people)."""

    dimension: str
    attributes: list[Attribute] = Field(default_factory=list)
    failures: list[StageFailure] = Field(default_factory=list)

    def merged(self, notes: Sequence[Attribute]) -> list[Attribute]:
        """The models' attributes followed by human ``notes`` (the paper's merged list)."""
        return [*self.attributes, *notes]


class AttributeCluster(BaseModel):
    """One component with the attributes grouped under it."""

    component: str
    attributes: list[Attribute] = Field(default_factory=list)


class AttributeClusters(BaseModel):
    """Stage 2b: attributes grouped by component; ``left_out`` are attributes the model judged
    redundant or confusing (shown to the user, who may put them back)."""

    clusters: list[AttributeCluster] = Field(default_factory=list)
    left_out: list[Attribute] = Field(default_factory=list)
    remarks: list[str] = Field(default_factory=list)
    """Plain notes on the model's reply (a note number that does not exist, an unknown
    component), so nothing is dropped silently."""


class KeyQuestion(BaseModel):
    """Stage 2c: one Yes/No key question per component (a heading in the final checklist)."""

    component: str
    question: str
    attributes: list[Attribute] = Field(default_factory=list)


class SubQuestionGroup(BaseModel):
    """Stage 2d: the Yes/No sub-questions under one key question."""

    component: str
    key_question: str
    sub_questions: list[str] = Field(default_factory=list)
    attributes: list[Attribute] = Field(default_factory=list)
    note: str = ""
    """Set when something was filled in for the model (no sub-question given)."""


class ChecklistItem(BaseModel):
    """One question of the final checklist; ``edited_by`` names the last person who changed it
    ("" = as generated)."""

    component: str = ""
    key_question: str = ""
    question: str = Field(min_length=1)
    source_attributes: list[Attribute] = Field(default_factory=list)
    edited_by: str = ""


class Checklist(BaseModel):
    """The checklist of one dimension: the validated sub-questions, grouped by component."""

    dimension: str
    definition: str = ""
    items: list[ChecklistItem] = Field(default_factory=list)
    remarks: list[str] = Field(default_factory=list)
    """Plain notes from building it (a question the model could not trace to a component)."""
    empty_components: list[str] = Field(default_factory=list)
    """Components a person added in the editor that have no question yet (kept so that they
    survive reopening; not scored, not part of :meth:`fingerprint`)."""
    samples: list[ScoredSample] = Field(default_factory=list)
    """The rated samples shown in the think-aloud it was built from: a scored text that is one
    of them is flagged and left out of the agreement by default (not part of
    :meth:`fingerprint`: they do not change the scores)."""

    @property
    def questions(self) -> list[str]:
        return [item.question for item in self.items]

    @property
    def components(self) -> list[str]:
        seen: list[str] = []
        for item in self.items:
            if item.component not in seen:
                seen.append(item.component)
        return seen

    def fingerprint(self) -> str:
        """A short hash of what scoring depends on (dimension, definition, questions), so a
        changed checklist never resumes an older scoring run."""
        data = json.dumps([self.dimension, self.definition, self.questions], ensure_ascii=False)
        return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------------------------- scoring
class ScoringSettings(BaseModel):
    """How texts are scored with a checklist.

    ``mode``: "checklist" asks the whole checklist in one call per text and dimension (the
    paper's setting); "per_question" makes one call per question.

    ``counting``: "answers" parses every answer case-insensitively and scores
    ``1 + 4 * yes / questions`` (paper Eq. 1); "legacy" reproduces the authors' code: a question
    counts as yes only when its answer holds the case-sensitive substring "Yes" (a lowercase
    "yes" counts as no), ``1 + 4 * count / questions`` (use it for replication only).

    Either way a text is scored only when every question has a yes or no answer (unanswered
    questions are asked again once; see :mod:`core.interacteval.checklist_scoring`).
    """

    mode: Literal["checklist", "per_question"] = "checklist"
    counting: Literal["answers", "legacy"] = "answers"
    repeat: int = Field(default=0, ge=0)


class TextItem(BaseModel):
    """A text to score. ``source`` is the article or input it is about ("" if none);
    ``source_id`` groups texts about the same source (per-source-document correlations);
    ``human`` holds human scores by dimension name (missing dimensions = no human score)."""

    id: str
    text: str
    source: str = ""
    source_id: str = ""
    system: str = ""
    human: dict[str, float] = Field(default_factory=dict)
    row: int | None = None


Answer = Literal["yes", "no"]


class QuestionAnswer(BaseModel):
    """One checklist question's answer: ``answer`` None means unanswered (missing, or a value
    that is neither yes nor no; ``raw`` shows what the model gave)."""

    number: int
    question: str
    answer: Answer | None = None
    raw: str = ""


class TextScore(BaseModel):
    """The checklist score of one text on one dimension, or why it has none.

    ``status``: "ok" has a score; "incomplete" (some questions still unanswered after asking
    again) and "failed" (no usable answer) have ``score`` None and ``note`` saying why (a text
    is never given a default score). ``answered`` counts questions answered yes or no;
    ``unanswered`` lists the numbers (1-based) of the others. ``failure_kind`` is the
    ``LLMFailure`` kind behind a failure ("copied_instructions" when the model repeated the
    instructions). ``think_aloud_sample``: the text is one of the dimension's think-aloud
    samples (left out of the agreement by default)."""

    text_id: str
    dimension: str
    status: Literal["ok", "incomplete", "failed"]
    score: float | None = None
    legacy_score: float | None = None
    yes: int = 0
    answered: int = 0
    questions: int = 0
    unanswered: list[int] = Field(default_factory=list)
    answers: list[QuestionAnswer] = Field(default_factory=list)
    note: str = ""
    failure_kind: str = ""
    source_id: str = ""
    system: str = ""
    human: float | None = None
    think_aloud_sample: bool = False
    text: str = ""
    """The judged text itself, so that exports show it beside its score ("" in runs kept
    before this field existed)."""
