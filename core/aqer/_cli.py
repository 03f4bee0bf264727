"""``evaldesk aqer INPUT -o OUTPUT.xlsx``: AQER from the command line (same code as the app)."""

from __future__ import annotations

import argparse
import sys

from core import cli

__all__ = ["add_aqer_parser"]


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
        "--format",
        choices=("long", "wide"),
        default="long",
        help="long: a row per answer; wide: a row per worker (or per question) (default long)",
    )
    parser.add_argument("--question-col", help="column with the questions (default 'question')")
    parser.add_argument("--worker-col", help="column with the worker names (default 'worker')")
    parser.add_argument("--response-col", help="column with the answers (default 'response')")
    parser.add_argument("--grade-col", help="column with expert grades of the answers (optional)")
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
    parser.add_argument("--max-iterations", type=_positive_int, default=100, metavar="N")
    parser.add_argument("--tolerance", type=_positive_float, default=1e-6, metavar="T")
    parser.set_defaults(func=run_aqer_command)


def run_aqer_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pandas as pd

    from core.aqer.model import AqerSettings
    from core.aqer.pipeline import run_aqer_file
    from core.aqer.responses import AqerInputError
    from core.embeddings import EmbeddingError
    from core.runs import Cancelled, CancelToken, Progress
    from core.tables import TableError

    output = Path(args.output)
    if output.suffix.lower() != ".xlsx":
        print(
            f"evaldesk aqer: error: the output must be an .xlsx file, not '{output.name}'",
            file=sys.stderr,
        )
        return 2
    if not Path(args.input).exists():
        raise cli.UserError(
            f"The input file {args.input} does not exist. Check the name and folder."
        )
    if not output.parent.exists():
        raise cli.UserError(
            f"The folder {output.parent} does not exist. Create it or choose another."
        )
    model_path, device = args.embedding_model, args.device
    if model_path is None or device is None:
        from core.settings import SettingsStore

        stored = SettingsStore().load().embedding
        model_path = stored.model_path if model_path is None else model_path
        device = stored.device if device is None else device
    settings = AqerSettings(
        max_iterations=args.max_iterations,
        tolerance=args.tolerance,
        llm_as_workers=args.llm_as_workers,
        baselines=not args.no_baselines,
        blank_answers=args.blank_answers or "auto",
    )
    try:
        result = run_aqer_file(
            args.input,
            output,
            embedding_model=model_path or "",
            device=device or "auto",
            sheet=args.sheet,
            format=args.format,
            question_col=args.question_col,
            worker_col=args.worker_col,
            response_col=args.response_col,
            grade_col=args.grade_col,
            llm_cols=args.llm_col,
            llm_workers=args.llm_worker,
            duplicates=args.duplicates,
            settings=settings,
            progress=Progress(cli.stderr_progress),
            cancel=CancelToken(),
        )
    except (AqerInputError, EmbeddingError, TableError) as exc:
        raise cli.UserError(str(exc)) from exc
    except Cancelled as exc:
        raise cli.UserError(str(exc)) from exc
    except PermissionError as exc:
        raise cli.UserError(
            f"Cannot write {output}: permission denied. Close the file if it is open in Excel, "
            "or choose another name."
        ) from exc
    scored = result.workers["score"].notna()
    best = result.workers[scored].iloc[0] if scored.any() else None
    n_questions = int(result.questions["mean_similarity"].notna().sum())
    lines = [
        f"Wrote {output}",
        f"  {int(scored.sum())} workers scored on {n_questions} "
        f"questions in {result.iterations} round(s)"
        + ("" if result.converged else " (not converged)" if result.discriminates else " (tie)"),
    ]
    if best is not None:
        lines.append(f"  best worker: {best['worker']} (score {best['score']:.2f})")
    lines.append(
        "  blank answers: "
        + ("count as the weakest answer" if result.blank_rule == "worst" else "do not count")
        + (" (your choice)" if args.blank_answers else " (decided from the data)")
    )
    for _, row in result.llm_summary.iterrows():
        mean, place = row["mean_score"], row["percentile_among_workers"]
        mean = None if pd.isna(mean) else float(mean)
        place = None if pd.isna(place) else float(place)
        lines.append(
            f"  LLM {row['model']}: mean score "
            + (f"{mean:.3f}" if mean is not None else "not computed")
            + f" over {row['scored']} answer(s)"
            + (
                f"; above {place:.0f}% of the workers (like for like)"
                if place is not None
                else ""
            )
        )
    if result.warnings:
        lines.append(f"  {len(result.warnings)} warning(s): see the Warnings sheet")
    print("\n".join(lines), file=sys.stderr)
    print(str(output))
    return 0


add_parser = add_aqer_parser
