"""Is AQER better than the simple alternatives, on this data? The conditions side by side.

Conditions of one AQER run (every run computes them on the same answers): AQER (the default),
simplified AQER (one pass, equal weights), RASA, pseudo-reference F1 and BLEU-1. Other
conditions are the same answers scored with another embedding model or another blank-answer
rule (:class:`core.aqer.model.AqerCondition`, a run of their own; their AQER score is compared).

:func:`comparison_table` compares each condition's per-worker scores with the workers' expert
grades, the statistic and level of the paper's Table 3 (Pearson r per worker; Spearman rho, the
paper's Online Appendix D, beside it), with bootstrap CIs (``core.stats.correlations``) and, for
every condition against AQER, a paired bootstrap test of the difference over the workers both
scored (``core.stats.paired_correlation_difference``; "not enough units" below 10 workers).

:func:`workers_curve` answers "how many workers do I need?" (the paper's Section 6.2): for 3,
5, 10, 15, ... workers drawn at random (25 repetitions, seeded) it runs AQER on their answers
only and measures how well their scores agree with the grades (Pearson r) or, without grades,
with the full panel's ranking (Spearman rho).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from core.aqer.agreement import N_BOOT, SEED
from core.aqer.model import AqerResult
from core.runs import CancelToken, Progress

__all__ = [
    "BUILT_IN_CONDITIONS",
    "COMPARISON_COLUMNS",
    "COMPARISON_LABELS",
    "CURVE_COLUMNS",
    "CURVE_LABELS",
    "DEFAULT_CONDITION",
    "Comparison",
    "WorkersCurve",
    "comparison_sheets",
    "comparison_table",
    "condition_scores",
    "curve_sizes",
    "workers_curve",
]

#: The conditions every run computes: (name, the ``Workers`` column holding its scores, how).
BUILT_IN_CONDITIONS: tuple[tuple[str, str, str], ...] = (
    ("AQER", "score", "iterative reweighting to convergence (the paper's method)"),
    ("Simplified AQER", "simplified_score", "one pass with equal weights (the paper's ablation)"),
    ("RASA", "rasa_skill", "RASA worker skill on the same embeddings (baseline)"),
    ("Pseudo-reference F1", "f1", "mean token F1 against the other workers' answers (baseline)"),
    ("BLEU-1", "bleu1", "mean BLEU-1 against the other workers' answers (baseline)"),
)
DEFAULT_CONDITION = "AQER"

#: Columns of the ``Comparison`` sheet.
COMPARISON_COLUMNS = [
    "condition",
    "settings",
    "pearson",
    "pearson_ci_low",
    "pearson_ci_high",
    "spearman",
    "spearman_ci_low",
    "spearman_ci_high",
    "n",
    "difference",
    "difference_ci_low",
    "difference_ci_high",
    "p_value",
    "paired_n",
    "summary",
]

#: Columns of the ``Workers needed`` sheet.
CURVE_COLUMNS = ["workers", "repetitions", "scored", "mean", "sd", "low", "high", "min", "max"]


@dataclass
class Comparison:
    """The Comparison table and what the user needs to read it."""

    frame: pd.DataFrame
    """One row per condition (:data:`COMPARISON_COLUMNS`); empty when there are no grades."""
    reason: str = ""
    """Why there is no table ("" when there is one)."""
    note: str = ""
    """How it was computed, in plain words (statistic, level, bootstrap, seed)."""

    @property
    def summaries(self) -> list[str]:
        return [s for s in self.frame.get("summary", pd.Series(dtype=object)) if s]


def condition_scores(
    result: AqerResult, others: Mapping[str, AqerResult] | None = None
) -> list[tuple[str, str, list[float]]]:
    """(condition, its settings in words, per-worker scores in ``result.workers``' order) for
    every condition there is: the built-in ones this run computed, then ``others`` (name ->
    the result of another condition: its AQER score, matched by worker name; a worker it did
    not score is missing, never guessed)."""
    workers = result.workers
    names = workers["worker"].tolist()
    model = result.embedding_model or "the embedding model"
    out: list[tuple[str, str, list[float]]] = []
    for name, column, how in BUILT_IN_CONDITIONS:
        if column not in workers:
            continue
        uses_model = column in ("score", "simplified_score", "rasa_skill")
        setting = how + (f"; {model}" if uses_model else "") + f"; blank answers {_blank(result)}"
        out.append((name, setting, _numbers(workers[column])))
    for name, other in (others or {}).items():
        by_name = dict(zip(other.workers["worker"], _numbers(other.workers["score"])))
        setting = (f"AQER with {other.embedding_model or 'the embedding model'}; blank answers "
                   f"{_blank(other)}")
        out.append((name, setting, [by_name.get(n, float("nan")) for n in names]))
    return out


def comparison_table(
    result: AqerResult,
    others: Mapping[str, AqerResult] | None = None,
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> Comparison:
    """Each condition's agreement with the expert grades, per worker, and its paired test
    against AQER (see the module's words). The grades are those of ``result`` (the default
    condition's run), so every condition is compared with the same numbers."""
    from core import stats

    workers = result.workers
    if "expert_grade" not in workers or not workers["expert_grade"].notna().any():
        return Comparison(
            pd.DataFrame(columns=COMPARISON_COLUMNS),
            reason=("The answers have no expert grades, so the conditions cannot be compared "
                    "with them. Add a grade column (or a grades sheet) on the Columns page."),
        )
    grades = _numbers(workers["expert_grade"])
    conditions = condition_scores(result, others)
    default = next(scores for name, _, scores in conditions if name == DEFAULT_CONDITION)
    rows = []
    for name, setting, scores in conditions:
        report = stats.correlations(scores, grades, n_boot=n_boot, seed=seed,
                                    x_name=f"the {name} scores",
                                    y_name="the workers' expert grades", label="per worker")
        row: dict[str, Any] = {"condition": name, "settings": setting}
        for method in ("pearson", "spearman"):
            corr = report[method]
            row[method] = corr.value
            row[f"{method}_ci_low"] = corr.ci_low
            row[f"{method}_ci_high"] = corr.ci_high
        row["n"] = report.n
        if name == DEFAULT_CONDITION:
            row.update(difference=None, difference_ci_low=None, difference_ci_high=None,
                       p_value=None, paired_n=None)
            if report.pearson.defined:
                row["summary"] = (f"AQER agrees with your grades at Pearson r "
                                  f"{report.pearson.value:.2f} over {_count(report.n, 'worker')}"
                                  "; the other conditions are compared with it.")
            else:
                row["summary"] = f"AQER: no agreement can be computed ({report.pearson.reason})."
        else:
            paired = stats.paired_correlation_difference(
                scores, default, grades, method="pearson", n_boot=n_boot, seed=seed)
            row.update(difference=paired.difference, difference_ci_low=paired.ci_low,
                       difference_ci_high=paired.ci_high, p_value=paired.p_value,
                       paired_n=paired.n)
            # the units are workers: say so
            row["summary"] = paired.summary(name, "AQER").replace(
                f"{paired.n} pairs", _count(paired.n, "worker"))
        rows.append(row)
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    grade_words = ("the grade you gave each person" if _per_person(result)
                   else "each worker's mean expert grade")
    note = (
        f"Agreement of each condition's worker scores with {grade_words} (per worker, as in "
        "the paper's Table 3): Pearson r (the paper's statistic) and Spearman rho, each with a "
        f"95% bootstrap CI ({n_boot} resamples, seed {seed}). Difference = the condition's "
        "Pearson r minus AQER's, over the workers both scored, with a paired bootstrap CI and "
        f"two-sided p-value; fewer than {stats.MIN_PAIRED_UNITS} workers: not enough units."
    )
    return Comparison(frame, note=note)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _per_person(result: AqerResult) -> bool:
    return bool(len(result.agreement)) and result.agreement["comparison"].astype(str).str.contains(
        "vs expert grade (per worker)", regex=False).any()


def _blank(result: AqerResult) -> str:
    return "count as the weakest" if result.blank_rule == "worst" else "left out"


def _numbers(values: Any) -> list[float]:
    out = []
    for v in values:
        try:
            number = float(v)
        except (TypeError, ValueError):
            number = float("nan")
        out.append(number)
    return out


# ----------------------------------------------------------------------------- workers curve


@dataclass
class WorkersCurve:
    """How well AQER does with fewer workers: one row per panel size (:data:`CURVE_COLUMNS`)."""

    frame: pd.DataFrame
    against: str
    """What the scores were compared with: "expert grades" or "the full panel's ranking"."""
    statistic: str
    """"Pearson r" (with grades) or "Spearman rho" (against the full panel)."""
    repetitions: int
    seed: int
    total_workers: int
    values: dict[int, list[float]] = field(default_factory=dict)
    """Every repetition's value per panel size (NaN: that draw could not be scored)."""
    embedding_model: str = ""
    note: str = ""

    def describe(self) -> str:
        return (
            f"For each number of workers, {self.repetitions} panels drawn at random (seed "
            f"{self.seed}) from the {self.total_workers} workers; AQER scores each panel on its "
            f"own answers only ({self.embedding_model or 'the embedding model'}), and its scores "
            f"are compared with {self.against} ({self.statistic}, per worker). Mean, standard "
            "deviation, the middle 95% of the panels (low to high) and the lowest and highest."
        )


def curve_sizes(total: int) -> list[int]:
    """3, 5, 10, 15, 20, ... below ``total``, then ``total`` itself (the full panel)."""
    sizes = [n for n in (3, 5) if n < total]
    n = 10
    while n < total:
        sizes.append(n)
        n += 5
    return sizes + [total]


def _without_grades(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(grade="") if "grade" in frame else frame


class _Memo:
    """An encoder that embeds each text once (the panels share their answers)."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.vectors: dict[str, np.ndarray] = {}
        self.model_name = getattr(encoder, "model_name", "")
        self.device = getattr(encoder, "device", "")

    def __call__(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if new:
            for text, vector in zip(new, np.asarray(self.encoder(new), dtype=np.float32)):
                self.vectors[text] = vector
        return np.stack([self.vectors[t] for t in texts])


def workers_curve(
    prepared: Any,
    encoder: Any,
    result: AqerResult,
    *,
    sizes: Sequence[int] | None = None,
    repetitions: int = 25,
    seed: int = 0,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> WorkersCurve:
    """The "how many workers do I need?" curve for the answers ``prepared``
    (:class:`core.aqer.responses.PreparedResponses`) whose full-panel AQER result is ``result``.

    Each panel is scored by :func:`core.aqer.pipeline.aqer` on its members' answers only, with
    the full run's settings and blank-answer rule (baselines off, AI answers left out). A draw
    AQER cannot score (too few overlapping answers) counts as failed, shown in ``scored``.
    """
    from scipy import stats as sps

    from core.aqer.pipeline import aqer
    from core.aqer.responses import AqerInputError

    workers = result.workers
    if "is_llm" in workers:
        workers = workers[~workers["is_llm"].fillna(False).astype(bool)]
    workers = workers[workers["score"].notna()]
    names = sorted(workers["worker"].tolist())
    if len(names) < 3:
        raise ValueError(
            f"The curve needs at least 3 scored workers; this run scored {len(names)}.")
    grades = {}
    if "expert_grade" in workers:
        grades = {n: g for n, g in zip(workers["worker"], _numbers(workers["expert_grade"]))
                  if np.isfinite(g)}
    with_grades = len(grades) >= 3
    reference = grades if with_grades else dict(zip(workers["worker"],
                                                     _numbers(workers["score"])))
    correlate = sps.pearsonr if with_grades else sps.spearmanr
    settings = result.settings.model_copy(
        update={"baselines": False, "llm_as_workers": False, "blank_answers": result.blank_rule})
    sizes = sorted({int(s) for s in (sizes or curve_sizes(len(names))) if 2 <= s <= len(names)})
    memo = _Memo(encoder)
    # A panel is compared with ``reference`` here; its own agreement with the grades (bootstrap
    # CIs per panel) would only be thrown away, and was nine tenths of the time: no grades.
    frame = _without_grades(prepared.frame[~prepared.frame["is_llm"]])
    blanks = prepared.blanks
    if len(blanks):
        blanks = _without_grades(blanks[~blanks["is_llm"]])
    rng = np.random.default_rng(seed)
    total = sum(1 if n == len(names) else repetitions for n in sizes)
    if progress is not None:
        progress.start("How many workers: scoring random panels", total=total)
    values: dict[int, list[float]] = {}
    rows = []
    for size in sizes:
        reps = 1 if size == len(names) else repetitions
        got: list[float] = []
        for _ in range(reps):
            if cancel is not None:
                cancel.raise_if_cancelled()
            panel = set(rng.choice(names, size=size, replace=False).tolist())
            subset = replace(
                prepared,
                frame=frame[frame["worker"].isin(panel)],
                blanks=blanks[blanks["worker"].isin(panel)] if len(blanks) else blanks,
                notices=[],
                person_grades={},
            )
            value = float("nan")
            try:
                scored = aqer(subset, memo, settings=settings, cancel=cancel)
            except AqerInputError:
                scored = None
            if scored is not None:
                s = scored.workers[scored.workers["score"].notna()]
                pairs = [(float(x), reference[n]) for n, x in zip(s["worker"], s["score"])
                         if n in reference]
                if len(pairs) >= 3:
                    x, y = np.array(pairs).T
                    if np.ptp(x) > 0 and np.ptp(y) > 0:
                        value = float(correlate(x, y).statistic)
            got.append(value)
            if progress is not None:
                progress.advance(1, detail=f"{size} workers")
        values[size] = got
        ok = np.array([v for v in got if np.isfinite(v)])
        row: dict[str, Any] = {"workers": size, "repetitions": reps, "scored": int(ok.size)}
        if ok.size:
            low, high = np.quantile(ok, [0.025, 0.975])
            row.update(mean=float(ok.mean()), sd=float(ok.std(ddof=1)) if ok.size > 1 else None,
                       low=float(low), high=float(high), min=float(ok.min()),
                       max=float(ok.max()))
        rows.append(row)
    out = pd.DataFrame(rows, columns=CURVE_COLUMNS)
    failed = int(sum(out["repetitions"] - out["scored"]))
    note = ""
    if failed:
        note = (f"{_count(failed, 'panel')} gave no number (too few overlapping answers, or "
                "every score or grade the same) and "
                + ("is" if failed == 1 else "are") + " left out of the mean.")
    return WorkersCurve(
        out,
        against="the expert grades" if with_grades else "the full panel's AQER ranking",
        statistic="Pearson r" if with_grades else "Spearman rho",
        repetitions=repetitions,
        seed=seed,
        total_workers=len(names),
        values=values,
        embedding_model=result.embedding_model,
        note=note,
    )


# ----------------------------------------------------------------------------- the sheets

#: The sheets' words for the columns (the results page uses the same).
COMPARISON_LABELS = {
    "condition": "Condition",
    "pearson": "Pearson r",
    "pearson_ci_low": "r 95% CI low",
    "pearson_ci_high": "r 95% CI high",
    "spearman": "Spearman rho",
    "spearman_ci_low": "rho 95% CI low",
    "spearman_ci_high": "rho 95% CI high",
    "n": "Workers",
    "difference": "Difference in r vs AQER",
    "difference_ci_low": "Difference 95% CI low",
    "difference_ci_high": "Difference 95% CI high",
    "p_value": "p (paired test)",
    "paired_n": "Workers in the paired test",
    "summary": "In words",
    "settings": "Settings",
}
CURVE_LABELS = {
    "workers": "Workers",
    "repetitions": "Repetitions",
    "scored": "Gave a number",
    "mean": "Mean",
    "sd": "Standard deviation",
    "low": "Low (2.5%)",
    "high": "High (97.5%)",
    "min": "Lowest",
    "max": "Highest",
}


def comparison_sheets(comparison: Comparison | None,
                      curve: WorkersCurve | None) -> tuple[list[Any], list[tuple[str, str]]]:
    """The "Comparison" and "Workers needed" sheets (``core.tables.Sheet``) and their Read me
    rows; a comparison without rows (no grades) gives a Read me row saying why."""
    from core.tables import Sheet

    sheets: list[Any] = []
    notes: list[tuple[str, str]] = []
    if comparison is not None and len(comparison.frame):
        shown = comparison.frame[list(COMPARISON_LABELS)].rename(columns=COMPARISON_LABELS)
        formats = {COMPARISON_LABELS[c]: ("0.000" if c != "p_value" else "0.0000")
                   for c in COMPARISON_COLUMNS
                   if c not in ("condition", "settings", "summary", "n", "paired_n")}
        sheets.append(Sheet("Comparison", shown, description=comparison.note,
                            number_formats=formats))
        notes.append(("Comparison", comparison.note))
    elif comparison is not None and comparison.reason:
        notes.append(("Comparison", comparison.reason))
    if curve is not None:
        shown = curve.frame.rename(columns=CURVE_LABELS)
        formats = {CURVE_LABELS[c]: "0.000" for c in ("mean", "sd", "low", "high", "min", "max")}
        words = curve.describe() + (f" {curve.note}" if curve.note else "")
        sheets.append(Sheet("Workers needed", shown, description=words, number_formats=formats))
        notes.append(("Workers needed", words))
    return sheets, notes
