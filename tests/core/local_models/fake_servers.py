"""Fake HTTP servers on 127.0.0.1 for the local-model tests: Ollama, OpenAI-compatible servers
(llama.cpp, vLLM, LM Studio) and a file server like Hugging Face's (a redirect that carries the
checksum, then a file with Range support that can drop the connection or corrupt a byte)."""

from __future__ import annotations

import hashlib
import json
import random
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextmanager
def serve(handler: Callable[[BaseHTTPRequestHandler], None]) -> Iterator[int]:
    """Run ``handler(request)`` for every GET/HEAD on a free port of 127.0.0.1; yield the port."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            handler(self)

        do_HEAD = do_GET

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def send_json(request: BaseHTTPRequestHandler, data: Any, status: int = 200) -> None:
    body = json.dumps(data).encode()
    request.send_response(status)
    request.send_header("Content-Type", "application/json")
    request.send_header("Content-Length", str(len(body)))
    request.end_headers()
    if request.command != "HEAD":
        request.wfile.write(body)


def json_routes(routes: dict[str, Any]) -> Callable[[BaseHTTPRequestHandler], None]:
    def handle(request: BaseHTTPRequestHandler) -> None:
        if request.path in routes:
            send_json(request, routes[request.path])
        else:
            send_json(request, {"error": "not found"}, 404)

    return handle


OLLAMA_TAGS = {"models": [
    {"name": "llama3.1:8b", "model": "llama3.1:8b", "size": 4920753328,
     "details": {"format": "gguf", "family": "llama", "parameter_size": "8.0B",
                 "quantization_level": "Q4_K_M"}},
    {"name": "nomic-embed-text:latest", "model": "nomic-embed-text:latest", "size": 274302450,
     "details": {"family": "nomic-bert", "parameter_size": "137M"}},
]}
LLAMACPP_MODELS = {"object": "list", "data": [
    {"id": "qwen2.5-7b-instruct-q4_k_m.gguf", "object": "model", "owned_by": "llamacpp",
     "meta": {"n_params": 7615616512, "size": 4677120000, "n_ctx_train": 32768}},
]}
VLLM_MODELS = {"object": "list", "data": [
    {"id": "Qwen/Qwen2.5-14B-Instruct", "object": "model", "owned_by": "vllm",
     "max_model_len": 32768},
]}
LMSTUDIO_MODELS = {"object": "list", "data": [
    {"id": "phi-3.5-mini-instruct", "object": "model", "owned_by": "organization_owner"},
    {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model",
     "owned_by": "organization_owner"},
]}
LMSTUDIO_V0 = {"object": "list", "data": [
    {"id": "phi-3.5-mini-instruct", "type": "llm", "quantization": "Q4_K_M",
     "state": "not-loaded", "max_context_length": 131072},
    {"id": "text-embedding-nomic-embed-text-v1.5", "type": "embeddings"},
]}


def gguf_bytes(size: int, *, name: str = "Test Model", licence: str = "apache-2.0",
               seed: int = 1) -> bytes:
    """A generated GGUF file of ``size`` bytes: a real GGUF header with a few metadata keys,
    then random bytes."""

    def string(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    kvs = [("general.architecture", "llama"), ("general.name", name),
           ("general.license", licence), ("general.size_label", "1M")]
    body = b"".join(string(k) + struct.pack("<I", 8) + string(v) for k, v in kvs)
    body += string("llama.context_length") + struct.pack("<I", 4) + struct.pack("<I", 4096)
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs) + 1) + body
    rest = random.Random(seed).randbytes(max(0, size - len(header)))
    return header + rest


class FileServer:
    """Serves ``data`` like Hugging Face: ``/repo/resolve/main/<name>`` answers 302 with the
    SHA-256 in X-Linked-Etag, ``/cdn/<name>`` sends the bytes with Range support.

    ``drop_after``: bytes sent before the connection is cut (once per entry of the list);
    ``corrupt_at``: offsets whose byte is flipped in the next full send (once each);
    ``ranges``: False ignores Range headers; ``publish_sha``: False sends no checksum."""

    def __init__(self, data: bytes, *, name: str = "model.gguf") -> None:
        self.data = data
        self.name = name
        self.sha256 = hashlib.sha256(data).hexdigest()
        self.drop_after: list[int] = []
        self.corrupt_at: list[int] = []
        self.ranges = True
        self.publish_sha = True
        self.requests: list[tuple[str, str, str]] = []   # (method, path, Range header)
        self.bytes_sent = 0
        self.port = 0

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/repo/resolve/main/{self.name}"

    def __call__(self, request: BaseHTTPRequestHandler) -> None:
        self.requests.append((request.command, request.path, request.headers.get("Range", "")))
        if request.path.startswith("/repo/resolve/main/"):
            request.send_response(302)
            request.send_header("Location", f"/cdn/{self.name}")
            if self.publish_sha:
                request.send_header("X-Linked-Etag", f'"{self.sha256}"')
            request.send_header("X-Linked-Size", str(len(self.data)))
            request.send_header("Content-Length", "0")
            request.end_headers()
            return
        if request.path != f"/cdn/{self.name}":
            send_json(request, {"error": "not found"}, 404)
            return
        start, end = 0, len(self.data) - 1
        wanted = request.headers.get("Range", "")
        status = 200
        if wanted and self.ranges:
            first, _, last = wanted.removeprefix("bytes=").partition("-")
            start = int(first)
            end = int(last) if last else len(self.data) - 1
            if start >= len(self.data):
                request.send_response(416)
                request.send_header("Content-Length", "0")
                request.end_headers()
                return
            status = 206
        body = bytearray(self.data[start:end + 1])
        if request.command == "GET":
            for offset in list(self.corrupt_at):
                if start <= offset <= end:
                    body[offset - start] ^= 0xFF
                    self.corrupt_at.remove(offset)
        request.send_response(status)
        request.send_header("Content-Length", str(len(body)))
        if self.ranges:
            request.send_header("Accept-Ranges", "bytes")
        if status == 206:
            request.send_header("Content-Range", f"bytes {start}-{end}/{len(self.data)}")
        request.end_headers()
        if request.command == "HEAD":
            return
        if self.drop_after and request.command == "GET":
            cut = self.drop_after.pop(0)
            request.wfile.write(bytes(body[:cut]))
            request.wfile.flush()
            self.bytes_sent += min(cut, len(body))
            request.close_connection = True
            request.connection.shutdown(2)
            return
        request.wfile.write(bytes(body))
        self.bytes_sent += len(body)
