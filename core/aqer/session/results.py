"""AQER's results in the project: each run of the choices (the answers read, embedded through
the project's vector cache, scored) stored under a run whose settings are the choices'
:meth:`~core.aqer.model.AqerChoices.fingerprint`, found again when nothing it depends on
changed, and written to the workbook."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import ValidationError

from core.aqer.comparison import Comparison, WorkersCurve, comparison_table
from core.aqer.model import AqerChoices, AqerNotice, AqerResult, AqerSettings
from core.aqer.pipeline import aqer
from core.aqer.report import write_report
from core.aqer.session.choices import METHOD, answers_file, read_prepared
from core.aqer.session.encoders import (
    CACHED_DEVICE,
    EncoderFactory,
    cached_encoder,
    default_encoder_factory,
)
from core.runs import Cancelled
from core.tables import is_missing

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.runs import CancelToken, Progress

__all__ = [
    "SCORE_STEP",
    "StoredResult",
    "export_result",
    "failed_or_stopped",
    "frame_from_payload",
    "frame_payload",
    "load_result",
    "plain",
    "result_from_payload",
    "result_to_payload",
    "run_choices",
]

SCORE_STEP = "score"


def plain(value: Any) -> Any:
    """A cell as JSON: numpy scalars as Python numbers, NaN / NA / NaT and infinities as None."""
    if is_missing(value):
        return None
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (str, bytes)):
        try:
            value = item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def frame_payload(frame: pd.DataFrame) -> dict[str, Any]:
    """A table as JSON for the project file (its columns, their types and its rows)."""
    return {
        "columns": [str(c) for c in frame.columns],
        "dtypes": {str(c): str(t) for c, t in frame.dtypes.items()},
        "rows": [[plain(v) for v in row] for row in frame.itertuples(index=False, name=None)],
    }


def frame_from_payload(payload: dict[str, Any]) -> pd.DataFrame:
    """The table :func:`frame_payload` kept (its whole-number and yes/no columns typed back)."""
    columns = payload.get("columns", [])
    frame = pd.DataFrame(payload.get("rows", []), columns=columns)
    for column, dtype in (payload.get("dtypes") or {}).items():
        if column not in frame.columns:
            continue
        try:
            if dtype in ("Int64", "int64") and frame[column].isna().any():
                frame[column] = frame[column].astype("Int64")
            elif dtype in ("int64", "Int64", "bool", "float64"):
                frame[column] = frame[column].astype(dtype)
        except (TypeError, ValueError):
            pass
    return frame


_FRAMES = ("workers", "responses", "questions", "llm_answers", "llm_summary", "convergence",
           "agreement")


def result_to_payload(result: AqerResult) -> dict[str, Any]:
    """An :class:`AqerResult` as JSON for the project file."""
    payload: dict[str, Any] = {name: frame_payload(getattr(result, name)) for name in _FRAMES}
    payload["warnings"] = [n.model_dump(mode="json") for n in result.warnings]
    payload["settings"] = result.settings.model_dump(mode="json")
    for name in ("iterations", "converged", "discriminates", "embedding_model", "device",
                 "blank_rule", "blank_reason", "computed_at"):
        payload[name] = getattr(result, name)
    return payload


def result_from_payload(payload: dict[str, Any]) -> AqerResult:
    """The :class:`AqerResult` :func:`result_to_payload` kept."""
    return AqerResult(
        **{name: frame_from_payload(payload[name]) for name in _FRAMES},
        warnings=[AqerNotice.model_validate(n) for n in payload.get("warnings", [])],
        settings=AqerSettings.model_validate(payload.get("settings") or {}),
        iterations=int(payload.get("iterations", 0)),
        converged=bool(payload.get("converged", False)),
        discriminates=bool(payload.get("discriminates", True)),
        embedding_model=str(payload.get("embedding_model", "")),
        device=str(payload.get("device", "")),
        blank_rule="worst" if payload.get("blank_rule") == "worst" else "missing",
        blank_reason=str(payload.get("blank_reason", "")),
        computed_at=str(payload.get("computed_at", "")),
    )


@dataclass
class StoredResult:
    """An AQER result as kept in the project, with the Read me inputs and where it came from."""

    result: AqerResult
    inputs: dict[str, str]
    run_id: int
    finished_at: str = ""
    embedded: int = 0
    """How many texts the embedding model embedded in this run (0 = all from the cache)."""


def load_result(project: Project, choices: AqerChoices) -> StoredResult | None:
    """The finished result for exactly these choices, or None (then it must be computed)."""
    if not choices.content_hash:
        return None
    run = project.find_run(METHOD, SCORE_STEP, choices.fingerprint())
    if run is None or run.status != "finished":
        return None
    items = project.get_results(run.id, "result", status="ok")
    if not items or not isinstance(items[-1].payload, dict):
        return None
    payload = items[-1].payload
    try:
        result = result_from_payload(payload["result"])
    except (KeyError, ValueError, TypeError, ValidationError):
        return None
    return StoredResult(result, dict(payload.get("inputs") or {}), run.id,
                        run.finished_at or "")


@contextmanager
def failed_or_stopped(project: Project, run_id: int, stopped: str) -> Iterator[None]:
    """Around a run's work: a stop marks the run cancelled (``stopped`` says what was kept),
    an error marks it failed with the message; both pass on to the caller."""
    try:
        yield
    except Cancelled:
        project.finish_run(run_id, "cancelled", stopped)
        raise
    except Exception as exc:
        project.finish_run(run_id, "failed", str(exc)[:500])
        raise


def run_choices(
    project: Project,
    choices: AqerChoices,
    encoder_factory: EncoderFactory | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> StoredResult:
    """Read the answers, run AQER (embeddings from the project's cache when known) and store
    the result in the project. A plain function: run it in an executor."""
    if progress is not None:
        progress.start("Reading answers")
    path, note = answers_file(project, choices)
    run_id = project.start_run(METHOD, SCORE_STEP, choices.fingerprint(), resume=True)
    with failed_or_stopped(project, run_id, "Stopped by the user; embeddings were kept."):
        prepared = read_prepared(project, choices, path)
        if cancel is not None:
            cancel.raise_if_cancelled()
        encoder = cached_encoder(project, choices, encoder_factory or default_encoder_factory,
                                 progress, cancel)
        result = aqer(prepared, encoder, settings=choices.settings, progress=progress,
                      cancel=cancel)
        if not encoder.embedded:  # the model never ran: no device to name but this
            result = result.model_copy(update={"device": CACHED_DEVICE})
        inputs = choices.describe_inputs(
            prepared, absent_scored=result.blank_rule == "worst" and choices.settings.keep_absent)
        if note:
            inputs["Note"] = note
        with project.transaction():
            project.put_result(run_id, "result", "aqer",
                               {"result": result_to_payload(result), "inputs": inputs})
            project.finish_run(run_id, "finished")
    run = project.get_run(run_id)
    return StoredResult(result, inputs, run_id, (run.finished_at or "") if run else "",
                        encoder.embedded)


def export_result(stored: StoredResult, path: str | Path,
                  progress: Progress | None = None, cancel: CancelToken | None = None, *,
                  others: dict[str, StoredResult] | None = None,
                  curve: WorkersCurve | None = None,
                  table: Comparison | None = None) -> Path:
    """Write the AQER workbook (the same as ``evaldesk aqer``) for a stored result: with a
    "Comparison" sheet when the answers have grades (the built-in conditions and ``others``,
    see ``core.aqer.session.conditions``) and a "Workers needed" sheet when ``curve`` is
    given."""
    if progress is not None:
        progress.start("Writing the workbook", detail=str(path))
    if table is None:  # ``table``: the Comparison of exactly these results, already computed
        table = comparison_table(stored.result,
                                 {k: v.result for k, v in (others or {}).items()})
    return write_report(stored.result, path, inputs=stored.inputs, comparison=table,
                        curve=curve)


