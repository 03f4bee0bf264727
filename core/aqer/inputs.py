"""Every reader of AQER's files into its model types, used by the wizard and the CLI alike.

    sheets, read = read_answers("answers.xlsx", "Long")       # the sheet as text (core.tables)
    setup = guess_columns(AqerSetup(), read.frame.columns)    # roles from :data:`SYNONYMS`
    check = check_answers(read, setup)                        # row-numbered issues; errors block
    prepared = read_responses("answers.xlsx", question_col="Question ID", ...)  # in one go

The column synonyms are one list per role (:data:`SYNONYMS`): the wizard's suggestions and the
CLI's defaults both come from :func:`guess_columns`. An AQER sheet is read with
``core.tables.read_table`` and ``map_columns`` rather than ``read_mapped_rows``: its rows are not
one item each (a wide sheet holds a question or a worker per row, a long sheet one answer), and
``core.aqer.responses`` turns either layout into the long answers with row-numbered notices.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import tables
from core.aqer.model import AqerNotice, AqerSetup
from core.aqer.responses import AqerInputError, PreparedResponses, prepare_responses
from core.tables import TableIssue, TableRead

if TYPE_CHECKING:  # pragma: no cover
    from core.aqer.blanks import BlankRule
    from core.aqer.responses import Duplicates, Format
    from core.runs import CancelToken, Progress

__all__ = [
    "AI_MARKS",
    "ROLE_NAMES",
    "SYNONYMS",
    "AnswersCheck",
    "check_answers",
    "guess_columns",
    "read_answers",
    "read_responses",
]

#: Words that suggest a column's role (the role's own name counts too). One list per role, for
#: the wizard's suggestions and the CLI's defaults alike.
SYNONYMS: dict[str, list[str]] = {
    "question": ["question", "questions", "question id", "question text", "item", "item id",
                 "prompt", "task"],
    "worker": ["worker", "student", "participant", "person", "respondent", "annotator",
               "name", "worker id", "student id", "id", "author"],
    "response": ["response", "answer", "answers", "reply", "text", "answer text"],
    "grade": ["grade", "expert grade", "score", "mark", "rating", "score avg"],
}

#: Columns of a long sheet that mark AI answers by themselves (read by core.aqer.responses).
AI_MARKS = {"is_llm", "model"}


def guess_columns(setup: AqerSetup, columns: Iterable[Any]) -> AqerSetup:
    """``setup`` with a column suggested for every role that has none (or one the sheet lacks),
    and AI-answer columns the sheet lacks dropped. Chosen columns that exist are kept."""
    columns = [str(c) for c in columns]
    s = setup
    guess = tables.guess_mapping(columns, SYNONYMS)
    update: dict[str, Any] = {}
    for role, key in (("question", "question_col"), ("worker", "worker_col"),
                      ("response", "response_col")):
        if getattr(s, key) not in columns:
            update[key] = guess.get(role)
    if s.grade_col not in columns:
        update["grade_col"] = guess.get("grade") if s.format == "long" else None
    if s.format == "wide" and s.question_col not in columns and s.worker_col not in columns:
        q = tables.guess_mapping(columns, {"question": SYNONYMS["question"]}).get("question")
        w = tables.guess_mapping(columns, {"worker": SYNONYMS["worker"]}).get("worker")
        update["wide_rows"] = "worker" if (w and not q) else "question"
        update["question_col"], update["worker_col"] = q, w
    update["llm_cols"] = [c for c in s.llm_cols if c in columns]
    return setup.model_copy(update=update)


def read_answers(
    path: str | Path,
    sheet: str | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> tuple[list[str], TableRead]:
    """The file's sheet names and one sheet read as text (run it in an executor)."""
    from core import tables

    path = Path(path)
    if progress is not None:
        progress.start(f"Reading {path.name}", detail=str(path))
    sheets = tables.list_sheets(path)
    if cancel is not None:
        cancel.raise_if_cancelled()
    if sheet is not None and sheet not in sheets:
        sheet = None
    read = tables.read_table(path, sheet=sheet)
    return sheets, read


@dataclass
class AnswersCheck:
    """What the user must know about the chosen columns before running AQER.

    ``issues`` are :class:`core.tables.TableIssue` items (errors block the next step, warnings
    do not). ``duplicates`` counts answers given twice by one worker to one question; while the
    setup says ``duplicates="error"`` the user must choose which to keep.
    """

    issues: list[TableIssue] = field(default_factory=list)
    prepared: PreparedResponses | None = None
    duplicates: int = 0
    needs_duplicate_choice: bool = False
    blank_rule: BlankRule | None = None
    """How blank answers will count for these answers and settings, and why."""
    duplicate_message: str = ""
    """When a choice is needed: which worker answered which question twice, in which rows."""

    @property
    def errors(self) -> list[TableIssue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[TableIssue]:
        return [i for i in self.issues if i.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors


ROLE_NAMES = {
    "question_col": "questions",
    "worker_col": "worker names",
    "response_col": "answers",
    "grade_col": "expert grades",
}


def _required_roles(setup: AqerSetup) -> dict[str, str | None]:
    """Role (as the user reads it) -> chosen column, for :func:`core.tables.map_columns`."""
    if setup.format == "long":
        roles = {
            "questions": setup.question_col,
            "worker names": setup.worker_col,
            "answers": setup.response_col,
        }
        if setup.grade_col:
            roles["expert grades"] = setup.grade_col
        return roles
    if setup.wide_rows == "question":
        return {"questions": setup.question_col}
    return {"worker names": setup.worker_col}


def check_answers(read: TableRead, setup: AqerSetup) -> AnswersCheck:
    """Check the chosen columns on the whole sheet; plain messages naming sheet, row, column."""
    from core.aqer.blanks import blank_rule

    roles = _required_roles(setup)
    optional = {"expert grades"}
    mapped = tables.map_columns(
        read, roles, required=[r for r in roles if r not in optional]
    )
    issues = list(mapped.issues)
    for column in setup.llm_cols:
        if column not in read.frame.columns:
            issues.append(
                tables.TableIssue(
                    "error",
                    f'There is no column "{column}" in {read.describe()} (chosen for AI '
                    "answers). Untick it in the list of AI answers.",
                    read.sheet,
                )
            )
    by_column: dict[str, list[str]] = {}
    for role, column in roles.items():
        if column:
            by_column.setdefault(column, []).append(role)
    for column, chosen in by_column.items():
        if len(chosen) > 1 and column in read.frame.columns:
            issues = [i for i in issues if not (i.severity == "warning"
                                                and i.column_name == column)]
            issues.append(
                tables.TableIssue(
                    "error",
                    f"{read.where(column=column)} is chosen for both the "
                    + " and the ".join(chosen)
                    + ". Each needs its own column: choose another one for the "
                    + chosen[-1] + ".",
                    read.sheet,
                    None,
                    read.column_label(column),
                    column,
                )
            )
    check = AnswersCheck(issues=issues)
    if not check.ok:
        return check
    letters = dict(read.letters)
    unnamed = {name for name, letter in letters.items() if name == f"Column {letter}"}
    duplicates = setup.duplicates if setup.duplicates != "error" else "first"
    try:
        prepared = prepare_responses(
            read.frame,
            format=setup.format,
            duplicates=duplicates,
            source=read.where(),
            first_row=(read.header_row or 1) + 1,
            letters=letters,
            unnamed=unnamed,
            **setup.engine_columns(),
        )
    except AqerInputError as exc:
        check.issues.append(tables.TableIssue("error", str(exc), read.sheet))
        return check
    check.prepared = prepared
    check.blank_rule = blank_rule(
        prepared, setup.settings.blank_answers, setup.settings.llm_as_workers
    )
    for notice in prepared.notices:
        if notice.topic == "Duplicate answer":
            check.duplicates += 1
            if setup.duplicates == "error":
                continue  # asked for separately
        check.issues.append(
            tables.TableIssue("warning", notice.message, read.sheet, notice.row)
        )
    check.needs_duplicate_choice = setup.duplicates == "error" and check.duplicates > 0
    if check.needs_duplicate_choice:
        try:  # the engine's own words for what repeats where (only when there are repeats)
            prepare_responses(read.frame, format=setup.format, duplicates="error",
                              source=read.where(), first_row=(read.header_row or 1) + 1,
                              letters=letters, unnamed=unnamed, **setup.engine_columns())
        except AqerInputError as exc:
            check.duplicate_message = str(exc)
    humans = prepared.frame[~prepared.frame["is_llm"]]
    if setup.settings.llm_as_workers:
        humans = prepared.frame
    n_workers, n_questions = humans["worker"].nunique(), humans["question"].nunique()
    shared = humans.groupby("question")["worker"].nunique()
    shared = shared[shared >= 2]
    if n_workers >= 2 and n_questions >= 2 and len(shared) < 2:
        check.issues.append(
            tables.TableIssue(
                "error",
                f"{read.where()}: AQER needs at least 2 questions that at least 2 workers "
                f"answered, and finds {len(shared)}. Workers must answer the same questions: "
                "check that the question and worker columns are the right ones.",
                read.sheet,
            )
        )
    if n_workers < 2 or n_questions < 2:
        check.issues.append(
            tables.TableIssue(
                "error",
                f"{read.where()}: AQER compares workers across questions, so it needs answers "
                f"from at least 2 workers to at least 2 questions; with these columns it finds "
                f"{n_workers} worker(s) and {n_questions} question(s). Check the columns chosen "
                "above (and, for a wide sheet, whether each row is a question or a worker).",
                read.sheet,
            )
        )
    return check


def read_responses(
    path: str | Path,
    *,
    sheet: str | None = None,
    format: Format = "long",
    question_col: str | None = None,
    worker_col: str | None = None,
    response_col: str | None = None,
    grade_col: str | None = None,
    llm_cols: Sequence[str] = (),
    llm_workers: Sequence[str] = (),
    duplicates: Duplicates = "error",
) -> PreparedResponses:
    """Read answers from an .xlsx / .xls / .csv file (cells as text) and check them."""
    path = Path(path)
    if not path.exists():
        raise AqerInputError(f"The file {path} does not exist. Check the name and folder.")
    try:
        table = tables.read_table(path, sheet=sheet)
    except tables.TableError as exc:
        raise AqerInputError(str(exc)) from exc
    errors = [issue for issue in table.issues if issue.severity == "error"]
    if errors:
        raise AqerInputError(
            "The answers cannot be used as they are:\n"
            + "\n".join(f"- {issue.message}" for issue in errors)
        )
    source = table.where()
    letters = dict(table.letters)
    unnamed = {name for name, letter in letters.items() if name == f"Column {letter}"}
    prepared = prepare_responses(
        table.frame,
        format=format,
        question_col=question_col,
        worker_col=worker_col,
        response_col=response_col,
        grade_col=grade_col,
        llm_cols=llm_cols,
        llm_workers=llm_workers,
        duplicates=duplicates,
        source=source,
        first_row=(table.header_row or 1) + 1,
        letters=letters,
        unnamed=unnamed,
    )
    reading = [
        AqerNotice(topic="Reading the file", message=issue.message, row=issue.row)
        for issue in table.issues
        if issue.severity != "error"
    ]
    prepared.notices[:0] = reading
    return prepared
