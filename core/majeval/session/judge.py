"""MAJ-Eval's judge for "Check the judge": the current debates' scores as the judge a person
grades (:mod:`core.judge_check`), every condition of every model kept in the project as the
candidates of "Pick the judge", and what making one of them the project's judge means."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.judge_check import JudgeData
from core.llm.identity import describe_model, model_fields
from core.majeval.conditions import CONDITIONS, STEP_SINGLE
from core.majeval.judge_check import condition_judge, judge_data
from core.majeval.model import RunModel
from core.majeval.pipeline import METHOD, STEP_DEBATE
from core.majeval.session.choices import MajEvalChoices
from core.majeval.session.conditions import load_conditions
from core.majeval.session.debates import load_run
from core.method import JudgeCandidate
from core.project.inputs import fingerprint

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = ["condition_choice", "judge_to_check", "judges_to_compare", "run_models"]


def judge_to_check(project: Project, choices: MajEvalChoices) -> tuple[JudgeData | None, str]:
    """The current results as the judge a person checks (:mod:`core.judge_check`); (None,
    why) when there are none."""
    run = load_run(project, choices)
    if run is None:
        return None, ("There are no debate results to check yet: run the debates first (every "
                      "item must have finished with the current personas and options).")
    return judge_data(run), ""


def judges_to_compare(project: Project, choices: MajEvalChoices) -> list[JudgeCandidate]:
    """Every condition (:data:`core.majeval.conditions.CONDITIONS`: full personas after and
    before the debate, simple roles, a single judge) of every model that has scored the
    current items with the current personas, as ``(name, key, judge)`` for
    :func:`core.judge_check.rank_judges`; ``key`` is ``"<condition>:<model>"`` (see
    :func:`condition_choice`). Nothing is run: only what the project holds."""
    base, _ = judge_to_check(project, choices)
    if base is None:
        return []
    models = run_models(project)
    names = [f["model"] for f in models.values()]
    out: list[JudgeCandidate] = []
    for key, fields in models.items():
        model = fields["model"]
        # two profiles of one model are told apart by their settings
        shown = describe_model(fields) if names.count(model) > 1 else \
            (model or "model not recorded")
        for name, found in load_conditions(project, choices, list(CONDITIONS), fields).items():
            label = found.label if len(models) == 1 else f"{found.label} ({shown})"
            out.append((label, f"{name}:{model}" if names.count(model) == 1 else
                        f"{name}:{model}#{key}", condition_judge(base, found)))
    return out


def run_models(project: Project) -> dict[str, dict[str, Any]]:
    """The models of the finished debate and single-judge runs, as their settings name them
    (:func:`core.llm.identity.model_fields`), by a hash of that."""
    models: dict[str, dict[str, Any]] = {}
    for step in (STEP_DEBATE, STEP_SINGLE):
        for r in project.list_runs(METHOD, step):
            if r.status == "finished":
                fields = model_fields(r.settings or {})
                models.setdefault(fingerprint(fields), fields)
    return models


def condition_choice(project: Project, choices: MajEvalChoices, key: str
                     ) -> tuple[MajEvalChoices | None, RunModel, str]:
    """What making the condition ``key`` (``"<condition>:<model>"``, from
    :func:`judges_to_compare`) the project's judge means: the choices to keep (None when the
    wizard cannot score that way), the model to score with (as its runs recorded it:
    :func:`core.llm.identity.model_fields`; the model string alone when none ran), and what it
    does in words. The model's profile is chosen by the caller
    (:func:`core.llm.identity.profiles_of`)."""
    name, _, model = key.partition(":")
    model, _, wanted = model.partition("#")
    models = run_models(project)
    fields: RunModel = models.get(wanted) or next(
        (f for f in models.values() if f["model"] == model), model)
    if name not in CONDITIONS:
        return None, fields, f"“{key}” is not one of MAJ-Eval's conditions."
    label = CONDITIONS[name]
    if name == "single-judge":
        return None, fields, (
            f"“{label}” agrees best with you, but MAJ-Eval always scores with the personas, "
            "so it cannot be the project's judge here. Its scores are in the Conditions tab "
            "of the Results page (and its export).")
    settings = choices.settings.model_copy(update={
        "no_debate": name == "pre", "simple_roles": name == "simple"})
    chosen = choices.model_copy(update={"settings": settings}, deep=True)
    found = load_conditions(project, choices, [name], fields).get(name)
    if name != "pre" and found is not None and found.run_id is not None:
        chosen.run_id = found.run_id  # its debates are stored: shown without a new run
        then = "Its debates are already in the project, so its results are shown now."
    elif name == "pre":
        then = ("The next run asks each persona for its scores without the debate (fewer "
                "calls); start it on the Run page. The debates already run are kept.")
    else:
        then = "Start the run on the Run page."
    how = {"full": "full personas with the debate",
           "pre": "the personas' own scores, without the debate",
           "simple": "one-sentence roles with the debate"}[name]
    return chosen, fields, f"The project now scores with {how} (“{label}”). {then}"
