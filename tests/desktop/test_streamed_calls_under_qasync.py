"""The engine's answers come streamed (server-sent events). Under the window's event loop
(qasync) the lines' generator, left to the garbage collector after ``[DONE]``, was closed from
another task, failed ("Attempted to exit cancel scope in a different task") and kept its
connection: after as many calls as the engine has slots, the next call waited for a connection
until its timeout. That stopped the InteractEval wizard's 62-note build with the built-in model
("did not finish within 600 seconds") although every request had been answered. Here a server
on 127.0.0.1 streams answers the way llama.cpp's server does, and twice as many calls as the
pool has connections go one after another through the same client, in the window's loop."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class _Streaming(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked: as llama-server answers

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        asked = json.loads(self.rfile.read(length) or b"{}")
        failing = asked["messages"][-1]["content"] == "fail"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pieces = [{"choices": [{"delta": {"content": '{"ok": '}, "finish_reason": None}]},
                  {"choices": [{"delta": {"content": "true}"}, "finish_reason": "stop"}]},
                  {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}}]
        if failing:  # the server's error in the middle of the answer, as llama-server sends it
            pieces = [pieces[0], {"error": {"message": "the slot's context is full"}}]
        for event in [*(f"data: {json.dumps(p)}\n\n" for p in pieces), "data: [DONE]\n\n"]:
            data = event.encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def log_message(self, *args):
        pass


@pytest.fixture
def streaming_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Streaming)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_streamed_answers_give_their_connection_back_in_the_windows_loop(qtbot, qloop,
                                                                        streaming_server):
    from core.llm import _direct, _pool

    slots = 2
    client = _pool.client(_pool.Pooled("direct", None), streaming_server, slots, 30.0)
    answers: list[str] = []

    async def calls():
        for n in range(3 * slots):  # more calls than connections, one after another
            said = "fail" if n % 2 else "hi"  # an error in the answer gives it back too
            try:
                reply = await asyncio.wait_for(_direct.complete(
                    client, streaming_server, "key", "local", [{"role": "user", "content": said}],
                    {"max_tokens": 8}, stream=True), timeout=10)
            except _direct.ProviderError as exc:
                answers.append(f"error: {exc}")
            else:
                answers.append(reply.choices[0].message.content)

    task = qloop.create_task(calls())
    qtbot.waitUntil(task.done, timeout=60_000)
    assert task.exception() is None, (len(answers), repr(task.exception()))
    assert answers[::2] == ['{"ok": true}'] * 3 and len(answers) == 3 * slots
    assert all("the slot's context is full" in a for a in answers[1::2]), answers
