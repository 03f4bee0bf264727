""":class:`InteractEvalSession`: InteractEval's work in one project, the verbs of
:class:`core.method.MethodSession` (choices, input files, the estimate, the scoring run with its
repeats, the results, the conditions, the judge check, the export) and, beside them, the verbs
of building the checklist step by step (think-aloud, components, attribute groups, key
questions, sub-questions, the review; a person's edits kept or replaced on request).

The wizard holds one session (``wizard.session``) and ``evaldesk checklist`` opens one per
command; both make the same calls, so they read, run, keep and export alike::

    session = InteractEvalSession.open(project, settings=settings)
    session.store_input("texts", "texts.xlsx")
    await session.build_dimension("Coherence")          # every step in a row, or one by one:
    await session.build_steps("Coherence", ["components", "clusters"], edits="keep")
    estimate = session.estimate()
    run = await session.run(progress=progress, cancel=cancel)   # repeats inside
    print(session.usage)                                 # the run's model calls (live)
    session.export("results.xlsx", who="Anna")

The models are made by the injected factory (``models(profile, project, run_id)``:
:func:`core.llm.gateway_for` in the app and on the command line, a scripted model in tests);
the profiles named in the choices are read from the settings the session was opened with.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from core.interacteval.agreement import DimensionAgreement, agreement_rows, human_agreement
from core.interacteval.inputs import ChecklistRead, OpenedTexts, TextsSetup, open_texts
from core.interacteval.model import (
    Attribute,
    Checklist,
    JsonLLM,
    ScoredSample,
    TextItem,
    ThinkAloudResult,
)
from core.interacteval.pipeline import METHOD, ChecklistBuild, ScoringRun
from core.interacteval.repeats import MAX_REPEATS
from core.interacteval.report import run_lines
from core.interacteval.session import building, conditions, judge, scoring, stages
from core.interacteval.session.choices import (
    InteractEvalChoices,
    open_choices,
    open_texts_file,
    person,
    rename_dimension,
    run_texts_line,
    save_choices,
    store_texts_file,
    suggest_again,
    use_samples,
)
from core.interacteval.session.conditions import ConditionModels, ConditionRun, ConditionsView
from core.interacteval.session.export import export_checklists, export_results
from core.interacteval.session.stages import StageOutput
from core.llm import LLMFactory, Usage, gateway_for

if TYPE_CHECKING:  # pragma: no cover
    from core.judge_check import JudgeData
    from core.llm.estimate import Estimate, Latency
    from core.method import JudgeCandidate
    from core.project import Project
    from core.runs import CancelToken, Progress
    from core.settings import ModelProfile, Settings
    from core.stats import RepeatStability

__all__ = ["INPUT_ROLES", "InteractEvalSession"]

#: The input files :meth:`InteractEvalSession.store_input` keeps: the texts to score and a
#: checklist workbook (its checklists replace those of the same dimensions).
INPUT_ROLES = ("texts", "checklists")
#: Bootstrap resamples of the comparison of conditions on screen (the workbook uses 2000).
SCREEN_BOOT = 1000
NO_CHECKLIST = "There is no checklist yet: build one, or import a checklist workbook, first."
NO_TEXTS = "There are no texts to score: choose the texts file first."
NO_PROFILE = "There is no model profile. Add one in Settings → Models."


class InteractEvalSession:
    """InteractEval in ``project`` (see the module's docstring). ``stored`` False: the choices
    live in this session only (the command line's choices, made from its files and options,
    never replace the project's own); ``checklists``: the checklists to score, when they come
    from a file rather than from the project."""

    method: ClassVar[str] = METHOD

    def __init__(self, project: Project, choices: InteractEvalChoices, *, settings: Settings,
                 models: LLMFactory = gateway_for, problem: str = "", stored: bool = True,
                 checklists: Sequence[Checklist] | None = None) -> None:
        self.project = project
        self.settings = settings
        self.models = models
        #: Said when the stored choices could not be read (they were kept aside).
        self.problem = problem
        self.stored = stored
        self._choices = choices
        self._checklists = list(checklists) if checklists is not None else None
        self._texts: list[TextItem] | None = None
        self._used: list[JsonLLM] = []
        #: The scoring run this session made last (repeat 0), as it finished.
        self.last_run: ScoringRun | None = None

    # ======================================================================== the protocol
    @classmethod
    def open(cls, project: Project, *, settings: Settings,
             models: LLMFactory = gateway_for) -> InteractEvalSession:
        """The session of ``project`` with its stored choices (fresh ones when there are none;
        ones that cannot be read are kept aside and :attr:`problem` says so)."""
        choices, problem = open_choices(project)
        return cls(project, choices, settings=settings, models=models, problem=problem)

    @classmethod
    def for_command(cls, project: Project, choices: InteractEvalChoices, *,
                    settings: Settings, models: LLMFactory = gateway_for,
                    checklists: Sequence[Checklist] | None = None) -> InteractEvalSession:
        """A session over ``choices`` made on the command line: kept in this session only, so
        a ``--project`` file keeps the wizard's own choices (the steps, checklists and runs
        are kept in the project all the same)."""
        return cls(project, choices, settings=settings, models=models, stored=False,
                   checklists=checklists)

    @property
    def choices(self) -> InteractEvalChoices:
        return self._choices

    def save_choices(self, choices: InteractEvalChoices | None = None) -> None:
        """Keep ``choices`` (default: the current ones, changed in place) in the project."""
        if choices is not None:
            self._choices = choices
        if self.stored:
            save_choices(self.project, self._choices)

    def store_input(self, role: str, path: str | Path) -> InteractEvalChoices:
        """Keep the input file ``path`` as ``role`` (:data:`INPUT_ROLES`): "texts" copies the
        texts file into the project (its sheet and columns are then read and guessed anew);
        "checklists" imports a checklist workbook (raises ``ValueError`` with the file's
        problems when it cannot be used). Returns the choices that now name it."""
        if role == "texts":
            self._choices.texts = store_texts_file(self.project, TextsSetup(), path)
            self._texts = None
            self.save_choices()
        elif role == "checklists":
            got = self.import_checklists(path)
            if got.errors:
                raise ValueError(f"{Path(path).name} cannot be used: " + " ".join(got.errors))
        else:
            raise ValueError(f"InteractEval keeps no input called {role!r} "
                             f"(only {', '.join(INPUT_ROLES)}).")
        return self._choices

    def estimate(self, *, latency: Latency | None = None) -> Estimate:
        """What scoring the texts will take (calls, tokens, cost and time of the texts not yet
        scored, every repeat counted; texts too long for the model in ``too_long``); no model
        is called. ``latency`` (e.g. from one probe call) replaces the recorded one. Raises
        ``ValueError`` when there is no checklist, text or model."""
        checklists, items, profile = self._ready()
        return scoring.estimate_scoring(
            self.project, checklists, items, self._choices.scoring, profile,
            samples=scoring.run_samples(self.project, self._choices, checklists),
            latency=latency, repeats=self._choices.repeats)

    async def run(self, *, progress: Progress | None = None,
                  cancel: CancelToken | None = None) -> ScoringRun:
        """Score every text on every checklist with the scoring profile, each scored text kept
        as it finishes (a cancelled run resumes; an identical finished one makes no call), then
        repeats 1..N-1 when the choices ask for N. Returns repeat 0's scores; :attr:`usage`
        counts the calls of every repeat."""
        checklists, items, profile = self._ready()
        job = scoring.plan_scoring(self.project, self._choices, items, profile,
                                   checklists=checklists, keep_choices=self.stored)
        self._used = []
        self.last_run = None
        first = await scoring.score_texts(
            job.checklists, job.items, self._model(profile, job.run_id), project=self.project,
            settings=job.settings, model=job.model, run_id=job.run_id, samples=job.samples,
            progress=progress, cancel=cancel)
        if self._choices.repeats > 1:
            await scoring.score_repeats(
                self.project, job.checklists, job.items,
                lambda run_id: self._model(profile, run_id), self._choices.repeats,
                settings=job.settings, model=job.model, samples=job.samples,
                progress=progress, cancel=cancel, first=first)
        self.last_run = first
        return first

    def load_results(self) -> ScoringRun | None:
        """The results of the last scoring run of the current checklists, from the project (no
        model call); None when there are none or they no longer match the checklists."""
        checklists = self.checklists()
        if not checklists:
            return None
        return scoring.load_run(self.project, self._choices, checklists)

    async def run_conditions(self, names: Sequence[str], *, progress: Progress | None = None,
                             cancel: CancelToken | None = None) -> dict[str, ConditionRun]:
        """Build and score the conditions ``names`` (:data:`core.interacteval.conditions.
        CONDITIONS`) on the texts, each scoring ``choices.condition_repeats`` times; kept
        checklists and scores cost nothing. :attr:`usage` counts the calls."""
        models, profiles = self._condition_models()
        self._used = []
        builder = models.profiles["builder"]
        scorer = models.profiles["scorer"]
        assessors = {n: self._model(profiles[n], None) for n in models.assessors}
        build_llm = assessors.get(builder.name) or self._model(builder, None)
        return await conditions.run_conditions(
            self.project, self._choices, names, self.texts, models, assessors=assessors,
            builder=build_llm, scorer_for_run=lambda run_id: self._model(scorer, run_id),
            progress=progress, cancel=cancel, repeats=self._choices.condition_repeats)

    def load_conditions(self, names: Sequence[str]) -> dict[str, ConditionRun]:
        """The conditions ``names`` kept in the project for the current choices and texts
        (those never run are left out); no model call."""
        found = self.condition_models()
        items = self.texts
        if found is None or not items:
            return {}
        return conditions.load_conditions(self.project, self._choices, names, items, found[0])

    def judge_to_check(self) -> tuple[JudgeData | None, str]:
        """The last scoring run's scores for "Check the judge", or (None, why)."""
        return judge.judge_to_check(self.project, self._choices)

    def choose_judge(self, key: str) -> str:
        """Make the model ``key`` (from :meth:`judges_to_compare`) the one the project scores
        with (its profile: the first that uses that model). A condition ("condition:<key>")
        is a way of building the checklist, not a model: said, nothing changed."""
        if key.startswith("condition:"):
            label = conditions.CONDITIONS.get(key.split(":", 1)[1], key)
            return (f"The condition “{label}” agrees best with your ratings. A condition is "
                    "a way of building the checklist, not a model: to score with it, build "
                    "the checklist that way on the Think-aloud and Build pages.")
        profile = next((p for p in self.settings.profiles if p.model == key), None)
        if profile is None:
            return (f"No model profile uses {key}: add one in Settings → Models, then choose "
                    "it on the Score page.")
        self.save_choices(self._choices.model_copy(update={"scorer": profile.name}))
        return f"“{profile.name}” ({key}) is now the project's judge: the next run uses it."

    def judges_to_compare(self) -> list[JudgeCandidate]:
        """Every finished scoring run and every condition kept, for "Pick the judge" (a
        condition's own scoring run is listed once, as the condition; the last run scored
        from the choices stays listed by its model)."""
        candidates = judge.scoring_judges(self.project)
        found = self.condition_models()
        if found is None:
            return candidates
        theirs_all = judge.condition_judges(self.project, self._choices, found[0])
        if not theirs_all:
            return candidates
        theirs = {j.source.split(",")[0] for _n, _k, j in theirs_all}
        mine = f"project run {self._choices.run_id}"
        return [*[c for c in candidates if c[2].source.split(",")[0] not in theirs - {mine}],
                *theirs_all]

    def export(self, path: str | Path, *, who: str, run: ScoringRun | None = None,
               agreement: Sequence[DimensionAgreement] | None = None) -> Path:
        """Write the results workbook of ``run`` (default: the run this session just made, else
        the results kept for the current choices) with its agreement (computed unless given),
        the repeats' stability and who exported it. Raises ``ValueError`` when there are no
        results."""
        run = run or self._current_run()
        if run is None:
            raise ValueError("There are no results to export: score the texts first.")
        written = export_results(
            self.project, run, path, texts=run_texts_line(self._choices),
            include_samples=self._choices.include_samples, who=who, agreement=agreement,
            repeats=self.repeats_of(run))
        return written.path

    # ================================================================ models and who works
    @property
    def who(self) -> str:
        """The person working (Settings → your name), for the edit history and the exports."""
        return person(self.settings.user_name)

    def profile(self, name: str = "") -> ModelProfile | None:
        """The model profile called ``name`` (the default one when it is gone or ""; None
        when there is no profile at all)."""
        try:
            return self.settings.profile(name or None)
        except KeyError:
            return self.settings.profile() if self.settings.profiles else None

    def scorer_profile(self) -> ModelProfile | None:
        return self.profile(self._choices.scorer_name())

    def builder_profile(self) -> ModelProfile | None:
        return self.profile(self._choices.builder_name())

    @property
    def usage(self) -> Usage | None:
        """The model calls of the last (or running) run, every repeat and model together;
        None before a run, or when a model does not count its calls."""
        if not self._used or any(getattr(m, "usage", None) is None for m in self._used):
            return None
        return Usage.total(m.usage for m in self._used)  # type: ignore[attr-defined]

    def _model(self, profile: ModelProfile, run_id: int | None) -> JsonLLM:
        """A model of this session's factory (logging under project run ``run_id``), counted
        in :attr:`usage`."""
        model: JsonLLM = self.models(profile, self.project, run_id)
        self._used.append(model)
        return model

    def _model_of(self, name: str) -> JsonLLM:
        profile = self.profile(name)
        if profile is None:
            raise RuntimeError(NO_PROFILE)
        return self._model(profile, None)

    # =========================================================================== choices
    def rename_dimension(self, old: str, new: str) -> None:
        """Rename a dimension everywhere (notes, samples, steps, checklist; saved)."""
        rename_dimension(self.project, self._choices, old, new, self.who,
                         keep_choices=self.stored)

    def use_samples(self, file_name: str, samples: Sequence[ScoredSample]) -> None:
        """Take ``samples`` (read from ``file_name``) as the rated samples, 4 suggested per
        dimension to span the score range (saved)."""
        use_samples(self._choices, file_name, samples)
        self.save_choices()

    def suggest_samples(self, dimension: str) -> None:
        """Choose the suggested samples of ``dimension`` again (saved)."""
        suggest_again(self._choices, dimension)
        self.save_choices()

    # ============================================================================= texts
    def locate_texts(self) -> tuple[Path | None, str]:
        """The texts file to read (where it was chosen, a new version when it changed, the
        project's copy when it is gone; the choices follow a new version) and a note for the
        user; (None, why) when there is none."""
        path, setup, note = open_texts_file(self.project, self._choices.texts)
        if setup != self._choices.texts:  # a new version of the file was read (and kept)
            self._choices.texts = setup
            self.save_choices()
        return path, note

    def read_texts(self, path: str | Path) -> OpenedTexts:
        """The texts file at ``path`` opened with the choices' sheet and columns (the columns
        not chosen yet guessed): :class:`core.interacteval.inputs.OpenedTexts`. Reads only (a
        worker thread may run it); :meth:`use_texts` then keeps what was read."""
        return open_texts(path, self._choices.texts, [d.name for d in self._choices.dimensions])

    def use_texts(self, items: Sequence[TextItem], setup: TextsSetup | None = None) -> None:
        """Score ``items`` (read from the texts file stored with :meth:`store_input`; ``setup``:
        the sheet and columns they were read with, kept in the choices)."""
        if setup is not None:
            stored = self._choices.texts
            self._choices.texts = setup.model_copy(update={
                "path": stored.path, "file_name": stored.file_name,
                "input_id": stored.input_id, "content_hash": stored.content_hash})
            self.save_choices()
        # the same list the caller holds (the wizard's texts as read), not a copy of it
        self._texts = items if isinstance(items, list) else list(items)

    @property
    def texts(self) -> list[TextItem]:
        """The texts the next run scores: those kept with :meth:`use_texts`, else those read
        from the texts file (empty when there is none or it cannot be read)."""
        if self._texts is not None:
            return list(self._texts)
        return conditions.condition_texts(self.project, self._choices)

    # ======================================================================== checklists
    def checklists(self) -> list[Checklist]:
        """The checklists scored: the given ones, else the project's checklists of the
        choices' dimensions (in their order)."""
        if self._checklists is not None:
            return list(self._checklists)
        return stages.all_checklists(self.project, self._choices)

    def checklist(self, dimension: str) -> Checklist | None:
        return stages.load_checklist(self.project, dimension)

    def checklist_origin(self, dimension: str) -> tuple[str, bool]:
        """Where the checklist came from ("generated", "imported", "human"; "" when there is
        none) and whether a person edited it since."""
        return stages.checklist_origin(self.project, dimension)

    def edit_checklist(self, checklist: Checklist, *, who: str | None = None) -> Checklist:
        """Keep a person's change of a checklist (who and when recorded)."""
        return stages.edit_checklist(self.project, checklist, who=who or self.who)

    def import_checklists(self, path: str | Path) -> ChecklistRead:
        """Read a checklist workbook; its checklists replace those of the same dimensions (new
        dimensions are added to the choices). Nothing is imported when it has ``errors``."""
        return stages.import_checklists(self.project, self._choices, path,
                                        keep_choices=self.stored)

    def export_checklists(self, path: str | Path, *, who: str | None = None) -> Path:
        """Write every checklist of the choices' dimensions to a workbook."""
        return export_checklists(self.project, self._choices, path,
                                 who=who if who is not None else self.who).path

    def questions_failing_good_texts(self, dimension: str) -> dict[str, str]:
        """The questions of ``dimension`` that say No to texts people rated Yes (question ->
        why, in words); empty when nobody answered the questions on "Check the judge"."""
        return judge.questions_failing_good_texts(self.project, self._choices, dimension)

    # ========================================================= building, step by step
    def stage(self, dimension: str, key: str) -> StageOutput | None:
        """The kept output of step ``key`` (None when it has not run)."""
        return stages.get_stage(self.project, dimension, key)

    def stage_input(self, dimension: str, key: str) -> str:
        """What step ``key`` would consume now, with the building profile (compare with
        ``StageOutput.input`` and ``choices.checklist_inputs``: another input is out of
        date)."""
        return stages.stage_input(self.project, self._choices, dimension, key,
                                  self.builder_profile())

    def edit_stage(self, dimension: str, key: str, value: Any) -> None:
        """A person changed step ``key``'s output (kept with who and when)."""
        stages.edit_stage(self.project, dimension, key, value, who=self.who)

    def attributes(self, dimension: str) -> list[Attribute]:
        """The merged think-aloud attributes (models' first, then people's notes)."""
        return stages.attributes_of(self.project, self._choices, dimension)

    def edited_steps(self, dimension: str, keys: Sequence[str]) -> list[tuple[str, str]]:
        """The steps among ``keys`` a person changed, as ``(step, who)``: running them again
        asks first (keep the edits, or replace them)."""
        return stages.edited_steps(self.project, dimension, keys)

    def replaced_version(self, dimension: str, key: str) -> dict[str, Any] | None:
        """The edited version of step ``key`` a new run replaced (kept), or None."""
        return stages.replaced_version(self.project, dimension, key)

    def restore_edited(self, dimension: str, key: str) -> Any:
        """Put back the edited version of step ``key`` a new run replaced."""
        return stages.restore_replaced(self.project, dimension, key, who=self.who)

    async def think_aloud(self, dimension: str, *, progress: Progress | None = None,
                          cancel: CancelToken | None = None) -> ThinkAloudResult:
        """Every model of ``choices.assessors`` thinks aloud about ``dimension`` (kept)."""
        self._used = []
        assessors = {name: self._model_of(name) for name in self._choices.assessors}
        return await building.run_think_aloud(self.project, self._choices, dimension,
                                              assessors, progress=progress, cancel=cancel,
                                              who=self.who)

    async def build_steps(self, dimension: str, keys: Sequence[str], *, edits: str = "keep",
                          progress: Progress | None = None,
                          cancel: CancelToken | None = None) -> Any:
        """Construction steps ``keys`` (:data:`BUILD_KEYS`) in turn with the building profile,
        each on the kept output of the step before; a step a person edited is kept
        (``edits`` "keep") or made again with the edit kept aside ("replace"). Returns the last
        step's output."""
        self._used = []
        builder = self._model_of(self._choices.builder_name())
        return await building.run_build_steps(
            self.project, self._choices, dimension, keys, builder, progress=progress,
            cancel=cancel, keep_choices=self.stored, edits=edits, who=self.who)

    async def build_step(self, dimension: str, key: str, *, edits: str = "keep",
                         progress: Progress | None = None,
                         cancel: CancelToken | None = None) -> Any:
        """One construction step (see :meth:`build_steps`)."""
        return await self.build_steps(dimension, [key], edits=edits, progress=progress,
                                      cancel=cancel)

    async def build_dimension(self, dimension: str, *, edits: str = "keep",
                              progress: Progress | None = None,
                              cancel: CancelToken | None = None) -> ChecklistBuild:
        """Every step for ``dimension`` in a row: the think-aloud of ``choices.assessors``
        (none: the people's notes alone), then the construction steps with the building
        profile. Returns every step's output (for the checklist workbook)."""
        self._used = []
        assessors = {name: self._model_of(name) for name in self._choices.assessors}
        name = self._choices.builder_name()
        builder = assessors.get(name) or self._model_of(name)
        return await building.build_dimension(
            self.project, self._choices, dimension, assessors, builder, progress=progress,
            cancel=cancel, keep_choices=self.stored, edits=edits, who=self.who)

    def estimate_think_aloud(self, dimension: str) -> Estimate:
        """What the think-aloud of ``choices.assessors`` on ``dimension`` takes (at most)."""
        profiles = [p for n in self._choices.assessors if (p := self.profile(n)) is not None]
        return building.estimate_think_aloud(self.project, self._choices, dimension, profiles)

    def estimate_build(self, dimension: str, keys: Sequence[str]) -> Estimate:
        """What construction steps ``keys`` on ``dimension`` take with the building profile."""
        profile = self.builder_profile()
        if profile is None:
            raise ValueError(NO_PROFILE)
        return building.estimate_build_steps(self.project, self._choices, dimension, keys,
                                             profile)

    # ========================================================================= results
    def results_out_of_date(self, run: ScoringRun | None) -> list[str]:
        """Why ``run`` no longer matches the choices, in plain words (empty: it is current)."""
        if run is None:
            return []
        return scoring.results_out_of_date(self.project, self._choices, run, self.checklists(),
                                           self.scorer_profile() or "")

    def repeats_of(self, run: ScoringRun) -> list[ScoringRun]:
        """The finished repeats 0..N-1 of ``run`` kept in the project (N: ``choices.repeats``;
        empty for one)."""
        n = self._choices.repeats
        if n < 2:
            return []
        samples = scoring.run_samples(self.project, self._choices, run.checklists)
        return scoring.load_repeats(self.project, run.checklists, run.settings, run.model_used,
                                    n, samples=samples, order=self._choices.text_order)

    def agreement(self, run: ScoringRun) -> tuple[list[DimensionAgreement],
                                                  list[dict[str, Any]]]:
        """The agreement of ``run`` with the human scores (think-aloud samples kept or left out
        as the choices say) and its rows on screen."""
        results = human_agreement(run.scores, include_samples=self._choices.include_samples)
        return results, agreement_rows(results)

    def run_lines(self, run: ScoringRun) -> list[tuple[str, str]]:
        """What ``run`` is, in plain lines (model, options, texts, when)."""
        return run_lines(run, texts=run_texts_line(self._choices),
                         include_samples=self._choices.include_samples)

    # ====================================================================== conditions
    def condition_models(self) -> tuple[ConditionModels, dict[str, ModelProfile]] | None:
        """The models of the conditions (who thinks aloud, builds and scores) and their
        profiles by name; None when there is no profile to score with."""
        return conditions.condition_models(self._choices, self.profile)

    def _condition_models(self) -> tuple[ConditionModels, dict[str, ModelProfile]]:
        found = self.condition_models()
        if found is None:
            raise ValueError(NO_PROFILE)
        return found

    def conditions_view(self, names: Sequence[str], *,
                        n_boot: int = SCREEN_BOOT) -> ConditionsView | None:
        """The conditions ``names`` kept, those still to run and the estimate of running them
        (no model call; a worker thread may run it); None without a model profile."""
        found = self.condition_models()
        if found is None:
            return None
        return conditions.conditions_view(self.project, self._choices, names, self.texts,
                                          *found, n_boot=n_boot)

    def estimate_conditions(self, names: Sequence[str], *,
                            latency: Latency | None = None) -> Estimate:
        """What running the conditions ``names`` takes (what is kept costs nothing)."""
        models, profiles = self._condition_models()
        return conditions.estimate_conditions(
            self.project, self._choices, names, self.texts, models, profiles, latency=latency,
            repeats=self._choices.condition_repeats)

    def export_conditions(self, path: str | Path, runs: dict[str, ConditionRun], *,
                          who: str | None = None, n_boot: int = 2000
                          ) -> tuple[list[dict[str, Any]], list[tuple[str, str,
                                                                      RepeatStability]]]:
        """Write the comparison workbook of ``runs``; returns its rows and the repeats'
        stability (for the summary lines)."""
        models, _profiles = self._condition_models()
        return conditions.export_conditions(
            self.project, self._choices, path, list(runs), runs, self.texts, models,
            repeats=self._choices.condition_repeats, who=who if who is not None else self.who,
            n_boot=n_boot)

    # ========================================================================= helpers
    def _ready(self) -> tuple[list[Checklist], list[TextItem], ModelProfile]:
        checklists = self.checklists()
        if not checklists:
            raise ValueError(NO_CHECKLIST)
        items = self.texts
        if not items:
            raise ValueError(NO_TEXTS)
        profile = self.scorer_profile()
        if profile is None:
            raise ValueError(NO_PROFILE)
        if not 1 <= self._choices.repeats <= MAX_REPEATS:
            raise ValueError(f"Repeat each call 1 to {MAX_REPEATS} times, not "
                             f"{self._choices.repeats}.")
        return checklists, items, profile

    def _current_run(self) -> ScoringRun | None:
        if self.last_run is not None and self.last_run.run_id == self._choices.run_id:
            return self.last_run
        return self.load_results()
