"""``evaldesk models list|find|download|import`` against fake servers on 127.0.0.1."""

from __future__ import annotations

import dataclasses

import pytest

from core.cli import main
from core.local_models import catalogue
from core.settings import SettingsStore
from tests.core.local_models.fake_servers import (
    LLAMACPP_MODELS,
    OLLAMA_TAGS,
    FileServer,
    gguf_bytes,
    json_routes,
    serve,
)


def _profiles():
    return {p.name: p for p in SettingsStore().load().profiles}


def test_list_shows_the_recommendations_with_fit_licence_and_quality(monkeypatch, capsys):
    monkeypatch.setattr(catalogue, "_total_ram", lambda: 8 * catalogue.GB)
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "This computer: 8.0 GB of memory" in out
    assert "qwen2.5-7b" in out and "Apache 2.0" in out and "Quality:" in out
    line_14b = next(line for line in out.splitlines() if line.strip().startswith("qwen2.5-14b"))
    assert "DOES NOT FIT" in line_14b
    assert "demo for trying the app" in out
    assert "You have no model files yet." in out


def test_find_lists_servers_and_adds_profiles(capsys):
    with serve(json_routes({"/api/tags": OLLAMA_TAGS})) as ollama, \
            serve(json_routes({"/v1/models": LLAMACPP_MODELS})) as llamacpp:
        code = main(["models", "find", "--port", f"ollama:{ollama}",
                     "--port", f"openai:{llamacpp}", "--add"])
    assert code == 0
    out = capsys.readouterr().out
    assert "Ollama at" in out and "llama3.1:8b: 4.9 GB on disk" in out
    assert "llama.cpp server at" in out
    assert "Added 2 model profiles" in out
    models = {p.model: p for p in _profiles().values()}
    assert models["ollama_chat/llama3.1:8b"].api_bases == [f"http://127.0.0.1:{ollama}"]
    assert models["openai/qwen2.5-7b-instruct-q4_k_m.gguf"].api_bases == [
        f"http://127.0.0.1:{llamacpp}/v1"]


def test_find_with_nothing_running_says_what_to_do(capsys):
    with serve(json_routes({})) as port:
        pass
    assert main(["models", "find", "--port", f"openai:{port}", "--timeout", "0.5"]) == 1
    assert "No model server answered" in capsys.readouterr().out


def test_find_rejects_a_malformed_port(capsys):
    assert main(["models", "find", "--port", "lmstudio"]) == 1
    assert "ollama:11434" in capsys.readouterr().err


@pytest.fixture
def file_server(monkeypatch):
    server = FileServer(gguf_bytes(400_000, name="Tiny"), name="Tiny-Q4_K_M.gguf")
    with serve(server) as port:
        server.port = port
        tiny = dataclasses.replace(catalogue.RECOMMENDED[0], key="tiny", name="Tiny",
                                   file_name=server.name)
        monkeypatch.setattr(catalogue, "RECOMMENDED", (tiny, *catalogue.RECOMMENDED))
        yield server


def test_download_resumes_checks_and_adds_a_profile(file_server, capsys, monkeypatch):
    from core.local_models import download

    monkeypatch.setattr(download.time, "sleep", lambda _s: None)
    file_server.drop_after = [100_000]
    assert main(["models", "download", "tiny", "--from", file_server.url()]) == 0
    out = capsys.readouterr().out
    assert "SHA-256 checked (published by the server)" in out
    target = catalogue.models_dir() / "Tiny-Q4_K_M.gguf"
    assert target.read_bytes() == file_server.data
    profile = _profiles()["Tiny (this computer)"]
    assert profile.gguf_path == str(target) and profile.is_local
    assert main(["models", "list"]) == 0
    listing = capsys.readouterr().out
    assert "Tiny: " in listing and "SHA-256 checked" in listing


def test_a_failed_download_is_kept_and_discard_deletes_it(file_server, capsys, monkeypatch):
    from core.local_models import download

    monkeypatch.setattr(download.time, "sleep", lambda _s: None)
    file_server.drop_after = [50_000] * 10
    assert main(["models", "download", "tiny", "--from", file_server.url()]) == 1
    assert "press Resume" in capsys.readouterr().err
    part = catalogue.models_dir() / "Tiny-Q4_K_M.gguf.part"
    assert part.stat().st_size == 300_000
    assert main(["models", "list"]) == 0
    assert "Paused download: 0.3 MB of 2.0 GB here." in capsys.readouterr().out
    assert main(["models", "download", "tiny", "--discard"]) == 0
    assert not part.exists()


def test_download_of_an_unknown_model_names_the_list(capsys):
    assert main(["models", "download", "gpt-7"]) == 1
    assert "The list has: llama3.2-3b" in capsys.readouterr().err


def test_import_copies_a_model_file_and_adds_a_profile(tmp_path, capsys):
    source = tmp_path / "Mine-Q4_K_M.gguf"
    source.write_bytes(gguf_bytes(50_000, name="Mine", licence="mit"))
    assert main(["models", "import", str(source)]) == 0
    out = capsys.readouterr().out
    assert "Licence: mit (as the file says)" in out
    copied = catalogue.models_dir() / source.name
    assert copied.read_bytes() == source.read_bytes()
    assert _profiles()["Mine (1M) (this computer)"].gguf_path == str(copied)


def test_import_in_place_and_a_wrong_file(tmp_path, capsys):
    source = tmp_path / "Mine.gguf"
    source.write_bytes(gguf_bytes(50_000, name="Mine"))
    assert main(["models", "import", str(source), "--in-place", "--no-profile"]) == 0
    assert "used where it is" in capsys.readouterr().out
    assert not list(catalogue.models_dir().glob("*.gguf"))
    wrong = tmp_path / "report.pdf"
    wrong.write_bytes(b"%PDF-1.7")
    assert main(["models", "import", str(wrong)]) == 1
    assert "report.pdf is not a GGUF model file" in capsys.readouterr().err


def test_find_on_a_given_port_names_no_program_it_cannot_tell_and_keeps_the_port(capsys):
    """Issue 28, point 13: a stand-in OpenAI-compatible server on a port of its own was called
    "LM Studio" (it answers LM Studio's address too, with the same list), and the hint to add
    it dropped the --port, so following it found nothing."""
    from http.server import BaseHTTPRequestHandler

    from tests.core.local_models.fake_servers import send_json

    listing = {"object": "list", "data": [
        {"id": "judge-model", "object": "model", "owned_by": "organization_owner"}]}

    def every_address(request: BaseHTTPRequestHandler) -> None:
        send_json(request, listing)

    with serve(every_address) as port:
        assert main(["models", "find", "--port", f"openai:{port}"]) == 0
    captured = capsys.readouterr()
    assert "LM Studio" not in captured.out + captured.err
    assert f"an OpenAI-compatible server at http://127.0.0.1:{port}/v1" in captured.out
    assert f"evaldesk models find --port openai:{port} --add" in captured.err
