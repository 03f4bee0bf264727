"""AQER's scores of the AI answers as the judge "Check the judge" grades
(:mod:`core.aqer.judge_check`), read from the project: the current result's and each
condition's computed so far, and the grades the answers file itself gives the AI answers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.aqer.judge_check import file_ratings, judge_data
from core.aqer.llm_answers import where_ai_answers_go
from core.aqer.model import AqerChoices, embedding_model_name
from core.aqer.session.choices import answers_file, read_prepared
from core.aqer.session.conditions import load_conditions
from core.aqer.session.results import load_result

if TYPE_CHECKING:  # pragma: no cover
    from core.judge_check import JudgeData, Rating
    from core.method import JudgeCandidate
    from core.project import Project

__all__ = ["file_grades", "judge_to_check", "judges_to_compare"]


def judge_to_check(project: Project, choices: AqerChoices) -> tuple[JudgeData | None, str]:
    """AQER's scores of the AI answers of the current result, as the judge a person checks;
    (None, why) when there is nothing to grade."""
    stored = load_result(project, choices) if choices.content_hash else None
    if stored is None:
        return None, ("There are no AQER results for the current choices yet: run AQER "
                      "first.")
    judge = judge_data(stored.result, stored.finished_at)
    if not judge.items:
        layout = str(stored.inputs.get("Layout", ""))
        return None, ("These answers have no AI answers to grade (or the AI answers were "
                      "scored as extra workers). To check how well AQER's scores agree with "
                      f"your own grades, {where_ai_answers_go(layout)}, then run AQER again.")
    return judge, ""


def judges_to_compare(project: Project, choices: AqerChoices) -> list[JudgeCandidate]:
    """The current result and each condition computed so far (another embedding model or
    blank-answer rule) as ``(name, key, judge)`` for :func:`core.judge_check.rank_judges`;
    ``key`` is "" for the current choices, else the condition's name (see
    :func:`core.aqer.session.conditions.choose_condition`)."""
    stored = load_result(project, choices) if choices.content_hash else None
    if stored is None:
        return []
    current = f"AQER as set up (model {embedding_model_name(choices.embedding_model)})"
    out: list[JudgeCandidate] = [(current, "", judge_data(stored.result, stored.finished_at))]
    for name, other in load_conditions(project, choices).items():
        out.append((name, name, judge_data(other.result, other.finished_at)))
    return out


def file_grades(project: Project, choices: AqerChoices,
                judge: JudgeData) -> tuple[list[Rating], list[str]]:
    """The grades the answers file gives the AI answers of ``judge`` (from
    :func:`judge_to_check`), as the ratings of one rater named after the file
    (:func:`core.aqer.judge_check.file_ratings`), and what was left out, in words."""
    path, _ = answers_file(project, choices)
    prepared = read_prepared(project, choices, path)
    stored = load_result(project, choices)
    if stored is None:
        return [], []
    rater = f"Grades in {choices.file_name or Path(path).name}"
    return file_ratings(prepared, stored.result, judge, rater)
