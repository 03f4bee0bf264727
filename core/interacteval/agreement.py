"""Agreement of checklist scores with human scores, per dimension, each kind clearly labelled.

* **per-source-document averaged** (G-Eval's and InteractEval's "summary-level"; the paper's
  Eq. 2): inside each source document, Spearman / Kendall tau-b / Pearson between the checklist
  scores and the human scores of its texts; documents whose scores are constant on either side
  are skipped (and counted); the mean over the rest. ``core.stats.grouped_correlations``.
* **pooled over all texts** (CheckEval's code calls it "sample-level").
* **per system**: the mean score of each generating system, correlated over systems (when the
  texts have a system).

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
    "scatter_points",
]

PER_SYSTEM_LABEL = "per system (mean score of each system)"
_X = "the checklist scores"
_Y = "the human scores"


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
        ))
    return out


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
    usable = _usable(scores, dimension, include_samples)
    if not any(s.source_id for s in usable):
        return [(s.text_id, float(s.score), float(s.human)) for s in usable], False  # type: ignore[arg-type]
    documents: dict[str, list[TextScore]] = {}
    for s in usable:
        if s.source_id:
            documents.setdefault(s.source_id, []).append(s)
    out = []
    for texts in documents.values():
        if len(texts) < 2:
            continue
        mean_x = sum(float(t.score) for t in texts) / len(texts)  # type: ignore[arg-type]
        mean_y = sum(float(t.human) for t in texts) / len(texts)  # type: ignore[arg-type]
        out.extend((t.text_id, float(t.score) - mean_x, float(t.human) - mean_y)  # type: ignore[arg-type]
                   for t in texts)
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
    return rows


def _join(*parts: str) -> str:
    return "; ".join(p.strip().rstrip(".") for p in parts if p and p.strip())
