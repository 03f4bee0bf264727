"""MAJ-Eval's repeat runs in the project: repeats 0..N-1 of the debates (or of the conditions)
run, and read back without a call. Repeat 0 is the ordinary run; repeat k > 0 is its own
project run whose every call uses repeat index k. Comparing the repeats is pure
(:mod:`core.majeval.repeats`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from core.majeval.conditions import ConditionResult
from core.majeval.model import JsonLLM, RunModel
from core.majeval.repeats import MAX_REPEATS, ByRepeat, plain_result
from core.majeval.session.choices import MajEvalChoices
from core.majeval.session.conditions import load_conditions, run_conditions
from core.majeval.session.debates import load_run, run_debates
from core.runs import CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = ["load_repeats", "run_repeats"]


async def run_repeats(
    project: Project,
    choices: MajEvalChoices,
    llm_for_run: Callable[[int], JsonLLM],
    names: Sequence[str] | None,
    repeats: int,
    *,
    model: RunModel = "",
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    first: dict[str, ConditionResult] | None = None,
) -> ByRepeat:
    """Repeats 0..``repeats``-1 of the conditions ``names`` (:func:`run_conditions`), or,
    with ``names`` None, of the debates with the current options (:func:`run_debates`).
    What a repeat already kept is read back without a call. ``first``: repeat 0 when it was
    just run (conditions' results, or :func:`core.majeval.repeats.plain_result` of the
    debates)."""
    if not 1 <= repeats <= MAX_REPEATS:
        raise ValueError(f"Repeat each call 1 to {MAX_REPEATS} times, not {repeats}.")
    out: ByRepeat = [first] if first is not None else []
    for k in range(len(out), repeats):
        if names is None:
            run = await run_debates(project, choices, llm_for_run, model=model,
                                    progress=progress, cancel=cancel, repeat=k)
            out.append(plain_result(choices.settings, run))
        else:
            out.append(await run_conditions(project, choices, llm_for_run, names, model=model,
                                            progress=progress, cancel=cancel, repeat=k))
    return out


def load_repeats(project: Project, choices: MajEvalChoices, names: Sequence[str] | None,
                 repeats: int, model: RunModel) -> ByRepeat:
    """The repeats kept in the project (no model call), as far as they go: the list stops at
    the first repeat that is missing (then fewer than ``repeats`` come back)."""
    out: ByRepeat = []
    for k in range(repeats):
        if names is None:
            run = load_run(project, choices, model, repeat=k)
            if run is None:
                break
            out.append(plain_result(choices.settings, run))
        else:
            if model is None:
                break
            found = load_conditions(project, choices, names, model, repeat=k)
            if not found:
                break
            out.append(found)
    return out
