""":class:`AqerSession`: AQER's work in one project, with the verbs of
:class:`core.method.MethodSession` (and AQER's own: reading and checking the answers file,
the comparison of the conditions, "how many workers do I need?", the grades in the answers
file). The command line and the wizard make the same calls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

from core.aqer.comparison import Comparison, WorkersCurve
from core.aqer.inputs import AnswersCheck, check_answers, guess_columns, guess_roles
from core.aqer.model import AqerChoices, AqerCondition, Layout, WideRows
from core.aqer.session import choices as ch
from core.aqer.session import conditions as cd
from core.aqer.session import judge as jd
from core.aqer.session import workers_curve as wc
from core.aqer.session.choices import OpenedAnswers
from core.aqer.session.encoders import EncoderFactory, default_encoder_factory, embedding_choices
from core.aqer.session.results import StoredResult, export_result, load_result, run_choices
from core.runs import CancelToken
from core.tables import TableIssue

if TYPE_CHECKING:  # pragma: no cover
    from core.judge_check import JudgeData, Rating
    from core.llm.estimate import Estimate
    from core.method import JudgeCandidate
    from core.project import Project
    from core.runs import Progress
    from core.settings import Settings
    from core.tables import TableRead

__all__ = ["INPUT_ROLES", "AqerSession"]

T = TypeVar("T")

#: The input files AQER keeps (:meth:`AqerSession.store_input`).
INPUT_ROLES = ("answers", "grades")


async def _in_executor(work: Callable[[CancelToken], T], cancel: CancelToken | None) -> T:
    """``work(cancel)`` (CPU work: reading, embedding, scoring) in the loop's executor. When the
    task awaiting it is cancelled (Ctrl+C on the command line, a closing window), ``cancel``
    is too, so the work stops at its next check instead of running on to its end."""
    token = cancel if cancel is not None else CancelToken()
    try:
        return await asyncio.get_running_loop().run_in_executor(None, work, token)
    except asyncio.CancelledError:
        token.cancel()
        raise


class AqerSession:
    """AQER's work in one project (a :class:`core.method.MethodSession`): its choices
    (:class:`AqerChoices`), the answers file and a file of grades, each run stored as it
    finishes and found again while nothing it depends on changed, the conditions side by side,
    the judge check and the workbook. AQER calls no language model: its encoders (the
    embedding model, run on this computer) are made by ``encoders`` (default: the bundled
    model through :class:`core.embeddings.Encoder`; tests pass a tiny one)."""

    method: ClassVar[str] = "aqer"

    def __init__(self, project: Project, choices: AqerChoices | None = None, *,
                 encoders: EncoderFactory | None = None, settings: Settings | None = None,
                 problem: str = "") -> None:
        self.project = project
        self._choices = choices if choices is not None else AqerChoices()
        self.encoders: EncoderFactory = encoders or default_encoder_factory
        #: The user's settings (AQER reads no model profile from them; the command line takes
        #: its default embedding model from them).
        self.settings = settings
        #: Why the stored choices could not be read (kept aside; these start afresh), or "".
        self.problem = problem

    # ------------------------------------------------------------------ choices and inputs
    @classmethod
    def open(cls, project: Project, *, settings: Settings | None = None,
             encoders: EncoderFactory | None = None) -> AqerSession:
        """The session of AQER in ``project``: its choices read (choices that cannot be read
        are kept aside and start afresh: :attr:`problem` says so)."""
        choices, problem = ch.restore_choices(project)
        return cls(project, choices, encoders=encoders, settings=settings, problem=problem)

    @property
    def choices(self) -> AqerChoices:
        """The AQER choices in this project."""
        return self._choices

    def save_choices(self, choices: AqerChoices) -> None:
        """Keep ``choices`` in the project (the wizard calls it on every change)."""
        ch.save_choices(self.project, choices)
        self._choices = choices

    def store_input(self, role: str, path: str | Path) -> AqerChoices:
        """Keep the input file ``path`` in the project as ``role``: "answers" (what changed
        with the file is chosen anew: the sheet, its header row, the duplicates choice) or
        "grades" (one grade per person, its first sheet); the choices that now name it are
        saved and returned."""
        if role == "answers":
            choices = ch.store_answers_file(self.project, self.choices, path)
        elif role == "grades":
            choices = ch.store_grades_file(self.project, self.choices, path)
        else:
            raise ValueError(f"AQER keeps an answers file and a grades file, not “{role}”.")
        self.save_choices(choices)
        return choices

    def open_answers(self, path: str | Path | None = None, progress: Progress | None = None,
                     cancel: CancelToken | None = None) -> OpenedAnswers:
        """Read the answers file of the choices (or the newly chosen ``path``, kept in the
        project): its sheets and the chosen sheet as text, with the choices that name it and
        the sheet read (not saved: the caller saves them with the columns it chooses). A plain
        function: run it in an executor."""
        return ch.open_answers(self.project, self.choices, path, progress, cancel)

    def guess_columns(self, read: TableRead, sheets: Sequence[str] = (), *,
                      format: Layout | None = None, wide_rows: WideRows | None = None,
                      choices: AqerChoices | None = None) -> list[str]:
        """A sheet just read (a new file or sheet, or another layout chosen): its column roles
        guessed afresh (:func:`core.aqer.inputs.guess_roles`; the layout too unless ``format``
        is given) into ``choices`` (default: the session's, e.g. those of
        :meth:`open_answers`), saved; returns what was guessed and why, in sentences."""
        choices = choices or self.choices
        guessed = guess_roles(read, sheets, format=format, wide_rows=wide_rows,
                              current=choices.columns)
        self.save_choices(choices.model_copy(update={"columns": guessed.roles}))
        return guessed.notes

    def keep_columns(self, read: TableRead, choices: AqerChoices | None = None) -> None:
        """The sheet read again (a project reopened): the roles chosen are kept, those the
        sheet lacks guessed (:func:`core.aqer.inputs.guess_columns`); saved."""
        choices = choices or self.choices
        self.save_choices(choices.model_copy(update={
            "columns": guess_columns(choices.columns, read.frame.columns)}))

    def grades_path(self, choices: AqerChoices | None = None) -> Path | None:
        """Where to read the grades file of the choices (None: there is none). Raises
        ``ValueError`` / ``OSError`` when it changed or is gone."""
        return ch.grades_path(self.project, choices or self.choices)

    def check_answers(self, read: TableRead, choices: AqerChoices | None = None) -> AnswersCheck:
        """Check the chosen columns (of ``choices``, default the session's) on the whole
        sheet ``read`` (:func:`core.aqer.inputs.check_answers`); a grades file that changed
        or is gone is an error to fix, and the rest is checked without it. A plain function:
        run it in an executor."""
        choices = choices or self.choices
        try:
            grades = ch.grades_path(self.project, choices)
        except (OSError, ValueError) as exc:  # gone, or changed since it was chosen
            choices = choices.with_columns(grades_file=None, grades_sheet=None)
            check = check_answers(read, choices, None)
            check.issues.insert(0, TableIssue("error", str(exc)))
            return check
        return check_answers(read, choices, grades)

    # ------------------------------------------------------------------ the run
    def estimate(self) -> Estimate | None:
        """None: AQER sends nothing to a language model (its embedding model runs on this
        computer). Raises ``ValueError`` when no answers file is chosen yet."""
        if not self.choices.has_file:
            raise ValueError("Choose the answers file first.")
        return None

    async def run(self, *, progress: Progress | None = None,
                  cancel: CancelToken | None = None) -> StoredResult:
        """AQER on the choices (read, embedded through the project's vector cache, scored,
        stored); a cancelled run keeps its embeddings."""
        work = partial(run_choices, self.project, self.choices, self.encoders, progress)
        return await _in_executor(work, cancel)

    def load_results(self) -> StoredResult | None:
        """The result of the choices as they are, or None (then it must be computed)."""
        return load_result(self.project, self.choices)

    # ------------------------------------------------------------------ conditions
    def condition_names(self) -> list[str]:
        """The names of the conditions of the choices (another embedding model or blank-answer
        rule), in their order."""
        return list(cd.condition_choices(self.choices))

    def add_condition(self, condition: AqerCondition) -> str:
        """Add ``condition`` to the choices (saved; nothing is run) and return its name."""
        if condition not in self.choices.conditions:
            self.save_choices(self.choices.model_copy(
                update={"conditions": [*self.choices.conditions, condition]}))
        return condition.label()

    async def run_conditions(self, names: Sequence[str], *, progress: Progress | None = None,
                             cancel: CancelToken | None = None) -> dict[str, StoredResult]:
        """The conditions ``names`` on the same answers (those in the project already are
        read back, with no work), by name."""
        work = partial(cd.run_conditions, self.project, self.choices, self.encoders,
                       list(names), progress)
        return await _in_executor(work, cancel)

    def load_conditions(self, names: Sequence[str]) -> dict[str, StoredResult]:
        """The conditions ``names`` kept in the project (those not run yet are left out)."""
        return cd.load_conditions(self.project, self.choices, list(names))

    def comparison(self, stored: StoredResult, progress: Progress | None = None,
                   cancel: CancelToken | None = None) -> Comparison:
        """The Comparison table of ``stored`` (the choices' result) and the conditions
        computed so far (its bootstraps take seconds with hundreds of workers: run it in an
        executor)."""
        if progress is not None:
            progress.start("Comparing the conditions")
        return cd.comparison(self.project, self.choices, stored)

    def embedding_choices(self) -> list[AqerCondition]:
        """The other ways to embed this computer has, as conditions to add."""
        return embedding_choices(self.choices)

    # ------------------------------------------------------------------ how many workers
    async def run_workers_curve(self, *, repetitions: int = 25,
                                progress: Progress | None = None,
                                cancel: CancelToken | None = None) -> WorkersCurve:
        """"How many workers do I need?" for the choices, kept in the project."""
        work = partial(wc.run_workers_curve, self.project, self.choices, self.encoders,
                       progress, repetitions=repetitions)
        return await _in_executor(work, cancel)

    def load_workers_curve(self) -> WorkersCurve | None:
        """The workers curve kept for the choices as they are, or None."""
        return wc.load_workers_curve(self.project, self.choices)

    # ------------------------------------------------------------------ check the judge
    def judge_to_check(self) -> tuple[JudgeData | None, str]:
        """AQER's scores of the AI answers of the current result, or (None, why)."""
        return jd.judge_to_check(self.project, self.choices)

    def judges_to_compare(self) -> list[JudgeCandidate]:
        """The current result and each condition computed so far, as judges to rank; a
        candidate's key is "" for the choices, else the condition's name
        (:meth:`choose_judge`)."""
        return jd.judges_to_compare(self.project, self.choices)

    def file_grades(self, judge: JudgeData) -> tuple[list[Rating], list[str]]:
        """The grades the answers file gives the AI answers of ``judge``, as one rater's
        ratings, and what was left out, in words."""
        return jd.file_grades(self.project, self.choices, judge)

    def choose_judge(self, key: str) -> str:
        """Make the condition ``key`` (from :meth:`judges_to_compare`; AQER's judges are its
        conditions: another embedding model or blank-answer rule) the choices (saved; the
        earlier choices stay as a condition) and say what was done."""
        chosen, done = cd.choose_condition(self.choices, key)
        if chosen is not self.choices:
            self.save_choices(chosen)
        return done

    # ------------------------------------------------------------------ export
    def export(self, path: str | Path, *, who: str = "", stored: StoredResult | None = None,
               curve: WorkersCurve | None = None, table: Comparison | None = None,
               progress: Progress | None = None, cancel: CancelToken | None = None) -> Path:
        """Write the results workbook of ``stored`` (default: the choices' result) with the
        conditions computed so far (the Comparison sheet: ``table`` when it is computed
        already) and ``curve`` (the Workers needed sheet, when given). ``who`` is not written:
        nobody edits what AQER produced. A plain function: run it in an executor."""
        stored = stored or self.load_results()
        if stored is None:
            raise ValueError("There are no AQER results for the current choices yet: run "
                             "AQER first.")
        others = cd.load_conditions(self.project, self.choices)
        return export_result(stored, path, progress, cancel, others=others, curve=curve,
                             table=table)

