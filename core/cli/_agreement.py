"""``evaldesk majeval agreement`` and ``evaldesk checklist agreement``: does the AI judge agree
with the people? The judge is the last finished run in the ``--project`` file (as the app's
"Check the judge" page sees it); the people's ratings come from one or more ratings workbooks
(the one the app exports, columns rater, item, dimension, question, rating, note, or each
rater's rating sheet) and, with ``--project-ratings``, from the ratings kept in the project too.
The report workbook is the one the app writes (:func:`core.judge_check.write_report`).

``evaldesk majeval rating-sheets`` and ``evaldesk checklist rating-sheets`` hand the items out:
optionally draw a random sample to grade, assign each item to k of the named raters (kept in
the project, as the app does) and write one rating sheet per rater
(:mod:`core.grading.sheets`), which ``agreement --ratings`` reads back.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli import UserError
from core.cli._common import add_bootstrap_option, load_settings, output_path, say

if TYPE_CHECKING:  # pragma: no cover
    from core.grading.plan import GradingPlan
    from core.judge_check import JudgeData, Rating
    from core.project import Project

__all__ = ["add_agreement_parser", "add_rating_sheets_parser", "run_agreement",
           "run_rating_sheets"]


def add_agreement_parser(actions: argparse._SubParsersAction, *, what: str,
                         method: str) -> argparse.ArgumentParser:
    parser = actions.add_parser(
        "agreement", help=f"compare the {what} with people's ratings (judge-vs-me report)",
        description=f"Compare the {what} of the last finished run in a project with people's "
        "ratings of some of the same items: per dimension Kendall tau-b, Spearman rho and mean "
        "absolute error with bootstrap intervals (a warning under 25 rated items), per "
        "checklist question Cohen's kappa, MCC and the false-pass and false-fail rates, the "
        "biggest disagreements, and with two or more raters Krippendorff's alpha among them "
        "beside the judge's; the agreement statistics reviewers ask for (between the people "
        "and between the judge and the people, each with its 95% interval, n and which to "
        "report), the judge's mean corrected by grades on a random sample, every label with "
        "its origin, and, when other models or conditions scored the same items, their "
        "ranking with the paired bootstrap and Zou's interval.",
        epilog="Exit codes: 0 written; 1 a problem you can fix (the message says what); 2 bad "
        "arguments.")
    parser.add_argument("--project", required=True, metavar="FILE.evaldesk",
                        help="the project holding the run to check")
    parser.add_argument("--ratings", metavar="RATINGS.xlsx", nargs="+",
                        help="people's ratings, one file or several (one per rater, such as "
                        "the sheets rating-sheets writes): columns rater, item, dimension, "
                        "question (empty for a dimension's rating), rating (a number, or "
                        "Yes/No for a question), note")
    parser.add_argument("--project-ratings", action="store_true",
                        help="also use the ratings kept in the project (graded in the app, "
                        "with the agreed grades)")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--rater", metavar="NAME",
                     help="compare with this person only (default: the mean of every "
                     "rater's rating of an item)")
    who.add_argument("--agreed", action="store_true",
                     help="compare with the agreed grades where raters disagreed "
                     "(adjudicated in the app, or rows whose origin is adjudicated), with "
                     "the mean of the raters elsewhere")
    add_bootstrap_option(parser)
    parser.add_argument("-o", "--output", required=True, metavar="agreement.xlsx")
    parser.set_defaults(func=lambda args: run_agreement(args, method))
    # the rating sheets the agreement reads back come with it
    add_rating_sheets_parser(actions, what=what, method=method)
    return parser


def _judges(project: Project, method: str
            ) -> tuple[JudgeData | None, str, list[tuple[str, str, JudgeData]]]:
    """The judge to check (None and why when there is none) and the judges to compare, from
    the method's session."""
    if method == "majeval":
        from core.majeval.session import MajEvalSession
        from core.settings import Settings

        majeval = MajEvalSession.open(project, settings=Settings())
        judge, why = majeval.judge_to_check()
        return judge, why, (list(majeval.judges_to_compare()) if judge is not None else [])
    from core.interacteval.session import InteractEvalSession

    opened = InteractEvalSession.open(project, settings=load_settings())
    judge, why = opened.judge_to_check()
    return judge, why, (list(opened.judges_to_compare()) if judge is not None else [])


def _open(path: str) -> Project:
    from core.project import Project, ProjectError

    if not Path(path).is_file():
        raise UserError(f"There is no project file {path}: give the project that holds "
                        "the run to check.")
    try:
        return Project.open(path)
    except ProjectError as exc:
        raise UserError(str(exc)) from None


def _read_files(paths: list[str], judge: JudgeData, plan: GradingPlan | None,
                ratings: list[Rating], agreed: list[Rating]
                ) -> tuple[list[Rating], list[Rating]]:
    """The ratings of every file in ``paths`` (checked; problems said), replacing the same
    rater's rating of the same item from the project; a rater's item in two files is named."""
    from core.grading.sheets import read_rating_sheet

    seen: dict[tuple[str, str], str] = {}
    found: list[Rating] = []
    for path in paths:
        got = read_rating_sheet(path, judge, plan=plan)
        for problem in got.problems:
            say(f"evaldesk: note: {problem}")
        if got.errors:
            raise UserError("\n".join(got.errors))
        name = Path(path).name
        for r in got.ratings:
            key = (r.rater, r.item_id)
            if key in seen:
                say(f"evaldesk: note: {r.rater}'s rating of item {r.item_id} is in {seen[key]} "
                    f"and in {name}: the one in {seen[key]} is used.")
                continue
            seen[key] = name
            found.append(r)
        agreed = [a for a in agreed if a.item_id not in {g.item_id for g in got.adjudicated}]
        agreed += got.adjudicated
    ratings = [r for r in ratings if (r.rater, r.item_id) not in seen] + found
    return ratings, agreed


def run_agreement(args: argparse.Namespace, method: str) -> int:
    from core import judge_check, stats
    from core.grading import plan as grading_plan
    from core.tables import TableError

    if not args.ratings and not args.project_ratings:
        raise UserError("Give --ratings RATINGS.xlsx (one or more), --project-ratings, or both.")
    output_path(args, args.ratings, args.project)
    project = _open(args.project)
    try:
        judge, why, candidates = _judges(project, method)
        if judge is None:
            raise UserError(why)
        ratings: list[judge_check.Rating] = []
        agreed: list[judge_check.Rating] = []
        if args.project_ratings:
            ratings += judge_check.load_ratings(project, method)
            agreed += judge_check.load_adjudications(project, method)
        order_seed = judge_check.grading_seed(project, method, create=False)
        plan = grading_plan.load_plan(project, method)
        if args.ratings:
            ratings, agreed = _read_files(args.ratings, judge, plan, ratings, agreed)
        compare = judge_check.AGREED if args.agreed else args.rater
        graded = grading_plan.graded_items(ratings, rater=compare, adjudications=agreed)
        sample = grading_plan.report_sample(project, method, judge, graded)
    finally:
        project.close()
    if args.rater and args.rater not in {r.rater for r in ratings}:
        raise UserError(f"Nobody called '{args.rater}' rated an item. Raters: "
                        f"{', '.join(sorted({r.rater for r in ratings})) or 'none'}.")
    if args.agreed and not agreed:
        say("evaldesk: note: no agreed grade was found (adjudicate in the app, or give rows "
            "whose origin is adjudicated): the judge is compared with the raters' mean.")
    n_boot = 0 if args.no_bootstrap else 1000
    others = judge_check.other_judges(judge, candidates) if len(candidates) >= 2 else []
    report = judge_check.judge_report(
        judge, ratings, rater=compare, n_boot=n_boot, order_seed=order_seed,
        adjudications=agreed, random_items=sample[0] if sample else None,
        random_how=sample[1] if sample else "", candidates=others)
    ranks = (judge_check.rank_judges(candidates, [*ratings, *agreed], rater=compare,
                                     n_boot=2000 if n_boot else 0)
             if len(candidates) >= 2 else [])
    try:
        judge_check.write_report(args.output, report, ranks=ranks)
    except TableError as exc:
        raise UserError(exc.message) from None
    raters = report.raters
    say(f"{report.rated} rated items compared with the judge ({judge.method}, model "
        f"{judge.model or 'not recorded'}); {len(raters)} rater(s): {', '.join(raters)}.")
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
    for block in report.agreement:
        say(block.sentence())
    for row in report.corrected:
        say(row.sentence())
    for k, r in enumerate(ranks, start=1):
        if r.versus_best is None:
            say(f"Judge {k}: {r.name}, {stats.STATISTIC_NAMES['kendall']} "
                + (f"{r.value:.3f} (the highest)" if r.value is not None
                   else f"undefined ({r.reason})"))
            continue
        test, z = r.versus_best, r.zou
        line = f"Judge {k}: {r.name}: " + (test.summary(ranks[0].name, r.name) if test.defined
                                           else f"no test ({test.reason})")
        if z is not None:
            line += (f" Zou's interval ({z.statistic}): {z.ci_low:.2f} to {z.ci_high:.2f}."
                     if z.defined else f" Zou's interval: undefined ({z.reason}).")
        say(line)
    if report.adjudicated:
        say(f"{report.adjudicated} items have an agreed grade; the Labels sheet marks every "
            "label as judge, human (which rater) or adjudicated.")
    say(f"Report written to {args.output}.")
    return 0


def add_rating_sheets_parser(actions: argparse._SubParsersAction, *, what: str,
                             method: str) -> argparse.ArgumentParser:
    parser = actions.add_parser(
        "rating-sheets", help="hand items out to raters: one Excel rating sheet per rater",
        description=f"Hand the items of the last finished run in a project out to people who "
        f"grade them blind (to check the {what}): optionally draw a random sample of items "
        "to grade, assign each item to k of the named raters (balanced, every item to at "
        "least two raters so agreement can be computed; kept in the project, as the app "
        "does), and write one rating sheet per rater with only their items, no score of the "
        "judge and no other rater's grades. Read them back with agreement --ratings.",
        epilog="Exit codes: 0 written; 1 a problem you can fix (the message says what); 2 bad "
        "arguments.")
    parser.add_argument("--project", required=True, metavar="FILE.evaldesk",
                        help="the project holding the run whose items are graded (the draw "
                        "and the assignment are kept in it)")
    parser.add_argument("--raters", nargs="+", metavar="NAME",
                        help="the raters (two or more): makes a new assignment; without it "
                        "the project's assignment is used")
    parser.add_argument("--per-item", type=int, metavar="K",
                        help="how many raters grade each item (2 to the number of raters; "
                        "default: all of them)")
    parser.add_argument("--sample", type=int, metavar="N",
                        help="first draw a random sample of N items to grade (recorded in the "
                        "project; the corrected mean uses it); default: the sample drawn "
                        "before, or every item")
    parser.add_argument("-o", "--output", required=True, metavar="FOLDER",
                        help="the folder to write the sheets to (one file per rater)")
    parser.set_defaults(func=lambda args: run_rating_sheets(args, method))
    return parser


def run_rating_sheets(args: argparse.Namespace, method: str) -> int:
    from core import judge_check
    from core.grading import plan as grading_plan
    from core.grading.sheets import sheet_name, write_rating_sheet
    from core.tables import TableError

    folder = Path(args.output)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder} is a file: give a folder for the rating sheets (-o).")
    who = (load_settings().user_name or "").strip() or "unnamed person"
    project = _open(args.project)
    try:
        judge, why, _candidates = _judges(project, method)
        if judge is None:
            raise UserError(why)
        try:
            if args.sample:
                drawn = grading_plan.draw_sample(project, method, judge, args.sample, who=who)
                say(f"Drawn: {drawn.describe()}.")
            if args.raters:
                k = args.per_item or len(args.raters)
                plan = grading_plan.make_plan(project, method, judge, args.raters, k, who=who)
            else:
                if args.per_item:
                    raise UserError("--per-item needs --raters (a new assignment).")
                found = grading_plan.load_plan(project, method)
                if found is None:
                    raise UserError("This project has no assignment of items to raters yet: "
                                    "name the raters with --raters NAME NAME ….")
                plan = found
        except ValueError as exc:
            raise UserError(str(exc)) from None
        ratings = judge_check.load_ratings(project, method)
    finally:
        project.close()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"The folder {folder} cannot be made ({exc.strerror}).") from None
    say(f"Assignment: {plan.describe()}")
    for rater in plan.raters:
        target = folder / sheet_name(rater, method)
        try:
            write_rating_sheet(target, judge, rater, plan.items.get(rater, ()), own=ratings,
                               readme=[("Project", Path(args.project).name),
                                       ("Made by", who)])
        except TableError as exc:
            raise UserError(exc.message) from None
        say(f"{rater}: {len(plan.items.get(rater, ()))} items → {target}")
    return 0
