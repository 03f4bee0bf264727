"""Issue 11 (AQER): blank answers must not pay, AI answers placed like for like, expert grades
on AI rows, the final weights' consensus, grade means over scored answers, RASA on unit vectors.

Simulations use a lookup encoder: every answer text is a key to a vector drawn around the
question's true answer, with more noise for harder questions and weaker workers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.aqer import aqer
from core.aqer.model import AqerSettings
from core.aqer.rasa import rasa_skills
from core.aqer.report import readme_rows
from core.aqer.synthetic_exemplary_answer import EmbeddedResponses, cosine_rows
from tests.core.aqer.aqer_support import FACTS, long_frame


class Lookup:
    """Text -> its vector (the texts are keys such as "q3-w7")."""

    model_name = "lookup-vectors"
    device = "cpu"

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def __call__(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts]).astype(np.float32)


def simulate(seed: int, workers: int = 10, questions: int = 15, dim: int = 48,
             quality: dict[int, float] | None = None, difficulty=(0.6, 2.2)):
    """Answers of ``workers`` to ``questions``: vector = truth + noise * difficulty * quality."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(questions, dim))
    truth /= np.linalg.norm(truth, axis=1, keepdims=True)
    level = np.linspace(*difficulty, questions)  # question j gets harder with j
    quality = quality or {}
    vectors, rows = {}, []
    for i in range(workers):
        for j in range(questions):
            noise = rng.normal(size=dim) / np.sqrt(dim)
            key = f"q{j:02d}-w{i:02d}"
            vectors[key] = truth[j] + level[j] * quality.get(i, 1.0) * noise
            rows.append((f"Q{j:02d}", f"w{i:02d}", key))
    frame = pd.DataFrame(rows, columns=["question", "worker", "response"])
    return frame, vectors, truth, level, rng


# ------------------------------------------------------------------ 1. blank answers must not pay


def _rank(result, worker: str) -> int:
    return int(result.workers.set_index("worker").loc[worker, "rank"])


def test_a_weak_worker_who_leaves_the_hardest_questions_blank_does_not_climb():
    """The issue's simulation: 10 workers, 15 questions, w09 is the weakest. Answering all, it
    ranks last; leaving the 5 hardest blank must not lift it (it did: to about 2 of 10)."""
    full, blank, results = [], [], []
    for seed in range(6):
        frame, vectors, *_ = simulate(seed, quality={9: 1.35})
        encoder = Lookup(vectors)
        full.append(_rank(aqer(frame, encoder), "w09"))
        hardest = frame["question"].isin([f"Q{j:02d}" for j in range(10, 15)])
        frame.loc[hardest & (frame["worker"] == "w09"), "response"] = ""  # left blank
        results.append((aqer(frame, encoder), frame, encoder))
        blank.append(_rank(results[-1][0], "w09"))
    assert np.mean(full) >= 9
    assert np.mean(blank) >= 9, blank  # before: 4.2 on average (6, 3, 10, 2, 2, 2)
    missing = []
    for result, frame, encoder in results:
        assert result.blank_rule == "worst" and "dense" in result.blank_reason
        w = result.workers.set_index("worker")
        assert w.loc["w09", "answered"] == 10 and w.loc["w09", "blank"] == 5
        # the RASA baseline does not reward the blanks either
        assert w["rasa_skill"].rank(ascending=False)["w09"] >= 8
        missing.append(_rank(aqer(frame, encoder, blank_answers="missing"), "w09"))
    # the old rule, still available on request, shows what the issue found
    assert np.mean(missing) <= 5, missing


def test_dense_design_blank_counts_as_weakest_and_is_listed(encoder):
    answers = {f"w{i}": {q: right for q, (right, _) in FACTS.items()} for i in range(5)}
    frame = long_frame(answers)
    first, second = list(FACTS)[:2]
    frame.loc[(frame["worker"] == "w1") & (frame["question"] == first), "response"] = "  "
    # w2 has no row at all for the second question (a class test: it was given it anyway)
    frame = frame[~((frame["worker"] == "w2") & (frame["question"] == second))]
    result = aqer(frame, encoder)
    assert result.blank_rule == "worst"
    assert result.blank_reason.startswith("Decided from the data: the answers look dense")
    assert "3 of 5 workers answered" not in result.blank_reason  # all 5 answered most
    assert "5 of 5 workers answered at least half of the 6 questions" in result.blank_reason
    w = result.workers.set_index("worker")
    assert w.loc["w1", "blank"] == 1 and w.loc["w2", "blank"] == 1 and w.loc["w0", "blank"] == 0
    # everyone else is perfect
    assert w.loc["w1", "score"] == pytest.approx(0) and w.loc["w2", "score"] == pytest.approx(0)
    # the blank is a row of the Responses sheet, scored 0, so the mean can be checked by hand
    r = result.responses
    row = r[(r["worker"] == "w1") & (r["question"] == first)]
    assert len(row) == 1 and row["response"].iloc[0] is None
    assert row["similarity"].iloc[0] == 0
    mine = r[r["worker"] == "w1"]["similarity"].astype(float)
    assert w.loc["w1", "raw_score"] == pytest.approx(mine.mean())
    # who left what blank
    topics = {n.topic: n for n in result.warnings}
    assert "'w1' 1" in topics["Blank answers"].message
    assert "'w2' 1" in topics["Blank answers"].message
    empty = [n for n in result.warnings if n.topic == "Empty answer"]
    assert len(empty) == 1 and "weakest possible answer" in empty[0].message
    assert any(n.topic == "No answer in the sheet" and n.worker == "w2" for n in result.warnings)


def test_sparse_design_missing_stays_missing(encoder):
    # crowdsourcing: 8 workers, each given 2 of 8 questions, no row for the others
    questions = list(FACTS) + ["What colour is the sky?", "What is two plus two?"]
    extra = {questions[6]: "the sky is blue", questions[7]: "two plus two is four"}
    right = {q: a for q, (a, _) in FACTS.items()} | extra
    answers = {
        f"w{i}": {questions[(i + k) % 8]: right[questions[(i + k) % 8]] for k in range(3)}
        for i in range(8)
    }
    result = aqer(long_frame(answers), encoder)
    assert result.blank_rule == "missing"
    assert "sparse" in result.blank_reason and "0 of 8 workers" in result.blank_reason
    assert "blank" not in result.workers.columns
    assert (result.workers["answered"] == 3).all()
    assert result.responses["response"].notna().all()


def test_the_user_can_override_the_rule(encoder):
    answers = {f"w{i}": {q: right for q, (right, _) in FACTS.items()} for i in range(4)}
    frame = long_frame(answers)
    frame.loc[0, "response"] = ""
    missing = aqer(frame, encoder, blank_answers="missing")
    assert missing.blank_rule == "missing" and missing.blank_reason.startswith("Chosen by you")
    assert "look dense" in missing.blank_reason
    assert (missing.workers["score"] == 1).all()  # the blank does not count
    worst = aqer(frame, encoder, blank_answers="worst")
    assert worst.blank_rule == "worst"
    assert worst.workers.set_index("worker").loc[frame.loc[0, "worker"], "score"] == 0
    readme = dict(readme_rows(worst))
    assert readme["Blank answers"].startswith("Counted as the weakest answer. Chosen by you")
    assert dict(readme_rows(missing))["Blank answers"].startswith("Not counted. Chosen by you")


def test_a_blank_never_beats_a_real_answer():
    """A blank scores 0, or less when a real answer to that question scored below 0."""
    vectors = {
        "a": np.array([1.0, 0.0, 0.0]),
        "b": np.array([1.0, 0.2, 0.0]),
        "away": np.array([-1.0, 0.0, 0.3]),  # points away from the consensus
        "x": np.array([0.0, 1.0, 0.0]),
        "y": np.array([0.1, 1.0, 0.0]),
        "z": np.array([0.0, 1.0, 0.1]),
    }
    frame = pd.DataFrame(
        [("Q1", "p", "a"), ("Q1", "q", "b"), ("Q1", "r", "away"), ("Q1", "s", ""),
         ("Q2", "p", "x"), ("Q2", "q", "y"), ("Q2", "r", "z"), ("Q2", "s", "x")],
        columns=["question", "worker", "response"],
    )
    result = aqer(frame, Lookup(vectors), baselines=False)
    r = result.responses[result.responses["question"] == "Q1"]
    real = r[r["response"].notna()]["similarity"].astype(float)
    blank = r[r["response"].isna()]["similarity"].astype(float)
    assert real.min() < 0
    assert blank.iloc[0] == pytest.approx(real.min())


def test_a_worker_who_left_everything_blank_is_listed_as_absent_or_scored_last(encoder):
    answers = {f"w{i}": {q: right for q, (right, _) in FACTS.items()} for i in range(3)}
    answers["w1"][next(iter(FACTS))] = "Berlin I think"
    frame = pd.concat(
        [long_frame(answers),
         pd.DataFrame([(q, "empty", "") for q in FACTS], columns=["question", "worker", "response"])],
        ignore_index=True,
    )
    # by default (issue 27) they are left out of the 0-1 scale and listed as absent?
    result = aqer(frame, encoder)
    w = result.workers.set_index("worker")
    assert pd.isna(w.loc["empty", "score"]) and pd.isna(w.loc["empty", "rank"])
    assert w.loc["empty", "note"] == "absent? no answers; not scored"
    assert w.loc["empty", "answered"] == 0 and w.loc["empty", "blank"] == 6
    assert w["score"].min() == 0 and set(w["score"].dropna().index) == {"w0", "w1", "w2"}
    absent = [n for n in result.warnings if n.topic == "Absent?"]
    assert [n.worker for n in absent] == ["empty"] and "--keep-absent" in absent[0].message
    # asked for: scored as the weakest, last
    kept = aqer(frame, encoder, settings=AqerSettings(keep_absent=True))
    k = kept.workers.set_index("worker")
    assert k.loc["empty", "score"] == 0 and k.loc["empty", "rank"] == 4
    assert k.loc["empty", "answered"] == 0 and k.loc["empty", "blank"] == 6
    assert "note" not in kept.workers and not any(n.topic == "Absent?" for n in kept.warnings)
    # without counting blanks that worker has nothing to be scored on: listed, not scored
    missing = aqer(frame, encoder, blank_answers="missing")
    m = missing.workers.set_index("worker")
    assert pd.isna(m.loc["empty", "score"]) and m.loc["empty", "note"].startswith("absent?")


# ------------------------------------------------------------------ 2. AI answers like for like


def test_an_ai_as_good_as_the_workers_lands_mid_pack():
    places, naive = [], []
    for seed in range(10):
        frame, vectors, truth, level, rng = simulate(
            seed, workers=20, questions=30, difficulty=(1.0, 1.0)
        )
        ai = []
        for j in range(30):
            key = f"ai-q{j:02d}"
            vectors[key] = truth[j] + level[j] * rng.normal(size=truth.shape[1]) / np.sqrt(
                truth.shape[1]
            )
            ai.append((f"Q{j:02d}", "AI", key, True))
        frame = pd.concat(
            [frame, pd.DataFrame(ai, columns=["question", "worker", "response", "is_llm"])],
            ignore_index=True,
        )
        result = aqer(frame, Lookup(vectors), baselines=False)
        summary = result.llm_summary.set_index("model")
        mean = float(summary.loc["AI", "mean_score"])
        places.append(float(summary.loc["AI", "percentile_among_workers"]))
        naive.append(100 * float(np.mean(result.workers["raw_score"] < mean)))
        # the like-for-like measure is what the percentile counts
        others = result.workers["similarity_to_others"].astype(float)
        assert places[-1] == pytest.approx(100 * float(np.mean(others < mean)))
    assert 35 <= np.mean(places) <= 65, places
    # against the workers' own-inclusive similarity the same AI looks like one of the worst
    assert np.mean(naive) < 25, naive


def test_similarity_to_others_is_the_consensus_without_the_worker():
    frame, vectors, *_ = simulate(3, workers=5, questions=4, dim=8)
    result = aqer(frame, Lookup(vectors), baselines=False)
    weights = result.workers.set_index("worker")["weight"]
    expected = {}
    for worker in weights.index:
        sims = []
        for question, group in frame.groupby("question"):
            own = vectors[group[group["worker"] == worker]["response"].iloc[0]]
            others = group[group["worker"] != worker]
            sea = sum(weights[w] * vectors[k] for w, k in zip(others["worker"], others["response"]))
            sea = sea / weights[others["worker"]].sum()
            sims.append(float(cosine_rows(own[None, :], sea[None, :])[0]))
        expected[worker] = np.mean(sims)
    got = result.workers.set_index("worker")["similarity_to_others"]
    for worker, value in expected.items():
        assert got[worker] == pytest.approx(value, abs=1e-5)


# ------------------------------------------------------------------ 3. expert grades on AI rows


def test_expert_grades_on_ai_answers_give_agreement_rows(encoder):
    answers = {f"w{i}": {q: right for q, (right, _) in FACTS.items()} for i in range(4)}
    people = long_frame(answers)
    rows = []
    for k, (q, (right, wrong)) in enumerate(FACTS.items()):
        rows.append((q, "GoodAI", right if k % 3 else wrong, True, "5" if k % 3 else "1"))
        rows.append((q, "BadAI", wrong if k % 2 else right, True, "0" if k % 2 else "4"))
    ai = pd.DataFrame(rows, columns=["question", "worker", "response", "is_llm", "grade"])
    result = aqer(pd.concat([people, ai], ignore_index=True), encoder)
    a = result.agreement
    pooled = a[a["comparison"] == "AI answers, all models: AQER score vs expert grade (per answer)"]
    assert set(pooled["statistic"]) == {"Pearson r", "Spearman rho", "Kendall tau-b"}
    assert (pooled["n"] == 12).all()
    scores = result.llm_answers.set_index(["model", "question"])["score"]
    x = [float(scores[(m, q)]) for q, m, *_ in ai.itertuples(index=False)]
    expected = stats.pearsonr(x, ai["grade"].astype(float)).statistic
    assert pooled[pooled["statistic"] == "Pearson r"]["value"].iloc[0] == pytest.approx(expected)
    good = a[a["comparison"] == "AI answers of GoodAI: AQER score vs expert grade (per answer)"]
    assert (good["n"] == 6).all() and good["value"].iloc[0] > 0.8
    baseline = a["comparison"].str.contains("baseline")
    assert (a["kind"].str.startswith("AI answers") & ~baseline).sum() == 9
    # beside each, the length baseline: the AI answers' number of words against the grades
    length = a[a["comparison"] == "AI answers, all models: answer length alone (number of "
                                  "words) vs expert grade (per answer, baseline)"]
    words = [len(str(r).split()) for r in ai["response"]]
    assert length[length["statistic"] == "Spearman rho"]["value"].iloc[0] == pytest.approx(
        stats.spearmanr(words, ai["grade"].astype(float)).statistic)
    assert (a["kind"].str.startswith("AI answers") & baseline).sum() == 9
    # the workers had no grades: no worker rows, no made-up expert grade
    assert "expert_grade" not in result.workers.columns


# ------------------------------------------------------------------ 4. consensus, grades, RASA


def test_ai_answers_are_scored_against_the_consensus_of_the_final_weights(encoder):
    from .test_aqer import crowd, llm_rows

    frame = pd.concat(
        [crowd(), llm_rows("M", {q: right for q, (right, _) in FACTS.items()})], ignore_index=True
    )
    result = aqer(frame, encoder, max_iterations=1)  # the round cap is hit
    assert not result.converged
    weights = result.workers.set_index("worker")["weight"]
    people = frame[frame["worker"] != "M"]
    for question, group in people.groupby("question"):
        vectors = encoder(group["response"].tolist()).astype(np.float64)
        w = weights[group["worker"]].to_numpy()
        sea = (w[:, None] * vectors).sum(axis=0) / w.sum()
        answer = result.llm_answers.set_index("question").loc[question]
        expected = cosine_rows(encoder([answer["response"]]).astype(np.float64), sea[None, :])
        assert answer["score"] == pytest.approx(float(expected[0]), abs=1e-5)


def test_expert_grade_means_cover_the_answers_aqer_scored(encoder):
    from .test_aqer import crowd

    frame = crowd()
    frame["grade"] = "5"
    lonely = pd.DataFrame(
        [("Lonely question?", "good0", "only me", "0")],
        columns=["question", "worker", "response", "grade"],
    )
    result = aqer(pd.concat([frame, lonely], ignore_index=True), encoder)
    w = result.workers.set_index("worker")
    assert w.loc["good0", "expert_grade"] == 5  # the unscored answer's grade is left out
    # a graded blank that counts in the score counts in the grade mean too
    frame.loc[0, ["response", "grade"]] = ["", "0"]
    result = aqer(frame, encoder)
    assert result.blank_rule == "worst"
    w = result.workers.set_index("worker")
    assert w.loc[frame.loc[0, "worker"], "expert_grade"] == pytest.approx(25 / 6)
    per_answer = result.agreement[result.agreement["kind"] == "per answer"]
    assert (per_answer["n"] == len(frame)).all()


def test_rasa_ignores_the_length_of_the_vectors():
    rng = np.random.default_rng(0)
    truth = rng.normal(size=(6, 10))
    noise = np.linspace(0.2, 1.5, 5)
    rows = [(j, i, truth[j] + noise[i] * rng.normal(size=10)) for i in range(5) for j in range(6)]
    vectors = np.stack([v for *_, v in rows]).astype(np.float32)
    lengths = rng.uniform(0.2, 5.0, size=len(rows)).astype(np.float32)

    def skills(vecs):
        return rasa_skills(
            EmbeddedResponses(vecs, np.arange(len(rows)), np.array([r[1] for r in rows]),
                              np.array([r[0] for r in rows]))
        ).skill

    np.testing.assert_allclose(skills(vectors * lengths[:, None]), skills(vectors), rtol=1e-4)


# ------------------------------------------------------------------ 13-14. which run this is


def test_the_read_me_says_which_run_and_which_rules(encoder):
    from .test_aqer import crowd, llm_rows

    frame = pd.concat([crowd(), llm_rows("M", {q: r for q, (r, _) in FACTS.items()})])
    result = aqer(frame, encoder)
    assert result.computed_at  # ISO time of the computation
    readme = dict(readme_rows(result))
    assert readme["Scored on"].endswith("UTC") and readme["Scored on"][:4].isdigit()
    assert readme["Blank answers"]
    assert "OTHER workers" in readme["AI answers compared with"]
    assert "Above % of workers" in readme["AI answers compared with"]  # the sheet's words
    assert readme["Embedding model"] == "hashed-bag-of-words"


def test_counting_blanks_on_a_crowd_sheet_is_refused_with_a_way_out(encoder, monkeypatch):
    from core.aqer import AqerInputError, pipeline

    monkeypatch.setattr(pipeline, "MAX_BLANKS", 10)
    answers = {f"w{i}": {q: right for q, (right, _) in list(FACTS.items())[i % 3 * 2:][:2]}
               for i in range(9)}
    frame = long_frame(answers)
    with pytest.raises(AqerInputError, match="--blank-answers missing"):
        aqer(frame, encoder, blank_answers="worst")
    assert aqer(frame, encoder).blank_rule == "missing"
