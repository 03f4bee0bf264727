"""The HTTP path against real OpenAI-compatible servers: llama.cpp's own server (``llama-server``,
the program EvalDesk runs model files in, started here by hand as a user would run it) on
127.0.0.1 with the bundled GGUF, one alone and two behind litellm's Router."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from core.llm import Gateway, MemoryCache, _engine, check_connection
from core.settings import ModelProfile
from tests.core.llm.fault_server import free_port

pytestmark = pytest.mark.slow

ALIAS = "gemma"


class Capital(BaseModel):
    country: str = Field(max_length=40)
    capital: Literal["Paris", "Berlin", "Madrid", "Rome"]


class LlamaServer:
    def __init__(self, gguf: Path, log: Path) -> None:
        self.port = free_port()
        self.log = log
        self._log_file = log.open("wb")
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_")}
        self.process = subprocess.Popen(
            [
                str(_engine.program()),
                "--model", str(gguf),
                "--alias", ALIAS,
                "--host", "127.0.0.1",
                "--port", str(self.port),
                "--ctx-size", "2048",
                "--parallel", "2",
                "--metrics",
                "--jinja", "--chat-template-file", str(_engine.gemma_template()),
            ],
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            env=env,
        )  # fmt: skip

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _get(self, path: str) -> tuple[int, str]:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{self.port}{path}", timeout=5) as reply:
            return reply.status, reply.read().decode()

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server stopped:\n{self.log.read_text()[-2000:]}")
            try:
                if self._get("/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"llama-server did not start:\n{self.log.read_text()[-2000:]}")

    def chat_requests(self) -> int:
        """Tokens this server generated so far (its /metrics): grows with every answer."""
        text = self._get("/metrics")[1]
        found = re.search(r"^llamacpp:tokens_predicted_total (\S+)$", text, re.MULTILINE)
        return int(float(found.group(1))) if found else 0

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self._log_file.close()


@pytest.fixture(scope="module")
def servers(bundled_gguf, tmp_path_factory):
    logs = tmp_path_factory.mktemp("llama-server")
    started = [LlamaServer(bundled_gguf, logs / f"server{i}.log") for i in range(2)]
    try:
        for server in started:
            server.wait_ready()
        yield started
    finally:
        for server in started:
            server.stop()


def question(i: int) -> list[dict[str, str]]:
    countries = ["France", "Germany", "Spain", "Italy"]
    return [
        {
            "role": "user",
            "content": f"Question {i}: what is the capital of {countries[i % 4]}? Answer in JSON.",
        }
    ]


async def test_one_server_as_an_openai_compatible_endpoint(servers):
    server = servers[0]
    before = server.chat_requests()
    profile = ModelProfile(
        name="Local server", model=f"openai/{ALIAS}", api_bases=[server.base], max_tokens=48
    )
    cache = MemoryCache()
    answer = await Gateway(profile, cache=cache).complete_json(question(0), Capital)
    assert isinstance(answer, Capital)
    assert server.chat_requests() > before
    record = next(iter(cache.records.values()))
    assert record.api_base == server.base
    assert record.prompt_tokens > 0 and record.completion_tokens > 0

    check = await check_connection(profile)
    assert check.ok, check.message


async def test_two_servers_behind_the_router_both_serve(servers):
    before = [s.chat_requests() for s in servers]
    profile = ModelProfile(
        name="Two local servers",
        model=f"openai/{ALIAS}",
        api_bases=[s.base for s in servers],
        max_tokens=4,  # short answers: this is about spreading calls, JSON is tested above
        max_concurrency=4,
    )
    cache = MemoryCache()
    gateway = Gateway(profile, cache=cache)
    answers = await asyncio.gather(*[gateway.complete_text(question(i)) for i in range(14)])
    assert all(a.strip() for a in answers)
    served = [s.chat_requests() - b for s, b in zip(servers, before, strict=True)]
    assert all(n >= 1 for n in served), served
    assert {r.api_base for r in cache.records.values()} == {s.base for s in servers}
