"""A checklist judge that ignores the text is caught (issue 28, point 1): 40 essays on one
prompt with a teacher's Vocabulary scores (longer essays tend to score higher, as essays do),
scored through ``evaldesk checklist score`` by a scripted model that

* gives most essays the same answers whatever they say (flagged: the Read me has a WARNING,
  the Agreement sheet says FLAGGED, the CLI says so, though its agreement looks moderate),
* counts the essay's words (flagged: the scores follow length), or
* reads the essay (its answers depend on the words it uses; not flagged).

Beside every agreement with the teacher sits the length baseline (the essays' number of words
correlated the same way), checked against scipy.
"""

from __future__ import annotations

import random
import re

import pandas as pd
import pytest
from scipy import stats as sps

from core.cli import main
from core.interacteval import Checklist, ChecklistItem, write_checklists
from core.llm import ScriptedLLM

RICH = ["meticulous", "nuanced", "compelling", "articulate", "profound", "coherent"]
FILLER = ["phones", "are", "used", "by", "students", "in", "school", "every", "day", "and"]
PATTERN = "YNYNYN"


def essays(n: int = 40, seed: int = 7) -> pd.DataFrame:
    """Essays of one prompt: essay i uses ``quality`` of the rich words and has a length partly
    tied to its quality (rho about 0.5); the teacher's score follows the quality."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        quality = rng.randint(0, 6)
        words = 40 + quality * 25 + rng.randint(0, 160)
        body = [FILLER[k % len(FILLER)] for k in range(words - quality)]
        for j, word in enumerate(RICH[:quality]):
            body.insert((j * 7) % len(body), word)
        rows.append({"essay_id": f"E{i:02d}", "prompt": "Should schools ban phones?",
                     "essay": f"ESSAY-{i:02d} " + " ".join(body),
                     "Vocabulary": str(1 + quality * 4 / 6)})
    return pd.DataFrame(rows)


def _essay(prompt: str) -> str:
    found = re.search(r"ESSAY-\d\d [a-z ]+", prompt)
    assert found, prompt[:300]
    return found.group(0)


def _replies(kind: str):
    def reply(messages):
        text = _essay("\n".join(m["content"] for m in messages))
        words = len(text.split())
        if kind == "same":  # the same answers for most essays; the longest get more Yes
            answers = PATTERN if words < 190 else "YYYYYN" if words < 230 else "YYYYYY"
        elif kind == "length":  # as many Yes as the essay is long
            yes = min(6, max(0, (words - 40) // 45))
            answers = "Y" * yes + "N" * (6 - yes)
        else:  # reads it: question k is Yes when the essay uses the k-th rich word
            answers = "".join("Y" if w in text.split() else "N" for w in RICH)
        return {f"q{k + 1}": "yes" if a == "Y" else "no" for k, a in enumerate(answers)}
    return reply


@pytest.fixture
def files(tmp_path):
    essays().to_excel(tmp_path / "essays.xlsx", index=False)
    write_checklists(tmp_path / "checklist.xlsx", [Checklist(
        dimension="Vocabulary", definition="A wide, precise vocabulary.",
        items=[ChecklistItem(question=f"Does the essay use the word {w}?") for w in RICH])])
    return tmp_path


def _score(files, kind, capsys):
    llm = ScriptedLLM(_replies(kind), name=f"spread-{kind}")
    try:
        out = files / f"{kind}.xlsx"
        code = main(["checklist", "score", "--checklist", str(files / "checklist.xlsx"),
                     "--items", str(files / "essays.xlsx"), "--text-col", "essay",
                     "--id-col", "essay_id", "--model", f"scripted/spread-{kind}",
                     "-o", str(out)])
        printed = capsys.readouterr()
        assert code == 0, printed.err
    finally:
        llm.close()
    readme = pd.read_excel(out, sheet_name="Read me", header=None, dtype=str)
    agreement = pd.read_excel(out, sheet_name="Agreement")
    return readme, agreement, printed.out + printed.err


def _warnings(readme):
    return [str(v) for k, v in zip(readme[0], readme[1], strict=True) if k == "WARNING"]


def test_a_judge_giving_most_essays_the_same_answers_is_flagged(files, capsys):
    readme, agreement, printed = _score(files, "same", capsys)
    warnings = _warnings(readme)
    assert len(warnings) == 1
    assert "may not be reading the texts" in warnings[0]
    assert f"got exactly the same answers ({PATTERN})" in warnings[0]
    spread = agreement[agreement.statistic == "share with the most common answers"].iloc[0]
    assert spread.value > 0.5 and "FLAGGED" in spread.note
    # its agreement with the teacher looks moderate: exactly the trap
    pooled = agreement[(agreement.comparison == "Vocabulary: checklist scores vs human scores")
                       & (agreement.kind == "pooled over all texts")
                       & (agreement.statistic == "Spearman rho")].iloc[0]
    assert 0.3 < pooled.value < 0.7
    assert "may not be reading the texts" in printed


def test_a_judge_that_counts_words_is_flagged(files, capsys):
    readme, agreement, _printed = _score(files, "length", capsys)
    warnings = _warnings(readme)
    assert len(warnings) == 1 and "follow the texts' length closely" in warnings[0]
    row = agreement[agreement.statistic.fillna("").str.startswith(
        "Spearman rho with text length")].iloc[0]
    frame = essays()
    scores = pd.read_excel(files / "length.xlsx", sheet_name="Scores")
    lengths = [len(t.split()) for t in frame.essay]
    assert row.value == pytest.approx(sps.spearmanr(scores.score, lengths).statistic, abs=1e-12)
    assert "FLAGGED" in row.note


def test_a_judge_that_reads_the_essays_is_not_flagged(files, capsys):
    readme, agreement, printed = _score(files, "reads", capsys)
    assert _warnings(readme) == []
    assert not agreement.note.fillna("").str.contains("FLAGGED").any()
    assert "may not be reading" not in printed


def test_the_length_baseline_sits_beside_the_agreement(files, capsys):
    _readme, agreement, printed = _score(files, "reads", capsys)
    frame = essays()
    lengths = [len(t.split()) for t in frame.essay]
    human = frame.Vocabulary.astype(float)
    baseline = agreement[agreement.comparison
                         == "Vocabulary: text length (number of words) vs human scores "
                            "(baseline)"]
    checklist = agreement[(agreement.comparison
                           == "Vocabulary: checklist scores vs human scores")
                          & agreement.statistic.notna()]
    # the kinds the checklist has (the essays' one prompt is their source document)
    assert set(baseline.kind) == set(checklist.kind) == {"pooled over all texts",
                                                          "per-source-document averaged"}
    baseline = baseline[baseline.kind == "pooled over all texts"]
    expected = {"Spearman rho": sps.spearmanr(lengths, human).statistic,
                "Kendall tau-b": sps.kendalltau(lengths, human).statistic,
                "Pearson r": sps.pearsonr(lengths, human).statistic}
    for statistic, value in expected.items():
        row = baseline[baseline.statistic == statistic].iloc[0]
        assert row.value == pytest.approx(value, abs=1e-12)
        assert row.n == 40
        assert "percentile bootstrap over pairs (1000 resamples, seed 0)" in row.note
        assert row.ci_low < row.value < row.ci_high
    assert "Text length alone" in printed
