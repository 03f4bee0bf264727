"""The paper's main comparison gives a result on essays (issue 28, point 3). People-only vs
models-only vs combined checklists were compared only per source document (needing 10 of them
for the paired test): 40 essays on one prompt, or without a prompt column, gave "not enough
units" or nothing at all. Where the texts do not share source documents, the conditions are
compared on Spearman's rho pooled over all texts with the paired test over texts, and every row
says which way was used and why; with enough source documents, the paper's way stays."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from core.interacteval import TextItem, TextScore
from core.interacteval import conditions as cd

DIM = "Vocabulary"


def _essays(n=40, *, prompts=None, seed=3):
    """Essays with a teacher's score; three conditions' checklist scores: combined close to
    the teacher, people-only a little further, models-only mostly noise."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(float)
    items, scores = [], {"human": [], "ai": [], "combined": []}
    for k in range(n):
        prompt = prompts[k % len(prompts)] if prompts else ""
        items.append(TextItem(id=f"E{k:02d}", text=" ".join(["word"] * (80 + 9 * k % 150)),
                              source=prompt, human={DIM: float(human[k])}))
    noise = {"combined": 0.6, "human": 1.2, "ai": 4.0}
    for name, sd in noise.items():
        values = np.clip(human + rng.normal(0, sd, n), 1, 5)
        for k, v in enumerate(values):
            scores[name].append(TextScore(text_id=f"E{k:02d}", dimension=DIM, status="ok",
                                          score=float(np.round(v * 4) / 4), questions=16,
                                          answered=16))
    return items, scores, human


def _row(rows, condition):
    return next(r for r in rows if r["condition"] == cd.CONDITIONS.get(condition, condition))


def test_essays_without_a_source_are_compared_pooled_with_a_paired_test_over_texts():
    items, scores, human = _essays()
    rows = cd.comparison_rows(scores, items, n_boot=500)
    assert {r["compared"] for r in rows} == {cd.POOLED}
    assert all("the texts have no source document" in r["why_this_way"] for r in rows)
    combined = [s.score for s in scores["combined"]]
    assert _row(rows, "combined")["value"] == pytest.approx(
        sps.spearmanr(combined, human).statistic, abs=1e-12)
    people = _row(rows, "human")
    # a result, not "not enough units": the paired test over the 40 texts
    assert people["vs_combined_n"] == 40 and people["vs_combined_difference"] is not None
    assert people["vs_combined_ci_low"] is not None and people["vs_combined_p"] is not None
    assert "paired percentile bootstrap over pairs" in people["vs_combined_note"]
    ai = _row(rows, "ai")
    assert ai["vs_combined_ci_high"] < 0  # the noisy models-only checklist: clearly worse
    assert "agrees less well with your ratings of Vocabulary than Checklist from both" in ai[
        "summary"]
    # the length baseline is compared the same way
    length = _row(rows, cd.LENGTH)
    lengths = [len(i.text.split()) for i in items]
    assert length["value"] == pytest.approx(sps.spearmanr(lengths, human).statistic, abs=1e-12)
    assert length["vs_combined_n"] == 40


def test_essays_on_one_prompt_are_compared_pooled_and_say_why():
    items, scores, _human = _essays(prompts=["Should schools ban phones?"])
    rows = cd.comparison_rows(scores, items, n_boot=200)
    assert {r["compared"] for r in rows} == {cd.POOLED}
    assert all("share few source documents (1 in all, 1 with two or more texts"
               in r["why_this_way"] for r in rows)
    assert _row(rows, "human")["vs_combined_difference"] is not None
    lines = dict(cd.how_compared(rows))
    assert lines[f"How {DIM} was compared"].startswith("pooled over all texts: ")


def test_with_enough_source_documents_the_paper_s_way_stays():
    prompts = [f"Article {k}" for k in range(12)]
    items, scores, _human = _essays(n=48, prompts=prompts)
    rows = cd.comparison_rows(scores, items, n_boot=200)
    assert {r["compared"] for r in rows} == {cd.PER_DOCUMENT}
    assert {r["statistic"] for r in rows} == {"Spearman rho per source document, averaged"}
    people = _row(rows, "human")
    assert people["documents"] == 12 and people["vs_combined_n"] == 12
    assert "paired percentile bootstrap over groups" in people["vs_combined_note"]


def test_a_condition_that_gives_every_essay_the_same_score_is_flagged():
    items, scores, _human = _essays()
    scores["ai"] = [s.model_copy(update={"score": 3.0}) for s in scores["ai"]]
    rows = cd.comparison_rows(scores, items, n_boot=0)
    assert "may not be reading the texts" in _row(rows, "ai")["warning"]
    assert _row(rows, "combined")["warning"] == ""
