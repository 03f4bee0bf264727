"""``evaldesk majeval personas`` and ``evaldesk majeval run`` (MAJ-Eval, headless).

A thin adapter: the files are read by :mod:`core.majeval.inputs` and the work is done by
:mod:`core.majeval.session` in a project (``--project``, or a temporary one), exactly as the
wizard does it: same column guesses, same cache, same answer checks, same workbook. Heavy
libraries (pandas, litellm) are imported inside the handlers, so ``evaldesk --version`` stays
fast.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

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

__all__ = ["add_parser", "run_debates", "run_personas"]

_EPILOG_RUN = (
    "Exit codes: 0 every debate finished; 1 a problem you can fix (the message says what); "
    "2 bad arguments; 3 the results were written but some agents, debates or summaries failed "
    "(marked failed in the workbook, with the reason; when most failed because the model "
    "repeated the instructions, the workbook's Read me says so); 130 stopped (with --project, "
    "finished debates are kept and a new run with the same settings resumes)."
)
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
    add_agreement_parser(actions, what="debate scores", method="majeval")


add_majeval_parser = add_parser


def _model_options(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--profile", metavar="NAME",
                       help="the model profile (default: the default profile in Settings)")
    which.add_argument("--model", metavar="STRING", help="an ad-hoc litellm model string")


# ----------------------------------------------------------------------------- shared parts
def _profile(args: argparse.Namespace) -> Any:
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


def _say_actual(est: Any, gateways: list[Any]) -> None:
    """The estimate beside what the run used (every gateway of the run together)."""
    from core.llm import Usage
    from core.llm.estimate import compare_lines

    for line in compare_lines(est, Usage.total(g.usage for g in gateways)):
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
    import asyncio

    from core.documents import DocumentError
    from core.majeval import StageError
    from core.majeval import session as st
    from core.majeval.pipeline import copied_most
    from core.tables import TableError

    output_path(args, args.task_file, args.documents)
    task = _task(args.task_file)
    profile = _profile(args)
    with cli_project(args.project, "majeval", open_anyway=args.open_anyway) as project:
        apply_privacy_options(args, project, profile)
        state = st.load_state(project)
        state.task = task
        state.profile = profile.name
        state.keep_references = bool(args.keep_references)
        st.save_state(project, state)
        for path in args.documents:
            try:
                doc = st.add_document(project, state, path, progress=cli_progress())
            except (DocumentError, OSError) as exc:
                raise UserError(str(exc)) from None
            for warning in doc.warnings:
                say(f"evaldesk: note: {doc.name}: {warning}")
        names = {Path(p).name for p in args.documents}
        for name in [n for n in state.documents if n not in names]:
            st.remove_document(project, state, name, _WHO)  # only the documents given now
        gateway = project_gateway(profile, project)
        try:
            made = asyncio.run(st.create_personas_stored(project, state, gateway,
                                                         progress=cli_progress()))
        except StageError as exc:
            if copied_most(exc.failures, len(exc.failures)):
                say(f"evaldesk: {exc.message}")
                return EXIT_SOME_FAILED
            raise UserError(str(exc)) from None
        except ValueError as exc:
            raise UserError(str(exc)) from None
        for failure in made.failures:
            say(f"evaldesk: note: {failure.stage} failed for {failure.where}: "
                f"{failure.message}")
        warning = ""
        if copied_most(made.failures, made.units):
            warning = ("Most of the model's answers repeated the instructions instead of "
                       "answering: this model is too small to make personas; check these "
                       "closely or try a larger model.")
        elif made.too_little:
            warning = made.too_little
        usage = gateway.usage
        readme = [*([("WARNING", warning)] if warning else []), ("Model", profile.model),
                  ("Model calls", (f"{usage.calls} calls, {usage.cache_hits} from the cache, "
                                  f"{usage.prompt_tokens:,} tokens in, "
                                  f"{usage.completion_tokens:,} out"))]
        try:
            st.export_personas(project, state, args.output, readme=readme)
        except TableError as exc:
            raise UserError(exc.message) from None
        say(f"{count(made.perspectives, 'perspective')} from "
            f"{count(len(state.documents), 'document')}, {count(len(made.groups), 'group')}, "
            f"{count(len(made.personas), 'persona')}. Written to {args.output}.")
    if warning:
        say(f"evaldesk: {warning}")
        return EXIT_SOME_FAILED
    return 0


# ------------------------------------------------------------------------------------ run
def _items_setup(project: Any, args: argparse.Namespace) -> tuple[Any, Any]:
    """The items file stored in the project with the columns chosen on the command line (the
    app's guesses for the others), and the items read: as the wizard's items page does."""
    from core.majeval import session as st
    from core.majeval.inputs import ItemsSetup, open_items, read_items

    try:
        setup = st.store_items_file(project, ItemsSetup(), args.items)
    except OSError as exc:
        raise UserError(f'The items file "{args.items}" cannot be read ({exc.strerror}).'
                        ) from None
    if args.header_row is not None and args.header_row < 1:
        raise UserError("--header-row must be a row number, 1 or more.")
    opened = open_items(args.items, setup.model_copy(update={"sheet": args.sheet,
                                                             "header_row": args.header_row}))
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
    read = read_items(args.items, setup)
    return setup, read


def _columns_hint(read: Any, setup: Any) -> str:
    """The options that choose the columns, with what was used: the fix for most item errors."""
    used = ", ".join(f"{role} = “{col}”" for role, col in setup.columns.items() if col)
    return ("Choose the columns with --content-col (the texts to judge), --context-col, --id-col "
            f"and --human-col{f'; used now: {used}' if used else ''}.")


def run_debates(args: argparse.Namespace) -> int:
    import asyncio

    from core.majeval import DebateSettings, lonely_groups
    from core.majeval import repeats as rp
    from core.majeval import session as st
    from core.majeval.inputs import read_dimensions, read_personas
    from core.majeval.report import failure_warning
    from core.tables import TableError

    if not 1 <= args.rounds <= 20:
        raise UserError("--rounds must be a whole number from 1 to 20.")
    from core.majeval.repeats import MAX_REPEATS

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
    output_path(args, args.task_file, args.personas, args.items, args.dimensions)
    task = _task(args.task_file)
    try:
        got = read_personas(args.personas)
    except TableError as exc:
        raise UserError(exc.message) from None
    for issue in got.warnings:
        say(f"evaldesk: note: {issue.message}")
    if got.errors:
        raise UserError("The personas file cannot be used:\n"
                        + "\n".join(f"- {e.message}" for e in got.errors))
    dims = read_dimensions(args.dimensions)
    if dims.errors:
        raise UserError("\n".join(dims.errors))
    profile = _profile(args)
    with cli_project(args.project, "majeval", open_anyway=args.open_anyway) as project:
        apply_privacy_options(args, project, profile)
        state = st.load_state(project)
        state.task = task
        state.profile = profile.name
        state.dimensions, state.scale = dims.dimensions, dims.scale
        state.settings = DebateSettings(rounds=args.rounds, no_debate=args.no_debate,
                                        simple_roles=args.simple_roles)
        state.items, read = _items_setup(project, args)
        for problem in read.problems:
            say(f"evaldesk: note: {problem}")
        if read.errors:
            raise UserError("\n".join(read.errors) + "\n" + _columns_hint(read, state.items))
        state.item_list = read.items
        st.save_state(project, state)
        personas = st.replace_personas(project, got.personas, _WHO, got.descriptions)
        gateways: list[Any] = []

        def llm_for_run(run_id: int) -> Any:
            gateways.append(project_gateway(profile, project, run_id))
            return gateways[-1]

        say(f"{count(len(state.item_list), 'item')} x "
            f"{count(len(got.groups), 'stakeholder group')} "
            f"({count(len(personas), 'agent')}) with {profile.model}.")
        for group in lonely_groups(personas):
            say(f"evaldesk: note: group {group} has one persona, so it cannot debate: its "
                "persona's own evaluation is its score, and its agreement and change are "
                "undefined.")
        if args.conditions:
            return _run_conditions(args, project, state, profile, llm_for_run, gateways)
        est = estimate_or_stop(lambda: st.estimate_run(
            project, state, profile, latency=probe_latency(args, profile),
            repeats=args.repeats), args.dry_run)
        if est is None:
            return 0
        try:
            run = asyncio.run(st.run_debates(project, state, llm_for_run, model=profile,
                                             progress=cli_progress()))
            repeats = _more_repeats(args, project, state, llm_for_run, None, profile,
                                    rp.plain_result(state, run))
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if run.run_id is not None:
            st.keep_estimate(project, run.run_id, est)
        _say_actual(est, gateways)
        try:
            st.export_results(project, run, args.output,
                              n_boot=0 if args.no_bootstrap else st.BOOTSTRAP_SAMPLES,
                              repeats=repeats)
        except TableError as exc:
            raise UserError(exc.message) from None
        _alphas, humans = st.agreement(run, n_boot=0)
    for dim in state.dimensions:
        values = [r.overall[dim.name] for r in run.items if dim.name in r.overall]
        line = f"{dim.name}: {len(values)} of {count(len(run.items), 'item')} scored"
        if values:
            line += f", mean {sum(values) / len(values):.2f}"
        say(line)
    from core.majeval.agreement import BASELINE, LENGTH_GROUP, judge_spreads
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
    for _dim, spread in judge_spreads(run, n_boot=0):
        if spread.flagged:
            say(f"evaldesk: WARNING: {spread.sentence}")
    _say_stability(repeats, state)
    say(f"Results written to {args.output}.")
    warning = failure_warning(run)
    if warning:
        say(f"evaldesk: {warning}")
    if run.failed_units:
        say(f"evaldesk: {len(run.failed_units)} debate(s) had failures; they are marked in the "
            "workbook with the reason.")
        return EXIT_SOME_FAILED
    return 0


def _run_conditions(args: argparse.Namespace, project: Any, state: Any, profile: Any,
                    llm_for_run: Any, gateways: list[Any]) -> int:
    """``majeval run --conditions``: run the missing conditions, write the comparison."""
    import asyncio

    from core.majeval import conditions as cd
    from core.tables import TableError

    names = args.conditions
    est = estimate_or_stop(lambda: cd.estimate_conditions(
        project, state, names, profile, latency=probe_latency(args, profile),
        repeats=args.repeats), args.dry_run)
    if est is None:
        return 0
    try:
        results = asyncio.run(cd.run_conditions(project, state, llm_for_run, names,
                                                model=profile, progress=cli_progress()))
        repeats = _more_repeats(args, project, state, llm_for_run, names, profile, results)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    _say_actual(est, gateways)
    dims = [d.name for d in state.dimensions]
    rows = cd.comparison_rows(results, state.item_list, dims,
                              n_boot=0 if args.no_bootstrap else cd.COMPARISON_BOOT)
    readme = [("Model", profile.model), ("Items", st_items(state)),
              ("Task", state.task)]
    extra = []
    if len(repeats) >= 2:
        from core.majeval.repeats import stability, stability_sheet

        entries = stability(repeats, state.item_list, dims)
        extra.append(stability_sheet(entries))
        readme.append(("Repeats", (f"each call made {len(repeats)} times; the comparison "
                                   "uses repeat 0, the Stability sheet compares the repeats")))
        readme += [(f"Stability: {label}, {dim}", s.sentence) for label, dim, s in entries]
    try:
        cd.write_comparison(args.output, results, state.item_list, dims, rows, readme=readme,
                            extra_sheets=extra)
    except TableError as exc:
        raise UserError(exc.message) from None
    say(f"How the conditions were compared: {cd.HOW_COMPARED}.")
    for line in cd.comparison_summary(rows):
        say(line)
    for row in rows:
        if row["warning"]:
            say(f"evaldesk: WARNING: {row['warning']}")
    _say_stability(repeats, state)
    if not any(r["value"] is not None for r in rows):
        say("evaldesk: note: no agreement could be computed: give the human ratings with "
            "--human-col.")
    say(f"Comparison written to {args.output}.")
    failed = {name: len(r.failed) for name, r in results.items() if r.failed}
    if failed:
        say("evaldesk: some items have no score: " + ", ".join(
            f"{cd.CONDITIONS[n]} {k}" for n, k in failed.items())
            + "; they are marked in the Condition scores sheet with the reason.")
        return EXIT_SOME_FAILED
    return 0


def _more_repeats(args: argparse.Namespace, project: Any, state: Any, llm_for_run: Any,
                  names: Any, profile: Any, first: Any) -> list[Any]:
    """``--repeats N`` > 1: repeats 1..N-1 after the run just made (repeat 0); [] for N = 1."""
    import asyncio

    from core.majeval.repeats import run_repeats

    if args.repeats < 2:
        return []
    say(f"Repeating every call: {args.repeats} repeats in all.")
    return asyncio.run(run_repeats(project, state, llm_for_run, names, args.repeats,
                                   model=profile, progress=cli_progress(), first=first))


def _say_stability(repeats: list[Any], state: Any) -> None:
    from core.majeval.repeats import stability, stability_lines

    if len(repeats) >= 2:
        for line in stability_lines(stability(repeats, state.item_list,
                                              [d.name for d in state.dimensions])):
            say(line)


def st_items(state: Any) -> str:
    from core.majeval.session import items_source

    return f"{len(state.item_list)} items from {items_source(state) or 'the items file'}"
