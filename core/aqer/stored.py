"""AQER inputs and results kept in the project file, so nothing the user did is lost.

The wizard (and anything else that wants to resume AQER) works through this module:

    setup = load_setup(project)                       # the file, sheet, layout, columns, model,
    setup = setup.model_copy(update={"sheet": "Wide"})  # settings the user chose (or defaults)
    save_setup(project, setup)                        # saved as soon as it is chosen
    read = read_answers(setup.path, setup.sheet)      # the sheet as text (core.tables)
    check = check_answers(read, setup)                # issues for the user; errors block
    stored = run_setup(project, setup, factory, progress, cancel)   # in an executor
    stored = load_result(project, setup)              # reopening: no recomputation

What depends on what:

* the answers file is copied into the project (``inputs``, kind ``aqer_answers``) and identified
  by the hash of its bytes: changing the file changes the hash, so results are recomputed; a
  file that moved or was deleted is read from the project's copy;
* embeddings are cached per (embedding model, text) in the project (a run of step
  ``embeddings`` per model, one result per text), so changing the number of rounds, the layout
  or adding a worker embeds only texts never seen before (and does not even load the model
  when every text is known);
* a finished AQER result is stored under a run whose settings are the :meth:`AqerSetup.
  fingerprint` (file hash, sheet, layout, columns, duplicates choice, model, AQER settings);
  :func:`load_result` finds it again when nothing it depends on changed.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from core.aqer.model import AqerSettings
from core.runs import Cancelled, CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pandas as pd

    from core.aqer.blanks import BlankRule
    from core.aqer.model import AqerResult
    from core.aqer.responses import PreparedResponses
    from core.project import Project
    from core.tables import TableIssue, TableRead

__all__ = [
    "ANSWERS_INPUT_KIND",
    "SETUP_KIND",
    "AnswersCheck",
    "AqerSetup",
    "CachedEncoder",
    "EncoderFactory",
    "StoredResult",
    "answers_file",
    "check_answers",
    "copy_template",
    "default_encoder_factory",
    "embedding_key",
    "export_result",
    "load_result",
    "load_setup",
    "open_answers",
    "read_answers",
    "result_from_payload",
    "result_to_payload",
    "run_setup",
    "sample_path",
    "save_setup",
    "store_answers_file",
]

METHOD = "aqer"
SETUP_KIND = "aqer_setup"
ANSWERS_INPUT_KIND = "aqer_answers"
SCORE_STEP = "score"
EMBED_STEP = "embeddings"
#: Texts embedded (and committed to the project) per call of the underlying encoder.
EMBED_BATCH = 64

#: ``factory(model_path, device)`` -> an encoder (``encoder(texts)`` returns one vector per text).
EncoderFactory = Callable[[str, str], Any]


class AqerSetup(BaseModel):
    """Everything the user chose in the AQER wizard (stored as the ``aqer_setup`` artefact)."""

    path: str = ""
    """Where the answers file was when it was chosen ("" = none yet)."""
    file_name: str = ""
    content_hash: str = ""
    """sha256 of the file's bytes when it was last read (its copy in the project has it too)."""
    input_id: int | None = None
    sheet: str | None = None
    format: Literal["long", "wide"] = "long"
    question_col: str | None = None
    worker_col: str | None = None
    response_col: str | None = None
    grade_col: str | None = None
    wide_rows: Literal["question", "worker"] = "question"
    """In the wide layout: a row per question (a column per worker) or a row per worker."""
    llm_cols: list[str] = Field(default_factory=list)
    llm_workers: list[str] = Field(default_factory=list)
    duplicates: Literal["error", "first", "last"] = "error"
    embedding_model: str = ""
    """A sentence-transformers folder; "" = the built-in all-MiniLM-L6-v2."""
    device: Literal["auto", "cpu", "cuda", "mps"] = "auto"
    settings: AqerSettings = Field(default_factory=AqerSettings)

    @property
    def has_file(self) -> bool:
        return bool(self.path or self.input_id)

    def engine_columns(self) -> dict[str, Any]:
        """The column options of :func:`core.aqer.prepare_responses` for this setup."""
        if self.format == "long":
            return {
                "question_col": self.question_col or None,
                "worker_col": self.worker_col or None,
                "response_col": self.response_col or None,
                "grade_col": self.grade_col or None,
                "llm_cols": list(self.llm_cols),
                "llm_workers": [],
            }
        by_question = self.wide_rows == "question"
        return {
            "question_col": (self.question_col or None) if by_question else None,
            "worker_col": None if by_question else (self.worker_col or None),
            "response_col": None,
            "grade_col": None,
            "llm_cols": list(self.llm_cols) if by_question else [],
            "llm_workers": [] if by_question else list(self.llm_workers),
        }

    def fingerprint(self) -> dict[str, Any]:
        """What an AQER result depends on (not where the file is, nor the device)."""
        return {
            "answers": self.content_hash,
            "sheet": self.sheet,
            "format": self.format,
            "columns": self.engine_columns(),
            "duplicates": self.duplicates,
            "embedding": embedding_key(self.embedding_model),
            "settings": self.settings.model_dump(mode="json"),
        }

    def describe_inputs(self, prepared: PreparedResponses | None = None) -> dict[str, str]:
        """The inputs as the workbook's Read me sheet lists them."""
        rows = {
            "Input file": self.path or self.file_name,
            "Sheet": self.sheet or "(the first sheet)",
            "Layout": (
                "long (a row per answer)"
                if self.format == "long"
                else f"wide (a row per {self.wide_rows})"
            ),
        }
        if self.content_hash:
            rows["File checksum (SHA-256)"] = self.content_hash
        if prepared is not None:
            rows["Read from"] = prepared.source
            rows["Answers"] = prepared.describe()
        if self.duplicates != "error":
            rows["Duplicate answers"] = f"kept the {self.duplicates} answer of each worker"
        return rows


# ----------------------------------------------------------------------------- the setup


def load_setup(project: Project) -> AqerSetup:
    """The setup saved in ``project`` (defaults when there is none or it cannot be read)."""
    artefact = project.get_artefact(SETUP_KIND, "current")
    if artefact is None or not isinstance(artefact.payload, dict):
        return AqerSetup()
    try:
        return AqerSetup.model_validate(artefact.payload)
    except ValidationError:
        return AqerSetup()


def save_setup(project: Project, setup: AqerSetup) -> None:
    """Store the user's choices now (called whenever one changes)."""
    current = project.get_artefact(SETUP_KIND, "current")
    payload = setup.model_dump(mode="json")
    if current is not None and current.payload == payload:
        return
    project.put_artefact(SETUP_KIND, "current", payload, origin="human")


def embedding_key(model_path: str) -> str:
    """How cached embeddings name a model: the built-in one, or a folder's full path."""
    if not model_path:
        from core.embeddings import BUNDLED_MODEL_NAME

        return f"built-in {BUNDLED_MODEL_NAME}"
    try:
        return str(Path(model_path).expanduser().resolve())
    except OSError:
        return str(model_path)


# ----------------------------------------------------------------------------- the answers file


def _hash_file(path: Path) -> tuple[bytes, str]:
    data = path.read_bytes()
    return data, hashlib.sha256(data).hexdigest()


def store_answers_file(project: Project, setup: AqerSetup, path: str | Path) -> AqerSetup:
    """Copy ``path`` into the project and return ``setup`` pointing at it (not yet saved).

    A new file (or changed content) resets what depended on the old one: the sheet when the
    file changed, and the duplicates choice.
    """
    path = Path(path)
    data, digest = _hash_file(path)
    input_id = project.add_input(ANSWERS_INPUT_KIND, path.name, data)
    same_file = setup.path and Path(setup.path) == path
    update: dict[str, Any] = {
        "path": str(path),
        "file_name": path.name,
        "content_hash": digest,
        "input_id": input_id,
    }
    if not same_file:
        update["sheet"] = None
    if digest != setup.content_hash:
        update["duplicates"] = "error"
    return setup.model_copy(update=update)


def answers_file(project: Project, setup: AqerSetup) -> tuple[Path, str]:
    """The file to read for ``setup`` and a note for the user ("" when all is as chosen).

    The user's file when it is still there; otherwise the project's copy, written to the cache
    folder under its original name.
    """
    if setup.path and Path(setup.path).is_file():
        return Path(setup.path), ""
    stored = project.get_input(setup.input_id) if setup.input_id else None
    if stored is None or not isinstance(stored.payload, bytes):
        raise FileNotFoundError(
            f"The answers file {setup.path or setup.file_name or '(none)'} is gone and the "
            "project has no copy of it. Choose the file again on the first page."
        )
    from core import paths

    folder = paths.user_cache_dir() / "aqer-inputs" / stored.content_hash[:16]
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / (setup.file_name or stored.name)
    if not copy.is_file() or hashlib.sha256(copy.read_bytes()).hexdigest() != stored.content_hash:
        copy.write_bytes(stored.payload)
    where = setup.path or setup.file_name
    return copy, (
        f"The file {where} is no longer there; EvalDesk uses the copy saved in the project."
    )


def read_answers(
    path: str | Path,
    sheet: str | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> tuple[list[str], TableRead]:
    """The file's sheet names and one sheet read as text (run it in an executor)."""
    from core import tables

    path = Path(path)
    if progress is not None:
        progress.start(f"Reading {path.name}", detail=str(path))
    sheets = tables.list_sheets(path)
    if cancel is not None:
        cancel.raise_if_cancelled()
    if sheet is not None and sheet not in sheets:
        sheet = None
    read = tables.read_table(path, sheet=sheet)
    return sheets, read


@dataclass
class OpenedAnswers:
    """The answers file as :func:`open_answers` found it."""

    setup: AqerSetup
    sheets: list[str]
    read: TableRead
    note: str = ""


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
    note = ""
    if path is not None:
        setup = store_answers_file(project, setup, path)
    elif setup.path and Path(setup.path).is_file():
        _, digest = _hash_file(Path(setup.path))
        if digest != setup.content_hash:
            setup = store_answers_file(project, setup, setup.path)
            note = (
                f"{Path(setup.path).name} changed since it was last read; EvalDesk read the new "
                "version (results will be computed again)."
            )
    file, gone = answers_file(project, setup)
    sheets, read = read_answers(file, setup.sheet, progress, cancel)
    setup = setup.model_copy(update={"sheet": read.sheet})
    return OpenedAnswers(setup, sheets, read, note or gone)


# ----------------------------------------------------------------------------- checking


@dataclass
class AnswersCheck:
    """What the user must know about the chosen columns before running AQER.

    ``issues`` are :class:`core.tables.TableIssue` items (errors block the next step, warnings
    do not). ``duplicates`` counts answers given twice by one worker to one question; while the
    setup says ``duplicates="error"`` the user must choose which to keep.
    """

    issues: list[TableIssue] = field(default_factory=list)
    prepared: PreparedResponses | None = None
    duplicates: int = 0
    needs_duplicate_choice: bool = False
    blank_rule: BlankRule | None = None
    """How blank answers will count for these answers and settings, and why."""

    @property
    def errors(self) -> list[TableIssue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[TableIssue]:
        return [i for i in self.issues if i.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors


ROLE_NAMES = {
    "question_col": "questions",
    "worker_col": "worker names",
    "response_col": "answers",
    "grade_col": "expert grades",
}


def _required_roles(setup: AqerSetup) -> dict[str, str | None]:
    """Role (as the user reads it) -> chosen column, for :func:`core.tables.map_columns`."""
    if setup.format == "long":
        roles = {
            "questions": setup.question_col,
            "worker names": setup.worker_col,
            "answers": setup.response_col,
        }
        if setup.grade_col:
            roles["expert grades"] = setup.grade_col
        return roles
    if setup.wide_rows == "question":
        return {"questions": setup.question_col}
    return {"worker names": setup.worker_col}


def check_answers(read: TableRead, setup: AqerSetup) -> AnswersCheck:
    """Check the chosen columns on the whole sheet; plain messages naming sheet, row, column."""
    from core import tables
    from core.aqer.blanks import blank_rule
    from core.aqer.responses import AqerInputError, prepare_responses

    roles = _required_roles(setup)
    optional = {"expert grades"}
    mapped = tables.map_columns(
        read, roles, required=[r for r in roles if r not in optional]
    )
    issues = list(mapped.issues)
    for column in setup.llm_cols:
        if column not in read.frame.columns:
            issues.append(
                tables.TableIssue(
                    "error",
                    f'There is no column "{column}" in {read.describe()} (chosen for AI '
                    "answers). Untick it in the list of AI answers.",
                    read.sheet,
                )
            )
    by_column: dict[str, list[str]] = {}
    for role, column in roles.items():
        if column:
            by_column.setdefault(column, []).append(role)
    for column, chosen in by_column.items():
        if len(chosen) > 1 and column in read.frame.columns:
            issues = [i for i in issues if not (i.severity == "warning"
                                                and i.column_name == column)]
            issues.append(
                tables.TableIssue(
                    "error",
                    f"{read.where(column=column)} is chosen for both the "
                    + " and the ".join(chosen)
                    + ". Each needs its own column: choose another one for the "
                    + chosen[-1] + ".",
                    read.sheet,
                    None,
                    read.column_label(column),
                    column,
                )
            )
    check = AnswersCheck(issues=issues)
    if not check.ok:
        return check
    letters = dict(read.letters)
    unnamed = {name for name, letter in letters.items() if name == f"Column {letter}"}
    duplicates = setup.duplicates if setup.duplicates != "error" else "first"
    try:
        prepared = prepare_responses(
            read.frame,
            format=setup.format,
            duplicates=duplicates,
            source=read.where(),
            first_row=(read.header_row or 1) + 1,
            letters=letters,
            unnamed=unnamed,
            **setup.engine_columns(),
        )
    except AqerInputError as exc:
        check.issues.append(tables.TableIssue("error", str(exc), read.sheet))
        return check
    check.prepared = prepared
    check.blank_rule = blank_rule(
        prepared, setup.settings.blank_answers, setup.settings.llm_as_workers
    )
    for notice in prepared.notices:
        if notice.topic == "Duplicate answer":
            check.duplicates += 1
            if setup.duplicates == "error":
                continue  # asked for separately
        check.issues.append(
            tables.TableIssue("warning", notice.message, read.sheet, notice.row)
        )
    check.needs_duplicate_choice = setup.duplicates == "error" and check.duplicates > 0
    humans = prepared.frame[~prepared.frame["is_llm"]]
    if setup.settings.llm_as_workers:
        humans = prepared.frame
    n_workers, n_questions = humans["worker"].nunique(), humans["question"].nunique()
    shared = humans.groupby("question")["worker"].nunique()
    shared = shared[shared >= 2]
    if n_workers >= 2 and n_questions >= 2 and len(shared) < 2:
        check.issues.append(
            tables.TableIssue(
                "error",
                f"{read.where()}: AQER needs at least 2 questions that at least 2 workers "
                f"answered, and finds {len(shared)}. Workers must answer the same questions: "
                "check that the question and worker columns are the right ones.",
                read.sheet,
            )
        )
    if n_workers < 2 or n_questions < 2:
        check.issues.append(
            tables.TableIssue(
                "error",
                f"{read.where()}: AQER compares workers across questions, so it needs answers "
                f"from at least 2 workers to at least 2 questions; with these columns it finds "
                f"{n_workers} worker(s) and {n_questions} question(s). Check the columns chosen "
                "above (and, for a wide sheet, whether each row is a question or a worker).",
                read.sheet,
            )
        )
    return check


# ----------------------------------------------------------------------------- embeddings cache


def default_encoder_factory(model_path: str, device: str) -> Any:
    """The real encoder: :class:`core.embeddings.Encoder` (bundled MiniLM when path is "")."""
    from core.embeddings import Encoder

    return Encoder(model_path, device=device)


def _vector_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class CachedEncoder:
    """An encoder that remembers every (model, text) vector in the project file.

    The real encoder is made by ``make()`` only when a text is not cached yet, so a re-run on
    known answers never loads the model. New vectors are committed per batch, so a cancelled
    run keeps what it finished.
    """

    def __init__(
        self,
        project: Project,
        model_key: str,
        make: Callable[[], Any],
        cancel: CancelToken | None = None,
        model_name: str = "",
        device: str = "",
        progress: Progress | None = None,
    ) -> None:
        self.project = project
        self.model_key = model_key
        self._make = make
        self._inner: Any = None
        self._cancel = cancel
        self._progress = progress
        self._cache: dict[str, tuple[np.ndarray, bool]] | None = None
        self._run_id: int | None = None
        self.model_name = model_name
        self.device = device
        self.max_seq_length: int | None = None
        #: How many texts the real encoder embedded (0 when everything came from the cache).
        self.embedded = 0

    # -- the cache ----------------------------------------------------------------------------
    def _load(self) -> dict[str, tuple[np.ndarray, bool]]:
        import numpy as np

        if self._cache is not None:
            return self._cache
        settings = {"model": self.model_key}
        run = self.project.find_run(METHOD, EMBED_STEP, settings)
        self._run_id = run.id if run is not None else None
        cache: dict[str, tuple[np.ndarray, bool]] = {}
        if self._run_id is not None:
            for item in self.project.get_results(self._run_id, "vector", status="ok"):
                payload = item.payload or {}
                try:
                    vector = np.frombuffer(base64.b64decode(payload["v"]), dtype=np.float32)
                except (KeyError, ValueError, TypeError):
                    continue
                cache[item.key] = (vector, bool(payload.get("cut", False)))
                if payload.get("limit"):
                    self.max_seq_length = int(payload["limit"])
        self._cache = cache
        return cache

    def _store(self, texts: list[str], vectors: np.ndarray, cut: list[bool]) -> None:
        if self._run_id is None:
            self._run_id = self.project.start_run(
                METHOD, EMBED_STEP, {"model": self.model_key}, resume=True
            )
            self.project.finish_run(self._run_id, "finished")
        with self.project.transaction():
            for text, vector, flag in zip(texts, vectors, cut):
                payload = {
                    "v": base64.b64encode(vector.astype("float32").tobytes()).decode("ascii"),
                    "cut": bool(flag),
                }
                if self.max_seq_length:
                    payload["limit"] = self.max_seq_length
                self.project.put_result(self._run_id, "vector", _vector_key(text), payload)

    def _encoder(self) -> Any:
        if self._inner is None:
            if self._progress is not None:
                self._progress.note(f"Loading the embedding model {self.model_name}…")
            self._inner = self._make()
            if self._progress is not None:
                self._progress.note(self.describe())
            self.model_name = str(getattr(self._inner, "model_name", "") or self.model_name)
            self.device = str(getattr(self._inner, "device", "") or self.device)
            limit = getattr(self._inner, "max_seq_length", None)
            if isinstance(limit, int):
                self.max_seq_length = limit
        return self._inner

    # -- the encoder protocol -----------------------------------------------------------------
    def __call__(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        cache = self._load()
        keys = [_vector_key(t) for t in texts]
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in cache))
        for start in range(0, len(missing), EMBED_BATCH):
            if self._cancel is not None:
                self._cancel.raise_if_cancelled()
            batch = missing[start : start + EMBED_BATCH]
            encoder = self._encoder()
            vectors = np.asarray(encoder(batch), dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(batch):
                raise RuntimeError(
                    f"The embedding model returned {vectors.shape} for {len(batch)} texts; "
                    "expected one vector per text. Choose another embedding model."
                )
            truncated = getattr(encoder, "truncated", None)
            cut = list(truncated(batch)) if callable(truncated) else [False] * len(batch)
            self._store(batch, vectors, cut)
            for text, vector, flag in zip(batch, vectors, cut):
                cache[_vector_key(text)] = (vector, bool(flag))
            self.embedded += len(batch)
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([cache[k][0] for k in keys])

    def truncated(self, texts: list[str]) -> list[bool]:
        cache = self._load()
        return [cache.get(_vector_key(t), (None, False))[1] for t in texts]

    def describe(self) -> str:
        if self._inner is None:
            return self.model_name or self.model_key
        describe = getattr(self._inner, "describe", None)
        return describe() if callable(describe) else self.model_name


# ----------------------------------------------------------------------------- results


def _plain(value: Any) -> Any:
    """A cell as JSON: numpy scalars as Python numbers, NaN / NA as None."""
    import math

    if value is None:
        return None
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (str, bytes)):
        try:
            value = item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
    except ImportError:  # pragma: no cover
        pass
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
    from core.aqer.responses import read_responses

    factory = encoder_factory or default_encoder_factory
    if progress is not None:
        progress.start("Reading answers")
    path, note = answers_file(project, setup)
    _data, digest = _hash_file(path)
    if digest != setup.content_hash:
        raise ValueError(
            f"The answers file {path} changed since its columns were checked. Go back to the "
            "first page and choose it again so EvalDesk reads the new version."
        )
    run_id = project.start_run(METHOD, SCORE_STEP, setup.fingerprint(), resume=True)
    try:
        prepared = read_responses(
            path, sheet=setup.sheet, format=setup.format, duplicates=setup.duplicates,
            **setup.engine_columns(),
        )
        if cancel is not None:
            cancel.raise_if_cancelled()
        model_key = embedding_key(setup.embedding_model)
        encoder = CachedEncoder(
            project,
            model_key,
            lambda: factory(setup.embedding_model, setup.device),
            cancel=cancel,
            model_name=(Path(setup.embedding_model).name if setup.embedding_model
                        else model_key.removeprefix("built-in ")),
            device=setup.device,
            progress=progress,
        )
        result = aqer(prepared, encoder, settings=setup.settings, progress=progress,
                      cancel=cancel)
        inputs = setup.describe_inputs(prepared)
        if note:
            inputs["Note"] = note
        with project.transaction():
            project.put_result(run_id, "result", "aqer",
                               {"result": result_to_payload(result), "inputs": inputs})
            project.finish_run(run_id, "finished")
    except Cancelled:
        project.finish_run(run_id, "cancelled", "Stopped by the user; embeddings were kept.")
        raise
    except Exception as exc:
        project.finish_run(run_id, "failed", str(exc)[:500])
        raise
    run = project.get_run(run_id)
    return StoredResult(result, inputs, run_id, (run.finished_at or "") if run else "",
                        encoder.embedded)


def export_result(stored: StoredResult, path: str | Path,
                  progress: Progress | None = None, cancel: CancelToken | None = None) -> Path:
    """Write the AQER workbook (the same as ``evaldesk aqer``) for a stored result."""
    from core.aqer.report import write_report

    if progress is not None:
        progress.start("Writing the workbook", detail=str(path))
    return write_report(stored.result, path, inputs=stored.inputs)


def copy_template(target: str | Path) -> Path:
    """Copy the example workbook shipped with EvalDesk to ``target``."""
    from core import paths

    source = paths.resources_dir() / "samples" / "aqer_template.xlsx"
    target = Path(target)
    # a copy beside it, then renamed: the workbook is never seen half-written
    handle, part = tempfile.mkstemp(prefix="~evaldesk-", suffix=".xlsx.tmp", dir=target.parent)
    os.close(handle)
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
