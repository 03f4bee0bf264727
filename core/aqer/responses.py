"""The workers' responses: from a spreadsheet (long or wide) to one checked long table.

Two layouts are accepted (the wizard lets the user pick; the CLI takes ``--format``):

* **long**: one row per answer with a question, a worker and a response column; optional
  ``grade`` (an expert's grade of that answer), ``is_llm`` (yes/true/1/x marks an LLM's answer)
  and ``model`` (the LLM's name; a filled ``model`` cell also marks the row as an LLM answer).
  ``llm_cols`` may name columns that hold LLM answers to the row's question (one per LLM).
* **wide**: a row per worker and a column per question (give the worker column), or a row per
  question and a column per worker (give the question column). LLM answers are extra columns
  in the second layout (``llm_cols``) or rows named in ``llm_workers`` in the first.

The result is a :class:`PreparedResponses`: a long frame with the columns ``question``,
``worker``, ``response``, ``is_llm``, ``model``, ``grade``, ``row`` and ``cell``, plus notices
(empty answers, dropped duplicates, ...). Problems the user must fix raise
:class:`AqerInputError` whose message names the file, sheet, row and column.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from core.aqer.model import AqerNotice
from core.words import count

__all__ = [
    "LONG_COLUMNS",
    "AqerInputError",
    "PreparedResponses",
    "blank_token_set",
    "clean_responses",
    "closest_column",
    "column_letter",
    "long_responses",
    "prepare_responses",
    "set_person_grades",
    "wide_responses",
]

#: Columns of the checked long frame.
LONG_COLUMNS = ["question", "worker", "response", "is_llm", "model", "grade", "row", "cell"]

#: How many notices of one kind are listed one by one before a summary line.
MAX_LISTED = 2_000

_TRUE = {"1", "true", "yes", "y", "x", "llm", "ai", "ja", "oui", "si", "sí"}

Format = Literal["long", "wide"]
Duplicates = Literal["first", "last", "error"]


class AqerInputError(ValueError):
    """The input cannot be used as it is; the message says where the problem is and what to do."""


@dataclass
class PreparedResponses:
    """Checked answers in long form, with what the user should know about them."""

    frame: pd.DataFrame
    notices: list[AqerNotice] = field(default_factory=list)
    source: str = ""
    person_grades: dict[str, float] = field(default_factory=dict)
    """One expert grade per person (a grade column of a wide sheet, or a grades sheet joined by
    name): compared with each worker's score as it is, never copied onto their answers."""
    grades_source: str = ""
    """Where ``person_grades`` came from, in words ("column L 'Average grade'")."""
    blanks: pd.DataFrame = field(default_factory=lambda: _empty_frame())
    """Answers left blank (empty or only spaces), one row per (worker, question) that has no
    answer, same columns as ``frame``: in a dense design they count as the weakest answer
    (``core.aqer.blanks``)."""
    header_note: str = ""
    """Which row of the sheet was read as the header when rows above it were not (a title),
    in words (``core.tables.TableRead.header_note``); "" when it is the first row."""

    @property
    def workers(self) -> list[str]:
        return sorted(set(self.frame.loc[~self.frame["is_llm"], "worker"]))

    @property
    def questions(self) -> list[str]:
        return list(dict.fromkeys(self.frame["question"]))

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.frame.loc[self.frame["is_llm"], "model"]))

    @property
    def absent(self) -> list[str]:
        """People (not AI) who left every question blank: in ``blanks`` only, never in
        ``frame``. AQER lists them as "absent?" and leaves them out of the scale unless asked
        (``AqerSettings.keep_absent``)."""
        if not len(self.blanks):
            return []
        answered = set(self.frame["worker"])
        people = self.blanks.loc[~self.blanks["is_llm"], "worker"]
        return [n for n in dict.fromkeys(people) if n not in answered]

    def describe(self, absent_scored: bool = False) -> str:
        """The answers in words: "287 answers from 29 workers to 10 questions (3 left blank);
        1 person answered nothing (absent?), not scored: 'Jonas Weber'". ``absent_scored``:
        such people are scored as the weakest (and counted among the workers)."""
        humans = self.frame[~self.frame["is_llm"]]
        absent = self.absent
        workers = humans["worker"].nunique() + (len(absent) if absent_scored else 0)
        text = (
            f"{count(len(humans), 'answer')} from {count(workers, 'worker')} "
            f"to {count(self.frame['question'].nunique(), 'question')}"
        )
        blank = int((~self.blanks["is_llm"]).sum()) if len(self.blanks) else 0
        if blank:
            text += f" ({blank} left blank)"
        if absent:
            names = ", ".join(f"'{n}'" for n in absent[:5]) + (" and more"
                                                              if len(absent) > 5 else "")
            text += (f"; {count(len(absent), 'person')} answered nothing (absent?), "
                     + ("scored as the weakest: " if absent_scored else "not scored: ") + names)
        models = self.models
        if models:
            text += (f"; LLM answers from {', '.join(models[:5])}"
                     + (f" and {len(models) - 5} more" if len(models) > 5 else ""))
        return text


# ----------------------------------------------------------------------------- small pieces


def column_letter(index: int) -> str:
    """Spreadsheet letter of the 0-based column ``index`` (0 -> A, 26 -> AA)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def cell_text(value: Any) -> str:
    """A cell as the text the user sees: numbers and dates keep their written form."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, (pd.Timestamp, _dt.datetime)):
        if value is pd.NaT:
            return ""
        if (value.hour, value.minute, value.second, value.microsecond) == (0, 0, 0, 0):
            return value.strftime("%Y-%m-%d")
        return value.isoformat(sep=" ")
    if isinstance(value, _dt.date):
        return value.isoformat()
    try:
        if pd.isna(value):
            return ""
    except (TypeError, ValueError):
        pass
    return str(value)


def cell_texts(values: Any, strip: bool = False) -> pd.Series:
    """:func:`cell_text` of every value, as a column of str (index 0..n-1).

    A column that holds only text (what ``core.tables`` reads) or only integers is converted
    without a Python call per cell; anything else (numbers with decimals, dates, blanks) goes
    through :func:`cell_text` cell by cell, so the result is always the same.
    """
    column = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    kind = pd.api.types.infer_dtype(column, skipna=False) if len(column) else "empty"
    if kind in ("string", "integer") and column.dtype != object and column.isna().any():
        kind = "mixed"  # pandas' own missing values: cell by cell
    if kind == "string":
        out = pd.Series(column.to_numpy(dtype=object), dtype=object)
    elif kind == "integer" and pd.api.types.is_integer_dtype(column.dtype):
        out = pd.Series(column.to_numpy().astype(str).astype(object), dtype=object)
    elif kind == "empty":
        out = pd.Series([""] * len(column), dtype=object)
    else:
        out = pd.Series([cell_text(v) for v in column.to_numpy(dtype=object)], dtype=object)
    return strip_each(out) if strip and len(out) else out


def strip_each(column: pd.Series) -> pd.Series:
    """``str.strip()`` of every cell of a column of str (as ``Series.str.strip()``), with the
    loop in C (``map``) rather than a Python call per cell; same index."""
    values = column.to_numpy(dtype=object)
    out = np.empty(len(values), dtype=object)
    out[:] = list(map(str.strip, values))
    return pd.Series(out, index=column.index, dtype=object)


def fold_each(column: pd.Series) -> pd.Series:
    """Every cell of a column of str folded as :func:`blank_token_set` folds a token (runs of
    spaces to one, ends stripped, case ignored), the loops in C; same index."""
    values = column.to_numpy(dtype=object)
    out = np.empty(len(values), dtype=object)
    out[:] = list(map(str.casefold, map(" ".join, map(str.split, values))))
    return pd.Series(out, index=column.index, dtype=object)


def _where(source: str) -> str:
    return f" in {source}" if source else ""


def _is_unnamed(header: Any) -> bool:
    text = cell_text(header).strip()
    return not text or text.lower().startswith("unnamed:")


def _find_column(
    frame: pd.DataFrame, wanted: str, role: str, source: str, option: str, required: bool = True
) -> str | None:
    """The frame's column called ``wanted`` (exact, then ignoring case and spaces)."""
    if wanted in frame.columns:
        return wanted
    key = str(wanted).strip().casefold()
    matches = [c for c in frame.columns if str(c).strip().casefold() == key]
    if len(matches) == 1:
        return matches[0]
    if not required:
        return None
    shown = ", ".join(f"'{c}'" for c in frame.columns if not _is_unnamed(c)) or "(none)"
    raise AqerInputError(
        f"No column called '{wanted}' (the {role}){_where(source)}. The columns are: {shown}. "
        f"Rename the column in the sheet, or choose the column that holds the {role} "
        f"({option})."
    )


def closest_column(name: str, columns: Iterable[Any]) -> str | None:
    """The column whose name is closest to ``name`` (a typo such as "Qestion"), or None.

    Case is ignored; "close" is :func:`difflib.get_close_matches`' default (ratio >= 0.6). The
    CLI's "is it 'Qestion'?" and the wizard's suggestions both come from here.
    """
    import difflib

    named = [str(c) for c in columns if not _is_unnamed(c)]
    close = difflib.get_close_matches(str(name).strip().casefold(),
                                      [c.strip().casefold() for c in named], 1)
    if not close:
        return None
    return next(c for c in named if c.strip().casefold() == close[0])


def blank_token_set(tokens: Iterable[str]) -> set[str]:
    """The answers read as blank, folded (case and runs of spaces ignored)."""
    return {" ".join(str(t).split()).casefold() for t in tokens if str(t).strip()}


def _require_columns(
    frame: pd.DataFrame, wanted: Sequence[tuple[str, str, str]], source: str
) -> None:
    """Raise one message naming every (column, role, option) the frame lacks."""
    missing = [
        (name, role, option)
        for name, role, option in wanted
        if _find_column(frame, name, role, source, option, required=False) is None
    ]
    if not missing:
        return
    columns = [str(c) for c in frame.columns if not _is_unnamed(c)]
    parts = []
    for name, role, option in missing:
        match = closest_column(name, columns)
        hint = f"; is it '{match}'?" if match else ""
        parts.append(f"'{name}' (the {role}, {option}){hint}")
    shown = ", ".join(f"'{c}'" for c in columns) or "(none)"
    raise AqerInputError(
        f"Missing column{'s' if len(parts) > 1 else ''}{_where(source)}: {'; '.join(parts)}. "
        f"The columns are: {shown}. Rename the columns in the sheet, or choose the column that "
        "holds each of these (in the wizard, or with the option shown)."
    )


def _rows(frame: pd.DataFrame, first_row: int) -> list[int]:
    """Spreadsheet row of each frame row: the index when it holds them (``core.tables``)."""
    if frame.index.name == "row" and pd.api.types.is_integer_dtype(frame.index):
        return [int(r) for r in frame.index]
    return [first_row + i for i in range(len(frame))]


def _letters(frame: pd.DataFrame, letters: Mapping[str, str] | None) -> dict[Any, str]:
    given = dict(letters or {})
    return {c: given.get(c, column_letter(i)) for i, c in enumerate(frame.columns)}


def _truthy(value: Any) -> bool:
    return cell_text(value).strip().casefold() in _TRUE


def _list_rows(rows: Iterable[Any], limit: int = 12) -> str:
    rows = [str(r) for r in rows if r is not None and not pd.isna(r)]
    shown = ", ".join(rows[:limit])
    return shown + (f" and {len(rows) - limit} more" if len(rows) > limit else "")


def _rows_note(rows: Iterable[Any]) -> str:
    """ " (rows 2, 3)" when the rows are known, else ""."""
    shown = _list_rows(rows)
    return f" (rows {shown})" if shown else ""


def _empty_frame() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in LONG_COLUMNS})


# ----------------------------------------------------------------------------- layouts


def long_responses(
    frame: pd.DataFrame,
    *,
    question_col: str = "question",
    worker_col: str = "worker",
    response_col: str = "response",
    grade_col: str | None = None,
    is_llm_col: str | None = None,
    model_col: str | None = None,
    llm_cols: Sequence[str] = (),
    llm_workers: Sequence[str] = (),
    source: str = "",
    first_row: int = 2,
    letters: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, list[AqerNotice]]:
    """Read a long sheet (one row per answer) into the long frame (not yet cleaned).

    ``is_llm_col`` and ``model_col`` default to columns called ``is_llm`` / ``model`` when the
    sheet has them. Row numbers come from ``frame``'s index when it is named "row" (as
    ``core.tables.read_table`` gives it), else count from ``first_row``; ``letters`` maps
    columns to spreadsheet letters for messages.
    """
    notices: list[AqerNotice] = []
    _require_columns(
        frame,
        [
            (question_col, "questions", "--question-col"),
            (worker_col, "worker names", "--worker-col"),
            (response_col, "answers", "--response-col"),
            *([(grade_col, "expert grades", "--grade-col")] if grade_col else []),
        ],
        source,
    )
    q = _find_column(frame, question_col, "questions", source, "--question-col")
    w = _find_column(frame, worker_col, "worker names", source, "--worker-col")
    r = _find_column(frame, response_col, "answers", source, "--response-col")
    g = (
        _find_column(frame, grade_col, "expert grades", source, "--grade-col")
        if grade_col
        else None
    )
    if is_llm_col:
        flag = _find_column(frame, is_llm_col, "LLM marks", source, "the LLM column")
    else:
        flag = _find_column(frame, "is_llm", "", source, "", required=False)
    if model_col:
        mcol = _find_column(frame, model_col, "LLM names", source, "the model column")
    else:
        mcol = _find_column(frame, "model", "", source, "", required=False)
    llm_found = [
        _find_column(frame, c, f"answers of the LLM '{c}'", source, "--llm-col") for c in llm_cols
    ]
    letters = _letters(frame, letters)
    rows = _rows(frame, first_row)

    n = len(frame)
    nothing = pd.Series([""] * n, dtype=object)
    questions = cell_texts(frame[q], strip=True)
    workers = cell_texts(frame[w], strip=True)
    responses = cell_texts(frame[r])
    grades = cell_texts(frame[g], strip=True) if g is not None else nothing
    models = cell_texts(frame[mcol], strip=True) if mcol is not None else nothing
    flags = (
        pd.Series(list(map(str.casefold, cell_texts(frame[flag], strip=True))), dtype=object)
        .isin(_TRUE)
        if flag is not None
        else pd.Series(np.zeros(n, dtype=bool))
    )
    named_llms = {str(x).strip() for x in llm_workers}

    if n and not (workers != "").any():
        raise AqerInputError(
            f"The worker column '{w}' (column {letters[w]}) is empty in every row"
            f"{_where(source)}. Fill in who wrote each answer, or choose another worker column."
        )
    if n and not (questions != "").any():
        raise AqerInputError(
            f"The question column '{q}' (column {letters[q]}) is empty in every row"
            f"{_where(source)}. Fill in the question of each answer, or choose another column."
        )

    # Whole columns at once (no Python per row): who answered, and which rows cannot be placed.
    row_numbers = np.asarray(rows, dtype=np.int64)
    is_llm = flags | (models != "") | (workers.isin(named_llms) & (workers != ""))
    model = models.where(models != "", workers).where(is_llm, "")
    who = model.where(is_llm, workers)
    has_text = strip_each(responses) != "" if n else pd.Series(np.zeros(0, dtype=bool))
    asked = questions != ""
    unasked_rows = row_numbers[(~asked & (has_text | (workers != ""))).to_numpy()].tolist()
    unnamed_rows = row_numbers[(asked & (who == "") & has_text).to_numpy()].tolist()
    keep = (asked & (who != "")).to_numpy()
    kept_rows = row_numbers[keep]
    records = pd.DataFrame(
        {
            "question": questions[keep].to_numpy(),
            "worker": who[keep].to_numpy(),
            "response": responses[keep].to_numpy(),
            "is_llm": is_llm[keep].to_numpy(dtype=bool),
            "model": model[keep].to_numpy(),
            "grade": grades[keep].to_numpy(),
            "row": kept_rows,
            "cell": (letters[r] + pd.Series(kept_rows.astype(str), dtype=object)).to_numpy(),
        },
        columns=LONG_COLUMNS,
    )
    if unasked_rows:
        notices.append(
            AqerNotice(
                topic="Row without a question",
                message=(
                    f"{len(unasked_rows)} row(s){_where(source)} have no question in column "
                    f"{letters[q]} and were left out (rows {_list_rows(unasked_rows)}). "
                    "Fill in the question to include them."
                ),
                row=unasked_rows[0],
            )
        )
    if unnamed_rows:
        notices.append(
            AqerNotice(
                topic="Answer without a worker",
                message=(
                    f"{len(unnamed_rows)} answer(s){_where(source)} have no worker name in column "
                    f"{letters[w]} and were left out (rows {_list_rows(unnamed_rows)}). "
                    "Fill in who wrote them to include them."
                ),
                row=unnamed_rows[0],
            )
        )

    # LLM answers given as columns beside each row's question: one answer per question.
    extra: list[dict[str, Any]] = []
    for column in llm_found:
        by_question: dict[str, tuple[str, int]] = {}
        column_texts = cell_texts(frame[column])
        for i in range(len(frame)):
            question = questions.iat[i]
            text = column_texts.iat[i]
            if not question or not text.strip():
                continue
            if question in by_question and by_question[question][0].strip() != text.strip():
                first = by_question[question][1]
                raise AqerInputError(
                    f"The LLM column '{column}' (column {letters[column]}){_where(source)} holds "
                    f"two different answers to the question '{question}' (rows {first} and "
                    f"{rows[i]}). An LLM has one answer per question: keep one of them."
                )
            by_question.setdefault(question, (text, rows[i]))
        for question, (text, row) in by_question.items():
            extra.append(
                {
                    "question": question,
                    "worker": str(column).strip(),
                    "response": text,
                    "is_llm": True,
                    "model": str(column).strip(),
                    "grade": "",
                    "row": row,
                    "cell": f"{letters[column]}{row}",
                }
            )
    if extra:
        records = pd.concat(
            [records, pd.DataFrame.from_records(extra, columns=LONG_COLUMNS)], ignore_index=True
        )
    out = records if len(records) else _empty_frame()
    return out, notices


def wide_responses(
    frame: pd.DataFrame,
    *,
    worker_col: str | None = None,
    question_col: str | None = None,
    llm_cols: Sequence[str] = (),
    llm_workers: Sequence[str] = (),
    grade_col: str | None = None,
    ignore_cols: Collection[str] = (),
    source: str = "",
    first_row: int = 2,
    letters: Mapping[str, str] | None = None,
    unnamed: Collection[str] = (),
    grades: dict[str, str] | None = None,
) -> tuple[pd.DataFrame, list[AqerNotice]]:
    """Read a wide sheet into the long frame (not yet cleaned).

    ``grade_col`` (a row per worker only): each worker's expert grade, put in ``grades`` (a
    dict the caller passes) as worker -> the cell's text. ``ignore_cols`` are not answers.

    With ``worker_col`` (or a column called "worker"): a row per worker, a column per question.
    With ``question_col`` (or a column called "question"): a row per question, a column per
    worker; ``llm_cols`` are the columns that hold LLM answers. ``unnamed`` lists columns
    whose header cell is empty (``core.tables`` names them "Column D").
    """
    if worker_col is None and question_col is None:
        if _find_column(frame, "worker", "", source, "", required=False) is not None:
            worker_col = "worker"
        elif _find_column(frame, "question", "", source, "", required=False) is not None:
            question_col = "question"
        else:
            raise AqerInputError(
                f"Cannot tell how the wide sheet{_where(source)} is laid out: it has neither a "
                "'worker' nor a 'question' column. Choose the column that names the workers (a "
                "row per worker) or the one that holds the questions (a row per question) "
                "(--worker-col or --question-col)."
            )
    by_worker = worker_col is not None
    if worker_col is not None:
        key_col = _find_column(frame, worker_col, "worker names", source, "--worker-col")
    else:
        assert question_col is not None  # named, or found just above
        key_col = _find_column(frame, question_col, "questions", source, "--question-col")
    if by_worker and llm_cols:
        raise AqerInputError(
            "In a sheet with a row per worker, an LLM's answers form a row, not a column. Name "
            "the LLM rows as LLMs (--llm-worker NAME), or use a sheet with a row per question "
            "and a column per worker, where LLM answers can be columns (--llm-col)."
        )
    if grade_col and not by_worker:
        raise AqerInputError(
            "A grade column gives one grade per row, but each row of this sheet is a question. "
            "Put one grade per person in a sheet with a row per person, or on a sheet of its own "
            "(a name column and a grade column)."
        )
    llm_found = {
        _find_column(frame, c, f"answers of the LLM '{c}'", source, "--llm-col") for c in llm_cols
    }
    grade_found = (_find_column(frame, grade_col, "expert grades", source, "--grade-col")
                   if grade_col else None)
    left_out = {_find_column(frame, c, "", source, "", required=False) for c in ignore_cols}
    left_out.discard(None)
    letters = _letters(frame, letters)
    rows = _rows(frame, first_row)
    # Whole columns at once (no Python per cell): each cell's text, and whether it holds any.
    keys = cell_texts(frame[key_col], strip=True).to_numpy(dtype=object)
    what = "worker" if by_worker else "question"
    if len(frame) and not (keys != "").any():
        raise AqerInputError(
            f"The {what} column '{key_col}' (column {letters[key_col]}) is empty in every row"
            f"{_where(source)}. Fill in the {what} of each row, or choose another column."
        )

    notices: list[AqerNotice] = []
    value_columns = []
    texts: dict[Any, np.ndarray] = {}
    filled: dict[Any, np.ndarray] = {}
    for column in frame.columns:
        if column == key_col or column == grade_found or column in left_out:
            continue
        column_texts = cell_texts(frame[column])
        has_text = (strip_each(column_texts) != "").to_numpy(dtype=bool)
        if _is_unnamed(column) or column in unnamed:
            if not has_text.any():
                continue  # an empty spare column
            raise AqerInputError(
                f"Column {letters[column]}{_where(source)} has no header but holds answers "
                f"(rows {_list_rows([rows[j] for j in np.flatnonzero(has_text)])}). Type the "
                f"{'question' if by_worker else 'worker name'} into its header cell "
                f"{letters[column]}{first_row - 1}, or delete the column."
            )
        value_columns.append(column)
        texts[column] = column_texts.to_numpy(dtype=object)
        filled[column] = has_text

    named_llms = {str(x).strip() for x in llm_workers}
    row_numbers = np.asarray(rows, dtype=np.int64)
    keyed = keys != ""
    holds = np.zeros(len(frame), dtype=bool)
    for column in value_columns:
        holds |= filled[column]
    keyless = row_numbers[~keyed & holds].tolist()
    if grade_found is not None and grades is not None:
        grade_texts = cell_texts(frame[grade_found], strip=True).to_numpy(dtype=object)
        for key, grade in zip(keys[keyed].tolist(), grade_texts[keyed].tolist()):
            grades.setdefault(key, grade)
    # One record per (keyed row, value column), row by row, as the sheet reads.
    kept = np.flatnonzero(keyed)
    n_columns = len(value_columns)
    headers = np.array([cell_text(c).strip() for c in value_columns], dtype=object)
    row_keys = np.repeat(keys[kept], n_columns)
    column_headers = np.tile(headers, len(kept))
    question, worker = (
        (column_headers, row_keys) if by_worker else (row_keys, column_headers)
    )
    llm_column = np.tile(np.array([c in llm_found for c in value_columns], dtype=bool), len(kept))
    is_llm = llm_column | pd.Series(worker, dtype=object).isin(named_llms).to_numpy(dtype=bool)
    record_rows = np.repeat(row_numbers[kept], n_columns)
    column_letters = np.tile(np.array([letters[c] for c in value_columns], dtype=object), len(kept))
    if n_columns and len(kept):
        responses = np.stack([texts[c][kept] for c in value_columns], axis=1).ravel()
    else:
        responses = np.zeros(0, dtype=object)
    records = pd.DataFrame(
        {
            "question": question,
            "worker": worker,
            "response": responses,
            "is_llm": is_llm,
            "model": np.where(is_llm, worker, ""),
            "grade": np.full(len(record_rows), "", dtype=object),
            "row": record_rows,
            "cell": column_letters + record_rows.astype(str).astype(object),
        },
        columns=LONG_COLUMNS,
    )
    if keyless:
        notices.append(
            AqerNotice(
                topic=f"Row without a {what}",
                message=(
                    f"{len(keyless)} row(s){_where(source)} hold answers but no {what} in column "
                    f"{letters[key_col]} and were left out (rows {_list_rows(keyless)}). Fill in "
                    f"the {what} to include them."
                ),
                row=keyless[0],
            )
        )
    out = records if len(records) else _empty_frame()
    return out, notices


# ----------------------------------------------------------------------------- checking


def clean_responses(
    frame: pd.DataFrame, duplicates: Duplicates = "error", source: str = "",
    blank_tokens: Iterable[str] = (),
) -> PreparedResponses:
    """Check a long frame: text cells, empty answers out (as notices), duplicates resolved.

    An answer that is one of ``blank_tokens`` ("n/a", "-", ...; case and spaces ignored) is
    read as blank, with one notice naming its cells.
    ``frame`` needs ``question``, ``worker`` and ``response``; ``is_llm``, ``model``, ``grade``,
    ``row`` and ``cell`` are optional. Cleaning a cleaned frame changes nothing.
    """
    missing = [c for c in ("question", "worker", "response") if c not in frame.columns]
    if missing:
        raise AqerInputError(
            f"The answers table{_where(source)} lacks the column(s) {', '.join(missing)}. It needs "
            "one row per answer with the columns question, worker and response."
        )
    if duplicates not in ("first", "last", "error"):
        raise ValueError(f"duplicates must be first, last or error, not {duplicates!r}")
    n = len(frame)
    nothing = np.full(n, "", dtype=object)
    if "is_llm" in frame.columns:
        given = frame["is_llm"]
        if pd.api.types.is_bool_dtype(given.dtype) and not given.isna().any():
            is_llm = given.to_numpy(dtype=bool)
        else:
            is_llm = np.array(
                [bool(v) if isinstance(v, bool) else _truthy(v) for v in given], dtype=bool
            )
    else:
        is_llm = np.zeros(n, dtype=bool)
    #: The spreadsheet rows as numbers when every row has one (read back as Int64 at the end).
    row_numbers: np.ndarray | None = None
    if "row" in frame.columns:
        given = frame["row"]
        if pd.api.types.is_integer_dtype(given.dtype) and not given.isna().any():
            row_numbers = given.to_numpy(dtype=np.int64)
            row = row_numbers.astype(object)
        else:
            texts = cell_texts(given)
            row = np.array([None if t == "" else int(float(t)) for t in texts], dtype=object)
    else:
        row = np.full(n, None, dtype=object)

    def text(column: str, strip: bool = True) -> np.ndarray:
        if column not in frame.columns:
            return nothing
        return cell_texts(frame[column], strip=strip).to_numpy(dtype=object)

    question, worker, response = text("question"), text("worker"), text("response")
    model = text("model")
    # A model name marks an LLM answer; an LLM answer is filed under its model's name.
    named = model != ""
    is_llm = is_llm | named
    model = np.where(is_llm & ~named, worker, model)
    worker = np.where(is_llm, model, worker)
    out = pd.DataFrame(
        {
            "question": question,
            "worker": worker,
            "response": response,
            "is_llm": is_llm,
            "model": model,
            "grade": text("grade"),
            "row": row,
            "cell": text("cell", strip=False),
        }
    )
    notices: list[AqerNotice] = []

    # Rows without a question or worker cannot be placed.
    unplaced = (out["question"] == "") | (out["worker"] == "")
    if unplaced.any():
        bad = out[unplaced & (out["response"] != "")]
        if len(bad):
            notices.append(
                AqerNotice(
                    topic="Answer without a question or worker",
                    message=(
                        f"{len(bad)} answer(s){_where(source)} have no question or no worker and "
                        f"were left out{_rows_note(bad['row'])}."
                    ),
                    row=_first(bad["row"]),
                )
            )
        out = out[~unplaced]

    # Answers that say "no answer" ("n/a", "-", ...) are blanks, not answers.
    tokens = blank_token_set(blank_tokens)
    if tokens:
        folded = fold_each(out["response"])
        said = folded.isin(tokens)
        if said.any():
            hits = out[said]
            shown = [f"{_at(item).strip(' ()') or 'row ?'} ('{item['response']}')"
                     for _, item in hits.head(40).iterrows()]
            more = f" and {len(hits) - 40} more" if len(hits) > 40 else ""
            notices.append(AqerNotice(
                topic="Read as blank",
                message=(f"{len(hits)} answer{'s' if len(hits) != 1 else ''}{_where(source)} "
                         f"say there is no answer and {'were' if len(hits) != 1 else 'was'} "
                         f"read as blank: {', '.join(shown)}{more}. Change the list of "
                         "answers read as blank if one of them is a real answer."),
                row=_first(hits["row"]),
            ))
            out.loc[said, "response"] = ""

    # Empty and whitespace-only answers are missing answers (an "I don't know" is an answer).
    empty = out["response"] == ""
    any_empty = bool(empty.any())
    if any_empty:
        notices += _each_listed(
            "Empty answer", out[empty], "empty answers",
            lambda item: (f"No answer from {_who(item)} to '{_short(item['question'])}'"
                          f"{_at(item)}: left blank."))
    blanks = out[empty] if any_empty else out.iloc[:0]
    if any_empty:
        out = out[~empty]

    # One answer per (worker, question).
    keys = ["is_llm", "worker", "question"]
    dup = _duplicated(out)
    if dup.any():
        groups = out[dup].groupby(keys, sort=False)
        if duplicates == "error":
            lines = []
            for (is_llm, worker, question), group in list(groups)[:5]:
                lines.append(
                    f"'{worker}' answered '{_short(question)}' {len(group)} times"
                    f"{_rows_note(group['row'])}"
                )
            more = f" (and {groups.ngroups - 5} more)" if groups.ngroups > 5 else ""
            raise AqerInputError(
                f"Some workers answered the same question more than once{_where(source)}: "
                + "; ".join(lines)
                + f"{more}. Delete the extra rows, or choose which answer to keep "
                "(--duplicates first or --duplicates last)."
            )
        keep = "first" if duplicates == "first" else "last"
        dropped = out[dup & out.duplicated(keys, keep=keep)]
        notices += _each_listed(
            "Duplicate answer", dropped, "duplicate answers",
            lambda item: (f"'{item['worker']}' answered '{_short(item['question'])}' more than "
                          f"once; the {keep} answer was kept and this one{_at(item)} left out."))
        out = out.drop_duplicates(keys, keep=keep)
    kept = out.index.to_numpy()
    out = out.reset_index(drop=True)
    if row_numbers is not None:
        out["row"] = pd.array(row_numbers[kept], dtype="Int64")
    elif "row" not in frame.columns:  # no rows at all: missing throughout, without a cast
        out["row"] = pd.arrays.IntegerArray(
            np.zeros(len(out), dtype=np.int64), np.ones(len(out), dtype=bool)
        )
    else:
        out["row"] = out["row"].astype("Int64")
    # A blank is a (worker, question) with no answer at all (a blank beside an answer is none).
    if len(blanks):
        answered = pd.MultiIndex.from_frame(out[keys])
        unanswered = ~pd.MultiIndex.from_frame(blanks[keys]).isin(answered)
        blanks = blanks.loc[unanswered]
    blanks = blanks.drop_duplicates(keys, keep="first")
    blanks = blanks.reset_index(drop=True)
    blanks["row"] = blanks["row"].astype("Int64")
    return PreparedResponses(
        frame=out[LONG_COLUMNS], notices=notices, source=source, blanks=blanks[LONG_COLUMNS]
    )


def _who(item: pd.Series) -> str:
    return f"LLM '{item['worker']}'" if item["is_llm"] else f"worker '{item['worker']}'"


def _each_listed(topic: str, answers: pd.DataFrame, what: str,
                 message: Callable[[pd.Series], str]) -> list[AqerNotice]:
    """A notice per answer (``message(row)``, pointing at its question, worker and row), at most
    :data:`MAX_LISTED` of them, then one saying how many more ``what`` there are."""
    out: list[AqerNotice] = []
    for k, (_, item) in enumerate(answers.iterrows()):
        if k == MAX_LISTED:
            out.append(AqerNotice(topic=topic,
                                  message=f"... and {len(answers) - MAX_LISTED} more {what}."))
            break
        out.append(AqerNotice(topic=topic, message=message(item), question=item["question"],
                              worker=item["worker"], row=item["row"]))
    return out


def _duplicated(out: pd.DataFrame) -> pd.Series:
    """True for every answer whose (is_llm, worker, question) another answer has too (as
    ``out.duplicated(keys, keep=False)``), from numbers: each column factorized once."""
    worker = pd.factorize(out["worker"].to_numpy(dtype=object))[0].astype(np.int64)
    question, asked = pd.factorize(out["question"].to_numpy(dtype=object))
    key = (worker * max(len(asked), 1) + question) * 2 + out["is_llm"].to_numpy(dtype=np.int64)
    return pd.Series(pd.Series(key).duplicated(keep=False).to_numpy(), index=out.index)


def _first(values: pd.Series) -> int | None:
    for v in values:
        if v is not None and not pd.isna(v):
            return int(v)
    return None


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _at(item: pd.Series) -> str:
    cell, row = item.get("cell", ""), item.get("row")
    if cell:
        return f" (cell {cell})"
    if row is not None and not pd.isna(row):
        return f" (row {int(row)})"
    return ""


def prepare_responses(
    frame: pd.DataFrame,
    *,
    format: Format = "long",
    question_col: str | None = None,
    worker_col: str | None = None,
    response_col: str | None = None,
    grade_col: str | None = None,
    llm_cols: Sequence[str] = (),
    llm_workers: Sequence[str] = (),
    ignore_cols: Collection[str] = (),
    blank_tokens: Iterable[str] = (),
    duplicates: Duplicates = "error",
    source: str = "",
    first_row: int = 2,
    letters: Mapping[str, str] | None = None,
    unnamed: Collection[str] = (),
) -> PreparedResponses:
    """A sheet (already read, all cells text) in either layout -> checked long answers.

    In the wide layout with a row per worker, ``grade_col`` holds one grade per person
    (``PreparedResponses.person_grades``); ``ignore_cols`` are left out. ``blank_tokens`` are
    answers read as blank (``core.aqer.model.DEFAULT_BLANK_TOKENS``).
    ``letters`` (column -> spreadsheet letter) and ``unnamed`` (columns whose header cell is
    empty) come from ``core.tables.TableRead``; they make messages point at the right cells.
    """
    if format == "long":
        long, notices = long_responses(
            frame,
            question_col=question_col or "question",
            worker_col=worker_col or "worker",
            response_col=response_col or "response",
            grade_col=grade_col,
            llm_cols=llm_cols,
            llm_workers=llm_workers,
            source=source,
            first_row=first_row,
            letters=letters,
        )
    person: dict[str, str] = {}
    if format == "wide":
        if response_col:
            raise AqerInputError(
                "A wide sheet has no answer column: every column except the worker (or "
                "question) column holds answers. Leave the answer column out, or use the long "
                "layout."
            )
        long, notices = wide_responses(
            frame,
            worker_col=worker_col,
            question_col=question_col,
            llm_cols=llm_cols,
            llm_workers=llm_workers,
            grade_col=grade_col,
            ignore_cols=ignore_cols,
            source=source,
            first_row=first_row,
            letters=letters,
            unnamed=unnamed,
            grades=person,
        )
    elif format != "long":
        raise ValueError(f"format must be 'long' or 'wide', not {format!r}")
    prepared = clean_responses(long, duplicates=duplicates, source=source,
                               blank_tokens=blank_tokens)
    prepared.notices[:0] = notices
    if person and grade_col:  # grades are only gathered from a grade column
        found = _find_column(frame, grade_col, "", source, "", required=False) or grade_col
        where = f"column {_letters(frame, letters).get(found, '?')} '{found}'"
        set_person_grades(prepared, person, where, source)
    return prepared


def set_person_grades(prepared: PreparedResponses, grades: Mapping[str, str], where: str,
                      source: str = "") -> None:
    """Keep one grade per person (text -> number); grades that are not numbers are named in
    a notice and left out. ``where`` says where the grades came from, for the screens."""
    from core.tables import cell_number

    numbers: dict[str, float] = {}
    bad = []
    for worker, text in grades.items():
        if not str(text).strip():
            continue
        value = cell_number(text)
        if value is None:
            bad.append(f"'{worker}' ('{_short(str(text), 20)}')")
        else:
            numbers[worker] = float(value)
    if bad:
        prepared.notices.append(AqerNotice(
            topic="Grade is not a number",
            message=(f"{len(bad)} expert grade{'s' if len(bad) != 1 else ''} in {where}"
                     f"{_where(source)} {'are' if len(bad) != 1 else 'is'} not a number and "
                     f"{'were' if len(bad) != 1 else 'was'} left out of the agreement: "
                     f"{_list_rows(bad)}."),
        ))
    prepared.person_grades = numbers
    prepared.grades_source = where
