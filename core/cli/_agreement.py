"""``evaldesk majeval agreement`` and ``evaldesk checklist agreement``: does the AI judge agree
with the people? The judge is the last finished run in the ``--project`` file (as the app's
"Check the judge" page sees it); the people's ratings come from a ratings workbook (the one the
app exports, columns rater, item, dimension, question, rating, note) and, with
``--project-ratings``, from the ratings kept in the project too. The report workbook is the one
the app writes (:func:`core.judge_check.write_report`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli import UserError
from core.cli._common import add_bootstrap_option, load_settings, output_path, say

__all__ = ["add_agreement_parser", "run_agreement"]


def add_agreement_parser(actions: argparse._SubParsersAction, *, what: str,
                         method: str) -> argparse.ArgumentParser:
    parser = actions.add_parser(
        "agreement", help=f"compare the {what} with people's ratings (judge-vs-me report)",
        description=f"Compare the {what} of the last finished run in a project with people's "
        "ratings of some of the same items: per dimension Kendall tau-b, Spearman rho and mean "
        "absolute error with bootstrap intervals (a warning under 25 rated items), per "
        "checklist question Cohen's kappa, MCC and the false-pass and false-fail rates, the "
        "biggest disagreements, and with two or more raters Krippendorff's alpha among them "
        "beside the judge's.",
        epilog="Exit codes: 0 written; 1 a problem you can fix (the message says what); 2 bad "
        "arguments.")
    parser.add_argument("--project", required=True, metavar="FILE.evaldesk",
                        help="the project holding the run to check")
    parser.add_argument("--ratings", metavar="RATINGS.xlsx",
                        help="people's ratings: columns rater, item, dimension, question "
                        "(empty for a dimension's rating), rating (a number, or Yes/No for a "
                        "question), note")
    parser.add_argument("--project-ratings", action="store_true",
                        help="also use the ratings kept in the project (graded in the app)")
    parser.add_argument("--rater", metavar="NAME",
                        help="compare with this person only (default: the mean of every "
                        "rater's rating of an item)")
    add_bootstrap_option(parser)
    parser.add_argument("-o", "--output", required=True, metavar="agreement.xlsx")
    parser.set_defaults(func=lambda args: run_agreement(args, method))
    return parser


def run_agreement(args: argparse.Namespace, method: str) -> int:
    from core import judge_check, stats
    from core.project import Project, ProjectError
    from core.tables import TableError

    if not args.ratings and not args.project_ratings:
        raise UserError("Give --ratings RATINGS.xlsx, --project-ratings, or both.")
    output_path(args, args.ratings, args.project)
    if not Path(args.project).is_file():
        raise UserError(f"There is no project file {args.project}: give the project that holds "
                        "the run to check.")
    try:
        project = Project.open(args.project)
    except ProjectError as exc:
        raise UserError(str(exc)) from None
    try:
        if method == "majeval":
            from core.majeval.session import MajEvalSession
            from core.settings import Settings

            judge, why = MajEvalSession.open(project, settings=Settings()).judge_to_check()
        else:
            from core.interacteval.session import InteractEvalSession

            opened = InteractEvalSession.open(project, settings=load_settings())
            judge, why = opened.judge_to_check()
        if judge is None:
            raise UserError(why)
        ratings: list[judge_check.Rating] = []
        if args.project_ratings:
            ratings += judge_check.load_ratings(project, method)
        order_seed = judge_check.grading_seed(project, method, create=False)
    finally:
        project.close()
    if args.ratings:
        got = judge_check.read_ratings(args.ratings, scale=judge.scale,
                                       items=[i.item_id for i in judge.items],
                                       dimensions=judge.dimensions)
        for problem in got.problems:
            say(f"evaldesk: note: {problem}")
        if got.errors:
            raise UserError("\n".join(got.errors))
        seen = {(r.rater, r.item_id) for r in got.ratings}
        ratings = [r for r in ratings if (r.rater, r.item_id) not in seen] + got.ratings
    if args.rater and args.rater not in {r.rater for r in ratings}:
        raise UserError(f"Nobody called '{args.rater}' rated an item. Raters: "
                        f"{', '.join(sorted({r.rater for r in ratings})) or 'none'}.")
    report = judge_check.judge_report(judge, ratings, rater=args.rater,
                                      n_boot=0 if args.no_bootstrap else 1000,
                                      order_seed=order_seed)
    try:
        judge_check.write_report(args.output, report)
    except TableError as exc:
        raise UserError(exc.message) from None
    say(f"{report.rated} rated items compared with the judge ({judge.method}, model "
        f"{judge.model or 'not recorded'}).")
    if report.held_out:
        say(f"evaldesk: note: {judge_check.held_out_line(report.held_out, report.held_out_reason)}")
    if report.sampling is not None:
        say(("" if report.sampling.representative else "evaldesk: WARNING: ")
            + f"How the graded items were chosen: {report.sampling.sentence}")
    for _dim, spread in report.spreads:
        if spread.flagged:
            say(f"evaldesk: WARNING: {spread.sentence}")
    for d in report.dimensions:
        tau = f"{d.kendall.value:.3f}" if d.kendall.value is not None else \
            f"undefined ({d.kendall.reason})"
        mae = f"{d.mae:.2f}" if d.mae is not None else "undefined"
        say(f"{d.dimension}: Kendall tau-b {tau}, mean absolute error {mae}, n = {d.n}")
        if d.length is not None:
            line = stats.length_sentence(d.kendall.value, d.length.kendall.value,
                                         symbol="Kendall tau-b")
            if line:
                say(f"{d.dimension}: {line}")
        if d.warning:
            say(f"evaldesk: {d.warning}")
    for q in report.fails_good:
        say(f"evaldesk: {q.dimension}, question {q.number} fails good texts: the judge said No to "
            f"{q.result.false_fail_rate:.0%} of the texts people said Yes to.")
    say(f"Report written to {args.output}.")
    return 0
