"""The MAJ-Eval session: MAJ-Eval's work in one project, with the verbs of
:class:`core.method.MethodSession` that the command line and the wizard both call, plus
MAJ-Eval's own steps before the debates (its documents, finding the stakeholders and writing
the personas, a person's edits of them)::

    session = MajEvalSession.open(project, settings=settings)        # models=gateway_for
    session.save_choices(session.choices.model_copy(update={"task": task}))
    session.store_input("documents", "study.pdf")                    # read, kept, listed
    made = await session.find_stakeholders(progress=p, cancel=c)     # stages 1-2, resumable
    session.edit_persona(made.personas[0], "specialty", "…", who="Ana")
    session.store_input("items", "items.xlsx")                       # the app's column guesses
    estimate = session.estimate()                                    # before any call
    run = await session.run(progress=p, cancel=c, estimate=estimate) # debates, repeats inside
    session.usage                                                    # what the step used so far
    session.export("results.xlsx", who="Ana", run=run)               # the results workbook

Every call that reads or writes the project is here (the functions of the modules beside this
one); :mod:`core.majeval.pipeline`, :mod:`~core.majeval.conditions`,
:mod:`~core.majeval.repeats` and :mod:`~core.majeval.judge_check` are pure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from core.documents import Document
from core.judge_check import JudgeData
from core.llm import LLMFactory, Usage, gateway_for
from core.llm.estimate import Estimate, Latency
from core.llm.identity import model_name, profiles_of
from core.majeval.agreement import GroupAlpha, HumanAgreement
from core.majeval.conditions import COMPARISON_BOOT, ConditionResult
from core.majeval.inputs import ItemsSetup, OpenedItems
from core.majeval.model import Item, JsonLLM, Persona, StakeholderGroup
from core.majeval.pipeline import METHOD, PERSONA_ARTEFACT, EvaluationRun
from core.majeval.repeats import ByRepeat, RepeatEntry, plain_result, stability
from core.majeval.session import conditions as cd
from core.majeval.session import debates, documents, items, judge, personas
from core.majeval.session.choices import MajEvalChoices, open_choices, save_choices
from core.majeval.session.export import (
    BOOTSTRAP_SAMPLES,
    agreement,
    export_comparison,
    export_results,
)
from core.majeval.session.repeats import load_repeats, run_repeats
from core.method import JudgeCandidate
from core.runs import CancelToken, Progress
from core.settings import ModelProfile, Settings

if TYPE_CHECKING:  # pragma: no cover
    from core.method import MethodSession
    from core.project import Edit, Project
    from core.project._file import Origin  # the origins the project keeps (a type only)

__all__ = ["MajEvalSession"]

#: What :meth:`MajEvalSession.store_input` keeps: the documents about the stakeholders and the
#: items file.
INPUT_ROLES = ("documents", "items")


class MajEvalSession:
    """MAJ-Eval in ``project`` (see the module's docstring for the order of calls).

    ``settings`` holds the model profiles; the choices name the one used (the default one when
    it is gone). ``models(profile, project, run_id)`` makes the model a step talks to (the app
    and the command line: :func:`core.llm.gateway_for`, which caches and logs every call in
    the project; tests: a scripted model). ``problem`` says why the stored choices could not be
    read ("" when they could: they are then kept aside in the project and fresh ones used).
    """

    method: ClassVar[str] = METHOD

    def __init__(self, project: Project, choices: MajEvalChoices, *, settings: Settings,
                 models: LLMFactory = gateway_for, problem: str = "") -> None:
        self.project = project
        self.settings = settings
        self.models = models
        self.problem = problem
        self._choices = choices
        self._step_models: list[JsonLLM] = []

    @classmethod
    def open(cls, project: Project, *, settings: Settings,
             models: LLMFactory = gateway_for) -> MajEvalSession:
        """The MAJ-Eval session of ``project`` (its choices read, or fresh ones)."""
        choices, problem = open_choices(project)
        return cls(project, choices, settings=settings, models=models, problem=problem)

    def snapshot(self) -> MajEvalSession:
        """This session with a copy of the choices as they are now, for work in a worker
        thread while a person goes on changing them (the project, settings and models are
        shared)."""
        return MajEvalSession(self.project, self._choices.model_copy(deep=True),
                              settings=self.settings, models=self.models,
                              problem=self.problem)

    # ================================================================== choices and model
    @property
    def choices(self) -> MajEvalChoices:
        """MAJ-Eval's choices in this project (changed in place by the steps that say so)."""
        return self._choices

    def save_choices(self, choices: MajEvalChoices) -> None:
        """Keep ``choices`` (they become :attr:`choices`)."""
        self._choices = choices
        save_choices(self.project, choices)

    def profile(self) -> ModelProfile | None:
        """The model profile the choices name (the default one when it is gone; None when
        there is no profile at all)."""
        try:
            return self.settings.profile(self._choices.profile or None)
        except (KeyError, ValueError):
            return self.settings.profile() if self.settings.profiles else None

    def model_used(self) -> ModelProfile | str:
        """The chosen profile as a run records it ("" when there is none)."""
        return self.profile() or ""

    def _chosen_profile(self) -> ModelProfile:
        profile = self.profile()
        if profile is None:
            raise ValueError("There is no model profile. Add one in Settings → Models.")
        return profile

    def _begin_step(self) -> None:
        self._step_models = []

    def _model(self, run_id: int | None = None) -> JsonLLM:
        """The chosen model for a step's run ``run_id`` (counted in :attr:`usage`)."""
        model: JsonLLM = self.models(self._chosen_profile(), self.project, run_id)
        self._step_models.append(model)
        return model

    @property
    def usage(self) -> Usage | None:
        """What the last step's models used so far (live while it runs; a run with repeats or
        conditions has a model per run, added up); None before a step made a model, or when
        a model keeps no usage."""
        models = list(self._step_models)
        used = [getattr(m, "usage", None) for m in models]
        if not used or any(u is None for u in used):
            return None
        return Usage.total(u for u in used if u is not None)

    # ======================================================================= input files
    def store_input(self, role: str, path: str | Path) -> MajEvalChoices:
        """Keep the input file ``path`` in the project as ``role``: "documents" (a document
        about the stakeholders: read, kept and listed; :meth:`add_document`) or "items" (the
        items file, read with the app's column guesses: :meth:`store_items` then
        :meth:`use_items`). Blocking: run it in an executor. Returns the choices."""
        if role == "documents":
            self.add_document(path)
        elif role == "items":
            opened = self.store_items(path)
            self.use_items(opened.setup, list(opened.read.items))
        else:
            raise ValueError(f"MAJ-Eval keeps {' and '.join(INPUT_ROLES)}, not “{role}”.")
        return self._choices

    def add_document(self, path: str | Path, *, progress: Progress | None = None,
                     cancel: CancelToken | None = None) -> Document:
        """Read a PDF/.txt/.md document (blocking), keep it and list it in the choices.
        Raises :class:`core.documents.DocumentError` with a plain message."""
        return documents.add_document(self.project, self._choices, path, progress=progress,
                                      cancel=cancel)

    def remove_document(self, name: str, who: str) -> None:
        documents.remove_document(self.project, self._choices, name, who)

    def documents(self) -> list[Document]:
        """The chosen documents, with the people's corrections, in the order added."""
        return documents.load_documents(self.project, self._choices)

    def document(self, name: str) -> Document:
        """Document ``name`` as kept (``KeyError`` when it is not in the project)."""
        return documents.stored_document(self.project, name)

    def has_document(self, name: str) -> bool:
        """Whether document ``name`` is kept in the project."""
        return documents.has_document(self.project, name)

    def edit_page(self, name: str, number: int, text: str, who: str) -> Document:
        return documents.edit_page(self.project, name, number, text, who)

    def revert_page(self, name: str, number: int, who: str) -> Document | None:
        return documents.revert_page(self.project, name, number, who)

    def page_edits(self, name: str, index: int) -> list[Edit]:
        return documents.page_edits(self.project, name, index)

    def store_items(self, path: str | Path, *, sheet: str | None = None,
                    header_row: int | None = None) -> OpenedItems:
        """Keep the items file and read it with the app's column guesses (blocking; the
        choices are not changed: :meth:`use_items`)."""
        return items.store_items(self.project, path, sheet=sheet, header_row=header_row)

    def items_file(self, setup: ItemsSetup | None = None) -> Path | None:
        """The items file of ``setup`` (default: the choices'): where it was chosen, or the
        project's copy when it is gone; None when neither is there."""
        return items.items_file(self.project, setup or self._choices.items)

    def use_items(self, setup: ItemsSetup, chosen: Sequence[Item]) -> None:
        """The items file ``setup`` (sheet and columns) and the items read with it become
        the choices' (saved)."""
        self._choices.items = setup
        self._choices.item_list = list(chosen)
        self.save_choices(self._choices)

    # ============================================================= stakeholders, personas
    def estimate_personas(self) -> Estimate | None:
        """What :meth:`find_stakeholders` will take with the chosen model (no call); None
        without documents, task or model."""
        profile = self.profile()
        if profile is None:
            return None
        return personas.estimate_personas(self.project, self._choices, profile)

    async def find_stakeholders(self, *, progress: Progress | None = None,
                                cancel: CancelToken | None = None) -> personas.PersonasMade:
        """Stages 1-2 with the chosen model: the stakeholders and their perspectives in each
        document (a document read with the same task, text and model is not read again),
        grouped, one persona per distinct perspective; personas a person edited are kept.
        The choices are updated (and saved) as each document is read. Raises
        :class:`core.majeval.model.StageError` when no persona could be made."""
        self._begin_step()
        return await personas.create_personas_stored(self.project, self._choices, self._model(),
                                                     progress=progress, cancel=cancel)

    def personas(self) -> list[Persona]:
        return personas.load_personas(self.project)

    def groups(self) -> list[StakeholderGroup]:
        return personas.load_groups(self.project)

    def save_groups(self, groups: Sequence[StakeholderGroup], *, origin: Origin = "human"
                    ) -> None:
        personas.save_groups(self.project, groups, origin=origin)

    def group_descriptions(self) -> dict[str, str]:
        return personas.group_descriptions(self.project)

    def edit_persona(self, persona: Persona, field_name: str, new: object, who: str
                     ) -> Persona:
        """A person changes one field of a persona (kept with who and when; ``ValueError``
        when a required field would be emptied)."""
        return personas.edit_persona(self.project, persona, field_name, new, who)

    def add_persona(self, group: str, name: str, who: str) -> Persona:
        return personas.add_persona(self.project, group, name, who)

    def delete_persona(self, persona: Persona, who: str) -> None:
        personas.delete_persona(self.project, persona, who)

    def restore_persona(self, persona: Persona, who: str) -> Persona:
        return personas.restore_persona(self.project, persona, who)

    def replace_personas(self, imported: Sequence[Persona], who: str,
                         descriptions: dict[str, str] | None = None) -> list[Persona]:
        """Imported personas (a Personas workbook) replace the stored ones."""
        return personas.replace_personas(self.project, imported, who, descriptions)

    def persona_edits(self, persona_id: str) -> list[Edit]:
        """A persona's edits by people, oldest first (who and when)."""
        return self.project.list_edits((PERSONA_ARTEFACT, persona_id))

    def personas_made_by(self) -> dict[str, object] | None:
        return personas.personas_made_by(self.project, self._choices)

    def personas_out_of_date(self) -> str:
        return personas.personas_out_of_date(self.project, self._choices)

    def export_personas(self, path: str | Path, *, readme: Sequence[tuple[str, str]] = ()
                        ) -> Path:
        """The Personas workbook (editable; imported again by the wizard or ``evaldesk
        majeval run``)."""
        return personas.export_personas(self.project, self._choices, path, readme=readme)

    # ========================================================================== the run
    def estimate(self, *, latency: Latency | None = None) -> Estimate:
        """Calls, tokens, cost and time of the debates still to run with the chosen model,
        every repeat the choices ask for together (no call; ``latency``: e.g. of one probe
        call). Items too long for the model are in ``too_long``. Raises ``ValueError`` when
        there is no model, no persona or no item."""
        return debates.estimate_run(self.project, self._choices, self._chosen_profile(),
                                    latency=latency, repeats=self._choices.repeats)

    async def run(self, *, progress: Progress | None = None, cancel: CancelToken | None = None,
                  estimate: Estimate | None = None, live: dict[str, str] | None = None
                  ) -> EvaluationRun:
        """The debates of every item and group with the chosen model, then repeats 1..N-1
        when the choices ask for N; each finished debate is kept at once (a stopped run
        resumes). ``estimate``: the one shown before (made now when None), kept with the run
        once it has finished. ``live``: where each running debate is (see
        :meth:`unit_statuses`). Returns repeat 0's results."""
        self._begin_step()
        model = self._chosen_profile()
        if estimate is None:
            estimate = await asyncio.get_running_loop().run_in_executor(
                None, self.snapshot().estimate)
        run = await debates.run_debates(self.project, self._choices, self._model, model=model,
                                        progress=progress, cancel=cancel, live=live)
        if self._choices.repeats > 1:
            await run_repeats(self.project, self._choices, self._model, None,
                              self._choices.repeats, model=model, progress=progress,
                              cancel=cancel, first=plain_result(self._choices.settings, run))
        if run.run_id is not None:
            debates.keep_estimate(self.project, run.run_id, estimate)
        return run

    def load_results(self) -> EvaluationRun | None:
        """The results of the current choices and model from the project (no call); None
        when a debate is missing or the choices changed since."""
        return debates.load_run(self.project, self._choices, self.model_used())

    def run_progress(self) -> tuple[int, int]:
        """(debates finished, debates in all) with the current choices and model, every
        repeat counted."""
        model = self.model_used()
        done, total = debates.run_progress(self.project, self._choices, model)
        for k in range(1, self._choices.repeats):
            more, _ = debates.run_progress(self.project, self._choices, model, repeat=k)
            done += more
        return done, total * max(1, self._choices.repeats)

    def unit_statuses(self, live: dict[str, str] | None = None) -> list[dict[str, str]]:
        """One row per (item, group) debate: finished, failed, running (from ``live``) or
        waiting."""
        return debates.unit_statuses(self.project, self._choices, self.model_used(), live=live)

    def run_differences(self, run: EvaluationRun) -> list[str]:
        """What differs between the choices that made ``run`` and today's, in plain words."""
        return debates.run_differences(self.project, self._choices, run, self.model_used())

    @staticmethod
    def agreement(run: EvaluationRun, n_boot: int = BOOTSTRAP_SAMPLES
                  ) -> tuple[list[GroupAlpha], list[HumanAgreement]]:
        """Alpha within each group and the correlations with the human ratings (blocking)."""
        return agreement(run, n_boot)

    def load_repeats(self, names: Sequence[str] | None = None) -> ByRepeat:
        """The repeats the choices ask for kept in the project (of the conditions ``names``,
        or of the debates), as far as they go; [] without repeats."""
        if self._choices.repeats < 2:
            return []
        return load_repeats(self.project, self._choices, names, self._choices.repeats,
                            self.model_used())

    def stability(self, repeats: ByRepeat) -> list[RepeatEntry]:
        """How alike ``repeats`` (:meth:`load_repeats`) are, per condition and dimension, on
        the chosen items (none below 2 repeats)."""
        if len(repeats) < 2:
            return []
        return stability(repeats, self._choices.item_list,
                         [d.name for d in self._choices.dimensions])

    # =================================================================== the conditions
    def estimate_conditions(self, names: Sequence[str], *, latency: Latency | None = None
                            ) -> Estimate:
        """What :meth:`run_conditions` of ``names`` will take (every repeat together)."""
        return cd.estimate_conditions(self.project, self._choices, names, self._chosen_profile(),
                                      latency=latency, repeats=self._choices.repeats)

    async def run_conditions(self, names: Sequence[str], *, progress: Progress | None = None,
                             cancel: CancelToken | None = None) -> dict[str, ConditionResult]:
        """The conditions ``names`` on the same items with the chosen model (what is kept
        makes no call; repeats 1..N-1 too when the choices ask for N); the choices stay as
        they were. Returns repeat 0's results."""
        self._begin_step()
        model = self._chosen_profile()
        if self._choices.repeats > 1:
            return (await run_repeats(self.project, self._choices, self._model, names,
                                      self._choices.repeats, model=model, progress=progress,
                                      cancel=cancel))[0]
        return await cd.run_conditions(self.project, self._choices, self._model, names,
                                       model=model, progress=progress, cancel=cancel)

    def load_conditions(self, names: Sequence[str]) -> dict[str, ConditionResult]:
        """The conditions among ``names`` kept for the chosen model (no call)."""
        return cd.load_conditions(self.project, self._choices, names, self.model_used())

    def missing_conditions(self, names: Sequence[str]) -> list[str]:
        """The conditions among ``names`` still to run: not kept, with failed items, or a
        repeat the choices ask for not finished."""
        model = self.model_used()
        have = cd.load_conditions(self.project, self._choices, names, model)
        missing = [n for n in names if n not in have or not have[n].complete]
        if self._choices.repeats < 2:
            return missing
        kept = self.load_repeats(names)
        return missing + [n for n in names if n not in missing and (
            len(kept) < self._choices.repeats or any(n not in r or not r[n].complete
                                                     for r in kept))]

    # ================================================================== check the judge
    def judge_to_check(self) -> tuple[JudgeData | None, str]:
        return judge.judge_to_check(self.project, self._choices)

    def judges_to_compare(self) -> list[JudgeCandidate]:
        return judge.judges_to_compare(self.project, self._choices)

    def choose_judge(self, key: str) -> str:
        """Make the condition ``key`` ("<condition>:<model>", from :meth:`judges_to_compare`)
        the project's judge: its debate options and its model's profile (the profile with the
        model and the settings it ran with, else one with the same model) become the choices.
        Nothing is saved when no profile uses its model."""
        chosen, used, done = judge.condition_choice(self.project, self._choices, key)
        if chosen is None:
            return done
        model = model_name(used)
        profiles = self.settings.profiles
        same = profiles_of(profiles, used)  # the model and the settings it ran with
        profile = next((p for p in profiles if p.name in same), None) or next(
            (p for p in profiles if model and p.model == model), None)
        current = self.profile()
        if profile is None and model and model != (current.model if current else ""):
            return (f"No model profile uses {model}: add one in Settings → Models, then "
                    "choose it on the Run page.")
        if profile is not None:
            chosen.profile = profile.name
            done += f" Model profile: “{profile.name}” ({model})."
        self.save_choices(chosen)
        return done

    # =========================================================================== export
    def export(self, path: str | Path, *, who: str, run: EvaluationRun | None = None,
               n_boot: int = BOOTSTRAP_SAMPLES, progress: Progress | None = None,
               cancel: CancelToken | None = None) -> Path:
        """The results workbook of ``run`` (the results shown; default: :meth:`load_results`)
        with the conditions kept beside it and, with repeats, the Stability sheet
        (blocking). ``who`` exports it (the workbook names the people who edited personas and
        pages from the project's record). Raises ``ValueError`` when there are no results and
        :class:`core.tables.TableError` when the file cannot be written."""
        del who  # the edits' authors are in the project's record of them
        if run is None:
            run = self.load_results()
        if run is None:
            raise ValueError("There are no results to export yet: run the debates first.")
        return export_results(self.project, run, path, progress, cancel, n_boot=n_boot,
                              choices=self._choices.model_copy(deep=True),
                              repeats=self.load_repeats())

    def export_conditions(self, path: str | Path, names: Sequence[str],
                          results: dict[str, ConditionResult], *,
                          n_boot: int = COMPARISON_BOOT) -> list[dict[str, object]]:
        """The command line's comparison workbook of the conditions ``names`` (``results``:
        repeat 0's, from :meth:`run_conditions`; the Stability sheet of their repeats when the
        choices ask for some); returns the comparison's rows."""
        repeats = self.load_repeats(names)
        return export_comparison(path, self._choices, results, repeats,
                                 model=self._chosen_profile().model, n_boot=n_boot)


if TYPE_CHECKING:  # pragma: no cover
    def _satisfies_the_protocol(session: MajEvalSession
                                ) -> MethodSession[MajEvalChoices, EvaluationRun]:
        return session  # mypy checks that the session has every verb of the protocol
