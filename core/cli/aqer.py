"""``evaldesk aqer INPUT -o OUTPUT.xlsx``: AQER from the command line.

Argument checks, the calls of :class:`core.aqer.session.AqerSession` the wizard makes, and the
summary lines: the file is kept in a project (``--project``, else a temporary one), its column
roles are guessed by ``core.aqer.inputs`` around what the options name, checked by the same
checks, embedded through the same cache and written to the same workbook.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import pandas as pd

from core import cli
from core.aqer.comparison import Comparison, WorkersCurve
from core.aqer.inputs import SYNONYMS, ColumnOptions, roles_from_options
from core.aqer.llm_answers import STYLE_WORDS, ai_words
from core.aqer.model import DEFAULT_BLANK_TOKENS as BLANK_TOKENS
from core.aqer.model import AqerChoices, AqerCondition, AqerResult, AqerSettings, ColumnRoles
from core.aqer.responses import AqerInputError, closest_column
from core.aqer.session import AqerSession, EncoderFactory, OpenedAnswers, StoredResult
from core.cli._common import (
    add_open_anyway_option,
    cli_progress,
    cli_project,
    load_settings,
    output_path,
)
from core.embeddings import EmbeddingError
from core.runs import Cancelled, CancelToken, Progress
from core.tables import TableError, TableRead

__all__ = ["add_aqer_parser", "add_parser", "run_aqer_command"]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def add_aqer_parser(subparsers: argparse._SubParsersAction) -> None:
    """``evaldesk aqer``: its options in the order ``--help`` lists them."""
    parser = subparsers.add_parser(
        "aqer",
        help="score crowd workers and LLM answers without an answer key (AQER)",
        description=(
            "Score workers who answered the same questions, and LLM answers to those questions, "
            "against the workers' consensus (AQER). Writes one Excel workbook."
        ),
    )
    for add in (_add_file_options, _add_column_options, _add_grade_options, _add_ai_options,
                _add_project_options, _add_comparison_options):
        add(parser)
    parser.set_defaults(func=run_aqer_command)


def _add_file_options(parser: argparse.ArgumentParser) -> None:
    """The answers file, the workbook written, the sheet, its header row and its layout."""
    parser.add_argument("input", metavar="INPUT", help="answers: .xlsx, .xls or .csv")
    parser.add_argument("-o", "--output", required=True, metavar="OUTPUT.xlsx")
    parser.add_argument("--sheet", help="sheet name (default: the first sheet)")
    parser.add_argument(
        "--header-row", type=_positive_int, metavar="N",
        help="the row that holds the column names (default: found: the first row that reads "
        "like a header above rows of data, so a title and blank rows above the table are "
        "skipped, and said)",
    )
    parser.add_argument(
        "--format",
        choices=("long", "wide"),
        default=None,
        help="long: a row per answer; wide: a row per worker (or per question) (default: "
        "guessed from the sheet, and said)",
    )
    parser.add_argument(
        "--question-col", help="column with the questions (default: guessed from the headers, "
        "e.g. 'question', 'Question ID', 'prompt')"
    )


def _add_column_options(parser: argparse.ArgumentParser) -> None:
    """Which column holds what (each guessed when not given)."""
    parser.add_argument(
        "--worker-col", help="column with the worker names (default: guessed, e.g. 'worker', "
        "'student', 'participant')"
    )
    parser.add_argument(
        "--response-col", help="column with the answers (default: guessed, e.g. 'response', "
        "'answer')"
    )
    parser.add_argument(
        "--grade-col",
        help="column with expert grades: of each answer (long layout), or one per person "
        "(wide layout with a row per person, e.g. 'Average grade') (default: guessed, e.g. "
        "'grade', 'score', or a column of numbers named like a grade; --grade-col \"\" for none)",
    )
    parser.add_argument(
        "--grades-sheet",
        metavar="SHEET",
        help="another sheet of the workbook with one grade per person (a name column and a "
        "grade column), joined by name ignoring case and spaces (default: a sheet called "
        "'Grades', 'Marks' or 'Scores' when the answers have no grade column; --grades-sheet "
        "\"\" for none)",
    )
    parser.add_argument(
        "--grades-file",
        metavar="FILE",
        help="a file of its own with one grade per person (.xlsx, .xls or .csv: a name column "
        "and a grade column), joined by name ignoring case and spaces; --grades-sheet then "
        "names its sheet (default: its first sheet)",
    )


def _add_grade_options(parser: argparse.ArgumentParser) -> None:
    """A file of grades, the columns left out or kept, and what reads as blank."""
    parser.add_argument(
        "--ignore-col",
        action="append",
        default=[],
        metavar="COLUMN",
        help="wide layout: a column that holds no answers, left out (repeatable). Columns that "
        "are mostly numbers are left out (or used as grades) without asking",
    )
    parser.add_argument(
        "--keep-col",
        action="append",
        default=[],
        metavar="COLUMN",
        help="wide layout: score this column as answers although it looks like notes (a "
        "'Comments' column, mostly empty, dates or ticks) or numbers, which are otherwise left "
        "out (repeatable)",
    )
    parser.add_argument(
        "--blank-token",
        action="append",
        default=None,
        metavar="TEXT",
        help="an answer that means 'no answer', read as blank (repeatable; replaces the "
        "default list: " + ", ".join(f"'{t}'" for t in BLANK_TOKENS) + "; --blank-token \"\" "
        "for none). The cells read as blank are listed in the Warnings sheet",
    )
    parser.add_argument(
        "--llm-col",
        action="append",
        default=[],
        metavar="COLUMN",
        help="a column holding an LLM's answers (repeatable)",
    )


def _add_ai_options(parser: argparse.ArgumentParser) -> None:
    """The AI answers, the baselines, the embedding model, repeated and blank answers."""
    parser.add_argument(
        "--llm-worker",
        action="append",
        default=[],
        metavar="NAME",
        help="treat this worker's answers as an LLM's (repeatable)",
    )
    parser.add_argument(
        "--llm-as-workers",
        action="store_true",
        help="score LLMs jointly with the humans, as extra workers (their answers then enter "
        "the consensus)",
    )
    parser.add_argument(
        "--no-baselines", action="store_true", help="skip the RASA, F1 and BLEU-1 baselines"
    )
    parser.add_argument(
        "--embedding-model",
        metavar="PATH",
        help="a local sentence-transformers folder (default: your setting, else the built-in "
        "all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--device", choices=("auto", "cpu", "cuda", "mps"), help="where to embed (default auto)"
    )
    parser.add_argument(
        "--duplicates",
        choices=("first", "last", "error"),
        default="error",
        help="when a worker answered a question twice: keep the first, the last, or stop (default)",
    )
    parser.add_argument(
        "--blank-answers",
        choices=("worst", "missing"),
        default=None,
        help="how a question a worker left blank counts: worst (the weakest possible answer, "
        "as in a class test where everyone got every question) or missing (not at all, as in "
        "crowdsourcing where each worker got a subset). Default: decided from the data (worst "
        "when at least half of the workers answered at least half of the questions)",
    )


def _add_project_options(parser: argparse.ArgumentParser) -> None:
    """People who answered nothing, and the project file that keeps the work."""
    parser.add_argument(
        "--keep-absent",
        action="store_true",
        help="score a person who left every question blank (absent?) as the weakest, when "
        "blanks count as the weakest answer (default: they are left out of the 0-1 scale and "
        "listed, so they do not become its 0)",
    )
    parser.add_argument(
        "--project",
        metavar="FILE.evaldesk",
        help="keep the answers, the embeddings and the result in this project file (created if "
        "missing); a second run embeds only answers it has not seen",
    )


def _add_comparison_options(parser: argparse.ArgumentParser) -> None:
    """AQER's rounds, the conditions compared and "how many workers do I need?"."""
    add_open_anyway_option(parser)
    parser.add_argument("--max-iterations", type=_positive_int, default=100, metavar="N")
    parser.add_argument("--tolerance", type=_positive_float, default=1e-6, metavar="T")
    parser.add_argument(
        "--compare-model",
        action="append",
        default=[],
        metavar="PATH",
        help="also score the answers with this sentence-transformers folder ('built-in' = "
        "all-MiniLM-L6-v2; end it with @torch or @onnx to run it through PyTorch or ONNX "
        "Runtime, e.g. built-in@torch) and compare it with AQER on the Comparison sheet "
        "(repeatable; kept per model in --project, so an unchanged one is not scored again). The "
        "Comparison sheet (AQER, simplified AQER, RASA, F1, BLEU-1 against the expert grades, "
        "with a paired test against AQER) is always written when the answers have grades",
    )
    parser.add_argument(
        "--compare-blank-answers",
        choices=("worst", "missing"),
        default=None,
        help="also score the answers with this blank-answer rule and compare it with AQER",
    )
    parser.add_argument(
        "--workers-curve",
        action="store_true",
        help="'how many workers do I need?': score random panels of 3, 5, 10, 15, ... workers "
        "(25 repetitions, seeded) and write the Workers needed sheet (AQER runs once per panel)",
    )
    parser.add_argument("--curve-repetitions", type=_positive_int, default=25, metavar="N",
                        help="random panels per number of workers (default 25)")

_OPTIONS = {"question_col": "--question-col", "worker_col": "--worker-col",
            "response_col": "--response-col"}


def run_aqer_command(args: argparse.Namespace,
                     encoder_factory: EncoderFactory | None = None) -> int:
    """Run AQER through the session, as the wizard does (``encoder_factory(model_path,
    device)`` makes the encoder; default: ``core.embeddings.Encoder``)."""
    output = Path(args.output)
    if output.suffix and output.suffix.lower() != ".xlsx" and not output.is_dir():
        print(f"evaldesk aqer: error: the output must be an .xlsx file, not '{output.name}'",
              file=sys.stderr)
        return 2
    source = Path(args.input)
    if not source.exists():
        raise cli.UserError(
            f"The input file {args.input} does not exist. Check the name and folder.")
    # Checked before any work: the workbook is written only after the answers are scored.
    output = output_path(args, args.input, getattr(args, "grades_file", None))
    # the user's embedding model and device, unless both are given
    given = args.embedding_model is not None and args.device is not None
    settings = None if given else load_settings()
    progress, cancel = cli_progress(), CancelToken()
    try:
        with cli_project(args.project, "aqer", open_anyway=args.open_anyway) as project:
            session = AqerSession.open(project, settings=settings, encoders=encoder_factory)
            if session.problem:  # the wizard's choices in --project: kept aside, said
                print(f"evaldesk: note: {session.problem}", file=sys.stderr)
            opened = _open_answers(session, args, source, progress, cancel)
            notes = _choose(session, args, opened)
            stored, table, curve = asyncio.run(_score(session, args, output, progress, cancel))
    except (AqerInputError, EmbeddingError, TableError, FileNotFoundError, Cancelled) as exc:
        raise cli.UserError(str(exc)) from exc
    except PermissionError as exc:
        raise cli.UserError(
            f"Cannot write {output}: permission denied. Close the file if it is open in Excel, "
            "or choose another name."
        ) from exc
    lines = [f"Wrote {output}", _scored_line(stored.result),
             *_choice_lines(args, session.choices, opened, notes),
             *_result_lines(args, stored.result, table, curve)]
    print("\n".join(lines), file=sys.stderr)
    print(str(output))
    return 0


def _open_answers(session: AqerSession, args: argparse.Namespace, source: Path,
                  progress: Progress, cancel: CancelToken) -> OpenedAnswers:
    """The answers file kept in the project (the command line's choices start afresh) and
    read: the sheet asked for, the notes on hidden sheets said."""
    settings = session.settings
    model_path = args.embedding_model
    device = args.device
    if settings is not None:
        model_path = settings.embedding.model_path if model_path is None else model_path
        device = settings.embedding.device if device is None else device
    session.save_choices(AqerChoices())
    choices = session.store_input("answers", source.resolve())
    session.save_choices(choices.model_copy(update={
        "sheet": args.sheet, "header_row": args.header_row,
        "embedding_model": model_path or "", "device": device or "auto"}))
    opened = session.open_answers(progress=progress, cancel=cancel)
    if args.sheet and opened.read.sheet != args.sheet and not opened.read.is_text_file:
        names = ", ".join(f"'{s}'" for s in opened.sheets)
        raise cli.UserError(
            f"There is no sheet '{args.sheet}' in {source.name}; its sheets are: {names}. "
            "Check --sheet.")
    for issue in opened.read.issues:  # hidden sheets passed over: the sheet read
        if issue.severity == "warning" and "hidden in Excel" in issue.message:
            print(f"evaldesk: note: {issue.message}", file=sys.stderr)
    if opened.read.errors:  # nothing to choose columns from (a wrong --header-row)
        raise cli.UserError(
            f"{source.name} cannot be read as it is:\n"
            + "\n".join(f"- {issue.message}" for issue in opened.read.errors))
    return opened


def _options(args: argparse.Namespace) -> ColumnOptions:
    """The columns the options name (``core.aqer.inputs.roles_from_options`` guesses the
    rest around them)."""
    return ColumnOptions(
        format=args.format, question_col=args.question_col, worker_col=args.worker_col,
        response_col=args.response_col, grade_col=args.grade_col,
        grades_sheet=args.grades_sheet, grades_file=bool(args.grades_file),
        ignore_cols=list(args.ignore_col), keep_cols=list(args.keep_col),
        llm_cols=list(args.llm_col), llm_workers=list(args.llm_worker))


def _choose(session: AqerSession, args: argparse.Namespace, opened: OpenedAnswers) -> list[str]:
    """The choices of the options (the columns guessed around them), saved and checked on
    the whole sheet; returns what was guessed, in sentences."""
    guessed = roles_from_options(opened.read, opened.sheets, _options(args))
    tokens = BLANK_TOKENS if args.blank_token is None else args.blank_token
    conditions = [_model_condition(m) for m in args.compare_model]
    if args.compare_blank_answers:
        conditions.append(AqerCondition(blank_answers=args.compare_blank_answers))
    session.save_choices(opened.choices.model_copy(update={
        "columns": guessed.roles,
        "blank_tokens": [t for t in tokens if t.strip()],
        "duplicates": args.duplicates,
        "settings": AqerSettings(
            max_iterations=args.max_iterations, tolerance=args.tolerance,
            llm_as_workers=args.llm_as_workers, baselines=not args.no_baselines,
            blank_answers=args.blank_answers or "auto", keep_absent=args.keep_absent),
        "conditions": conditions,
    }))
    if args.grades_file:
        grades = Path(args.grades_file)
        if not grades.is_file():
            raise cli.UserError(f"The grades file {args.grades_file} does not exist. Check the "
                                "name and folder (--grades-file).")
        choices = session.store_input("grades", grades.resolve())
        session.save_choices(choices.with_columns(grades_sheet=args.grades_sheet or None))
    missing = _missing_roles(session.choices.columns, opened.read)
    if missing:
        raise cli.UserError(missing)
    check = session.check_answers(opened.read)
    if not check.ok:
        raise cli.UserError(
            f"The answers in {Path(args.input).name} cannot be used as they are:\n"
            + "\n".join(f"- {issue.message}" for issue in check.errors))
    if check.needs_duplicate_choice:
        raise cli.UserError(check.duplicate_message or (
            f"{check.duplicates} answer(s) repeat a worker's answer to the same question. "
            "Choose which counts (--duplicates first or --duplicates last)."))
    return guessed.notes


async def _score(session: AqerSession, args: argparse.Namespace, output: Path,
                 progress: Progress, cancel: CancelToken
                 ) -> tuple[StoredResult, Comparison, WorkersCurve | None]:
    """AQER, the conditions, the workers curve when asked for, and the workbook."""
    stored = await session.run(progress=progress, cancel=cancel)
    await session.run_conditions(session.condition_names(), progress=progress, cancel=cancel)
    curve = None
    if args.workers_curve:
        curve = await session.run_workers_curve(repetitions=args.curve_repetitions,
                                                progress=progress, cancel=cancel)
    table = session.comparison(stored, progress)
    session.export(output, who="", stored=stored, curve=curve, table=table,
                   progress=progress, cancel=cancel)
    return stored, table, curve


def _missing_roles(roles: ColumnRoles, read: TableRead) -> str:
    """A message for roles no column was given or found for ("" when each has one)."""
    if roles.format == "long":
        needed = [("question_col", "questions", "question"), ("worker_col", "worker names",
                  "worker"), ("response_col", "answers", "response")]
    elif roles.wide_rows == "question":
        needed = [("question_col", "questions", "question")]
    else:
        needed = [("worker_col", "worker names", "worker")]

    def close(role: str) -> str:
        for name in [role, *SYNONYMS[role]]:
            match = closest_column(name, read.frame.columns)
            if match:
                return f"; is it '{match}'?"
        return ""

    parts = [
        f"the {what} (no column is called '{role}' or a similar name such as "
        + ", ".join(f"'{s}'" for s in SYNONYMS[role][1:4])
        + f"{close(role)} Name it with {_OPTIONS[key]})"
        for key, what, role in needed if not getattr(roles, key)
    ]
    if not parts:
        return ""
    columns = ", ".join(f"'{c}'" for c in read.frame.columns) or "(none)"
    return (f"Which column holds {' and '.join(parts)}? The columns of {read.describe()} are: "
            f"{columns}.")


def _columns_used(roles: ColumnRoles) -> str:
    """The columns the run read, e.g. "questions 'Question ID', workers 'Worker', ..."."""
    columns = [("questions", roles.question_col), ("workers", roles.worker_col),
               ("answers", roles.response_col), ("expert grades", roles.grade_col)]
    if roles.format == "wide":
        columns = columns[:1] if roles.wide_rows == "question" else [columns[1], columns[3]]
    used = [f"{role} '{column}'" for role, column in columns if column]
    if roles.grades_file:
        used.append(f"expert grades from the file '{roles.grades_file.file_name}' (joined by "
                    "name)")
    elif roles.grades_sheet:
        used.append(f"expert grades from the sheet '{roles.grades_sheet}' (joined by name)")
    used += [f"AI answers '{column}'" for column in roles.llm_cols]
    if roles.format == "wide" and roles.ignore_cols:
        used.append("left out " + ", ".join(f"'{c}'" for c in roles.ignore_cols))
    return ", ".join(used) + ("" if roles.grade_col or roles.grades_sheet or roles.grades_file
                              else " (no expert grades)")


def _model_condition(text: str) -> AqerCondition:
    """``--compare-model PATH[@torch|@onnx]`` -> the condition ('built-in' = the bundled
    model)."""
    path, backend = text, None
    head, at, tail = text.rpartition("@")
    if at and tail.strip().lower() in ("torch", "onnx"):
        path, backend = head, tail.strip().lower()
    path = path.strip()
    return AqerCondition(embedding_model="" if path.lower() in ("built-in", "") else path,
                         embedding_backend=backend)  # type: ignore[arg-type]


def _choice_lines(args: argparse.Namespace, choices: AqerChoices, opened: OpenedAnswers,
                  notes: list[str]) -> list[str]:
    """The summary lines of what was read: the layout, the header row, what was guessed and
    the columns."""
    roles = choices.columns
    row = "person" if roles.wide_rows == "worker" else "question"
    lines = ["  layout: " + ("long (a row per answer)" if roles.format == "long"
                             else f"wide (a row per {row})")
             + ("" if args.format else " (guessed; --format to choose)")]
    if opened.read.header_note:
        lines.append(f"  header: {opened.read.header_note}"
                     + ("" if args.header_row else " (--header-row N)"))
    lines += [f"  {note}" for note in notes]
    lines.append("  columns: " + _columns_used(roles))
    return lines


def _scored_line(result: AqerResult) -> str:
    """How many workers were scored on how many questions, in how many rounds."""
    scored = result.workers["score"].notna()
    n_questions = int(result.questions["mean_similarity"].notna().sum())
    return (f"  {int(scored.sum())} workers scored on {n_questions} "
            f"questions in {result.iterations} round(s)"
            + ("" if result.converged else " (not converged)" if result.discriminates
               else " (tie)"))


def _result_lines(args: argparse.Namespace, result: AqerResult, table: Comparison,
                  curve: WorkersCurve | None) -> list[str]:
    """The summary lines of the result: the best worker, how blank answers counted, the AI
    answers, the Comparison and Workers needed sheets, the warnings."""
    scored = result.workers["score"].notna()
    best = result.workers[scored].iloc[0] if scored.any() else None
    lines = []
    if best is not None:
        lines.append(f"  best worker: {best['worker']} (score {best['score']:.2f})")
    lines.append(
        "  blank answers: "
        + ("count as the weakest answer" if result.blank_rule == "worst" else "do not count")
        + (" (your choice)" if args.blank_answers else " (decided from the data)"))
    absent = [n.worker for n in result.warnings if n.topic == "Absent?"]
    if absent:
        lines.append("  absent? not scored (no answers): " + ", ".join(f"'{a}'" for a in absent)
                     + (" (--keep-absent to score them as the weakest)"
                        if result.blank_rule == "worst" else ""))
    split = [q for q, c in zip(result.questions["question"],
                               result.questions.get("camps", pd.Series(dtype=object)))
             if isinstance(c, str) and c]
    if split:
        lines.append(f"  answers split into camps on {len(split)} question(s), check by hand: "
                     + "; ".join(f"'{q}'" for q in split))
    lines += [f"  AI {row['model']}: {ai_words(row)}" for _, row in result.llm_summary.iterrows()]
    if len(result.llm_summary):
        lines.append(f"  {STYLE_WORDS}")
    return lines + _sheet_lines(result, table, curve)


def _sheet_lines(result: AqerResult, table: Comparison, curve: WorkersCurve | None) -> list[str]:
    """The summary lines of the Comparison and Workers needed sheets, and the warnings."""
    lines = []
    if len(table.frame):
        lines.append("  Comparison sheet (per worker, against the expert grades):")
        lines += [f"    {line}" for line in table.summaries]
    elif table.reason:
        lines.append("  no Comparison sheet: the answers have no expert grades")
    if curve is not None:
        lines.append(f"  Workers needed sheet: {curve.statistic} with {curve.against}, "
                     + ", ".join(f"{int(r.workers)} workers {r.mean:.2f}"
                                 for r in curve.frame.itertuples() if r.mean == r.mean))
    if result.warnings:
        lines.append(f"  {len(result.warnings)} warning(s): see the Warnings sheet")
    return lines


add_parser = add_aqer_parser
