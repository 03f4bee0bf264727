"""AQER's data types: settings, notices (warnings shown to the user) and the result.

The result's tables are pandas DataFrames whose column names are part of the Excel contract in
``AQER.md`` (the CLI and the GUI write the same workbook).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Self

import pandas as pd
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from core.embeddings import model_key
from core.project.inputs import InputRef
from core.stats import ROW_COLUMNS

if TYPE_CHECKING:  # pragma: no cover (core.aqer.responses imports this module)
    from core.aqer.responses import PreparedResponses

__all__ = [
    "AGREEMENT_COLUMNS",
    "BACKEND_NAMES",
    "CONVERGENCE_COLUMNS",
    "DEFAULT_BLANK_TOKENS",
    "LLM_ANSWER_COLUMNS",
    "LLM_SUMMARY_COLUMNS",
    "QUESTION_COLUMNS",
    "RESPONSE_COLUMNS",
    "WARNING_COLUMNS",
    "WORKER_COLUMNS",
    "AqerChoices",
    "AqerCondition",
    "AqerNotice",
    "AqerResult",
    "AqerSettings",
    "BlankAnswers",
    "ColumnRoles",
    "Layout",
    "WideRows",
    "scored_when",
]

#: Columns of the ``Workers`` sheet; ``blank`` (when blank answers count as the weakest answer),
#: ``similarity_to_others``, ``simplified_score``, ``rasa_skill``, ``f1``, ``bleu1``,
#: ``expert_grade`` and ``is_llm`` follow when computed, and ``note`` ("absent? ...") when a
#: person with no answers was left out.
WORKER_COLUMNS = ["worker", "score", "raw_score", "weight", "rank", "answered"]
#: ``grade`` (the answer's expert grade as a number, empty when it has none) follows when the
#: input had grades, then ``is_llm`` when AI answers were scored as workers.
RESPONSE_COLUMNS = ["question", "worker", "response", "similarity"]
#: ``camps``: when the answers split into camps of similar size, the camps in words
#: (``core.aqer.answer_camps``), else "".
QUESTION_COLUMNS = ["question", "mean_similarity", "best_response", "best_worker", "answered",
                    "camps"]
#: ``workers_similarity_to_others``: the workers' mean similarity to the consensus of the *other*
#: workers on that question (what the AI's ``score`` compares with like for like).
LLM_ANSWER_COLUMNS = [
    "model",
    "question",
    "response",
    "score",
    "model_mean",
    "workers_similarity_to_others",
]
#: ``score_on_workers_scale``: the AI's mean score placed on the workers' 0-1 score scale, like
#: for like (``core.aqer.llm_answers.on_workers_scale``).
LLM_SUMMARY_COLUMNS = [
    "model",
    "mean_score",
    "scored",
    "answered",
    "blank",
    "percentile_among_workers",
    "score_on_workers_scale",
]
CONVERGENCE_COLUMNS = ["iteration", "rmse"]
#: Every method's Agreement sheet looks alike: the columns of ``core.stats.ROW_COLUMNS``.
AGREEMENT_COLUMNS = list(ROW_COLUMNS)
WARNING_COLUMNS = ["topic", "message", "question", "worker", "row"]

Duplicates = Literal["first", "last", "error"]
#: Answers that mean "no answer" and are read as blank (compared ignoring case and spaces).
DEFAULT_BLANK_TOKENS = ("not answered", "no answer", "n/a", "-", "?")
#: How blank answers count: decided from the data ("auto"), as the weakest possible answer
#: ("worst") or not at all ("missing").
BlankAnswers = Literal["auto", "worst", "missing"]


class AqerSettings(BaseModel):
    """How AQER runs. Defaults are the paper's (RMSE of weights < 1e-6, at most 100 rounds)."""

    max_iterations: int = Field(default=100, ge=1, le=100_000)
    tolerance: float = Field(default=1e-6, gt=0)
    llm_as_workers: bool = False
    """Score LLM answers jointly with the humans, as extra workers (paper 7.4)."""
    baselines: bool = True
    """Also compute RASA and the pseudo-reference F1 / BLEU-1 baselines."""
    rasa_alpha: float = Field(default=0.05, gt=0, lt=1)
    max_reference_pairs: int = Field(default=50_000_000, ge=0)
    """Skip the F1 / BLEU-1 baselines when they would compare more answer pairs than this."""
    blank_answers: BlankAnswers = "auto"
    """How a question a worker left blank counts (``core.aqer.blanks``): "auto" decides from the
    data's design (dense: "worst"; sparse: "missing")."""
    keep_absent: bool = False
    """Score a person who left every question blank (absent?) as the weakest, when blanks
    count as the weakest answer; by default they are left out of the 0-1 scale and listed."""


class AqerNotice(BaseModel):
    """Something the user should know about their input or the run (the ``Warnings`` sheet)."""

    topic: str
    message: str
    question: str = ""
    worker: str = ""
    row: int | None = None
    """The spreadsheet row the notice is about (1 = header row), when there is one."""


class AqerResult(BaseModel):
    """Everything one AQER run produced. The frames use the Excel contract's column names."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    workers: pd.DataFrame
    responses: pd.DataFrame
    questions: pd.DataFrame
    llm_answers: pd.DataFrame
    llm_summary: pd.DataFrame
    convergence: pd.DataFrame
    agreement: pd.DataFrame
    warnings: list[AqerNotice] = Field(default_factory=list)
    settings: AqerSettings = Field(default_factory=AqerSettings)
    iterations: int = 0
    converged: bool = False
    discriminates: bool = True
    """False when every worker got the same raw score (the tie guard stopped the run)."""
    embedding_model: str = ""
    device: str = ""
    blank_rule: Literal["worst", "missing"] = "missing"
    """The rule the run used for blank answers (``settings.blank_answers`` resolved)."""
    blank_reason: str = ""
    """Why: the design detected in the data (and how), or that the user chose the rule."""
    computed_at: str = ""
    """When the scores were computed (ISO 8601, UTC)."""

    @property
    def warning_messages(self) -> list[str]:
        return [notice.message for notice in self.warnings]

    def warnings_frame(self) -> pd.DataFrame:
        rows = [
            {
                "topic": n.topic,
                "message": n.message,
                "question": n.question,
                "worker": n.worker,
                "row": n.row,
            }
            for n in self.warnings
        ]
        return pd.DataFrame(rows, columns=WARNING_COLUMNS)


def scored_when(stamp: str) -> str:
    """When a result was scored (its ``computed_at``, ISO) as "2026-05-04 14:03 UTC"
    ("(not recorded)" for results of older versions)."""
    if not stamp:
        return "(not recorded)"
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    return moment.strftime("%Y-%m-%d %H:%M UTC")


#: The embedding backends in words.
BACKEND_NAMES = {"onnx": "ONNX Runtime", "torch": "PyTorch",
                 "auto": "ONNX Runtime where it can, else PyTorch"}


def embedding_model_name(path: str) -> str:
    """An embedding model as named on screens and in workbooks: the name of its folder ("" is
    the built-in all-MiniLM-L6-v2)."""
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or "all-MiniLM-L6-v2"


class AqerCondition(BaseModel):
    """Another condition to compare with AQER as the choices run it: the same answers scored
    with another embedding model and/or another blank-answer rule (None = as in the choices).
    The scorers AQER, simplified AQER, RASA, F1 and BLEU-1 are conditions of every run and
    need no entry here (``core.aqer.comparison``)."""

    embedding_model: str | None = None
    """A sentence-transformers folder ("" = the built-in all-MiniLM-L6-v2; None = the choices')."""
    embedding_backend: Literal["onnx", "torch", "auto"] | None = None
    """Run the model through ONNX Runtime or PyTorch ("auto": as EvalDesk chooses, the
    choices' default; None = as in the choices)."""
    blank_answers: BlankAnswers | None = None

    def apply(self, choices: AqerChoices) -> AqerChoices:
        """``choices`` with this condition's settings."""
        update: dict[str, Any] = {}
        if self.embedding_model is not None:
            update["embedding_model"] = self.embedding_model
        if self.embedding_backend is not None:
            update["embedding_backend"] = self.embedding_backend
        if self.blank_answers is not None:
            update["settings"] = choices.settings.model_copy(
                update={"blank_answers": self.blank_answers})
        return choices.model_copy(update=update)

    def label(self) -> str:
        """Its name in the comparison, e.g. "AQER (blank answers left out)"."""
        parts = []
        if self.embedding_model is not None:
            parts.append(f"model {embedding_model_name(self.embedding_model)}")
        if self.embedding_backend is not None:
            parts.append(f"through {BACKEND_NAMES[self.embedding_backend]}")
        if self.blank_answers is not None:
            parts.append({"worst": "blank answers count as the weakest",
                          "missing": "blank answers left out",
                          "auto": "blank answers decided from the data"}[self.blank_answers])
        return f"AQER ({', '.join(parts) or 'as set up'})"


#: How the answers sheet is laid out: a row per answer ("long") or a row per question or per
#: person ("wide").
Layout = Literal["long", "wide"]
#: What a row of a wide sheet holds: a question (a column per person) or a person (a column
#: per question).
WideRows = Literal["question", "worker"]


class _Checked(BaseModel):
    """A model whose :meth:`model_copy` refuses a name that is not one of its fields (pydantic
    would keep it as a stray attribute, and the change would be lost without a word)."""

    def model_copy(self, *, update: Mapping[str, Any] | None = None,
                   deep: bool = False) -> Self:
        unknown = sorted(set(update or ()) - set(type(self).model_fields))
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(unknown)}"
                            + (" (the column roles are changed with with_columns)"
                               if set(unknown) & set(ColumnRoles.model_fields) else ""))
        return super().model_copy(update=update, deep=deep)


class ColumnRoles(_Checked):
    """Which column of the answers sheet holds what, and the layout that decides how they are
    read: one value, guessed in one place (:func:`core.aqer.inputs.guess_roles`, and
    :func:`core.aqer.inputs.roles_from_options` for the command line's options), changed on the
    wizard's Columns page, and read by every reader of the answers
    (:meth:`engine_columns`, :meth:`grades_columns`)."""

    format: Layout = "long"
    question_col: str | None = None
    worker_col: str | None = None
    response_col: str | None = None
    grade_col: str | None = None
    wide_rows: WideRows = "question"
    """In the wide layout: a row per question (a column per worker) or a row per worker."""
    llm_cols: list[str] = Field(default_factory=list)
    llm_workers: list[str] = Field(default_factory=list)
    ignore_cols: list[str] = Field(default_factory=list)
    """Wide layout: columns that are not answers (left out; e.g. a column of numbers)."""
    grades_sheet: str | None = None
    """Another sheet of the same workbook with one grade per person, joined by name (with
    ``grades_file``: the sheet of that file; None = its first sheet)."""
    grades_file: InputRef | None = None
    """A file of its own with one grade per person (``AqerSession.store_input("grades", ...)``)."""
    grades_name_col: str | None = None
    """Its column of names (None = guessed); ``grades_value_col`` its grades (None = guessed)."""
    grades_value_col: str | None = None

    @property
    def key_col(self) -> str | None:
        """The wide layout's key column (the questions, or the people's names); None when
        long."""
        if self.format == "long":
            return None
        return self.question_col if self.wide_rows == "question" else self.worker_col

    @property
    def person_grade_col(self) -> str | None:
        """The column of one grade per person (a wide sheet with a row per person)."""
        return self.grade_col if self.format == "wide" and self.wide_rows == "worker" else None

    @property
    def has_mapping(self) -> bool:
        """Every column the layout needs is chosen."""
        if self.format == "long":
            return bool(self.question_col and self.worker_col and self.response_col)
        return bool(self.key_col)

    def needed(self) -> dict[str, str | None]:
        """Role (as the user reads it) -> chosen column, of the columns the layout reads
        (for :func:`core.tables.map_columns`; the expert grades only when chosen)."""
        if self.format == "long":
            roles = {"questions": self.question_col, "worker names": self.worker_col,
                     "answers": self.response_col}
            if self.grade_col:
                roles["expert grades"] = self.grade_col
            return roles
        if self.wide_rows == "question":
            return {"questions": self.question_col}
        roles = {"worker names": self.worker_col}
        if self.grade_col:
            roles["expert grades"] = self.grade_col
        return roles

    def engine_columns(self) -> dict[str, Any]:
        """The column options of :func:`core.aqer.responses.prepare_responses` for these
        roles (only those the layout reads)."""
        if self.format == "long":
            return {
                "question_col": self.question_col or None,
                "worker_col": self.worker_col or None,
                "response_col": self.response_col or None,
                "grade_col": self.grade_col or None,
                "llm_cols": list(self.llm_cols),
                "llm_workers": list(self.llm_workers),
            }
        by_question = self.wide_rows == "question"
        key = self.key_col
        return {
            "question_col": (self.question_col or None) if by_question else None,
            "worker_col": None if by_question else (self.worker_col or None),
            "response_col": None,
            "grade_col": None if by_question else (self.grade_col or None),
            "llm_cols": list(self.llm_cols) if by_question else [],
            "llm_workers": [] if by_question else list(self.llm_workers),
            "ignore_cols": [c for c in self.ignore_cols
                            if c not in (key, None if by_question else self.grade_col)],
        }

    def grades_columns(self) -> dict[str, Any]:
        """Where the per-person grades of another sheet are (``core.aqer.inputs``), or {}."""
        if not (self.grades_sheet or self.grades_file):
            return {}
        return {"grades_sheet": self.grades_sheet, "grades_name_col": self.grades_name_col,
                "grades_value_col": self.grades_value_col}


_ROLE_FIELDS = tuple(ColumnRoles.model_fields)


class AqerChoices(_Checked):
    """The AQER choices in a project: the answers file, its sheet, :class:`ColumnRoles`, how
    blank and repeated answers count, the embedding model and AQER's settings, and the
    conditions to compare with (kept in the project by ``core.aqer.session``; the wizard and
    the command line make the same choices).

    Kept flat, as before the column roles were one value: the stored payload (kind
    ``aqer_setup``, version 1) names each role beside the other choices, so projects written
    before or after read the same (:meth:`_lift_roles`, :meth:`_flat`).
    """

    path: str = ""
    """Where the answers file was when it was chosen ("" = none yet)."""
    file_name: str = ""
    content_hash: str = ""
    """sha256 of the file's bytes when it was last read (its copy in the project has it too)."""
    input_id: int | None = None
    sheet: str | None = None
    header_row: int | None = Field(default=None, ge=1)
    """The sheet's header row (spreadsheet row number); None: the row that reads like the
    header above the rows of data (``core.tables.find_header_row``)."""
    columns: ColumnRoles = Field(default_factory=ColumnRoles)
    blank_tokens: list[str] = Field(default_factory=lambda: list(DEFAULT_BLANK_TOKENS))
    """Answers that mean "no answer" ("n/a", "-", ...): read as blank, not as answers."""
    duplicates: Literal["error", "first", "last"] = "error"
    embedding_model: str = ""
    """A sentence-transformers folder; "" = the built-in all-MiniLM-L6-v2."""
    embedding_backend: Literal["auto", "onnx", "torch"] = "auto"
    """How the model runs: "auto" (ONNX Runtime on the CPU, PyTorch on a graphics card) or
    always one of them (a condition to compare; ONNX Runtime runs on the CPU)."""
    device: Literal["auto", "cpu", "cuda", "mps"] = "auto"
    settings: AqerSettings = Field(default_factory=AqerSettings)
    conditions: list[AqerCondition] = Field(default_factory=list)
    """Other conditions to compare with (another embedding model or blank-answer rule); not
    part of :meth:`fingerprint`: each is a choice of its own (:meth:`AqerCondition.apply`)."""

    @model_validator(mode="before")
    @classmethod
    def _lift_roles(cls, data: Any) -> Any:
        """The stored (flat) shape: each role's key beside the other choices, gathered into
        ``columns``."""
        if not isinstance(data, dict) or not any(k in data for k in _ROLE_FIELDS):
            return data
        if "columns" in data:
            raise ValueError("give the column roles either as columns or one by one, not both")
        data = dict(data)
        data["columns"] = {k: data.pop(k) for k in _ROLE_FIELDS if k in data}
        return data

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Dumped flat, as the project has always kept the choices."""
        out: dict[str, Any] = {}
        for key, value in handler(self).items():
            if key == "columns" and isinstance(value, dict):
                out.update(value)  # where the roles always were: after the header row
            else:
                out[key] = value
        return out

    def with_columns(self, **update: Any) -> AqerChoices:
        """These choices with the column roles ``update`` changed."""
        return self.model_copy(update={"columns": self.columns.model_copy(update=update)})

    @property
    def has_file(self) -> bool:
        return bool(self.path or self.input_id)

    @property
    def answers_ref(self) -> InputRef:
        """Where the answers file came from (``core.project.inputs``)."""
        return InputRef(path=self.path, file_name=self.file_name,
                        content_hash=self.content_hash, input_id=self.input_id)

    def engine_columns(self) -> dict[str, Any]:
        """The options of :func:`core.aqer.responses.prepare_responses` for these choices:
        the roles' columns (:meth:`ColumnRoles.engine_columns`) and the blank tokens."""
        return {**self.columns.engine_columns(), "blank_tokens": list(self.blank_tokens)}

    def embedding_key(self) -> str:
        """How the project's vector cache names this model (and its backend when one is
        forced: its vectors are kept apart)."""
        key = model_key(self.embedding_model)
        return key if self.embedding_backend == "auto" else f"{key} [{self.embedding_backend}]"

    def fingerprint(self) -> dict[str, Any]:
        """What an AQER result depends on (not where the file is, nor the device)."""
        columns = self.columns
        grades = columns.grades_columns()
        return {
            "answers": self.content_hash,
            "sheet": self.sheet,
            **({"header_row": self.header_row} if self.header_row is not None else {}),
            "format": columns.format,
            "columns": self.engine_columns(),
            **({"grades": grades} if grades else {}),
            **({"grades_file": columns.grades_file.content_hash} if columns.grades_file
               else {}),
            "duplicates": self.duplicates,
            "embedding": self.embedding_key(),
            "settings": self.settings.model_dump(mode="json"),
        }

    def describe_inputs(self, prepared: PreparedResponses | None = None,
                        absent_scored: bool = False
                        ) -> dict[str, str]:
        """The inputs as the workbook's Read me sheet lists them (``absent_scored``: people
        who answered nothing were scored as the weakest)."""
        c = self.columns
        rows = {
            "Input file": self.path or self.file_name,
            "Sheet": self.sheet or "(the first sheet)",
            "Layout": (
                "long (a row per answer)"
                if c.format == "long"
                else f"wide (a row per {c.wide_rows})"
            ),
        }
        if self.content_hash:
            rows["File checksum (SHA-256)"] = self.content_hash
        if self.header_row is not None:
            rows["Header row"] = f"row {self.header_row} (chosen)"
        elif prepared is not None and prepared.header_note:
            rows["Header row"] = prepared.header_note
        if prepared is not None:
            rows["Read from"] = prepared.source
            rows["Answers"] = prepared.describe(absent_scored)
        if c.person_grade_col:
            rows["Expert grades"] = f"column '{c.grade_col}' (one grade per person)"
        if c.grades_file:
            sheet = f", sheet '{c.grades_sheet}'" if c.grades_sheet else ""
            name = c.grades_file.path or c.grades_file.file_name
            rows["Expert grades"] = (f"the file {name}{sheet} (one grade per person, "
                                     "joined by name)")
            if c.grades_file.content_hash:
                rows["Grades file checksum (SHA-256)"] = c.grades_file.content_hash
        elif c.grades_sheet:
            rows["Expert grades"] = (f"sheet '{c.grades_sheet}' (one grade per person, "
                                     "joined by name)")
        if c.ignore_cols and c.format == "wide":
            rows["Columns left out"] = ", ".join(f"'{col}'" for col in c.ignore_cols)
        rows["Read as blank"] = (", ".join(f"'{t}'" for t in self.blank_tokens)
                                 + " (and empty cells)") if self.blank_tokens else "empty cells"
        if self.duplicates != "error":
            rows["Duplicate answers"] = f"kept the {self.duplicates} answer of each worker"
        return rows
