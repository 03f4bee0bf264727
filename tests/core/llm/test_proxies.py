"""Proxy settings as school and hospital laptops have them (``core.llm._proxy``): a model server on
this computer never goes through a proxy, a proxy that is down is named as the cause, SOCKS5
proxies work and other kinds are refused in plain words (never "pip install ...")."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct

import pytest

from core.llm import Gateway, LLMFailure, MemoryCache
from core.llm._proxy import keep_loopback_direct, proxy_for
from core.settings import ModelProfile
from tests.core.llm.fault_server import FaultServer, free_port

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
                   "http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture
def proxy_env(monkeypatch):
    """A clean proxy environment, restored after the test (the gateway adds loopback names to
    NO_PROXY as it goes)."""
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)

    def set_proxy(**values: str) -> None:
        for name, value in values.items():
            monkeypatch.setenv(name, value)
            monkeypatch.setenv(name.lower(), value)

    return set_proxy


@pytest.fixture
async def server():
    running = await FaultServer().start()
    yield running
    await running.stop()


def dead_port() -> int:
    """A port on 127.0.0.1 where nothing listens (a proxy that is down)."""
    return free_port()


def profile(base: str, **overrides) -> ModelProfile:
    return ModelProfile(name="Server", model="openai/test", api_bases=[base], max_retries=2,
                        timeout_s=10, **overrides)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_a_local_server_works_while_a_dead_proxy_is_set(server, proxy_env, host):
    dead = f"http://127.0.0.1:{dead_port()}"
    proxy_env(HTTP_PROXY=dead, HTTPS_PROXY=dead, ALL_PROXY=dead)
    base = server.base("ok").replace("127.0.0.1", host)
    answer = await Gateway(profile(base), cache=MemoryCache(), api_key="k").complete_text("Hi")
    assert answer
    assert server.hits["ok"] == 1


def test_loopback_names_are_added_to_no_proxy_once_and_kept():
    env = {"NO_PROXY": "intranet.example"}
    keep_loopback_direct(env)
    keep_loopback_direct(env)
    assert env["NO_PROXY"] == "intranet.example,127.0.0.1,localhost,::1"
    assert env["no_proxy"] == "127.0.0.1,localhost,::1"
    everything = {"NO_PROXY": "*", "no_proxy": "*"}
    keep_loopback_direct(everything)
    assert everything == {"NO_PROXY": "*", "no_proxy": "*"}


async def test_a_dead_proxy_is_named_as_the_cause_for_a_remote_server(proxy_env, waits):
    port = dead_port()
    proxy_env(HTTP_PROXY=f"http://127.0.0.1:{port}")
    gateway = Gateway(profile("http://models.school.example:8000/v1"), cache=MemoryCache(),
                      api_key="k")
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_text("Hi")
    failure = caught.value
    assert failure.kind == "connection"
    assert f"127.0.0.1:{port}" in failure.message and "HTTP_PROXY" in failure.message
    assert "does not answer" in failure.message
    assert waits == []  # not retried: the same proxy will not answer the next try either


def test_no_proxy_is_respected_when_finding_the_proxy(proxy_env):
    proxy_env(HTTP_PROXY="http://proxy.example:3128", NO_PROXY="school.example")
    assert proxy_for("http://models.school.example:8000/v1") is None
    assert proxy_for("http://other.example/v1") == ("http://proxy.example:3128", "HTTP_PROXY")
    assert proxy_for("http://127.0.0.1:8080/v1") is None


@contextlib.asynccontextmanager
async def socks5_proxy(target_port: int):
    """A minimal SOCKS5 proxy (no authentication, CONNECT only) that sends every connection to
    127.0.0.1:``target_port`` and records the host names it was asked for."""
    asked: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            _version, methods = await reader.readexactly(2)
            await reader.readexactly(methods)
            writer.write(b"\x05\x00")
            _, _command, _, kind = await reader.readexactly(4)
            if kind == 3:
                (length,) = await reader.readexactly(1)
                asked.append((await reader.readexactly(length)).decode())
            elif kind == 1:
                asked.append(socket.inet_ntoa(await reader.readexactly(4)))
            await reader.readexactly(2)
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1",
                                                                             target_port)
            writer.write(b"\x05\x00\x00\x01" + socket.inet_aton("127.0.0.1")
                         + struct.pack(">H", target_port))

            async def pipe(source, sink):
                try:
                    while data := await source.read(65536):
                        sink.write(data)
                        await sink.drain()
                finally:
                    sink.close()

            await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer),
                                 return_exceptions=True)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield listener.sockets[0].getsockname()[1], asked
    finally:
        listener.close()


async def test_a_socks5_proxy_carries_requests_to_a_remote_server(server, proxy_env):
    async with socks5_proxy(server.port) as (port, asked):
        proxy_env(ALL_PROXY=f"socks5://127.0.0.1:{port}")
        base = f"http://models.school.example:{server.port}/ok/v1"
        answer = await Gateway(profile(base), cache=MemoryCache(), api_key="k").complete_text(
            "Hi")
    assert answer
    assert asked == ["models.school.example"]  # the proxy was asked, by name
    assert server.hits["ok"] == 1


async def test_a_proxy_kind_evaldesk_cannot_use_is_refused_in_plain_words(proxy_env):
    proxy_env(ALL_PROXY="socks4://10.0.0.1:1080")
    gateway = Gateway(profile("http://models.school.example:8000/v1"), cache=MemoryCache(),
                      api_key="k")
    with pytest.raises(LLMFailure) as caught:
        await gateway.complete_text("Hi")
    message = caught.value.message
    assert "socks4" in message and "SOCKS5" in message and "ALL_PROXY" in message
    assert "pip" not in message
