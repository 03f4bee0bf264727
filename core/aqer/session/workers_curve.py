""""How many workers do I need?" in the project: the curve of a project's choices is stored
under a run of step ``workers_curve`` whose settings are the choices' fingerprint plus the
repetitions and seed, and found again when none of them changed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.aqer.comparison import WorkersCurve, workers_curve
from core.aqer.model import AqerChoices
from core.aqer.session.choices import METHOD, answers_file, read_prepared
from core.aqer.session.encoders import EncoderFactory, cached_encoder, default_encoder_factory
from core.aqer.session.results import (
    failed_or_stopped,
    frame_from_payload,
    frame_payload,
    load_result,
    plain,
    run_choices,
)

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.runs import CancelToken, Progress

__all__ = ["CURVE_STEP", "load_workers_curve", "run_workers_curve"]

CURVE_STEP = "workers_curve"


def _curve_settings(choices: AqerChoices, repetitions: int, seed: int,
                    sizes: list[int] | None) -> dict[str, Any]:
    return {**choices.fingerprint(),
            "curve": {"repetitions": repetitions, "seed": seed, "sizes": sizes}}


def _curve_payload(curve: WorkersCurve) -> dict[str, Any]:
    return {
        "frame": frame_payload(curve.frame),
        "values": {str(k): [plain(v) for v in vs] for k, vs in curve.values.items()},
        **{name: getattr(curve, name) for name in ("against", "statistic", "repetitions",
                                                   "seed", "total_workers", "embedding_model",
                                                   "note")},
    }


def _curve_from_payload(payload: dict[str, Any]) -> WorkersCurve:
    return WorkersCurve(
        frame_from_payload(payload["frame"]),
        against=str(payload["against"]), statistic=str(payload["statistic"]),
        repetitions=int(payload["repetitions"]), seed=int(payload["seed"]),
        total_workers=int(payload["total_workers"]),
        values={int(k): [float("nan") if v is None else float(v) for v in vs]
                for k, vs in (payload.get("values") or {}).items()},
        embedding_model=str(payload.get("embedding_model", "")),
        note=str(payload.get("note", "")),
    )


def load_workers_curve(project: Project, choices: AqerChoices, repetitions: int = 25,
                       seed: int = 0, sizes: list[int] | None = None) -> WorkersCurve | None:
    """The stored workers curve for exactly these choices, or None."""
    if not choices.content_hash:
        return None
    run = project.find_run(METHOD, CURVE_STEP,
                           _curve_settings(choices, repetitions, seed, sizes))
    if run is None or run.status != "finished":
        return None
    items = project.get_results(run.id, "curve", status="ok")
    if not items or not isinstance(items[-1].payload, dict):
        return None
    try:
        return _curve_from_payload(items[-1].payload)
    except (KeyError, ValueError, TypeError):
        return None


def run_workers_curve(project: Project, choices: AqerChoices,
                      encoder_factory: EncoderFactory | None = None,
                      progress: Progress | None = None, cancel: CancelToken | None = None,
                      *, repetitions: int = 25, seed: int = 0,
                      sizes: list[int] | None = None) -> WorkersCurve:
    """"How many workers do I need?" (``core.aqer.comparison.workers_curve``) for
    ``choices``, stored in the project (the full-panel result is computed first when it is
    missing). A plain function: run it in an executor."""
    stored = load_result(project, choices) or run_choices(project, choices, encoder_factory,
                                                          progress, cancel)
    path, _note = answers_file(project, choices)
    run_id = project.start_run(METHOD, CURVE_STEP,
                               _curve_settings(choices, repetitions, seed, sizes), resume=True)
    with failed_or_stopped(project, run_id, "Stopped by the user."):
        prepared = read_prepared(project, choices, path)
        encoder = cached_encoder(project, choices, encoder_factory or default_encoder_factory,
                                 progress, cancel)
        curve = workers_curve(prepared, encoder, stored.result, repetitions=repetitions,
                              seed=seed, sizes=sizes, progress=progress, cancel=cancel)
        with project.transaction():
            project.put_result(run_id, "curve", "aqer", _curve_payload(curve))
            project.finish_run(run_id, "finished")
    return curve
