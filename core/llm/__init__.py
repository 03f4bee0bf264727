"""One gateway to every LLM (litellm): cache, concurrency, retries, JSON validation, usage.

Methods use only these names::

    gateway = Gateway(profile, cache=project, run_id=run_id)   # one per run
    score = await gateway.complete_json(messages, Score, repeat=0,
                                        template_version="aqer-score-v1", cancel=cancel)
    text = await gateway.complete_text(messages, template_version="...", cancel=cancel)
    gateway.usage                      # Usage of this gateway (calls, cache hits, tokens, cost)

* ``Gateway(profile, *, cache=None, api_key=None, run_id=None)``: ``profile`` is a
  ``core.settings.ModelProfile``; ``cache`` a ``core.project.Project``, a :class:`MemoryCache`
  or None (the per-user cache file); ``api_key`` None = keyring / environment.
* ``await gateway.complete_json(messages, Schema, *, repeat=0, template_version="",
  cancel=None) -> Schema``: a validated pydantic object. ``messages`` is a list of
  ``{"role", "content"}`` dicts (or one string for a single user message).
* ``await gateway.complete_text(messages, *, repeat=0, template_version="", cancel=None) -> str``.
* Both raise :class:`LLMFailure` (``kind``, ``message``: record it for the item, show it) or
  ``core.runs.Cancelled`` (stop; finished calls are already cached).
* ``check=``: a stage's own test of a well-formed answer (``Rejection`` / ``copied_instructions``
  say why it cannot be used); a rejected answer is asked again once, then fails.
* ``repeat``: "ask N times" uses repeat=0..N-1 (distinct cache entries). ``template_version``:
  bump it when a prompt template changes, so old answers are not reused.
* ``gateway_for(profile, project=None, run_id=None)``: the gateway of a method run (what the
  wizards' default ``LLMFactory`` returns and the CLI uses).
* :func:`check_connection` (``await check_connection(profile, api_key=None) ->
  ConnectionCheck``), :func:`session_usage`, :func:`add_usage_listener` (status bar).
* :class:`ScriptedLLM`: a scripted model for tests (``core.llm.scripted``).
* ``await close_connections()``: close this event loop's HTTP connections (before it ends).
* Model files (``evaldesk-local/...`` profiles) run in llama.cpp's own server in a process of its
  own (``_engine``), started on the first call: :func:`stop_engines` ends it (project closed, app
  quit; also at exit), :func:`add_engine_listener` tells of its start, readiness and crashes
  (:class:`EngineEvent`).
* :mod:`core.llm.estimate`: calls, tokens, cost and time of a planned run, before it starts
  (``estimate_calls(plan, profile, latency=...)``, :class:`StagePlan`, :class:`Estimate`).
* :mod:`core.llm.context`: how much the model reads at once and how long a prompt is, before
  it is sent (``limits_of(gateway)``, ``prompt_tokens(messages)``, ``split_items`` for a step
  that splits its input into parts that fit, ``refusal`` for inputs that cannot fit).

``profile.max_concurrency`` bounds the calls of a profile in flight (all its API bases together;
gateways of the same profile share the limit). Several ``api_bases`` are load-balanced with
litellm's Router. Errors are retried up to ``profile.max_retries`` times (408/429/5xx/timeouts/
connection errors only, honouring Retry-After); 400/401/403/404 fail at once.

A re-run of a finished step makes no calls: every successful answer is in the cache, keyed by
model, API base, messages, generation parameters, repeat index and template version.
"""

from core.llm._cache import CallRecord, MemoryCache, ProjectCache, ResponseCache, user_cache
from core.llm._engine import EngineEvent, add_engine_listener, stop_engines
from core.llm._errors import LLMFailure, Rejection, copied_instructions
from core.llm._gateway import (
    ConnectionCheck,
    Gateway,
    JsonLLM,
    LLMFactory,
    check_connection,
    gateway_for,
)
from core.llm._pool import close_connections
from core.llm._usage import (
    Usage,
    add_usage_listener,
    remove_usage_listener,
    reset_session_usage,
    session_usage,
)
from core.llm.estimate import Estimate, Latency, StagePlan, measured_latency, probe_latency
from core.llm.estimate import estimate as estimate_calls
from core.llm.scripted import ScriptedError, ScriptedLLM

__all__ = [
    "CallRecord",
    "ConnectionCheck",
    "EngineEvent",
    "Estimate",
    "Gateway",
    "JsonLLM",
    "LLMFactory",
    "LLMFailure",
    "Latency",
    "MemoryCache",
    "ProjectCache",
    "Rejection",
    "ResponseCache",
    "ScriptedError",
    "ScriptedLLM",
    "StagePlan",
    "Usage",
    "add_engine_listener",
    "add_usage_listener",
    "check_connection",
    "close_connections",
    "copied_instructions",
    "estimate_calls",
    "gateway_for",
    "measured_latency",
    "probe_latency",
    "remove_usage_listener",
    "reset_session_usage",
    "session_usage",
    "stop_engines",
    "user_cache",
]
