"""AQER's whole call at scale (issue 17 point 2): no Python call per cell while checking and
scoring the answers, the leave-one-out step without float64 copies of every block of vectors,
and encoder chunks that grow while the encoder answers fast; the results and every message
that names a row or a cell stay as they were."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from core.aqer import pipeline
from core.aqer.best_response import best_responses
from core.aqer.blanks import detect_design
from core.aqer.pipeline import aqer, embed_texts
from core.aqer.responses import prepare_responses
from core.aqer.synthetic_exemplary_answer import EmbeddedResponses, leave_one_out_similarity
from core.runs import Progress


def sheet(rows, header=("question", "worker", "response", "grade"), first_row=2):
    frame = pd.DataFrame(rows, columns=list(header), dtype=object)
    frame.index = pd.Index(range(first_row, first_row + len(rows)), name="row")
    return frame


# ------------------------------------------------------------------ messages naming rows and cells


def bad_cells_sheet():
    return sheet(
        [
            ["Q1", "ann", "a real answer", "4"],        # row 2
            ["Q1", "bob", "", ""],                      # row 3: blank (C3)
            ["Q1", "cat", "    ", ""],                  # row 4: only spaces (C4)
            ["Q1", "dan", " n/a ", ""],                 # row 5: read as blank (C5)
            ["Q1", "eve", 42, "3,5"],                   # row 6: a number is an answer
            ["Q2", "ann", 2.5, "x"],                    # row 7: a number; grade not a number
            ["Q2", "bob", "N / A", ""],                 # row 8: no blank token (spaces inside)
            ["Q2", "cat", "second answer", "2"],        # row 9
            ["Q2", "cat", "third answer", "1"],         # row 10: cat again on Q2 (C10)
            [None, "dan", "no question", ""],           # row 11: no question (A11)
            ["Q2", "  ", "no worker", ""],              # row 12: no worker (B12)
            ["Q2", "eve", "-", ""],                     # row 13: read as blank (C13)
            ["Q3", "ann", "only one", ""],              # row 14: a question only ann answered
            ["  Q2 ", " dan ", "  padded answer  ", " 5 "],  # row 15: spaces around every cell
        ]
    )


EXPECTED_NOTICES = [
    (
        "Row without a question",
        ("1 row(s) in answers.xlsx have no question in column A and were left out (rows 11). "
        "Fill in the question to include them."),
        11,
    ),
    (
        "Answer without a worker",
        ("1 answer(s) in answers.xlsx have no worker name in column B and were left out (rows "
        "12). Fill in who wrote them to include them."),
        12,
    ),
    (
        "Read as blank",
        ("2 answers in answers.xlsx say there is no answer and were read as blank: cell C5 "
        "('n/a'), cell C13 ('-'). Change the list of answers read as blank if one of them is a "
        "real answer."),
        5,
    ),
    ("Empty answer", "No answer from worker 'bob' to 'Q1' (cell C3): left blank.", 3),
    ("Empty answer", "No answer from worker 'cat' to 'Q1' (cell C4): left blank.", 4),
    ("Empty answer", "No answer from worker 'dan' to 'Q1' (cell C5): left blank.", 5),
    ("Empty answer", "No answer from worker 'eve' to 'Q2' (cell C13): left blank.", 13),
    (
        "Duplicate answer",
        ("'cat' answered 'Q2' more than once; the last answer was kept and this one (cell C9) "
        "left out."),
        9,
    ),
]


def test_bad_cells_give_the_same_messages_naming_row_and_cell():
    prepared = prepare_responses(
        bad_cells_sheet(), grade_col="grade", duplicates="last", blank_tokens=["n/a", "-"],
        source="answers.xlsx",
    )
    assert [(n.topic, n.message, n.row) for n in prepared.notices] == EXPECTED_NOTICES
    frame = prepared.frame
    assert frame["cell"].tolist() == ["C2", "C6", "C7", "C8", "C10", "C14", "C15"]
    assert frame["row"].tolist() == [2, 6, 7, 8, 10, 14, 15]
    assert str(frame["row"].dtype) == "Int64"
    assert frame["response"].tolist() == [
        "a real answer", "42", "2.5", "N / A", "third answer", "only one", "padded answer"
    ]
    assert frame.loc[6, ["question", "worker", "grade"]].tolist() == ["Q2", "dan", "5"]
    assert prepared.blanks["cell"].tolist() == ["C3", "C4", "C5", "C13"]


def test_a_plain_frame_without_rows_names_no_row_and_keeps_its_messages():
    frame = pd.DataFrame(
        {
            "question": ["Q1", "Q1", "Q1", "Q2", "Q2", "Q2", "Q2", ""],
            "worker": ["ann", "bob", "cat", "ann", "bob", "bob", "cat", "dan"],
            "response": ["yes", " ", "maybe", "no", "a", "b", "c", "lost"],
        }
    )
    result = aqer(frame, lambda texts: np.eye(8)[[len(t) % 8 for t in texts]] + 0.1,
                  duplicates="first", baselines=False)
    topics = {n.topic: n for n in result.warnings}
    assert topics["Answer without a question or worker"].message == (
        "1 answer(s) have no question or no worker and were left out."
    )
    assert topics["Empty answer"].row is None
    assert topics["Duplicate answer"].message == (
        "'bob' answered 'Q2' more than once; the first answer was kept and this one left out."
    )


# ------------------------------------------------------------------ no Python call per cell


def test_checking_and_scoring_never_map_a_python_function_over_the_cells(monkeypatch):
    """pandas' ``.str`` methods call a Python function per cell; none runs on the hot path
    (the cells are stripped, folded and read as numbers with C loops)."""
    from pandas.core.strings.object_array import ObjectStringArrayMixin

    def per_cell(*args, **kwargs):
        raise AssertionError("a Python call per cell (Series.str) on the hot path")

    rows = [
        [f" Question {q} ", f"worker {w}", f" answer {w} to {q} " + "x" * (w % 3), "3,5"]
        for q in range(12)
        for w in range(20)
    ]
    rows[5][2] = " N/A "
    frame = sheet(rows)
    monkeypatch.setattr(ObjectStringArrayMixin, "_str_map", per_cell)
    prepared = prepare_responses(frame, grade_col="grade", blank_tokens=["n/a"])
    result = aqer(prepared, lambda texts: np.random.default_rng(len(texts)).random(
        (len(texts), 6)) + 0.5, baselines=False)
    assert len(prepared.frame) == 239
    assert (result.responses["grade"].dropna() == 3.5).all()


# ------------------------------------------------------------------ leave-one-out


def direct_leave_one_out(vectors, worker, question, weights):
    """The definition, answer by answer, in float64."""
    vectors = vectors.astype(np.float64)
    out = np.zeros(len(vectors))
    for k in range(len(vectors)):
        mates = np.flatnonzero((question == question[k]) & (np.arange(len(vectors)) != k))
        w = weights[worker[mates]]
        if w.sum() <= 0:
            w = np.ones(len(mates))
        others = (w[:, None] * vectors[mates]).sum(axis=0)
        norm = np.linalg.norm(vectors[k]) * np.linalg.norm(others)
        out[k] = vectors[k] @ others / norm if norm > 1e-12 else 0.0
    return out


def test_leave_one_out_equals_the_definition_where_it_is_easy_and_where_it_is_hard():
    rng = np.random.default_rng(3)
    cells = [(w, q) for q in range(6) for w in range(7) if (w + q) % 5]
    worker = np.array([w for w, _ in cells])
    question = np.array([q for _, q in cells])
    vectors = rng.standard_normal((len(cells), 12)).astype(np.float32)
    # Question 5: two answers only, one carries nearly all the weight (its others are tiny).
    keep = (question != 5) | np.isin(worker, [1, 2])
    worker, question, vectors = worker[keep], question[keep], vectors[keep]
    weights = np.array([0.3, 1e-7, 0.9, 0.0, 0.5, 0.2, 0.0])
    # Question 0: everyone but worker 4 has weight 0, so worker 4's others use the plain mean.
    responses = EmbeddedResponses(vectors, np.arange(len(vectors)), worker, question, 7, 6)
    got = leave_one_out_similarity(responses, weights)
    want = direct_leave_one_out(vectors, worker, question, weights)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_leave_one_out_keeps_no_float64_copy_of_the_vectors_beside_its_block():
    rng = np.random.default_rng(0)
    n, d, m, q = 20_000, 384, 400, 50
    vectors = rng.standard_normal((n, d), dtype=np.float32)
    responses = EmbeddedResponses(
        vectors, np.arange(n), np.repeat(np.arange(m), n // m), np.tile(np.arange(q), n // q),
        m, q,
    )
    weights = rng.random(m)
    block64 = 4_096 * d * 8  # one block of vectors in float64
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        leave_one_out_similarity(responses, weights)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Before: the block in float64, the others' sums in float64 and their difference (~5 blocks).
    assert peak < 2.5 * block64, peak / block64


# ------------------------------------------------------------------ encoder chunks


class Counting:
    def __init__(self):
        self.sizes = []

    def __call__(self, texts):
        self.sizes.append(len(texts))
        return np.array([[len(t), t.count("a") + 1.0] for t in texts], dtype=np.float32)


def texts_of(n):
    return [f"{'a' * (k % 50)} text {k}" for k in range(n)]


def test_a_fast_encoder_is_given_growing_chunks(monkeypatch):
    monkeypatch.setattr(pipeline, "_clock", lambda: 0.0, raising=False)  # calls take no time
    encoder, texts = Counting(), texts_of(5_000)
    vectors = embed_texts(texts, encoder)
    assert encoder.sizes == [256, 512, 1_024, 2_048, 5_000 - 3_840]
    np.testing.assert_array_equal(vectors, Counting()(texts))


def test_a_slow_encoder_keeps_chunks_of_256_and_reports_each(monkeypatch):
    ticks = iter(np.arange(0.0, 1_000.0, 0.5))  # every call takes 0.5 s
    monkeypatch.setattr(pipeline, "_clock", lambda: next(ticks), raising=False)
    advanced = []

    class Recorder(Progress):
        def advance(self, n=1, detail=""):
            advanced.append(n)

    encoder, texts = Counting(), texts_of(1_000)
    vectors = embed_texts(texts, encoder, progress=Recorder())
    assert encoder.sizes == [256, 256, 256, 232]
    assert advanced == encoder.sizes
    np.testing.assert_array_equal(vectors, Counting()(texts))


def test_invalid_numbers_are_still_refused_after_the_quick_sum_check():
    def broken(texts):
        out = np.ones((len(texts), 3), dtype=np.float32)
        out[-1, 1] = np.nan
        return out

    with pytest.raises(RuntimeError, match="invalid numbers"):
        embed_texts(texts_of(10), broken)
    huge = np.full((2, 3), 3e38, dtype=np.float32)  # finite, but their sum overflows
    assert np.isfinite(embed_texts(["a", "b"], lambda texts: huge)).all()


# ------------------------------------------------------------------ helpers kept exact


def test_best_responses_is_the_first_of_the_highest_per_question():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n, n_q = int(rng.integers(0, 40)), int(rng.integers(1, 6))
        question = rng.integers(0, n_q, n)
        similarity = rng.choice([0.2, 0.7, 0.7, np.nan, -1.0], n)
        want = np.full(n_q, -1)
        for j in range(n_q):
            mine = np.flatnonzero(question == j)
            if len(mine):
                values = np.where(np.isnan(similarity[mine]), -np.inf, similarity[mine])
                want[j] = mine[np.argmax(values)]
        assert best_responses(question, similarity, n_q).tolist() == want.tolist()


def test_the_design_is_counted_from_distinct_pairs():
    answered = pd.DataFrame(
        {"worker": ["a", "a", "a", "b", "b", "c"], "question": ["1", "2", "2", "1", "3", "1"]}
    )
    design, evidence = detect_design(answered, 3, 3)
    assert design == "dense"  # a and b answered 2 of 3 questions
    assert evidence.startswith("2 of 3 workers answered at least half of the 3 questions; 5 of")


# ------------------------------------------------------------------ wide sheets


def wide_sheet(rows=30, columns=20):
    data = {"worker": [f"w{j}" if j % 11 != 4 else "" for j in range(rows)]}
    for c in range(columns):
        data[f"Q{c}"] = [f"answer {j} {c}" if (j + c) % 7 else "  " for j in range(rows)]
    data["grade"] = [str(j % 5) for j in range(rows)]
    frame = pd.DataFrame(data, dtype=object)
    frame.index = pd.Index(range(2, 2 + rows), name="row")
    return frame


def test_a_wide_sheet_is_read_a_column_at_a_time(count_calls):
    from core.aqer import responses

    calls = count_calls(responses, "cell_text")
    prepared = prepare_responses(
        wide_sheet(), format="wide", worker_col="worker", grade_col="grade"
    )
    assert len(calls) < 100  # headers at most, never the 600 answer cells
    assert len(prepared.frame) + len(prepared.blanks) == 27 * 20


def test_a_wide_sheet_keeps_its_messages_rows_cells_and_grades():
    frame = wide_sheet(rows=14, columns=3)
    prepared = prepare_responses(
        frame, format="wide", worker_col="worker", grade_col="grade", llm_workers=["w2"],
        source="class.xlsx",
    )
    first = prepared.notices[0]
    assert (first.topic, first.message, first.row) == (
        "Row without a worker",
        ("1 row(s) in class.xlsx hold answers but no worker in column A and were left out "
        "(rows 6). Fill in the worker to include them."),
        6,
    )
    empty = [n for n in prepared.notices if n.topic == "Empty answer"]
    assert empty[0].message == "No answer from worker 'w0' to 'Q0' (cell B2): left blank."
    assert len(empty) == 6
    rows = prepared.frame.head(4)
    assert rows[["question", "worker", "cell", "row"]].values.tolist() == [
        ["Q1", "w0", "C2", 2], ["Q2", "w0", "D2", 2], ["Q0", "w1", "B3", 3], ["Q1", "w1", "C3", 3],
    ]
    llm = prepared.frame[prepared.frame["is_llm"]]
    assert set(llm["worker"]) == {"w2"} and set(llm["model"]) == {"w2"}
    assert prepared.person_grades["w3"] == 3.0 and "" not in prepared.person_grades
    frame["Column E"] = [""] * 13 + ["stray"]
    with pytest.raises(Exception, match=r"Column F in class.xlsx has no header but holds answers "
                                        r"\(rows 15\)"):
        prepare_responses(frame, format="wide", worker_col="worker", grade_col="grade",
                          source="class.xlsx", unnamed=["Column E"])


# ------------------------------------------------------------------ the counted blanks' notices


def test_blank_notices_shorten_each_question_once_and_keep_their_words(monkeypatch):
    """A dense sheet where many workers lack the same questions (no row in the sheet): each
    worker's notice lists them, but each question is shortened once, not once per worker."""
    long_question = (
        "What does the word 'photosynthesis' mean, and where in the plant does it happen?"
    )
    rows = [
        [long_question if q == 0 else f"Q{q}", f"w{w}", f"answer {w} {q}"]
        for q in range(6)
        for w in range(40)
        if not (w >= 2 and q < 2)  # workers 2.. have no row for the first two questions
    ]
    frame = pd.DataFrame(rows, columns=["question", "worker", "response"])
    calls = []
    real = pipeline._short

    def counting(text, limit=60):
        calls.append((text, limit))
        return real(text, limit)

    monkeypatch.setattr(pipeline, "_short", counting)
    result = aqer(frame, lambda texts: np.random.default_rng(len(texts)).random(
        (len(texts), 8)) + 0.5, blank_answers="worst", baselines=False)
    missing = [n for n in result.warnings if n.topic == "No answer in the sheet"]
    assert len(missing) == 38
    assert missing[0].message == (
        "The worker 'w2' has no answer in the sheet to 2 scored question(s): 'What does the "
        "word 'photosynthesis' mea…', 'Q1'. Each counts as the weakest possible answer, as "
        "every worker was given every question."
    )
    assert len([c for c in calls if c[1] == 40]) == 2  # before: twice per worker (76)


def test_the_blank_rule_counts_distinct_names_from_its_numbering(monkeypatch):
    """Without blank cells, the distinct workers and questions are those numbered for the
    design: no second pass over the columns (Series.nunique) for them."""
    from core.aqer.blanks import blank_rule
    from core.aqer.responses import clean_responses

    frame = pd.DataFrame(
        [[f"Q{q}", f"w{w}", f"answer {w} {q}"] for q in range(4) for w in range(6)
         if (w + q) % 4],
        columns=["question", "worker", "response"],
    )
    prepared = clean_responses(frame)

    def second_pass(self, *args, **kwargs):
        raise AssertionError("a second pass over a whole column")

    monkeypatch.setattr(pd.Series, "nunique", second_pass)
    rule = blank_rule(prepared)
    assert rule.design == "dense"
    assert rule.evidence == (
        "6 of 6 workers answered at least half of the 4 questions; 18 of the 24 possible "
        "answers (75%) were given"
    )


def test_the_whole_call_numbers_the_workers_and_questions_once(monkeypatch):
    """The blank rule, the guards and the scoring share one numbering of the workers and one of
    the questions (each a hash of every cell), instead of numbering them again."""
    from core.aqer.responses import clean_responses

    frame = pd.DataFrame(
        [[f"Q{q}", f"w{w}", f"answer {w} {q}"] for q in range(5) for w in range(8)],
        columns=["question", "worker", "response"],
    )
    prepared = clean_responses(frame)
    numbered = []
    real = pd.factorize

    def counting(values, *args, **kwargs):
        values_list = list(np.asarray(values, dtype=object))
        if values_list == prepared.frame["worker"].tolist():
            numbered.append("worker")
        elif values_list == prepared.frame["question"].tolist():
            numbered.append("question")
        return real(values, *args, **kwargs)

    monkeypatch.setattr(pd, "factorize", counting)
    result = aqer(prepared, lambda texts: np.random.default_rng(len(texts)).random(
        (len(texts), 8)) + 0.5, baselines=False)
    assert sorted(numbered) == ["question", "worker"]  # before: each twice (or three times)
    assert result.blank_rule == "worst" and len(result.workers) == 8
