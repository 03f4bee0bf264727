"""AQER in a project: the only code that touches the project for AQER. The wizard and
``evaldesk aqer`` both go through it (the CLI in a temporary project when there is no
``--project``), so they read, check, cache, score and export the same way:

    setup, problem = restore_setup(project)           # the choices kept in the project
    setup = store_answers_file(project, setup, path)  # a file chosen now: copied into the project
    opened = open_answers(project, setup)             # the sheet as text (+ a note for the user)
    setup = guess_columns(opened.setup, opened.read.frame.columns)   # core.aqer.inputs
    save_setup(project, setup)                        # saved as soon as it is chosen
    check = check_answers(opened.read, setup)         # issues for the user; errors block
    stored = run_setup(project, setup, factory, progress, cancel)   # in an executor
    stored = load_result(project, setup)              # reopening: no recomputation
    others = run_conditions(project, setup, factory)  # setup.conditions (other model / blank rule)
    table = comparison(project, setup, stored)        # core.aqer.comparison.Comparison
    curve = run_workers_curve(project, setup, factory, progress, cancel)  # "how many workers?"
    export_result(stored, "results.xlsx", others=load_conditions(project, setup),
                  curve=load_workers_curve(project, setup))   # the workbook

What depends on what:

* the answers file is copied into the project (``core.project.inputs``, kind ``aqer_answers``)
  and identified by the hash of its bytes: changing the file changes the hash, so results are
  recomputed; a file that moved or was deleted is read from the project's copy;
* embeddings are cached per (embedding model, text) in the project
  (:class:`core.embeddings.CachedEncoder`, a run of step ``embeddings`` per model), so changing
  the number of rounds, the layout or adding a worker embeds only texts never seen before (and
  does not even load the model when every text is known);
* a finished AQER result is stored under a run whose settings are the :meth:`AqerSetup.
  fingerprint` (file hash, sheet, layout, columns, duplicates choice, model, AQER settings);
  :func:`load_result` finds it again when nothing it depends on changed;
* the conditions AQER, simplified AQER, RASA, F1 and BLEU-1 are columns of every result; another
  embedding model or blank-answer rule (``setup.conditions``) is a setup of its own, stored
  under its own fingerprint like any result, so an unchanged condition is found again
  (:func:`load_conditions`) and a re-run embeds only texts its model never saw;
* the workers curve is stored under a run of step ``workers_curve`` whose settings are the
  fingerprint plus the repetitions and seed;
* the choices are a versioned payload (:data:`SETUP`); choices that cannot be read are set
  aside in the project and :func:`restore_setup` says so, never silently replacing them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from core.aqer.inputs import read_answers
from core.aqer.model import BACKEND_NAMES, AqerCondition, AqerSetup, embedding_model_name
from core.embeddings import CachedEncoder, model_key
from core.paths import temp_file_beside
from core.project.inputs import open_input, store_input
from core.project.payloads import PayloadType, get_payload, load_or_recover, put_payload
from core.runs import Cancelled, CancelToken, Progress
from core.tables import is_missing

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from core.aqer.comparison import Comparison, WorkersCurve
    from core.aqer.model import AqerResult
    from core.aqer.responses import PreparedResponses
    from core.project import Project
    from core.tables import TableRead

__all__ = [
    "ANSWERS_INPUT_KIND",
    "SETUP",
    "SETUP_KIND",
    "AqerSetup",
    "EncoderFactory",
    "OpenedAnswers",
    "StoredResult",
    "answers_file",
    "cached_encoder",
    "choose_condition",
    "comparison",
    "condition_setups",
    "copy_template",
    "default_encoder_factory",
    "embedding_choices",
    "embedding_key",
    "export_result",
    "file_grades",
    "grades_path",
    "judge_to_check",
    "judges_to_compare",
    "load_conditions",
    "load_result",
    "load_setup",
    "load_workers_curve",
    "open_answers",
    "restore_setup",
    "result_from_payload",
    "result_to_payload",
    "run_conditions",
    "run_setup",
    "run_workers_curve",
    "sample_path",
    "save_setup",
    "store_answers_file",
    "store_grades_file",
]

METHOD = "aqer"
SETUP_KIND = "aqer_setup"
ANSWERS_INPUT_KIND = "aqer_answers"
GRADES_INPUT_KIND = "aqer_grades"
SCORE_STEP = "score"
EMBED_STEP = "embeddings"
CURVE_STEP = "workers_curve"

#: The user's choices, as kept in the project (version 1: the shape before versions were kept).
SETUP: PayloadType[AqerSetup] = PayloadType(
    SETUP_KIND, AqerSetup, version=1,
    label="the AQER choices (answers file, columns, embedding model and settings)",
)

#: The device of a run whose every vector came from the project's cache (the model never ran).
CACHED_DEVICE = "none (every answer's vector was already in the project)"

#: ``factory(model_path, device)`` -> an encoder (``encoder(texts)`` returns one vector per text).
EncoderFactory = Callable[[str, str], Any]

#: How cached embeddings name a model (kept under its old name).
embedding_key = model_key


# ----------------------------------------------------------------------------- the setup


def load_setup(project: Project) -> AqerSetup:
    """The setup saved in ``project`` (defaults when there is none). Raises
    :class:`core.project.PayloadUnreadable` when it cannot be read (see :func:`restore_setup`)."""
    return get_payload(project, SETUP, "current") or AqerSetup()


def restore_setup(project: Project) -> tuple[AqerSetup, str]:
    """The setup saved in ``project`` and a message for the user ("" when all is well). Choices
    that cannot be read are kept aside in the project and the setup starts afresh."""
    return load_or_recover(project, SETUP, "current", AqerSetup)


def save_setup(project: Project, setup: AqerSetup) -> None:
    """Store the user's choices now (called whenever one changes)."""
    put_payload(project, SETUP, "current", setup, origin="human")


# ----------------------------------------------------------------------------- the answers file


def store_answers_file(project: Project, setup: AqerSetup, path: str | Path) -> AqerSetup:
    """Copy ``path`` into the project and return ``setup`` pointing at it (not yet saved).

    A new file (or changed content) resets what depended on the old one: the sheet when the
    file changed, and the duplicates choice.
    """
    path = Path(path)
    ref = store_input(project, ANSWERS_INPUT_KIND, path)
    same_file = setup.path and Path(setup.path) == path
    update: dict[str, Any] = {
        "path": ref.path,
        "file_name": ref.file_name,
        "content_hash": ref.content_hash,
        "input_id": ref.input_id,
    }
    if not same_file:
        update["sheet"] = None
        update["header_row"] = None
    if ref.content_hash != setup.content_hash:
        update["duplicates"] = "error"
    return setup.model_copy(update=update)


def answers_file(project: Project, setup: AqerSetup) -> tuple[Path, str]:
    """The file to read for ``setup`` and a note for the user ("" when all is as chosen): the
    user's file when it is still there, else the project's copy (``core.project.inputs``)."""
    opened = open_input(project, ANSWERS_INPUT_KIND, setup.answers_ref)
    if opened.changed:
        raise ValueError(
            f"The answers file {opened.path} changed since its columns were checked. Go back to "
            "the first page and choose it again so EvalDesk reads the new version."
        )
    return opened.path, opened.note


def store_grades_file(project: Project, setup: AqerSetup, path: str | Path | None,
                      sheet: str | None = None) -> AqerSetup:
    """A file of its own with one grade per person (None: no such file), copied into the
    project like the answers; ``sheet`` is its sheet (None = the first)."""
    if path is None:
        return setup.model_copy(update={"grades_file": None, "grades_sheet": None})
    ref = store_input(project, GRADES_INPUT_KIND, Path(path))
    return setup.model_copy(update={"grades_file": ref, "grades_sheet": sheet,
                                    "grades_name_col": None, "grades_value_col": None,
                                    "grade_col": None})


def grades_path(project: Project, setup: AqerSetup) -> Path | None:
    """Where to read ``setup.grades_file`` (the user's file, else the project's copy)."""
    if setup.grades_file is None:
        return None
    opened = open_input(project, GRADES_INPUT_KIND, setup.grades_file)
    if opened.changed:
        raise ValueError(
            f"The grades file {opened.path} changed since it was chosen. Choose it again on the "
            "Columns page (or give it again) so EvalDesk reads the new version."
        )
    return opened.path


@dataclass
class OpenedAnswers:
    """The answers file as :func:`open_answers` found it."""

    setup: AqerSetup
    sheets: list[str]
    read: TableRead
    note: str = ""
    #: the sheets Excel does not show: name -> "hidden" or "very hidden"
    hidden: dict[str, str] = field(default_factory=dict)


def open_answers(
    project: Project,
    setup: AqerSetup,
    path: str | Path | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> OpenedAnswers:
    """Read the answers of ``setup`` (or a newly chosen ``path``), keeping a copy in the project.

    A file that changed since it was last read is copied again (so results are recomputed); a
    file that is gone is read from the project's copy. Returns the updated setup (not saved).
    """
    if path is not None:
        setup = store_answers_file(project, setup, path)
    opened = open_input(project, ANSWERS_INPUT_KIND, setup.answers_ref)
    if opened.changed:
        setup = store_answers_file(project, setup, opened.path)
    from core.tables import sheet_states

    sheets, read = read_answers(opened.path, setup.sheet, progress, cancel, setup.header_row)
    setup = setup.model_copy(update={"sheet": read.sheet})
    return OpenedAnswers(setup, sheets, read, opened.note, sheet_states(opened.path))


# ----------------------------------------------------------------------------- embeddings


def default_encoder_factory(model_path: str, device: str, backend: str = "auto") -> Any:
    """The real encoder: :class:`core.embeddings.Encoder` (bundled MiniLM when path is ""). A
    forced ``backend`` that cannot run the model is an error, never a silent other backend."""
    from core.embeddings import EmbeddingError, Encoder

    if backend == "auto":
        return Encoder(model_path, device=device)
    encoder = Encoder(model_path, device="cpu" if backend == "onnx" else device,
                      backend=backend)
    if encoder.backend != backend:
        raise EmbeddingError(
            f"The model cannot run through {BACKEND_NAMES.get(backend, backend)} here"
            + (f" ({encoder.fallback_reason})" if encoder.fallback_reason else "")
            + ". Remove that condition, or choose another model.")
    return encoder


def cached_encoder(project: Project, setup: AqerSetup, factory: EncoderFactory | None = None,
                   progress: Progress | None = None,
                   cancel: CancelToken | None = None) -> CachedEncoder:
    """The encoder of ``setup`` behind the project's vector cache (the model is loaded only
    when a text is not cached yet). A forced backend (``setup.embedding_backend``) has vectors
    of its own in the cache, and is passed to ``factory`` as ``backend=``."""
    factory = factory or default_encoder_factory
    key = setup.embedding_key()
    backend = setup.embedding_backend
    name = (Path(setup.embedding_model).name if setup.embedding_model
            else model_key("").removeprefix("built-in "))
    if backend != "auto":
        name += f" through {BACKEND_NAMES[backend]}"

    def make() -> Any:
        if backend == "auto":
            return factory(setup.embedding_model, setup.device)
        inner = factory(setup.embedding_model, setup.device, backend=backend)  # type: ignore[call-arg]
        return _Named(inner, f" through {BACKEND_NAMES[backend]}")

    return CachedEncoder(
        project,
        key,
        make,
        cancel=cancel,
        model_name=name,
        device=setup.device,
        progress=progress,
        owner=METHOD,
        step=EMBED_STEP,
    )


class _Named:
    """An encoder whose ``model_name`` also says the backend it was forced through (the
    results name it so)."""

    def __init__(self, inner: Any, suffix: str) -> None:
        self._inner = inner
        self.model_name = f"{getattr(inner, 'model_name', '') or 'the model'}{suffix}"

    def __call__(self, texts: list[str]) -> Any:
        return self._inner(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def embedding_choices(setup: AqerSetup) -> list[AqerCondition]:
    """The other ways to embed that this computer has, as conditions to compare with
    ``setup``: the built-in all-MiniLM-L6-v2 through PyTorch and through ONNX Runtime (the one
    ``setup`` already uses is left out; "auto" runs ONNX Runtime on the CPU). Any
    sentence-transformers folder is a condition too (``AqerCondition(embedding_model=path)``)."""
    from core.embeddings import resolve_device

    if setup.embedding_backend != "auto":
        current = setup.embedding_backend
    else:
        try:
            current = "onnx" if resolve_device(setup.device) == "cpu" else "torch"
        except Exception:  # noqa: BLE001 - a device that is not there: offer both
            current = ""
    out = []
    for backend in ("torch", "onnx"):
        if setup.embedding_model or backend != current:
            out.append(AqerCondition(embedding_model="", embedding_backend=backend))  # type: ignore[arg-type]
    return out


# ----------------------------------------------------------------------------- results


def _plain(value: Any) -> Any:
    """A cell as JSON: numpy scalars as Python numbers, NaN / NA / NaT and infinities as None."""
    import math

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


def _frame_payload(frame: pd.DataFrame) -> dict[str, Any]:
    return {
        "columns": [str(c) for c in frame.columns],
        "dtypes": {str(c): str(t) for c, t in frame.dtypes.items()},
        "rows": [[_plain(v) for v in row] for row in frame.itertuples(index=False, name=None)],
    }


def _frame(payload: dict[str, Any]) -> pd.DataFrame:
    import pandas as pd

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
    payload: dict[str, Any] = {name: _frame_payload(getattr(result, name)) for name in _FRAMES}
    payload["warnings"] = [n.model_dump(mode="json") for n in result.warnings]
    payload["settings"] = result.settings.model_dump(mode="json")
    for name in ("iterations", "converged", "discriminates", "embedding_model", "device",
                 "blank_rule", "blank_reason", "computed_at"):
        payload[name] = getattr(result, name)
    return payload


def result_from_payload(payload: dict[str, Any]) -> AqerResult:
    from core.aqer.model import AqerNotice, AqerResult, AqerSettings

    return AqerResult(
        **{name: _frame(payload[name]) for name in _FRAMES},
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


def load_result(project: Project, setup: AqerSetup) -> StoredResult | None:
    """The finished result for exactly this setup, or None (then it must be computed)."""
    if not setup.content_hash:
        return None
    run = project.find_run(METHOD, SCORE_STEP, setup.fingerprint())
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
def _failed_or_stopped(project: Project, run_id: int, stopped: str) -> Iterator[None]:
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


def _read_answers(project: Project, setup: AqerSetup, path: str | Path) -> PreparedResponses:
    """The answers file at ``path`` read and checked as ``setup`` says."""
    from core.aqer.inputs import read_responses

    return read_responses(
        path, sheet=setup.sheet, header_row=setup.header_row, format=setup.format,
        duplicates=setup.duplicates,
        **setup.engine_columns(), **setup.grades_columns(),
        grades_path=grades_path(project, setup),
    )


def run_setup(
    project: Project,
    setup: AqerSetup,
    encoder_factory: EncoderFactory | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> StoredResult:
    """Read the answers, run AQER (embeddings from the project's cache when known) and store
    the result in the project. A plain function: run it in an executor."""
    from core.aqer.pipeline import aqer

    if progress is not None:
        progress.start("Reading answers")
    path, note = answers_file(project, setup)
    run_id = project.start_run(METHOD, SCORE_STEP, setup.fingerprint(), resume=True)
    with _failed_or_stopped(project, run_id, "Stopped by the user; embeddings were kept."):
        prepared = _read_answers(project, setup, path)
        if cancel is not None:
            cancel.raise_if_cancelled()
        encoder = cached_encoder(project, setup, encoder_factory, progress, cancel)
        result = aqer(prepared, encoder, settings=setup.settings, progress=progress,
                      cancel=cancel)
        if not encoder.embedded:  # the model never ran: no device to name but this
            result = result.model_copy(update={"device": CACHED_DEVICE})
        inputs = setup.describe_inputs(
            prepared, absent_scored=result.blank_rule == "worst" and setup.settings.keep_absent)
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
    see :func:`load_conditions`) and a "Workers needed" sheet when ``curve`` is given."""
    from core.aqer.comparison import comparison_table
    from core.aqer.report import write_report

    if progress is not None:
        progress.start("Writing the workbook", detail=str(path))
    if table is None:  # ``table``: the Comparison of exactly these results, already computed
        table = comparison_table(stored.result,
                                 {k: v.result for k, v in (others or {}).items()})
    return write_report(stored.result, path, inputs=stored.inputs, comparison=table,
                        curve=curve)


# ----------------------------------------------------------------------------- conditions


def condition_setups(setup: AqerSetup) -> dict[str, AqerSetup]:
    """The setups of ``setup.conditions`` by their names (a condition equal to the setup
    itself is left out: AQER is already the default condition)."""
    out: dict[str, AqerSetup] = {}
    for condition in setup.conditions:
        other = condition.apply(setup)
        if other.fingerprint() != setup.fingerprint():
            out.setdefault(condition.label(), other)
    return out


def load_conditions(project: Project, setup: AqerSetup) -> dict[str, StoredResult]:
    """The stored results of ``setup.conditions`` (those computed so far; nothing is run)."""
    out = {}
    for name, other in condition_setups(setup).items():
        stored = load_result(project, other)
        if stored is not None:
            out[name] = stored
    return out


def run_conditions(project: Project, setup: AqerSetup,
                   encoder_factory: EncoderFactory | None = None,
                   progress: Progress | None = None,
                   cancel: CancelToken | None = None) -> dict[str, StoredResult]:
    """Compute the conditions of ``setup.conditions`` that are not in the project yet (an
    unchanged condition is read back, with no work); returns all of them by name."""
    out = {}
    for name, other in condition_setups(setup).items():
        stored = load_result(project, other)
        if stored is None:
            if progress is not None:
                progress.start(f"Condition: {name}")
            stored = run_setup(project, other, encoder_factory, progress, cancel)
        out[name] = stored
    return out


def comparison(project: Project, setup: AqerSetup, stored: StoredResult) -> Comparison:
    """The Comparison table of ``stored`` (the default condition) and the conditions of
    ``setup`` computed so far."""
    from core.aqer.comparison import comparison_table

    others = load_conditions(project, setup)
    return comparison_table(stored.result, {k: v.result for k, v in others.items()})


# ----------------------------------------------------------------------------- check the judge
def judge_to_check(project: Project, setup: AqerSetup) -> tuple[Any, str]:
    """AQER's scores of the AI answers of the current result, as the judge a person checks
    (:mod:`core.aqer.judge_check`); (None, why) when there is nothing to grade."""
    from core.aqer.judge_check import judge_data

    stored = load_result(project, setup) if setup.content_hash else None
    if stored is None:
        return None, ("There are no AQER results for the current choices yet: run AQER "
                      "first.")
    judge = judge_data(stored)
    if not judge.items:
        from core.aqer.llm_answers import where_ai_answers_go

        layout = str(stored.inputs.get("Layout", ""))
        return None, ("These answers have no AI answers to grade (or the AI answers were "
                      "scored as extra workers). To check how well AQER's scores agree with "
                      f"your own grades, {where_ai_answers_go(layout)}, then run AQER again.")
    return judge, ""


def judges_to_compare(project: Project, setup: AqerSetup) -> list[tuple[str, str, Any]]:
    """The current result and each condition computed so far (another embedding model or
    blank-answer rule) as ``(name, key, judge)`` for :func:`core.judge_check.rank_judges`;
    ``key`` is "" for the current choices, else the condition's name (see
    :func:`choose_condition`)."""
    from core.aqer.judge_check import judge_data

    stored = load_result(project, setup) if setup.content_hash else None
    if stored is None:
        return []
    current = f"AQER as set up (model {embedding_model_name(setup.embedding_model)})"
    out = [(current, "", judge_data(stored))]
    for name, other in load_conditions(project, setup).items():
        out.append((name, name, judge_data(other)))
    return out


def file_grades(project: Project, setup: AqerSetup, judge: Any) -> tuple[list[Any], list[str]]:
    """The grades the answers file gives the AI answers of ``judge`` (from
    :func:`judge_to_check`), as the ratings of one rater named after the file, so that the
    report compares AQER with them without grading again; and what was left out, in words
    (a grade that is not a number, or outside the grading scale)."""
    from core.aqer.judge_check import DIMENSION, item_id
    from core.judge_check import Rating
    from core.tables import cell_number

    path, _ = answers_file(project, setup)
    prepared = _read_answers(project, setup, path)
    frame = prepared.frame
    ai = frame[frame["is_llm"]] if "grade" in frame else frame.iloc[0:0]
    stored = load_result(project, setup)
    order = list(stored.result.questions.get("question", [])) if stored is not None else []
    numbers = {str(q): k for k, q in enumerate(order, start=1)}
    rater = f"Grades in {setup.file_name or Path(path).name}"
    low, high = judge.scale
    ratings, notes = [], []
    for _, row in ai.iterrows():
        raw = row.get("grade")
        if raw is None or not str(raw).strip():
            continue
        number = numbers.get(str(row["question"]))
        wanted = item_id(str(row["model"]), number, str(row["question"]),
                         str(row["response"])) if number is not None else ""
        if judge.item(wanted) is None:
            continue
        value = cell_number(raw)
        where = f"the grade of {wanted}"
        if value is None:
            notes.append(f"{where} (“{raw}”) is not a number; left out.")
        elif not low <= value <= high:
            notes.append(f"{where} ({value:g}) is outside the scale {low} to {high}; left out.")
        else:
            ratings.append(Rating(wanted, rater, {DIMENSION: float(value)}))
    return ratings, notes


def choose_condition(setup: AqerSetup, key: str) -> tuple[AqerSetup, str]:
    """``setup`` with the condition named ``key`` as its own choices (the embedding model
    and blank-answer rule the project then runs with), the choices it had kept as a
    condition so that they are still compared; and what was done, in words."""
    from core.aqer.model import AqerCondition

    if not key:
        return setup, "AQER as set up is already the project's choice; nothing changed."
    found = next((c for c in setup.conditions if c.label() == key), None)
    if found is None:
        return setup, f"“{key}” is not among this project's conditions any more."
    chosen = found.apply(setup)
    before = AqerCondition(
        embedding_model=setup.embedding_model if found.embedding_model is not None else None,
        embedding_backend=(setup.embedding_backend if found.embedding_backend is not None
                           else None),
        blank_answers=(setup.settings.blank_answers if found.blank_answers is not None
                       else None))
    conditions = [c for c in setup.conditions if c != found]
    if before not in conditions:
        conditions.append(before)
    chosen = chosen.model_copy(update={"conditions": conditions})
    return chosen, (f"The project now scores with the choices of {key}. The earlier "
                    "choices stay as a condition to compare with. Its results are stored, so "
                    "the Results page shows them without running again.")


# ----------------------------------------------------------------------------- workers curve


def _curve_settings(setup: AqerSetup, repetitions: int, seed: int,
                    sizes: list[int] | None) -> dict[str, Any]:
    return {**setup.fingerprint(),
            "curve": {"repetitions": repetitions, "seed": seed, "sizes": sizes}}


def _curve_payload(curve: WorkersCurve) -> dict[str, Any]:
    return {
        "frame": _frame_payload(curve.frame),
        "values": {str(k): [_plain(v) for v in vs] for k, vs in curve.values.items()},
        **{name: getattr(curve, name) for name in ("against", "statistic", "repetitions",
                                                   "seed", "total_workers", "embedding_model",
                                                   "note")},
    }


def _curve_from_payload(payload: dict[str, Any]) -> WorkersCurve:
    from core.aqer.comparison import WorkersCurve

    return WorkersCurve(
        _frame(payload["frame"]),
        against=str(payload["against"]), statistic=str(payload["statistic"]),
        repetitions=int(payload["repetitions"]), seed=int(payload["seed"]),
        total_workers=int(payload["total_workers"]),
        values={int(k): [float("nan") if v is None else float(v) for v in vs]
                for k, vs in (payload.get("values") or {}).items()},
        embedding_model=str(payload.get("embedding_model", "")),
        note=str(payload.get("note", "")),
    )


def load_workers_curve(project: Project, setup: AqerSetup, repetitions: int = 25,
                       seed: int = 0, sizes: list[int] | None = None) -> WorkersCurve | None:
    """The stored workers curve for exactly this setup, or None."""
    if not setup.content_hash:
        return None
    run = project.find_run(METHOD, CURVE_STEP, _curve_settings(setup, repetitions, seed, sizes))
    if run is None or run.status != "finished":
        return None
    items = project.get_results(run.id, "curve", status="ok")
    if not items or not isinstance(items[-1].payload, dict):
        return None
    try:
        return _curve_from_payload(items[-1].payload)
    except (KeyError, ValueError, TypeError):
        return None


def run_workers_curve(project: Project, setup: AqerSetup,
                      encoder_factory: EncoderFactory | None = None,
                      progress: Progress | None = None, cancel: CancelToken | None = None,
                      *, repetitions: int = 25, seed: int = 0,
                      sizes: list[int] | None = None) -> WorkersCurve:
    """"How many workers do I need?" (``core.aqer.comparison.workers_curve``) for ``setup``,
    stored in the project (the full-panel result is computed first when it is missing)."""
    from core.aqer.comparison import workers_curve

    stored = load_result(project, setup) or run_setup(project, setup, encoder_factory,
                                                      progress, cancel)
    path, _note = answers_file(project, setup)
    run_id = project.start_run(METHOD, CURVE_STEP, _curve_settings(setup, repetitions, seed, sizes),
                               resume=True)
    with _failed_or_stopped(project, run_id, "Stopped by the user."):
        prepared = _read_answers(project, setup, path)
        encoder = cached_encoder(project, setup, encoder_factory, progress, cancel)
        curve = workers_curve(prepared, encoder, stored.result, repetitions=repetitions,
                              seed=seed, sizes=sizes, progress=progress, cancel=cancel)
        with project.transaction():
            project.put_result(run_id, "curve", "aqer", _curve_payload(curve))
            project.finish_run(run_id, "finished")
    return curve


def copy_template(target: str | Path) -> Path:
    """Copy the example workbook shipped with EvalDesk to ``target``."""
    from core import paths
    from core.tables import TableError

    source = paths.resources_dir() / "samples" / "aqer_template.xlsx"
    target = Path(target)
    problem = paths.file_name_problem(target.name)
    if problem is not None:  # refused before anything is written
        raise TableError(problem, target)
    # a copy beside it, then renamed: the workbook is never seen half-written
    part = temp_file_beside(target, prefix="~evaldesk-", suffix=".xlsx.tmp")
    try:
        shutil.copyfile(source, part)
        os.replace(part, target)
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise
    return target


def sample_path() -> Path:
    """The small sample answers shipped with EvalDesk."""
    from core import paths

    return paths.resources_dir() / "samples" / "aqer_sample.xlsx"
