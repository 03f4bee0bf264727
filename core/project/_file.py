"""The project file itself (``Project``): one SQLite file (``*.evaldesk``) per evaluation project.

A project holds everything an evaluation needs to be resumed, checked and exported: the inputs
(spreadsheets, PDFs, task descriptions), the generated artefacts (personas, stakeholder groups,
checklists) with every human edit and who made it, the settings of each run, each finished unit
of work (a scored item, a debate, a batch of similarities) and the log of every LLM call, which
doubles as the response cache.

Saving is continuous: every write method commits its own transaction, so whatever has finished
is on disk; "Save" in the app means nothing is pending. Group several writes into one
all-or-nothing step (and one disk flush) with ``with project.transaction(): ...``.

On the hot path of a long run (a scored text, a debate, a logged LLM call, thousands of them),
writes are queued instead (:meth:`Project.queue_result`, :meth:`Project.queue_llm_call`) and
``await project.committed()`` returns once they are on disk: every write queued while the
previous commit was being flushed goes into the next single transaction (a group commit), in a
worker thread, so the event loop never waits for the disk and one flush serves many results. A
caller reports a unit as done only after ``committed()`` returned, so "done" always means "on
disk". ``flush()`` commits the queue at once; closing the project, ending a run
(:meth:`Project.finish_run`) and reading results or usage flush it first. A process killed while
writes are queued loses only those (never reported done); the resumed run redoes them, and their
LLM calls, committed before the unit ended, are answered from the cache, not billed again.

    with Project.create_untitled(method="aqer") as project:      # New
        run_id = project.start_run("aqer", "score", settings, resume=True)
        if key not in project.finished_keys(run_id, "worker"):
            project.put_result(run_id, "worker", key, {"score": 0.8})
        project.finish_run(run_id, "finished")
        project.save_as(chosen_path)                               # Save As

Safety rules:

* A file that fails to open (not a project, damaged, from a newer EvalDesk, in use) is never
  written to: every check reads it read-only first, and the message says what to do.
* Opening an older format upgrades it in one transaction, after keeping a copy beside it
  (``<name>.before-v<N>.evaldesk``).
* The operating system's own lock on ``<file>.lock`` stops the same project being open twice (a
  symbolic link locks the file it points to); the system lets it go when the process ends,
  however it ends. The file's text (process id, computer, user) only says who has it open.
* A file from elsewhere is opened with SQLite's defensive settings and refused when its schema
  holds triggers or views (EvalDesk makes none: they would run their own SQL on every read or
  write); every query of the project stops at Ctrl+C and at :meth:`Project.interrupt` (Cancel).
* A run's id is never used again, even after another program deleted runs, so a new run never
  adopts results left behind by a deleted one (:meth:`Project.orphaned_results` counts them).
* The file uses SQLite's rollback journal (not WAL), so between writes a project is one
  self-contained file that users may copy or email.
* One connection shared by the GUI thread and worker threads, serialised by a re-entrant lock.
  Never ``await`` inside ``transaction()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import getpass
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import sqlite3
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal, Self

from core import __version__, paths
from core.runs import Cancelled

__all__ = [
    "APPLICATION_ID",
    "MIGRATIONS",
    "PROJECT_SUFFIX",
    "SCHEMA_VERSION",
    "Artefact",
    "Edit",
    "LLMUsage",
    "NotAProject",
    "Project",
    "ProjectDamaged",
    "ProjectError",
    "ProjectInfo",
    "ProjectInput",
    "ProjectLocked",
    "ProjectTooNew",
    "ProjectUnsafe",
    "ProjectUnwritable",
    "Result",
    "Run",
    "untitled_folder",
]

#: Format of the file this EvalDesk writes (``PRAGMA user_version``; mirrored in ``meta``).
SCHEMA_VERSION = 1
#: SQLite header field that marks a file as an EvalDesk project ("EVLD").
APPLICATION_ID = 0x45564C44
PROJECT_SUFFIX = ".evaldesk"
LOCK_SUFFIX = ".lock"
UNTITLED_FOLDER = "untitled"

#: ``MIGRATIONS[n](conn)`` turns a format-n file into a format-(n+1) file. All steps of one upgrade
#: run in a single transaction (SQLite DDL is transactional); do not commit inside them.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {}

Origin = Literal["generated", "human", "imported"]
RunStatus = Literal["running", "finished", "cancelled", "failed"]
ResultStatus = Literal["ok", "failed"]
ORIGINS = ("generated", "human", "imported")
RUN_STATUSES = ("running", "finished", "cancelled", "failed")
RESULT_STATUSES = ("ok", "failed")

_SQLITE_MAGIC = b"SQLite format 3\x00"
_BUSY_TIMEOUT_S = 5.0
_FRESH_LOCK_S = 5.0  # an unreadable lock file younger than this may still be being written

_SCHEMA_V1 = [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
    """CREATE TABLE inputs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        payload,                      -- JSON text, or a BLOB for file contents
        created_at TEXT NOT NULL)""",
    "CREATE INDEX inputs_kind ON inputs(kind, name)",
    """CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        method TEXT NOT NULL,
        step TEXT NOT NULL,
        settings TEXT NOT NULL,       -- canonical JSON (sorted keys): compared as text
        status TEXT NOT NULL CHECK (status IN ('running','finished','cancelled','failed')),
        started_at TEXT NOT NULL,
        finished_at TEXT,
        message TEXT NOT NULL DEFAULT '')""",
    "CREATE INDEX runs_step ON runs(method, step)",
    """CREATE TABLE artefacts (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        payload TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        origin TEXT NOT NULL CHECK (origin IN ('generated','human','imported')),
        run_id INTEGER,
        edited INTEGER NOT NULL DEFAULT 0,
        UNIQUE (kind, key))""",
    """CREATE TABLE edits (
        id INTEGER PRIMARY KEY,
        artefact_id INTEGER REFERENCES artefacts(id) ON DELETE SET NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        field TEXT NOT NULL,          -- dotted path into the payload; '' = the whole artefact
        old TEXT,
        new TEXT,
        who TEXT NOT NULL,
        at TEXT NOT NULL)""",
    "CREATE INDEX edits_artefact ON edits(kind, key)",
    """CREATE TABLE results (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        payload TEXT,
        status TEXT NOT NULL CHECK (status IN ('ok','failed')),
        error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (run_id, kind, key))""",
    """CREATE TABLE llm_calls (
        cache_key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        api_base TEXT,
        request TEXT NOT NULL,
        response TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        cost REAL,                    -- NULL = unknown (not the same as free)
        latency_s REAL,
        run_id INTEGER,
        created_at TEXT NOT NULL)""",
    "CREATE INDEX llm_calls_run ON llm_calls(run_id)",
]


# --------------------------------------------------------------------------------------- errors
class ProjectError(Exception):
    """A project file could not be created, opened or written. ``str()`` is a plain message for
    the user that names the file and says what to do."""


class NotAProject(ProjectError):
    """The file is not an EvalDesk project (another kind of file, or another program's database)."""


class ProjectDamaged(ProjectError):
    """The file is an EvalDesk project but damaged (cut short, corrupted)."""


class ProjectTooNew(ProjectError):
    """The file was written by a newer EvalDesk; it was not opened and not changed."""


class ProjectLocked(ProjectError):
    """The project is open elsewhere (another EvalDesk holds its lock). ``owner`` holds what the
    lock file says (pid, host, user, since); ``Project.open(path, break_lock=True)`` opens it
    anyway, unguarded, after the user agreed."""

    def __init__(self, message: str, owner: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.owner = owner or {}


class ProjectUnsafe(ProjectError):
    """The file holds things EvalDesk never puts in a project (triggers, views, a view in place
    of one of its tables) that would run their own SQL whenever the project is read or written.
    It was not opened and not changed; ``objects`` names them ("the trigger \"x\"")."""

    def __init__(self, message: str, objects: list[str] | None = None) -> None:
        super().__init__(message)
        self.objects = objects or []


class ProjectUnwritable(ProjectError):
    """EvalDesk may not write the file or its folder (read-only folder, missing folder, ...)."""


# -------------------------------------------------------------------------------------- records
@dataclass(frozen=True)
class ProjectInput:
    """An input as imported: ``payload`` is the JSON value or the raw ``bytes`` given."""

    id: int
    kind: str
    name: str
    content_hash: str
    payload: Any
    created_at: str


@dataclass(frozen=True)
class Artefact:
    """A generated or human-made artefact (persona, group, checklist, ...), unique by (kind, key).
    ``edited`` is True when a person changed the current payload (see ``Project.list_edits``)."""

    id: int
    kind: str
    key: str
    payload: Any
    origin: str
    run_id: int | None
    edited: bool
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class Edit:
    """One human edit: ``field`` (a dotted path, '' = the whole artefact) went from ``old`` to
    ``new``; ``new`` is None and ``field`` '' when the artefact was deleted."""

    id: int
    artefact_id: int | None
    kind: str
    key: str
    field: str
    old: Any
    new: Any
    who: str
    at: str


@dataclass(frozen=True)
class Run:
    id: int
    method: str
    step: str
    settings: Any
    status: str
    started_at: str
    finished_at: str | None
    message: str


@dataclass(frozen=True)
class Result:
    """One finished unit of work of a run; ``status`` 'failed' carries ``error`` for the user."""

    id: int
    run_id: int
    kind: str
    key: str
    payload: Any
    status: str
    error: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class LLMUsage:
    """Totals over stored LLM calls. ``cost`` sums the known costs; ``calls_without_cost`` counts
    calls whose cost was unknown (so a total is never silently too low);
    ``cached_prompt_tokens``: prompt tokens the provider took from its prompt cache."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    calls_without_cost: int = 0
    cached_prompt_tokens: int = 0


@dataclass(frozen=True)
class ProjectInfo:
    """A summary of a project file (what ``evaldesk project info`` prints)."""

    path: Path
    schema_version: int
    app_version: str
    created_at: str
    modified_at: str
    method: str
    title: str
    inputs: int
    artefacts: int
    edited_artefacts: int
    edits: int
    runs: int
    runs_by_status: dict[str, int] = field(default_factory=dict)
    results: int = 0
    failed_results: int = 0
    #: results whose run is gone (deleted by another program): ignored, never any run's
    orphaned_results: int = 0
    llm: LLMUsage = field(default_factory=LLMUsage)


_UNSET: Any = object()


# ---------------------------------------------------------------------------------- the project
class Project:
    """An open project file. Create with :meth:`create`, :meth:`create_untitled` or :meth:`open`;
    close with :meth:`close` (or use it as a context manager). All methods are thread-safe."""

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        lock: _LockFile | None,
        *,
        read_only: bool = False,
    ) -> None:
        self._path = path
        self._conn = conn
        self._lockfile = lock
        self._read_only = read_only
        self._mutex = threading.RLock()
        self._depth = 0
        self._closed = False
        #: set by :meth:`interrupt`: the query it stops raises Cancelled, not KeyboardInterrupt
        self._interrupting = False
        #: Writes waiting for the next group commit: (SQL, parameters), in queue order.
        self._queued: list[tuple[str, tuple[Any, ...]]] = []
        self._queue_lock = threading.Lock()
        #: every stored or queued call's cache key, read on the first look-up (None until then)
        self._call_keys: set[str] | None = None
        self._committers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _GroupCommit]
        self._committers = weakref.WeakKeyDictionary()

    # ----------------------------------------------------------------------- create / open
    @classmethod
    def create(cls, path: str | os.PathLike[str], *, method: str | None = None,
               title: str = "") -> Project:
        """Create a new project file at ``path`` (which must not exist yet) and open it. An empty
        file there (a creation killed before it was written: it holds nothing) is replaced."""
        target = _absolute(path)
        _check_name(target)
        if target.is_symlink() or (target.exists() and not _never_written(target)):
            raise ProjectError(
                f"{target} already exists. Choose another name, or open that file instead."
            )
        _check_folder(target.parent)
        lock = _LockFile.acquire(target)
        assert lock is not None  # None only when a lock is broken on purpose
        conn: sqlite3.Connection | None = None
        try:
            _journal(target).unlink(missing_ok=True)  # an orphan: its database is gone
            target.unlink(missing_ok=True)  # empty: nothing to keep
            conn = _connect(target, "rwc")
            now = _now()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            for statement in _SCHEMA_V1:
                conn.execute(statement)
            conn.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?)",
                [
                    ("application", "EvalDesk"),
                    ("schema_version", "1"),
                    ("app_version", __version__),
                    ("created_by_version", __version__),
                    ("created_at", now),
                    ("modified_at", now),
                    ("method", method or ""),
                    ("title", title),
                ],
            )
            conn.execute("PRAGMA user_version = 1")
            _apply_migrations(conn, 1)
            conn.execute("COMMIT")
            _prepare(conn)
        except BaseException as exc:
            if conn is not None:
                conn.close()
            for leftover in (target, _journal(target)):
                leftover.unlink(missing_ok=True)
            lock.release()
            if isinstance(exc, sqlite3.Error):
                raise _unwritable(target.parent, exc) from exc
            raise
        return cls(target, conn, lock)

    @classmethod
    def create_untitled(cls, *, method: str | None = None, title: str = "") -> Project:
        """A new project kept in the user's data folder until the user chooses where to save it
        (:meth:`save_as`). It survives a crash: :meth:`list_untitled` finds it again."""
        folder = untitled_folder()
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        while True:
            candidate = folder / f"untitled-{stamp}-{secrets.token_hex(3)}{PROJECT_SUFFIX}"
            if not candidate.exists():
                return cls.create(candidate, method=method, title=title)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, read_only: bool = False,
             break_lock: bool = False) -> Project:
        """Open an existing project. Raises :class:`ProjectError` (a subclass says which problem)
        and leaves the file unchanged when it is not a project, damaged, newer or in use.

        ``read_only=True`` takes no lock, never writes and does not upgrade an older format (every
        write method then raises). ``break_lock=True`` replaces another instance's lock file (only
        after the user confirmed nobody is using the project)."""
        target = _absolute(path)
        version = _check_header(target)
        if read_only:
            conn = None
            try:
                conn = _connect(target, "ro")
                _validate(conn, target)
            except BaseException as exc:
                if conn is not None:
                    conn.close()
                if isinstance(exc, _NeedsRecovery):
                    raise ProjectError(
                        f"{target} needs repairing after EvalDesk stopped unexpectedly while "
                        "saving. Open it normally (not read-only) to repair it."
                    ) from None
                if isinstance(exc, sqlite3.Error):
                    raise _translate(exc, target, "opening the project") from exc
                raise
            return cls(target, conn, None, read_only=True)

        lock = _LockFile.acquire(target, break_lock=break_lock)
        conn = None
        try:
            probe = _connect(target, "ro")
            try:
                version = _validate(probe, target)
                recover = False
            except _NeedsRecovery:
                recover = True
            finally:
                probe.close()
            conn = _connect(target, "rw")
            if recover:  # a crash left a half-written change: SQLite rolls it back on first read
                try:
                    version = _validate(conn, target)
                except _NeedsRecovery:
                    raise ProjectUnwritable(
                        f"{target} needs repairing after EvalDesk stopped unexpectedly while "
                        "saving, but the file or its folder is read-only. Copy the file and its "
                        "'-journal' file to a folder you can write to and open the copy there."
                    ) from None
            _prepare(conn)
            if version < SCHEMA_VERSION:
                conn.close()
                conn = None
                _upgrade(target, version)
                conn = _connect(target, "rw")
                _prepare(conn)
        except BaseException as exc:
            if conn is not None:
                conn.close()
            if lock is not None:
                lock.release()
            if isinstance(exc, sqlite3.Error):
                raise _translate(exc, target, "opening the project") from exc
            raise
        return cls(target, conn, lock)

    @classmethod
    def inspect(cls, path: str | os.PathLike[str]) -> ProjectInfo:
        """Read a summary of a project without locking or changing it."""
        with cls.open(path, read_only=True) as project:
            return project.info()

    @staticmethod
    def list_untitled() -> list[Path]:
        """Untitled projects left from earlier sessions (for "Recover unsaved work"), newest
        first. Projects currently open in a running EvalDesk are not listed."""
        folder = untitled_folder()
        found = []
        for candidate in folder.glob(f"*{PROJECT_SUFFIX}"):
            if candidate.is_file() and _LockFile.owner_if_live(candidate) is None:
                try:
                    found.append((candidate.stat().st_mtime, candidate))
                except OSError:
                    continue
        return [p for _, p in sorted(found, reverse=True)]

    # ------------------------------------------------------------------------- properties
    @property
    def path(self) -> Path:
        """The project's file (changes after :meth:`save_as`)."""
        return self._path

    @property
    def is_temporary(self) -> bool:
        """True for an untitled project that lives in the user data folder (never "Save As"d)."""
        return _is_untitled(self._path)

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def schema_version(self) -> int:
        with self._reading() as conn:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])

    @property
    def method(self) -> str:
        """The evaluation method ('' when not chosen yet)."""
        return self._meta("method") or ""

    @property
    def title(self) -> str:
        return self._meta("title") or ""

    @property
    def created_at(self) -> str:
        return self._meta("created_at") or ""

    @property
    def modified_at(self) -> str:
        return self._meta("modified_at") or ""

    def set_method(self, method: str) -> None:
        with self.transaction():
            self._conn.execute("UPDATE meta SET value = ? WHERE key = 'method'", (method,))

    def set_title(self, title: str) -> None:
        with self.transaction():
            self._conn.execute("UPDATE meta SET value = ? WHERE key = 'title'", (title,))

    # --------------------------------------------------------------------- life cycle
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("read-only" if self._read_only else "open")
        return f"<Project {str(self._path)!r} {state}>"

    def close(self) -> None:
        """Close the file and release its lock. Everything was already saved. An untitled project
        that holds nothing (no inputs, artefacts, runs or LLM calls) is deleted: nothing to
        recover. Calling ``close`` twice is harmless."""
        with self._mutex:
            if self._closed:
                return
            unsaved: BaseException | None = None
            if not self._read_only and self._depth == 0:
                try:
                    self.flush()
                except BaseException as exc:  # noqa: BLE001 - closed anyway, then raised
                    unsaved = exc
            empty_untitled = False
            try:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                empty_untitled = (
                    not self._read_only and self.is_temporary and self._holds_nothing()
                )
            except sqlite3.Error:
                pass
            finally:
                self._conn.close()
                self._closed = True
                if empty_untitled:
                    self._path.unlink(missing_ok=True)
                if self._lockfile is not None:
                    self._lockfile.release()
                    self._lockfile = None
            if unsaved is not None:
                raise unsaved

    def discard(self) -> None:
        """Close an untitled project and delete its file ("Close without saving")."""
        if not self.is_temporary:
            raise ProjectError(
                f"{self._path} is a saved project; EvalDesk does not delete saved projects."
            )
        path = self._path
        self.close()
        path.unlink(missing_ok=True)
        _journal(path).unlink(missing_ok=True)

    def save_as(self, new_path: str | os.PathLike[str]) -> None:
        """Copy the whole project to ``new_path`` (replacing a file the user chose to replace)
        and continue working there. The copy is written to a temporary file in the target folder
        and then moved into place, so ``new_path`` is never half-written. An untitled project's
        temporary file is deleted afterwards; a saved project's old file is left as it was."""
        target = _absolute(new_path)
        with self._mutex:
            self._check_open()
            if self._depth:
                raise ProjectError("Save As cannot run in the middle of a change.")
            if _same_file(target, self._path):
                raise ProjectError(
                    f"{target} is this project's own file. It is already saved there: EvalDesk "
                    "saves every change as it happens."
                )
            if target.is_dir():
                raise ProjectError(f"{target} is a folder. Choose a file name for the project.")
            _check_name(target)
            _check_folder(target.parent)
            new_lock = _LockFile.acquire(target)
            assert new_lock is not None
            tmp: Path | None = None
            new_conn: sqlite3.Connection | None = None
            try:
                try:
                    tmp = paths.temp_file_beside(target, prefix=".evaldesk-save-", suffix=".tmp")
                except OSError as exc:
                    raise _unwritable(target.parent, exc) from exc
                copy = sqlite3.connect(str(tmp))
                try:
                    self._conn.backup(copy)
                finally:
                    copy.close()
                _journal(tmp).unlink(missing_ok=True)
                # a journal left beside the replaced file would be "rolled back" into the copy
                _journal(target).unlink(missing_ok=True)
                os.replace(tmp, target)
                tmp = None
                new_conn = _connect(target, "rw")
                version = int(new_conn.execute("PRAGMA user_version").fetchone()[0])
                if version < SCHEMA_VERSION:  # a read-only project of an older format
                    new_conn.close()
                    new_conn = None
                    _upgrade(target, version)
                    new_conn = _connect(target, "rw")
                _prepare(new_conn)
            except BaseException as exc:
                if new_conn is not None:
                    new_conn.close()
                if tmp is not None:
                    tmp.unlink(missing_ok=True)
                new_lock.release()
                if isinstance(exc, ProjectError):
                    raise
                if isinstance(exc, (sqlite3.Error, OSError)):
                    raise _unwritable(target.parent, exc) from exc
                raise
            old_path, old_lock, was_untitled = self._path, self._lockfile, self.is_temporary
            self._conn.close()
            self._conn, self._path, self._lockfile, self._read_only = (
                new_conn, target, new_lock, False
            )
            if old_lock is not None:
                old_lock.release()
            if was_untitled:
                old_path.unlink(missing_ok=True)
                _journal(old_path).unlink(missing_ok=True)

    # ----------------------------------------------------------------------- transactions
    @contextmanager
    def transaction(self) -> Iterator[Project]:
        """Group writes into one all-or-nothing step: an exception inside leaves nothing of it.
        Nested blocks are savepoints. Other threads wait until the block ends; do not ``await``
        inside it."""
        with self._mutex:
            self._check_open()
            if self._read_only:
                raise ProjectUnwritable(
                    f"{self._path} was opened read-only, so nothing can be changed in it. "
                    "Use Save As to keep a copy you can change."
                )
            depth = self._depth
            try:
                if depth == 0:
                    self._conn.execute("BEGIN IMMEDIATE")
                else:
                    self._conn.execute(f"SAVEPOINT sp{depth}")
            except sqlite3.Error as exc:
                raise _translate(exc, self._path, "saving") from exc
            self._depth = depth + 1
            try:
                yield self
                if depth == 0:
                    now = _now()
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                        [("modified_at", now), ("app_version", __version__)],
                    )
                    self._conn.execute("COMMIT")
                else:
                    self._conn.execute(f"RELEASE sp{depth}")
            except BaseException as exc:
                try:
                    if depth == 0:
                        if self._conn.in_transaction:
                            self._conn.execute("ROLLBACK")
                    else:
                        self._conn.execute(f"ROLLBACK TO sp{depth}")
                        self._conn.execute(f"RELEASE sp{depth}")
                except sqlite3.Error:
                    pass
                if _interrupted(exc):
                    raise _interruption(self._interrupting) from None
                if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
                    raise _translate(exc, self._path, "saving") from exc
                raise
            finally:
                self._depth = depth
                if depth == 0:
                    self._interrupting = False

    # ------------------------------------------------------------------------------ inputs
    def add_input(self, kind: str, name: str, payload: Any) -> int:
        """Store an input (``bytes`` as a blob, anything else as JSON) and return its id. Adding
        the same (kind, name, content) again returns the existing id."""
        if isinstance(payload, (bytes, bytearray, memoryview)):
            stored: Any = bytes(payload)
            digest = hashlib.sha256(stored).hexdigest()
        else:
            stored = _dumps(payload)
            digest = hashlib.sha256(_canonical(payload).encode("utf-8")).hexdigest()
        with self.transaction():
            row = self._conn.execute(
                "SELECT id FROM inputs WHERE kind = ? AND name = ? AND content_hash = ?",
                (kind, name, digest),
            ).fetchone()
            if row:
                return int(row[0])
            cursor = self._conn.execute(
                "INSERT INTO inputs(kind, name, content_hash, payload, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (kind, name, digest, stored, _now()),
            )
            assert cursor.lastrowid is not None  # an INSERT gives its row an id
            return cursor.lastrowid

    def get_input(self, input_id: int) -> ProjectInput | None:
        with self._reading() as conn:
            row = conn.execute(
                "SELECT id, kind, name, content_hash, payload, created_at FROM inputs "
                "WHERE id = ?",
                (input_id,),
            ).fetchone()
        return _input(row) if row else None

    def input_file(self, input_id: int | None, chosen: str | os.PathLike[str] = "",
                   name: str = "input", *, temp_prefix: str = "evaldesk-input-") -> Path | None:
        """A file input as a file to read: the one the user ``chosen`` while its content is
        still the stored copy's, else the stored copy written to a new temporary folder as
        ``name``; without a stored copy, ``chosen`` if it exists; None when there is neither."""
        if input_id is not None:
            stored = self.get_input(input_id)
            if stored is not None:
                original = Path(chosen) if chosen else None
                if (original is not None and original.is_file() and hashlib.sha256(
                        original.read_bytes()).hexdigest() == stored.content_hash):
                    return original
                folder = Path(tempfile.mkdtemp(prefix=temp_prefix))
                copy = folder / name
                copy.write_bytes(stored.payload)
                return copy
        if chosen and Path(chosen).is_file():
            return Path(chosen)
        return None

    def list_inputs(self, kind: str | None = None) -> list[ProjectInput]:
        """Inputs in the order they were added (all kinds when ``kind`` is None)."""
        sql = "SELECT id, kind, name, content_hash, payload, created_at FROM inputs"
        with self._reading() as conn:
            if kind is None:
                rows = conn.execute(sql + " ORDER BY id").fetchall()
            else:
                rows = conn.execute(sql + " WHERE kind = ? ORDER BY id", (kind,)).fetchall()
        return [_input(row) for row in rows]

    # --------------------------------------------------------------------------- artefacts
    def put_artefact(
        self,
        kind: str,
        key: str,
        payload: Any,
        origin: Origin = "generated",
        run_id: int | None = None,
    ) -> Artefact:
        """Insert or replace the artefact (kind, key). Replacing keeps its id and creation time
        and its edit history, and sets ``edited`` back to False (a fresh version): check
        ``get_artefact(...).edited`` before regenerating over a person's work."""
        if origin not in ORIGINS:
            raise ValueError(f"origin must be one of {ORIGINS}, not {origin!r}")
        now = _now()
        with self.transaction():
            self._conn.execute(
                "INSERT INTO artefacts(kind, key, payload, created_at, updated_at, origin, run_id,"
                " edited) VALUES (?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT(kind, key) DO UPDATE SET "
                "payload = excluded.payload, updated_at = excluded.updated_at, "
                "origin = excluded.origin, run_id = excluded.run_id, edited = 0",
                (kind, key, _dumps(payload), now, now, origin, run_id),
            )
            found = self.get_artefact(kind, key)
        assert found is not None
        return found

    def get_artefact(self, kind_or_id: str | int, key: str | None = None) -> Artefact | None:
        """The artefact with this id, or with this kind and key; None when there is none."""
        sql = ("SELECT id, kind, key, payload, origin, run_id, edited, created_at, updated_at "
               "FROM artefacts ")
        with self._reading() as conn:
            if isinstance(kind_or_id, int) and key is None:
                row = conn.execute(sql + "WHERE id = ?", (kind_or_id,)).fetchone()
            else:
                if key is None:
                    raise TypeError("get_artefact needs (kind, key) or an artefact id")
                row = conn.execute(sql + "WHERE kind = ? AND key = ?",
                                   (kind_or_id, key)).fetchone()
        return _artefact(row) if row else None

    def list_artefacts(self, kind: str | None = None) -> list[Artefact]:
        """Artefacts of ``kind`` (all when None) in the order they were first stored."""
        sql = ("SELECT id, kind, key, payload, origin, run_id, edited, created_at, updated_at "
               "FROM artefacts")
        with self._reading() as conn:
            if kind is None:
                rows = conn.execute(sql + " ORDER BY id").fetchall()
            else:
                rows = conn.execute(sql + " WHERE kind = ? ORDER BY id", (kind,)).fetchall()
        return [_artefact(row) for row in rows]

    def record_edit(
        self,
        artefact: int | tuple[str, str] | Artefact,
        field: str,
        old: Any,
        new: Any,
        who: str,
    ) -> Artefact:
        """Apply a person's edit to an artefact and log it with who and when.

        ``artefact`` is an id, a (kind, key) pair or an :class:`Artefact`. ``field`` is a dotted
        path into the payload ("name", "attributes.specialty", "questions.2.text"; a number
        indexes a list) or '' for the whole payload. ``old`` is the value the person saw; if
        the stored value differs (someone or something changed it meanwhile) nothing is written
        and :class:`ProjectError` says so. Returns the updated artefact (``edited`` True)."""
        if not who or not who.strip():
            raise ValueError("record_edit needs the name of the person who made the edit")
        with self.transaction():
            current = self._resolve_artefact(artefact)
            payload = current.payload
            before = _get_path(payload, field)
            if _normalise(before) != _normalise(old):
                raise ProjectError(
                    f"The {current.kind} '{current.key}' was changed elsewhere while you were "
                    f"editing it ({field or 'the whole item'} is now {_short(before)}). "
                    "Reload it and make your change again."
                )
            updated = _set_path(payload, field, _normalise(new))
            now = _now()
            self._conn.execute(
                "UPDATE artefacts SET payload = ?, edited = 1, updated_at = ? WHERE id = ?",
                (_dumps(updated), now, current.id),
            )
            self._conn.execute(
                "INSERT INTO edits(artefact_id, kind, key, field, old, new, who, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (current.id, current.kind, current.key, field, _dumps(before), _dumps(new),
                 who.strip(), now),
            )
            result = self.get_artefact(current.id)
        assert result is not None
        return result

    def rename_artefact(self, artefact: int | tuple[str, str] | Artefact, new_key: str) -> Artefact:
        """Give an artefact another key of the same kind; its edit history goes with it.
        :class:`ProjectError` when that kind already has an artefact with ``new_key``."""
        with self.transaction():
            current = self._resolve_artefact(artefact)
            if current.key == new_key:
                return current
            if self.get_artefact(current.kind, new_key) is not None:
                raise ProjectError(
                    f"There is already a {current.kind} '{new_key}': choose another name."
                )
            self._conn.execute("UPDATE artefacts SET key = ? WHERE id = ?", (new_key, current.id))
            self._conn.execute(
                "UPDATE edits SET key = ? WHERE artefact_id = ?", (new_key, current.id)
            )
            result = self.get_artefact(current.id)
        assert result is not None
        return result

    def delete_artefact(self, artefact: int | tuple[str, str] | Artefact, who: str) -> None:
        """Delete an artefact (a person removed a persona, a question, ...); the deletion is
        logged as an edit of field '' from the old payload to None."""
        with self.transaction():
            current = self._resolve_artefact(artefact)
            self._conn.execute(
                "INSERT INTO edits(artefact_id, kind, key, field, old, new, who, at) "
                "VALUES (?, ?, ?, '', ?, NULL, ?, ?)",
                (current.id, current.kind, current.key, _dumps(current.payload), who, _now()),
            )
            self._conn.execute("DELETE FROM artefacts WHERE id = ?", (current.id,))

    def list_edits(
        self,
        artefact: int | tuple[str, str] | Artefact | None = None,
        *,
        kind: str | None = None,
    ) -> list[Edit]:
        """Human edits, oldest first: of one artefact, of one kind, or all."""
        sql = "SELECT id, artefact_id, kind, key, field, old, new, who, at FROM edits"
        where = ""
        params: tuple[Any, ...] = ()
        if isinstance(artefact, Artefact):
            artefact = (artefact.kind, artefact.key)
        if isinstance(artefact, int):
            where, params = " WHERE artefact_id = ?", (artefact,)
        elif artefact is not None:
            where, params = " WHERE kind = ? AND key = ?", tuple(artefact)
        elif kind is not None:
            where, params = " WHERE kind = ?", (kind,)
        with self._reading() as conn:
            rows = conn.execute(sql + where + " ORDER BY id", params).fetchall()
        return [
            Edit(id=r[0], artefact_id=r[1], kind=r[2], key=r[3], field=r[4],
                 old=_loads(r[5], self._path), new=_loads(r[6], self._path), who=r[7], at=r[8])
            for r in rows
        ]

    # -------------------------------------------------------------------------------- runs
    def start_run(self, method: str, step: str, settings: Any, *, resume: bool = False) -> int:
        """Start a run of ``step`` with ``settings`` (JSON-able; compared key-order-insensitive)
        and return its id. With ``resume=True`` the latest run with identical settings is
        reopened instead (status back to 'running'), so its finished results are reused."""
        canonical = _canonical(settings)
        with self.transaction():
            if resume:
                found = self.find_run(method, step, settings)
                if found is not None:
                    self._conn.execute(
                        "UPDATE runs SET status = 'running', finished_at = NULL, message = '' "
                        "WHERE id = ?",
                        (found.id,),
                    )
                    return found.id
            run_id = self._next_run_id()
            self._conn.execute(
                "INSERT INTO runs(id, method, step, settings, status, started_at) "
                "VALUES (?, ?, ?, ?, 'running', ?)",
                (run_id, method, step, canonical, _now()),
            )
            self._conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('last_run_id', ?)",
                               (str(run_id),))
            return run_id

    def _next_run_id(self) -> int:
        """An id no run ever had in this file: past every run, every result's, call's and
        artefact's run id and the highest id given before (``meta.last_run_id``), so a run
        another program deleted never lends its id, nor its left-over results, to a new one."""
        row = self._conn.execute(
            "SELECT MAX(COALESCE(m, 0)) FROM ("
            "SELECT MAX(id) AS m FROM runs UNION ALL SELECT MAX(run_id) FROM results "
            "UNION ALL SELECT MAX(run_id) FROM llm_calls UNION ALL SELECT MAX(run_id) FROM artefacts "
            "UNION ALL SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'last_run_id')"
        ).fetchone()
        return int(row[0] or 0) + 1

    def orphaned_results(self) -> int:
        """How many stored results belong to no run (their run was deleted, perhaps by another
        program). They are never read as any run's results; the project's summary and the
        command line say so."""
        self._flush_before_reading()
        with self._reading() as conn:
            try:
                row = conn.execute("SELECT COUNT(*) FROM results WHERE run_id NOT IN "
                                   "(SELECT id FROM runs)").fetchone()
            except sqlite3.OperationalError:  # no such table in an older format
                return 0
        return int(row[0])

    def finish_run(self, run_id: int, status: RunStatus, message: str = "") -> None:
        """Mark a run 'finished', 'cancelled' or 'failed' (``message`` is shown to the user)."""
        if status not in RUN_STATUSES or status == "running":
            raise ValueError(f"status must be 'finished', 'cancelled' or 'failed', not {status!r}")
        self.flush()  # the run's queued results first
        with self.transaction():
            cursor = self._conn.execute(
                "UPDATE runs SET status = ?, finished_at = ?, message = ? WHERE id = ?",
                (status, _now(), message, run_id),
            )
            if cursor.rowcount == 0:
                raise KeyError(f"there is no run {run_id} in {self._path}")

    def get_run(self, run_id: int) -> Run | None:
        with self._reading() as conn:
            row = conn.execute(_RUN_SQL + " WHERE id = ?", (run_id,)).fetchone()
        return _run(row) if row else None

    def list_runs(self, method: str | None = None, step: str | None = None) -> list[Run]:
        """Runs, oldest first, optionally of one method (and step)."""
        clauses, params = [], []
        if method is not None:
            clauses.append("method = ?")
            params.append(method)
        if step is not None:
            clauses.append("step = ?")
            params.append(step)
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        with self._reading() as conn:
            rows = conn.execute(_RUN_SQL + where + " ORDER BY id", params).fetchall()
        return [_run(row) for row in rows]

    def find_run(self, method: str, step: str, settings: Any) -> Run | None:
        """The latest run of this method and step with exactly these settings (any status), so
        a re-run with the same settings can resume it; None when a setting changed."""
        with self._reading() as conn:
            row = conn.execute(
                _RUN_SQL + " WHERE method = ? AND step = ? AND settings = ? "
                "ORDER BY id DESC LIMIT 1",
                (method, step, _canonical(settings)),
            ).fetchone()
        return _run(row) if row else None

    # ----------------------------------------------------------------------------- results
    def put_result(
        self,
        run_id: int,
        kind: str,
        key: str,
        payload: Any,
        status: ResultStatus = "ok",
        error: str | None = None,
    ) -> None:
        """Store (or replace) one unit of work of a run. A failed unit needs ``error``, a plain
        message the user will see; it is retried when the run resumes. Many small results: wrap
        the loop in ``transaction()`` to write them in one step."""
        with self.transaction():
            self._conn.execute(*_result_row(run_id, kind, key, payload, status, error))

    def get_results(
        self, run_id: int, kind: str | None = None, status: ResultStatus | None = None
    ) -> list[Result]:
        """Results of a run (optionally of one kind / status) in the order first stored."""
        self._flush_before_reading()
        clauses: list[str] = ["run_id = ?"]
        params: list[int | str] = [run_id]
        if kind is not None:
            clauses.append("kind = ?")
            params.append(kind)
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT id, run_id, kind, key, payload, status, error, created_at, updated_at "
                "FROM results WHERE " + " AND ".join(clauses) + " ORDER BY id",
                params,
            ).fetchall()
        return [
            Result(id=r[0], run_id=r[1], kind=r[2], key=r[3], payload=_loads(r[4], self._path),
                   status=r[5], error=r[6], created_at=r[7], updated_at=r[8])
            for r in rows
        ]

    def finished_keys(self, run_id: int, kind: str) -> set[str]:
        """Keys of the results of ``kind`` that finished ('ok'): what a resumed run skips.
        Failed units are not included, so they are tried again."""
        self._flush_before_reading()
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT key FROM results WHERE run_id = ? AND kind = ? AND status = 'ok'",
                (run_id, kind),
            ).fetchall()
        return {row[0] for row in rows}

    # ------------------------------------------------------------------- LLM cache and log
    def llm_cache_get(self, cache_key: str) -> dict[str, Any] | None:
        """The stored call for ``cache_key``, or None. Keys: cache_key, model, api_base,
        request, response (as stored), prompt_tokens, completion_tokens, cost (None = unknown),
        latency_s, run_id, created_at."""
        with self._reading() as conn:
            if self._call_keys is None:
                self._load_call_keys(conn)
            row = conn.execute(
                "SELECT cache_key, model, api_base, request, response, prompt_tokens, "
                "completion_tokens, cost, latency_s, run_id, created_at FROM llm_calls "
                "WHERE cache_key = ?",
                (cache_key,),
            ).fetchone()
        if row is None:
            return None
        return {
            "cache_key": row[0], "model": row[1], "api_base": row[2],
            "request": _loads(row[3], self._path), "response": _loads(row[4], self._path),
            "prompt_tokens": row[5], "completion_tokens": row[6],
            "cost": row[7], "latency_s": row[8], "run_id": row[9], "created_at": row[10],
        }

    def llm_cache_may_have(self, cache_key: str) -> bool:
        """False only when no call with ``cache_key`` is stored or queued, known without
        reading the file: a call that is not cached yet needs no look-up (and no wait for a
        commit in progress). True when it may be stored, or before the first look-up."""
        keys = self._call_keys
        return keys is None or self._read_only or cache_key in keys

    def _load_call_keys(self, conn: sqlite3.Connection) -> None:
        """Read every stored call's key (with ``self._mutex`` held, so no commit runs) and the
        queued ones; from now on every new key is added as it is stored or queued."""
        with self._queue_lock:
            keys = {params[0] for sql, params in self._queued if sql == _CALL_SQL}
            keys.update(row[0] for row in conn.execute("SELECT cache_key FROM llm_calls"))
            self._call_keys = keys

    def llm_cache_put(
        self,
        cache_key: str,
        *,
        model: str,
        api_base: str | None,
        request: Any,
        response: Any,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost: float | None = None,
        latency_s: float | None = None,
        run_id: int | None = None,
    ) -> bool:
        """Log a successful LLM call; it also serves as the cache entry for ``cache_key``.
        Returns False (and changes nothing) when the key is already stored.

        Store only answers worth reusing: never errors, timeouts or refusals to follow the
        format that will be retried (the caller decides). ``request`` must not contain API
        keys. ``cost`` None means unknown, 0.0 means free (a local model)."""
        with self.transaction():
            cursor = self._conn.execute(*_call_row(
                cache_key, model=model, api_base=api_base, request=request, response=response,
                prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cost=cost,
                latency_s=latency_s, run_id=run_id))
            if self._call_keys is not None:
                self._call_keys.add(cache_key)
            return cursor.rowcount > 0

    # ------------------------------------------------------------- queued writes (hot path)
    def queue_result(self, run_id: int, kind: str, key: str, payload: Any,
                     status: ResultStatus = "ok", error: str | None = None) -> None:
        """:meth:`put_result`, written at the next group commit (``await committed()`` or
        :meth:`flush`); until then it is not on disk (this project's reads of results flush
        the queue first; another reader of the file does not see it)."""
        self._queue(_result_row(run_id, kind, key, payload, status, error))

    def queue_llm_call(self, cache_key: str, **call: Any) -> None:
        """:meth:`llm_cache_put` (the same keyword arguments), written at the next group commit
        (see :meth:`queue_result`)."""
        self._queue(_call_row(cache_key, **call), call_key=cache_key)

    def _queue(self, row: tuple[str, tuple[Any, ...]], call_key: str | None = None) -> None:
        self._check_open()
        if self._read_only:
            raise ProjectUnwritable(
                f"{self._path} was opened read-only, so nothing can be changed in it. "
                "Use Save As to keep a copy you can change."
            )
        with self._queue_lock:
            self._queued.append(row)
            if call_key is not None and self._call_keys is not None:
                self._call_keys.add(call_key)

    @property
    def queued(self) -> int:
        """How many queued writes are not committed yet."""
        with self._queue_lock:
            return len(self._queued)

    def flush(self) -> None:
        """Commit every queued write now, in one transaction (nothing to do when none is
        queued). If the commit fails, the writes stay queued and the error is raised."""
        with self._mutex:
            if self._depth:
                return  # inside someone's transaction: its rollback would lose the queue
            with self._queue_lock:
                batch, self._queued = self._queued, []
            if not batch:
                return
            try:
                with self.transaction():
                    for sql, params in batch:
                        self._conn.execute(sql, params)
            except BaseException:
                with self._queue_lock:
                    self._queued[:0] = batch  # kept for the next attempt, in order
                raise

    async def committed(self) -> None:
        """Return once every write queued before this call is on disk. The commit runs in a
        worker thread; the writes queued while one commit is being flushed share the next one
        (a group commit). A cancelled caller does not cancel the commit."""
        loop = asyncio.get_running_loop()
        committer = self._committers.get(loop)
        if committer is None:
            committer = self._committers[loop] = _GroupCommit(self)
        await committer.wait()

    def llm_usage(self, run_id: int | None = None) -> LLMUsage:
        """Totals of the stored calls of one run (all runs when None). Cache hits are not calls
        and are not counted here."""
        self._flush_before_reading()
        sql = ("SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), "
               "COALESCE(SUM(completion_tokens), 0), COALESCE(SUM(cost), 0.0), "
               "SUM(CASE WHEN cost IS NULL THEN 1 ELSE 0 END), "
               "COALESCE(SUM(CASE WHEN json_valid(response) THEN "
               "json_extract(response, '$.cached_prompt_tokens') END), 0) "
               "FROM llm_calls")
        with self._reading() as conn:
            if run_id is None:
                row = conn.execute(sql).fetchone()
            else:
                row = conn.execute(sql + " WHERE run_id = ?", (run_id,)).fetchone()
        return LLMUsage(calls=int(row[0]), prompt_tokens=int(row[1]),
                        completion_tokens=int(row[2]), cost=float(row[3]),
                        calls_without_cost=int(row[4] or 0),
                        cached_prompt_tokens=int(row[5] or 0))

    def llm_call_notes(self, field: str, run_id: int | None = None
                       ) -> list[tuple[int | None, Any]]:
        """``request[field]`` of every stored call, oldest first (of one run, or all when
        None): (run_id, value), value None when the call has no such field (stored before the
        field was kept). ``field`` is a top-level name of the request (letters, digits, _)."""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", field):
            raise ValueError(f"not a field name of a request: {field!r}")
        self._flush_before_reading()
        sql = ("SELECT run_id, CASE WHEN json_valid(request) THEN "
               f"json_quote(json_extract(request, '$.{field}')) END FROM llm_calls")
        with self._reading() as conn:
            if run_id is None:
                rows = conn.execute(sql + " ORDER BY rowid").fetchall()
            else:
                rows = conn.execute(sql + " WHERE run_id = ? ORDER BY rowid",
                                    (run_id,)).fetchall()
        return [(row[0], json.loads(row[1]) if row[1] else None) for row in rows]

    def llm_latencies(self, model: str, *, limit: int = 50) -> list[float]:
        """Seconds per call of the latest ``limit`` stored calls to ``model`` (newest first;
        calls without a recorded latency are left out): what a time estimate is based on."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT latency_s FROM llm_calls WHERE model = ? AND latency_s IS NOT NULL "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?", (model, int(limit))).fetchall()
        return [float(r[0]) for r in rows]

    def llm_call_sizes(self, model: str, *, limit: int = 200) -> list[tuple[int, int, float]]:
        """(prompt tokens, completion tokens, seconds) of the latest ``limit`` stored calls to
        ``model`` that recorded all three (newest first): how fast this model answers for its
        size of question and answer, for time estimates."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT prompt_tokens, completion_tokens, latency_s FROM llm_calls WHERE model = ? "
                "AND latency_s IS NOT NULL AND latency_s > 0 AND prompt_tokens > 0 "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?", (model, int(limit))).fetchall()
        return [(int(r[0]), int(r[1]), float(r[2])) for r in rows]

    # -------------------------------------------------------------------------------- info
    def info(self) -> ProjectInfo:
        """A summary of what the project holds."""
        self._flush_before_reading()
        with self._reading() as conn:
            def count(sql: str) -> int:
                try:
                    return int(conn.execute(sql).fetchone()[0])
                except sqlite3.OperationalError:  # table missing in an older format
                    return 0

            try:
                by_status = dict(
                    conn.execute("SELECT status, COUNT(*) FROM runs GROUP BY status").fetchall()
                )
            except sqlite3.OperationalError:
                by_status = {}
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            info = ProjectInfo(
                path=self._path,
                schema_version=version,
                app_version=meta.get("app_version") or "",
                created_at=meta.get("created_at") or "",
                modified_at=meta.get("modified_at") or "",
                method=meta.get("method") or "",
                title=meta.get("title") or "",
                inputs=count("SELECT COUNT(*) FROM inputs"),
                artefacts=count("SELECT COUNT(*) FROM artefacts"),
                edited_artefacts=count("SELECT COUNT(*) FROM artefacts WHERE edited"),
                edits=count("SELECT COUNT(*) FROM edits"),
                runs=sum(by_status.values()),
                runs_by_status=by_status,
                results=count("SELECT COUNT(*) FROM results"),
                failed_results=count("SELECT COUNT(*) FROM results WHERE status = 'failed'"),
                orphaned_results=count("SELECT COUNT(*) FROM results WHERE run_id NOT IN "
                                       "(SELECT id FROM runs)"),
            )
        try:
            usage = self.llm_usage()
        except ProjectError:  # no LLM log in an older format
            usage = LLMUsage()
        return dataclasses.replace(info, llm=usage)

    # ----------------------------------------------------------------------------- private
    def _check_open(self) -> None:
        if self._closed:
            raise ProjectError(f"The project {self._path} is closed.")

    def _flush_before_reading(self) -> None:
        if not self._read_only and not self._closed:
            self.flush()

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._mutex:
            self._check_open()
            try:
                yield self._conn
            except sqlite3.IntegrityError:
                raise
            except sqlite3.Error as exc:
                if _interrupted(exc):
                    raise _interruption(self._interrupting) from None
                raise _translate(exc, self._path, "reading the project") from exc
            finally:
                self._interrupting = False

    def interrupt(self) -> None:
        """Stop the query running now (from any thread; the app's Cancel calls it through the
        run's cancel token): it raises :class:`core.runs.Cancelled` where it ran. A write that
        was stopped is rolled back and kept queued (nothing finished is lost). Nothing happens
        when no query is running."""
        if self._closed:
            return
        self._interrupting = True
        try:
            self._conn.interrupt()
        except sqlite3.Error:
            pass

    def _meta(self, key: str) -> str | None:
        with self._reading() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _holds_nothing(self) -> bool:
        for table in ("inputs", "artefacts", "runs", "llm_calls", "edits"):
            if self._conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone():
                return False
        return True

    def _resolve_artefact(self, artefact: int | tuple[str, str] | Artefact) -> Artefact:
        if isinstance(artefact, Artefact):
            found = self.get_artefact(artefact.id)
            label = f"{artefact.kind} '{artefact.key}'"
        elif isinstance(artefact, int):
            found = self.get_artefact(artefact)
            label = f"item {artefact}"
        else:
            kind, key = artefact
            found = self.get_artefact(kind, key)
            label = f"{kind} '{key}'"
        if found is None:
            raise ProjectError(f"The {label} is no longer in the project; it may have been "
                               "deleted. Reload the list and try again.")
        return found


_RUN_SQL = ("SELECT id, method, step, settings, status, started_at, finished_at, message "
            "FROM runs")


# ------------------------------------------------------------------------------------- rows
def _input(row: tuple) -> ProjectInput:
    payload = row[4]
    value = payload if isinstance(payload, bytes) else _loads(payload)
    return ProjectInput(id=row[0], kind=row[1], name=row[2], content_hash=row[3], payload=value,
                        created_at=row[5])


def _artefact(row: tuple) -> Artefact:
    return Artefact(id=row[0], kind=row[1], key=row[2], payload=_loads(row[3]), origin=row[4],
                    run_id=row[5], edited=bool(row[6]), created_at=row[7], updated_at=row[8])


def _run(row: tuple) -> Run:
    return Run(id=row[0], method=row[1], step=row[2], settings=_loads(row[3]), status=row[4],
               started_at=row[5], finished_at=row[6], message=row[7] or "")


# ------------------------------------------------------------------------------------- JSON
def _json_default(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    raise TypeError(f"{type(value).__name__} cannot be stored in a project (not JSON)")


def _dumps(value: Any) -> str | None:
    """JSON text for a value (pydantic models via ``model_dump``); None stays NULL. NaN and
    infinity are refused: a missing number is stored as None, never as NaN."""
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=_json_default)


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=_json_default,
                      sort_keys=True, separators=(",", ":"))


def _loads(text: str | bytes | None, path: Path | None = None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:  # damaged bytes inside a stored value (SQLite itself found no fault)
        raise ProjectDamaged(
            _damaged_message(path or Path("The project file"), "a value stored in it can no "
                             "longer be read")
        ) from None


def _normalise(value: Any) -> Any:
    """The value as it reads back from the file (tuples become lists, models dicts, ...)."""
    return _loads(_dumps(value))


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _split_path(path: str) -> list[str | int]:
    return [int(p) if p.lstrip("-").isdigit() else p for p in path.split(".")] if path else []


def _get_path(payload: Any, path: str) -> Any:
    node = payload
    for part in _split_path(path):
        if isinstance(part, int) and isinstance(node, list):
            node = node[part] if -len(node) <= part < len(node) else None
        elif isinstance(node, dict):
            node = node.get(str(part))
        else:
            return None
        if node is None:
            return None
    return node


def _set_path(payload: Any, path: str, value: Any) -> Any:
    """A copy of ``payload`` with ``value`` at the dotted ``path`` ('' replaces it all)."""
    parts = _split_path(path)
    if not parts:
        return value
    root = _normalise(payload)
    if root is None:
        root = {}
    node = root
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not isinstance(part, int) or not -len(node) <= part < len(node):
                raise ValueError(f"'{path}' does not point into the list at '{part}'")
            if last:
                node[part] = value
            else:
                node = node[part]
        elif isinstance(node, dict):
            name = str(part)
            if last:
                node[name] = value
            else:
                if not isinstance(node.get(name), (dict, list)):
                    node[name] = {}
                node = node[name]
        else:
            raise TypeError(f"'{path}' does not point into the artefact's contents")
    return root


# ------------------------------------------------------------------------------- file checks
def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _absolute(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(Path(path).expanduser()))


def _never_written(path: Path) -> bool:
    """A regular file of 0 bytes: a project whose creation was cut off (it holds nothing)."""
    try:
        return path.is_file() and path.stat().st_size == 0
    except OSError:
        return False


_RESULT_SQL = (
    "INSERT INTO results(run_id, kind, key, payload, status, error, created_at, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT(run_id, kind, key) DO UPDATE SET payload = excluded.payload, "
    "status = excluded.status, error = excluded.error, updated_at = excluded.updated_at"
)
_CALL_SQL = (
    "INSERT OR IGNORE INTO llm_calls(cache_key, model, api_base, request, response, "
    "prompt_tokens, completion_tokens, cost, latency_s, run_id, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _result_row(run_id: int, kind: str, key: str, payload: Any, status: str,
                error: str | None) -> tuple[str, tuple[Any, ...]]:
    if status not in RESULT_STATUSES:
        raise ValueError(f"status must be 'ok' or 'failed', not {status!r}")
    if status == "failed" and not (error and error.strip()):
        raise ValueError("a failed result needs an error message the user can read")
    now = _now()
    return _RESULT_SQL, (run_id, kind, key, _dumps(payload), status, error, now, now)


def _call_row(cache_key: str, *, model: str, api_base: str | None, request: Any, response: Any,
              prompt_tokens: int = 0, completion_tokens: int = 0, cost: float | None = None,
              latency_s: float | None = None,
              run_id: int | None = None) -> tuple[str, tuple[Any, ...]]:
    return _CALL_SQL, (cache_key, model, api_base, _dumps(request), _dumps(response),
                       int(prompt_tokens or 0), int(completion_tokens or 0),
                       None if cost is None else float(cost),
                       None if latency_s is None else float(latency_s), run_id, _now())


class _GroupCommit:
    """The group commit of one project on one event loop: the callers waiting while a commit
    is being flushed share the next one."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.waiting: list[asyncio.Future[None]] = []
        self.task: asyncio.Future[None] | None = None

    async def wait(self) -> None:
        done = asyncio.get_running_loop().create_future()
        self.waiting.append(done)
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._commit())
        await asyncio.shield(done)

    async def _commit(self) -> None:
        loop = asyncio.get_running_loop()
        while self.waiting:
            batch, self.waiting = self.waiting, []
            try:
                await loop.run_in_executor(None, self.project.flush)
            except Exception as exc:  # noqa: BLE001 - handed to every waiting caller
                for done in batch:
                    if not done.done():
                        done.set_exception(exc)
            except BaseException:  # the loop is shutting down: close() flushes what is left
                for done in batch + self.waiting:
                    done.cancel()
                raise
            else:
                for done in batch:
                    if not done.done():
                        done.set_result(None)


def _journal(path: Path) -> Path:
    return path.with_name(path.name + "-journal")


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.normcase(str(a.resolve())) == os.path.normcase(str(b.resolve()))


def untitled_folder() -> Path:
    """Where untitled (not yet saved) projects live."""
    folder = paths.user_data_dir() / UNTITLED_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _is_untitled(path: Path) -> bool:
    try:
        return _same_file(path.parent, untitled_folder())
    except OSError:
        return False


def _check_name(target: Path) -> None:
    """Refuse a project name Windows cannot hold (see :func:`core.paths.file_name_problem`)
    before anything is written."""
    problem = paths.file_name_problem(target.name)
    if problem is not None:
        raise ProjectError(problem)


def _check_folder(folder: Path) -> None:
    if not folder.is_dir():
        raise ProjectUnwritable(
            f"The folder {folder} does not exist (or is not a folder). Choose another folder, "
            "for example your Documents folder."
        )


def _unwritable(folder: Path, exc: BaseException) -> ProjectUnwritable:
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return ProjectUnwritable(
        f"EvalDesk could not write a project file in the folder {folder} ({reason}). "
        "Choose another folder, for example your Documents folder."
    )


def _connect(path: Path, mode: str) -> sqlite3.Connection:
    """A connection in autocommit mode (we issue BEGIN/COMMIT ourselves); ``mode`` is the
    SQLite URI mode: 'ro', 'rw' (must exist) or 'rwc' (may create)."""
    uri = f"{path.as_uri()}?mode={mode}"
    conn = sqlite3.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S, isolation_level=None,
                           check_same_thread=False)
    try:
        _harden(conn)
    except BaseException:
        conn.close()
        raise
    return conn


#: SQLite steps between two calls of :func:`_let_python_in` (a few thousand per millisecond).
_PROGRESS_STEPS = 20_000


def _harden(conn: sqlite3.Connection) -> None:
    """SQLite's settings for a file that may come from anyone: functions with side effects and
    virtual tables may not be used by the schema (``trusted_schema``); with Python 3.12 or later
    also defensive mode (no writing to the schema or SQLite's own tables by SQL) and triggers and
    views switched off (EvalDesk makes none; :func:`_check_schema` refuses files that have them
    on every Python). Python 3.11 has no ``Connection.setconfig``: there ``trusted_schema`` and
    the schema check are what guards. Every query gives Python a chance to act (Ctrl+C) every
    few thousand steps, and stops at :meth:`Project.interrupt`."""
    conn.execute("PRAGMA trusted_schema = OFF")
    setconfig = getattr(conn, "setconfig", None)
    if setconfig is not None:  # Python 3.12+
        for name, value in (("SQLITE_DBCONFIG_DEFENSIVE", True),
                            ("SQLITE_DBCONFIG_TRUSTED_SCHEMA", False),
                            ("SQLITE_DBCONFIG_ENABLE_TRIGGER", False),
                            ("SQLITE_DBCONFIG_ENABLE_VIEW", False)):
            option = getattr(sqlite3, name, None)
            if option is not None:
                setconfig(option, value)
    conn.set_progress_handler(_let_python_in, _PROGRESS_STEPS)


def _let_python_in() -> int:
    """SQLite's progress handler: running any Python here lets a pending Ctrl+C (SIGINT) raise
    KeyboardInterrupt, which stops the query ("interrupted"; see :func:`_interruption`)."""
    return 0


def _interrupted(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and (
        getattr(exc, "sqlite_errorname", "") == "SQLITE_INTERRUPT" or str(exc) == "interrupted")


def _interruption(cancelled: bool) -> BaseException:
    """What a stopped query means: Cancel in the app (:meth:`Project.interrupt`) or Ctrl+C."""
    if cancelled:
        return Cancelled()
    return KeyboardInterrupt()


def _prepare(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA foreign_keys = ON")
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if str(mode).lower() != "delete":
        conn.execute("PRAGMA journal_mode = DELETE")


def _check_header(path: Path) -> int:
    """Read the SQLite header without SQLite: refuses other files, other programs' databases
    and newer formats before anything could touch the file. Returns the format number."""
    if path.is_dir():
        raise NotAProject(f"{path} is a folder, not an EvalDesk project file.")
    try:
        with open(path, "rb") as handle:
            head = handle.read(100)
    except FileNotFoundError:
        raise ProjectError(f"There is no file {path}. It may have been moved or renamed.") from None
    except PermissionError:
        raise ProjectError(
            f"EvalDesk may not read {path}. Check that your account may open this file."
        ) from None
    except OSError as exc:
        raise ProjectError(f"{path} could not be read ({exc.strerror or exc}).") from exc
    if not head:
        raise NotAProject(f"{path} is empty: it is not an EvalDesk project.")
    if not head.startswith(_SQLITE_MAGIC):
        if path.suffix.lower() == PROJECT_SUFFIX:
            raise NotAProject(
                f"{path} is not a readable EvalDesk project: it is badly damaged or another kind "
                "of file with a project's name. The file was not changed. Open a backup copy if "
                "you have one."
            )
        hint = ""
        if path.suffix.lower() in {".xlsx", ".xls", ".csv", ".pdf", ".txt", ".md", ".json"}:
            hint = " To use this file, start a new project and import it there."
        raise NotAProject(
            f"{path} is not an EvalDesk project file (those end in {PROJECT_SUFFIX}).{hint}"
        )
    if len(head) < 100:
        raise ProjectDamaged(_damaged_message(path, "the file is cut short"))
    version = int.from_bytes(head[60:64], "big")
    app_id = int.from_bytes(head[68:72], "big")
    if app_id != APPLICATION_ID:
        raise NotAProject(
            f"{path} is a database of another program, not an EvalDesk project. It was not "
            "changed."
        )
    if version > SCHEMA_VERSION:
        raise ProjectTooNew(
            f"{path} was written by a newer EvalDesk (format {version}; this EvalDesk reads up "
            f"to format {SCHEMA_VERSION}). Update EvalDesk to open it. The file was not changed."
        )
    return version


class _NeedsRecovery(Exception):
    """A crash left a half-written change that SQLite must roll back (needs write access)."""


def _validate(conn: sqlite3.Connection, path: Path) -> int:
    """Check the file's integrity and contents through ``conn``; return its format number."""
    try:
        checks = [row[0] for row in conn.execute("PRAGMA quick_check(5)").fetchall()]
        if checks != ["ok"]:
            raise ProjectDamaged(_damaged_message(path, "; ".join(checks)[:200]))
        _check_schema(conn, path)
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if app_id != APPLICATION_ID:
            raise NotAProject(f"{path} is a database of another program, not an EvalDesk project.")
        if version > SCHEMA_VERSION:
            raise ProjectTooNew(
                f"{path} was written by a newer EvalDesk (format {version}; this EvalDesk reads "
                f"up to format {SCHEMA_VERSION}). Update EvalDesk to open it. The file was not "
                "changed."
            )
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
        except sqlite3.OperationalError:
            row = None
        if not row or row[0] != "EvalDesk":
            raise ProjectDamaged(_damaged_message(path, "its table of contents is missing"))
        return version
    except ProjectError:
        raise
    except sqlite3.Error as exc:
        if _interrupted(exc):
            raise KeyboardInterrupt() from None
        name = getattr(exc, "sqlite_errorname", "")
        if name in ("SQLITE_READONLY_ROLLBACK", "SQLITE_READONLY_RECOVERY"):
            raise _NeedsRecovery() from exc
        raise _translate(exc, path, "opening the project") from exc


#: The tables EvalDesk makes (a view or anything else under one of these names is refused).
_OUR_TABLES = ("meta", "inputs", "runs", "artefacts", "edits", "results", "llm_calls")


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file whose schema holds what EvalDesk never makes: triggers and views run SQL
    of their own whenever a table is read or written (rewrite scores, never end). Read from
    ``sqlite_master`` only, so nothing of theirs runs."""
    rows = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view') OR "
        f"(name IN ({', '.join('?' * len(_OUR_TABLES))}) AND type <> 'table') ORDER BY rowid",
        _OUR_TABLES,
    ).fetchall()
    if not rows:
        return
    found = [f'the {kind} "{name}"' for kind, name in rows]
    listed = ", ".join(found[:10]) + (f" and {len(found) - 10} more" if len(found) > 10 else "")
    drops = "; ".join(f'DROP {str(kind).upper()} "{name}"' for kind, name in rows[:10])
    raise ProjectUnsafe(
        f"{path} holds {listed}, which EvalDesk never puts in a project: such things run their "
        "own commands whenever the project is read or saved (they can change scores or never "
        "finish), so EvalDesk did not open it. The file was not changed. Ask whoever sent it "
        "for a copy saved by EvalDesk itself; or, if you trust the file, remove them with an "
        f"SQLite tool (for example DB Browser for SQLite: {drops}) and open it again.",
        found,
    )


def _damaged_message(path: Path, detail: str) -> str:
    return (
        f"{path} is damaged and cannot be opened. The file was not changed. Open a backup copy "
        f"if you have one (for example an earlier copy you sent by email). Details: {detail}."
    )


def _translate(exc: sqlite3.Error, path: Path, action: str) -> ProjectError:
    """A plain :class:`ProjectError` for an SQLite error that happened while ``action``."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    lowered = text.lower()
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in lowered:
        return ProjectLocked(
            f"{path} is in use by another program, so {action} could not be done. Close the "
            "other program (or the other EvalDesk window) and try again."
        )
    if name == "SQLITE_FULL" or "disk is full" in lowered:
        return ProjectError(
            f"The disk holding {path} is full, so {action} could not be done. Free some space "
            "and try again; work saved before this is kept."
        )
    if name.startswith("SQLITE_READONLY") or "readonly" in lowered:
        return ProjectUnwritable(
            f"EvalDesk may not write to {path} ({action}). Use Save As to keep a copy in a "
            "folder you can write to."
        )
    if name.startswith("SQLITE_CORRUPT") or name == "SQLITE_NOTADB" or "malformed" in lowered \
            or "not a database" in lowered:
        return ProjectDamaged(_damaged_message(path, text))
    if "could not decode" in lowered:  # garbage inside a stored text: never shown to the user
        return ProjectDamaged(_damaged_message(path, "a text stored in it has broken bytes"))
    if name.startswith("SQLITE_CANTOPEN"):
        return ProjectError(
            f"{path} could not be opened ({text}). Check that the file and its folder still "
            "exist and that you may use them."
        )
    if name.startswith("SQLITE_IOERR"):
        return ProjectError(
            f"Reading or writing {path} failed ({text}). If the file is on a USB stick or a "
            "network drive, check that it is still connected, then try again."
        )
    return ProjectError(f"{action.capitalize()} failed for {path}: {text}")


# ---------------------------------------------------------------------------------- upgrades
def _apply_migrations(conn: sqlite3.Connection, version: int) -> None:
    """Run ``MIGRATIONS`` from ``version`` up to ``SCHEMA_VERSION`` inside the caller's
    transaction."""
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise ProjectError(f"EvalDesk has no way to upgrade project format {version}.")
        step(conn)
        version += 1
        conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                     (str(version),))


def _backup_path(path: Path, version: int) -> Path:
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    suffix = path.suffix or PROJECT_SUFFIX
    candidate = path.with_name(f"{stem}.before-v{version}{suffix}")
    n = 2
    while candidate.exists():
        candidate = path.with_name(f"{stem}.before-v{version}-{n}{suffix}")
        n += 1
    return candidate


def _upgrade(path: Path, version: int) -> None:
    """Keep a copy beside ``path``, then upgrade it to ``SCHEMA_VERSION`` in one transaction."""
    backup = _backup_path(path, SCHEMA_VERSION)
    try:
        name = str(paths.temp_file_beside(backup, prefix=".evaldesk-backup-", suffix=".tmp"))
        shutil.copyfile(path, name)
        os.replace(name, backup)
    except OSError as exc:
        if "name" in locals():
            Path(name).unlink(missing_ok=True)
        raise ProjectUnwritable(
            f"{path} uses an older project format and must be upgraded, but EvalDesk could not "
            f"keep a copy of it first in {path.parent} ({exc.strerror or exc}). The file was not "
            "changed. Copy it to a folder you can write to and open the copy."
        ) from exc
    conn = _connect(path, "rw")
    try:
        conn.execute("BEGIN IMMEDIATE")
        _apply_migrations(conn, version)
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('app_version', ?)",
                     (__version__,))
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        detail = _translate(exc, path, "upgrading") if isinstance(exc, sqlite3.Error) else exc
        raise ProjectError(
            f"{path} could not be upgraded from format {version} to {SCHEMA_VERSION} "
            f"({detail}). The file was not changed; a copy is at {backup}."
        ) from exc
    finally:
        conn.close()


# ------------------------------------------------------------------------------------- locks
#: Where a lock file's operating-system lock sits on Windows: one byte far past the owner's
#: details, which stay readable (Windows' locks are mandatory: a locked byte cannot be read).
_WINDOWS_LOCK_OFFSET = 1 << 30


def _lock_path(path: Path) -> Path:
    """The lock file of a project, beside its real file: a project opened through a symbolic
    link (or a folder that is one) is locked where the project really is."""
    real = Path(os.path.realpath(path))
    return real.with_name(real.name + LOCK_SUFFIX)


def _os_lock(fd: int) -> bool:
    """Take the operating system's exclusive lock on the open file ``fd`` without waiting.
    False when another open of the file holds it (in this process or another). The lock goes
    with the open file: closing it, or the process ending in any way (kill -9, a crash, a power
    cut of the computer that holds it), lets it go. A file system that keeps no locks counts as
    taken (nothing better can be known there)."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
            return True
        raise
    return True


def _os_unlock(fd: int) -> None:
    try:
        if sys.platform == "win32":
            import msvcrt

            os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError:
        pass  # closing the file lets it go anyway


def _still_there(fd: int, lock: Path) -> bool:
    """Is ``fd`` still the file at ``lock`` (not one its last holder deleted meanwhile)?"""
    try:
        mine, there = os.fstat(fd), os.stat(lock)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError, ImportError):
        return ""


class _LockFile:
    """The "already open" guard of a project: the operating system's own lock on
    ``<project>.lock``, held while the project is open and let go by the system when the process
    ends, however it ends (as SQLite locks its own files). The text of the file (process id,
    computer, user, since when) is only information for the message when the project is in
    use: a file left by a crashed EvalDesk holds no lock and is simply taken over, even when its
    process id now belongs to another program."""

    def __init__(self, path: Path, fd: int, token: str) -> None:
        self.path = path
        self.token = token
        self._finalizer = weakref.finalize(self, _LockFile._let_go, path, fd, token)

    @staticmethod
    def _read(lock: Path) -> dict[str, Any] | None:
        try:
            with open(lock, "rb") as handle:
                data = json.loads(handle.read(4096).decode("utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    @classmethod
    def owner_if_live(cls, project: Path) -> dict[str, Any] | None:
        """What the lock file of ``project`` says while an EvalDesk has the project open (its
        lock is held: in another process, or in this one); None when nobody has it open."""
        lock = _lock_path(project)
        try:
            fd = os.open(lock, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            return None
        try:
            if _os_lock(fd):
                _os_unlock(fd)
                return None
        except OSError:
            return None
        finally:
            os.close(fd)
        return cls._read(lock) or {}

    @classmethod
    def acquire(cls, project: Path, *, break_lock: bool = False) -> _LockFile | None:
        """Lock ``project`` for this process. :class:`ProjectLocked` (with what the lock file
        says) when it is open elsewhere; with ``break_lock`` (the user said nobody is using it)
        the project is opened anyway, unguarded: None."""
        lock = _lock_path(project)
        token = secrets.token_hex(8)
        record = {
            "pid": os.getpid(), "host": socket.gethostname(), "user": _login(),
            "since": _now(), "app_version": __version__, "token": token,
        }
        for _attempt in range(5):
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
            except OSError as exc:
                raise _unwritable(lock.parent, exc) from exc
            try:
                taken = _os_lock(fd)
            except OSError as exc:
                os.close(fd)
                raise _unwritable(lock.parent, exc) from exc
            if not taken:
                os.close(fd)
                if break_lock:
                    return None
                owner = cls._read(lock) or {}
                raise ProjectLocked(_locked_message(project, owner), owner)
            if not _still_there(fd, lock):  # its last holder deleted it meanwhile: again
                _os_unlock(fd)
                os.close(fd)
                continue
            try:
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
                os.write(fd, json.dumps(record).encode("utf-8"))
            except OSError:
                pass  # the lock is what guards; its text is only information
            return cls(lock, fd, token)
        raise ProjectLocked(_locked_message(project, {}), {})

    def release(self) -> None:
        self._finalizer()

    @staticmethod
    def _let_go(lock: Path, fd: int, token: str) -> None:
        owner = _LockFile._read(lock)
        ours = owner is not None and owner.get("token") == token
        if ours and sys.platform != "win32":
            # deleted while still locked: whoever opened it meanwhile sees that and starts anew
            with contextlib.suppress(OSError):
                lock.unlink()
        _os_unlock(fd)
        with contextlib.suppress(OSError):
            os.close(fd)
        if ours and sys.platform == "win32":  # an open file cannot be deleted there
            with contextlib.suppress(OSError):
                lock.unlink()


def _locked_message(project: Path, owner: dict[str, Any]) -> str:
    if not owner:
        return (f"{project} is being opened by another EvalDesk right now. Wait a moment and try "
                "again.")
    since = owner.get("since", "")
    when = f" since {since}" if since else ""
    if owner.get("host") == socket.gethostname():
        if int(owner.get("pid") or 0) == os.getpid():
            return f"{project} is already open in this EvalDesk. Switch to its window."
        return (f"{project} is already open in another EvalDesk window on this computer "
                f"(process {owner.get('pid')}{when}). Switch to that window, or close it first.")
    who = owner.get("user") or "someone"
    return (f"{project} is open in EvalDesk on the computer '{owner.get('host')}' "
            f"(user {who}{when}). Close it there first. If nobody is using it any more, "
            "choose to open it anyway.")
