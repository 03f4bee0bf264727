"""``evaldesk aqer INPUT -o OUTPUT.xlsx``: AQER from the command line.

A thin adapter over ``core.aqer.session`` and ``core.aqer.inputs``, the code the wizard runs: the
file is copied into a project (``--project``, else a temporary one), its columns are guessed
from the same synonyms, checked by the same checks, embedded through the same cache and written
to the same workbook.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from core import cli
from core.aqer.model import DEFAULT_BLANK_TOKENS as BLANK_TOKENS
from core.cli._common import (
    add_open_anyway_option,
    cli_progress,
    cli_project,
    load_settings,
    output_path,
)

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
    parser = subparsers.add_parser(
        "aqer",
        help="score crowd workers and LLM answers without an answer key (AQER)",
        description=(
            "Score workers who answered the same questions, and LLM answers to those questions, "
            "against the workers' consensus (AQER). Writes one Excel workbook."
        ),
    )
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
    parser.set_defaults(func=run_aqer_command)


_OPTIONS = {"question_col": "--question-col", "worker_col": "--worker-col",
            "response_col": "--response-col"}


def _choices(args: argparse.Namespace, read, sheets=()) -> tuple[dict, list[str]]:
    """The setup fields the command line chose, and what was guessed (plain sentences): the
    layout when ``--format`` is not given, and the roles it left out, from the headers and the
    cells as the wizard guesses them (``core.aqer.inputs.guess_setup``)."""
    from core.aqer.inputs import guess_setup
    from core.aqer.model import AqerSettings, AqerSetup

    given = {key: getattr(args, key) for key in (*_OPTIONS, "grade_col")
             if getattr(args, key)}
    fmt = args.format or ("long" if args.response_col else None)
    wide_rows = "worker" if args.worker_col and not args.question_col else "question"
    guessed = guess_setup(AqerSetup(format=fmt or "long", wide_rows=wide_rows, **given), read,
                          sheets, layout=fmt is None, fuzzy=False,
                          chosen={**given, "keep_cols": list(args.keep_col)})
    fmt = guessed.setup.format
    chosen = guessed.setup.model_dump(include={*_OPTIONS, "grade_col", "wide_rows",
                                               "ignore_cols", "grades_sheet"})
    chosen.update(given)
    if fmt == "wide":
        if args.question_col or args.worker_col:
            chosen["wide_rows"] = wide_rows
        elif args.format:  # as before: a column called "worker" wins over one called "question"
            worker = chosen.get("worker_col")
            chosen["wide_rows"] = "worker" if worker else "question"
        chosen["response_col"] = None
        if chosen["wide_rows"] == "question" and not args.grade_col:
            chosen["grade_col"] = None
    if args.grade_col == "":
        chosen["grade_col"] = None  # --grade-col "": the sheet's grades are not used
    ignored = [*chosen["ignore_cols"], *[c for c in args.ignore_col
                                         if c not in chosen["ignore_cols"]]]
    chosen["ignore_cols"] = [c for c in ignored if c != chosen.get("grade_col") or
                             c in args.ignore_col]
    if chosen.get("grade_col") in args.ignore_col:
        chosen["grade_col"] = None
    if args.grades_file:  # the grades come from that file (unless a grade column is named)
        chosen["grades_sheet"] = None
        chosen["grade_col"] = args.grade_col or None
    if fmt == "wide":  # a column of numbers not used as the grades is never an answer
        chosen["ignore_cols"] += [c for c in guessed.numeric if c != chosen.get("grade_col")
                                  and c not in chosen["ignore_cols"]]
    chosen["ignore_cols"] = [c for c in chosen["ignore_cols"] if c not in args.keep_col]
    if args.grades_sheet is not None:
        chosen["grades_sheet"] = args.grades_sheet or None
    elif chosen.get("grade_col"):
        chosen["grades_sheet"] = None
    if args.grades_file and args.grades_sheet is not None:
        chosen["grades_sheet"] = None  # a sheet of the grades file, set with it below
    tokens = BLANK_TOKENS if args.blank_token is None else args.blank_token
    return {
        **chosen,
        "blank_tokens": [t for t in tokens if t.strip()],
        "format": fmt,
        "llm_cols": list(args.llm_col),
        "llm_workers": list(args.llm_worker),
        "duplicates": args.duplicates,
        "settings": AqerSettings(
            max_iterations=args.max_iterations,
            tolerance=args.tolerance,
            llm_as_workers=args.llm_as_workers,
            baselines=not args.no_baselines,
            blank_answers=args.blank_answers or "auto",
            keep_absent=args.keep_absent,
        ),
    }, guessed.notes


def _missing_roles(setup, read) -> str:
    """A message for roles no column was given or found for ("" when each has one)."""
    from core.aqer.inputs import SYNONYMS
    from core.aqer.responses import closest_column

    if setup.format == "long":
        needed = [("question_col", "questions", "question"), ("worker_col", "worker names",
                  "worker"), ("response_col", "answers", "response")]
    elif setup.wide_rows == "question":
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
        for key, what, role in needed if not getattr(setup, key)
    ]
    if not parts:
        return ""
    columns = ", ".join(f"'{c}'" for c in read.frame.columns) or "(none)"
    return (f"Which column holds {' and '.join(parts)}? The columns of {read.describe()} are: "
            f"{columns}.")


def _columns_used(setup) -> str:
    """The columns the run read, e.g. "questions 'Question ID', workers 'Worker', ..."."""
    roles = [("questions", setup.question_col), ("workers", setup.worker_col),
             ("answers", setup.response_col), ("expert grades", setup.grade_col)]
    if setup.format == "wide":
        roles = roles[:1] if setup.wide_rows == "question" else [roles[1], roles[3]]
    used = [f"{role} '{column}'" for role, column in roles if column]
    if setup.grades_file:
        used.append(f"expert grades from the file '{setup.grades_file.file_name}' (joined by "
                    "name)")
    elif setup.grades_sheet:
        used.append(f"expert grades from the sheet '{setup.grades_sheet}' (joined by name)")
    used += [f"AI answers '{column}'" for column in setup.llm_cols]
    if setup.format == "wide" and setup.ignore_cols:
        used.append("left out " + ", ".join(f"'{c}'" for c in setup.ignore_cols))
    return ", ".join(used) + ("" if setup.grade_col or setup.grades_sheet or setup.grades_file
                              else " (no expert grades)")


def _model_condition(text: str) -> Any:
    """``--compare-model PATH[@torch|@onnx]`` -> the condition ('built-in' = the bundled
    model)."""
    from core.aqer.model import AqerCondition

    path, backend = text, None
    head, at, tail = text.rpartition("@")
    if at and tail.strip().lower() in ("torch", "onnx"):
        path, backend = head, tail.strip().lower()
    path = path.strip()
    return AqerCondition(embedding_model="" if path.lower() in ("built-in", "") else path,
                         embedding_backend=backend)


def run_aqer_command(args: argparse.Namespace, encoder_factory=None) -> int:
    """Run AQER through the session, as the wizard does (``encoder_factory(model_path, device)``
    makes the encoder; default: ``core.embeddings.Encoder``)."""
    from pathlib import Path

    import pandas as pd

    from core.aqer.comparison import comparison_table
    from core.aqer.inputs import check_answers
    from core.aqer.llm_answers import STYLE_WORDS, ai_words
    from core.aqer.model import AqerCondition, AqerSetup
    from core.aqer.responses import AqerInputError
    from core.aqer.session import (
        export_result,
        open_answers,
        run_conditions,
        run_setup,
        run_workers_curve,
        store_answers_file,
        store_grades_file,
    )
    from core.embeddings import EmbeddingError
    from core.runs import Cancelled, CancelToken
    from core.tables import TableError

    output = Path(args.output)
    if output.suffix and output.suffix.lower() != ".xlsx" and not output.is_dir():
        print(
            f"evaldesk aqer: error: the output must be an .xlsx file, not '{output.name}'",
            file=sys.stderr,
        )
        return 2
    source = Path(args.input)
    if not source.exists():
        raise cli.UserError(
            f"The input file {args.input} does not exist. Check the name and folder."
        )
    # Checked before any work: the workbook is written only after the answers are scored.
    output = output_path(args, args.input, getattr(args, "grades_file", None))
    model_path, device = args.embedding_model, args.device
    if model_path is None or device is None:
        stored_choice = load_settings().embedding
        model_path = stored_choice.model_path if model_path is None else model_path
        device = stored_choice.device if device is None else device
    progress, cancel = cli_progress(), CancelToken()
    try:
        with cli_project(args.project, "aqer", open_anyway=args.open_anyway) as project:
            setup = store_answers_file(project, AqerSetup(), source.resolve())
            setup = setup.model_copy(update={"sheet": args.sheet,
                                             "header_row": args.header_row,
                                             "embedding_model": model_path or "",
                                             "device": device or "auto"})
            opened = open_answers(project, setup, progress=progress, cancel=cancel)
            if (args.sheet and opened.read.sheet != args.sheet
                    and not opened.read.is_text_file):
                names = ", ".join(f"'{s}'" for s in opened.sheets)
                raise cli.UserError(
                    f"There is no sheet '{args.sheet}' in {source.name}; its sheets are: "
                    f"{names}. Check --sheet."
                )
            for issue in opened.read.issues:  # hidden sheets passed over: the sheet read
                if issue.severity == "warning" and "hidden in Excel" in issue.message:
                    print(f"evaldesk: note: {issue.message}", file=sys.stderr)
            if opened.read.errors:  # nothing to choose columns from (a wrong --header-row)
                raise cli.UserError(
                    f"{source.name} cannot be read as it is:\n"
                    + "\n".join(f"- {issue.message}" for issue in opened.read.errors))
            chosen, guessed = _choices(args, opened.read, opened.sheets)
            setup = opened.setup.model_copy(update=chosen)
            if args.grades_file:
                grades = Path(args.grades_file)
                if not grades.is_file():
                    raise cli.UserError(f"The grades file {args.grades_file} does not exist. "
                                        "Check the name and folder (--grades-file).")
                setup = store_grades_file(project, setup, grades.resolve(),
                                          args.grades_sheet or None)
            missing = _missing_roles(setup, opened.read)
            if missing:
                raise cli.UserError(missing)
            check = check_answers(opened.read, setup)
            if not check.ok:
                raise cli.UserError(
                    f"The answers in {source.name} cannot be used as they are:\n"
                    + "\n".join(f"- {issue.message}" for issue in check.errors)
                )
            if check.needs_duplicate_choice:
                raise cli.UserError(check.duplicate_message or (
                    f"{check.duplicates} answer(s) repeat a worker's answer to the same "
                    "question. Choose which counts (--duplicates first or --duplicates last)."
                ))
            conditions = [_model_condition(m) for m in args.compare_model]
            if args.compare_blank_answers:
                conditions.append(AqerCondition(blank_answers=args.compare_blank_answers))
            setup = setup.model_copy(update={"conditions": conditions})
            stored = run_setup(project, setup, encoder_factory, progress, cancel)
            others = run_conditions(project, setup, encoder_factory, progress, cancel)
            curve = None
            if args.workers_curve:
                curve = run_workers_curve(project, setup, encoder_factory, progress, cancel,
                                          repetitions=args.curve_repetitions)
            progress.start("Comparing the conditions")
            table = comparison_table(stored.result, {k: v.result for k, v in others.items()})
            progress.start("Writing the workbook", detail=str(output))
            export_result(stored, output, others=others, curve=curve, table=table)
    except (AqerInputError, EmbeddingError, TableError, FileNotFoundError) as exc:
        raise cli.UserError(str(exc)) from exc
    except Cancelled as exc:
        raise cli.UserError(str(exc)) from exc
    except PermissionError as exc:
        raise cli.UserError(
            f"Cannot write {output}: permission denied. Close the file if it is open in Excel, "
            "or choose another name."
        ) from exc
    result = stored.result
    scored = result.workers["score"].notna()
    best = result.workers[scored].iloc[0] if scored.any() else None
    n_questions = int(result.questions["mean_similarity"].notna().sum())
    lines = [
        f"Wrote {output}",
        f"  {int(scored.sum())} workers scored on {n_questions} "
        f"questions in {result.iterations} round(s)"
        + ("" if result.converged else " (not converged)" if result.discriminates else " (tie)"),
    ]
    row = "person" if setup.wide_rows == "worker" else "question"
    lines.append("  layout: " + ("long (a row per answer)" if setup.format == "long"
                                 else f"wide (a row per {row})")
                 + ("" if args.format else " (guessed; --format to choose)"))
    if opened.read.header_note:
        lines.append(f"  header: {opened.read.header_note}"
                     + ("" if args.header_row else " (--header-row N)"))
    lines += [f"  {note}" for note in guessed]
    lines.append("  columns: " + _columns_used(setup))
    if best is not None:
        lines.append(f"  best worker: {best['worker']} (score {best['score']:.2f})")
    lines.append(
        "  blank answers: "
        + ("count as the weakest answer" if result.blank_rule == "worst" else "do not count")
        + (" (your choice)" if args.blank_answers else " (decided from the data)")
    )
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
    for _, row in result.llm_summary.iterrows():
        lines.append(f"  AI {row['model']}: {ai_words(row)}")
    if len(result.llm_summary):
        lines.append(f"  {STYLE_WORDS}")
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
    print("\n".join(lines), file=sys.stderr)
    print(str(output))
    return 0


add_parser = add_aqer_parser
