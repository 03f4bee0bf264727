"""What the commands share: notes on stderr, reading a text file given on the command line, the
model settings and ad-hoc ``--model`` profiles, the project a command works in (``--project`` or
a temporary one) and the progress line.

Nothing here imports a heavy library (litellm, pandas, torch are imported by the calls that
need them), and ``evaldesk --version`` and ``evaldesk --help`` do not import this module at all.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.cli import UserError, stderr_progress
from core.llm import Gateway, LLMFailure, gateway_for
from core.llm import estimate as llm_estimate
from core.llm.context import refusal
from core.llm.estimate import Estimate, Latency
from core.project import PROJECT_SUFFIX, Project, ProjectError, ProjectLocked
from core.runs import Progress
from core.settings import ModelProfile, Settings, SettingsStore
from core.tables import TableError, check_export_target

__all__ = [
    "add_bootstrap_option",
    "add_estimate_options",
    "add_open_anyway_option",
    "add_privacy_options",
    "add_project_option",
    "add_repeats_option",
    "adhoc_profile",
    "apply_privacy_options",
    "cli_progress",
    "cli_project",
    "estimate_or_stop",
    "load_settings",
    "open_project",
    "output_path",
    "probe_latency",
    "profile_names",
    "project_gateway",
    "read_text_file",
    "say",
    "say_estimate",
]


def say(text: str) -> None:
    """One line for the user on stderr (stdout is kept for results)."""
    print(text, file=sys.stderr)


def load_settings() -> Settings:
    """The user's settings; a problem reading them is printed as a note (defaults are used)."""
    store = SettingsStore()
    settings = store.load()
    if store.problem:
        say(f"evaldesk: note: {store.problem}")
    return settings


def profile_names(settings: Settings) -> str:
    """The model profiles in Settings, quoted, for a message ("none" when there are none)."""
    return ", ".join(f"'{p.name}'" for p in settings.profiles) or "none"


def adhoc_profile(model: str) -> ModelProfile:
    """A profile for a ``--model`` string, named after the model."""
    model = model.strip()
    if not model:
        raise UserError("--model needs a model string, e.g. openai/gpt-4o-mini.")
    return ModelProfile(name=model, model=model)


#: What the command line adds to "already open" (the app offers an "Open anyway" button).
OPEN_ANYWAY_HINT = (
    " If you are sure nobody is using it (the other EvalDesk is stuck, or its computer "
    "stopped), run the command again with --open-anyway."
)


def open_project(path: str | None, method: str, *, open_anyway: bool = False) -> Project | None:
    """The ``--project`` file, opened, or created for ``method`` when it does not exist yet or
    is empty (None without ``--project``). ``open_anyway``: open it even while another EvalDesk
    has it open (``--open-anyway``). Results left in it by a deleted run are said as a note."""
    if not path:
        return None
    try:
        # an empty file is a project whose creation was cut off (killed): it is made anew
        if Path(path).exists() and Path(path).stat().st_size > 0:
            project = Project.open(path, break_lock=open_anyway)
            try:
                if not project.method:  # the method is recorded when it is first used
                    project.set_method(method)
                orphans = project.orphaned_results()
            except BaseException:
                project.close()
                raise
            if orphans:
                say(f"evaldesk: note: {path} holds {orphans} results that belong to no run (their "
                    "run was deleted, perhaps by another program); they are ignored, and no new "
                    "run takes their place.")
            return project
        if Path(path).suffix.lower() != PROJECT_SUFFIX:
            raise UserError(_project_name_problem(Path(path), PROJECT_SUFFIX))
        return Project.create(path, method=method)
    except ProjectLocked as exc:
        raise UserError(str(exc) + (OPEN_ANYWAY_HINT if exc.owner else "")) from None
    except ProjectError as exc:
        raise UserError(str(exc)) from None


def _project_name_problem(path: Path, suffix: str) -> str:
    """Why a new project may not have ``path``'s name: a project file ends in ``suffix``. A
    name such as ``results.xlsx`` looks like a workbook (and the app's Save As would have
    made it ``results.xlsx.evaldesk``), so no project is made under it."""
    wanted = path.with_name((path.stem if path.suffix else path.name) + suffix).name
    kind = {".xlsx": "an Excel workbook", ".xls": "an Excel workbook", ".xlsm": "an Excel "
            "workbook", ".csv": "a CSV table", ".tsv": "a table", ".txt": "a text file",
            ".pdf": "a PDF document", ".json": "a JSON file"}.get(path.suffix.lower())
    looks = f", the name of {kind}" if kind else ""
    return (f"--project {path.name}: a new project file's name ends in {suffix}, and this one "
            f"ends in {path.suffix or 'nothing'}{looks}. Nothing was created. Give --project "
            f"{wanted} (the results workbook is named with -o).")


@contextmanager
def cli_project(path: str | None, method: str, *, open_anyway: bool = False) -> Iterator[Project]:
    """The project a command works in: the ``--project`` file (opened, or created for ``method``
    when it does not exist yet), else a temporary project deleted when the command ends. Either
    way the command goes through the method's session, as the app does."""
    if path:
        project = open_project(path, method, open_anyway=open_anyway)
        assert project is not None
        try:
            yield project
        finally:
            project.close()
        return
    with tempfile.TemporaryDirectory(prefix="evaldesk-cli-") as folder:
        try:
            project = Project.create(Path(folder) / f"{method}.evaldesk", method=method)
        except ProjectError as exc:
            raise UserError(str(exc)) from None
        try:
            yield project
        finally:
            project.close()


def output_path(args: argparse.Namespace, *inputs: str | list[str] | tuple[str, ...] | None,
                replace_existing: bool = False) -> Path:
    """Check ``-o`` before any work (a run that fails only at its end loses what it did): the
    exact workbook it will write (``.xlsx`` added to a name without a suffix), refused when it
    is a folder, in a missing or read-only folder, of another kind, one of the command's
    ``inputs`` (paths or lists of paths) or a file EvalDesk did not write. Sets ``args.output``
    to that file, so every message names it."""
    given: list[str] = []
    for item in inputs:
        if isinstance(item, (list, tuple)):
            given.extend(i for i in item if i)
        elif item:
            given.append(item)
    try:
        target = check_export_target(args.output, inputs=given,
                                     replace_existing=replace_existing)
    except TableError as exc:
        raise UserError(f"{exc.message} (-o)") from None
    args.output = str(target)
    return target


def read_text_file(path: str, what: str) -> str:
    """The text of a small file named on the command line (UTF-8, else Windows or Latin-1)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f'The {what} "{path}" cannot be read ({exc.strerror}).') from None
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return raw.decode("latin-1")


def cli_progress() -> Progress:
    """A ``Progress`` drawn as one line on stderr."""
    return Progress(stderr_progress)


def project_gateway(profile: ModelProfile, project: Project | None,
                    run_id: int | None = None) -> Gateway:
    """A ``core.llm.Gateway`` for ``profile`` that caches every call in ``project`` (if any)."""
    return gateway_for(profile, project, run_id)


def say_estimate(estimate: Estimate, dry_run: bool) -> bool:
    """Print what a run will take: the whole estimate on stdout for ``--dry-run`` (then True:
    stop there), else one line on stderr before the run starts."""
    if dry_run:
        print("\n".join(estimate.details()))
        return True
    say("Estimate: " + estimate.summary() + ".")
    return False


def estimate_or_stop(make: Callable[[], Estimate], dry_run: bool) -> Estimate | None:
    """The run's estimate from ``make()``, said as :func:`say_estimate` says it; None when
    ``--dry-run`` stops there. A ValueError from ``make`` (settings the run cannot start with)
    and inputs the model cannot read at once (``estimate.too_long``) are the user's to fix."""
    try:
        estimate = make()
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if estimate.too_long:  # inputs the model cannot read: before any call
        raise UserError(refusal(estimate.too_long))
    return None if say_estimate(estimate, dry_run) else estimate


_ESTIMATE_OPTIONS = (
    ("--dry-run", ("print the estimate (calls, tokens, cost, time) and stop: no model is "
                   "called and no workbook is written")),
    ("--probe", ("with --dry-run: time one short call to the model for the time estimate "
                 "(otherwise the project's recorded calls, or a guess)")),
)


def add_estimate_options(parser: argparse.ArgumentParser) -> None:
    """``--dry-run`` and ``--probe``: the estimate before a model run (every command that
    calls a model in a run has them, with the same words)."""
    for flag, words in _ESTIMATE_OPTIONS:
        parser.add_argument(flag, action="store_true", help=words)


def add_project_option(parser: argparse.ArgumentParser, keeps: str) -> None:
    """``--project``: the project file that keeps ``keeps`` (the same promise about re-runs in
    every command that calls a model)."""
    parser.add_argument("--project", metavar="FILE.evaldesk",
                        help=f"keep {keeps} in this project file (created if missing); a re-run "
                        "with the same settings asks the model nothing it answered already")
    add_open_anyway_option(parser)
    add_privacy_options(parser)


def add_privacy_options(parser: argparse.ArgumentParser) -> None:
    """``--deidentify`` / ``--no-deidentify`` and ``--names-file``: whether names and other
    identifiers are replaced by placeholders before texts are sent (every command that calls a
    model has them: :func:`add_project_option` adds them; the command then calls
    :func:`apply_privacy_options` once its project is open)."""
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--deidentify", dest="deidentify", action="store_const", const=True,
                       default=None,
                       help="replace names, e-mail addresses, phone numbers, dates, record "
                       "numbers and other identifiers by placeholders such as [STUDENT 3] "
                       "before any text is sent, also to a model on this computer, and put the "
                       "real values back in the results (default: on for a new project whose "
                       "model is off this computer); kept in the project for later runs")
    which.add_argument("--no-deidentify", dest="deidentify", action="store_const", const=False,
                       help="send the texts as they are written; kept in the project for later "
                       "runs")
    parser.add_argument("--names-file", metavar="NAMES.txt",
                        help="the names to replace, one a line (students; after a line "
                        "'People:' other people such as parents or staff): kept in the project "
                        "as its names list, beside the names it already holds (workers, "
                        "personas, raters)")


def apply_privacy_options(args: argparse.Namespace, project: Project,
                          *profiles: ModelProfile) -> None:
    """Keep ``--deidentify`` / ``--no-deidentify`` and ``--names-file`` in ``project`` (as the
    app's Privacy window does, by "evaldesk command line") and say on stderr whether the texts
    sent to each of ``profiles`` are de-identified. The gateways of ``project`` follow it
    (:func:`core.llm.gateway_for`)."""
    from core.deidentify import project as dp
    from core.privacy import destination

    who = _WHO
    try:
        if args.names_file:
            students, people = dp.names_of_file(read_text_file(args.names_file, "names file"))
            if not students and not people:
                raise UserError(f'The names file "{args.names_file}" holds no names. Write '
                                "one name a line.")
            dp.set_names(project, who, students=students, people=people)
        if args.deidentify is not None:
            local = any(not destination(p).leaves_computer for p in profiles)
            dp.set_switch(project, args.deidentify, who,
                          local_too=True if args.deidentify and local else None)
        for where in dict.fromkeys(destination(p).name for p in profiles):
            profile = next(p for p in profiles if destination(p).name == where)
            reason = dp.why(project, profile)
            names = dp.known_names(project)
            listed = len(names.students) + len(names.people)
            if reason == "on":
                say(f"De-identification: on: names ({listed} listed) and other identifiers "
                    "are replaced by placeholders before texts are sent"
                    + (f" to {where}" if where else "") + "; the results show the real values.")
            elif reason == "off":
                say("De-identification: off for this project: texts are sent"
                    + (f" to {where}" if where else "") + " as written (--deidentify turns it "
                    "on).")
    except dp.DeidentifyUnavailable as exc:
        raise UserError(str(exc)) from None


#: Who the command line's choices are kept as in a project.
_WHO = "evaldesk command line"


def add_open_anyway_option(parser: argparse.ArgumentParser) -> None:
    """``--open-anyway``: use the ``--project`` file even while another EvalDesk has it open."""
    parser.add_argument("--open-anyway", action="store_true",
                        help="use the --project file even while another EvalDesk has it open "
                        "(only when you are sure nobody is using it: two programs writing one "
                        "project can mix up their work)")


def add_bootstrap_option(parser: argparse.ArgumentParser,
                         what: str = "confidence intervals") -> None:
    """``--no-bootstrap``: skip the bootstrap's ``what``, which take most of a report's time."""
    parser.add_argument("--no-bootstrap", action="store_true",
                        help=f"no bootstrap {what} (faster)")


def add_repeats_option(parser: argparse.ArgumentParser, calls: str = "every call",
                       unit: str = "text", note: str = "") -> None:
    """``--repeats N``: make ``calls`` N times to see whether the judge answers the same again
    (``unit`` names what the Stability sheet has a row for)."""
    parser.add_argument("--repeats", type=int, default=1, metavar="N",
                        help=f"make {calls} N times (1 to 10; default 1) to see whether the "
                        "judge gives the same scores when asked again: adds a Stability sheet "
                        f"(each {unit}'s spread, Krippendorff's alpha across the repeats){note}; "
                        "the scores shown and compared are those of the first repeat. Repeats "
                        "kept in --project make no call")


def probe_latency(args: argparse.Namespace, profile: ModelProfile) -> Latency | None:
    """The latency of one short call to the model for ``--dry-run --probe``; None otherwise
    (the estimate then uses the project's recorded calls, or a guess)."""
    if not (args.dry_run and args.probe):
        return None
    try:  # through the module: tests put a measured latency in its place
        return asyncio.run(llm_estimate.probe_latency(profile))
    except LLMFailure as exc:
        raise UserError(f"The probe call to {profile.model} failed: {exc.message}") from None
