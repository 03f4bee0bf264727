"""A tiny OpenAI-compatible server on 127.0.0.1 that misbehaves on demand (tests and benchmarks).

Each behaviour lives under its own path prefix, ``http://127.0.0.1:<port>/<mode>/v1``:

* ``ok`` (and ``ok2``, a second server's worth): answers ``{"score": 4, "reason": "fine"}``
  after ``latency_s``
* ``cached``: as ``ok``, and reports 8 of its 11 prompt tokens as read from a prompt cache
  (``usage.prompt_tokens_details.cached_tokens``, as OpenAI does)
* ``flaky429``: the first request of each prompt gets 429 with ``Retry-After: 1``, then ok
* ``down``: always 500
* ``hang``: sleeps ``hang_s`` before answering (past a short client timeout)
* ``badjson``: answers text that is not JSON
* ``auth``: 401 "Incorrect API key"; ``missing``: 404 model not found
* ``oldstyle``: rejects ``response_format`` of type ``json_schema`` with 422 (as
  llama-cpp-python's server does) but takes ``json_object`` with a schema

``hits[mode]`` counts requests per mode; ``requests`` keeps (mode, headers, body); ``peak`` is
the most requests it was answering at the same time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

from aiohttp import web

GOOD = {"score": 4, "reason": "fine"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1,
        "model": body.get("model", "test"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


class FaultServer:
    def __init__(self, latency_s: float = 0.0, hang_s: float = 3.0) -> None:
        self.latency_s = latency_s
        self.hang_s = hang_s
        self.hits: Counter[str] = Counter()
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self._seen_429: set[str] = set()
        self.in_flight = 0
        self.peak = 0
        self._runner: web.AppRunner | None = None
        self.port = 0

    def base(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.port}/{mode}/v1"

    async def start(self) -> FaultServer:
        app = web.Application()
        app.router.add_post("/{mode}/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        self.port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            return await self._answer(request)
        finally:
            self.in_flight -= 1

    async def _answer(self, request: web.Request) -> web.Response:
        mode = request.match_info["mode"]
        body = await request.json()
        self.hits[mode] += 1
        self.requests.append((mode, dict(request.headers), body))
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if mode in ("ok", "ok2"):
            return web.json_response(completion(body, json.dumps(GOOD)))
        if mode == "cached":
            reply = completion(body, json.dumps(GOOD))
            reply["usage"]["prompt_tokens_details"] = {"cached_tokens": 8}
            return web.json_response(reply)
        if mode == "flaky429":
            prompt = json.dumps(body["messages"])
            if prompt not in self._seen_429:
                self._seen_429.add(prompt)
                return web.json_response(
                    {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                    status=429,
                    headers={"Retry-After": "1"},
                )
            return web.json_response(completion(body, json.dumps(GOOD)))
        if mode == "down":
            return web.json_response({"error": {"message": "upstream exploded"}}, status=500)
        if mode == "hang":
            await asyncio.sleep(self.hang_s)
            return web.json_response(completion(body, json.dumps(GOOD)))
        if mode == "badjson":
            return web.json_response(completion(body, "Sure! The score is four out of five."))
        if mode == "auth":
            return web.json_response(
                {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}},
                status=401,
            )
        if mode == "missing":
            return web.json_response(
                {"error": {"message": "The model `nope` does not exist"}}, status=404
            )
        if mode == "toolong":  # llama.cpp's server's words
            return web.json_response(
                {"error": {"code": 400, "type": "exceed_context_size_error",
                           "message": "the request exceeds the available context size, try "
                           "increasing it"}}, status=400)
        if mode == "garbage":  # a 200 that is not a chat completion (a proxy's page)
            return web.Response(text="<html><body>Welcome to nginx!</body></html>",
                                content_type="text/html")
        if mode == "oldstyle":
            fmt = body.get("response_format") or {}
            if fmt.get("type") not in (None, "text", "json_object"):
                return web.json_response(
                    {
                        "detail": [
                            {
                                "loc": ["body", "response_format", "type"],
                                "msg": "Input should be 'text' or 'json_object'",
                            }
                        ]
                    },
                    status=422,
                )
            return web.json_response(completion(body, json.dumps(GOOD)))
        return web.json_response({"error": {"message": f"unknown mode {mode}"}}, status=404)


@contextlib.contextmanager
def running_in_a_thread(**options: Any) -> Iterator[FaultServer]:
    """A :class:`FaultServer` on its own event loop in a background thread, for code under test
    that runs its own loop (``asyncio.run``, or qasync on the Qt thread)."""
    loop = asyncio.new_event_loop()
    server = FaultServer(**options)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
