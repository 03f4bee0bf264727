"""``evaldesk majeval personas`` and ``evaldesk majeval run`` (MAJ-Eval, headless).

Same code path as the wizard. Heavy libraries (pandas, litellm) are imported inside the
handlers, so ``evaldesk --version`` stays fast.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.cli import COMMANDS, EXIT_SOME_FAILED, UserError
from core.method_cli import (
    adhoc_profile,
    cli_progress,
    load_settings,
    open_project,
    profile_names,
    project_gateway,
    read_text_file,
    say,
)

_EPILOG_RUN = (
    "Exit codes: 0 every debate finished; 1 a problem you can fix (the message says what); "
    "2 bad arguments; 3 the results were written but some agents, debates or summaries failed "
    "(marked failed in the workbook, with the reason; when most failed because the model "
    "repeated the instructions, the workbook's Read me says so); 130 stopped (with --project, "
    "finished debates are kept and a new run with the same settings resumes)."
)


def add_majeval_parser(subparsers: argparse._SubParsersAction) -> None:
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
    personas.add_argument("--project", metavar="FILE.evaldesk",
                          help="keep every model answer and the personas in this project file")
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
    run.add_argument("--task-file", required=True, metavar="TASK.txt")
    run.add_argument("--content-col", metavar="C",
                     help="column with the content to evaluate (default: content, or a column "
                     "named like answer / summary / output)")
    run.add_argument("--context-col", metavar="C",
                     help="column with its context, e.g. the story or source (default: "
                     "context, if present)")
    run.add_argument("--id-col", metavar="C", help="column with an item id (default: id, if "
                     "present, else the row number)")
    run.add_argument("--human-col", action="append", default=[], metavar="C",
                     help="a column with human ratings ('NAME=C' names the human dimension; "
                     "default: the column name); repeat per column")
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
    run.add_argument("--project", metavar="FILE.evaldesk",
                     help="commit every finished debate to this project file; a re-run with the "
                     "same settings resumes and makes no repeat calls")
    run.add_argument("--no-bootstrap", action="store_true",
                     help="no bootstrap confidence intervals for the correlations (faster)")
    run.add_argument("-o", "--output", required=True, metavar="results.xlsx")
    run.set_defaults(func=run_debates)


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


def _task(path: str) -> str:
    task = " ".join(read_text_file(path, "task file").split())
    if not task:
        raise UserError(f'The task file "{path}" is empty. Write one paragraph: what is '
                        "evaluated, and for whom.")
    return task


# ------------------------------------------------------------------------------- personas
def run_personas(args: argparse.Namespace) -> int:
    import asyncio

    from core.documents import DocumentError, load_document
    from core.majeval import StageError, create_personas, write_personas
    from core.majeval.pipeline import copied_most
    from core.tables import TableError

    task = _task(args.task_file)
    documents = []
    for path in args.documents:
        try:
            doc = load_document(path, progress=cli_progress())
        except DocumentError as exc:
            raise UserError(str(exc)) from None
        for warning in doc.warnings:
            say(f"evaldesk: note: {doc.name}: {warning}")
        documents.append(doc)
    profile = _profile(args)
    project = open_project(args.project, "majeval")
    try:
        gateway = project_gateway(profile, project)
        try:
            made = asyncio.run(create_personas(documents, task, gateway, project=project,
                                               progress=cli_progress()))
        except StageError as exc:
            if copied_most(exc.failures, len(exc.failures)):
                say(f"evaldesk: {exc.message}")
                return EXIT_SOME_FAILED
            raise UserError(str(exc)) from None
        except ValueError as exc:
            raise UserError(str(exc)) from None
    finally:
        if project is not None:
            project.close()
    for failure in made.failures:
        say(f"evaldesk: note: {failure.stage} failed for {failure.where}: {failure.message}")
    found = sum(len(e.perspectives) for e in made.extractions)
    units = sum(e.chunks for e in made.extractions) + len(made.groups)
    warning = ""
    if copied_most(made.failures, units):
        warning = ("Most of the model's answers repeated the instructions instead of answering: "
                   "this model is too small to make personas; check these closely or try a "
                   "larger model.")
    usage = gateway.usage
    readme = [*([("WARNING", warning)] if warning else []),
              ("Documents", ", ".join(d.name for d in documents)), ("Task", task),
              ("Model", profile.model),
              ("Model calls", (f"{usage.calls} calls, {usage.cache_hits} from the cache, "
                              f"{usage.prompt_tokens:,} tokens in, "
                              f"{usage.completion_tokens:,} out"))]
    try:
        write_personas(args.output, made.personas, readme=readme,
                       descriptions={g.name: g.description for g in made.groups})
    except TableError as exc:
        raise UserError(exc.message) from None
    say(f"{found} perspectives from {len(documents)} documents, {len(made.groups)} groups, "
        f"{len(made.personas)} personas. Written to {args.output}.")
    if warning:
        say(f"evaldesk: {warning}")
        return EXIT_SOME_FAILED
    return 0


# ------------------------------------------------------------------------------------ run
def _dimensions(path: str | None) -> tuple[list[Any], Any]:
    from core.majeval import DEFAULT_DIMENSION, Dimension, Scale
    from core.tables import TableError, guess_mapping, map_columns, read_table

    if not path:
        return [DEFAULT_DIMENSION], Scale()
    try:
        read = read_table(path)
    except TableError as exc:
        raise UserError(exc.message) from None
    guessed = guess_mapping(list(read.frame.columns), {
        "dimension": ["name", "criterion", "aspect"], "definition": ["description", "rubric"],
        "min": ["minimum", "lowest"], "max": ["maximum", "highest"]})
    mapped = map_columns(read, guessed, required=["dimension"])
    if mapped.errors:
        raise UserError("\n".join(i.message for i in mapped.errors))
    dims, lows, highs, problems = [], set(), set(), []
    for row in mapped.rows:
        name = " ".join(mapped.frame.at[row, "dimension"].split())
        if not name:
            continue
        definition = mapped.frame.at[row, "definition"] if "definition" in mapped.frame else ""
        dims.append(Dimension(name=name, definition=" ".join(definition.split())))
        for role, bucket in (("min", lows), ("max", highs)):
            raw = mapped.frame.at[row, role].strip() if role in mapped.frame else ""
            if raw:
                try:
                    bucket.add(int(float(raw)))
                except ValueError:
                    problems.append(f"{mapped.where(row, role)}: “{raw}” is not a whole number.")
    if problems:
        raise UserError("\n".join(problems))
    if not dims:
        raise UserError(f"{read.describe()} has no dimensions.")
    if len({d.name.casefold() for d in dims}) != len(dims):
        raise UserError(f"{read.describe()}: every dimension needs its own name.")
    if len(lows) > 1 or len(highs) > 1:
        raise UserError(f"{read.describe()}: all dimensions share one scale; give the same min "
                        "and max on every row.")
    low, high = (lows or {1}).pop(), (highs or {5}).pop()
    if high <= low:
        raise UserError(f"{read.describe()}: max ({high}) must be larger than min ({low}).")
    labels = Scale().labels if (low, high) == (1, 5) else {}
    return dims, Scale(minimum=low, maximum=high, labels=labels)


def _items(args: argparse.Namespace) -> list[Any]:
    from core.majeval import Item
    from core.tables import (
        TableError,
        cell_number,
        guess_mapping,
        guess_named_column,
        map_columns,
        read_table,
    )

    try:
        read = read_table(args.items, args.sheet)
    except TableError as exc:
        raise UserError(exc.message) from None
    columns = list(read.frame.columns)
    guessed = guess_mapping(columns, {
        "content": ["answer", "summary", "output", "generated", "qa pair", "response", "text"],
        "context": ["story", "source", "section text", "target", "input", "article"]})
    guessed_id = guess_named_column(columns, {"id", "itemid", "item", "rowid"},
                                    guessed.values())
    mapping: dict[str, str | None] = {
        "content": args.content_col or guessed["content"],
        "context": args.context_col or guessed["context"],
        "id": args.id_col or guessed_id,
    }
    humans: dict[str, str] = {}
    for spec in args.human_col:
        name, _, col = spec.partition("=") if "=" in spec else (spec, "", spec)
        humans[name.strip()] = col.strip()
    for name, col in humans.items():
        mapping[f"human:{name}"] = col
    mapped = map_columns(read, mapping, required=["content"])
    for issue in mapped.warnings:
        say(f"evaldesk: note: {issue.message}")
    if mapped.errors:
        raise UserError("\n".join(i.message for i in mapped.errors))
    frame = mapped.frame
    items, seen, problems = [], {}, []
    for row in mapped.rows:
        content = frame.at[row, "content"]
        if not content.strip():
            say(f"evaldesk: note: {mapped.where(row, 'content')}: empty; the row is skipped.")
            continue
        item_id = (frame.at[row, "id"].strip() if "id" in frame else "") or f"row {row}"
        if item_id in seen:
            problems.append(f"{mapped.where(row, 'id')}: the id “{item_id}” is also in row "
                            f"{seen[item_id]}; every item needs its own id.")
            continue
        seen[item_id] = row
        human: dict[str, float] = {}
        for name in humans:
            raw = frame.at[row, f"human:{name}"].strip()
            if not raw:
                continue
            value = cell_number(raw)
            if value is not None:
                human[name] = value
            else:
                say(f"evaldesk: note: {mapped.where(row, f'human:{name}')}: “{raw}” is not a "
                    f"number; this item has no human rating for {name}.")
        items.append(Item(id=item_id, content=content,
                          context=frame.at[row, "context"] if "context" in frame else "",
                          human=human, row=row))
    if problems:
        raise UserError("\n".join(problems))
    if not items:
        raise UserError(f"{read.describe()} has no items to evaluate.")
    return items


def run_debates(args: argparse.Namespace) -> int:
    import asyncio

    from core.majeval import (
        DebateSettings,
        evaluate,
        human_agreement,
        lonely_groups,
        open_evaluation_run,
        read_personas,
        within_group_alpha,
        write_results,
    )
    from core.majeval.report import failure_warning
    from core.tables import TableError

    if not 1 <= args.rounds <= 20:
        raise UserError("--rounds must be a whole number from 1 to 20.")
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
    dimensions, scale = _dimensions(args.dimensions)
    items = _items(args)
    settings = DebateSettings(rounds=args.rounds, no_debate=args.no_debate,
                              simple_roles=args.simple_roles)
    profile = _profile(args)
    project = open_project(args.project, "majeval")
    try:
        run_id = None
        if project is not None:
            run_id = open_evaluation_run(project, task, dimensions, scale, settings,
                                         profile.model)
        gateway = project_gateway(profile, project, run_id)
        say(f"{len(items)} items x {len(got.groups)} stakeholder groups "
            f"({len(got.personas)} agents) with {profile.model}.")
        for group in lonely_groups(got.personas):
            say(f"evaldesk: note: group {group} has one persona, so it cannot debate: its "
                "persona's own evaluation is its score, and its agreement and change are "
                "undefined.")
        try:
            run = asyncio.run(evaluate(got.personas, items, task, gateway,
                                       dimensions=dimensions, scale=scale, settings=settings,
                                       model=profile.model, project=project, run_id=run_id,
                                       group_descriptions=got.descriptions,
                                       progress=cli_progress()))
        except ValueError as exc:
            raise UserError(str(exc)) from None
    finally:
        if project is not None:
            project.close()
    run.items_source = Path(args.items).name + (f", sheet {args.sheet}" if args.sheet else "")
    alphas = within_group_alpha(run)
    humans = human_agreement(run, n_boot=0 if args.no_bootstrap else 1000)
    usage = gateway.usage
    readme = [("Personas file", str(args.personas)), ("Items file", str(args.items)),
              ("Model calls", (f"{usage.calls} calls, {usage.cache_hits} from the cache, "
                              f"{usage.prompt_tokens:,} tokens in, "
                              f"{usage.completion_tokens:,} out"))]
    try:
        write_results(args.output, run, alphas=alphas, humans=humans, readme=readme)
    except TableError as exc:
        raise UserError(exc.message) from None
    for dim in dimensions:
        values = [r.overall[dim.name] for r in run.items if dim.name in r.overall]
        line = f"{dim.name}: {len(values)} of {len(run.items)} items scored"
        if values:
            line += f", mean {sum(values) / len(values):.2f}"
        say(line)
    for h in humans:
        if h.group.startswith("All groups") and h.stage == "after debate" \
                and h.report.spearman.defined:
            say(f"Spearman rho, overall {h.dimension} vs human {h.human_dimension}: "
                f"{h.report.spearman.value:.3f} (n = {h.report.n})")
    say(f"Results written to {args.output}.")
    warning = failure_warning(run)
    if warning:
        say(f"evaldesk: {warning}")
    if run.failed_units:
        say(f"evaldesk: {len(run.failed_units)} debate(s) had failures; they are marked in the "
            "workbook with the reason.")
        return EXIT_SOME_FAILED
    return 0


add_parser = add_majeval_parser
