"""AQER from answers to result, and from a spreadsheet to a workbook.

    prepared = read_responses("answers.xlsx", format="long")      # check the input (the wizard
    result = aqer(prepared, Encoder(), progress=p, cancel=c)      # shows prepared.notices)
    write_report(result, "aqer.xlsx", inputs=...)

:func:`aqer` also takes a plain long DataFrame (columns ``question``, ``worker``, ``response``,
optionally ``is_llm``, ``model``, ``grade``) and any ``encoder`` that maps a list of strings to
an array, so tests can use a tiny encoder. Every long step reports to ``progress`` and stops on
``cancel``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from core.aqer.agreement import agreement_table
from core.aqer.best_response import best_responses
from core.aqer.iterative_reweighting import iterative_reweighting
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
)
from core.aqer.pseudo_reference import pseudo_reference_scores, reference_pairs
from core.aqer.rasa import rasa_skills
from core.aqer.responses import (
    AqerInputError,
    Duplicates,
    Format,
    PreparedResponses,
    clean_responses,
    read_responses,
)
from core.aqer.synthetic_exemplary_answer import EmbeddedResponses
from core.runs import CancelToken, Progress
from core.tables import cell_number

__all__ = ["aqer", "embed_texts", "run_aqer_file"]

#: Texts per call of the encoder (progress and cancel are checked between calls).
EMBED_CHUNK = 256

TextEncoder = Callable[[list[str]], Any]


def embed_texts(
    texts: Sequence[str],
    encoder: TextEncoder,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> np.ndarray:
    """Embed distinct ``texts`` (already unique) in chunks; float32 (len(texts), d)."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    if progress is not None:
        progress.start("Embedding answers", total=len(texts), detail=_describe(encoder))
    out: np.ndarray | None = None
    for start in range(0, len(order), EMBED_CHUNK):
        if cancel is not None:
            cancel.raise_if_cancelled()
        idx = order[start : start + EMBED_CHUNK]
        vectors = np.asarray(encoder([texts[i] for i in idx]), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(idx):
            raise RuntimeError(
                f"The embedding model returned {vectors.shape} for {len(idx)} texts; expected "
                "one vector per text. Choose another embedding model in Settings → Embeddings."
            )
        if not np.isfinite(vectors).all():
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


def _none_if_nan(values: Any) -> list[Any]:
    return [
        None if v is None or (isinstance(v, float) and not np.isfinite(v)) else v for v in values
    ]


def aqer(
    responses: pd.DataFrame | PreparedResponses,
    encoder: TextEncoder,
    *,
    settings: AqerSettings | None = None,
    max_iterations: int | None = None,
    tolerance: float | None = None,
    llm_as_workers: bool | None = None,
    baselines: bool | None = None,
    duplicates: Duplicates = "error",
    source: str = "",
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> AqerResult:
    """Score workers (and LLM answers) without an answer key.

    ``responses``: a long frame with ``question``, ``worker``, ``response`` (optional
    ``is_llm``, ``model``, ``grade``) or a :class:`PreparedResponses`. ``encoder(texts)`` returns
    one vector per text. Keyword settings override ``settings``. Raises
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
    people = frame[is_worker]
    llms = frame[~is_worker]

    # --- the guards that need no work --------------------------------------------------------
    names = list(dict.fromkeys(people["worker"]))
    asked = list(dict.fromkeys(people["question"]))
    if len(names) < 2:
        found = f"only 1 ('{names[0]}')" if names else "none"
        raise AqerInputError(
            f"AQER compares workers with each other, so it needs answers from at least 2 "
            f"workers{where}; it found {found}. Add the other workers' answers, or check that the "
            "worker column is the right one."
        )
    if len(asked) < 2:
        found = f"only 1 ('{_short(asked[0])}')" if asked else "none"
        raise AqerInputError(
            f"AQER judges workers across questions, so it needs answers to at least 2 "
            f"questions{where}; it found {found}. Add more questions, or check that the question "
            "column is the right one (in a wide sheet, every question is a column)."
        )

    # A question only one worker answered has no consensus to compare with.
    per_question = people.groupby("question", sort=False)["worker"].count()
    lonely = per_question[per_question < 2].index
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
    scorable = people[~people["question"].isin(lonely)]
    scored_names = list(dict.fromkeys(scorable["worker"]))
    for name in names:
        if name not in set(scored_names):
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
    scored_questions = list(dict.fromkeys(scorable["question"]))
    if len(scored_names) < 2 or len(scored_questions) < 2:
        raise AqerInputError(
            f"Too few overlapping answers{where}: AQER needs at least 2 questions that at least "
            f"2 workers answered, and found {len(scored_questions)} such question(s) answered by "
            f"{len(scored_names)} worker(s). Workers must answer the same questions."
        )

    # --- embeddings (identical answers once) --------------------------------------------------
    worker_texts = scorable["response"].tolist()
    llm_texts = llms["response"].tolist()
    unique = list(dict.fromkeys(worker_texts + llm_texts))
    if cancel is not None:
        cancel.raise_if_cancelled()
    vectors = embed_texts(unique, encoder, progress=progress, cancel=cancel)
    position = {text: i for i, text in enumerate(unique)}
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

    worker_index = {name: i for i, name in enumerate(scored_names)}
    question_index = {q: j for j, q in enumerate(scored_questions)}
    w_idx = scorable["worker"].map(worker_index).to_numpy(np.int64)
    q_idx = scorable["question"].map(question_index).to_numpy(np.int64)
    rows = np.fromiter((position[t] for t in worker_texts), dtype=np.int64, count=len(worker_texts))
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
                    f"{outcome.trace[-1][1]:.2e}, tolerance {settings.tolerance:g}). The scores "
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

    # --- baselines ----------------------------------------------------------------------------
    rasa_skill = f1 = bleu = None
    if settings.baselines:
        if progress is not None:
            progress.start("Baselines (RASA, F1, BLEU-1)", total=2)
        rasa_skill = rasa_skills(embedded, alpha=settings.rasa_alpha, cancel=cancel).skill
        if progress is not None:
            progress.advance(1, detail="RASA done")
        pairs = reference_pairs(q_idx)
        if pairs <= settings.max_reference_pairs:
            f1, bleu, _ = pseudo_reference_scores(
                q_idx, w_idx, worker_texts, len(scored_names), cancel=cancel
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
    if len(llms):
        if progress is not None:
            progress.start("Scoring LLM answers", total=len(llms))
        llm_q = np.array([question_index.get(q, -1) for q in llms["question"]], dtype=np.int64)
        llm_vectors = vectors[[position[t] for t in llm_texts]]
        scores = score_llm_answers(llm_vectors, llm_q, outcome.sea)
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
        llm_answers, llm_summary = llm_answer_tables(
            llms["model"].tolist(), llms["question"].tolist(), llm_texts, scores
        )
        if progress is not None:
            progress.advance(len(llms))

    # --- tables -------------------------------------------------------------------------------
    score = outcome.score
    # Competition ranking: 1 + how many workers scored strictly higher.
    rank = 1 + len(score) - np.searchsorted(np.sort(score), score, side="right")
    workers = pd.DataFrame(
        {
            "worker": scored_names,
            "score": score,
            "raw_score": outcome.raw_score,
            "weight": outcome.weight,
            "rank": rank.astype(int),
            "answered": embedded.answered_by_worker.astype(int),
            "simplified_score": outcome.simplified_score,
        }
    )
    if rasa_skill is not None:
        workers["rasa_skill"] = rasa_skill
    if f1 is not None:
        workers["f1"] = _none_if_nan(f1)
        workers["bleu1"] = _none_if_nan(bleu)
    unscored = [n for n in names if n not in worker_index]
    if unscored:
        extra = pd.DataFrame({"worker": unscored})
        extra["answered"] = 0
        workers = pd.concat([workers, extra], ignore_index=True)
    workers = workers.sort_values(["rank", "worker"], na_position="last", kind="stable")
    workers = workers.reset_index(drop=True)
    workers["rank"] = workers["rank"].astype("Int64")
    workers["answered"] = workers["answered"].astype(int)
    if settings.llm_as_workers:
        llm_names = set(frame.loc[frame["is_llm"], "worker"])
        workers["is_llm"] = workers["worker"].isin(llm_names)

    similarity_by_row = pd.Series(outcome.similarity, index=scorable.index)
    responses_out = pd.DataFrame(
        {
            "question": people["question"],
            "worker": people["worker"],
            "response": people["response"],
            "similarity": _none_if_nan(similarity_by_row.reindex(people.index).to_numpy()),
        }
    ).reset_index(drop=True)
    if settings.llm_as_workers:
        responses_out["is_llm"] = people["is_llm"].to_numpy()

    best = best_responses(q_idx, outcome.similarity, len(scored_questions))
    mean_similarity = np.bincount(
        q_idx, weights=outcome.similarity, minlength=len(scored_questions)
    )
    mean_similarity = mean_similarity / np.maximum(embedded.answered_per_question, 1)
    answered = people.groupby("question", sort=False)["worker"].count()
    question_rows = []
    for question in asked:
        j = question_index.get(question)
        if j is None:
            question_rows.append({"question": question, "answered": int(answered[question])})
            continue
        k = best[j]
        question_rows.append(
            {
                "question": question,
                "mean_similarity": float(mean_similarity[j]),
                "best_response": worker_texts[k],
                "best_worker": scored_names[w_idx[k]],
                "answered": int(answered[question]),
            }
        )
    questions = pd.DataFrame(question_rows, columns=QUESTION_COLUMNS)
    convergence = pd.DataFrame(outcome.trace, columns=CONVERGENCE_COLUMNS)

    # --- agreement with expert grades ---------------------------------------------------------
    agreement = pd.DataFrame(columns=AGREEMENT_COLUMNS)
    grades = people["grade"].map(cell_number)
    bad = people[(people["grade"] != "") & grades.isna()]
    if len(bad):
        notices.append(
            AqerNotice(
                topic="Grade is not a number",
                message=(
                    f"{len(bad)} expert grade(s){where} are not numbers and were left out of the "
                    f"agreement (rows {', '.join(str(r) for r in bad['row'].head(12))}"
                    f"{' and more' if len(bad) > 12 else ''})."
                ),
                row=None if pd.isna(bad["row"].iloc[0]) else int(bad["row"].iloc[0]),
            )
        )
    if grades.notna().any():
        mean_grade = grades.groupby(people["worker"]).mean()
        workers["expert_grade"] = _none_if_nan(workers["worker"].map(mean_grade).to_numpy())
        methods: dict[str, Any] = {
            "AQER score": workers["score"].tolist(),
            "Simplified AQER score": workers["simplified_score"].tolist(),
        }
        if "rasa_skill" in workers:
            methods["RASA skill"] = workers["rasa_skill"].tolist()
        if "f1" in workers:
            methods["F1"] = workers["f1"].tolist()
            methods["BLEU-1"] = workers["bleu1"].tolist()
        agreement = agreement_table(
            methods,
            workers["expert_grade"].tolist(),
            answer_similarity=similarity_by_row.to_numpy(),
            answer_grade=grades.reindex(scorable.index).to_numpy(),
        )

    return AqerResult(
        workers=workers,
        responses=responses_out[RESPONSE_COLUMNS + (["is_llm"] if settings.llm_as_workers else [])],
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
    )


def run_aqer_file(
    input_path: str | Path,
    output_path: str | Path,
    *,
    encoder: TextEncoder | None = None,
    embedding_model: str = "",
    device: str = "auto",
    sheet: str | None = None,
    format: Format = "long",
    question_col: str | None = None,
    worker_col: str | None = None,
    response_col: str | None = None,
    grade_col: str | None = None,
    llm_cols: Sequence[str] = (),
    llm_workers: Sequence[str] = (),
    duplicates: Duplicates = "error",
    settings: AqerSettings | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> AqerResult:
    """Spreadsheet in, AQER workbook out (what ``evaldesk aqer`` runs)."""
    from core.aqer.report import write_report

    if progress is not None:
        progress.start("Reading answers", detail=str(input_path))
    prepared = read_responses(
        input_path,
        sheet=sheet,
        format=format,
        question_col=question_col,
        worker_col=worker_col,
        response_col=response_col,
        grade_col=grade_col,
        llm_cols=llm_cols,
        llm_workers=llm_workers,
        duplicates=duplicates,
    )
    if encoder is None:
        from core.embeddings import Encoder

        if progress is not None:
            progress.start("Loading the embedding model")
        encoder = Encoder(embedding_model, device=device)
    result = aqer(prepared, encoder, settings=settings, progress=progress, cancel=cancel)
    if progress is not None:
        progress.start("Writing the workbook", detail=str(output_path))
    write_report(
        result,
        output_path,
        inputs={
            "Input file": str(Path(input_path).resolve()),
            "Read from": prepared.source,
            "Layout": format,
            "Answers": prepared.describe(),
        },
    )
    return result
