"""``aqer()`` end to end on crafted answers with the tiny encoder (known right answers)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.aqer import AqerInputError, aqer
from core.aqer.model import (
    CONVERGENCE_COLUMNS,
    LLM_ANSWER_COLUMNS,
    QUESTION_COLUMNS,
    RESPONSE_COLUMNS,
    WORKER_COLUMNS,
)
from core.runs import Cancelled, CancelToken, Progress
from tests.core.aqer.aqer_support import FACTS, long_frame


def crowd(n_good: int = 5, outlier: bool = True, skip: dict | None = None) -> pd.DataFrame:
    """Good workers give the consensus answer with a small personal variation."""
    answers: dict[str, dict[str, str]] = {}
    extras = ["", " indeed", " for sure", " I believe", " as far as I know", " yes"]
    for w in range(n_good):
        answers[f"good{w}"] = {
            q: right + extras[(w + k) % len(extras)]
            for k, (q, (right, _)) in enumerate(FACTS.items())
        }
    if outlier:
        answers["outlier"] = {q: wrong for q, (_, wrong) in FACTS.items()}
    for worker, questions in (skip or {}).items():
        for q in questions:
            answers[worker].pop(q)
    return long_frame(answers)


def test_outlier_gets_the_lowest_score_and_columns_follow_the_contract(encoder):
    result = aqer(crowd(), encoder)
    w = result.workers
    assert list(w.columns[: len(WORKER_COLUMNS)]) == WORKER_COLUMNS
    assert {"simplified_score", "rasa_skill", "f1", "bleu1"} <= set(w.columns)
    assert w.iloc[-1]["worker"] == "outlier"
    assert w.set_index("worker").loc["outlier", "score"] == 0.0
    assert w["score"].max() == 1.0
    assert w["weight"].sum() == pytest.approx(1.0)
    assert w.set_index("worker").loc["outlier", "rank"] == len(w)
    assert (w["answered"] == 6).all()
    # The baselines agree that the outlier is worst.
    assert w.set_index("worker")["rasa_skill"].idxmin() == "outlier"
    assert w.set_index("worker")["f1"].idxmin() == "outlier"
    assert list(result.responses.columns) == RESPONSE_COLUMNS
    assert list(result.questions.columns) == QUESTION_COLUMNS
    assert list(result.convergence.columns) == CONVERGENCE_COLUMNS
    assert result.converged and result.discriminates
    assert result.embedding_model == "hashed-bag-of-words"


def test_best_response_is_the_answer_closest_to_the_sea(encoder):
    result = aqer(crowd(), encoder)
    r = result.responses
    for _, q in result.questions.iterrows():
        answers = r[r["question"] == q["question"]]
        top = answers.loc[answers["similarity"].idxmax()]
        assert q["best_response"] == top["response"]
        assert q["best_worker"] == top["worker"]
        assert q["best_worker"] != "outlier"
        assert q["mean_similarity"] == pytest.approx(answers["similarity"].mean())
        assert q["answered"] == 6


def test_identical_texts_are_embedded_once(encoder):
    frame = crowd(n_good=3)
    frame.loc[frame["worker"] == "good1", "response"] = frame.loc[
        frame["worker"] == "good0", "response"
    ].to_numpy()
    aqer(frame, encoder)
    seen = encoder.texts_seen
    assert len(seen) == len(set(seen))


def test_sparse_answers_are_scored_on_what_each_worker_answered(encoder):
    questions = list(FACTS)
    frame = crowd(skip={"good0": questions[:2], "outlier": questions[3:4]})
    result = aqer(frame, encoder, blank_answers="missing")
    assert result.blank_rule == "missing" and "Chosen by you" in result.blank_reason
    w = result.workers.set_index("worker")
    assert w.loc["good0", "answered"] == 4
    assert w.loc["outlier", "answered"] == 5
    assert w["score"].idxmin() == "outlier"
    assert result.questions.set_index("question").loc[questions[0], "answered"] == 5
    assert len(result.responses) == len(frame)


def test_empty_and_whitespace_answers_are_missing_and_listed(encoder):
    frame = crowd()
    frame.loc[0, "response"] = "   "
    frame.loc[1, "response"] = None
    result = aqer(frame, encoder, blank_answers="missing")
    empty = [n for n in result.warnings if n.topic == "Empty answer"]
    assert len(empty) == 2
    assert {n.worker for n in empty} == {frame.loc[0, "worker"]}
    assert result.workers.set_index("worker").loc[frame.loc[0, "worker"], "answered"] == 4
    assert len(result.responses) == len(frame) - 2


def test_a_real_answer_like_i_dont_know_is_kept(encoder):
    frame = crowd()
    frame.loc[0, "response"] = "I don't know"
    result = aqer(frame, encoder)
    assert "I don't know" in set(result.responses["response"])


def test_tie_guard_all_answers_identical(encoder):
    frame = long_frame({f"w{i}": {q: "same answer" for q in FACTS} for i in range(4)})
    result = aqer(frame, encoder)
    assert not result.discriminates
    assert (result.workers["score"] == 1.0).all()
    assert result.workers["weight"].tolist() == [0.25] * 4
    assert any("do not discriminate" in m for m in result.warning_messages)
    assert result.workers["rank"].tolist() == [1, 1, 1, 1]


def test_fewer_than_two_workers_is_refused_before_any_work(encoder):
    frame = long_frame({"alice": {q: a for q, (a, _) in FACTS.items()}})
    with pytest.raises(AqerInputError, match="at least 2 workers.*only 1 \\('alice'\\)"):
        aqer(frame, encoder)
    assert encoder.calls == []


def test_fewer_than_two_questions_is_refused_before_any_work(encoder):
    frame = long_frame({"a": {"Q1": "x"}, "b": {"Q1": "y"}, "c": {"Q1": "z"}})
    with pytest.raises(AqerInputError, match="at least 2 questions"):
        aqer(frame, encoder)
    assert encoder.calls == []


def test_question_answered_by_one_worker_does_not_count(encoder):
    frame = pd.concat(
        [crowd(), pd.DataFrame([["Lonely question?", "good0", "only me"]], columns=frame_cols())]
    )
    result = aqer(frame, encoder)
    assert any(n.topic == "Question answered by one worker" for n in result.warnings)
    lonely = result.questions.set_index("question").loc["Lonely question?"]
    assert pd.isna(lonely["mean_similarity"]) and lonely["answered"] == 1
    assert result.workers.set_index("worker").loc["good0", "answered"] == 6
    row = result.responses[result.responses["question"] == "Lonely question?"].iloc[0]
    assert row["similarity"] is None or pd.isna(row["similarity"])


def frame_cols():
    return ["question", "worker", "response"]


def llm_rows(model: str, answers: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        [(q, model, a, True) for q, a in answers.items()],
        columns=["question", "worker", "response", "is_llm"],
    )


def test_llm_answers_never_enter_the_sea(encoder):
    base = crowd()
    good = llm_rows("GoodLLM", {q: right for q, (right, _) in FACTS.items()})
    bad = llm_rows("BadLLM", {q: "completely unrelated words" for q in FACTS})
    with_llms = aqer(pd.concat([base, good, bad], ignore_index=True), encoder)
    without = aqer(base, encoder)
    pd.testing.assert_frame_equal(with_llms.workers, without.workers)
    assert set(with_llms.workers["worker"]) == set(without.workers["worker"])
    summary = with_llms.llm_summary.set_index("model")
    assert summary.loc["GoodLLM", "mean_score"] > summary.loc["BadLLM", "mean_score"]
    assert summary.loc["GoodLLM", "scored"] == 6
    answers = with_llms.llm_answers
    assert list(answers.columns) == LLM_ANSWER_COLUMNS
    assert len(answers) == 12
    good_mean = answers[answers["model"] == "GoodLLM"]["score"].astype(float).mean()
    assert summary.loc["GoodLLM", "mean_score"] == pytest.approx(good_mean)


def test_llm_score_is_cosine_with_the_final_sea(encoder):
    base = crowd()
    q = next(iter(FACTS))
    result = aqer(pd.concat([base, llm_rows("M", {q: "Paris is the capital"})]), encoder)
    # The same text given by a worker has the same similarity to the SEA.
    r = result.responses
    same = r[(r["question"] == q) & (r["response"] == "Paris is the capital")]["similarity"]
    assert result.llm_answers.iloc[0]["score"] == pytest.approx(float(same.iloc[0]), abs=1e-6)


def test_llms_scored_jointly_as_workers(encoder):
    base = crowd()
    good = llm_rows("GoodLLM", {q: right for q, (right, _) in FACTS.items()})
    result = aqer(pd.concat([base, good], ignore_index=True), encoder, llm_as_workers=True)
    w = result.workers.set_index("worker")
    assert "GoodLLM" in w.index and bool(w.loc["GoodLLM", "is_llm"])
    assert not bool(w.loc["good0", "is_llm"])
    assert len(result.llm_answers) == 0
    assert "is_llm" in result.responses.columns


def test_llm_answer_to_a_question_without_consensus_is_not_scored(encoder):
    base = crowd()
    extra = llm_rows("M", {"A question nobody answered": "something", next(iter(FACTS)): "Paris"})
    result = aqer(pd.concat([base, extra]), encoder, blank_answers="missing")
    scores = result.llm_answers.set_index("question")["score"]
    assert scores["A question nobody answered"] is None
    assert any(n.topic == "LLM answer not scored" for n in result.warnings)
    assert result.llm_summary.iloc[0]["scored"] == 1


def test_duplicates_error_by_default_and_first_or_last_on_request(encoder):
    frame = pd.concat(
        [crowd(), pd.DataFrame([[next(iter(FACTS)), "good0", "Lyon"]], columns=frame_cols())],
        ignore_index=True,
    )
    with pytest.raises(AqerInputError, match="more than once.*--duplicates"):
        aqer(frame, encoder)
    first = aqer(frame, encoder, duplicates="first")
    last = aqer(frame, encoder, duplicates="last")
    pick = lambda res: res.responses[
        (res.responses["worker"] == "good0") & (res.responses["question"] == next(iter(FACTS)))
    ]["response"].tolist()
    assert pick(first) != ["Lyon"] and pick(last) == ["Lyon"]
    assert any(n.topic == "Duplicate answer" for n in last.warnings)


def test_numbers_and_dates_in_answer_cells_are_kept_as_text(encoder):
    import datetime

    frame = crowd()
    frame["response"] = frame["response"].astype(object)
    frame.loc[0, "response"] = 8
    frame.loc[1, "response"] = 3.5
    frame.loc[2, "response"] = datetime.date(1969, 7, 20)
    result = aqer(frame, encoder)
    texts = set(result.responses["response"])
    assert {"8", "3.5", "1969-07-20"} <= texts


def test_expert_grades_give_an_agreement_table(encoder):
    frame = crowd()
    frame["grade"] = np.where(frame["worker"] == "outlier", "0", "5")
    frame.loc[frame["worker"] == "good4", "grade"] = "4"
    frame.loc[0, "grade"] = "n/a"
    result = aqer(frame, encoder)
    assert "expert_grade" in result.workers.columns
    a = result.agreement
    assert {"comparison", "statistic", "value", "n"} <= set(a.columns)
    aqer_rows = a[a["comparison"].str.startswith("AQER score")]
    assert set(aqer_rows["statistic"]) == {"Pearson r", "Spearman rho", "Kendall tau-b"}
    pearson = aqer_rows[aqer_rows["statistic"] == "Pearson r"]["value"].iloc[0]
    assert pearson > 0.5
    assert any(n.topic == "Grade is not a number" for n in result.warnings)


def test_settings_override_and_convergence_trace(encoder):
    result = aqer(crowd(), encoder, max_iterations=1)
    assert result.iterations == 1 and len(result.convergence) == 1
    assert result.settings.max_iterations == 1
    assert any(n.topic == "Not converged" for n in result.warnings)


def test_progress_and_cancel(encoder):
    states = []
    aqer(crowd(), encoder, progress=Progress(states.append))
    stages = [s.stage for s in states]
    assert "Embedding answers" in stages and "AQER iterations" in stages
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        aqer(crowd(), encoder, cancel=token)


def test_missing_columns_are_named(encoder):
    with pytest.raises(AqerInputError, match="response"):
        aqer(pd.DataFrame({"question": ["a"], "worker": ["b"]}), encoder)


def test_long_answers_get_a_warning_when_the_encoder_truncates(encoder):
    class Cutting(type(encoder)):
        max_seq_length = 16

        def truncated(self, texts):
            return [len(t) > 100 for t in texts]

    frame = crowd()
    frame.loc[0, "response"] = "long " * 7_999 + "words"
    result = aqer(frame, Cutting())
    notes = [n for n in result.warnings if n.topic == "Answer too long for the model"]
    assert len(notes) == 1 and "40,000 characters" in notes[0].message
