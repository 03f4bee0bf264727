"""Every reader of AQER's files into its model types, used by the wizard and the CLI alike.

    sheets, read = read_answers("answers.xlsx", "Long")       # the sheet as text (core.tables)
    guessed = guess_roles(read, sheets)                       # ColumnRoles, and why (notes)
    choices = AqerChoices(columns=guessed.roles)
    check = check_answers(read, choices)                      # row-numbered issues; errors block
    prepared = read_responses("answers.xlsx", ColumnRoles(question_col="Question ID", ...))

The column roles are one value (:class:`core.aqer.model.ColumnRoles`), guessed here and only
here: :func:`guess_roles` for a sheet just chosen (the wizard), :func:`roles_from_options` around
what the command line's options name, :func:`guess_columns` to fill in roles a sheet read again
lacks. The column synonyms are one list per role (:data:`SYNONYMS`). An AQER sheet is read with
``core.tables.read_table`` and ``map_columns`` rather than ``read_mapped_rows``: its rows are not
one item each (a wide sheet holds a question or a worker per row, a long sheet one answer), and
``core.aqer.responses`` turns either layout into the long answers with row-numbered notices.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import tables
from core.aqer.blanks import BlankRule, blank_rule
from core.aqer.model import (
    DEFAULT_BLANK_TOKENS,
    AqerChoices,
    AqerNotice,
    ColumnRoles,
    Layout,
    WideRows,
)
from core.aqer.pipeline import absent_notices
from core.aqer.responses import (
    AqerInputError,
    Duplicates,
    PreparedResponses,
    closest_column,
    prepare_responses,
    set_person_grades,
)
from core.tables import HasIssues, TableIssue, TableRead

if TYPE_CHECKING:  # pragma: no cover
    from core.runs import CancelToken, Progress

__all__ = [
    "AI_MARKS",
    "BLANK_TOKENS",
    "ROLE_NAMES",
    "SYNONYMS",
    "AnswersCheck",
    "ColumnOptions",
    "GuessedRoles",
    "LayoutGuess",
    "attach_grades_sheet",
    "check_answers",
    "guess_columns",
    "guess_layout",
    "guess_roles",
    "note_columns",
    "numeric_columns",
    "read_answers",
    "read_responses",
    "roles_from_options",
]

#: Answers read as blank by default (the user sees and edits the list; compared ignoring case).
BLANK_TOKENS = list(DEFAULT_BLANK_TOKENS)

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


def guess_columns(roles: ColumnRoles, columns: Iterable[Any]) -> ColumnRoles:
    """``roles`` with a column suggested for every role that has none (or one the sheet
    lacks), and AI-answer columns the sheet lacks dropped. Chosen columns that exist are kept
    (the wizard reopening a project: the sheet read again)."""
    columns = [str(c) for c in columns]
    s = roles
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
    return roles.model_copy(update=update)


#: A column is "mostly numbers" when at least this share of its filled cells are numbers.
NUMERIC_SHARE = 0.8
#: Headers that name a question by number ("Q1", "Question 3", "Item 2.", "Task 4").
_NUMBERED = re.compile(r"^(q|question|item|task|ex|exercise)\s*[.#:]?\s*\d+\b", re.IGNORECASE)


def numeric_columns(read: TableRead, skip: Iterable[Any] = ()) -> dict[str, tuple[int, int]]:
    """Columns most of whose filled cells are numbers: column -> (numbers, filled cells).

    Such a column (an "Average grade" beside the questions) is never an answer column: AQER
    compares texts, and a number's "closeness" to other numbers says nothing of its quality.
    """
    skipped = {str(c) for c in skip if c}
    found: dict[str, tuple[int, int]] = {}
    for column in read.frame.columns:
        if str(column) in skipped:
            continue
        cells = [str(v).strip() for v in read.frame[column] if str(v).strip()]
        numbers = sum(tables.cell_number(v) is not None for v in cells)
        if len(cells) >= 2 and numbers >= NUMERIC_SHARE * len(cells):
            found[str(column)] = (numbers, len(cells))
    return found


#: Words in a header that name a note about a person rather than an answer.
NOTE_WORDS = frozenset({"comment", "comments", "note", "notes", "feedback", "remark", "remarks",
                        "absent", "absence", "absences", "attendance", "present"})
#: A column filled in fewer than this share of the rows (and in less than half as many rows as
#: the answer columns usually are) is "mostly empty".
MOSTLY_EMPTY = 0.5
_DATE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}( \d{1,2}:\d{2}(:\d{2})?)?$")
_TICK = {"x", "yes", "no", "y", "n", "true", "false", "✓", "✔", "absent", "present", "late"}


def note_columns(read: TableRead, skip: Iterable[Any] = (), by_person: bool = True
                 ) -> dict[str, str]:
    """Columns that look like notes about a person, not answers: column -> why, in words.

    A column whose header names a note ("Comments", "Notes", "Feedback", "Remarks",
    "Absent"); and, in a sheet with a row per person (``by_person``), a column most people
    left empty while the other columns are mostly filled, or whose cells differ in kind from
    answers (dates, or ticks such as "x", "yes", "absent"). Such a column is proposed for
    leaving out before the run: scored as a question, its few filled cells would beat every
    blank.
    """
    skipped = {str(c) for c in skip if c}
    columns = [str(c) for c in read.frame.columns if str(c) not in skipped]
    if not columns:
        return {}
    rows = max(1, len(read.frame))
    filled = {c: [str(v).strip() for v in read.frame[c] if str(v).strip()] for c in columns}
    shares = sorted(len(v) / rows for v in filled.values())
    usual = shares[len(shares) // 2]
    found: dict[str, str] = {}
    for column in columns:
        reasons = []
        words = set(tables._words(column).split())
        named = sorted(words & NOTE_WORDS)
        if named:
            reasons.append(f"its header names a note (“{named[0]}”)")
        cells = filled[column]
        if by_person and len(columns) >= 3:
            share = len(cells) / rows
            if share < MOSTLY_EMPTY and share < usual / 2:
                reasons.append(f"only {len(cells)} of {rows} rows have something in it")
            elif cells and len(cells) >= 2:
                if sum(bool(_DATE.match(v)) for v in cells) >= NUMERIC_SHARE * len(cells):
                    reasons.append("it holds dates, not answers")
                elif sum(v.casefold() in _TICK for v in cells) >= NUMERIC_SHARE * len(cells):
                    reasons.append("it holds ticks (such as “x” or “yes”), not answers")
        if reasons:
            found[column] = " and ".join(reasons)
    return found


def _matches(header: str, role: str) -> bool:
    """True when ``header`` is the role's name or one of its synonyms, or their plural (case,
    spaces and punctuation aside): "Student", "Names", "Grades"."""
    words = tables._words(str(header))
    names = {tables._words(x) for x in [role, *SYNONYMS[role]]}
    return words in names or (words.endswith("s") and words[:-1] in names)


def _mentions(header: str, role: str) -> bool:
    """True when ``header`` contains one of the role's words ("Average grade")."""
    return tables.guess_mapping([str(header)], {role: SYNONYMS[role]}).get(role) is not None


def _looks_like_question(text: str) -> bool:
    text = str(text).strip()
    return bool(text) and (text.endswith("?") or bool(_NUMBERED.match(text)))


@dataclass
class LayoutGuess:
    """The layout :func:`guess_layout` read from a sheet, and why (one plain sentence)."""

    format: str
    wide_rows: str = "question"
    key_col: str | None = None
    reason: str = ""


def guess_layout(read: TableRead) -> LayoutGuess:
    """Long or wide, and for wide whether a row is a person or a question, from the headers
    (and, when they say nothing, from the cells)."""
    columns = [str(c) for c in read.frame.columns]
    if not columns:
        return LayoutGuess("long", reason="The sheet has no columns.")
    found = tables.guess_mapping(columns, {r: SYNONYMS[r] for r in ("question", "worker",
                                                                   "response")})
    q, w, r = found["question"], found["worker"], found["response"]
    if r and (q or w) and not _looks_like_question(r):
        cols = ", ".join(f"'{c}'" for c in (q, w, r) if c)
        return LayoutGuess("long", reason=(
            f"Guessed the long layout (a row per answer): the sheet has the columns {cols}."))
    first = columns[0]
    label = f"column {read.letters.get(first, 'A')} is called '{first}'"
    others = columns[1:]
    numbered = [c for c in others if _looks_like_question(c)]
    if _matches(first, "worker"):
        return LayoutGuess("wide", "worker", first, (
            f"Guessed the wide layout with a row per person: {label}."))
    if _matches(first, "question"):
        return LayoutGuess("wide", "question", first, (
            f"Guessed the wide layout with a row per question: {label}."))
    if others and len(numbered) >= max(2, len(others) / 2):
        shown = ", ".join(f"'{c}'" for c in numbered[:3])
        return LayoutGuess("wide", "worker", first, (
            f"Guessed the wide layout with a row per person: the other columns look like "
            f"questions ({shown}{', ...' if len(numbered) > 3 else ''})."))
    values = [str(v).strip() for v in read.frame[first] if str(v).strip()]
    if values and sum(_looks_like_question(v) for v in values) >= len(values) / 2:
        return LayoutGuess("wide", "question", first, (
            f"Guessed the wide layout with a row per question: the cells of column "
            f"{read.letters.get(first, 'A')} look like questions."))
    return LayoutGuess("wide", "question", first, (
        "Guessed the wide layout with a row per question (nothing in the headers names the "
        "questions or the people): check it, and choose a row per person if that fits."))


@dataclass
class GuessedRoles:
    """A guess of the column roles (:func:`guess_roles`, :func:`roles_from_options`) and what
    was guessed, in plain sentences."""

    roles: ColumnRoles
    layout: LayoutGuess | None = None
    notes: list[str] = field(default_factory=list)
    numeric: dict[str, tuple[int, int]] = field(default_factory=dict)


def guess_roles(read: TableRead, sheets: Sequence[str] = (), *,
                format: Layout | None = None, wide_rows: WideRows | None = None,
                current: ColumnRoles | None = None) -> GuessedRoles:
    """The column roles for a sheet just chosen (a new file or sheet, or another layout
    chosen): every column choice made for the previous one is dropped, the layout is guessed
    unless ``format`` is given (then a wide sheet's row holds ``wide_rows``; not given: what
    the sheet's own layout says when it looks wide, else what ``current`` says), columns are
    suggested from :data:`SYNONYMS` and close names ("Qestion"), columns of numbers are used
    as grades or left out, notes are left out, and a sheet of grades among ``sheets`` is
    proposed. The notes say what was guessed and why. (The wizard's guess; the command
    line's is :func:`roles_from_options`.)"""
    current = current or ColumnRoles()
    if format is None:
        return _guess(current, read, sheets)
    if wide_rows is None and format == "wide":  # the sheet's own orientation when it looks wide
        looks = _guess(current, read, sheets).roles
        wide_rows = looks.wide_rows if looks.format == "wide" else current.wide_rows
    start = ColumnRoles(format=format, wide_rows=wide_rows or current.wide_rows)
    return _guess(start, read, sheets, layout=False, keep_rows=True)


@dataclass
class ColumnOptions:
    """The columns a user named on the command line (``evaldesk aqer``'s options), for
    :func:`roles_from_options`: None = not named (guessed); "" for ``grade_col`` and
    ``grades_sheet``: none."""

    format: Layout | None = None
    question_col: str | None = None
    worker_col: str | None = None
    response_col: str | None = None
    grade_col: str | None = None
    grades_sheet: str | None = None
    grades_file: bool = False
    """A file of grades is given (its grades are used, not a sheet of the answers file)."""
    ignore_cols: Sequence[str] = ()
    keep_cols: Sequence[str] = ()
    llm_cols: Sequence[str] = ()
    llm_workers: Sequence[str] = ()


def roles_from_options(read: TableRead, sheets: Sequence[str],
                       options: ColumnOptions) -> GuessedRoles:
    """The column roles for the command line: what ``options`` names always wins, the rest is
    guessed from the headers and the cells as the wizard guesses it (the layout when
    ``--format`` is not given; no close names: a role nothing is found for is asked for by
    name instead). The notes say what was guessed."""
    o = options
    given = {k: v for k, v in (("question_col", o.question_col), ("worker_col", o.worker_col),
                                ("response_col", o.response_col), ("grade_col", o.grade_col))
             if v}
    fmt = o.format or ("long" if o.response_col else None)
    wide_rows: WideRows = "worker" if o.worker_col and not o.question_col else "question"
    guessed = _guess(ColumnRoles(format=fmt or "long", wide_rows=wide_rows), read, sheets,
                     layout=fmt is None, fuzzy=False,
                     chosen={**given, "keep_cols": list(o.keep_cols)})
    r = guessed.roles.model_copy(update=given)
    if r.format == "wide":
        if o.question_col or o.worker_col:
            r = r.model_copy(update={"wide_rows": wide_rows})
        elif o.format:  # a column called "worker" wins over one called "question"
            r = r.model_copy(update={"wide_rows": "worker" if r.worker_col else "question"})
        r = r.model_copy(update={"response_col": None})
        if r.wide_rows == "question" and not o.grade_col:
            r = r.model_copy(update={"grade_col": None})
    guessed.roles = _options_win(r, o, guessed.numeric)
    return guessed


def _options_win(r: ColumnRoles, o: ColumnOptions,
                 numeric: Mapping[str, Any]) -> ColumnRoles:
    """The grades and the columns left out as the options say, over the guess ``r``: a column
    named to leave out or to keep wins, a grades file or sheet named wins over a column."""
    grade = None if o.grade_col == "" else r.grade_col  # --grade-col "": not used
    ignored = [*r.ignore_cols, *[c for c in o.ignore_cols if c not in r.ignore_cols]]
    ignore = [c for c in ignored if c != grade or c in o.ignore_cols]
    if grade in o.ignore_cols:
        grade = None
    grades_sheet = r.grades_sheet
    if o.grades_file:  # the grades come from that file (unless a grade column is named)
        grades_sheet, grade = None, o.grade_col or None
    if r.format == "wide":  # a column of numbers not used as the grades is never an answer
        ignore += [c for c in numeric if c != grade and c not in ignore]
    ignore = [c for c in ignore if c not in o.keep_cols]
    if o.grades_sheet is not None:
        grades_sheet = o.grades_sheet or None
    elif grade:
        grades_sheet = None
    if o.grades_file and o.grades_sheet is not None:
        grades_sheet = None  # a sheet of the grades file, set with it
    return r.model_copy(update={"grade_col": grade, "ignore_cols": ignore,
                                "grades_sheet": grades_sheet, "llm_cols": list(o.llm_cols),
                                "llm_workers": list(o.llm_workers)})


def _guess(start: ColumnRoles, read: TableRead, sheets: Sequence[str] = (), *,
           layout: bool = True, fuzzy: bool = True,
           keep_rows: bool = False, chosen: Mapping[str, Any] | None = None
           ) -> GuessedRoles:
    """Roles guessed afresh (nothing of a previous sheet is kept): the layout is guessed
    (``layout=False`` keeps ``start.format`` and ``start.wide_rows``), columns are suggested
    from :data:`SYNONYMS` (then, with ``fuzzy``, from close names such as "Qestion"), columns
    of numbers are used as grades or left out, and a sheet of grades among ``sheets`` is
    proposed. ``keep_rows`` (with ``layout=False``): the user chose what a wide sheet's row
    holds, so its key column is guessed for that. ``chosen``: what the user named already
    (the command line's ``question_col``, ``worker_col``, ``response_col``, ``grade_col``, and
    ``keep_cols``, columns never proposed for leaving out): kept, and the guesses and notes
    are made around it."""
    chosen = dict(chosen or {})
    keep = {str(c) for c in chosen.pop("keep_cols", ()) or ()}
    out = GuessedRoles(ColumnRoles(format=start.format, wide_rows=(
        "question" if layout else start.wide_rows)))
    if layout:
        out.layout = guess_layout(read)
        out.notes.append(out.layout.reason)
        update: dict[str, Any] = {"format": out.layout.format, "wide_rows": out.layout.wide_rows}
        if out.layout.format == "wide":
            update["question_col" if out.layout.wide_rows == "question" else "worker_col"] = (
                out.layout.key_col)
        out.roles = out.roles.model_copy(update=update)
    columns = [str(c) for c in read.frame.columns]
    if keep_rows and not layout and out.roles.format == "wide" and columns:
        # the user chose what a row holds: its key is named like it, else column A
        role = "question" if out.roles.wide_rows == "question" else "worker"
        key = tables.guess_mapping(columns, {role: SYNONYMS[role]})[role] or columns[0]
        out.roles = out.roles.model_copy(update={f"{role}_col": key})
    named = {k: v for k, v in chosen.items()
             if k in ("question_col", "worker_col", "response_col", "grade_col") and v}
    if named:
        out.roles = out.roles.model_copy(update=named)
    s = guess_columns(out.roles, columns)
    if fuzzy:
        s = _close_columns(s, read, out.notes)
    if s.format == "wide":
        row_key = s.question_col if s.wide_rows == "question" else s.worker_col
        out.numeric = numeric_columns(read, skip=[row_key])
        ignore: list[str] = []
        grade = named.get("grade_col") if s.wide_rows == "worker" else None
        for column, (numbers, filled) in out.numeric.items():
            if column == grade or column in keep:
                continue  # the user's choice: their grades, or a column they keep as answers
            what = (f"Column {read.letters.get(column, '?')} '{column}' is mostly numbers "
                    f"({numbers} of {filled} filled cells), so it is not scored as answers")
            if s.wide_rows == "worker" and grade is None and _mentions(column, "grade"):
                grade = column
                out.notes.append(f"{what}: it is used as the expert grades (one per person). "
                                 "Choose “(no grades)” to leave it out instead.")
            else:
                ignore.append(column)
                out.notes.append(f"{what}: it is left out" + (
                    " (choose it as the expert grades if it holds one grade per person)."
                    if s.wide_rows == "worker" else "."))
        for column, why in note_columns(
                read, skip=[row_key, grade, *ignore, *s.llm_cols, *keep],
                by_person=s.wide_rows == "worker").items():
            ignore.append(column)
            out.notes.append(
                f"Column {read.letters.get(column, '?')} '{column}' looks like notes, not "
                f"answers: {why}. It is left out, not scored as a question (untick it under "
                "“Leave out” to score it; command line: --keep-col).")
        s = s.model_copy(update={"grade_col": grade, "ignore_cols": ignore})
        if grade is None:
            sheet = _grades_sheet(read, sheets)
            if sheet:
                s = s.model_copy(update={"grades_sheet": sheet})
                out.notes.append(f"The sheet '{sheet}' looks like a list of grades: its grades "
                                 "are joined to the people by name.")
    out.roles = s
    return out


def _close_columns(roles: ColumnRoles, read: TableRead, notes: list[str]) -> ColumnRoles:
    """Roles still without a column get the column whose name is close to the role's (a typo
    such as "Qestion" or "Studnet"), said in ``notes``."""
    columns = [str(c) for c in read.frame.columns]
    if roles.format == "long":
        needed = [("question_col", "question"), ("worker_col", "worker"),
                  ("response_col", "response")]
    else:
        needed = [("question_col", "question") if roles.wide_rows == "question"
                  else ("worker_col", "worker")]
    taken = {roles.question_col, roles.worker_col, roles.response_col, roles.grade_col}
    update: dict[str, Any] = {}
    for key, role in needed:
        if getattr(roles, key):
            continue
        for name in [role, *SYNONYMS[role]]:
            match = closest_column(name, [c for c in columns if c not in taken])
            if match:
                update[key] = match
                taken.add(match)
                notes.append(f"No column is called '{role}'; is it '{match}' (column "
                             f"{read.letters.get(match, '?')})? It is chosen for the "
                             f"{ROLE_NAMES[key]}: change it below if not.")
                break
    return roles.model_copy(update=update)


def _grades_sheet(read: TableRead, sheets: Sequence[str]) -> str | None:
    """Another sheet of the workbook named like grades ("Grades", "Marks", "Scores")."""
    for sheet in sheets:
        if sheet != read.sheet and _matches(sheet, "grade"):
            return sheet
    return None


def _name_key(name: Any) -> str:
    """A person's name for joining: case and runs of spaces ignored."""
    return " ".join(str(name).split()).casefold()


def attach_grades_sheet(prepared: PreparedResponses, path: str | Path, sheet: str | None,
                        name_col: str | None = None, value_col: str | None = None,
                        grades: TableRead | None = None) -> list[TableIssue]:
    """Join one grade per person from ``sheet`` of ``path`` to ``prepared`` by name (case and
    spaces ignored): sets ``prepared.person_grades`` and returns the issues (an error when the
    sheet cannot be used; warnings naming names that match no one, and people without one)."""
    try:
        read = grades or tables.read_table(path, sheet=sheet)
    except tables.TableError as exc:
        return [TableIssue("error", f"The grades sheet '{sheet}' cannot be read: {exc}", sheet)]
    if sheet and read.sheet != sheet and not read.is_text_file:
        return [TableIssue("error", f"There is no sheet '{sheet}' in {Path(path).name} for the "
                           "grades. Choose another sheet (or none).", sheet)]
    columns = [str(c) for c in read.frame.columns]
    found = tables.guess_mapping(columns, {"worker": SYNONYMS["worker"],
                                           "grade": SYNONYMS["grade"]})
    name_col = name_col if name_col in columns else (found["worker"] or
                                                     (columns[0] if columns else None))
    if value_col not in columns:
        value_col = found["grade"] if found["grade"] != name_col else None
        if value_col is None:
            numeric = [c for c in numeric_columns(read, skip=[name_col])]
            value_col = numeric[0] if numeric else None
    if not name_col or not value_col:
        return [read.issue("error", "a grades sheet needs a column of names and a column of "
                           "grades (numbers); this one has "
                           + (", ".join(f"'{c}'" for c in columns) or "no columns")
                           + ". Choose another sheet for the grades, or none.")]
    people = {_name_key(w): w for w in prepared.frame["worker"].unique()}
    if len(prepared.blanks):
        people.update({_name_key(w): w for w in prepared.blanks["worker"].unique()
                       if _name_key(w) not in people})
    grades_by: dict[str, str] = {}
    unmatched: list[str] = []
    for row, name, grade in zip(read.rows, read.frame[name_col], read.frame[value_col]):
        if not str(name).strip():
            continue
        worker = people.get(_name_key(name))
        if worker is None:
            unmatched.append(f"'{str(name).strip()}' (row {row})")
        else:
            grades_by.setdefault(worker, str(grade))
    where = (f"{read.describe()}, column {read.letters.get(value_col, '?')} "
             f"'{value_col}', joined by '{name_col}'")
    set_person_grades(prepared, grades_by, where)
    issues = [TableIssue("warning", n.message, read.sheet)
              for n in prepared.notices if n.topic == "Grade is not a number"
              and where in n.message]
    prepared.notices = [n for n in prepared.notices if not (n.topic == "Grade is not a number"
                                                            and where in n.message)]
    if unmatched:
        issues.append(read.issue("warning", (
            f"{len(unmatched)} name{'s' if len(unmatched) != 1 else ''} in the grades "
            f"{'match' if len(unmatched) != 1 else 'matches'} no one in the answers and "
            f"{'were' if len(unmatched) != 1 else 'was'} left out: "
            f"{', '.join(unmatched[:20])}{' and more' if len(unmatched) > 20 else ''}. Check "
            "the spelling in the answers or in the grades (case and spaces do not matter).")))
    humans = sorted(set(prepared.frame.loc[~prepared.frame["is_llm"], "worker"]))
    without = [w for w in humans if w not in prepared.person_grades]
    if without and grades_by:
        issues.append(read.issue("warning", (
            f"No grade for {len(without)} {'people' if len(without) != 1 else 'person'}: "
            + ", ".join(f"'{w}'" for w in without[:20]) + (" and more" if len(without) > 20
                                                            else "")
            + ". They are scored but left out of the agreement with the grades.")))
    if not grades_by:
        issues.append(read.issue("error", (
            f"none of the names in column {read.letters.get(name_col, '?')} '{name_col}' "
            "match a person in the answers, so no grade can be used. Check that this is the "
            "sheet of grades, or choose none.")))
    return issues


def read_answers(
    path: str | Path,
    sheet: str | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    header_row: int | None = None,
) -> tuple[list[str], TableRead]:
    """The file's sheet names and one sheet read as text (run it in an executor), its header
    in ``header_row`` (None: the row that reads like one, ``core.tables.find_header_row``)."""
    from core import tables

    path = Path(path)
    if progress is not None:
        progress.start(f"Reading {path.name}", detail=str(path))
    sheets = tables.list_sheets(path)
    if cancel is not None:
        cancel.raise_if_cancelled()
    if sheet is not None and sheet not in sheets:
        sheet = None
    read = tables.read_table(path, sheet=sheet, header_row=header_row)
    return sheets, read


@dataclass
class AnswersCheck(HasIssues):
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


ROLE_NAMES = {
    "question_col": "questions",
    "worker_col": "worker names",
    "response_col": "answers",
    "grade_col": "expert grades",
}


def check_answers(read: TableRead, choices: AqerChoices,
                  grades_path: str | Path | None = None) -> AnswersCheck:
    """Check the chosen columns on the whole sheet; plain messages naming sheet, row, column.
    ``grades_path``: where to read the grades file of ``choices`` (the session's
    ``grades_path()``; default: where the user chose it)."""
    c = choices.columns
    roles = c.needed()
    optional = {"expert grades"}
    mapped = tables.map_columns(
        read, roles, required=[r for r in roles if r not in optional]
    )
    issues = list(mapped.issues)
    for column in c.llm_cols:
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
    for role, role_col in roles.items():
        if role_col:
            by_column.setdefault(role_col, []).append(role)
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
    duplicates = choices.duplicates if choices.duplicates != "error" else "first"
    try:
        prepared = prepare_responses(
            read.frame,
            format=c.format,
            duplicates=duplicates,
            source=read.where(),
            first_row=(read.header_row or 1) + 1,
            letters=letters,
            unnamed=unnamed,
            **choices.engine_columns(),
        )
    except AqerInputError as exc:
        check.issues.append(tables.TableIssue("error", str(exc), read.sheet))
        return check
    prepared.header_note = read.header_note
    check.prepared = prepared
    if c.grades_sheet or c.grades_file:
        path = read.path if not c.grades_file else (grades_path or c.grades_file.path)
        check.issues.extend(attach_grades_sheet(prepared, path, c.grades_sheet,
                                                c.grades_name_col, c.grades_value_col))
        if not check.ok:
            return check
    if c.format == "wide":
        key = c.question_col if c.wide_rows == "question" else c.worker_col
        used = set(prepared.frame["cell"].str.extract(r"^([A-Z]+)", expand=False).dropna())
        for column, (numbers, filled) in numeric_columns(
                read, skip=[key, c.grade_col, *c.ignore_cols]).items():
            if read.letters.get(column) in used:
                check.issues.append(read.issue("warning", (
                    f"this column is mostly numbers ({numbers} of {filled} filled cells) but is "
                    "scored as answers. If it holds grades or totals, leave it out (or use it "
                    "as the expert grades)."), column=column))
        for column, why in note_columns(
                read, skip=[key, c.grade_col, *c.ignore_cols, *c.llm_cols],
                by_person=c.wide_rows == "worker").items():
            if read.letters.get(column) in used and column not in numeric_columns(read):
                check.issues.append(read.issue("warning", (
                    f"this column looks like notes, not answers ({why}), but is scored as a "
                    "question: a few filled cells would beat every blank. Leave it out unless "
                    "it holds answers."), column=column))
    check.blank_rule = blank_rule(
        prepared, choices.settings.blank_answers, choices.settings.llm_as_workers
    )
    worst = check.blank_rule.rule == "worst"
    absent = set() if worst and choices.settings.keep_absent else set(prepared.absent)
    for notice in prepared.notices:
        if notice.topic == "Duplicate answer":
            check.duplicates += 1
            if choices.duplicates == "error":
                continue  # asked for separately
        if notice.topic == "Empty answer" and notice.worker in absent:
            continue  # said once per person below, as the results say it
        check.issues.append(
            tables.TableIssue("warning", notice.message, read.sheet, notice.row)
        )
    for notice in absent_notices([n for n in prepared.absent if n in absent], worst,
                                 prepared.frame["question"].nunique()):
        check.issues.append(tables.TableIssue("warning", notice.message, read.sheet))
    check.needs_duplicate_choice = choices.duplicates == "error" and check.duplicates > 0
    if check.needs_duplicate_choice:
        try:  # the engine's own words for what repeats where (only when there are repeats)
            prepare_responses(read.frame, format=c.format, duplicates="error",
                              source=read.where(), first_row=(read.header_row or 1) + 1,
                              letters=letters, unnamed=unnamed, **choices.engine_columns())
        except AqerInputError as exc:
            check.duplicate_message = str(exc)
    humans = prepared.frame[~prepared.frame["is_llm"]]
    if choices.settings.llm_as_workers:
        humans = prepared.frame
    n_workers, n_questions = humans["worker"].nunique(), humans["question"].nunique()
    shared = humans.groupby("question")["worker"].nunique()
    shared = shared[shared >= 2]
    # merged cells leave every row below the first of a merged range empty: the reader's own
    # warning says which cells and what to do, and is the reason to give here
    merged = " ".join(i.message.removeprefix(f"{read.where()}: ") for i in read.issues
                      if i.severity == "warning" and " are merged" in i.message)
    if n_workers >= 2 and n_questions >= 2 and len(shared) < 2:
        check.issues.append(
            tables.TableIssue(
                "error",
                f"{read.where()}: AQER needs at least 2 questions that at least 2 workers "
                f"answered, and finds {len(shared)}. "
                + (f"This is because of merged cells. {merged}" if merged else
                   "Workers must answer the same questions: check that the question and worker "
                   "columns are the right ones."),
                read.sheet,
            )
        )
    if n_workers < 2 or n_questions < 2:
        check.issues.append(
            tables.TableIssue(
                "error",
                f"{read.where()}: AQER compares workers across questions, so it needs answers "
                f"from at least 2 workers to at least 2 questions; with these columns it finds "
                f"{n_workers} worker(s) and {n_questions} question(s). "
                + (f"This is because of merged cells. {merged}" if merged else
                   "Check the columns chosen for the questions, workers and answers (and, for a "
                   "wide sheet, whether each row is a question or a worker)."),
                read.sheet,
            )
        )
    return check


def read_responses(
    path: str | Path,
    roles: ColumnRoles | None = None,
    *,
    sheet: str | None = None,
    header_row: int | None = None,
    blank_tokens: Sequence[str] = (),
    duplicates: Duplicates = "error",
    grades_path: str | Path | None = None,
) -> PreparedResponses:
    """Read answers from an .xlsx / .xls / .csv file (cells as text) and check them, the
    columns as ``roles`` say (default: a long sheet with columns named "question", "worker"
    and "response"); with a grades sheet (of ``grades_path`` when given, else of this file),
    join one grade per person from it (:func:`attach_grades_sheet`). ``header_row``: the
    sheet's header row (None: the row that reads like one)."""
    roles = roles or ColumnRoles()
    path = Path(path)
    if not path.exists():
        raise AqerInputError(f"The file {path} does not exist. Check the name and folder.")
    try:
        table = tables.read_table(path, sheet=sheet, header_row=header_row)
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
        format=roles.format,
        **roles.engine_columns(),
        blank_tokens=blank_tokens,
        duplicates=duplicates,
        source=source,
        first_row=(table.header_row or 1) + 1,
        letters=letters,
        unnamed=unnamed,
    )
    if roles.grades_sheet or grades_path:
        issues = attach_grades_sheet(prepared, grades_path or path, roles.grades_sheet,
                                     roles.grades_name_col, roles.grades_value_col)
        grade_errors = [i.message for i in issues if i.severity == "error"]
        if grade_errors:
            raise AqerInputError("The grades cannot be used as they are:\n"
                                 + "\n".join(f"- {m}" for m in grade_errors))
        prepared.notices.extend(AqerNotice(topic="Grades", message=i.message) for i in issues)
    prepared.header_note = table.header_note
    reading = [
        AqerNotice(topic="Reading the file", message=issue.message, row=issue.row)
        for issue in table.issues
        if issue.severity != "error"
    ]
    prepared.notices[:0] = reading
    return prepared
