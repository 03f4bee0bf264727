"""Agreement with human scores on a crafted case, against values computed by hand."""

from __future__ import annotations

import math

import pytest

import core.interacteval.agreement as agreement_module
from core import stats
from core.interacteval import TextScore, agreement_rows, human_agreement


def _score(doc, system, pred, human, status="ok", dim="Coherence"):
    return TextScore(text_id=f"{doc}-{system}", dimension=dim, status=status,
                     score=pred if status == "ok" else None, source_id=doc, system=system,
                     human=human, questions=5, answered=5)


@pytest.fixture
def crafted():
    rows = [
        # d1: perfect agreement (rho = tau = r = 1)
        ("d1", "A", 1, 1), ("d1", "B", 2, 2), ("d1", "C", 3, 3),
        # d2: reversed (-1)
        ("d2", "A", 1, 3), ("d2", "B", 2, 2), ("d2", "C", 3, 1),
        # d3: rho = 0.5, tau = 1/3, r = 3 / sqrt(84)
        ("d3", "A", 1, 1), ("d3", "B", 2, 3), ("d3", "C", 4, 2),
        # d4: human scores constant: skipped
        ("d4", "A", 2, 3), ("d4", "B", 5, 3),
    ]
    scores = [_score(*r) for r in rows]
    scores.append(_score("d1", "D", None, 5, status="failed"))  # failed: left out, counted
    scores.append(_score("d2", "D", 4.2, None))  # no human score: left out, counted
    return scores


def test_per_document_averaged_by_hand(crafted):
    (result,) = human_agreement(crafted, n_boot=0)
    report = result.per_document
    assert report.label == "per-source-document averaged"
    assert report.groups_used == 3 and len(report.groups) == 4
    assert [g.group for g in report.skipped_groups] == ["d4"]
    assert report.spearman.value == pytest.approx((1 - 1 + 0.5) / 3)
    assert report.kendall.value == pytest.approx((1 - 1 + 1 / 3) / 3)
    assert report.pearson.value == pytest.approx((1 - 1 + 3 / math.sqrt(84)) / 3)
    assert report.spearman.p_value is None  # an average has no single test
    assert (result.texts, result.used, result.failed, result.without_human) == (13, 11, 1, 1)


def test_pooled_and_per_system(crafted):
    (result,) = human_agreement(crafted, n_boot=0)
    assert result.pooled.label == "pooled over all texts"
    assert result.pooled.n == 11
    # per system: means A (1.25 vs 2), B (2.75 vs 2.5), C (3.33 vs 2) -> Spearman 0 by hand
    assert result.per_system is not None
    assert result.per_system.n == 3
    assert result.per_system.spearman.value == pytest.approx(0.0, abs=1e-12)
    assert result.per_system.label == agreement_module.PER_SYSTEM_LABEL


def test_rows_are_labelled_with_n_and_groups(crafted):
    rows = agreement_rows(human_agreement(crafted, n_boot=0))
    assert {r["kind"] for r in rows} == {"per-source-document averaged", "pooled over all texts",
                                         agreement_module.PER_SYSTEM_LABEL}
    assert set(rows[0]) == set(stats.ROW_COLUMNS)
    grouped = [r for r in rows if r["kind"] == "per-source-document averaged"]
    assert [r["statistic"] for r in grouped] == ["Spearman rho", "Kendall tau-b", "Pearson r"]
    assert all("3 of 4 source documents used" in r["note"] for r in grouped)
    assert all("11 of 13 texts used" in r["note"] for r in rows)
    assert all("1 without a score" in r["note"] for r in rows)
    assert grouped[0]["n"] == 9  # pairs inside the 3 documents used


def test_missing_kinds_say_why():
    scores = [TextScore(text_id=str(i), dimension="Fluency", status="ok", score=s, human=h)
              for i, (s, h) in enumerate([(1, 2), (2, 3), (3, 3), (5, 4)])]
    (result,) = human_agreement(scores, n_boot=0)
    assert result.per_document is None and result.per_system is None
    rows = agreement_rows([result])
    missing = [r for r in rows if r["value"] is None and "checklist" in r["comparison"]]
    assert len(missing) == 2
    assert any("no source" in r["note"] for r in missing)
    assert any("no system" in r["note"] for r in missing)


def test_no_human_scores_no_agreement():
    scores = [TextScore(text_id="1", dimension="Fluency", status="ok", score=3.0)]
    assert human_agreement(scores) == []


def test_labels_match_core_stats():
    assert agreement_module.GROUPED_LABEL == stats.GROUPED_LABEL
    assert agreement_module.POOLED_LABEL == stats.POOLED_LABEL


def test_think_aloud_samples_are_left_out_by_default_and_counted(crafted):
    """Two texts that helped build the checklist (think-aloud samples) would reverse d3's
    correlation: they are not test items, so they are left out unless asked for."""
    flagged = [s.model_copy(update={"think_aloud_sample": s.text_id in ("d3-B", "d3-C")})
               for s in crafted]
    (without,) = human_agreement(flagged, n_boot=0)
    assert (without.used, without.samples_left_out, without.samples_included) == (9, 2, 0)
    assert without.pooled.n == 9
    assert [g.group for g in without.per_document.skipped_groups] == ["d3", "d4"]  # one text
    note = without.note()
    assert "9 of 13 texts used" in note
    assert "2 think-aloud samples left out" in note
    rows = agreement_rows([without])
    assert all("think-aloud samples left out" in r["note"] for r in rows)

    (included,) = human_agreement(flagged, n_boot=0, include_samples=True)
    assert (included.used, included.samples_left_out, included.samples_included) == (11, 0, 2)
    assert included.pooled.n == 11
    assert "2 think-aloud samples included on request" in included.note()
