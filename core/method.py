"""The one shape of a method's session: the verbs that the command line and the wizard call.

Each method (``core.aqer``, ``core.majeval``, ``core.interacteval``) has a session package
``core/<method>/session/`` that holds every line of the method that touches the project file:
its saved choices, its input files, each run (repeats and usage inside), the conditions side by
side, the judge check and the export. The command line and the wizard make the same calls in the
same order, so the two routes cannot drift apart::

    session = InteractEvalSession.open(project, settings=settings)   # or AqerSession, ...
    choices = session.choices                 # the method's choices in this project
    session.save_choices(choices.model_copy(update={...}))
    session.store_input("texts", path)        # an input file, kept in the project
    estimate = session.estimate()             # calls, time and cost before anything is sent
    results = await session.run(progress=progress, cancel=cancel)   # repeats inside
    results = session.load_results()          # what the last run left, or None
    conditions = await session.run_conditions(names, progress=progress, cancel=cancel)
    conditions = session.load_conditions(names)
    judge, problem = session.judge_to_check()           # the judge's scores to grade
    candidates = session.judges_to_compare()            # other models' scores of the same items
    said = session.choose_judge(candidates[0][1])       # the best one becomes the judge
    written = session.export(path, who=who)             # the results workbook

The models a session talks to are injected (:data:`ModelFactory`: the app and the command line
pass :func:`core.llm.gateway_for`; tests pass a scripted model), as are AQER's encoders. The
session reads the model profiles named in its choices from the :class:`core.settings.Settings`
it is opened with.

:class:`MethodSession` is a :class:`typing.Protocol`: the three session classes do not inherit
from it; ``tests/core/test_method.py`` checks that each has every verb with the same
parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from core.judge_check import JudgeData
    from core.llm.estimate import Estimate
    from core.project import Project
    from core.runs import CancelToken, Progress
    from core.settings import ModelProfile, Settings

__all__ = ["VERBS", "JudgeCandidate", "MethodSession", "ModelFactory"]

ChoicesT = TypeVar("ChoicesT")
ResultsT_co = TypeVar("ResultsT_co", covariant=True)

#: Makes the model one run talks to: ``(profile, project, run_id) -> model`` whose calls are
#: cached and logged in ``project`` under ``run_id`` (``core.llm.gateway_for`` in the app and on
#: the command line; a scripted model in tests).
ModelFactory = Callable[["ModelProfile", "Project", int], Any]

#: One candidate judge of "Pick the judge": (name shown, model string, its scores of the items).
JudgeCandidate = tuple[str, str, "JudgeData"]

#: The verbs every session has (the protocol below, in the order a run uses them).
VERBS = (
    "open", "choices", "save_choices", "store_input", "estimate", "run", "load_results",
    "run_conditions", "load_conditions", "judge_to_check", "judges_to_compare", "choose_judge",
    "export",
)


@runtime_checkable
class MethodSession(Protocol[ChoicesT, ResultsT_co]):
    """A method's work in one project (see the module's docstring for the order of calls)."""

    #: "aqer", "majeval" or "interacteval": the project's method.
    method: ClassVar[str]
    #: The project file every call reads and writes.
    project: Project

    @classmethod
    def open(cls, project: Project, *, settings: Settings) -> MethodSession[ChoicesT, ResultsT_co]:
        """The session of this method in ``project`` (its choices read, or new ones)."""
        ...

    @property
    def choices(self) -> ChoicesT:
        """The method's choices in this project (files, columns, options, model profiles)."""
        ...

    def save_choices(self, choices: ChoicesT) -> None:
        """Keep ``choices`` in the project (versioned; the wizard calls it on every change)."""
        ...

    def store_input(self, role: str, path: str | Path) -> ChoicesT:
        """Keep the input file ``path`` in the project as ``role`` (the method's own names:
        "answers", "grades", "documents", "items", "texts", "notes", ...); returns the choices
        that now name it. Raises ``core.tables.TableError`` / ``ValueError`` with a message
        naming the file and what to do."""
        ...

    def estimate(self) -> Estimate | None:
        """What the run will take (calls, tokens, time, cost; inputs too long for the model),
        before anything is sent; None when the method makes no model calls (AQER). Raises
        ``ValueError`` with a plain message when the choices are not ready for a run."""
        ...

    async def run(self, *, progress: Progress | None = None,
                  cancel: CancelToken | None = None) -> ResultsT_co:
        """The method's run on its choices (every repeat the choices ask for; usage recorded),
        each finished unit kept in the project as it finishes, so a cancelled or crashed run
        resumes where it stopped."""
        ...

    def load_results(self) -> ResultsT_co | None:
        """The results of the last run of today's choices, or None."""
        ...

    async def run_conditions(self, names: Sequence[str], *, progress: Progress | None = None,
                             cancel: CancelToken | None = None) -> Any:
        """The conditions ``names`` side by side on the same inputs (the paper's comparison)."""
        ...

    def load_conditions(self, names: Sequence[str]) -> Any:
        """The conditions ``names`` kept in the project (those not run yet are left out)."""
        ...

    def judge_to_check(self) -> tuple[JudgeData | None, str]:
        """The judge's scores for "Check the judge", or (None, why there are none)."""
        ...

    def judges_to_compare(self) -> list[JudgeCandidate]:
        """Other models' scores of the same items, for "Pick the judge"."""
        ...

    def choose_judge(self, key: str) -> str:
        """Make the candidate ``key`` (the second field of one of :meth:`judges_to_compare`)
        the project's judge: the choices that go with it are saved (its model's profile, its
        condition's options); returns what was done, or why it cannot be, in plain words."""
        ...

    def export(self, path: str | Path, *, who: str) -> Path:
        """Write the results workbook to ``path`` (checked before any call by
        ``core.tables.check_export_target``); returns the file written."""
        ...
