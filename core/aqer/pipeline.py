"""AQER from answers to result: the paper's stages composed (never touches the project; the
wizard and the CLI run it through ``core.aqer.session``).

    prepared = read_responses("answers.xlsx", format="long")      # core.aqer.inputs
    result = aqer(prepared, Encoder(), progress=p, cancel=c)

:func:`aqer` also takes a plain long DataFrame (columns ``question``, ``worker``, ``response``,
optionally ``is_llm``, ``model``, ``grade``) and any ``encoder`` that maps a list of strings to
an array, so tests can use a tiny encoder. Every long step reports to ``progress`` and stops on
``cancel``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from operator import methodcaller
from typing import Any

import numpy as np
import pandas as pd

from core.aqer.agreement import agreement_table
from core.aqer.answer_camps import describe_camps, split_questions
from core.aqer.best_response import best_responses
from core.aqer.blanks import blank_rule, blank_values
from core.aqer.iterative_reweighting import iterative_reweighting, worker_means
from core.aqer.llm_answers import llm_answer_tables, score_llm_answers
from core.aqer.model import (
    AGREEMENT_COLUMNS,
    CONVERGENCE_COLUMNS,
    LLM_ANSWER_COLUMNS,
    LLM_SUMMARY_COLUMNS,
    QUESTION_COLUMNS,
    RESPONSE_COLUMNS,
    AqerNotice,
    AqerResult,
    AqerSettings,
    BlankAnswers,
)
from core.aqer.pseudo_reference import pseudo_reference_scores, reference_pairs
from core.aqer.rasa import rasa_skills
from core.aqer.responses import (
    AqerInputError,
    Duplicates,
    PreparedResponses,
    clean_responses,
    strip_each,
)
from core.aqer.synthetic_exemplary_answer import EmbeddedResponses, leave_one_out_similarity
from core.runs import CancelToken, Progress
from core.tables import cell_number
from core.words import plain_number

__all__ = ["ABSENT_NOTE", "absent_notices", "absent_people", "aqer", "embed_texts"]

#: Texts per call of the encoder (progress and cancel are checked between calls).
EMBED_CHUNK = 256
#: An encoder that answers a call within this many seconds (vectors from a cache, a fast
#: lookup) is given twice as many texts next time, up to :data:`EMBED_CHUNK_MAX`; a real model
#: never answers 256 texts that fast, so its progress and cancel stay as frequent as before.
EMBED_FAST_CALL = 0.05
EMBED_CHUNK_MAX = 16_384
#: The clock the chunk size is decided by (tests replace it).
_clock = time.perf_counter

TextEncoder = Callable[[list[str]], Any]


def embed_texts(
    texts: Sequence[str],
    encoder: TextEncoder,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> np.ndarray:
    """Embed distinct ``texts`` (already unique) in chunks, shortest first; float32
    (len(texts), d). Chunks start at :data:`EMBED_CHUNK` texts and grow while the encoder
    answers fast (:data:`EMBED_FAST_CALL`); a chunk always starts at a multiple of 256 texts of
    the same order, so a model sees the same batches whatever the chunk sizes."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    order = np.argsort(lengths, kind="stable")
    in_order = np.empty(len(texts), dtype=object)
    in_order[:] = texts
    in_order = in_order[order]
    if progress is not None:
        progress.start("Embedding answers", total=len(texts), detail=_describe(encoder))
    out: np.ndarray | None = None
    size, start = EMBED_CHUNK, 0
    while start < len(order):
        if cancel is not None:
            cancel.raise_if_cancelled()
        idx = order[start : start + size]
        began = _clock()
        vectors = np.asarray(encoder(in_order[start : start + size].tolist()), dtype=np.float32)
        start += len(idx)
        if _clock() - began < EMBED_FAST_CALL:
            size = min(2 * size, EMBED_CHUNK_MAX)
        if vectors.ndim != 2 or vectors.shape[0] != len(idx):
            raise RuntimeError(
                f"The embedding model returned {vectors.shape} for {len(idx)} texts; expected "
                "one vector per text. Choose another embedding model in Settings → Embeddings."
            )
        # The sum is finite exactly when every number is (but for an overflow: then look).
        with np.errstate(over="ignore", invalid="ignore"):
            total = vectors.sum()
        if not np.isfinite(total) and not np.isfinite(vectors).all():
            raise RuntimeError(
                "The embedding model returned invalid numbers (NaN or infinity). Choose another "
                "embedding model or device in Settings → Embeddings."
            )
        if out is None:
            out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
        out[idx] = vectors
        if progress is not None:
            progress.advance(len(idx))
    return out if out is not None else np.zeros((0, 1), dtype=np.float32)


def _describe(encoder: Any) -> str:
    describe = getattr(encoder, "describe", None)
    return describe() if callable(describe) else ""


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _need_two(found: list[Any], why: str, advice: str, shown: Any) -> None:
    """AqerInputError unless ``found`` holds at least 2 values: "AQER <why>; it found ..."."""
    if len(found) < 2:
        what = f"only 1 ('{shown(found[0])}')" if found else "none"
        raise AqerInputError(f"AQER {why}; it found {what}. {advice}")


def _none_if_nan(values: Any) -> list[Any]:
    """Numbers as a list, None where a value is missing, NaN or infinite."""
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        numbers = None
    if numbers is not None and numbers.ndim == 1:
        finite = np.isfinite(numbers)
        if finite.all():
            return numbers.tolist()
        out = numbers.astype(object)
        out[~finite] = None
        return out.tolist()
    return [
        None if v is None or (isinstance(v, float) and not np.isfinite(v)) else v for v in values
    ]


def _number_column(values: np.ndarray) -> Any:
    """A column of numbers as a frame stores :func:`_none_if_nan`'s list (NaN where missing),
    without the list: float64 with NaN, or None throughout when no number is finite."""
    numbers = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(numbers)
    if finite.all():
        return numbers
    if finite.any():
        return np.where(finite, numbers, np.nan)
    return _none_if_nan(numbers)


def aqer(
    responses: pd.DataFrame | PreparedResponses,
    encoder: TextEncoder,
    *,
    settings: AqerSettings | None = None,
    max_iterations: int | None = None,
    tolerance: float | None = None,
    llm_as_workers: bool | None = None,
    baselines: bool | None = None,
    blank_answers: BlankAnswers | None = None,
    duplicates: Duplicates = "error",
    source: str = "",
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> AqerResult:
    """Score workers (and LLM answers) without an answer key.

    ``responses``: a long frame with ``question``, ``worker``, ``response`` (optional
    ``is_llm``, ``model``, ``grade``) or a :class:`PreparedResponses`. ``encoder(texts)`` returns
    one vector per text. Keyword settings override ``settings``; ``blank_answers`` ("auto",
    "worst", "missing") says how a question left blank counts (:mod:`core.aqer.blanks`). Raises
    :class:`AqerInputError` before any work if fewer than 2 workers or 2 questions remain.
    """
    settings = (settings or AqerSettings()).model_copy(
        update={
            k: v
            for k, v in {
                "max_iterations": max_iterations,
                "tolerance": tolerance,
                "llm_as_workers": llm_as_workers,
                "baselines": baselines,
                "blank_answers": blank_answers,
            }.items()
            if v is not None
        }
    )
    settings = AqerSettings.model_validate(settings.model_dump())
    if progress is not None:
        progress.start("Checking answers")
    prepared = (
        responses
        if isinstance(responses, PreparedResponses)
        else clean_responses(responses, duplicates=duplicates, source=source)
    )
    source = source or prepared.source
    where = f" in {source}" if source else ""
    frame = prepared.frame
    notices: list[AqerNotice] = list(prepared.notices)

    is_worker = (~frame["is_llm"]) | settings.llm_as_workers
    if is_worker.all():  # no copy of the whole frame when there are no LLM answers
        people, llms = frame, frame.iloc[:0]
    else:
        people, llms = frame[is_worker], frame[~is_worker]
    # Questions and workers as numbers once (in order of appearance, as .unique() lists them).
    asked_code, asked_values = pd.factorize(people["question"].to_numpy(dtype=object))
    worker_code, worker_values = pd.factorize(people["worker"].to_numpy(dtype=object))
    rule = blank_rule(
        prepared, settings.blank_answers, settings.llm_as_workers,
        numbered=(worker_code, worker_values, asked_code, asked_values),
    )
    worst = rule.rule == "worst"
    blank_rows = prepared.blanks
    if len(blank_rows):
        blank_is_worker = (~blank_rows["is_llm"]) | settings.llm_as_workers
        people_blank = blank_rows[blank_is_worker]
        llm_blank = blank_rows[~blank_is_worker]
    else:
        people_blank = llm_blank = blank_rows

    # --- the guards that need no work --------------------------------------------------------
    names = worker_values.tolist()
    # People who left every question blank: absent? Left out of the scale unless asked for
    # (they would become its 0 and move everyone else's score).
    absent = absent_people(names, people_blank)
    if worst and settings.keep_absent:  # everyone was given every question: scored as weakest
        names = names + absent
    else:
        absent_set = set(absent)
        notices = [n for n in notices if not (n.topic == "Empty answer"
                                              and n.worker in absent_set)]
        notices += absent_notices(absent, worst, len(asked_values))
    asked = asked_values.tolist()
    _need_two(names, f"compares workers with each other, so it needs answers from at least 2 "
              f"workers{where}", "Add the other workers' answers, or check that the worker "
              "column is the right one.", shown=str)
    _need_two(asked, f"judges workers across questions, so it needs answers to at least 2 "
              f"questions{where}", "Add more questions, or check that the question column is the "
              "right one (in a wide sheet, every question is a column).", shown=_short)

    # A question only one worker answered has no consensus to compare with.
    answered_by_question = np.bincount(asked_code, minlength=len(asked))
    is_lonely = answered_by_question < 2
    lonely = [asked[j] for j in np.flatnonzero(is_lonely)]
    for question in lonely:
        item = people[people["question"] == question].iloc[0]
        notices.append(
            AqerNotice(
                topic="Question answered by one worker",
                message=(
                    f"Only '{item['worker']}' answered '{_short(question)}'; an answer cannot be "
                    "compared with a consensus of one, so this question does not count in any "
                    "score."
                ),
                question=question,
                worker=item["worker"],
                row=None if pd.isna(item["row"]) else int(item["row"]),
            )
        )
    scorable = people[~is_lonely[asked_code]] if lonely else people
    # Each scorable answer's worker and question as positions in scored_names/_questions.
    if scorable is people:  # every question has a consensus: the workers are numbered already
        w_idx, scored_values = worker_code, worker_values
    else:
        w_idx, scored_values = pd.factorize(scorable["worker"].to_numpy(dtype=object))
    scored_names = scored_values.tolist()
    if worst:
        kept = set(scored_names)
        scored_names = [n for n in names if n in kept] + [n for n in names if n not in kept]
        place = {name: i for i, name in enumerate(scored_names)}
        w_idx = np.array([place[n] for n in scored_values], dtype=np.int64)[w_idx]
    w_idx = w_idx.astype(np.int64, copy=False)
    scored_set = set(scored_names)
    for name in names:
        if name not in scored_set:
            notices.append(
                AqerNotice(
                    topic="Worker not scored",
                    message=(
                        f"'{name}' answered only questions nobody else answered, so AQER cannot "
                        "score them."
                    ),
                    worker=name,
                )
            )
    # The questions answered by 2 or more keep their order of appearance.
    scored_questions = [q for q, alone in zip(asked, is_lonely) if not alone]
    by_question = (np.cumsum(~is_lonely) - 1)[asked_code[~is_lonely[asked_code]]]
    by_question = by_question.astype(np.int64, copy=False)
    if len(scored_values) < 2 or len(scored_questions) < 2:
        raise AqerInputError(
            f"Too few overlapping answers{where}: AQER needs at least 2 questions that at least "
            f"2 workers answered, and found {len(scored_questions)} such question(s) answered by "
            f"{len(scored_values)} worker(s). Workers must answer the same questions."
        )
    worker_index = {name: i for i, name in enumerate(scored_names)}
    question_index = {q: j for j, q in enumerate(scored_questions)}

    # --- blank answers that count (a dense design) ----------------------------------------------
    blanks = _blank_pairs(
        scored_names if worst else [], scored_questions, scorable, people_blank, where,
        positions=(w_idx, by_question),
    )
    blank_w = blanks["w"].to_numpy(np.int64)
    blank_q = blanks["q"].to_numpy(np.int64)
    notices = _blank_notices(notices, blanks, rule, len(scored_questions), people_blank, worst)

    # --- embeddings (identical answers once) --------------------------------------------------
    worker_array = scorable["response"].to_numpy(dtype=object)
    llm_array = llms["response"].to_numpy(dtype=object)
    worker_texts = worker_array.tolist()
    llm_texts = llm_array.tolist()
    # In question order, as EmbeddedResponses keeps them: distinct answers need no re-sorting.
    in_order = np.argsort(by_question, kind="stable")
    text_code, distinct = pd.factorize(np.concatenate([worker_array[in_order], llm_array]))
    unique = distinct.tolist()
    if cancel is not None:
        cancel.raise_if_cancelled()
    vectors = embed_texts(unique, encoder, progress=progress, cancel=cancel)
    truncated = getattr(encoder, "truncated", None)
    if callable(truncated):
        cut = {unique[i] for i, flag in enumerate(truncated(unique)) if flag}
        if cut:
            limit = getattr(encoder, "max_seq_length", None)
            for _, item in pd.concat([scorable, llms])[
                lambda f: f["response"].isin(cut)
            ].iterrows():
                notices.append(
                    AqerNotice(
                        topic="Answer too long for the model",
                        message=(
                            f"The answer of '{item['worker']}' to '{_short(item['question'])}' is "
                            f"{len(item['response']):,} characters long; the embedding model reads "
                            f"only its first {limit or 'few hundred'} tokens (about "
                            f"{(limit or 256) * 4:,} characters) and ignores the rest."
                        ),
                        question=item["question"],
                        worker=item["worker"],
                        row=None if pd.isna(item["row"]) else int(item["row"]),
                    )
                )

    q_idx = by_question
    rows = np.empty(len(in_order), dtype=np.int64)
    rows[in_order] = text_code[: len(in_order)]
    embedded = EmbeddedResponses(
        vectors, rows, w_idx, q_idx, n_workers=len(scored_names), n_questions=len(scored_questions)
    )

    # --- AQER ---------------------------------------------------------------------------------
    outcome = iterative_reweighting(
        embedded,
        max_iterations=settings.max_iterations,
        tolerance=settings.tolerance,
        progress=progress,
        cancel=cancel,
        blank_worker=blank_w,
        blank_question=blank_q,
    )
    if not outcome.discriminates:
        notices.append(
            AqerNotice(
                topic="Responses do not discriminate between workers",
                message=(
                    "Every worker got the same similarity to the consensus (for example, all "
                    "answers are identical), so the responses do not discriminate between "
                    "workers. AQER stopped and gives every worker the same score (1) and weight."
                ),
            )
        )
    elif not outcome.converged:
        notices.append(
            AqerNotice(
                topic="Not converged",
                message=(
                    f"The weights still changed after {outcome.iterations} rounds (last change "
                    f"{plain_number(outcome.trace[-1][1], 2)}, tolerance "
                    f"{plain_number(settings.tolerance)}). The scores "
                    "are those of the last round; allow more rounds to let them settle."
                ),
            )
        )
    if outcome.fallback_questions is not None and outcome.fallback_questions.any():
        for j in np.flatnonzero(outcome.fallback_questions):
            notices.append(
                AqerNotice(
                    topic="Consensus from equal weights",
                    message=(
                        f"Every worker who answered '{_short(scored_questions[j])}' had weight 0 "
                        "in some round, so its consensus answer used equal weights there."
                    ),
                    question=scored_questions[j],
                )
            )

    # Like for like: every answer against the consensus of the *other* workers (final weights).
    to_others = leave_one_out_similarity(embedded, outcome.weight)
    blank_to_others = blank_values(q_idx, to_others, len(scored_questions))
    worker_to_others = worker_means(embedded, to_others, blank_w, blank_to_others[blank_q])

    # --- baselines ----------------------------------------------------------------------------
    rasa_skill = f1 = bleu = None
    if settings.baselines:
        if progress is not None:
            progress.start("Baselines (RASA, F1, BLEU-1)", total=2)
        rasa_skill = rasa_skills(
            embedded,
            alpha=settings.rasa_alpha,
            cancel=cancel,
            blank_worker=blank_w,
            blank_question=blank_q,
        ).skill
        if progress is not None:
            progress.advance(1, detail="RASA done")
        pairs = reference_pairs(q_idx)
        if pairs <= settings.max_reference_pairs:
            f1, bleu, _ = pseudo_reference_scores(
                q_idx, w_idx, worker_texts, len(scored_names), cancel=cancel, blank_worker=blank_w
            )
        else:
            notices.append(
                AqerNotice(
                    topic="Baseline skipped",
                    message=(
                        f"The F1 and BLEU-1 baselines were not computed: they would compare "
                        f"{pairs:,} pairs of answers (limit {settings.max_reference_pairs:,})."
                    ),
                )
            )
        if progress is not None:
            progress.advance(1, detail="F1 and BLEU-1 done")

    # --- LLM answers --------------------------------------------------------------------------
    llm_answers = pd.DataFrame(columns=LLM_ANSWER_COLUMNS)
    llm_summary = pd.DataFrame(columns=LLM_SUMMARY_COLUMNS)
    llm_scores = np.zeros(0)
    llm_blanks = _blank_pairs([], scored_questions, llms, llm_blank, where)
    if len(llms) or (worst and len(llm_blank)):
        if progress is not None:
            progress.start("Scoring LLM answers", total=len(llms))
        llm_q = np.array([question_index.get(q, -1) for q in llms["question"]], dtype=np.int64)
        llm_vectors = vectors[text_code[len(in_order) :]]
        # Against the consensus of the final weights, the one the workers' weights describe.
        llm_scores = score_llm_answers(llm_vectors, llm_q, outcome.final_sea)
        for (_, item), j in zip(llms.iterrows(), llm_q):
            if j < 0:
                notices.append(
                    AqerNotice(
                        topic="LLM answer not scored",
                        message=(
                            f"The answer of '{item['model']}' to '{_short(item['question'])}' was "
                            "not scored: fewer than 2 workers answered that question, so there is "
                            "no consensus to compare it with."
                        ),
                        question=item["question"],
                        worker=item["model"],
                        row=None if pd.isna(item["row"]) else int(item["row"]),
                    )
                )
        if worst:
            models = list(dict.fromkeys(list(llms["model"]) + list(llm_blank["model"])))
            llm_blanks = _blank_pairs(
                models, scored_questions, llms.assign(worker=llms["model"]), llm_blank, where
            )
            notices = _blank_notices(
                notices, llm_blanks, rule, len(scored_questions), llm_blank, True, ai=True
            )
        blank_scores = blank_to_others[llm_blanks["q"].to_numpy(np.int64)]
        # The workers' like-for-like mean per question, with their counted blanks.
        sums = np.bincount(q_idx, weights=to_others, minlength=len(scored_questions))
        sums += np.bincount(blank_q, weights=blank_to_others[blank_q], minlength=len(sums))
        given = embedded.answered_per_question + np.bincount(blank_q, minlength=len(sums))
        per_question = dict(zip(scored_questions, sums / np.maximum(given, 1)))
        llm_answers, llm_summary = llm_answer_tables(
            llms["model"].tolist() + llm_blanks["worker"].tolist(),
            llms["question"].tolist() + llm_blanks["question"].tolist(),
            llm_texts + [None] * len(llm_blanks),
            np.concatenate([llm_scores, np.array(blank_scores, dtype=np.float64)]),
            worker_similarity=worker_to_others,
            blank=[False] * len(llms) + [True] * len(llm_blanks),
            workers_by_question=per_question,
            worker_scores=outcome.score,
        )
        if progress is not None:
            progress.advance(len(llms))

    # --- tables -------------------------------------------------------------------------------
    score = outcome.score
    # Competition ranking: 1 + how many workers scored strictly higher.
    rank = 1 + len(score) - np.searchsorted(np.sort(score), score, side="right")
    columns: dict[str, Any] = {
        "worker": scored_names,
        "score": score,
        "raw_score": outcome.raw_score,
        "weight": outcome.weight,
        "rank": rank.astype(int),
        "answered": embedded.answered_by_worker.astype(int),
    }
    if worst:
        columns["blank"] = np.bincount(blank_w, minlength=len(scored_names)).astype(int)
    columns["similarity_to_others"] = worker_to_others
    columns["simplified_score"] = outcome.simplified_score
    workers = pd.DataFrame(columns)
    if rasa_skill is not None:
        workers["rasa_skill"] = rasa_skill
    if f1 is not None:
        workers["f1"] = _none_if_nan(f1)
        workers["bleu1"] = _none_if_nan(bleu)
    unscored = [n for n in names if n not in worker_index]
    left_absent = [] if (worst and settings.keep_absent) else absent
    if unscored or left_absent:
        extra = pd.DataFrame({"worker": unscored + left_absent})
        extra["answered"] = 0
        workers = pd.concat([workers, extra], ignore_index=True)
    if left_absent:
        workers["note"] = np.where(workers["worker"].isin(left_absent), ABSENT_NOTE, "")
    workers = workers.sort_values(["rank", "worker"], na_position="last", kind="stable")
    workers = workers.reset_index(drop=True)
    workers["rank"] = workers["rank"].astype("Int64")
    workers["answered"] = workers["answered"].astype(int)
    if worst:
        workers["blank"] = workers["blank"].fillna(0).astype(int)
        if left_absent:
            workers.loc[workers["worker"].isin(left_absent), "blank"] = len(scored_questions)
    if settings.llm_as_workers:
        llm_names = set(frame.loc[frame["is_llm"], "worker"]) | set(
            blank_rows.loc[blank_rows["is_llm"], "worker"] if len(blank_rows) else []
        )
        workers["is_llm"] = workers["worker"].isin(llm_names)

    if scorable is people:
        similarity_by_row = outcome.similarity
    else:
        similarity_by_row = (
            pd.Series(outcome.similarity, index=scorable.index).reindex(people.index).to_numpy()
        )
    responses_out = pd.DataFrame(
        {
            "question": people["question"],
            "worker": people["worker"],
            "response": people["response"],
            "similarity": _number_column(similarity_by_row),
            "grade": _grades(people["grade"]),
        }
    )
    if settings.llm_as_workers:
        responses_out["is_llm"] = people["is_llm"].to_numpy()
    if len(blanks):
        blank_out = pd.DataFrame(
            {
                "question": blanks["question"].to_numpy(),
                "worker": blanks["worker"].to_numpy(),
                "response": np.full(len(blanks), None, dtype=object),
                "similarity": outcome.blank_value[blank_q].astype(np.float64),
                "grade": _grades(blanks["grade"]),
            }
        )
        if settings.llm_as_workers:
            blank_out["is_llm"] = blank_out["worker"].isin(workers.loc[workers["is_llm"], "worker"])
        responses_out = pd.concat([responses_out, blank_out], ignore_index=True)
    responses_out = responses_out.reset_index(drop=True)

    best = best_responses(q_idx, outcome.similarity, len(scored_questions))
    if progress is not None:
        progress.start("Looking for questions whose answers split into camps")
    camps = split_questions(vectors, rows, q_idx, worker_texts, len(scored_questions))
    answered_q = np.maximum(embedded.answered_per_question, 1)
    mean_similarity = np.bincount(q_idx, weights=outcome.similarity, minlength=len(scored_questions))
    mean_similarity = mean_similarity / answered_q
    # How many people answered each question (asked[i] was answered answered_by_question[i] times).
    answered = dict(zip(asked, answered_by_question.tolist()))
    question_rows = []
    for question in asked:
        j = question_index.get(question)
        if j is None:
            question_rows.append({"question": question, "answered": int(answered[question])})
            continue
        k = best[j]
        split = describe_camps(camps[j], int(embedded.answered_per_question[j])) if j in camps \
            else ""
        question_rows.append(
            {
                "question": question,
                "mean_similarity": float(mean_similarity[j]),
                "best_response": worker_texts[k],
                "best_worker": scored_names[w_idx[k]],
                "answered": int(answered[question]),
                "camps": split,
            }
        )
        if split:
            notices.append(
                AqerNotice(
                    topic="Answers split into camps",
                    message=(
                        f"The answers to '{_short(question)}' split into camps of similar size: "
                        f"{split}. The consensus sides with one camp (usually the larger) "
                        "whether or not it is right, so the answer closest to the class's "
                        "consensus "
                        f"(“{_short(worker_texts[k])}”) may be a common mistake and the other "
                        "camp's answers score lower: check this question by hand."
                    ),
                    question=question,
                )
            )
    questions = pd.DataFrame(question_rows, columns=QUESTION_COLUMNS)
    convergence = pd.DataFrame(outcome.trace, columns=CONVERGENCE_COLUMNS)

    # --- agreement with expert grades ---------------------------------------------------------
    # Grades count over exactly the answers AQER scored (and the blanks it counted).
    graded = pd.concat(
        [part[part["grade"] != ""] for part in (people, llms, people_blank, llm_blank)]
    )
    bad = graded[np.isnan(_grades(graded["grade"]))]
    if len(bad):
        notices.append(
            AqerNotice(
                topic="Grade is not a number",
                message=(
                    f"{len(bad)} expert grade(s){where} are not numbers and were left out of the "
                    f"agreement (rows {', '.join(str(r) for r in bad['row'].dropna().head(12))}"
                    f"{' and more' if len(bad) > 12 else ''})."
                ),
                row=_first_row(bad["row"]),
            )
        )
    blank_grade = _grades(blanks["grade"])
    has_grade = scorable["grade"] != ""
    scored_grade = np.full(len(scorable), np.nan)
    if has_grade.any():
        scored_grade[has_grade.to_numpy()] = _grades(scorable.loc[has_grade, "grade"])
    answer_grade = np.concatenate([scored_grade, np.array(blank_grade, float)])
    answer_similarity = np.concatenate(
        [outcome.similarity, outcome.blank_value[blank_q] if len(blanks) else np.zeros(0)]
    )
    answer_worker = np.concatenate([w_idx, blank_w])
    methods: dict[str, Any] = {}
    expert: list[Any] = []
    answer_graded = bool(np.isfinite(answer_grade).any())
    person_grades = prepared.person_grades
    if person_grades or answer_graded:
        if person_grades:
            # One grade per person is already what a worker's score is compared with: it is
            # used as it is, not copied onto each answer (that would invent answer grades).
            mean_grade = dict(person_grades)
        else:
            has = np.isfinite(answer_grade)
            sums = np.bincount(answer_worker[has], weights=answer_grade[has],
                               minlength=len(scored_names))
            counts = np.bincount(answer_worker[has], minlength=len(scored_names))
            with np.errstate(invalid="ignore", divide="ignore"):
                mean_grade = dict(zip(scored_names, sums / counts))
        workers["expert_grade"] = _none_if_nan(
            [mean_grade.get(n, float("nan")) for n in workers["worker"]]
        )
        expert = workers["expert_grade"].tolist()
        methods = {
            "AQER score": workers["score"].tolist(),
            "Simplified AQER score": workers["simplified_score"].tolist(),
        }
        if "rasa_skill" in workers:
            methods["RASA skill"] = workers["rasa_skill"].tolist()
        if "f1" in workers:
            methods["F1"] = workers["f1"].tolist()
            methods["BLEU-1"] = workers["bleu1"].tolist()
    ai = _ai_grades(llms, llm_scores, llm_blanks, blank_to_others)
    agreement = pd.DataFrame(columns=AGREEMENT_COLUMNS)
    if methods or ai:
        from core.stats import word_count

        # the length baseline: each answer's number of words (a blank has none)
        answer_words = np.array([word_count(r) for r in scorable["response"]]
                                + [0.0] * len(blanks), dtype=float)
        word_sums = np.bincount(answer_worker, weights=answer_words, minlength=len(scored_names))
        word_counts = np.bincount(answer_worker, minlength=len(scored_names))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_words = dict(zip(scored_names, word_sums / word_counts, strict=True))
        agreement = agreement_table(
            methods,
            expert,
            answer_similarity=answer_similarity if methods and answer_graded else None,
            answer_grade=answer_grade if methods and answer_graded else None,
            ai_answers=ai,
            per_person=bool(person_grades),
            lengths={"worker": [mean_words.get(n, float("nan")) for n in workers["worker"]],
                     "answer": answer_words,
                     **{f"ai:{m}": v for m, v in _ai_lengths(llms, llm_blanks, ai).items()}},
        )

    return AqerResult(
        workers=workers,
        responses=responses_out[
            RESPONSE_COLUMNS
            + (["grade"] if responses_out["grade"].notna().any() else [])
            + (["is_llm"] if settings.llm_as_workers else [])
        ],
        questions=questions,
        llm_answers=llm_answers,
        llm_summary=llm_summary,
        convergence=convergence,
        agreement=agreement,
        warnings=notices,
        settings=settings,
        iterations=outcome.iterations,
        converged=outcome.converged,
        discriminates=outcome.discriminates,
        embedding_model=str(getattr(encoder, "model_name", "") or type(encoder).__name__),
        device=str(getattr(encoder, "device", "") or ""),
        blank_rule=rule.rule,
        blank_reason=rule.reason,
        computed_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


#: The Workers table's note beside a person with no answers who is not scored.
ABSENT_NOTE = "absent? no answers; not scored"


def absent_people(names: Sequence[str], blank_rows: pd.DataFrame) -> list[str]:
    """The people among ``blank_rows`` (blank answers) who gave no answer at all: not in
    ``names`` (the people with answers), in order of the sheet."""
    if not len(blank_rows):
        return []
    answered = set(names)
    return [n for n in dict.fromkeys(blank_rows["worker"]) if n not in answered]


def absent_notices(absent: Sequence[str], worst: bool, n_questions: int) -> list[AqerNotice]:
    """One notice per person with no answer at all, left out of the scores (their notices
    of each empty cell are replaced by it)."""
    out = []
    for name in absent:
        if worst:
            why = ("They are left out of the scores, so they do not become the 0 of the 0-1 "
                   "scale and move everyone else's score. To score them as the weakest instead, "
                   "tick “Score people who answered nothing” on the Columns page (command "
                   "line: --keep-absent).")
        else:
            why = "Blank answers do not count here, so there is nothing to score them on."
        out.append(AqerNotice(
            topic="Absent?",
            message=(f"'{name}' left every question blank (no answer to any of the "
                     f"{n_questions} questions): absent? {why}"),
            worker=name,
        ))
    return out


def _first_row(values: pd.Series) -> int | None:
    for v in values:
        if v is not None and not pd.isna(v):
            return int(v)
    return None


#: More blanks than this to count means the sheet is not a class test (see the message).
MAX_BLANKS = 5_000_000


def _blank_pairs(
    names: Sequence[str],
    questions: Sequence[str],
    answers: pd.DataFrame,
    blank_rows: pd.DataFrame,
    where: str = "",
    positions: tuple[np.ndarray, np.ndarray] | None = None,
) -> pd.DataFrame:
    """Every (name, question) of ``names`` x ``questions`` without an answer in ``answers``:
    columns ``worker``, ``question``, ``w`` and ``q`` (their positions), and the blank row's
    ``grade``, spreadsheet ``row`` and ``cell`` when the sheet has one. ``positions``: each
    answer's worker and question as positions in ``names`` and ``questions``, when known."""
    n_w, n_q = len(names), len(questions)
    columns = ["worker", "question", "w", "q", "grade", "row", "cell"]
    if not n_w or not n_q:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns}).astype(
            {"w": np.int64, "q": np.int64}
        )
    if positions is not None:
        given = pd.unique(positions[0] * n_q + positions[1])
    else:
        w_of = {name: i for i, name in enumerate(names)}
        q_of = {question: j for j, question in enumerate(questions)}
        w = answers["worker"].map(w_of)
        q = answers["question"].map(q_of)
        known = w.notna() & q.notna()
        given = pd.unique(w[known].to_numpy(np.int64) * n_q + q[known].to_numpy(np.int64))
    if n_w * n_q - len(given) > MAX_BLANKS:
        raise AqerInputError(
            f"Counting blank answers as the weakest answer would add {n_w * n_q - len(given):,} "
            f"blank answers{where} ({n_w:,} workers x {n_q:,} questions, {len(given):,} "
            "answered): each worker was clearly given only some of the questions. Choose to "
            "leave blank answers out (the Columns page, or --blank-answers missing)."
        )
    unanswered = np.ones(n_w * n_q, dtype=bool)
    unanswered[given] = False
    missing = np.flatnonzero(unanswered)
    out = pd.DataFrame(
        {
            "worker": np.asarray(names, dtype=object)[missing // n_q],
            "question": np.asarray(questions, dtype=object)[missing % n_q],
            "w": missing // n_q,
            "q": missing % n_q,
        }
    )
    if not len(blank_rows):  # no blank cell in the sheet: nothing to join
        out["grade"] = ""
        out["row"] = np.full(len(out), None, dtype=object)
        out["cell"] = ""
        return out[columns]
    rows = blank_rows[["worker", "question", "grade", "row", "cell"]].drop_duplicates(
        ["worker", "question"]
    )
    out = out.merge(rows, on=["worker", "question"], how="left")
    out["grade"] = out["grade"].fillna("")
    out["cell"] = out["cell"].fillna("")
    out["row"] = out["row"].astype(object).where(out["row"].notna(), None)
    return out[columns]


#: Names or questions listed one by one in a blank-answer notice.
_BLANKS_LISTED = 12


def _listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_BLANKS_LISTED])
    return shown + (f" and {len(items) - _BLANKS_LISTED} more" if len(items) > _BLANKS_LISTED else "")


def _blank_notices(
    notices: list[AqerNotice],
    blanks: pd.DataFrame,
    rule: Any,
    n_questions: int,
    blank_rows: pd.DataFrame,
    worst: bool,
    ai: bool = False,
) -> list[AqerNotice]:
    """Say how blank answers counted: each empty cell's notice says it, one notice lists who
    left how many questions blank, and pairs with no row in the sheet are listed per worker."""
    empties = [
        n for n in notices if n.topic == "Empty answer" and n.message.endswith(": left blank.")
    ]
    counted = (
        set(zip(blanks["worker"], blanks["question"])) if empties and (worst or ai) else set()
    )
    if worst:
        ending = ": counts as the weakest possible answer."
    else:
        ending = ": left out; it does not count for or against them."
    out = []
    for notice in notices:
        if notice.topic == "Empty answer" and notice.message.endswith(": left blank."):
            if worst and (notice.worker, notice.question) not in counted:
                pass  # a blank that cannot count (a question without a consensus, ...)
            elif not ai or (notice.worker, notice.question) in counted:
                notice = notice.model_copy(
                    update={"message": notice.message[: -len(": left blank.")] + ending}
                )
        out.append(notice)
    who = "AI" if ai else "worker"
    if not worst:
        if len(blank_rows) and not ai:
            out.append(
                AqerNotice(
                    topic="Blank answers",
                    message=f"{len(blank_rows)} answer(s) were left blank. {rule.reason}",
                )
            )
        return out
    if not len(blanks):
        return out
    per_worker = blanks["worker"].value_counts(sort=True)
    counts = [f"'{name}' {n}" for name, n in per_worker.items()]
    out.append(
        AqerNotice(
            topic="Blank answers",
            message=(
                f"{len(blanks)} blank answer(s) from {len(per_worker)} {who}(s) count in the "
                f"scores, out of {n_questions} scored question(s) each. Left blank: "
                f"{_listing(counts)}. {rule.reason}"
            ),
        )
    )
    no_row = blanks[(blanks["cell"] == "") & blanks["row"].isna()]
    sizes = no_row["worker"].value_counts(sort=False).to_dict()
    shown = no_row.groupby("worker", sort=False).head(_BLANKS_LISTED)
    firsts: dict[str, list[str]] = {}
    for name, question in zip(shown["worker"], shown["question"]):
        firsts.setdefault(name, []).append(question)
    # Each question shortened once (the same few questions are listed for many workers).
    quoted = {q: f"'{_short(q, 40)}'" for q in pd.unique(shown["question"].to_numpy(object))}
    for name, questions in firsts.items():
        count = int(sizes[name])
        listed = [quoted[q] for q in questions]
        listed += [""] * (count - len(listed))  # counted by _listing, never shown
        out.append(
            AqerNotice(
                topic="No answer in the sheet",
                message=(
                    f"The {who} '{name}' has no answer in the sheet to {count} scored "
                    f"question(s): {_listing(listed)}. Each counts as the weakest possible answer, "
                    "as every worker was given every question."
                ),
                question=questions[0] if count == 1 else "",
                worker=name,
            )
        )
    return out


def _grades(cells: Any) -> np.ndarray:
    """Expert grades as numbers (NaN: no grade, or not a number): :func:`core.tables.cell_number`
    of each cell, with pandas parsing the plain numbers and only the rest read one by one."""
    texts = pd.Series(cells, dtype=object).reset_index(drop=True)
    out = np.full(len(texts), np.nan)
    if not len(texts):
        return out
    if pd.api.types.infer_dtype(texts, skipna=False) != "string":
        texts = texts.where(texts.notna(), "").astype(str)
    elif (texts.to_numpy() == "").all():  # no grade at all (the usual case)
        return out
    texts = strip_each(texts)
    given = (texts != "").to_numpy()
    if not given.any():
        return out
    decimal_points = list(map(methodcaller("replace", ",", "."), texts[given].to_numpy()))
    parsed = pd.to_numeric(
        pd.Series(decimal_points, dtype=object), errors="coerce"
    ).to_numpy(dtype=np.float64)
    parsed[~np.isfinite(parsed)] = np.nan
    out[given] = parsed
    # What pandas could not read may still be a number to Python's float() ("1_000", ...).
    for k in np.flatnonzero(given & np.isnan(out)):
        value = cell_number(texts.iat[k])
        out[k] = np.nan if value is None else value
    return out


def _ai_lengths(llms: pd.DataFrame, blanks: pd.DataFrame,
                ai: dict[str, tuple[list[float], list[float]]]) -> dict[str, list[float]]:
    """The number of words of the AI answers :func:`_ai_grades` pairs (the same answers in the
    same order: graded, with a finite score), for the length baseline; a blank has none."""
    from core.stats import word_count

    if not ai:
        return {}
    models = list(llms["model"]) + list(blanks["worker"])
    grades = [cell_number(g) for g in llms["grade"]] + [cell_number(g) for g in blanks["grade"]]
    words = [word_count(r) for r in llms["response"]] + [0.0] * len(blanks)
    kept = [(m, w) for m, w, g in zip(models, words, grades, strict=True)
            if g is not None and not (isinstance(g, float) and np.isnan(g))]
    out = {"": [w for _, w in kept]}
    for model in ai:
        if model:
            out[model] = [w for m, w in kept if m == model]
    # the scores' filter (finite scores) may leave out more: then no baseline for that model
    return {m: v for m, v in out.items() if len(v) == len(ai.get(m, ([], []))[0])}


def _ai_grades(
    llms: pd.DataFrame,
    scores: np.ndarray,
    blanks: pd.DataFrame,
    blank_to_others: np.ndarray,
) -> dict[str, tuple[list[float], list[float]]]:
    """AI answers' AQER scores and expert grades, pooled ("") and per model, when graded."""
    models = list(llms["model"]) + list(blanks["worker"])
    grades = [cell_number(g) for g in llms["grade"]] + [cell_number(g) for g in blanks["grade"]]
    values = list(np.asarray(scores, dtype=float)) + list(
        blank_to_others[blanks["q"].to_numpy(np.int64)]
    )
    pairs = [
        (m, float(s), g)
        for m, s, g in zip(models, values, grades)
        if g is not None and not (isinstance(g, float) and np.isnan(g)) and np.isfinite(s)
    ]
    if not pairs:
        return {}
    out = {"": ([s for _, s, _ in pairs], [g for _, _, g in pairs])}
    named = list(dict.fromkeys(m for m, _, _ in pairs))
    if len(named) > 1:
        for model in named:
            out[model] = (
                [s for m, s, _ in pairs if m == model],
                [g for m, _, g in pairs if m == model],
            )
    return out
