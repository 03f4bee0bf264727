"""``evaldesk majeval personas`` and ``evaldesk majeval run`` (MAJ-Eval, headless).

A thin adapter: the arguments are checked, the files are read by :mod:`core.majeval.inputs`
and the work is done by :class:`core.majeval.session.MajEvalSession` in a project
(``--project``, or a temporary one), with the same calls the wizard makes: same column guesses,
same cache, same answer checks, same workbook; then the summary lines. The session (which
brings pandas, scipy and litellm) is imported inside the two handlers, so ``evaldesk
--version`` and ``--help`` stay fast.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from core.cli import EXIT_SOME_FAILED, UserError
from core.cli._agreement import add_agreement_parser
from core.cli._common import (
    add_bootstrap_option,
    add_estimate_options,
    add_project_option,
    add_repeats_option,
    adhoc_profile,
    apply_privacy_options,
    cli_progress,
    cli_project,
    estimate_or_stop,
    load_settings,
    output_path,
    probe_latency,
    profile_names,
    project_gateway,
    read_text_file,
    say,
)
from core.words import count

if TYPE_CHECKING:  # pragma: no cover
    from core.llm import Usage
    from core.llm.estimate import Estimate
    from core.majeval.agreement import HumanAgreement
    from core.majeval.inputs import DimensionsRead, ItemsRead, ItemsSetup, PersonasRead
    from core.majeval.model import Persona
    from core.majeval.pipeline import EvaluationRun
    from core.majeval.repeats import RepeatEntry
    from core.majeval.session import MajEvalSession, PersonasMade
    from core.project import Project
    from core.settings import ModelProfile

__all__ = ["add_parser", "run_debates", "run_personas"]

_EPILOG_RUN = (
    "Exit codes: 0 every debate finished; 1 a problem you can fix (the message says what); "
    "2 bad arguments; 3 the results were written but some agents, debates or summaries failed "
    "(marked failed in the workbook, with the reason; when most failed because the model "
    "repeated the instructions, the workbook's Read me says so); 130 stopped (with --project, "
    "finished debates are kept and a new run with the same settings resumes)."
)
#: What a workbook writer returns.
T = TypeVar("T")
#: Who the command line's imports are recorded as in a project.
_WHO = "evaldesk command line"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "majeval",
        help="MAJ-Eval: stakeholder personas from documents debate and score content",
        description="MAJ-Eval (Chen et al., Multi-Agent-as-Judge): personas of stakeholder "
        "groups are built from documents about those stakeholders; each group debates every "
        "item and scores it.",
    )
    actions = parser.add_subparsers(dest="majeval_action", metavar="ACTION", required=True)
    _add_personas_parser(actions)
    _add_run_parser(actions)
    add_agreement_parser(actions, what="debate scores", method="majeval")


def _add_personas_parser(actions: argparse._SubParsersAction) -> None:
    personas = actions.add_parser(
        "personas", help="build personas from documents (PDF, .txt, .md)",
        description="Read the documents, find stakeholders and their perspectives with "
        "evidence, group similar stakeholders and write one persona per distinct perspective. "
        "The result is an Excel file (sheet Personas) you can check and edit, then pass to "
        "'majeval run'.",
        epilog="Exit codes: 0 written; 1 a problem you can fix; 2 bad arguments; 3 most of the "
        "model's answers repeated the instructions instead of answering (the model is too "
        "small; what could be made is written, marked so); 130 stopped.")
    personas.add_argument("documents", nargs="+", metavar="DOC",
                          help="documents about the stakeholders (PDF, .txt or .md)")
    personas.add_argument("--task-file", required=True, metavar="TASK.txt",
                          help="a text file with the task description (what is evaluated, "
                          "for whom)")
    _model_options(personas)
    personas.add_argument("--keep-references", action="store_true",
                          help="keep each document's reference list (dropped by default: it "
                          "names authors, not stakeholders)")
    add_project_option(personas, "every model answer and the personas")
    personas.add_argument("-o", "--output", required=True, metavar="personas.xlsx")
    personas.set_defaults(func=run_personas)


def _add_run_parser(actions: argparse._SubParsersAction) -> None:
    run = actions.add_parser(
        "run", help="debate and score items with a personas file",
        description="Every stakeholder group debates every item: each agent scores alone, a "
        "coordinator lets the agents who disagree most speak, then the group's scores are "
        "averaged and summarised.", epilog=_EPILOG_RUN)
    run.add_argument("--personas", required=True, metavar="personas.xlsx",
                     help="the personas (sheet Personas, as written by 'majeval personas')")
    run.add_argument("--items", required=True, metavar="ITEMS.xlsx",
                     help="the content to evaluate (xlsx, xls or csv)")
    run.add_argument("--sheet", metavar="NAME", help="the sheet of ITEMS (default: the first)")
    run.add_argument("--header-row", type=int, metavar="N",
                     help="the row of ITEMS that holds the column names (default: found: the "
                     "first row that reads like a header above rows of data, so a title above "
                     "the table is skipped, and said)")
    run.add_argument("--task-file", required=True, metavar="TASK.txt")
    run.add_argument("--content-col", metavar="C",
                     help="column with the content to evaluate (default: guessed as the app "
                     "does: content, or a column named like answer / summary / output / "
                     "response / bot)")
    run.add_argument("--context-col", metavar="C",
                     help="column with its context, e.g. the story, source or prompt "
                     "(default: guessed as the app does)")
    run.add_argument("--id-col", metavar="C", help="column with an item id (default: a column "
                     "named id, item id or question id, else the row number)")
    run.add_argument("--human-col", action="append", default=[], metavar="C",
                     help="a column with human ratings ('NAME=C' names the human dimension; "
                     "default: the column name); repeat per column (default: the columns "
                     "named like rating / score / grade / human / expert, as the app guesses)")
    run.add_argument("--dimensions", metavar="DIMS.xlsx",
                     help="dimensions to score: columns dimension and definition (optional "
                     "min and max for the scale, same on every row); default: one 'Overall "
                     "quality' on a 1-5 scale")
    run.add_argument("--rounds", type=int, default=3, metavar="N",
                     help="debate length: at most N x (agents of the group) turns (default 3)")
    run.add_argument("--no-debate", action="store_true",
                     help="ablation: phase 1 scores only, no debate")
    run.add_argument("--simple-roles", action="store_true",
                     help="ablation: one-sentence roles instead of the full personas")
    _model_options(run)
    add_project_option(run, "every finished debate, committed as it ends,")
    add_bootstrap_option(run, "confidence intervals for the correlations")
    run.add_argument("--conditions", metavar="LIST",
                     help="compare conditions on the same items, comma-separated: full (full "
                     "personas, after debate), pre (the same, before debate), simple (simple "
                     "roles, after debate), single-judge (one model, one call per item). The "
                     "output is then a comparison workbook (sheets Comparison and Condition "
                     "scores); conditions already kept in --project make no call")
    add_repeats_option(run, unit="item")
    add_estimate_options(run)
    run.add_argument("-o", "--output", required=True, metavar="results.xlsx")
    run.set_defaults(func=run_debates)


add_majeval_parser = add_parser


def _model_options(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--profile", metavar="NAME",
                       help="the model profile (default: the default profile in Settings)")
    which.add_argument("--model", metavar="STRING", help="an ad-hoc litellm model string")


# ----------------------------------------------------------------------------- shared parts
def _profile(args: argparse.Namespace) -> ModelProfile:
    if args.model:
        return adhoc_profile(args.model)
    settings = load_settings()
    try:
        return settings.profile(args.profile)
    except KeyError:
        raise UserError(
            f"There is no model profile called '{args.profile or settings.default_profile}'. "
            f"Profiles: {profile_names(settings)}. Add it in Settings → Models, or use --model."
        ) from None


def _open(project: Project, profile: ModelProfile) -> MajEvalSession:
    """The MAJ-Eval session of ``project``, scoring with ``profile`` (the command line's
    model: its settings are the session's only profile; every call is cached in the project)."""
    from core.majeval.session import MajEvalSession
    from core.settings import Settings

    return MajEvalSession.open(project, settings=Settings(
        profiles=[profile], default_profile=profile.name), models=project_gateway)


def _say_actual(est: Estimate, usage: Usage | None) -> None:
    """The estimate beside what the run used (every model of the run together)."""
    from core.llm.estimate import compare_lines

    if usage is not None:
        for line in compare_lines(est, usage):
            say(line)


def _task(path: str) -> str:
    from core.majeval.inputs import task_text

    task = task_text(read_text_file(path, "task file"))
    if not task:
        raise UserError(f'The task file "{path}" is empty. Write one paragraph: what is '
                        "evaluated, and for whom.")
    return task


# ------------------------------------------------------------------------------- personas
def run_personas(args: argparse.Namespace) -> int:
    output_path(args, args.task_file, args.documents)
    task = _task(args.task_file)
    profile = _profile(args)
    with cli_project(args.project, "majeval", open_anyway=args.open_anyway) as project:
        apply_privacy_options(args, project, profile)
        session = _open(project, profile)
        session.save_choices(session.choices.model_copy(update={
            "task": task, "profile": profile.name,
            "keep_references": bool(args.keep_references)}))
        _add_documents(session, args.documents)
        made = _find_stakeholders(session)
        if made is None:
            return EXIT_SOME_FAILED
        warning = _personas_warning(made)
        usage = session.usage
        readme = [*([("WARNING", warning)] if warning else []), ("Model", profile.model)]
        if usage is not None:
            readme.append(("Model calls", (f"{usage.calls} calls, {usage.cache_hits} from the "
                                           f"cache, {usage.prompt_tokens:,} tokens in, "
                                           f"{usage.completion_tokens:,} out")))
        _write(lambda: session.export_personas(args.output, readme=readme))
        say(f"{count(made.perspectives, 'perspective')} from "
            f"{count(len(session.choices.documents), 'document')}, "
            f"{count(len(made.groups), 'group')}, {count(len(made.personas), 'persona')}. "
            f"Written to {args.output}.")
    if warning:
        say(f"evaldesk: {warning}")
        return EXIT_SOME_FAILED
    return 0


def _add_documents(session: MajEvalSession, paths: Sequence[str]) -> None:
    """Read and keep the documents given (notes for their warnings); the documents an earlier
    command kept in the project and not given now are taken out."""
    from core.documents import DocumentError

    for path in paths:
        try:
            doc = session.add_document(path, progress=cli_progress())
        except (DocumentError, OSError) as exc:
            raise UserError(str(exc)) from None
        for warning in doc.warnings:
            say(f"evaldesk: note: {doc.name}: {warning}")
    names = {Path(p).name for p in paths}
    for name in [n for n in session.choices.documents if n not in names]:
        session.remove_document(name, _WHO)  # only the documents given now


def _find_stakeholders(session: MajEvalSession) -> PersonasMade | None:
    """Stages 1-2, with a note per failure; None (said already) when most answers repeated
    the instructions and no persona could be made."""
    from core.majeval.model import StageError
    from core.majeval.pipeline import copied_most

    try:
        made = asyncio.run(session.find_stakeholders(progress=cli_progress()))
    except StageError as exc:
        if copied_most(exc.failures, len(exc.failures)):
            say(f"evaldesk: {exc.message}")
            return None
        raise UserError(str(exc)) from None
    except ValueError as exc:
        raise UserError(str(exc)) from None
    for failure in made.failures:
        say(f"evaldesk: note: {failure.stage} failed for {failure.where}: {failure.message}")
    return made


def _personas_warning(made: PersonasMade) -> str:
    """The warning of a persona creation: the model copied the instructions, or found too
    little ("" when neither)."""
    from core.majeval.pipeline import copied_most

    if copied_most(made.failures, made.units):
        return ("Most of the model's answers repeated the instructions instead of "
                "answering: this model is too small to make personas; check these "
                "closely or try a larger model.")
    return made.too_little


def _write(write: Callable[[], T]) -> T:
    """Write a workbook (what ``write`` returns); a file that cannot be written is the user's
    to fix."""
    from core.tables import TableError

    try:
        return write()
    except TableError as exc:
        raise UserError(exc.message) from None


# ------------------------------------------------------------------------------------ run
def run_debates(args: argparse.Namespace) -> int:
    _check_run_options(args)
    output_path(args, args.task_file, args.personas, args.items, args.dimensions)
    task = _task(args.task_file)
    got = _personas_file(args.personas)
    dims = _dimensions_file(args.dimensions)
    profile = _profile(args)
    with cli_project(args.project, "majeval", open_anyway=args.open_anyway) as project:
        apply_privacy_options(args, project, profile)
        session = _open(project, profile)
        _choose(session, args, task, profile, dims)
        personas = session.replace_personas(got.personas, _WHO, got.descriptions)
        _say_plan(session, len(got.groups), personas, profile)
        if args.conditions:
            return _run_conditions(args, session, profile)
        est = estimate_or_stop(lambda: session.estimate(
            latency=probe_latency(args, profile)), args.dry_run)
        if est is None:
            return 0
        if args.repeats > 1:
            say(f"Repeating every call: {args.repeats} repeats in all.")
        try:
            run = asyncio.run(session.run(progress=cli_progress(), estimate=est))
        except ValueError as exc:
            raise UserError(str(exc)) from None
        _say_actual(est, session.usage)
        _write(lambda: session.export(args.output, who=_WHO, run=run,
                                      n_boot=0 if args.no_bootstrap else BOOTSTRAP_SAMPLES))
        _alphas, humans = session.agreement(run, n_boot=0)
        stability = session.stability(session.load_repeats())
        dimensions = [d.name for d in session.choices.dimensions]
    return _say_results(args, run, dimensions, humans, stability)


#: Bootstrap resamples of the results workbook (as the app's).
BOOTSTRAP_SAMPLES = 1000


def _check_run_options(args: argparse.Namespace) -> None:
    """The options' ranges, and the conditions named (``args.conditions`` becomes the list)."""
    from core.majeval.repeats import MAX_REPEATS

    if not 1 <= args.rounds <= 20:
        raise UserError("--rounds must be a whole number from 1 to 20.")
    if not 1 <= args.repeats <= MAX_REPEATS:
        raise UserError(f"--repeats must be a whole number from 1 to {MAX_REPEATS}.")
    if args.conditions:
        from core.majeval.conditions import parse_conditions

        try:
            args.conditions = parse_conditions(args.conditions)
        except ValueError as exc:
            raise UserError(f"--conditions: {exc}") from None
        if args.no_debate or args.simple_roles:
            say("evaldesk: note: with --conditions, --no-debate and --simple-roles are not "
                "used: the conditions say which runs are made.")


def _personas_file(path: str) -> PersonasRead:
    from core.majeval.inputs import read_personas
    from core.tables import TableError

    try:
        got = read_personas(path)
    except TableError as exc:
        raise UserError(exc.message) from None
    for issue in got.warnings:
        say(f"evaldesk: note: {issue.message}")
    if got.errors:
        raise UserError("The personas file cannot be used:\n"
                        + "\n".join(f"- {e.message}" for e in got.errors))
    return got


def _dimensions_file(path: str | None) -> DimensionsRead:
    from core.majeval.inputs import read_dimensions

    dims = read_dimensions(path)
    if dims.errors:
        raise UserError("\n".join(dims.errors))
    return dims


def _choose(session: MajEvalSession, args: argparse.Namespace, task: str,
            profile: ModelProfile, dims: DimensionsRead) -> None:
    """The choices of this command (task, model, dimensions, debate options, repeats) and the
    items read as the wizard's items page reads them, kept once the items can be used."""
    from core.majeval.model import DebateSettings

    setup, read = _items(session, args)
    for problem in read.problems:
        say(f"evaldesk: note: {problem}")
    if read.errors:
        raise UserError("\n".join(read.errors) + "\n" + _columns_hint(setup))
    session.save_choices(session.choices.model_copy(update={
        "task": task, "profile": profile.name, "dimensions": dims.dimensions,
        "scale": dims.scale, "repeats": args.repeats,
        "settings": DebateSettings(rounds=args.rounds, no_debate=args.no_debate,
                                   simple_roles=args.simple_roles),
        "items": setup, "item_list": read.items}))


def _items(session: MajEvalSession, args: argparse.Namespace) -> tuple[ItemsSetup, ItemsRead]:
    """The items file kept in the project and read with the columns chosen on the command line
    (the app's guesses for the others)."""
    from core.majeval.inputs import read_items

    try:
        opened = session.store_items(args.items, sheet=args.sheet,
                                     header_row=args.header_row)
    except OSError as exc:
        raise UserError(f'The items file "{args.items}" cannot be read ({exc.strerror}).'
                        ) from None
    if args.header_row is not None and args.header_row < 1:
        raise UserError("--header-row must be a row number, 1 or more.")
    if args.sheet and opened.sheets and args.sheet not in opened.sheets:
        raise UserError(f'"{Path(args.items).name}" has no sheet called "{args.sheet}". Its '
                        "sheets are: " + ", ".join(f'"{s}"' for s in opened.sheets) + ".")
    if not opened.sheets:
        raise UserError("\n".join(opened.read.errors))
    setup = opened.setup
    columns = dict(setup.columns)
    for role, given in (("content", args.content_col), ("context", args.context_col),
                        ("id", args.id_col)):
        if given:
            columns[role] = given
    human, names = list(setup.human), dict(setup.human_names)
    if args.human_col:
        human, names = [], {}
        for spec in args.human_col:
            name, _, col = spec.partition("=") if "=" in spec else (spec, "", spec)
            human.append(col.strip())
            if name.strip() != col.strip():
                names[col.strip()] = name.strip()
    setup = setup.model_copy(update={"columns": columns, "human": human,
                                     "human_names": names})
    return setup, read_items(args.items, setup)


def _columns_hint(setup: ItemsSetup) -> str:
    """The options that choose the columns, with what was used: the fix for most item errors."""
    used = ", ".join(f"{role} = “{col}”" for role, col in setup.columns.items() if col)
    return ("Choose the columns with --content-col (the texts to judge), --context-col, --id-col "
            f"and --human-col{f'; used now: {used}' if used else ''}.")


def _say_plan(session: MajEvalSession, groups: int, personas: Sequence[Persona],
              profile: ModelProfile) -> None:
    from core.majeval.pipeline import lonely_groups

    say(f"{count(len(session.choices.item_list), 'item')} x "
        f"{count(groups, 'stakeholder group')} "
        f"({count(len(personas), 'agent')}) with {profile.model}.")
    for group in lonely_groups(personas):
        say(f"evaldesk: note: group {group} has one persona, so it cannot debate: its "
            "persona's own evaluation is its score, and its agreement and change are "
            "undefined.")


def _say_results(args: argparse.Namespace, run: EvaluationRun, dimensions: Sequence[str],
                 humans: Sequence[HumanAgreement], stability: Sequence[RepeatEntry]) -> int:
    """The summary lines of a run (scores, agreement, warnings); the exit code."""
    from core.majeval.agreement import judge_spreads
    from core.majeval.repeats import stability_lines
    from core.majeval.report import failure_warning

    for dim in dimensions:
        values = [r.overall[dim] for r in run.items if dim in r.overall]
        line = f"{dim}: {len(values)} of {count(len(run.items), 'item')} scored"
        if values:
            line += f", mean {sum(values) / len(values):.2f}"
        say(line)
    _say_agreement(humans)
    for _dim, spread in judge_spreads(run, n_boot=0):
        if spread.flagged:
            say(f"evaldesk: WARNING: {spread.sentence}")
    for line in stability_lines(stability):
        say(line)
    say(f"Results written to {args.output}.")
    warning = failure_warning(run)
    if warning:
        say(f"evaldesk: {warning}")
    if run.failed_units:
        say(f"evaldesk: {len(run.failed_units)} debate(s) had failures; they are marked in the "
            "workbook with the reason.")
        return EXIT_SOME_FAILED
    return 0


def _say_agreement(humans: Sequence[HumanAgreement]) -> None:
    """Spearman's rho of the overall score with each human dimension, beside the length
    baseline's."""
    from core.majeval.agreement import BASELINE, LENGTH_GROUP
    from core.stats import length_sentence

    lengths = {(h.dimension, h.human_dimension): h.report.spearman.value for h in humans
               if h.group == LENGTH_GROUP and h.stage == BASELINE}
    for h in humans:
        if h.group.startswith("All groups") and h.stage == "after debate" \
                and h.report.spearman.defined:
            say(f"Spearman rho, overall {h.dimension} vs human {h.human_dimension}: "
                f"{h.report.spearman.value:.3f} (n = {h.report.n})")
            line = length_sentence(h.report.spearman.value,
                                   lengths.get((h.dimension, h.human_dimension)),
                                   who="the personas", symbol="Spearman rho")
            if line:
                say(f"{h.dimension} vs human {h.human_dimension}: {line}")


# ----------------------------------------------------------------------------- conditions
def _run_conditions(args: argparse.Namespace, session: MajEvalSession,
                    profile: ModelProfile) -> int:
    """``majeval run --conditions``: run the missing conditions, write the comparison."""
    from core.majeval.conditions import COMPARISON_BOOT

    names = args.conditions
    est = estimate_or_stop(lambda: session.estimate_conditions(
        names, latency=probe_latency(args, profile)), args.dry_run)
    if est is None:
        return 0
    if args.repeats > 1:
        say(f"Repeating every call: {args.repeats} repeats in all.")
    try:
        results = asyncio.run(session.run_conditions(names, progress=cli_progress()))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    _say_actual(est, session.usage)
    rows = _write(lambda: session.export_conditions(
        args.output, names, results, n_boot=0 if args.no_bootstrap else COMPARISON_BOOT))
    failed = {name: len(r.failed) for name, r in results.items() if r.failed}
    return _say_comparison(args, rows, session.stability(session.load_repeats(names)), failed)


def _say_comparison(args: argparse.Namespace, rows: Sequence[dict[str, object]],
                    stability: Sequence[RepeatEntry], failed: dict[str, int]) -> int:
    """The summary lines of the comparison; the exit code."""
    from core.majeval.conditions import CONDITIONS, HOW_COMPARED, comparison_summary
    from core.majeval.repeats import stability_lines

    say(f"How the conditions were compared: {HOW_COMPARED}.")
    for line in comparison_summary(rows):
        say(line)
    for row in rows:
        if row["warning"]:
            say(f"evaldesk: WARNING: {row['warning']}")
    for line in stability_lines(stability):
        say(line)
    if not any(r["value"] is not None for r in rows):
        say("evaldesk: note: no agreement could be computed: give the human ratings with "
            "--human-col.")
    say(f"Comparison written to {args.output}.")
    if failed:
        say("evaldesk: some items have no score: " + ", ".join(
            f"{CONDITIONS[n]} {k}" for n, k in failed.items())
            + "; they are marked in the Condition scores sheet with the reason.")
        return EXIT_SOME_FAILED
    return 0
