"""Helpers of part B of the attack suite: a hostile OpenAI-compatible server on 127.0.0.1, the
inputs of a small InteractEval scoring run, and the ``evaldesk checklist score`` command run
against that server.

The server answers each text's request by a rule: a text whose prompt holds ``BROKEN`` gets the
fault being tested, the others a good answer. ``fixed()`` makes every later request good (the
fault is gone: the re-run). ``hits`` counts requests per text ("A", "B", ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from aiohttp import web

#: The questions of the checklist the run scores (labels q1..q3 in the prompt).
QUESTIONS = [
    "Does each sentence follow from the last?",
    "Are transitions between ideas clear?",
    "Is there a clear beginning and end?",
]
GOOD_ANSWER = {"q1": "yes", "q2": "no", "q3": "yes"}
#: Text id -> text. C is the one the faults hit.
TEXTS = {
    "A": "Alpha text: the cat sat on the mat. Then it slept.",
    "B": "Beta text: rain fell all day. The river rose.",
    "C": "BROKEN gamma text: a summary the server chokes on.",
    "D": "Delta text: the shop opened at nine. People came in.",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-attack",
        "object": "chat.completion",
        "created": 1,
        "model": body.get("model", "test"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def text_of(body: dict[str, Any]) -> str:
    """Which text ("A".."D") a request is about ("?" when none)."""
    prompt = json.dumps(body.get("messages", []))
    for text_id, text in TEXTS.items():
        if text.split(":")[0] in prompt:
            return text_id
    return "?"


class HostileServer:
    """Answers text C's requests with ``fault`` (see :meth:`_fault`) until :meth:`fixed`
    (``"none"``: every request is answered well, after ``latency_s``)."""

    def __init__(self, fault: str, *, hang_s: float = 30.0, latency_s: float = 0.0,
                 victims: str = "C") -> None:
        self.fault = fault
        #: The texts whose requests get the fault ("?": requests about no text, such as the
        #: connection test's).
        self.victims = victims
        self.latency_s = latency_s
        #: While set, every request waits (a run that stays busy for as long as a test needs).
        self.hold = threading.Event()
        self.hang_s = hang_s
        self.broken = True
        self.hits: Counter[str] = Counter()
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.paths: list[str] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def fixed(self) -> None:
        self.broken = False
        self.hits.clear()

    async def start(self) -> HostileServer:
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        self.port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        which = text_of(body)
        self.hits[which] += 1
        self.requests.append((dict(request.headers), body))
        self.paths.append(str(request.rel_url))
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        while self.hold.is_set():  # the test keeps the run going until it lets go
            await asyncio.sleep(0.02)
        if which in self.victims and self.broken and self.fault != "none":
            return await self._fault(request, body)
        return web.json_response(completion(body, json.dumps(GOOD_ANSWER)))

    async def _fault(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        fault = self.fault
        if fault == "invalid_json":
            return web.json_response(completion(body, '{"q1": "yes", "q2": no, q3'))
        if fault == "prose":
            return web.json_response(completion(body, "The text reads well, I would say yes."))
        if fault == "off_schema":
            return web.json_response(completion(body, json.dumps({"score": 4, "reason": "ok"})))
        if fault == "wrong_types":
            return web.json_response(completion(body, json.dumps([1, 2, 3])))
        if fault == "empty":
            return web.json_response(completion(body, ""))
        if fault == "null_content":
            reply = completion(body, "")
            reply["choices"][0]["message"]["content"] = None
            return web.json_response(reply)
        if fault == "no_choices":
            reply = completion(body, "")
            reply["choices"] = []
            return web.json_response(reply)
        if fault == "html_200":
            return web.Response(text="<html><body>Bad gateway</body></html>",
                                content_type="text/html")
        if fault == "429_retry_after":
            return web.json_response({"error": {"message": "Rate limit reached"}}, status=429,
                                     headers={"Retry-After": "2"})
        if fault == "429_long_retry_after":
            return web.json_response({"error": {"message": "Rate limit reached"}}, status=429,
                                     headers={"Retry-After": "3600"})
        if fault == "429_bare":
            return web.json_response({"error": {"message": "Rate limit reached"}}, status=429)
        if fault == "401_echo_key":
            # as many gateways answer a wrong key: the key repeated, and here the request's
            # headers echoed back too, in the body and in a header of the answer
            sent = request.headers.get("Authorization", "")
            key = sent.split()[-1] if sent else "(none)"
            echoed = {k: v for k, v in request.headers.items()
                      if k.lower() in ("authorization", "api-key", "x-api-key")}
            return web.json_response(
                {"error": {"message": f"Incorrect API key provided: {key}. You can find your "
                                      f"API key in your account. Request headers: {echoed}",
                           "type": "invalid_request_error", "code": "invalid_api_key"}},
                status=401, headers={"WWW-Authenticate": f'Bearer realm="{key}"'})
        if fault == "500":
            return web.json_response({"error": {"message": "upstream exploded"}}, status=500)
        if fault == "503_html":
            return web.Response(text="<h1>503 Service Unavailable</h1>", status=503,
                                content_type="text/html")
        if fault == "hang":
            await asyncio.sleep(self.hang_s)
            return web.json_response(completion(body, json.dumps(GOOD_ANSWER)))
        if fault in ("cut_mid_body", "cut_before_headers"):
            if fault == "cut_before_headers":
                request.transport.close()
                return web.Response()
            whole = json.dumps(completion(body, json.dumps(GOOD_ANSWER))).encode()
            response = web.StreamResponse(headers={"Content-Type": "application/json",
                                                   "Content-Length": str(len(whole))})
            await response.prepare(request)
            await response.write(whole[: len(whole) // 2])
            request.transport.close()
            return response
        if fault == "slow_drip":
            # a byte at a time, each well inside the read timeout: only a total bound stops it
            whole = json.dumps(completion(body, json.dumps(GOOD_ANSWER))).encode()
            response = web.StreamResponse(headers={"Content-Type": "application/json",
                                                   "Content-Length": str(len(whole))})
            await response.prepare(request)
            for i in range(len(whole)):
                await response.write(whole[i : i + 1])
                await asyncio.sleep(0.5)
            return response
        if fault == "huge_junk":
            return web.json_response(completion(body, "no " * 700_000))  # ~2 MB of prose
        if fault == "huge_json":
            padded = dict(GOOD_ANSWER, q4="yes " * 500_000)  # ~2.5 MB inside one JSON value
            return web.json_response(completion(body, json.dumps(padded)))
        if fault == "cut_off_length":
            reply = completion(body, '{"q1": "yes", "q2": "n')
            reply["choices"][0]["finish_reason"] = "length"
            return web.json_response(reply)
        if fault == "copies_prompt":
            # every answer is the prompt's own description of the reply
            said = "the word yes or the word no"
            return web.json_response(completion(body, json.dumps(dict.fromkeys(GOOD_ANSWER, said))))
        if fault == "echo_prompt":
            prompt = body["messages"][-1]["content"]
            return web.json_response(completion(body, prompt))
        if fault == "unknown_labels":
            return web.json_response(completion(body, json.dumps({"q7": "yes", "q8": "no"})))
        if fault == "duplicate_key":  # q1 given twice: yes, then no
            return web.json_response(completion(
                body, '{"q1": "yes", "q2": "no", "q3": "yes", "q1": "no"}'))
        if fault == "half_answered":
            return web.json_response(completion(body, json.dumps({"q1": "yes", "q2": "maybe"})))
        raise AssertionError(f"unknown fault {fault}")


@contextlib.contextmanager
def hostile_server(fault: str, **options: Any) -> Iterator[HostileServer]:
    """A :class:`HostileServer` on its own event loop in a thread (the CLI runs its own loop)."""
    loop = asyncio.new_event_loop()
    server = HostileServer(fault, **options)
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


def write_scoring_inputs(folder: Path) -> tuple[Path, Path]:
    """A checklist of three questions on Coherence and four texts to score (C is the victim)."""
    checklist = folder / "checklist.xlsx"
    pd.DataFrame({"dimension": ["Coherence"] * 3, "question": QUESTIONS}).to_excel(
        checklist, sheet_name="Checklist", index=False)
    items = folder / "items.xlsx"
    pd.DataFrame({"id": list(TEXTS), "text": list(TEXTS.values())}).to_excel(items, index=False)
    return checklist, items


def save_profile(name: str, base: str, **overrides: Any) -> None:
    """A model profile for the server in this test's EvalDesk home."""
    from core.settings import ModelProfile, Settings, SettingsStore

    values: dict[str, Any] = {"name": name, "model": "openai/attack-model", "api_bases": [base],
                              "timeout_s": 2, "max_retries": 2}
    values.update(overrides)
    settings = Settings()
    settings.upsert_profile(ModelProfile(**values))
    SettingsStore().save(settings)


def statuses(results: Path) -> dict[str, str]:
    """text id -> status in the Scores sheet of a results workbook."""
    frame = pd.read_excel(results, sheet_name="Scores", dtype=str)
    return dict(zip(frame.text_id, frame.status, strict=True))


def notes(results: Path) -> dict[str, str]:
    frame = pd.read_excel(results, sheet_name="Scores", dtype=str).fillna("")
    return dict(zip(frame.text_id, frame.note, strict=True))


CALLS_LINE = re.compile(r"Model calls: (\d+) calls, (\d+) answers from the cache")


def calls_line(err: str) -> tuple[int, int]:
    """(calls, cache hits) from the CLI's "Model calls" line."""
    found = CALLS_LINE.findall(err)
    assert found, err
    calls, hits = found[-1]
    return int(calls), int(hits)


def score_args(folder: Path, project: Path, results: Path, profile: str) -> list[str]:
    """``evaldesk checklist score`` of the texts written by :func:`write_scoring_inputs`."""
    checklist, items = write_scoring_inputs(folder)
    return ["checklist", "score", "--checklist", str(checklist), "--items", str(items),
            "--text-col", "text", "--id-col", "id", "--profile", profile,
            "--project", str(project), "-o", str(results)]


def cli_command(args: list[str]) -> list[str]:
    """The command line of ``evaldesk <args>`` in a separate Python process."""
    import sys

    return [sys.executable, "-m", "core.cli", *args]


def cli_env() -> dict[str, str]:
    """The environment of a CLI subprocess: this test's EvalDesk home, the checkout on the path."""
    import os

    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def integrity(path: Path) -> str:
    """``PRAGMA integrity_check`` of a project file (opened as any program would: a change left
    half-written by a killed process is rolled back first)."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return "; ".join(row[0] for row in conn.execute("PRAGMA integrity_check"))
    finally:
        conn.close()
