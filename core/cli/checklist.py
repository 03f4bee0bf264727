"""``evaldesk checklist build``, ``score`` and ``compare`` (InteractEval, headless).

Argument checks, then the calls the wizard makes on one
:class:`core.interacteval.session.InteractEvalSession` (the same steps, project runs, unit
keys, cache and export), in the ``--project`` file or a temporary project, then the summary
lines. The files are read with :mod:`core.interacteval.inputs` (the same readers and column
synonyms as the wizard). The method and the heavy libraries (pandas, litellm) are imported
inside the handlers, so ``evaldesk --version`` stays fast.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    read_text_file,
    say,
    say_estimate,
)
from core.words import count

if TYPE_CHECKING:  # pragma: no cover
    from core.interacteval.inputs import TextsSetup
    from core.interacteval.model import Attribute, Checklist, ScoredSample, TextItem
    from core.interacteval.pipeline import ChecklistBuild, ScoringRun
    from core.interacteval.session import (
        ConditionRun,
        InteractEvalChoices,
        InteractEvalSession,
    )
    from core.llm import Usage
    from core.llm.estimate import Estimate
    from core.project import Project
    from core.settings import ModelProfile, Settings

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
    _add_build(actions)
    _add_compare(actions)
    _add_score(actions)
    add_agreement_parser(actions, what="checklist scores", method="interacteval")


def _add_build(actions: argparse._SubParsersAction) -> None:
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


def _add_compare(actions: argparse._SubParsersAction) -> None:
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


def _add_score(actions: argparse._SubParsersAction) -> None:
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
def _profiles(settings: Settings, names: list[str], models: list[str]) -> list[ModelProfile]:
    """Profiles from Settings by name, ad-hoc ones from model strings, or the default one."""
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


def _with_profiles(settings: Settings, profiles: list[ModelProfile]) -> Settings:
    """``settings`` with the ad-hoc profiles of ``--model`` added (the session finds every
    model of its choices there by name)."""
    given = {p.name: p for p in profiles}
    return settings.model_copy(update={"profiles": [
        *[p for p in settings.profiles if p.name not in given], *given.values()]})


def _session(project: Project, choices: InteractEvalChoices, settings: Settings,
             profiles: list[ModelProfile],
             checklists: list[Checklist] | None = None) -> InteractEvalSession:
    """The command's session over its own choices (a ``--project`` file keeps the wizard's)."""
    from core.interacteval.session import InteractEvalSession

    return InteractEvalSession.for_command(project, choices,
                                           settings=_with_profiles(settings, profiles),
                                           checklists=checklists)


def _check_repeats(args: argparse.Namespace) -> None:
    from core.interacteval.session import MAX_REPEATS

    if not 1 <= args.repeats <= MAX_REPEATS:
        raise UserError(f"--repeats must be a whole number from 1 to {MAX_REPEATS}.")


def _build_inputs(args: argparse.Namespace) -> tuple[str, str, list[ScoredSample],
                                                     list[Attribute]]:
    """The dimension's name and definition, the think-aloud samples (suggested to span the
    score range) and the people's notes of ``checklist build`` / ``checklist compare``."""
    from core.interacteval.inputs import read_samples
    from core.interacteval.samples import suggest_samples

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
    return name, definition, samples, _notes(args.notes)


def _notes(paths: list[str]) -> list[Attribute]:
    """The people's think-aloud notes of every ``--notes`` file."""
    from core.interacteval.inputs import read_notes

    notes = []
    for notes_path in paths:
        got = read_notes(notes_path)
        for problem in got.problems:
            say(f"evaldesk: note: {problem}")
        if got.errors:
            raise UserError("\n".join(got.errors))
        authors = sorted({a.source for a in got.attributes})
        say(f"{count(len(got.attributes), 'note')} from {', '.join(authors)} "
            f"({Path(notes_path).name})")
        notes.extend(got.attributes)
    return notes


def _dimension_choices(args: argparse.Namespace, name: str, definition: str,
                       samples: list[ScoredSample], notes: list[Attribute],
                       assessors: list[ModelProfile], builder: ModelProfile
                       ) -> InteractEvalChoices:
    """The choices of ``checklist build`` / ``compare``: one dimension, its samples (all
    shown), the people's notes, the models that think aloud and the one that builds."""
    from core.interacteval.model import Dimension
    from core.interacteval.session import InteractEvalChoices

    return InteractEvalChoices(
        dimensions=[Dimension(name=name, definition=definition)], current=name,
        samples=list(samples), chosen={name: list(range(len(samples)))},
        assessors=list(dict.fromkeys(p.name for p in assessors)), builder=builder.name,
        notes={name: list(notes)}, validate_questions=not args.no_validation)


# ---------------------------------------------------------------------------------- build
def run_build(args: argparse.Namespace) -> int:
    import asyncio

    from core.interacteval.model import StageError
    from core.interacteval.pipeline import COPIED

    name, definition, samples, notes = _build_inputs(args)
    if args.no_think_aloud and not notes:
        raise UserError("--no-think-aloud needs people's notes: add --notes FILE.")
    settings = load_settings()
    profiles = _profiles(settings, args.profile, args.model)
    builder = _profiles(settings, [args.builder_profile], [])[0] if args.builder_profile \
        else profiles[0]
    output, existing, merging = _merge_target(args, name)
    assessors = [] if args.no_think_aloud else profiles
    choices = _dimension_choices(args, name, definition, samples, notes, assessors, builder)
    with cli_project(args.project, "interacteval", open_anyway=args.open_anyway) as project:
        # the steps run and are kept as the wizard runs them; the project's own choices stay
        apply_privacy_options(args, project, *profiles, builder)
        session = _session(project, choices, settings, [*profiles, builder])
        edits = "replace" if args.replace_edits else "keep"
        _say_edited(session, name, edits)
        try:
            build = asyncio.run(session.build_dimension(name, edits=edits,
                                                        progress=cli_progress()))
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
        ("Think-aloud models", ", ".join(choices.assessors) or "(none: people's notes only)"),
        ("Checklist built by", builder.model),
        ("Samples", f"{Path(args.samples).name}, rows "
         + ", ".join(str(s.row) for s in samples)),
    ]
    _write_checklists(output, [*existing, build.checklist], build, readme, merging)
    return _say_build(build, output, len(choices.assessors))


def _merge_target(args: argparse.Namespace, name: str) -> tuple[Path, list[Checklist], bool]:
    """The output file, the other dimensions' checklists kept from it (``--merge``) and
    whether it is being merged into."""
    from core.interacteval.inputs import read_checklists

    merging = bool(args.merge and Path(args.output).exists())
    output = output_path(args, args.samples, args.notes, args.definition_file,
                         replace_existing=merging)
    if not merging:
        return output, [], False
    old = read_checklists(output)
    if old.errors:
        raise UserError("--merge: the output file cannot be read:\n" + "\n".join(old.errors))
    return output, [c for c in old.checklists if c.dimension.casefold() != name.casefold()], True


def _say_edited(session: InteractEvalSession, name: str, edits: str) -> None:
    """A note per step of ``name`` a person edited in the project: kept, or made again."""
    from core.interacteval.session import BUILD_KEYS

    for key, who in session.edited_steps(name, BUILD_KEYS):
        by = f" by {who}" if who else ""
        say(f"evaldesk: note: the step “{key.replace('_', ' ')}” of {name} was edited{by} "
            + ("in this project: it is made again (the edited version is kept in the "
               "project)." if edits == "replace" else
               "in this project: kept as edited (use --replace-edits to make it again)."))


def _write_checklists(output: Path, checklists: list[Checklist], build: ChecklistBuild,
                      readme: list[tuple[str, str]], merging: bool) -> None:
    from core.interacteval.report import write_checklists
    from core.tables import TableError

    try:
        write_checklists(output, checklists, builds=[build], readme=readme,
                         replace_existing=merging)
    except TableError as exc:
        raise UserError(exc.message) from None


def _say_build(build: ChecklistBuild, output: Path, assessors: int) -> int:
    """The summary lines of ``checklist build``; its exit code."""
    from core.interacteval.pipeline import copy_warning

    checklist = build.checklist
    say(f"{build.dimension.name}: {count(len(checklist.items), 'question')} under "
        f"{count(len(checklist.components), 'component')}, from "
        f"{count(len(build.attributes), 'attribute')}. Written to {output}.")
    for remark in [*build.clusters.remarks, *checklist.remarks]:
        say(f"evaldesk: note: {remark}")
    failures = build.think_aloud.failures
    worked = assessors - len(failures)  # one unit per think-aloud model
    warning = copy_warning([""] * worked + [f.kind for f in failures],
                           what="think-aloud models")
    if warning:
        say(f"evaldesk: {warning}")
        return EXIT_SOME_FAILED
    return 0


# ---------------------------------------------------------------------------------- score
def _texts_setup(args: argparse.Namespace, dimensions: list[str]) -> TextsSetup:
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


def _items(args: argparse.Namespace, setup: TextsSetup) -> list[TextItem]:
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


def _checklists(args: argparse.Namespace) -> list[Checklist]:
    """The checklists of ``--checklist`` (only the ``--dimension`` ones, when given)."""
    from core.interacteval.inputs import read_checklists

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
    return checklists


def _score_choices(args: argparse.Namespace, checklists: list[Checklist],
                   profile: ModelProfile) -> InteractEvalChoices:
    """The choices of ``checklist score``: the checklists' dimensions, the scoring options,
    the model and the repeats."""
    from core.interacteval.model import Dimension, ScoringSettings
    from core.interacteval.session import InteractEvalChoices

    return InteractEvalChoices(
        dimensions=[Dimension(name=c.dimension, definition=c.definition) for c in checklists],
        scorer=profile.name, repeats=args.repeats, include_samples=args.include_samples,
        scoring=ScoringSettings(mode="per_question" if args.per_question else "checklist",
                                counting="legacy" if args.legacy_count else "answers"))


def run_score(args: argparse.Namespace) -> int:
    import asyncio

    from core.interacteval.repeats import stability, stability_lines
    from core.interacteval.session import texts_line
    from core.tables import TableError

    _check_repeats(args)
    output_path(args, args.checklist, args.items)
    checklists = _checklists(args)
    if args.max_unanswered is not None:
        say("evaldesk: note: --max-unanswered is no longer used: a text with a question still "
            "unanswered after asking again has no score (it is marked incomplete).")
    setup = _texts_setup(args, [c.dimension for c in checklists])
    items = _items(args, setup)
    settings = load_settings()
    profile = _profiles(settings, [args.profile] if args.profile else [],
                        [args.model] if args.model else [])[0]
    choices = _score_choices(args, checklists, profile)
    with cli_project(args.project, "interacteval", open_anyway=args.open_anyway) as project:
        apply_privacy_options(args, project, profile)
        session = _session(project, choices, settings, [profile], checklists)
        session.store_input("texts", args.items)
        session.use_texts(items, setup)
        est = estimate_or_stop(lambda: session.estimate(latency=probe_latency(args, profile)),
                               args.dry_run)
        if est is None:
            return 0
        say(f"Scoring {count(len(items), 'text')} ({texts_line(session.choices.texts, 0)}) "
            f"on {', '.join(c.dimension for c in checklists)} with {profile.model}.")
        if args.repeats > 1:
            say(f"Repeating every call: {args.repeats} repeats in all.")
        run = asyncio.run(session.run(progress=cli_progress()))
        _say_usage(est, session.usage)
        try:
            session.export(args.output, who=session.who)
        except TableError as exc:
            raise UserError(exc.message) from None
        repeats = session.repeats_of(run)
    _say_scores(run, include_samples=args.include_samples)
    if len(repeats) >= 2:
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


def _say_usage(est: Estimate, usage: Usage | None) -> None:
    """The run's model calls, and the estimate beside them."""
    from core.llm.estimate import compare_lines

    if usage is None:
        return
    say(f"Model calls: {usage.calls} calls, {usage.cache_hits} answers from the cache, "
        f"{usage.prompt_tokens:,} tokens in, {usage.completion_tokens:,} out.")
    for line in compare_lines(est, usage):
        say(line)


def _say_scores(run: ScoringRun, *, include_samples: bool) -> None:
    """Per dimension: how many texts were scored, the mean, the agreement with the human
    scores (and with the texts' length), a judge that does not tell texts apart, and the
    think-aloud samples among the texts."""
    from core import stats
    from core.interacteval.agreement import human_agreement, judge_spreads
    from core.interacteval.report import samples_summary

    for checklist in run.checklists:
        mine = [s for s in run.scores if s.dimension == checklist.dimension]
        ok = [s.score for s in mine if s.status == "ok" and s.score is not None]
        line = f"{checklist.dimension}: {len(ok)} of {count(len(mine), 'text')} scored"
        say(line + (f", mean {sum(ok) / len(ok):.2f}" if ok else ""))
    for result in human_agreement(run.scores, include_samples=include_samples):
        grouped = result.per_document is not None and result.per_document.spearman.defined
        report: Any = result.per_document if grouped else result.pooled
        if grouped:
            say(f"{result.dimension}: Spearman rho with human scores, per source document "
                f"averaged = {report.spearman.value:.3f} ({report.groups_used} of "
                f"{count(len(report.groups), 'document')} used)")
        elif report.spearman.defined:
            say(f"{result.dimension}: Spearman rho with human scores, pooled over all "
                f"texts = {report.spearman.value:.3f} ({count(report.n, 'text')})")
        length = result.length.get(stats.GROUPED_LABEL if grouped else stats.POOLED_LABEL)
        line = stats.length_sentence(report.spearman.value,
                                     length.spearman.value if length is not None else None,
                                     who="the checklist", symbol="Spearman rho")
        if line:
            say(f"{result.dimension}: {line}")
    for dimension, spread in judge_spreads(run.scores, n_boot=0):
        if spread.flagged:
            say(f"evaldesk: WARNING: {spread.sentence}")
        if spread.question_sentence:
            say(f"evaldesk: note: {dimension}: {spread.question_sentence}")
    if any(sc.think_aloud_sample for sc in run.scores):
        say("evaldesk: note: " + samples_summary(run, include_samples=include_samples)
            + ("" if include_samples else " (--include-samples keeps them)") + ".")


# -------------------------------------------------------------------------------- compare
def run_compare(args: argparse.Namespace) -> int:
    import asyncio

    from core.llm.estimate import compare_lines

    names = _conditions(args)
    output_path(args, args.samples, args.notes, args.definition_file, args.items)
    name, definition, samples, notes = _build_inputs(args)
    settings = load_settings()
    profiles = _profiles(settings, args.profile, args.model)
    scorer = profiles[0]
    setup = _texts_setup(args, [name])
    items = _items(args, setup)
    choices = _dimension_choices(args, name, definition, samples, notes, profiles, scorer)
    choices.condition_repeats = args.repeats
    with cli_project(args.project, "interacteval", open_anyway=args.open_anyway) as project:
        apply_privacy_options(args, project, *profiles)
        session = _session(project, choices, settings, profiles)
        session.store_input("texts", args.items)
        session.use_texts(items, setup)
        est = session.estimate_conditions(names, latency=probe_latency(args, scorer))
        if _stop_at_estimate(args, est):
            return 0
        runs = asyncio.run(session.run_conditions(names, progress=cli_progress()))
        usage = session.usage
        rows, entries = _write_comparison(session, args, runs)
    if usage is not None:
        for line in compare_lines(est, usage):
            say(line)
    return _say_comparison(args, runs, rows, entries)


def _conditions(args: argparse.Namespace) -> list[str]:
    """The names of ``--conditions`` (and ``--repeats`` checked)."""
    from core.interacteval.conditions import parse_conditions

    _check_repeats(args)
    try:
        return parse_conditions(args.conditions)
    except ValueError as exc:
        raise UserError(f"--conditions: {exc}") from None


def _stop_at_estimate(args: argparse.Namespace, est: Estimate) -> bool:
    """Say the estimate (refusing inputs too long for the model, before any call); True when
    ``--dry-run`` stops there."""
    repeated = (f"Repeats: each condition's scoring calls are made {args.repeats} times "
                "(counted in the estimate); the checklists are built once.")
    if est.too_long:  # inputs the model cannot read at once: before any call
        from core.llm.context import refusal

        raise UserError(refusal(est.too_long))
    if say_estimate(est, args.dry_run):
        if args.repeats > 1:
            print(repeated)
        return True
    if args.repeats > 1:
        say(repeated)
    return False


def _write_comparison(session: InteractEvalSession, args: argparse.Namespace,
                      runs: dict[str, ConditionRun]
                      ) -> tuple[list[dict[str, Any]], list[tuple[str, str, Any]]]:
    from core.tables import TableError

    try:
        return session.export_conditions(args.output, runs, who=session.who,
                                         n_boot=0 if args.no_bootstrap else 2000)
    except TableError as exc:
        raise UserError(exc.message) from None


def _say_comparison(args: argparse.Namespace, runs: dict[str, ConditionRun],
                    rows: list[dict[str, Any]], entries: list[tuple[str, str, Any]]) -> int:
    """The summary lines of ``checklist compare``; its exit code."""
    from core.interacteval.conditions import CONDITIONS, how_compared
    from core.interacteval.session import condition_stability_lines

    problems = 0
    for cond, run in runs.items():
        for problem in run.problems:
            problems += 1
            say(f"evaldesk: {CONDITIONS[cond]} could not be built: {problem}")
    for dim, line in how_compared(rows):
        say(f"{dim}: {line}.")
    for row in rows:
        say(row["summary"] or (f"{row['condition']}: Spearman {row['compared']} "
                               + ("undefined" if row["value"] is None
                                  else f"{row['value']:.2f}")))
        if row["warning"]:
            say(f"evaldesk: WARNING: {row['dimension']}: {row['warning']}")
    for line in condition_stability_lines(entries):
        say(line)
    say(f"Comparison written to {args.output}.")
    failed = sum(len(r.failed) for r in runs.values())
    if problems or failed:
        if failed:
            say(f"evaldesk: {failed} scores are missing (marked in the Scores sheet).")
        return EXIT_SOME_FAILED
    return 0
