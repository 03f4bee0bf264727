"""Screenshots of the local-model windows for the README: ``resources/screenshots/models-*.png``.

Two small stand-in servers on 127.0.0.1 answer like Ollama and a llama.cpp server, and the
model manager shows a paused download (a sparse file) and an imported model file, so the
pictures show what a user with those programs sees::

    EVALDESK_HOME=$(mktemp -d) xvfb-run -s "-screen 0 1280x800x24" \\
        .venv/bin/python -m desktop._model_shots
"""

from __future__ import annotations

import asyncio
import json
import struct
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from core import paths
from core.local_models import catalogue
from core.local_models.catalogue import GB, Computer
from core.local_models.discovery import Candidate
from core.local_models.files import import_model_file
from desktop._screenshots import _memory_keyring
from desktop._wizard_shots import grabber, run_shots, wait_until
from desktop.model_discovery import DiscoveryDialog
from desktop.model_manager import ModelManagerDialog
from desktop.settings_dialog import SettingsDialog

_OLLAMA = {"models": [
    {"name": "qwen2.5:7b", "size": 4683087332,
     "details": {"parameter_size": "7.6B", "quantization_level": "Q4_K_M"}},
    {"name": "llama3.1:8b", "size": 4920753328,
     "details": {"parameter_size": "8.0B", "quantization_level": "Q4_K_M"}},
    {"name": "phi3.5:latest", "size": 2176178913,
     "details": {"parameter_size": "3.8B", "quantization_level": "Q4_0"}},
]}
_LLAMACPP = {"object": "list", "data": [
    {"id": "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "object": "model", "owned_by": "llamacpp",
     "meta": {"n_params": 8030261248, "size": 4912893952, "n_ctx_train": 131072}},
]}


def _serve(routes: dict[str, Any]) -> int:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(routes.get(self.path, {"error": "not found"})).encode()
            self.send_response(200 if self.path in routes else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def _small_gguf(path: Path) -> None:
    def text(value: str) -> bytes:
        raw = value.encode()
        return struct.pack("<Q", len(raw)) + raw

    pairs = [("general.architecture", "llama"), ("general.name", "Mistral 7B Instruct v0.3"),
             ("general.license", "apache-2.0")]
    body = b"".join(text(k) + struct.pack("<I", 8) + text(v) for k, v in pairs)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + body + b"\0" * 4096)


async def _shoot(session: Any, out: Path) -> None:
    grab = grabber(session, out, "models")
    window = session.window
    window.resize(1280, 800)
    settings_dialog = window.open_settings()
    discovery = settings_dialog.open_discovery()
    discovery.resize(1180, 560)
    await wait_until(lambda: discovery.reports is not None, timeout=20)
    discovery.view.selectRow(0)
    discovery.add_selected()
    discovery.view.selectRow(3)
    await asyncio.sleep(0.3)
    grab("discovery", discovery)
    discovery.close()
    settings_dialog.resize(1180, 700)
    await asyncio.sleep(0.3)
    grab("settings", settings_dialog)
    manager = settings_dialog.open_model_manager()
    manager.resize(1240, 760)
    manager.recommended_view.selectRow(2)
    await asyncio.sleep(0.4)
    grab("manager", manager)
    manager.close()
    settings_dialog.close()


def main(argv: list[str]) -> int:
    SettingsDialog.detect_devices = staticmethod(lambda: ["cpu"])
    _memory_keyring()
    DiscoveryDialog.candidates = [
        Candidate("ollama", _serve({"/api/tags": _OLLAMA}), "Ollama"),
        Candidate("openai", 1, "LM Studio"),  # nothing listens on port 1
        Candidate("openai", _serve({"/v1/models": _LLAMACPP}), "llama.cpp server"),
    ]
    ModelManagerDialog.measure = staticmethod(
        lambda folder: Computer(total_ram=12 * GB, free_disk=118 * GB, folder=str(folder)))
    folder = catalogue.models_dir()
    qwen = catalogue.find_recommended("qwen2.5-7b")
    with (folder / (qwen.file_name + ".part")).open("wb") as part:
        part.truncate(int(1.9 * GB))  # a paused download (sparse: takes no disk)
    with tempfile.TemporaryDirectory() as usb:
        source = Path(usb) / "Mistral-7B-Instruct-v0.3-Q4_K_M.gguf"
        _small_gguf(source)
        import_model_file(source, copy=False)
        return run_shots(_shoot, argv or [str(paths.resources_dir() / "screenshots")])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
