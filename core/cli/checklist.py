"""``evaldesk checklist build`` and ``evaldesk checklist score`` (InteractEval, headless).

A thin adapter over :mod:`core.interacteval.inputs` (the same readers and column synonyms as the
wizard) and :mod:`core.interacteval.session` (the same project run, unit keys, cache and
export), in the ``--project`` file or a temporary project. Heavy libraries (pandas, litellm) are
imported inside the handlers, so ``evaldesk --version`` stays fast.
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
    say_estimate,
)
from core.words import count

_EPILOG_SCORE = (
    "Exit codes: 0 every text was scored; 1 a problem you can fix (the message says what); "
    "2 bad arguments; 3 the results were written but some texts have no score (they are marked "
    "failed or incomplete in the Scores sheet, with the reason), or most texts failed because "
    "the model repeated the instructions; 130 stopped (with --project, finished texts are kept "
    "and a new run with the same settings resumes)."
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "checklist",
        help="InteractEval: build a Yes/No checklist from think-aloud, score texts with it",
        description="InteractEval (Chu, Kim & Yi, CHI 2025): turn think-aloud notes of people "
        "and models into a Yes/No checklist per dimension, then score texts with it.",
    )
    actions = parser.add_subparsers(dest="checklist_action", metavar="ACTION", required=True)

    build = actions.add_parser(
        "build",
        help="build the checklist of one dimension",
        description="Build the checklist of one dimension: models think aloud over 4 rated "
        "samples (suggested from the samples sheet to span the score range), people's notes are "
        "added, then components, attribute groups, key questions, sub-questions and a review. "
        "The result is an Excel file you can edit and pass to 'checklist score'.",
        epilog="Exit codes: 0 written; 1 a problem you can fix; 2 bad arguments; 3 the model "
        "repeated the instructions instead of answering (a step failed that way, or most "
        "think-aloud models did): try a larger model; 130 stopped.",
    )
    build.add_argument("--dimension", required=True, metavar="NAME",
                       help="the dimension, e.g. Coherence")
    build.add_argument("--definition-file", required=True, metavar="DEF.txt",
                       help="a text file with the definition (rubric) of the dimension")
    build.add_argument("--samples", required=True, metavar="SAMPLES.xlsx",
                       help="rated samples: columns source, text, score, optional dimension")
    build.add_argument("--notes", action="append", default=[], metavar="FILE",
                       help="people's think-aloud notes: a text file (one attribute per line, "
                       "the file name is the author) or a sheet with author and attribute "
                       "columns; repeat for several files")
    build.add_argument("--profile", action="append", default=[], metavar="NAME",
                       help="a model profile from Settings that thinks aloud; repeat for several "
                       "models (the paper used four). The first one also builds the checklist.")
    build.add_argument("--model", action="append", default=[], metavar="STRING",
                       help="an ad-hoc model (litellm model string) that thinks aloud, like "
                       "--profile")
    build.add_argument("--builder-profile", metavar="NAME",
                       help="the profile that builds the checklist (default: the first model)")
    build.add_argument("--no-think-aloud", action="store_true",
                       help="use only the people's notes (no model think-aloud)")
    build.add_argument("--no-validation", action="store_true",
                       help="skip the final review step (the sub-questions are the checklist)")
    build.add_argument("--merge", action="store_true",
                       help="keep the other dimensions already in the output file")
    build.add_argument("--replace-edits", action="store_true",
                       help="with --project: make again the steps a person edited in the "
                       "wizard (their edited versions are kept in the project and can be "
                       "restored there); by default an edited step is kept as it is")
    add_project_option(build, "every model answer")
    build.add_argument("-o", "--output", required=True, metavar="checklist.xlsx")
    build.set_defaults(func=run_build)

    compare = actions.add_parser(
        "compare",
        help="compare checklists built from people's notes, models' think-aloud, or both",
        description="The paper's conditions on your texts: build the dimension's checklist "
        "from the people's notes only (human), the models' think-aloud only (ai) and both "
        "(combined), score the same texts with each, and compare their agreement with the "
        "human scores (Spearman per source document, averaged) with a paired test against "
        "combined. Writes sheets Comparison, Checklists and Scores.",
        epilog="Exit codes: 0 written; 1 a problem you can fix; 2 bad arguments; 3 written, "
        "but a condition could not be built or some texts have no score; 130 stopped.")
    compare.add_argument("--dimension", required=True, metavar="NAME")
    compare.add_argument("--definition-file", required=True, metavar="DEF.txt")
    compare.add_argument("--samples", required=True, metavar="SAMPLES.xlsx")
    compare.add_argument("--notes", action="append", default=[], metavar="FILE",
                         help="people's think-aloud notes, as for 'checklist build'")
    compare.add_argument("--profile", action="append", default=[], metavar="NAME",
                         help="a model profile that thinks aloud (repeatable); the first also "
                         "builds the checklists and scores the texts")
    compare.add_argument("--model", action="append", default=[], metavar="STRING")
    compare.add_argument("--no-validation", action="store_true",
                         help="skip the final review step of each build")
    compare.add_argument("--conditions", default="human,ai,combined", metavar="LIST",
                         help="which conditions, comma-separated: human, ai, combined, and "
                         "single-judge (one model gives each text a 1-5 score with the "
                         "definition, no checklist; default: human,ai,combined)")
    _texts_options(compare)
    add_project_option(compare, "every model answer and scored text")
    add_bootstrap_option(compare, "confidence intervals or paired tests")
    add_repeats_option(compare, "each condition's scoring calls (and the single judge's)",
                       note=" per condition; the checklists are built once")
    add_estimate_options(compare)
    compare.add_argument("-o", "--output", required=True, metavar="comparison.xlsx")
    compare.set_defaults(func=run_compare)

    score = actions.add_parser(
        "score",
        help="score texts with a checklist file",
        description="Score every text on every dimension of a checklist file: a model answers "
        "each question yes or no; score = 1 + 4 × yes / questions (a text with a question "
        "still unanswered after asking again gets no score). With human scores, the "
        "agreement (per source document averaged, pooled, per system) is added.",
        epilog=_EPILOG_SCORE,
    )
    score.add_argument("--checklist", required=True, metavar="checklist.xlsx")
    _texts_options(score)
    score.add_argument("--dimension", action="append", default=[], metavar="NAME",
                       help="score only this dimension of the checklist file (repeatable)")
    which = score.add_mutually_exclusive_group()
    which.add_argument("--profile", metavar="NAME", help="the model profile (default: the "
                       "default profile in Settings)")
    which.add_argument("--model", metavar="STRING", help="an ad-hoc litellm model string")
    score.add_argument("--per-question", action="store_true",
                       help="ask one question per call instead of the whole checklist")
    score.add_argument("--legacy-count", action="store_true",
                       help="reproduce the authors' code: an answer counts as yes only when it "
                       "holds 'Yes' with a capital Y (replication only; a lowercase 'yes' "
                       "counts as no)")
    # no longer used: a text with any question unanswered (after asking again) has no score;
    # still accepted so that older scripts keep working (a note says it is ignored)
    score.add_argument("--max-unanswered", type=float, default=None, help=argparse.SUPPRESS)
    score.add_argument("--include-samples", action="store_true",
                       help="keep texts that are think-aloud samples of their dimension (from "
                       "the checklist file's Samples sheet) in the agreement; by default they "
                       "are left out, since they helped build the checklist")
    add_project_option(score, "every scored text, committed as it is scored,")
    add_repeats_option(score)
    add_estimate_options(score)
    score.add_argument("-o", "--output", required=True, metavar="results.xlsx")
    score.set_defaults(func=run_score)
    add_agreement_parser(actions, what="checklist scores", method="interacteval")


def _texts_options(parser: argparse.ArgumentParser) -> None:
    """The texts to score and their columns (read by :func:`_texts_setup` and :func:`_items`)."""
    parser.add_argument("--items", required=True, metavar="ITEMS.xlsx",
                        help="the texts to score (xlsx, xls or csv)")
    parser.add_argument("--sheet", metavar="NAME", help="the sheet of ITEMS (default: the first)")
    parser.add_argument("--header-row", type=int, metavar="N",
                        help="the row of ITEMS that holds the column names (default: found: the "
                        "first row that reads like a header above rows of data, so a title "
                        "above the table is skipped, and said)")
    parser.add_argument("--text-col", metavar="C", help="column with the texts (default: text)")
    parser.add_argument("--source-col", metavar="C",
                        help="column with the article or input each text is about (default: "
                        "source, if present)")
    parser.add_argument("--source-id-col", metavar="C",
                        help="column naming the source document (default: doc_id / source_id "
                        "if present, else texts with the same source text are grouped)")
    parser.add_argument("--id-col", metavar="C", help="column with a text id (default: id, if "
                        "present, else the row number)")
    parser.add_argument("--system-col", metavar="C",
                        help="column with the system that wrote each text (default: system)")
    parser.add_argument("--human-col", action="append", default=[], metavar="C",
                        help="column with human scores; 'DIMENSION=C' when the checklist has "
                        "several dimensions; repeat per dimension (default: columns named like "
                        "a dimension)")


# ----------------------------------------------------------------------------- shared parts
def _profiles(names: list[str], models: list[str]) -> list[Any]:
    """Profiles from Settings by name, ad-hoc ones from model strings, or the default one."""
    settings = load_settings()
    out = []
    for name in names:
        try:
            out.append(settings.profile(name))
        except KeyError:
            raise UserError(
                f"There is no model profile called '{name}'. Profiles: "
                f"{profile_names(settings)}. Add it in Settings → Models, or use --model with a "
                "model string."
            ) from None
    for model in models:
        out.append(adhoc_profile(model))
    if not out:
        try:
            out.append(settings.profile())
        except KeyError as exc:
            raise UserError(str(exc.args[0])) from None
    return out


def _build_inputs(args: argparse.Namespace) -> tuple[str, str, list[Any], list[Any]]:
    """The dimension's name and definition, the think-aloud samples (suggested to span the
    score range) and the people's notes of ``checklist build`` / ``checklist compare``."""
    from core.interacteval import suggest_samples
    from core.interacteval.inputs import read_notes, read_samples

    name = args.dimension.strip()
    if not name:
        raise UserError("--dimension needs a name, e.g. Coherence.")
    definition = " ".join(read_text_file(args.definition_file, "definition file").split())
    if not definition:
        say(f'evaldesk: note: the definition file "{args.definition_file}" is empty.')

    samples_read = read_samples(args.samples, dimension=name)
    for problem in samples_read.problems:
        say(f"evaldesk: note: {problem}")
    if samples_read.errors:
        raise UserError("\n".join(samples_read.errors))
    samples = suggest_samples(samples_read.samples, dimension=name)
    if not samples:
        raise UserError(f"{Path(args.samples).name} has no sample for {name}.")
    say(f"Samples shown in the think-aloud ({len(samples)} of {len(samples_read.samples)}): "
        + ", ".join(f"row {s.row} (score {s.score:g})" for s in samples))

    notes = []
    for notes_path in args.notes:
        got = read_notes(notes_path)
        for problem in got.problems:
            say(f"evaldesk: note: {problem}")
        if got.errors:
            raise UserError("\n".join(got.errors))
        authors = sorted({a.source for a in got.attributes})
        say(f"{count(len(got.attributes), 'note')} from {', '.join(authors)} "
            f"({Path(notes_path).name})")
        notes.extend(got.attributes)

    return name, definition, samples, notes


# ---------------------------------------------------------------------------------- build
def run_build(args: argparse.Namespace) -> int:
    import asyncio

    from core.interacteval import (
        Dimension,
        StageError,
        session,
        write_checklists,
    )
    from core.interacteval.inputs import read_checklists
    from core.interacteval.pipeline import COPIED, copy_warning
    from core.tables import TableError

    name, definition, samples, notes = _build_inputs(args)
    dimension = Dimension(name=name, definition=definition)
    if args.no_think_aloud and not notes:
        raise UserError("--no-think-aloud needs people's notes: add --notes FILE.")
    profiles = _profiles(args.profile, args.model)
    builder_profile = profiles[0]
    if args.builder_profile:
        builder_profile = _profiles([args.builder_profile], [])[0]

    existing = []
    merging = bool(args.merge and Path(args.output).exists())
    output = output_path(args, args.samples, args.notes, args.definition_file,
                         replace_existing=merging)
    if merging:
        old = read_checklists(output)
        if old.errors:
            raise UserError("--merge: the output file cannot be read:\n" + "\n".join(old.errors))
        existing = [c for c in old.checklists if c.dimension.casefold() != name.casefold()]

    with cli_project(args.project, "interacteval", open_anyway=args.open_anyway) as project:
        apply_privacy_options(args, project, *profiles, builder_profile)
        assessors = {} if args.no_think_aloud else {
            p.name: project_gateway(p, project) for p in profiles
        }
        builder = assessors.get(builder_profile.name) or project_gateway(builder_profile, project)
        # the wizard's choices for this one dimension (not stored: a --project file keeps its
        # own wizard choices); the steps run and are kept as the wizard runs them
        state = session.WizardState(
            dimensions=[dimension], current=name, samples=list(samples),
            chosen={name: list(range(len(samples)))}, assessors=list(assessors),
            builder=builder_profile.name, notes={name: notes},
            validate_questions=not args.no_validation)
        edited = session.edited_steps(project, name, session.BUILD_KEYS)
        edits = "replace" if args.replace_edits else "keep"
        for key, who in edited:
            by = f" by {who}" if who else ""
            say(f"evaldesk: note: the step “{key.replace('_', ' ')}” of {name} was edited{by} "
                + ("in this project: it is made again (the edited version is kept in the "
                   "project)." if edits == "replace" else
                   "in this project: kept as edited (use --replace-edits to make it again)."))
        try:
            build = asyncio.run(session.build_dimension(
                project, state, name, assessors, builder, progress=cli_progress(),
                keep_state=False, edits=edits, who=session.person(load_settings().user_name)))
        except StageError as exc:
            if exc.kind == COPIED:
                say(f"evaldesk: {exc.message}")
                say("evaldesk: nothing was written: a checklist made from a copy of our "
                    "instructions would not be a checklist.")
                return EXIT_SOME_FAILED
            raise UserError(exc.message) from None
        for failure in build.think_aloud.failures:
            say(f"evaldesk: note: think-aloud by {failure.who} failed: {failure.message}")

    readme = [
        ("Dimension", f"{name}: {definition}"),
        ("Think-aloud models", ", ".join(assessors) or "(none: people's notes only)"),
        ("Checklist built by", builder_profile.model),
        ("Samples", f"{Path(args.samples).name}, rows "
         + ", ".join(str(s.row) for s in samples)),
    ]
    try:
        write_checklists(output, [*existing, build.checklist], builds=[build], readme=readme,
                         replace_existing=merging)
    except TableError as exc:
        raise UserError(exc.message) from None
    checklist = build.checklist
    say(f"{name}: {count(len(checklist.items), 'question')} under "
        f"{count(len(checklist.components), 'component')}, from "
        f"{count(len(build.attributes), 'attribute')}. Written to {output}.")
    for remark in [*build.clusters.remarks, *checklist.remarks]:
        say(f"evaldesk: note: {remark}")
    failures = build.think_aloud.failures
    worked = len(assessors) - len(failures)  # one unit per think-aloud model
    warning = copy_warning([""] * worked + [f.kind for f in failures],
                           what="think-aloud models")
    if warning:
        say(f"evaldesk: {warning}")
        return EXIT_SOME_FAILED
    return 0


# ---------------------------------------------------------------------------------- score
def _texts_setup(args: argparse.Namespace, dimensions: list[str]) -> Any:
    """The texts sheet and its columns: the options given, else the wizard's guesses
    (:func:`core.interacteval.inputs.guess_text_columns`, one list of synonyms per role)."""
    from core.interacteval.inputs import TextsSetup, guess_text_columns
    from core.tables import TableError, open_sheet

    if args.header_row is not None and args.header_row < 1:
        raise UserError("--header-row must be a row number, 1 or more.")
    try:
        opened = open_sheet(args.items, args.sheet, header_row=args.header_row)
    except TableError as exc:
        raise UserError(exc.message) from None
    if args.sheet and opened.sheet.casefold() != args.sheet.casefold():
        raise UserError(f'"{Path(args.items).name}" has no sheet called "{args.sheet}". Its '
                        "sheets are: " + ", ".join(f'"{s}"' for s in opened.sheets) + ".")
    sheet, columns = opened.sheet, opened.columns
    if opened.hidden_note:
        say(f"evaldesk: note: {opened.hidden_note}")
    guessed, by_name = guess_text_columns(columns, dimensions)
    mapping: dict[str, str | None] = {
        "text": args.text_col or guessed["text"],
        "source": args.source_col or guessed["source"],
        "source_id": args.source_id_col or guessed["source_id"],
        "id": args.id_col or guessed["id"],
        "system": args.system_col or guessed["system"],
    }
    human: dict[str, str | None] = {}
    for spec in args.human_col:
        if "=" in spec:
            dim, col = (part.strip() for part in spec.split("=", 1))
            match = [d for d in dimensions if d.casefold() == dim.casefold()]
            if not match:
                raise UserError(f"--human-col {spec}: the checklist has no dimension '{dim}' "
                                f"(it has {', '.join(dimensions)}).")
            human[match[0]] = col
        elif len(dimensions) == 1:
            human[dimensions[0]] = spec.strip()
        else:
            raise UserError(f"--human-col {spec}: the checklist has several dimensions; write "
                            "DIMENSION=COLUMN, e.g. --human-col Coherence=coh_mean.")
    if not args.human_col:
        human = {d: c for d, c in by_name.items() if c is not None}
        for dim, col in human.items():
            say(f'Human scores for {dim}: column "{col}" (its name matches the dimension).')
    return TextsSetup(sheet=sheet, columns=mapping, human=human, header_row=args.header_row)


def _items(args: argparse.Namespace, setup: Any) -> list[Any]:
    """Read the texts to score (with human scores) from the items sheet."""
    from core.interacteval.inputs import read_texts

    got = read_texts(args.items, setup)
    for problem in got.problems:
        say(f"evaldesk: note: {problem}")
    if got.errors:
        used = ", ".join(f"{role} = “{col}”" for role, col in setup.columns.items() if col)
        raise UserError("\n".join(got.errors) + "\nChoose the columns with --text-col (the "
                        "texts to score), --source-col, --source-id-col, --id-col, --system-col "
                        f"and --human-col{f'; used now: {used}' if used else ''}.")
    return got.items


def run_score(args: argparse.Namespace) -> int:
    import asyncio

    from core.interacteval import ScoringSettings, session
    from core.interacteval.inputs import read_checklists
    from core.interacteval.repeats import MAX_REPEATS
    from core.tables import TableError

    if not 1 <= args.repeats <= MAX_REPEATS:
        raise UserError(f"--repeats must be a whole number from 1 to {MAX_REPEATS}.")
    output_path(args, args.checklist, args.items)
    got = read_checklists(args.checklist)
    for problem in got.problems:
        say(f"evaldesk: note: {problem}")
    if got.errors:
        raise UserError("The checklist file cannot be used:\n"
                        + "\n".join(f"- {e}" for e in got.errors))
    checklists = got.checklists
    if args.dimension:
        wanted = {d.casefold() for d in args.dimension}
        unknown = wanted - {c.dimension.casefold() for c in checklists}
        if unknown:
            raise UserError(f"The checklist file has no dimension {', '.join(sorted(unknown))} "
                            f"(it has {', '.join(c.dimension for c in checklists)}).")
        checklists = [c for c in checklists if c.dimension.casefold() in wanted]
    if args.max_unanswered is not None:
        say("evaldesk: note: --max-unanswered is no longer used: a text with a question still "
            "unanswered after asking again has no score (it is marked incomplete).")
    setup = _texts_setup(args, [c.dimension for c in checklists])
    items = _items(args, setup)
    settings = ScoringSettings(
        mode="per_question" if args.per_question else "checklist",
        counting="legacy" if args.legacy_count else "answers",
    )
    profile = _profiles([args.profile] if args.profile else [],
                        [args.model] if args.model else [])[0]
    who = session.person(load_settings().user_name)
    with cli_project(args.project, "interacteval", open_anyway=args.open_anyway) as project:
        apply_privacy_options(args, project, profile)
        setup = session.store_texts_file(project, setup, args.items)
        est = estimate_or_stop(lambda: session.estimate_scoring(
            project, checklists, items, settings, profile, latency=probe_latency(args, profile),
            repeats=args.repeats), args.dry_run)
        if est is None:
            return 0
        run_id = session.open_scoring_run(project, checklists, settings, profile)
        gateway = project_gateway(profile, project, run_id)
        say(f"Scoring {count(len(items), 'text')} ({session.texts_line(setup, 0)}) on "
            f"{', '.join(c.dimension for c in checklists)} "
            f"with {profile.model}.")
        run = asyncio.run(session.score_texts(
            checklists, items, gateway, project=project, settings=settings,
            model=profile, run_id=run_id, progress=cli_progress(),
        ))
        repeats, more = _more_repeats(args, project, checklists, items, profile, settings, run)
        usage = _usage_of([gateway, *more])
        say(f"Model calls: {usage.calls} calls, {usage.cache_hits} answers from the cache, "
            f"{usage.prompt_tokens:,} tokens in, {usage.completion_tokens:,} out.")
        from core.llm.estimate import compare_lines

        for line in compare_lines(est, usage):
            say(line)
        try:
            session.export_results(project, run, args.output,
                                   texts=session.texts_line(setup, len(items)),
                                   include_samples=args.include_samples, who=who,
                                   repeats=repeats)
        except TableError as exc:
            raise UserError(exc.message) from None
    for checklist in checklists:
        mine = [s for s in run.scores if s.dimension == checklist.dimension]
        ok = [s.score for s in mine if s.status == "ok" and s.score is not None]
        line = f"{checklist.dimension}: {len(ok)} of {count(len(mine), 'text')} scored"
        if ok:
            line += f", mean {sum(ok) / len(ok):.2f}"
        say(line)
    from core import stats
    from core.interacteval.agreement import human_agreement, judge_spreads

    for result in human_agreement(run.scores, include_samples=args.include_samples):
        grouped = result.per_document is not None and result.per_document.spearman.defined
        if grouped:
            report = result.per_document
            say(f"{result.dimension}: Spearman rho with human scores, per source document "
                f"averaged = {report.spearman.value:.3f} ({report.groups_used} of "
                f"{count(len(report.groups), 'document')} used)")
        else:
            report = result.pooled
            if report.spearman.defined:
                say(f"{result.dimension}: Spearman rho with human scores, pooled over all "
                    f"texts = {report.spearman.value:.3f} ({count(report.n, 'text')})")
        label = stats.GROUPED_LABEL if grouped else stats.POOLED_LABEL
        length = result.length.get(label)
        line = stats.length_sentence(report.spearman.value,
                                     length.spearman.value if length is not None else None,
                                     who="the checklist", symbol="Spearman rho")
        if line:
            say(f"{result.dimension}: {line}")
    for _dimension, spread in judge_spreads(run.scores, n_boot=0):
        if spread.flagged:
            say(f"evaldesk: WARNING: {spread.sentence}")
        if spread.question_sentence:
            say(f"evaldesk: note: {_dimension}: {spread.question_sentence}")
    from core.interacteval.report import samples_summary

    flagged = [sc for sc in run.scores if sc.think_aloud_sample]
    if flagged:
        say("evaldesk: note: " + samples_summary(run, include_samples=args.include_samples)
            + ("" if args.include_samples else " (--include-samples keeps them)") + ".")
    if len(repeats) >= 2:
        from core.interacteval.repeats import stability, stability_lines

        for line in stability_lines(stability(repeats)):
            say(line)
    say(f"Results written to {args.output}.")
    if run.copy_warning:
        say(f"evaldesk: {run.copy_warning}")
    if run.failed:
        say(f"evaldesk: {len(run.failed)} text(s) have no score ({len(run.incomplete)} "
            "incomplete, with questions still unanswered); they are marked in the Scores sheet "
            "with the reason. Scoring again with --project asks only for them.")
        return EXIT_SOME_FAILED
    return 0


def _more_repeats(args: argparse.Namespace, project: Any, checklists: Any, items: Any,
                  profile: Any, settings: Any, first: Any) -> tuple[list[Any], list[Any]]:
    """``--repeats N`` > 1: repeats 1..N-1 after the run just made (repeat 0), and their
    gateways (their calls count in the usage); ([], []) for N = 1."""
    import asyncio

    from core.interacteval.repeats import score_repeats

    gateways: list[Any] = []
    if args.repeats < 2:
        return [], gateways

    def llm_for_run(run_id: int) -> Any:
        gateways.append(project_gateway(profile, project, run_id))
        return gateways[-1]

    say(f"Repeating every call: {args.repeats} repeats in all.")
    return asyncio.run(score_repeats(project, checklists, items, llm_for_run, args.repeats,
                                     settings=settings, model=profile,
                                     progress=cli_progress(), first=first)), gateways


def _usage_of(gateways: list[Any]) -> Any:
    """The usage of several gateways together."""
    from core.llm import Usage

    return Usage.total(g.usage for g in gateways)


# -------------------------------------------------------------------------------- compare


def run_compare(args: argparse.Namespace) -> int:
    import asyncio

    from core.interacteval import Dimension, ScoringSettings, session
    from core.interacteval import conditions as cd
    from core.interacteval.repeats import MAX_REPEATS
    from core.tables import TableError

    if not 1 <= args.repeats <= MAX_REPEATS:
        raise UserError(f"--repeats must be a whole number from 1 to {MAX_REPEATS}.")
    try:
        names = cd.parse_conditions(args.conditions)
    except ValueError as exc:
        raise UserError(f"--conditions: {exc}") from None
    output_path(args, args.samples, args.notes, args.definition_file, args.items)
    name, definition, samples, notes = _build_inputs(args)
    dimension = Dimension(name=name, definition=definition)
    profiles = _profiles(args.profile, args.model)
    scorer = profiles[0]
    setup = _texts_setup(args, [name])
    items = _items(args, setup)
    settings = ScoringSettings()
    state = session.WizardState(
        dimensions=[dimension], current=name, samples=list(samples),
        chosen={name: list(range(len(samples)))}, assessors=[p.name for p in profiles],
        builder=scorer.name, notes={name: list(notes)},
        validate_questions=not args.no_validation, scoring=settings)
    models = session.ConditionModels(
        assessors={p.name: p.model for p in profiles}, builder=scorer.model, scorer=scorer.model,
        profiles={"scorer": scorer, "builder": scorer,
                  **{f"assessor:{p.name}": p for p in profiles}})
    with cli_project(args.project, "interacteval", open_anyway=args.open_anyway) as project:
        apply_privacy_options(args, project, *profiles)
        setup = session.store_texts_file(project, setup, args.items)
        est = session.estimate_conditions(project, state, names, items, models,
                                          {p.name: p for p in profiles},
                                          latency=probe_latency(args, scorer),
                                          repeats=args.repeats)
        repeated = (f"Repeats: each condition's scoring calls are made {args.repeats} times "
                    "(counted in the estimate); the checklists are built once.")
        if est.too_long:  # inputs the model cannot read at once: before any call
            from core.llm.context import refusal

            raise UserError(refusal(est.too_long))
        if say_estimate(est, args.dry_run):
            if args.repeats > 1:
                print(repeated)
            return 0
        if args.repeats > 1:
            say(repeated)
        assessors = {p.name: project_gateway(p, project) for p in profiles}
        gateways = list(assessors.values())

        def scorer_for_run(run_id: int) -> Any:
            gateways.append(project_gateway(scorer, project, run_id))
            return gateways[-1]

        runs = asyncio.run(session.run_conditions(
            project, state, names, items, models, assessors=assessors,
            builder=assessors[scorer.name], scorer_for_run=scorer_for_run,
            progress=cli_progress(), repeats=args.repeats))
        kept = session.load_condition_repeats(project, state, names, items, models,
                                              args.repeats) if args.repeats > 1 else {}
    from types import SimpleNamespace

    from core.llm.estimate import compare_lines

    used = SimpleNamespace(**{k: sum(getattr(g.usage, k, 0) or 0 for g in gateways)
                              for k in ("calls", "prompt_tokens", "completion_tokens", "cost")})
    for line in compare_lines(est, used):
        say(line)
    problems = 0
    for cond, run in runs.items():
        for problem in run.problems:
            problems += 1
            say(f"evaldesk: {cd.CONDITIONS[cond]} could not be built: {problem}")
    rows = cd.comparison_rows({c: r.scores for c, r in runs.items() if r.scores}, items,
                              n_boot=0 if args.no_bootstrap else 2000)
    readme = [("Dimension", f"{name}: {definition}"),
              ("Think-aloud models", ", ".join(p.model for p in profiles)),
              ("Checklists built and texts scored by", scorer.model),
              ("Texts", session.texts_line(setup, len(items)))]
    entries = session.condition_stability(kept)
    extra = []
    if entries:
        from core.interacteval.repeats import stability_sheet

        extra.append(stability_sheet(entries))
        readme.append(("Repeats", (
            f"each condition's scoring calls made {args.repeats} times (repeats 0 to "
            f"{args.repeats - 1}); the checklists were built once; the scores compared are "
            "repeat 0's, the Stability sheet compares the repeats")))
    try:
        cd.write_comparison(args.output, runs, rows, readme=readme, extra_sheets=extra)
    except TableError as exc:
        raise UserError(exc.message) from None
    for dim, line in cd.how_compared(rows):
        say(f"{dim}: {line}.")
    for row in rows:
        say(row["summary"] or (f"{row['condition']}: Spearman {row['compared']} "
                               + ("undefined" if row["value"] is None
                                  else f"{row['value']:.2f}")))
        if row["warning"]:
            say(f"evaldesk: WARNING: {row['dimension']}: {row['warning']}")
    for line in session.condition_stability_lines(entries):
        say(line)
    say(f"Comparison written to {args.output}.")
    failed = sum(len(r.failed) for r in runs.values())
    if problems or failed:
        if failed:
            say(f"evaldesk: {failed} scores are missing (marked in the Scores sheet).")
        return EXIT_SOME_FAILED
    return 0
