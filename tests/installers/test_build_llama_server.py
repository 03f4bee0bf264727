"""installers/build_llama_server.py: the engine's build recipe, its cache, and what it installs.

The compile itself is exercised by ``make setup`` (every test of the engine runs the program it
built); these check the choices that are easy to get wrong without a compile."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("build_llama_server",
                                               ROOT / "installers" / "build_llama_server.py")
bls = importlib.util.module_from_spec(_spec)
sys.modules["build_llama_server"] = bls
_spec.loader.exec_module(bls)


def flags(variant: str, system: str, machine: str) -> dict[str, str]:
    return dict(f[2:].split("=", 1) for f in bls.cmake_flags(variant, system, machine))


def test_nothing_is_downloaded_and_only_the_engine_is_built():
    for variant in bls.VARIANTS:
        for system, machine in (("linux", "x86_64"), ("windows", "x86_64"), ("macos", "arm64"),
                                ("macos", "x86_64")):
            found = flags(variant, system, machine)
            # the server's web UI would otherwise be fetched at build time
            assert found["LLAMA_USE_PREBUILT_UI"] == "OFF" and found["LLAMA_BUILD_UI"] == "OFF"
            assert found["LLAMA_OPENSSL"] == "OFF"
            assert found["LLAMA_BUILD_TESTS"] == found["LLAMA_BUILD_EXAMPLES"] == "OFF"
            assert found["GGML_OPENMP"] == "OFF"  # no libgomp needed on the user's computer
    assert bls.TARGETS == ("llama-server", "llama-batched-bench")


def test_native_is_for_this_processor_and_portable_for_any():
    native = flags("native", "linux", "x86_64")
    assert native["GGML_NATIVE"] == "ON" and native["BUILD_SHARED_LIBS"] == "OFF"
    portable = flags("portable", "linux", "x86_64")
    assert portable["GGML_NATIVE"] == "OFF"
    assert portable["GGML_BACKEND_DL"] == portable["GGML_CPU_ALL_VARIANTS"] == "ON"
    # finds its libraries beside itself (and the C++ runtime in the app's _internal/)
    assert portable["CMAKE_INSTALL_RPATH"] == "$ORIGIN;$ORIGIN/.."
    assert "CMAKE_INSTALL_RPATH" not in flags("portable", "windows", "x86_64")
    assert flags("portable", "macos", "x86_64")["CMAKE_INSTALL_RPATH"] == \
        "@loader_path;@loader_path/.."


def test_metal_on_apple_silicon_only():
    assert flags("portable", "macos", "arm64")["GGML_METAL"] == "ON"
    assert flags("portable", "macos", "arm64")["GGML_METAL_EMBED_LIBRARY"] == "ON"
    assert flags("portable", "macos", "arm64")["GGML_NATIVE"] == "OFF"
    assert flags("portable", "macos", "x86_64")["GGML_METAL"] == "OFF"
    assert flags("native", "linux", "x86_64")["GGML_METAL"] == "OFF"


def test_the_cache_key_names_version_system_variant_and_flags(monkeypatch):
    key = bls.build_key("native", "linux", "x86_64")
    assert key.startswith(f"llama-cpp-python-{bls.LLAMA_CPP_PYTHON}-linux-x86_64-native-")
    assert bls.build_key("portable", "linux", "x86_64") != key
    assert bls.build_key("native", "linux", "arm64") != key
    monkeypatch.setattr(bls, "RECIPE", bls.RECIPE + 1)
    assert bls.build_key("native", "linux", "x86_64") != key  # a changed recipe builds anew


def test_cache_root_is_outside_the_clone():
    assert bls.cache_root({"EVALDESK_ENGINE_CACHE": "~/x"}) == Path.home() / "x"
    linux = bls.cache_root({"XDG_CACHE_HOME": "/c"}, "linux")
    assert linux == Path("/c/EvalDesk/engine")
    assert bls.cache_root({"LOCALAPPDATA": "/l"}, "windows") == Path("/l/EvalDesk/Cache/engine")
    assert not str(bls.cache_root({}, "linux")).startswith(str(ROOT))


def test_a_cached_build_is_installed_without_compiling(tmp_path, monkeypatch, capsys):
    key = bls.build_key("native", bls.system_name(), bls.machine_name())
    made = tmp_path / "cache" / key / "bin"
    made.mkdir(parents=True)
    for name in ("llama-server", "llama-batched-bench"):
        (made / name).write_text(name)
    source = tmp_path / "cache" / f"src-{bls.LLAMA_CPP_PYTHON}"
    (source / "licenses").mkdir(parents=True)
    (source / "CMakeLists.txt").write_text("")
    (source / ".complete").write_text("")
    (source / "LICENSE").write_text("MIT License")
    (source / "licenses" / "LICENSE-jsonhpp").write_text("MIT")
    (made.parent / "files.json").write_text(json.dumps({"key": key, "flags": ["-DX=1"],
                                                        "files": []}))
    monkeypatch.setattr(bls, "_run", lambda *a, **k: pytest.fail("compiled again"))
    monkeypatch.setenv("EVALDESK_ENGINE_CACHE", str(tmp_path / "cache"))
    dest = tmp_path / "out"
    (dest / "stale").mkdir(parents=True)
    assert bls.main(["--dest", str(dest)]) == 0
    assert (dest / "llama-server").read_text() == "llama-server"
    assert (dest / "LICENSE").read_text() == "MIT License"  # shipped beside the program
    assert (dest / "licenses" / "LICENSE-jsonhpp").is_file()
    assert not (dest / "stale").exists()
    info = json.loads((dest / "ENGINE.json").read_text())
    assert info["key"] == key and info["llama_cpp_python"] == bls.LLAMA_CPP_PYTHON
    assert "already built" in capsys.readouterr().out


def test_a_source_archive_with_the_wrong_checksum_is_refused(tmp_path, monkeypatch):
    archive = tmp_path / "sdist" / f"llama_cpp_python-{bls.LLAMA_CPP_PYTHON}.tar.gz"
    archive.parent.mkdir()
    archive.write_bytes(b"not the real source")

    def fake_download(command, **_kwargs):  # pip "downloads" the same wrong file again
        Path(command[command.index("--dest") + 1], archive.name).write_bytes(b"tampered")

    monkeypatch.setattr(bls, "_run", fake_download)
    with pytest.raises(bls.EngineBuildError, match="expected SHA-256"):
        bls.source_tree(tmp_path)
    assert not archive.exists()
