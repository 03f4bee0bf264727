"""The response cache, which is also the audit log of every LLM call.

A cache is anything with ``get(key) -> dict | None`` and ``put(key, record)``
(:class:`ResponseCache`); the gateway calls them in an executor thread unless the cache says
``slow_io = False`` (a dict needs no thread). Three kinds:

* :class:`ProjectCache` stores calls in the open project file (``core.project.Project``): the
  normal case; a re-run of a finished step then makes no calls.
* :func:`user_cache`: without an open project (the CLI, a connection test), a per-user project
  file ``llm-cache.evaldesk`` in the user cache folder.
* :class:`MemoryCache`: a dict, for tests and for calls that must not be cached on disk.

Only answers worth reusing are stored: never errors, never an answer that failed validation.
API keys are never part of a record.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

log = logging.getLogger(__name__)

#: Bump when the meaning of a cache key changes (old entries are then simply not found).
KEY_VERSION = 1
USER_CACHE_FILE = "llm-cache.evaldesk"


def cache_key(
    *,
    model: str,
    api_base: str,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    repeat: int = 0,
    template_version: str = "",
) -> str:
    """The SHA-256 of everything that decides an answer: model, where it runs, the messages, the
    generation parameters (temperature, seed, max tokens, schema), the repeat index and the
    prompt-template version."""
    payload = {
        "v": KEY_VERSION,
        "model": model,
        "api_base": api_base,
        "messages": messages,
        "params": params,
        "repeat": int(repeat),
        "template_version": template_version,
    }
    text = json.dumps(
        payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class CallRecord:
    """One successful call, as stored. ``response`` holds at least ``content``; ``cost`` None
    means the price is unknown (0.0 means free)."""

    model: str
    api_base: str
    request: dict[str, Any]
    response: dict[str, Any]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    latency_s: float = 0.0
    run_id: int | None = None


@runtime_checkable
class ResponseCache(Protocol):
    def get(self, key: str) -> dict[str, Any] | None:
        """The stored ``response`` dict for ``key`` (with at least ``content``), or None."""

    def put(self, key: str, record: CallRecord) -> None:
        """Store a successful call under ``key`` (keeping the first one if already there)."""


class MemoryCache:
    """A cache in a dict (tests, throw-away calls). ``records`` keeps every stored call."""

    slow_io = False

    def __init__(self) -> None:
        self.records: dict[str, CallRecord] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            record = self.records.get(key)
        return dict(record.response) if record is not None else None

    def put(self, key: str, record: CallRecord) -> None:
        with self._lock:
            self.records.setdefault(key, record)

    def __len__(self) -> int:
        return len(self.records)


class ProjectCache:
    """Stores calls in a project file: ``project.llm_cache_get`` / ``llm_cache_put``. The
    gateway calls it from an executor thread (``slow_io``); the project is thread-safe."""

    slow_io = True

    def __init__(self, project: Any) -> None:
        self.project = project

    def get(self, key: str) -> dict[str, Any] | None:
        row = self.project.llm_cache_get(key)
        if not row:
            return None
        response = row.get("response")
        if not isinstance(response, dict) or "content" not in response:
            return None  # written by something else: not an answer we can reuse
        return response

    def may_have(self, key: str) -> bool:
        """False when the project surely has no call stored under ``key`` (no look-up needed)."""
        return self.project.llm_cache_may_have(key)

    def put_many(self, items: list[tuple[str, CallRecord]]) -> None:
        """Store several calls in one transaction (one disk flush)."""
        with self.project.transaction():
            for key, record in items:
                self.put(key, record)

    async def store(self, key: str, record: CallRecord) -> None:
        """Store a call through the project's group commit (one transaction for every call and
        result that ended meanwhile, in a worker thread); returns once it is on disk."""
        self.project.queue_llm_call(key, **_columns(record))
        await self.project.committed()

    def put(self, key: str, record: CallRecord) -> None:
        self.project.llm_cache_put(
            key,
            model=record.model,
            api_base=record.api_base or None,
            request=record.request,
            response=record.response,
            prompt_tokens=record.prompt_tokens,
            completion_tokens=record.completion_tokens,
            cost=record.cost,
            latency_s=record.latency_s,
            run_id=record.run_id,
        )


def _columns(record: CallRecord) -> dict[str, Any]:
    return {"model": record.model, "api_base": record.api_base or None,
            "request": record.request, "response": record.response,
            "prompt_tokens": record.prompt_tokens, "completion_tokens": record.completion_tokens,
            "cost": record.cost, "latency_s": record.latency_s, "run_id": record.run_id}


def as_cache(cache: Any) -> ResponseCache:
    """Accept a :class:`ResponseCache`, or a ``Project`` (wrapped in :class:`ProjectCache`)."""
    if hasattr(cache, "llm_cache_get") and hasattr(cache, "llm_cache_put"):
        return ProjectCache(cache)
    if isinstance(cache, ResponseCache):
        return cache
    raise TypeError(f"not a response cache: {cache!r}")


_user_cache: dict[str, ResponseCache] = {}
_user_cache_lock = threading.Lock()


def user_cache() -> ResponseCache:
    """The per-user cache file (one per EVALDESK_HOME), opened once per process. If it cannot be
    opened (another EvalDesk has it open, the folder is read-only) calls are cached in memory for
    this session only, with a warning in the log."""
    from core import paths

    path = paths.user_cache_dir() / USER_CACHE_FILE
    with _user_cache_lock:
        cached = _user_cache.get(str(path))
        if cached is not None:
            return cached
        try:
            from core.project import Project

            project = Project.open(path) if path.exists() else Project.create(path)
            cache: ResponseCache = ProjectCache(project)
        except Exception as exc:  # noqa: BLE001 - in use, damaged, read-only: never fail a run
            log.warning("LLM cache %s not available (%s); caching in memory only", path, exc)
            cache = MemoryCache()
        _user_cache[str(path)] = cache
        return cache


def close_user_caches() -> None:
    """Close the per-user cache files (at exit; tests)."""
    with _user_cache_lock:
        for cache in _user_cache.values():
            project = getattr(cache, "project", None)
            if project is not None:
                try:
                    project.close()
                except Exception:  # noqa: BLE001, S110 - closing at exit: nothing left to do
                    pass
        _user_cache.clear()
