"""Blank answers: decide from the data's design whether a blank counts, and how much.

AQER's paper assumes every worker answers the same questions. When a sheet has gaps, two
designs are possible, and they need opposite rules:

* **dense** (most workers answered most questions, as in a class test): every worker was given
  every question, so a question left blank is a real, weak answer. Scoring a worker on the
  answered questions only would let a weak worker climb by leaving the hardest questions blank.
  A blank counts as the weakest possible answer (rule ``"worst"``; see :func:`blank_values`).
* **sparse** (workers were given different subsets, as in crowdsourcing): a missing pair was
  never asked, so it stays missing (rule ``"missing"``).

The design is detected as dense when at least half of the workers answered at least half of the
questions; the user can override the rule (``AqerSettings.blank_answers``, the wizard's Columns
page, ``--blank-answers``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from core.aqer.responses import PreparedResponses

__all__ = [
    "MISSING_WORDS",
    "WORST_WORDS",
    "BlankRule",
    "blank_rule",
    "blank_values",
    "detect_design",
]

#: How a counted blank is scored, in the words of the Read me and the screens.
WORST_WORDS = (
    "a blank answer counts as the weakest possible answer: similarity 0 with the consensus "
    "(what an answer unrelated to it gets), or the question's lowest similarity if a real "
    "answer scored below 0"
)
MISSING_WORDS = (
    "a question a worker left blank (or was not given) does not count for or against them: "
    "each worker is scored on the questions they answered"
)


@dataclass(frozen=True)
class BlankRule:
    """The rule a run uses for blank answers, the design found in the data and why."""

    rule: Literal["worst", "missing"]
    design: Literal["dense", "sparse"]
    evidence: str
    """What the design was decided from ("9 of 10 workers answered at least half of ...")."""
    chosen: bool = False
    """True when the user chose the rule rather than leaving it to the data."""

    @property
    def reason(self) -> str:
        """One plain paragraph: the rule, and why (the design found or the user's choice)."""
        what = WORST_WORDS if self.rule == "worst" else MISSING_WORDS
        if self.chosen:
            return f"Chosen by you: {what}. (The answers look {self.design}: {self.evidence}.)"
        kind = (
            "as when everyone sits the same test"
            if self.design == "dense"
            else "as when each worker is given a different subset of the questions"
        )
        return (
            f"Decided from the data: the answers look {self.design} ({self.evidence}), {kind}; "
            f"so {what}."
        )


def detect_design(answered: pd.DataFrame, workers: int, questions: int) -> tuple[str, str]:
    """``("dense" | "sparse", evidence)`` from the real answers (columns worker, question).

    Dense when at least half of the ``workers`` answered at least half of the ``questions``.
    """
    import pandas as pd

    worker, names = pd.factorize(answered["worker"].to_numpy(dtype=object))
    question, asked = pd.factorize(answered["question"].to_numpy(dtype=object))
    return _design(answered, (worker, len(names)), (question, len(asked)), workers, questions)


def _design(
    answered: pd.DataFrame,
    worker_codes: tuple[np.ndarray, int],
    question_codes: tuple[np.ndarray, int],
    workers: int,
    questions: int,
) -> tuple[str, str]:
    """:func:`detect_design` from ``answered``'s workers and questions already numbered
    (``pd.factorize`` codes and how many distinct values there are)."""
    import pandas as pd

    (worker, n_names), (question, n_asked) = worker_codes, question_codes
    # From numbers: each (worker, question) pair once, then the questions per worker.
    if (worker < 0).any() or (question < 0).any():  # a missing name: as pandas counts it
        per_worker = answered.groupby("worker")["question"].nunique()
        most = int((per_worker >= questions / 2).sum())
        given = len(answered.drop_duplicates(["worker", "question"]))
    else:
        pairs = pd.unique(worker.astype(np.int64) * max(n_asked, 1) + question)
        per_worker = np.bincount(pairs // max(n_asked, 1), minlength=n_names)
        most = int((per_worker >= questions / 2).sum())
        given = len(pairs)
    cells = workers * questions
    dense = workers > 0 and most >= workers / 2
    share = f"{given / cells:.0%}" if cells else "0%"
    evidence = (
        f"{most:,} of {workers:,} worker{'s' if workers != 1 else ''} answered at least half of "
        f"the {questions:,} question{'s' if questions != 1 else ''}; {given:,} of the {cells:,} "
        f"possible answers ({share}) were given"
    )
    return ("dense" if dense else "sparse"), evidence


def blank_rule(
    prepared: PreparedResponses,
    setting: str = "auto",
    llm_as_workers: bool = False,
    *,
    numbered: tuple[np.ndarray, Any, np.ndarray, Any] | None = None,
) -> BlankRule:
    """The rule for ``prepared`` under the setting ``"auto"`` / ``"worst"`` / ``"missing"``.

    ``numbered``: the answers' workers and questions already numbered by the caller, as
    ``(*pd.factorize(workers), *pd.factorize(questions))`` of the rows that count as workers
    (all rows with ``llm_as_workers``, else those that are not an LLM's), so they are not
    numbered twice."""
    import pandas as pd

    frame = prepared.frame
    blanks = prepared.blanks
    if not llm_as_workers:
        if frame["is_llm"].any():
            frame = frame[~frame["is_llm"]]
        blanks = blanks[~blanks["is_llm"]] if len(blanks) else blanks

    # Each column numbered once: the design is counted from the numbers, and the distinct
    # values of the sheet are those numbered plus any only found among the blanks.
    if numbered is None:
        worker, names = pd.factorize(frame["worker"].to_numpy(dtype=object))
        question, asked = pd.factorize(frame["question"].to_numpy(dtype=object))
    else:
        worker, names, question, asked = numbered

    def distinct(column: str, found: np.ndarray) -> int:
        if not len(blanks):
            return len(found)
        values = [np.asarray(found, dtype=object), blanks[column].to_numpy(dtype=object)]
        return int(pd.Series(np.concatenate(values), dtype=object).nunique())

    design, evidence = _design(
        frame, (worker, len(names)), (question, len(asked)),
        distinct("worker", names), distinct("question", asked),
    )
    if setting in ("worst", "missing"):
        return BlankRule(setting, design, evidence, chosen=True)  # type: ignore[arg-type]
    return BlankRule("worst" if design == "dense" else "missing", design, evidence)  # type: ignore[arg-type]


def blank_values(question: np.ndarray, similarity: np.ndarray, n_questions: int) -> np.ndarray:
    """Per question, what a counted blank scores: min(0, the lowest similarity of a real answer).

    0 is the cosine of an answer unrelated to the consensus; an empty answer says nothing, so it
    can never come closer than that, nor closer than any real answer to the same question.
    """
    lowest = np.zeros(n_questions, dtype=np.float64)
    question = np.asarray(question, dtype=np.int64)
    values = np.asarray(similarity, dtype=np.float64)
    keep = np.isfinite(values)
    np.minimum.at(lowest, question[keep], values[keep])
    return lowest
