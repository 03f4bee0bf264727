"""Agreement of checklist scores with human scores, per dimension, each kind clearly labelled.

* **per-source-document averaged** (G-Eval's and InteractEval's "summary-level"; the paper's
  Eq. 2): inside each source document, Spearman / Kendall tau-b / Pearson between the checklist
  scores and the human scores of its texts; documents whose scores are constant on either side
  are skipped (and counted); the mean over the rest. ``core.stats.grouped_correlations``.
* **pooled over all texts** (CheckEval's code calls it "sample-level").
* **per system**: the mean score of each generating system, correlated over systems (when the
  texts have a system).

Beside each kind, the **length baseline**: the same correlation (same kind, same bootstrap) of
the texts' length (number of words) with the human scores, so a reader sees when the checklist
adds nothing beyond length. :func:`judge_spreads` says, per dimension and without human scores,
whether the checklist tells the texts apart at all (most texts with the same answers or score, a
question answered alike for every text, scores that follow length): ``core.stats.judge_spread``.

Only texts that were scored and have a human score take part; texts without a score (failed or
incomplete) are counted in the note, never given a score. A text that is one of its dimension's
think-aloud samples (``TextScore.think_aloud_sample``) helped build the checklist, so it is not
a test item: it is left out by default (``include_samples=True`` keeps it) and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.interacteval.model import TextScore

if TYPE_CHECKING:  # pragma: no cover
    from core import stats

#: The labels of ``core.stats`` (repeated so that importing this module stays cheap: numpy and
#: scipy load on the first computation). A test checks they agree.
GROUPED_LABEL = "per-source-document averaged"
POOLED_LABEL = "pooled over all texts"

__all__ = [
    "GROUPED_LABEL",
    "PER_SYSTEM_LABEL",
    "POOLED_LABEL",
    "DimensionAgreement",
    "agreement_rows",
    "human_agreement",
    "judge_spreads",
    "scatter_points",
    "spread_rows",
]

PER_SYSTEM_LABEL = "per system (mean score of each system)"
_X = "the checklist scores"
_Y = "the human scores"
_L = "the texts' lengths"
#: Why a length baseline is missing when the texts were not kept with their scores.
NO_TEXTS = ("the texts were not kept with these scores (score them again to see the length "
            "baseline)")


@dataclass
class DimensionAgreement:
    """The three kinds of correlation for one dimension. A kind that could not be computed at
    all (no source ids, no systems) is None and ``missing`` says why."""

    dimension: str
    per_document: stats.GroupedCorrelationReport | None
    pooled: stats.CorrelationReport
    per_system: stats.CorrelationReport | None
    texts: int  #: texts of this dimension
    used: int  #: scored texts with a human score
    failed: int  #: texts that failed or are incomplete (no checklist score)
    without_human: int  #: scored texts without a human score
    missing: dict[str, str] = field(default_factory=dict)
    samples_left_out: int = 0  #: think-aloud samples left out (not counted above)
    samples_included: int = 0  #: think-aloud samples among the texts used
    #: The length baseline of each kind (label -> the same correlations with the texts' length
    #: in place of the checklist scores); a kind missing here is in ``length_missing``.
    length: dict[str, stats.CorrelationReport | stats.GroupedCorrelationReport] = \
        field(default_factory=dict)
    length_missing: str = ""

    @property
    def comparison(self) -> str:
        return f"{self.dimension}: checklist scores vs human scores"

    def note(self) -> str:
        parts = [f"{self.used} of {self.texts} texts used"]
        if self.samples_left_out:
            parts.append(f"{_samples(self.samples_left_out)} left out")
        if self.samples_included:
            parts.append(f"{_samples(self.samples_included)} included on request")
        if self.failed:
            parts.append(f"{self.failed} without a score (failed or incomplete) left out")
        if self.without_human:
            parts.append(f"{self.without_human} without a human score left out")
        return "; ".join(parts)


def _samples(n: int) -> str:
    return "1 think-aloud sample" if n == 1 else f"{n} think-aloud samples"


def human_agreement(
    scores: Sequence[TextScore], *, n_boot: int = 1000, seed: int = 0,
    include_samples: bool = False,
) -> list[DimensionAgreement]:
    """One :class:`DimensionAgreement` per dimension that has at least one human score, in
    the order the dimensions first appear. Think-aloud samples are left out unless
    ``include_samples``."""
    from core import stats

    dimensions: list[str] = []
    for score in scores:
        if score.dimension not in dimensions:
            dimensions.append(score.dimension)
    out = []
    for dimension in dimensions:
        mine = [s for s in scores if s.dimension == dimension]
        if all(s.human is None for s in mine):
            continue
        left_out = [] if include_samples else [s for s in mine if s.think_aloud_sample]
        kept = [s for s in mine if not (s.think_aloud_sample and not include_samples)]
        usable = [s for s in kept if s.status == "ok" and s.score is not None
                  and s.human is not None]
        x = [s.score for s in usable]
        y = [s.human for s in usable]
        missing: dict[str, str] = {}
        per_document = None
        if any(s.source_id for s in usable):
            per_document = stats.grouped_correlations(
                x, y, [s.source_id or None for s in usable], n_boot=n_boot, seed=seed,
                x_name=_X, y_name=_Y,
            )
        else:
            missing[GROUPED_LABEL] = "the texts have no source, so they cannot be grouped"
        pooled = stats.correlations(x, y, n_boot=n_boot, seed=seed, x_name=_X, y_name=_Y)
        per_system = None
        systems: dict[str, list[TextScore]] = {}
        for s in usable:
            if s.system:
                systems.setdefault(s.system, []).append(s)
        if systems:
            names = list(systems)
            mean_x = [sum(t.score for t in systems[n]) / len(systems[n]) for n in names]  # type: ignore[misc]
            mean_y = [sum(t.human for t in systems[n]) / len(systems[n]) for n in names]  # type: ignore[misc]
            per_system = stats.correlations(
                mean_x, mean_y, n_boot=n_boot, seed=seed, label=PER_SYSTEM_LABEL,
                x_name="the systems' mean checklist scores", y_name="the systems' mean human scores",
            )
        else:
            missing[PER_SYSTEM_LABEL] = "the texts have no system column"
        length, length_missing = _length_baseline(usable, y, n_boot=n_boot, seed=seed)
        out.append(DimensionAgreement(
            dimension=dimension,
            per_document=per_document,
            pooled=pooled,
            per_system=per_system,
            texts=len(mine),
            used=len(usable),
            failed=sum(1 for s in kept if s.status != "ok"),
            without_human=sum(1 for s in kept if s.status == "ok" and s.human is None),
            missing=missing,
            samples_left_out=len(left_out),
            samples_included=sum(1 for s in usable if s.think_aloud_sample),
            length=length, length_missing=length_missing,
        ))
    return out


def _length_baseline(usable: Sequence[TextScore], y: Sequence[Any], *, n_boot: int, seed: int
                     ) -> tuple[dict[str, Any], str]:
    """The correlations of the texts' length with the human scores, of the same kinds as the
    checklist's (per source document averaged when the texts have sources, pooled, per
    system), with the same bootstrap."""
    from core import stats

    if not usable:
        return {}, ""
    if not all(s.text for s in usable):
        return {}, NO_TEXTS
    lengths = [stats.word_count(s.text) for s in usable]
    out: dict[str, Any] = {}
    if any(s.source_id for s in usable):
        out[GROUPED_LABEL] = stats.grouped_correlations(
            lengths, y, [s.source_id or None for s in usable], n_boot=n_boot, seed=seed,
            x_name=_L, y_name=_Y)
    out[POOLED_LABEL] = stats.correlations(lengths, y, n_boot=n_boot, seed=seed, x_name=_L,
                                           y_name=_Y)
    systems: dict[str, list[int]] = {}
    for k, s in enumerate(usable):
        if s.system:
            systems.setdefault(s.system, []).append(k)
    if systems:
        names = list(systems)
        out[PER_SYSTEM_LABEL] = stats.correlations(
            [sum(lengths[k] for k in systems[n]) / len(systems[n]) for n in names],
            [sum(float(y[k]) for k in systems[n]) / len(systems[n]) for n in names],
            n_boot=n_boot, seed=seed, label=PER_SYSTEM_LABEL,
            x_name="the systems' mean text lengths", y_name="the systems' mean human scores")
    return out, ""


def judge_spreads(scores: Sequence[TextScore], *, n_boot: int = 1000, seed: int = 0
                  ) -> list[tuple[str, stats.JudgeSpread]]:
    """Per dimension (in order of appearance): does the checklist tell the texts apart?
    Over every text with a score: how many got the most common answers (the Yes/No of each
    question in order, e.g. ``YNYNY``) and the most common score, the questions answered the
    same way for every text, and how closely the scores follow the texts' length
    (``core.stats.judge_spread``). Needs no human scores."""
    from core import stats

    dimensions = list(dict.fromkeys(s.dimension for s in scores))
    out = []
    for dimension in dimensions:
        mine = [s for s in scores if s.dimension == dimension and s.status == "ok"
                and s.score is not None]
        patterns = ["".join({"yes": "Y", "no": "N"}.get(a.answer or "", "?")
                            for a in sorted(s.answers, key=lambda a: a.number)) or None
                    for s in mine]
        questions: dict[str, list[Any]] = {}
        labels: dict[int, str] = {}
        for s in mine:
            for a in s.answers:
                labels.setdefault(a.number, f"question {a.number} ({a.question})")
        for number, label in sorted(labels.items()):
            answers = []
            for s in mine:
                found = next((a for a in s.answers if a.number == number), None)
                answers.append(None if found is None or found.answer is None
                               else found.answer == "yes")
            questions[label] = answers
        lengths = [stats.word_count(s.text) for s in mine] \
            if mine and all(s.text for s in mine) else None
        out.append((dimension, stats.judge_spread(
            [s.score for s in mine], patterns=patterns if any(patterns) else None,
            lengths=lengths, questions=questions, human=[s.human for s in mine],
            who=f"the checklist of {dimension}",
            units="texts", n_boot=n_boot, seed=seed)))
    return out


def spread_rows(spreads: Sequence[tuple[str, stats.JudgeSpread]]) -> list[dict[str, Any]]:
    """The rows of :func:`judge_spreads` for the Agreement sheet."""
    rows = []
    for dimension, spread in spreads:
        rows += spread.rows(f"{dimension}: does the checklist tell the texts apart?")
    return rows


def _usable(scores: Sequence[TextScore], dimension: str,
            include_samples: bool) -> list[TextScore]:
    """The texts of ``dimension`` that take part in the agreement (as :func:`human_agreement`
    chooses them)."""
    return [s for s in scores if s.dimension == dimension
            and not (s.think_aloud_sample and not include_samples)
            and s.status == "ok" and s.score is not None and s.human is not None]


def scatter_points(scores: Sequence[TextScore], dimension: str, *,
                   include_samples: bool = False) -> tuple[list[tuple[str, float, float]], bool]:
    """The dots of a checklist-score-against-human-score plot for ``dimension``, with the texts
    :func:`human_agreement` uses: ``([(text id, x, y), ...], per_document)``.

    When the texts have source documents the paper's statistic compares texts only with the
    other texts of the same document, so the dots do too (``per_document`` True): x and y are
    each text's score minus the mean of its document's texts (0 = the document's average), and
    a document with a single usable text is left out. Without sources, the scores themselves."""
    # every usable text has a score and a human score (see _usable)
    usable = [(s, float(s.score or 0), float(s.human or 0))
              for s in _usable(scores, dimension, include_samples)]
    if not any(s.source_id for s, _x, _y in usable):
        return [(s.text_id, x, y) for s, x, y in usable], False
    documents: dict[str, list[tuple[TextScore, float, float]]] = {}
    for s, x, y in usable:
        if s.source_id:
            documents.setdefault(s.source_id, []).append((s, x, y))
    out: list[tuple[str, float, float]] = []
    for texts in documents.values():
        if len(texts) < 2:
            continue
        mean_x = sum(x for _s, x, _y in texts) / len(texts)
        mean_y = sum(y for _s, _x, y in texts) / len(texts)
        out.extend((s.text_id, x - mean_x, y - mean_y) for s, x, y in texts)
    return out, True


def agreement_rows(results: Sequence[DimensionAgreement]) -> list[dict[str, Any]]:
    """Rows for the ``Agreement`` sheet (columns ``core.stats.ROW_COLUMNS``): per dimension the
    per-document averaged, pooled and per-system correlations; a kind that could not be computed
    gets one row saying why. Every note says how many texts were used and left out."""
    from core import stats

    rows: list[dict[str, Any]] = []
    for result in results:
        comparison = result.comparison
        extra = result.note()
        for label, report in (
            (stats.GROUPED_LABEL, result.per_document),
            (stats.POOLED_LABEL, result.pooled),
            (PER_SYSTEM_LABEL, result.per_system),
        ):
            if report is None:
                rows.append({
                    "comparison": comparison, "statistic": "", "kind": label, "value": None,
                    "p_value": None, "ci_low": None, "ci_high": None, "n": 0,
                    "note": f"Not computed: {result.missing.get(label, 'not available')}.",
                })
                continue
            for row in report.to_rows(comparison):
                if isinstance(report, stats.GroupedCorrelationReport):
                    row["note"] = _join(
                        f"{report.groups_used} of {len(report.groups)} source documents used",
                        row["note"],
                    )
                row["note"] = _join(row["note"], extra)
                rows.append(row)
        rows += _length_rows(result)
    return rows


def _length_rows(result: DimensionAgreement) -> list[dict[str, Any]]:
    """The length baseline's rows of one dimension: one per kind the checklist has."""
    from core import stats

    comparison = f"{result.dimension}: {stats.LENGTH_NAME} vs human scores (baseline)"
    rows: list[dict[str, Any]] = []
    if result.length_missing:
        return [{"comparison": comparison, "statistic": "", "kind": POOLED_LABEL,
                 "value": None, "p_value": None, "ci_low": None, "ci_high": None, "n": 0,
                 "note": _join(f"Not computed: {result.length_missing}", result.note())}]
    for report in result.length.values():
        for row in report.to_rows(comparison):
            if isinstance(report, stats.GroupedCorrelationReport):
                row["note"] = _join(
                    f"{report.groups_used} of {len(report.groups)} source documents used",
                    row["note"])
            row["note"] = _join(row["note"], "the same texts and statistic as the checklist's "
                                "row above, with each text's number of words in place of its "
                                "score", result.note())
            rows.append(row)
    return rows


def _join(*parts: str) -> str:
    return "; ".join(p.strip().rstrip(".") for p in parts if p and p.strip())
