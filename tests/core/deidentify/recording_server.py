"""A fake OpenAI-compatible server on 127.0.0.1 that records every request it is sent and answers
with a function of the messages (the scripted replies of the method tests, but over HTTP: what
leaves the process is what the server sees)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web

from tests.core.llm.fault_server import completion, free_port

Reply = Callable[[list[dict[str, Any]]], Any]


class RecordingServer:
    """``requests``: every request body received, in order; ``reply(messages)`` gives the
    answer (a dict or list is sent as JSON text, a string as it is)."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._lock = threading.Lock()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def sent_text(self) -> str:
        """Everything the requests carried, as one text (messages, schemas, parameters)."""
        with self._lock:
            return "\n".join(json.dumps(body, ensure_ascii=False) for body in self.requests)

    def messages_text(self) -> str:
        """The messages' contents of every request, as one text (unescaped)."""
        with self._lock:
            return "\n".join(str(m.get("content") or "") for body in self.requests
                             for m in body.get("messages", []))

    async def start(self) -> RecordingServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        self.port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
        try:
            answer = self.reply(body.get("messages", []))
        except Exception as exc:  # noqa: BLE001 - a reply the test did not expect: a 500
            return web.json_response({"error": {"message": f"fake server: {exc!r}"}},
                                     status=500)
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return web.json_response(completion(body, content))


@contextlib.contextmanager
def recording_server(reply: Reply) -> Iterator[RecordingServer]:
    """A :class:`RecordingServer` on its own event loop in a background thread."""
    loop = asyncio.new_event_loop()
    server = RecordingServer(reply)
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
