"""The conditions of a project's AQER choices: the same answers scored with another embedding
model or blank-answer rule, each stored under its own fingerprint like any result (an unchanged
condition is found again; a re-run embeds only texts its model never saw), and compared with
the choices' own result (AQER, simplified AQER, RASA, F1 and BLEU-1 are columns of every
result)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.aqer.comparison import Comparison, comparison_table
from core.aqer.model import AqerChoices, AqerCondition
from core.aqer.session.encoders import EncoderFactory
from core.aqer.session.results import StoredResult, load_result, run_choices

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.runs import CancelToken, Progress

__all__ = ["choose_condition", "comparison", "condition_choices", "load_conditions",
           "run_conditions"]


def condition_choices(choices: AqerChoices) -> dict[str, AqerChoices]:
    """The choices of each of ``choices.conditions`` by its name (a condition equal to the
    choices themselves is left out: AQER is already the default condition)."""
    out: dict[str, AqerChoices] = {}
    for condition in choices.conditions:
        other = condition.apply(choices)
        if other.fingerprint() != choices.fingerprint():
            out.setdefault(condition.label(), other)
    return out


def load_conditions(project: Project, choices: AqerChoices,
                    names: Sequence[str] | None = None) -> dict[str, StoredResult]:
    """The stored results of the conditions ``names`` (None: all) computed so far (nothing is
    run)."""
    out = {}
    for name, other in condition_choices(choices).items():
        if names is not None and name not in names:
            continue
        stored = load_result(project, other)
        if stored is not None:
            out[name] = stored
    return out


def run_conditions(project: Project, choices: AqerChoices,
                   encoder_factory: EncoderFactory | None = None,
                   names: Sequence[str] | None = None, progress: Progress | None = None,
                   cancel: CancelToken | None = None) -> dict[str, StoredResult]:
    """Compute the conditions ``names`` (None: all) that are not in the project yet (an
    unchanged condition is read back, with no work); returns them by name. A plain function:
    run it in an executor."""
    out = {}
    for name, other in condition_choices(choices).items():
        if names is not None and name not in names:
            continue
        stored = load_result(project, other)
        if stored is None:
            if progress is not None:
                progress.start(f"Condition: {name}")
            stored = run_choices(project, other, encoder_factory, progress, cancel)
        out[name] = stored
    return out


def comparison(project: Project, choices: AqerChoices, stored: StoredResult) -> Comparison:
    """The Comparison table of ``stored`` (the default condition) and the conditions of
    ``choices`` computed so far."""
    others = load_conditions(project, choices)
    return comparison_table(stored.result, {k: v.result for k, v in others.items()})


def choose_condition(choices: AqerChoices, key: str) -> tuple[AqerChoices, str]:
    """``choices`` with the condition named ``key`` as their own (the embedding model and
    blank-answer rule the project then runs with), the choices they had kept as a condition
    so that they are still compared; and what was done, in words."""
    if not key:
        return choices, "AQER as set up is already the project's choice; nothing changed."
    found = next((c for c in choices.conditions if c.label() == key), None)
    if found is None:
        return choices, f"“{key}” is not among this project's conditions any more."
    chosen = found.apply(choices)
    before = AqerCondition(
        embedding_model=choices.embedding_model if found.embedding_model is not None else None,
        embedding_backend=(choices.embedding_backend if found.embedding_backend is not None
                           else None),
        blank_answers=(choices.settings.blank_answers if found.blank_answers is not None
                       else None))
    conditions = [c for c in choices.conditions if c != found]
    if before not in conditions:
        conditions.append(before)
    chosen = chosen.model_copy(update={"conditions": conditions})
    return chosen, (f"The project now scores with the choices of {key}. The earlier "
                    "choices stay as a condition to compare with. Its results are stored, so "
                    "the Results page shows them without running again.")
