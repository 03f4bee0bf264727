"""The HTTP path against real OpenAI-compatible servers: llama-cpp-python's server on 127.0.0.1
running the bundled GGUF, one alone and two behind litellm's Router."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from core.llm import Gateway, MemoryCache, check_connection
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
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "llama_cpp.server",
                "--model", str(gguf),
                "--model_alias", ALIAS,
                "--host", "127.0.0.1",
                "--port", str(self.port),
                "--n_ctx", "2048",
                "--chat_format", "gemma",
            ],
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
        )  # fmt: skip

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server stopped:\n{self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.base + "/models", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"llama_cpp.server did not start:\n{self.log.read_text()[-2000:]}")

    def chat_requests(self) -> int:
        """POSTs to /v1/chat/completions that this server answered (from its access log)."""
        self._log_file.flush()
        return self.log.read_text(errors="replace").count("POST /v1/chat/completions")

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
    assert sum(served) >= 14
    assert {r.api_base for r in cache.records.values()} == {s.base for s in servers}
