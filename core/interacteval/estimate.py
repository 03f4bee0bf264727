"""The planned calls of an InteractEval scoring run, for the estimate shown before it starts
(:mod:`core.llm.estimate`). Pure: the session passes what is stored.

Building a checklist (:func:`plan_build`): one think-aloud call per model, then one call per
construction step (components, groups, key questions, sub-questions, review); the steps' prompt
sizes are rough, since they hold what earlier steps will write. The single judge
(:func:`plan_single_judge`): one call per text and dimension.

Scoring, per text and dimension: with the whole checklist in one call (the paper's setting) one call,
and at most one more that asks the questions left unanswered; with one question per call, one
call per question. A text already scored in the project (same checklist, model and options)
makes no call. Empty texts and empty checklists make none either.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from core.interacteval import _prompts
from core.interacteval._common import dimension_values
from core.interacteval.checklist_scoring import SingleAnswer, _key, _schema_for, _values
from core.interacteval.model import Checklist, ScoringSettings, TextItem
from core.interacteval.pipeline import unit_key
from core.llm.estimate import StagePlan

__all__ = ["combine", "guessed_checklist", "plan_build", "plan_scoring", "plan_single_judge"]


def plan_scoring(checklists: Sequence[Checklist], items: Sequence[TextItem],
                 settings: ScoringSettings, *, done: Collection[str] = (),
                 limits: Any = None) -> tuple[list[StagePlan], int]:
    """(the stages of the scoring still to do, texts x dimensions already scored). With
    ``limits`` (the model's, ``core.llm.context.Limits``) a checklist too long for one prompt
    with a text counts one call per part of its questions, and a text too long for the model
    counts none (it is refused: :func:`core.interacteval.checklist_scoring.refused_texts`)."""
    from core.interacteval.checklist_scoring import question_parts, too_long
    from core.llm.context import TooLong

    whole = _prompts.load("checklist_scoring")
    single = _prompts.load("question_scoring")
    per_question = settings.mode == "per_question"
    stages = []
    skipped = 0
    for checklist in checklists:
        questions = checklist.questions
        stage = StagePlan(
            f"{checklist.dimension}, " + ("one question per call" if per_question
                                          else "the whole checklist per call"), [],
            SingleAnswer if per_question
            else _schema_for(tuple(_key(i) for i in range(1, len(questions) + 1))),
            chain=(1, 1) if per_question else (1, 2))
        for item in items:
            if unit_key(checklist, item) in done:
                skipped += 1
                continue
            if not questions or not item.text.strip():
                continue
            values = _values(checklist, item)
            if per_question and limits is not None and too_long(checklist, item, limits,
                                                                settings):
                continue  # refused before the run
            if per_question:
                stage.prompts.extend(single.messages(**values, question=" ".join(q.split()))
                                     for q in questions)
                continue
            try:
                parts = question_parts(checklist, item, limits)
            except TooLong:
                continue  # refused before the run
            for part in parts:
                listed = "\n".join(f"{_key(i)}. {' '.join(questions[i - 1].split())}"
                                   for i in part)
                messages = whole.messages(**values, questions=listed)
                stage.prompts.append(messages)
                stage.maybe.append(messages)  # the unanswered questions asked again
        if stage.prompts:
            stages.append(stage)
    for stage in stages[1:]:
        stage.chain = (0, 0)  # the dimensions are scored side by side
    return stages, skipped


# ------------------------------------------------------------------- building and conditions
#: The construction steps after the think-aloud, with the template each one fills.
BUILD_TEMPLATES = (("components", "component_extraction"), ("clusters", "attribute_clustering"),
                   ("key_questions", "key_questions"), ("sub_questions", "sub_questions"),
                   ("checklist", "validation"))
#: Every construction step, in order.
BUILD_STEPS = tuple(key for key, _template in BUILD_TEMPLATES)
#: Completion tokens assumed for a construction step's reply (a list of components, groups or
#: questions; its size is not known before the step runs).
BUILD_REPLY_TOKENS = 350
#: Questions assumed per checklist when a condition's checklist is not built yet (the paper's
#: checklists have about this many).
GUESSED_QUESTIONS = 10


def plan_build(dimension: Any, samples: Sequence[Any], notes: Sequence[Any], *,
               think_aloud: int, steps: Sequence[str] = BUILD_STEPS,
               validate: bool = True, label: str = "", limits: Any = None,
               grounded: bool = False) -> list[StagePlan]:
    """The calls of building one checklist: ``think_aloud`` calls (one per model thinking
    aloud) and one call per construction step in ``steps``. The steps' prompts hold what the
    models will write, unknown before the run: they are filled with the people's notes (or a
    short stand-in), so their size is a rough figure. With ``limits`` (the model's,
    ``core.llm.context.Limits``) inputs too long for one prompt count one call per part, as
    the steps split them; an input too long even alone counts none (it is refused:
    :func:`build_refusals`). ``grounded``: the built-in model's path (components named from
    the notes' words, no model for the key questions and sub-questions, one review call per
    question)."""
    from core.interacteval.attribute_clustering import clusters_part_prompts
    from core.interacteval.component_extraction import grounded_parts, note_parts
    from core.interacteval.model import Attribute, StageError
    from core.interacteval.think_aloud import Considerations, format_samples, sample_parts

    label = f"{label}: " if label else ""
    named = dimension_values(dimension)
    plan = []
    if think_aloud:
        template = _prompts.load("think_aloud")
        try:
            parts = sample_parts(dimension, samples, limits)
        except StageError:
            parts = []
        prompts = [template.messages(**named, samples=format_samples(part) if part
                                     else "(no rated texts were given)") for part in parts]
        plan.append(StagePlan(f"{label}think-aloud on {dimension.name}",
                              prompts * think_aloud, Considerations))
    stand_in = [Attribute(text="(a note the models will write)") for _ in range(8)]
    attributes = list(notes) or stand_in
    listed = "\n".join(f"{i}. {' '.join(a.text.split())}" for i, a in enumerate(attributes, 1))
    values = {**named, "attributes": listed,
              "components": listed, "n_components": "5", "max_components": "5",
              "clusters": listed, "key_questions": listed, "questions": listed}
    for key, name in BUILD_TEMPLATES:
        if key not in steps or (key == "checklist" and not validate):
            continue
        title = f"{label}{key.replace('_', ' ')} of {dimension.name}"
        if grounded and key in ("key_questions", "sub_questions"):
            continue  # written from the notes, no model asked
        if grounded and key == "checklist":
            choice = _prompts.load("question_choice")
            plan.append(StagePlan(title, [choice.messages(**named, question=a.text)
                                          for a in attributes], reply_tokens=8))
            continue
        template = _prompts.load(name)
        prompts = [template.messages(**{k: values[k] for k in _placeholders(name)})]
        maybe: list[Any] = []
        try:
            if key == "components" and grounded:
                prompts = [_prompts.load("component_names").messages(
                    **named, attributes="\n".join(
                        f"{i}. {a.text}" for i, a in enumerate(part, 1)), n_notes=len(part))
                    for part in grounded_parts(dimension, attributes, limits)]
            elif key == "components":
                note_groups = note_parts(dimension, attributes, limits)
                prompts = [template.messages(**{**values, "attributes": "\n".join(
                    f"- {a.text}" for a in part)}) for part in note_groups]
                if len(note_groups) > 1:  # the parts' components chosen among by one more call
                    maybe = [prompts[0]]
            elif key == "clusters":
                prompts = clusters_part_prompts(dimension, attributes, limits,
                                                grounded=grounded)
        except StageError:
            prompts = []  # refused before the run
        plan.append(StagePlan(title, prompts, maybe=maybe, reply_tokens=BUILD_REPLY_TOKENS))
    return plan


def build_refusals(dimension: Any, samples: Sequence[Any], notes: Sequence[Any], *,
                   builder: Any = None, assessors: Sequence[Any] = (),
                   grounded: bool = False) -> list[str]:
    """Why building the checklist of ``dimension`` cannot start (one sentence per input too
    long for a model even alone: a rated sample for a model thinking aloud, a note for the
    builder), before any call. ``builder``, ``assessors``: the models' ``Limits``."""
    from core.interacteval.component_extraction import grounded_parts, note_parts
    from core.interacteval.model import StageError
    from core.interacteval.think_aloud import sample_parts

    problems = []
    for limits in assessors:
        try:
            sample_parts(dimension, samples, limits)
        except StageError as exc:
            problems.append(exc.message)
    if builder is not None and notes:
        try:
            (grounded_parts if grounded else note_parts)(dimension, notes, builder)
        except StageError as exc:
            problems.append(exc.message)
    return list(dict.fromkeys(problems))


def _placeholders(name: str) -> list[str]:
    import re

    template = _prompts.load(name)
    text = template.system + "\n" + template.user
    return sorted(set(re.findall(r"\$([a-z_]+)", text)))


def guessed_checklist(dimension: Any) -> Checklist:
    """A stand-in checklist of :data:`GUESSED_QUESTIONS` questions for the estimate of
    scoring with a checklist not built yet."""
    from core.interacteval.model import ChecklistItem

    return Checklist(dimension=dimension.name, definition=dimension.definition, items=[
        ChecklistItem(component="(to be built)",
                      question=f"Does the text meet point {i} of this dimension well?")
        for i in range(1, GUESSED_QUESTIONS + 1)])


def plan_single_judge(dimensions: Sequence[Any], items: Sequence[TextItem], *,
                      done: Collection[str] = ()) -> tuple[list[StagePlan], int]:
    """(one call per text and dimension not yet judged, texts x dimensions already judged)."""
    from core.interacteval.single_judge import TEMPLATE, JudgeReply, judge_key, judge_values

    template = _prompts.load(TEMPLATE)
    stage = StagePlan("single judge, one call per text and dimension", [], JudgeReply)
    skipped = 0
    for dim in dimensions:
        for item in items:
            if judge_key(dim.name, item) in done:
                skipped += 1
            elif item.text.strip():
                stage.prompts.append(template.messages(**judge_values(dim, item)))
    return ([stage] if stage.prompts else []), skipped


def combine(parts: Sequence[Any]) -> Any:
    """One :class:`core.llm.estimate.Estimate` of several run one after another (each with
    its own model): calls, tokens, cost and time added up; the stages name their model when
    the models differ; the cost is unknown when one price is unknown."""
    from dataclasses import replace

    parts = [p for p in parts if p is not None]
    if len(parts) == 1:
        return parts[0]
    models = list(dict.fromkeys(p.model for p in parts if p.calls_max)) or [parts[0].model]
    stages = [replace(s, name=f"{s.name} ({p.model})") if len(models) > 1 else s
              for p in parts for s in p.stages]
    costs = [p.cost for p in parts]
    costs_max = [p.cost_max for p in parts]
    first = next((p for p in parts if p.calls_max), parts[0])
    return replace(
        first, model=" and ".join(models), stages=stages,
        calls=sum(p.calls for p in parts), calls_max=sum(p.calls_max for p in parts),
        prompt_tokens=sum(p.prompt_tokens for p in parts),
        prompt_tokens_max=sum(p.prompt_tokens_max for p in parts),
        completion_tokens=sum(p.completion_tokens for p in parts),
        completion_tokens_max=sum(p.completion_tokens_max for p in parts),
        cost=None if None in costs else sum(costs),
        cost_max=None if None in costs_max else sum(costs_max),
        seconds=sum(p.seconds for p in parts), seconds_max=sum(p.seconds_max for p in parts),
        done_already=sum(p.done_already for p in parts),
        done_what=next((p.done_what for p in parts if p.done_already), first.done_what))
