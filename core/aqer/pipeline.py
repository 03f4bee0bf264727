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
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import methodcaller
from typing import Any

import numpy as np
import pandas as pd

from core.aqer.agreement import agreement_table
from core.aqer.answer_camps import describe_camps, split_questions
from core.aqer.best_response import best_responses
from core.aqer.blanks import BlankRule, blank_rule, blank_values
from core.aqer.iterative_reweighting import (
    ReweightingOutcome,
    iterative_reweighting,
    worker_means,
)
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
from core.stats import word_count
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

    The stages, in order: the answers split into people and AI answers (:func:`_split_answers`),
    the guards that need no work (:func:`_people`, :func:`_scorable`), the blanks that count
    (:func:`_counted_blanks`), the embeddings (:func:`_embed`), AQER's rounds
    (:func:`_reweight`), the baselines (:func:`_baselines`), the AI answers
    (:func:`_score_ai_answers`), then the result's tables (:func:`_result`).
    """
    settings = _settings(settings, max_iterations=max_iterations, tolerance=tolerance,
                         llm_as_workers=llm_as_workers, baselines=baselines,
                         blank_answers=blank_answers)
    if progress is not None:
        progress.start("Checking answers")
    prepared = (
        responses
        if isinstance(responses, PreparedResponses)
        else clean_responses(responses, duplicates=duplicates, source=source)
    )
    source = source or prepared.source
    run = _Run(prepared, settings, f" in {source}" if source else "", list(prepared.notices),
               progress)
    split = _split_answers(run)
    people = _people(run, split)
    scored = _scorable(run, split, people)
    blanks = _counted_blanks(run, split, scored)
    vectors = _embed(run, split, scored, encoder, cancel)
    rounds = _reweight(run, scored, blanks, vectors, cancel)
    baseline = _baselines(run, scored, blanks, vectors, cancel)
    ai = _score_ai_answers(run, split, scored, blanks, vectors, rounds)
    return _result(run, split, people, scored, blanks, vectors, rounds, baseline, ai, encoder)


def _settings(settings: AqerSettings | None, **overrides: Any) -> AqerSettings:
    """``settings`` with the keyword settings that are given (not None), validated."""
    chosen = (settings or AqerSettings()).model_copy(
        update={k: v for k, v in overrides.items() if v is not None})
    return AqerSettings.model_validate(chosen.model_dump())


@dataclass
class _Run:
    """What every stage reads: the answers, the settings, where they came from (" in <file>"
    for messages) and the notices so far (each stage adds its own, in order)."""

    prepared: PreparedResponses
    settings: AqerSettings
    where: str
    notices: list[AqerNotice]
    progress: Progress | None = None

    def stage(self, label: str, total: int | None = None) -> None:
        """Say which stage runs now (when someone listens)."""
        if self.progress is not None:
            self.progress.start(label, total=total)

    def advance(self, n: int, detail: str | None = None) -> None:
        if self.progress is not None:
            self.progress.advance(n, detail=detail)


@dataclass
class _Split:
    """The answers of the people (the AI's too when scored as workers) and of the AIs apart,
    the people's questions and workers numbered once (in order of appearance, as
    ``.unique()`` lists them), the blank answers apart alike, and the rule for blanks."""

    people: pd.DataFrame
    llms: pd.DataFrame
    asked_code: np.ndarray
    asked_values: Any
    worker_code: np.ndarray
    worker_values: Any
    rule: BlankRule
    people_blank: pd.DataFrame
    llm_blank: pd.DataFrame

    @property
    def worst(self) -> bool:
        return self.rule.rule == "worst"


def _split_answers(run: _Run) -> _Split:
    """People and AI answers apart, numbered once; how blank answers count."""
    frame, settings = run.prepared.frame, run.settings
    is_worker = (~frame["is_llm"]) | settings.llm_as_workers
    if is_worker.all():  # no copy of the whole frame when there are no LLM answers
        people, llms = frame, frame.iloc[:0]
    else:
        people, llms = frame[is_worker], frame[~is_worker]
    asked_code, asked_values = pd.factorize(people["question"].to_numpy(dtype=object))
    worker_code, worker_values = pd.factorize(people["worker"].to_numpy(dtype=object))
    rule = blank_rule(
        run.prepared, settings.blank_answers, settings.llm_as_workers,
        numbered=(worker_code, worker_values, asked_code, asked_values),
    )
    blank_rows = run.prepared.blanks
    if len(blank_rows):
        blank_is_worker = (~blank_rows["is_llm"]) | settings.llm_as_workers
        people_blank = blank_rows[blank_is_worker]
        llm_blank = blank_rows[~blank_is_worker]
    else:
        people_blank = llm_blank = blank_rows
    return _Split(people, llms, asked_code, asked_values, worker_code, worker_values, rule,
                  people_blank, llm_blank)


@dataclass
class _People:
    """The people to score (``names``: with answers, and the absent when they are scored),
    the people who answered nothing (``absent``) and the questions asked."""

    names: list[Any]
    absent: list[str]
    asked: list[Any]


def _people(run: _Run, split: _Split) -> _People:
    """The guards that need no work: at least 2 people and 2 questions. People who left every
    question blank (absent?) are left out of the scale unless asked for (they would become its
    0 and move everyone else's score)."""
    names = split.worker_values.tolist()
    absent = absent_people(names, split.people_blank)
    if split.worst and run.settings.keep_absent:  # everyone was given every question
        names = names + absent
    else:
        absent_set = set(absent)
        run.notices[:] = [n for n in run.notices if not (n.topic == "Empty answer"
                                                         and n.worker in absent_set)]
        run.notices += absent_notices(absent, split.worst, len(split.asked_values))
    asked = split.asked_values.tolist()
    _need_two(names, f"compares workers with each other, so it needs answers from at least 2 "
              f"workers{run.where}", "Add the other workers' answers, or check that the worker "
              "column is the right one.", shown=str)
    _need_two(asked, f"judges workers across questions, so it needs answers to at least 2 "
              f"questions{run.where}", "Add more questions, or check that the question column "
              "is the right one (in a wide sheet, every question is a column).", shown=_short)
    return _People(names, absent, asked)


@dataclass
class _Scored:
    """The answers AQER scores (``scorable``: those to questions at least 2 people answered),
    each one's worker and question as positions in ``names`` and ``questions``."""

    answered_by_question: np.ndarray
    """How many people answered each question asked (``_People.asked``)."""
    scorable: pd.DataFrame
    w_idx: np.ndarray
    by_question: np.ndarray
    names: list[Any]
    questions: list[Any]
    worker_count: int
    """How many people have a scorable answer."""

    @property
    def worker_index(self) -> dict[Any, int]:
        return {name: i for i, name in enumerate(self.names)}

    @property
    def question_index(self) -> dict[Any, int]:
        return {q: j for j, q in enumerate(self.questions)}


def _scorable(run: _Run, split: _Split, people: _People) -> _Scored:
    """A question only one worker answered has no consensus to compare with: said, and left
    out; so is a worker with no other answers. Raises :class:`AqerInputError` when fewer than
    2 questions answered by 2 workers are left."""
    answered_by_question = np.bincount(split.asked_code, minlength=len(people.asked))
    is_lonely = answered_by_question < 2
    lonely = [people.asked[j] for j in np.flatnonzero(is_lonely)]
    run.notices += _lonely_notices(split.people, lonely)
    scorable = split.people[~is_lonely[split.asked_code]] if lonely else split.people
    # Each scorable answer's worker and question as positions in scored_names/_questions.
    if scorable is split.people:  # every question has a consensus: numbered already
        w_idx, scored_values = split.worker_code, split.worker_values
    else:
        w_idx, scored_values = pd.factorize(scorable["worker"].to_numpy(dtype=object))
    scored_names = scored_values.tolist()
    if split.worst:
        kept = set(scored_names)
        scored_names = ([n for n in people.names if n in kept]
                        + [n for n in people.names if n not in kept])
        place = {name: i for i, name in enumerate(scored_names)}
        w_idx = np.array([place[n] for n in scored_values], dtype=np.int64)[w_idx]
    w_idx = w_idx.astype(np.int64, copy=False)
    scored_set = set(scored_names)
    for name in people.names:
        if name not in scored_set:
            run.notices.append(AqerNotice(
                topic="Worker not scored",
                message=(f"'{name}' answered only questions nobody else answered, so AQER "
                         "cannot score them."),
                worker=name,
            ))
    # The questions answered by 2 or more keep their order of appearance.
    scored_questions = [q for q, alone in zip(people.asked, is_lonely) if not alone]
    by_question = (np.cumsum(~is_lonely) - 1)[split.asked_code[~is_lonely[split.asked_code]]]
    by_question = by_question.astype(np.int64, copy=False)
    if len(scored_values) < 2 or len(scored_questions) < 2:
        raise AqerInputError(
            f"Too few overlapping answers{run.where}: AQER needs at least 2 questions that at "
            f"least 2 workers answered, and found {len(scored_questions)} such question(s) "
            f"answered by {len(scored_values)} worker(s). Workers must answer the same "
            "questions."
        )
    return _Scored(answered_by_question, scorable, w_idx, by_question, scored_names,
                   scored_questions, len(scored_values))


def _lonely_notices(people: pd.DataFrame, lonely: list[Any]) -> list[AqerNotice]:
    """One notice per question only one worker answered."""
    out = []
    for question in lonely:
        item = people[people["question"] == question].iloc[0]
        out.append(AqerNotice(
            topic="Question answered by one worker",
            message=(
                f"Only '{item['worker']}' answered '{_short(question)}'; an answer cannot be "
                "compared with a consensus of one, so this question does not count in any "
                "score."
            ),
            question=question,
            worker=item["worker"],
            row=None if pd.isna(item["row"]) else int(item["row"]),
        ))
    return out


@dataclass
class _Blanks:
    """The blank answers that count (a dense design): ``frame`` from :func:`_blank_pairs`,
    each one's worker ``w`` and question ``q`` as positions."""

    frame: pd.DataFrame
    w: np.ndarray
    q: np.ndarray


def _counted_blanks(run: _Run, split: _Split, scored: _Scored) -> _Blanks:
    """Every scored worker x scored question without an answer, when blanks count; the
    notices say how blank answers counted."""
    blanks = _blank_pairs(
        scored.names if split.worst else [], scored.questions, scored.scorable,
        split.people_blank, run.where, positions=(scored.w_idx, scored.by_question),
    )
    run.notices[:] = _blank_notices(run.notices, blanks, split.rule, len(scored.questions),
                                    split.people_blank, split.worst)
    return _Blanks(blanks, blanks["w"].to_numpy(np.int64), blanks["q"].to_numpy(np.int64))


@dataclass
class _Vectors:
    """The answers embedded (identical answers once): ``vectors`` of the distinct texts,
    ``embedded`` the workers' scorable answers, ``text_code`` each answer's distinct text
    (the workers' in question order, then the AI answers')."""

    vectors: np.ndarray
    text_code: np.ndarray
    rows: np.ndarray
    embedded: EmbeddedResponses
    worker_texts: list[Any]
    llm_texts: list[Any]
    n_worker_answers: int


def _embed(run: _Run, split: _Split, scored: _Scored, encoder: TextEncoder,
           cancel: CancelToken | None) -> _Vectors:
    """Embed every distinct answer once (the workers' scorable answers and the AI answers);
    an answer longer than the model reads is said."""
    worker_array = scored.scorable["response"].to_numpy(dtype=object)
    llm_array = split.llms["response"].to_numpy(dtype=object)
    # In question order, as EmbeddedResponses keeps them: distinct answers need no re-sorting.
    in_order = np.argsort(scored.by_question, kind="stable")
    text_code, distinct = pd.factorize(np.concatenate([worker_array[in_order], llm_array]))
    unique = distinct.tolist()
    if cancel is not None:
        cancel.raise_if_cancelled()
    vectors = embed_texts(unique, encoder, progress=run.progress, cancel=cancel)
    run.notices += _too_long_notices(encoder, unique, scored.scorable, split.llms)
    rows = np.empty(len(in_order), dtype=np.int64)
    rows[in_order] = text_code[: len(in_order)]
    embedded = EmbeddedResponses(
        vectors, rows, scored.w_idx, scored.by_question, n_workers=len(scored.names),
        n_questions=len(scored.questions),
    )
    return _Vectors(vectors, text_code, rows, embedded, worker_array.tolist(),
                    llm_array.tolist(), len(in_order))


def _too_long_notices(encoder: TextEncoder, unique: list[Any], scorable: pd.DataFrame,
                      llms: pd.DataFrame) -> list[AqerNotice]:
    """One notice per answer the embedding model cut (when the encoder can tell)."""
    truncated = getattr(encoder, "truncated", None)
    if not callable(truncated):
        return []
    cut = {unique[i] for i, flag in enumerate(truncated(unique)) if flag}
    if not cut:
        return []
    limit = getattr(encoder, "max_seq_length", None)
    out = []
    for _, item in pd.concat([scorable, llms])[lambda f: f["response"].isin(cut)].iterrows():
        out.append(AqerNotice(
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
        ))
    return out


@dataclass
class _Rounds:
    """AQER's outcome, and like for like: every answer against the consensus of the *other*
    workers (final weights), a counted blank's value there per question, and each worker's
    mean of it."""

    outcome: ReweightingOutcome
    to_others: np.ndarray
    blank_to_others: np.ndarray
    worker_to_others: np.ndarray


def _reweight(run: _Run, scored: _Scored, blanks: _Blanks, vectors: _Vectors,
              cancel: CancelToken | None) -> _Rounds:
    """AQER's rounds (:func:`core.aqer.iterative_reweighting.iterative_reweighting`), and what
    the user must know of them (a tie, no convergence, a consensus from equal weights)."""
    settings = run.settings
    outcome = iterative_reweighting(
        vectors.embedded,
        max_iterations=settings.max_iterations,
        tolerance=settings.tolerance,
        progress=run.progress,
        cancel=cancel,
        blank_worker=blanks.w,
        blank_question=blanks.q,
    )
    run.notices += _rounds_notices(outcome, settings, scored.questions)
    to_others = leave_one_out_similarity(vectors.embedded, outcome.weight)
    blank_to_others = blank_values(scored.by_question, to_others, len(scored.questions))
    worker_to_others = worker_means(vectors.embedded, to_others, blanks.w,
                                    blank_to_others[blanks.q])
    return _Rounds(outcome, to_others, blank_to_others, worker_to_others)


def _rounds_notices(outcome: ReweightingOutcome, settings: AqerSettings,
                    questions: list[Any]) -> list[AqerNotice]:
    out = []
    if not outcome.discriminates:
        out.append(AqerNotice(
            topic="Responses do not discriminate between workers",
            message=(
                "Every worker got the same similarity to the consensus (for example, all "
                "answers are identical), so the responses do not discriminate between "
                "workers. AQER stopped and gives every worker the same score (1) and weight."
            ),
        ))
    elif not outcome.converged:
        out.append(AqerNotice(
            topic="Not converged",
            message=(
                f"The weights still changed after {outcome.iterations} rounds (last change "
                f"{plain_number(outcome.trace[-1][1], 2)}, tolerance "
                f"{plain_number(settings.tolerance)}). The scores "
                "are those of the last round; allow more rounds to let them settle."
            ),
        ))
    if outcome.fallback_questions is not None and outcome.fallback_questions.any():
        for j in np.flatnonzero(outcome.fallback_questions):
            out.append(AqerNotice(
                topic="Consensus from equal weights",
                message=(
                    f"Every worker who answered '{_short(questions[j])}' had weight 0 "
                    "in some round, so its consensus answer used equal weights there."
                ),
                question=questions[j],
            ))
    return out


@dataclass
class _Baselines:
    """RASA's skill and the pseudo-reference F1 / BLEU-1 per worker (None: not computed)."""

    rasa_skill: np.ndarray | None = None
    f1: np.ndarray | None = None
    bleu: np.ndarray | None = None


def _baselines(run: _Run, scored: _Scored, blanks: _Blanks, vectors: _Vectors,
               cancel: CancelToken | None) -> _Baselines:
    """The paper's baselines that need no LLM (when the settings ask for them); F1 and BLEU-1
    are skipped, and said, when they would compare too many pairs of answers."""
    settings = run.settings
    out = _Baselines()
    if not settings.baselines:
        return out
    run.stage("Baselines (RASA, F1, BLEU-1)", total=2)
    out.rasa_skill = rasa_skills(
        vectors.embedded,
        alpha=settings.rasa_alpha,
        cancel=cancel,
        blank_worker=blanks.w,
        blank_question=blanks.q,
    ).skill
    run.advance(1, detail="RASA done")
    pairs = reference_pairs(scored.by_question)
    if pairs <= settings.max_reference_pairs:
        out.f1, out.bleu, _ = pseudo_reference_scores(
            scored.by_question, scored.w_idx, vectors.worker_texts, len(scored.names),
            cancel=cancel, blank_worker=blanks.w,
        )
    else:
        run.notices.append(AqerNotice(
            topic="Baseline skipped",
            message=(
                f"The F1 and BLEU-1 baselines were not computed: they would compare "
                f"{pairs:,} pairs of answers (limit {settings.max_reference_pairs:,})."
            ),
        ))
    run.advance(1, detail="F1 and BLEU-1 done")
    return out


@dataclass
class _AiAnswers:
    """The AI answers' tables, their scores (in the order of ``_Split.llms``) and their
    blanks that count (:func:`_blank_pairs`)."""

    answers: pd.DataFrame
    summary: pd.DataFrame
    scores: np.ndarray
    blanks: pd.DataFrame


def _score_ai_answers(run: _Run, split: _Split, scored: _Scored, blanks: _Blanks,
                      vectors: _Vectors, rounds: _Rounds) -> _AiAnswers:
    """Each AI answer against the consensus of the final weights (the one the workers'
    weights describe); never part of it."""
    llms, llm_blank = split.llms, split.llm_blank
    out = _AiAnswers(pd.DataFrame(columns=LLM_ANSWER_COLUMNS),
                     pd.DataFrame(columns=LLM_SUMMARY_COLUMNS), np.zeros(0),
                     _blank_pairs([], scored.questions, llms, llm_blank, run.where))
    if not (len(llms) or (split.worst and len(llm_blank))):
        return out
    run.stage("Scoring LLM answers", total=len(llms))
    index = scored.question_index
    llm_q = np.array([index.get(q, -1) for q in llms["question"]], dtype=np.int64)
    llm_vectors = vectors.vectors[vectors.text_code[vectors.n_worker_answers:]]
    out.scores = score_llm_answers(llm_vectors, llm_q, rounds.outcome.final_sea)
    run.notices += _unscored_ai_notices(llms, llm_q)
    if split.worst:
        models = list(dict.fromkeys(list(llms["model"]) + list(llm_blank["model"])))
        out.blanks = _blank_pairs(
            models, scored.questions, llms.assign(worker=llms["model"]), llm_blank, run.where
        )
        run.notices[:] = _blank_notices(
            run.notices, out.blanks, split.rule, len(scored.questions), llm_blank, True, ai=True
        )
    blank_scores = rounds.blank_to_others[out.blanks["q"].to_numpy(np.int64)]
    out.answers, out.summary = llm_answer_tables(
        llms["model"].tolist() + out.blanks["worker"].tolist(),
        llms["question"].tolist() + out.blanks["question"].tolist(),
        vectors.llm_texts + [None] * len(out.blanks),
        np.concatenate([out.scores, np.array(blank_scores, dtype=np.float64)]),
        worker_similarity=rounds.worker_to_others,
        blank=[False] * len(llms) + [True] * len(out.blanks),
        workers_by_question=_workers_by_question(scored, blanks, vectors, rounds),
        worker_scores=rounds.outcome.score,
    )
    run.advance(len(llms))
    return out


def _workers_by_question(scored: _Scored, blanks: _Blanks, vectors: _Vectors,
                         rounds: _Rounds) -> dict[Any, float]:
    """The workers' like-for-like mean per question, with their counted blanks."""
    q_idx, blank_q = scored.by_question, blanks.q
    sums = np.bincount(q_idx, weights=rounds.to_others, minlength=len(scored.questions))
    sums += np.bincount(blank_q, weights=rounds.blank_to_others[blank_q], minlength=len(sums))
    given = vectors.embedded.answered_per_question + np.bincount(blank_q, minlength=len(sums))
    return dict(zip(scored.questions, sums / np.maximum(given, 1)))


def _unscored_ai_notices(llms: pd.DataFrame, llm_q: np.ndarray) -> list[AqerNotice]:
    """One notice per AI answer to a question without a consensus."""
    out = []
    for (_, item), j in zip(llms.iterrows(), llm_q):
        if j < 0:
            out.append(AqerNotice(
                topic="LLM answer not scored",
                message=(
                    f"The answer of '{item['model']}' to '{_short(item['question'])}' was "
                    "not scored: fewer than 2 workers answered that question, so there is "
                    "no consensus to compare it with."
                ),
                question=item["question"],
                worker=item["model"],
                row=None if pd.isna(item["row"]) else int(item["row"]),
            ))
    return out


def _result(run: _Run, split: _Split, people: _People, scored: _Scored, blanks: _Blanks,
            vectors: _Vectors, rounds: _Rounds, baseline: _Baselines, ai: _AiAnswers,
            encoder: TextEncoder) -> AqerResult:
    """The result's tables, in the Excel contract's columns."""
    settings, outcome = run.settings, rounds.outcome
    workers = _workers_table(run, split, people, scored, blanks, vectors, rounds, baseline)
    responses = _responses_table(split, scored, blanks, outcome, workers, settings)
    questions = _questions_table(run, people, scored, vectors, outcome)
    convergence = pd.DataFrame(outcome.trace, columns=CONVERGENCE_COLUMNS)
    agreement = _agreement(run, split, scored, blanks, rounds, workers, ai)
    return AqerResult(
        workers=workers,
        responses=responses[
            RESPONSE_COLUMNS
            + (["grade"] if responses["grade"].notna().any() else [])
            + (["is_llm"] if settings.llm_as_workers else [])
        ],
        questions=questions,
        llm_answers=ai.answers,
        llm_summary=ai.summary,
        convergence=convergence,
        agreement=agreement,
        warnings=run.notices,
        settings=settings,
        iterations=outcome.iterations,
        converged=outcome.converged,
        discriminates=outcome.discriminates,
        embedding_model=str(getattr(encoder, "model_name", "") or type(encoder).__name__),
        device=str(getattr(encoder, "device", "") or ""),
        blank_rule=split.rule.rule,
        blank_reason=split.rule.reason,
        computed_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _workers_table(run: _Run, split: _Split, people: _People, scored: _Scored,
                   blanks: _Blanks, vectors: _Vectors, rounds: _Rounds,
                   baseline: _Baselines) -> pd.DataFrame:
    """The Workers sheet: one row per person, best first; those not scored (and the absent
    left out) last."""
    settings, outcome, worst = run.settings, rounds.outcome, split.worst
    score = outcome.score
    # Competition ranking: 1 + how many workers scored strictly higher.
    rank = 1 + len(score) - np.searchsorted(np.sort(score), score, side="right")
    columns: dict[str, Any] = {
        "worker": scored.names,
        "score": score,
        "raw_score": outcome.raw_score,
        "weight": outcome.weight,
        "rank": rank.astype(int),
        "answered": vectors.embedded.answered_by_worker.astype(int),
    }
    if worst:
        columns["blank"] = np.bincount(blanks.w, minlength=len(scored.names)).astype(int)
    columns["similarity_to_others"] = rounds.worker_to_others
    columns["simplified_score"] = outcome.simplified_score
    workers = pd.DataFrame(columns)
    if baseline.rasa_skill is not None:
        workers["rasa_skill"] = baseline.rasa_skill
    if baseline.f1 is not None:
        workers["f1"] = _none_if_nan(baseline.f1)
        workers["bleu1"] = _none_if_nan(baseline.bleu)
    worker_index = scored.worker_index
    unscored = [n for n in people.names if n not in worker_index]
    left_absent = [] if (worst and settings.keep_absent) else people.absent
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
            workers.loc[workers["worker"].isin(left_absent), "blank"] = len(scored.questions)
    if settings.llm_as_workers:
        frame, blank_rows = run.prepared.frame, run.prepared.blanks
        llm_names = set(frame.loc[frame["is_llm"], "worker"]) | set(
            blank_rows.loc[blank_rows["is_llm"], "worker"] if len(blank_rows) else []
        )
        workers["is_llm"] = workers["worker"].isin(llm_names)
    return workers


def _responses_table(split: _Split, scored: _Scored, blanks: _Blanks,
                     outcome: ReweightingOutcome, workers: pd.DataFrame,
                     settings: AqerSettings) -> pd.DataFrame:
    """The Responses sheet: every answer of the people (in the sheet's order) with its
    similarity to the consensus, then the blanks that counted."""
    people, scorable = split.people, scored.scorable
    if scorable is people:
        similarity_by_row = outcome.similarity
    else:
        similarity_by_row = (
            pd.Series(outcome.similarity, index=scorable.index).reindex(people.index).to_numpy()
        )
    out = pd.DataFrame(
        {
            "question": people["question"],
            "worker": people["worker"],
            "response": people["response"],
            "similarity": _number_column(similarity_by_row),
            "grade": _grades(people["grade"]),
        }
    )
    if settings.llm_as_workers:
        out["is_llm"] = people["is_llm"].to_numpy()
    frame = blanks.frame
    if len(frame):
        blank_out = pd.DataFrame(
            {
                "question": frame["question"].to_numpy(),
                "worker": frame["worker"].to_numpy(),
                "response": np.full(len(frame), None, dtype=object),
                "similarity": outcome.blank_value[blanks.q].astype(np.float64),
                "grade": _grades(frame["grade"]),
            }
        )
        if settings.llm_as_workers:
            blank_out["is_llm"] = blank_out["worker"].isin(
                workers.loc[workers["is_llm"], "worker"])
        out = pd.concat([out, blank_out], ignore_index=True)
    return out.reset_index(drop=True)


def _questions_table(run: _Run, people: _People, scored: _Scored, vectors: _Vectors,
                     outcome: ReweightingOutcome) -> pd.DataFrame:
    """The Questions sheet: per question asked, its mean similarity (difficulty), the answer
    closest to the consensus and who gave it, and the camps its answers split into (said)."""
    q_idx, n_questions = scored.by_question, len(scored.questions)
    best = best_responses(q_idx, outcome.similarity, n_questions)
    run.stage("Looking for questions whose answers split into camps")
    camps = split_questions(vectors.vectors, vectors.rows, q_idx, vectors.worker_texts,
                            n_questions)
    answered_q = np.maximum(vectors.embedded.answered_per_question, 1)
    mean_similarity = (np.bincount(q_idx, weights=outcome.similarity, minlength=n_questions)
                       / answered_q)
    # How many people answered each question (asked[i] was answered answered_by_question[i]).
    answered = dict(zip(people.asked, scored.answered_by_question.tolist()))
    question_index, texts = scored.question_index, vectors.worker_texts
    rows = []
    for question in people.asked:
        j = question_index.get(question)
        if j is None:
            rows.append({"question": question, "answered": int(answered[question])})
            continue
        k = best[j]
        split = describe_camps(camps[j], int(vectors.embedded.answered_per_question[j])) \
            if j in camps else ""
        rows.append({
            "question": question,
            "mean_similarity": float(mean_similarity[j]),
            "best_response": texts[k],
            "best_worker": scored.names[scored.w_idx[k]],
            "answered": int(answered[question]),
            "camps": split,
        })
        if split:
            run.notices.append(AqerNotice(
                topic="Answers split into camps",
                message=(
                    f"The answers to '{_short(question)}' split into camps of similar size: "
                    f"{split}. The consensus sides with one camp (usually the larger) "
                    "whether or not it is right, so the answer closest to the class's "
                    "consensus "
                    f"(“{_short(texts[k])}”) may be a common mistake and the other "
                    "camp's answers score lower: check this question by hand."
                ),
                question=question,
            ))
    return pd.DataFrame(rows, columns=QUESTION_COLUMNS)


def _agreement(run: _Run, split: _Split, scored: _Scored, blanks: _Blanks, rounds: _Rounds,
               workers: pd.DataFrame, ai: _AiAnswers) -> pd.DataFrame:
    """The Agreement sheet: each scorer (AQER, simplified AQER and the baselines) against the
    expert grades, per person and per answer, and the AI answers' scores against theirs, with
    the answers' length as a baseline. Grades count over exactly the answers AQER scored (and
    the blanks it counted); a grade that is not a number is said. Adds the column
    ``expert_grade`` to ``workers`` when there are grades."""
    run.notices += _grade_notices(run, split)
    answers = _AnswerGrades.of(scored, blanks, rounds.outcome)
    methods, expert = _scorers_and_grades(run, scored, answers, workers)
    graded_ai = _ai_grades(split.llms, ai.scores, ai.blanks, rounds.blank_to_others)
    if not (methods or graded_ai):
        return pd.DataFrame(columns=AGREEMENT_COLUMNS)
    # the length baseline: each answer's number of words (a blank has none)
    answer_words = np.array([word_count(r) for r in scored.scorable["response"]]
                            + [0.0] * len(blanks.frame), dtype=float)
    n_names = len(scored.names)
    word_sums = np.bincount(answers.worker, weights=answer_words, minlength=n_names)
    word_counts = np.bincount(answers.worker, minlength=n_names)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_words = dict(zip(scored.names, word_sums / word_counts, strict=True))
    per_answer = bool(methods) and answers.graded
    return agreement_table(
        methods,
        expert,
        answer_similarity=answers.similarity if per_answer else None,
        answer_grade=answers.grade if per_answer else None,
        ai_answers=graded_ai,
        per_person=bool(run.prepared.person_grades),
        lengths={"worker": [mean_words.get(n, float("nan")) for n in workers["worker"]],
                 "answer": answer_words,
                 **{f"ai:{m}": v for m, v in _ai_lengths(split.llms, ai.blanks,
                                                          graded_ai).items()}},
    )


def _grade_notices(run: _Run, split: _Split) -> list[AqerNotice]:
    """A notice naming the rows whose expert grade is not a number (left out)."""
    graded = pd.concat([part[part["grade"] != ""] for part in (
        split.people, split.llms, split.people_blank, split.llm_blank)])
    bad = graded[np.isnan(_grades(graded["grade"]))]
    if not len(bad):
        return []
    return [AqerNotice(
        topic="Grade is not a number",
        message=(
            f"{len(bad)} expert grade(s){run.where} are not numbers and were left out of the "
            f"agreement (rows {', '.join(str(r) for r in bad['row'].dropna().head(12))}"
            f"{' and more' if len(bad) > 12 else ''})."
        ),
        row=_first_row(bad["row"]),
    )]


@dataclass
class _AnswerGrades:
    """Per scored answer, then per counted blank: its expert grade (NaN: none), its
    similarity to the consensus and its worker (a position in ``_Scored.names``)."""

    grade: np.ndarray
    similarity: np.ndarray
    worker: np.ndarray

    @property
    def graded(self) -> bool:
        return bool(np.isfinite(self.grade).any())

    @classmethod
    def of(cls, scored: _Scored, blanks: _Blanks,
           outcome: ReweightingOutcome) -> _AnswerGrades:
        scorable = scored.scorable
        blank_grade = _grades(blanks.frame["grade"])
        has_grade = scorable["grade"] != ""
        scored_grade = np.full(len(scorable), np.nan)
        if has_grade.any():
            scored_grade[has_grade.to_numpy()] = _grades(scorable.loc[has_grade, "grade"])
        return cls(
            np.concatenate([scored_grade, np.array(blank_grade, float)]),
            np.concatenate([outcome.similarity, outcome.blank_value[blanks.q]
                            if len(blanks.frame) else np.zeros(0)]),
            np.concatenate([scored.w_idx, blanks.w]),
        )


def _scorers_and_grades(run: _Run, scored: _Scored, answers: _AnswerGrades,
                        workers: pd.DataFrame) -> tuple[dict[str, Any], list[Any]]:
    """Each scorer's scores of the people and the people's expert grades (one per person, or
    the mean of their answers' grades), as the Workers table lists them; ({}, []) without
    grades."""
    person_grades = run.prepared.person_grades
    if not (person_grades or answers.graded):
        return {}, []
    if person_grades:
        # One grade per person is already what a worker's score is compared with: it is
        # used as it is, not copied onto each answer (that would invent answer grades).
        mean_grade = dict(person_grades)
    else:
        has = np.isfinite(answers.grade)
        n_names = len(scored.names)
        sums = np.bincount(answers.worker[has], weights=answers.grade[has], minlength=n_names)
        counts = np.bincount(answers.worker[has], minlength=n_names)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_grade = dict(zip(scored.names, sums / counts))
    workers["expert_grade"] = _none_if_nan(
        [mean_grade.get(n, float("nan")) for n in workers["worker"]]
    )
    methods = {
        "AQER score": workers["score"].tolist(),
        "Simplified AQER score": workers["simplified_score"].tolist(),
    }
    if "rasa_skill" in workers:
        methods["RASA skill"] = workers["rasa_skill"].tolist()
    if "f1" in workers:
        methods["F1"] = workers["f1"].tolist()
        methods["BLEU-1"] = workers["bleu1"].tolist()
    return methods, workers["expert_grade"].tolist()


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
