"""Requests on the wire limited by the HTTP connection pool, so the next ones are ready to go.

litellm spends a few milliseconds of CPU on every call (building the request, working out the
cost, logging), on the event-loop thread. If the gateway's semaphore were the only limit, a slot
would be held through that work too, and the provider would see fewer requests at a time than
the profile allows: with 16 slots and a 100 ms endpoint, 200 calls took 1.19x the ideal time on
2 cores instead of about 1.15x (``tests/benchmarks/bench_llm_gateway.py``).

For a profile with one API base that litellm reaches over plain HTTP (``openai/...`` for OpenAI
and any OpenAI-compatible server: llama.cpp's server, LM Studio, Ollama's /v1; and
``hosted_vllm/...``), the gateway makes its own client whose connection pool holds at most
``max_concurrency`` connections, and lets a few more calls than that in (:func:`admitted`). The
client goes to litellm (``client=``), or, for an ``openai/`` model litellm has no price for (a
self-hosted server's), straight to the server (``_direct``: litellm would send the request
unchanged, so it is skipped with its CPU time). The calls let in are prepared while the others
are answered, wait in the pool, and each goes out the moment a connection is free. The provider
still never sees more than ``max_concurrency`` requests at once; a request waiting for a
connection has not been sent, so Cancel drops it without a call.

Clients are made once per event loop (an httpx client belongs to the loop it was made in) and per
API base, key, limit and timeout, the way litellm makes its own (its TLS settings, proxies from
the environment, redirects followed). Every other profile (the built-in model, several API bases
through litellm's Router, other providers, models litellm answers through OpenAI's Responses
API) keeps litellm's own clients and the semaphore alone.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from dataclasses import dataclass
from typing import Any

from core.llm._litellm import litellm_module

#: litellm providers that send requests with the OpenAI client (it takes ``client=AsyncOpenAI``).
_OPENAI_CLIENT = "openai"
#: litellm providers that send requests with litellm's own HTTP handler (``client=`` one of those).
_HTTP_HANDLER = ("hosted_vllm",)

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, Any]]
_clients = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Pooled:
    """How a profile's requests get a connection-limited client."""

    #: "direct" (our own httpx client, see ``_direct``), "openai" (an AsyncOpenAI client for
    #: litellm) or "http" (litellm's HTTP handler)
    kind: str
    api_key: str | None


def admitted(max_concurrency: int) -> int:
    """How many calls of a pooled profile may be inside litellm at once: the requests on the
    wire plus a few being prepared (a quarter more, at least 2)."""
    return max_concurrency + max(2, max_concurrency // 4)


def plan(model: str, api_base: str, api_key: str | None, direct: bool = True) -> Pooled | None:
    """The connection-limited client a profile's calls can use, or None: litellm's own clients.
    ``direct``: requests litellm would pass through unchanged skip it (see ``_direct``)."""
    litellm = litellm_module()
    try:
        _, provider, _, _ = litellm.get_llm_provider(model=model, api_base=api_base)
    except Exception:  # noqa: BLE001 - litellm does not know it: let litellm decide per call
        return None
    if provider in _HTTP_HANDLER:
        return Pooled("http", api_key)
    if provider != _OPENAI_CLIENT or _answers_through_responses_api(litellm, model):
        return None
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        return None  # litellm's path says what is missing
    return Pooled("direct" if direct and _passed_through(litellm, model) else "openai", key)


def _passed_through(litellm: Any, model: str) -> bool:
    """Whether litellm sends an ``openai/`` model's request as it is: a model its price map has
    no price for (OpenAI's own models have one, and litellm may rename or drop parameters for
    them). An entry without a price is no sign: litellm's Router adds one for every model it
    routes."""
    name = openai_name(model)
    for key in (name, f"openai/{name}"):
        info = litellm.model_cost.get(key) or {}
        if info.get("input_cost_per_token") or info.get("output_cost_per_token"):
            return False
    return True


def client(pooled: Pooled, api_base: str | None, max_concurrency: int, timeout_s: float) -> Any:
    """The client for litellm's ``client=``, made once per running event loop."""
    per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
    cache_key = (pooled, api_base, max_concurrency, float(timeout_s))
    found = per_loop.get(cache_key)
    if found is None:
        found = per_loop[cache_key] = _make(pooled, api_base, max_concurrency, timeout_s)
    return found


async def close_connections() -> None:
    """Close the HTTP connections of this event loop's clients: ours, and litellm's own (when
    litellm was loaded). Call it before the loop ends, so no socket outlives the loop it was
    registered with (under qasync a late "connection closed" would reach a deleted notifier)."""
    for found in _clients.pop(asyncio.get_running_loop(), {}).values():
        try:  # httpx's client has aclose(); the OpenAI client and litellm's handler close()
            await (found.aclose() if hasattr(found, "aclose") else found.close())
        except Exception:  # noqa: BLE001, S110 - closing what may already be broken
            pass
    from core.llm import _litellm

    if _litellm._litellm is not None:
        from litellm.llms.custom_httpx.async_client_cleanup import close_litellm_async_clients

        try:
            await close_litellm_async_clients()
        except Exception:  # noqa: BLE001, S110 - closing what may already be broken
            pass


def openai_name(model: str) -> str:
    """The model's name as an OpenAI-style server knows it: ``openai/`` taken off."""
    return model.split("/", 1)[1] if model.startswith("openai/") else model


def _answers_through_responses_api(litellm: Any, model: str) -> bool:
    """litellm sends some OpenAI models (the "responses" mode of its price map) to OpenAI's
    Responses API, which does not take an OpenAI chat client."""
    if getattr(litellm, "route_all_chat_openai_to_responses", False):
        return True
    name = openai_name(model)
    if name.startswith("responses/"):
        return True
    info = litellm.model_cost.get(name) or litellm.model_cost.get(f"openai/{name}") or {}
    return info.get("mode") == "responses"


def _make(pooled: Pooled, api_base: str | None, max_concurrency: int, timeout_s: float) -> Any:
    import httpx

    from core.llm._proxy import keep_loopback_direct

    keep_loopback_direct()  # a model server on this computer never goes through a proxy

    litellm = litellm_module()
    try:
        from litellm.llms.custom_httpx.http_handler import get_ssl_configuration

        verify: Any = get_ssl_configuration()
    except Exception:  # noqa: BLE001 - an older or newer litellm: httpx's own certificates
        verify = True
    limits = httpx.Limits(
        max_connections=max_concurrency, max_keepalive_connections=max_concurrency
    )
    transport = None
    if getattr(litellm, "force_ipv4", False):
        transport = httpx.AsyncHTTPTransport(local_address="0.0.0.0", limits=limits, verify=verify)
    http = httpx.AsyncClient(
        verify=verify,
        limits=limits,
        transport=transport,
        follow_redirects=True,
        timeout=httpx.Timeout(timeout_s),
    )
    if pooled.kind == "direct":
        return http
    if pooled.kind == "http":
        from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

        handler = AsyncHTTPHandler(timeout=timeout_s)
        handler.client = http  # in place of the unlimited one it made (no connections yet)
        return handler
    import openai

    return openai.AsyncOpenAI(
        api_key=pooled.api_key,
        base_url=api_base,
        http_client=http,
        max_retries=0,
        timeout=timeout_s,
    )
