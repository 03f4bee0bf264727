#!/usr/bin/env python3
"""Build llama.cpp's own server (``llama-server``) and ``llama-batched-bench``: the engine that
runs model files (.gguf) in a process of its own.

The source is the llama.cpp that the pinned llama-cpp-python sdist carries under
``vendor/llama.cpp`` (the same llama.cpp EvalDesk ran in-process before, so answers do not move).
Plain Python, run with the Python that has EvalDesk installed (``make setup`` and
``installers/build.py`` call it):

    python installers/build_llama_server.py                   # this computer's processor
    python installers/build_llama_server.py --variant portable   # for an installer
    python installers/build_llama_server.py --dest build/llama.cpp   # where the binaries go
    python installers/build_llama_server.py --print-key       # the cache key, nothing built

Built once per (llama.cpp version, build flags, system, processor kind) and kept under the user's
cache folder (``$EVALDESK_ENGINE_CACHE``, else e.g. ``~/.cache/EvalDesk/engine`` on Linux), outside
the clone, so CI and a second clone do not compile it again; the finished files are copied to
``--dest`` (default ``build/llama.cpp`` in this clone, where EvalDesk looks for them when it runs
from source; ``build.spec`` ships that folder in the app).

Variants:

* ``native`` (default): optimised for this computer's processor (``GGML_NATIVE``); one static
  program per tool. What ``make setup`` builds for tests and benchmarks.
* ``portable``: runs on any computer of the platform. x86-64 (Linux, Windows, Intel Macs): the CPU
  code is built once per instruction-set level as loadable libraries beside the program
  (``GGML_BACKEND_DL`` + ``GGML_CPU_ALL_VARIANTS``; the best one is picked at start); Apple
  silicon: Metal (the GPU) with its shaders built in, and generic ARM code for the CPU part.
  What the installers ship.

Turned off: the web UI (and its download), HTTPS, tests, examples and every other tool; OpenMP
(ggml's own thread pool instead, so the program needs no libgomp on the user's computer).
Needs a C/C++ compiler and CMake >= 3.21 (pip's ``cmake`` and ``ninja`` wheels are installed into
this Python when the system has none).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform as _platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DEST = ROOT / "build" / "llama.cpp"

#: The llama-cpp-python release whose vendored llama.cpp is built, and its sdist's SHA-256 (PyPI).
LLAMA_CPP_PYTHON = "0.3.36"
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
#: The programs built (cmake targets).
TARGETS = ("llama-server", "llama-batched-bench")
VARIANTS = ("native", "portable")
#: Bump when the recipe changes in a way the flags do not show (a new cache entry is made).
RECIPE = 1


class EngineBuildError(Exception):
    """The engine cannot be built; the message says what to do."""


# ------------------------------------------------------------------------------ pure parts
def system_name(sys_platform: str = sys.platform) -> str:
    if sys_platform.startswith("linux"):
        return "linux"
    if sys_platform in ("win32", "cygwin"):
        return "windows"
    if sys_platform == "darwin":
        return "macos"
    return sys_platform


def machine_name(machine: str | None = None) -> str:
    found = (machine or _platform.machine() or "unknown").lower()
    return {"amd64": "x86_64", "x64": "x86_64", "aarch64": "arm64"}.get(found, found)


def exe_name(target: str, system: str) -> str:
    return target + (".exe" if system == "windows" else "")


def cmake_flags(variant: str, system: str, machine: str) -> list[str]:
    """The CMake cache settings of one build (everything not needed is off)."""
    if variant not in VARIANTS:
        raise EngineBuildError(f"unknown engine variant {variant!r}: use one of {VARIANTS}")
    flags = {
        "CMAKE_BUILD_TYPE": "Release",
        "LLAMA_BUILD_COMMON": "ON",
        "LLAMA_BUILD_TOOLS": "ON",
        "LLAMA_BUILD_SERVER": "ON",
        "LLAMA_BUILD_TESTS": "OFF",
        "LLAMA_BUILD_EXAMPLES": "OFF",
        "LLAMA_BUILD_APP": "OFF",
        "LLAMA_BUILD_UI": "OFF",
        "LLAMA_USE_PREBUILT_UI": "OFF",  # else the web UI is downloaded at build time
        "LLAMA_OPENSSL": "OFF",
        "LLAMA_CURL": "OFF",
        "LLAMA_TOOLS_INSTALL": "OFF",
        "LLAMA_BUILD_COMMIT": f"llama-cpp-python-{LLAMA_CPP_PYTHON}",
        "GGML_OPENMP": "OFF",
        "GGML_CCACHE": "OFF",
    }
    metal = system == "macos" and machine == "arm64"
    flags["GGML_METAL"] = "ON" if metal else "OFF"
    if metal:
        flags["GGML_METAL_EMBED_LIBRARY"] = "ON"
    if variant == "native":
        flags["GGML_NATIVE"] = "ON"
        flags["BUILD_SHARED_LIBS"] = "OFF"
    elif machine == "x86_64":
        flags["GGML_NATIVE"] = "OFF"
        flags["BUILD_SHARED_LIBS"] = "ON"
        flags["GGML_BACKEND_DL"] = "ON"
        flags["GGML_CPU_ALL_VARIANTS"] = "ON"
    else:
        flags["GGML_NATIVE"] = "OFF"
        flags["BUILD_SHARED_LIBS"] = "OFF"
    if flags["BUILD_SHARED_LIBS"] == "ON" and system != "windows":
        # the libraries are found beside the program, wherever it is copied to, and the C++
        # runtime PyInstaller collects one folder up (the app's _internal/)
        origin = "@loader_path" if system == "macos" else "$ORIGIN"
        flags["CMAKE_BUILD_WITH_INSTALL_RPATH"] = "ON"
        flags["CMAKE_INSTALL_RPATH"] = f"{origin};{origin}/.."
    return [f"-D{key}={value}" for key, value in flags.items()]


def build_key(variant: str, system: str, machine: str) -> str:
    """The cache entry of one build: llama.cpp version, system, processor kind, variant and a
    digest of the flags (so a changed recipe never reuses an old build)."""
    recipe = json.dumps([RECIPE, SDIST_SHA256, TARGETS, cmake_flags(variant, system, machine)])
    digest = hashlib.sha256(recipe.encode()).hexdigest()[:12]
    return f"llama-cpp-python-{LLAMA_CPP_PYTHON}-{system}-{machine}-{variant}-{digest}"


def cache_root(environ: dict[str, str] | None = None, system: str | None = None) -> Path:
    """``$EVALDESK_ENGINE_CACHE`` (``~`` expanded), else the user's cache folder + EvalDesk/engine."""
    environ = dict(os.environ if environ is None else environ)
    system = system or system_name()
    if environ.get("EVALDESK_ENGINE_CACHE"):
        return Path(os.path.expanduser(environ["EVALDESK_ENGINE_CACHE"]))
    home = Path(os.path.expanduser("~"))
    if system == "windows":
        base = Path(environ.get("LOCALAPPDATA") or home / "AppData" / "Local") / "EvalDesk" / "Cache"
    elif system == "macos":
        base = home / "Library" / "Caches" / "EvalDesk"
    else:
        base = Path(environ.get("XDG_CACHE_HOME") or home / ".cache") / "EvalDesk"
    return base / "engine"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ------------------------------------------------------------------------------ steps
def _run(command: list[str], **kwargs) -> None:
    print("   $ " + " ".join(command), flush=True)
    result = subprocess.run(command, check=False, **kwargs)
    if result.returncode != 0:
        raise EngineBuildError(f"{Path(command[0]).name} failed (exit code {result.returncode}): "
                               "see its output above.")


def source_tree(cache: Path) -> Path:
    """llama.cpp's source, from the llama-cpp-python sdist (downloaded once with pip from PyPI,
    checked against its SHA-256, unpacked once)."""
    source = cache / f"src-{LLAMA_CPP_PYTHON}"
    if (source / "CMakeLists.txt").is_file() and (source / ".complete").is_file():
        return source
    sdists = cache / "sdist"
    sdists.mkdir(parents=True, exist_ok=True)
    archive = sdists / f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz"
    if not archive.is_file() or sha256_of(archive) != SDIST_SHA256:
        print(f"== engine: downloading the llama-cpp-python {LLAMA_CPP_PYTHON} source from PyPI",
              flush=True)
        with tempfile.TemporaryDirectory(dir=sdists) as tmp:
            _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:",
                  "--no-deps", "--dest", tmp,
                  f"llama-cpp-python=={LLAMA_CPP_PYTHON}"])
            found = list(Path(tmp).glob("*.tar.gz"))
            if not found:
                raise EngineBuildError("pip downloaded no source archive of llama-cpp-python.")
            shutil.move(str(found[0]), archive)
    if sha256_of(archive) != SDIST_SHA256:
        archive.unlink()
        raise EngineBuildError(
            f"the downloaded llama-cpp-python {LLAMA_CPP_PYTHON} source does not have the "
            "expected SHA-256; it was deleted. Run again; if it happens again, do not build."
        )
    prefix = f"llama_cpp_python-{LLAMA_CPP_PYTHON}/vendor/llama.cpp/"
    partial = Path(tempfile.mkdtemp(prefix="src-", dir=cache))
    with tarfile.open(archive) as tar:
        members = []
        for member in tar.getmembers():
            if not member.name.startswith(prefix) or member.name == prefix.rstrip("/"):
                continue
            member.name = member.name[len(prefix):]
            if member.name == ".git":  # a git submodule pointer to a folder that is not there
                continue
            members.append(member)
        tar.extractall(partial, members=members, filter="data")
    (partial / ".complete").write_text(SDIST_SHA256)
    shutil.rmtree(source, ignore_errors=True)
    partial.rename(source)
    return source


def cmake_tools() -> tuple[str, str | None]:
    """CMake (>= 3.21) and Ninja: the system's, else pip's wheels installed into this Python."""
    cmake, ninja = shutil.which("cmake"), shutil.which("ninja")
    if cmake and _cmake_version(cmake) >= (3, 21):
        return cmake, ninja
    print("== engine: no CMake >= 3.21 on this system: installing pip's cmake and ninja", flush=True)
    _run([sys.executable, "-m", "pip", "install", "--quiet", "cmake>=3.21,<5", "ninja>=1.11,<2"])
    scripts = Path(sys.executable).parent
    for folder in (scripts, scripts / "Scripts", scripts / "bin"):
        for name in ("cmake", "cmake.exe"):
            if (folder / name).is_file():
                found_ninja = next((str(folder / n) for n in ("ninja", "ninja.exe")
                                    if (folder / n).is_file()), shutil.which("ninja"))
                return str(folder / name), found_ninja
    raise EngineBuildError("CMake could not be installed: install CMake 3.21 or newer and run "
                           "again.")


def _cmake_version(cmake: str) -> tuple[int, ...]:
    try:
        text = subprocess.run([cmake, "--version"], capture_output=True, text=True,
                              check=False).stdout
        return tuple(int(p) for p in text.split()[2].split(".")[:2])
    except (OSError, IndexError, ValueError):
        return (0,)


def build(variant: str, *, jobs: int, cache: Path | None = None) -> Path:
    """The folder with the built programs (and, for the portable x86-64 build, their libraries),
    from the cache when this recipe was built before."""
    system, machine = system_name(), machine_name()
    cache = cache or cache_root()
    key = build_key(variant, system, machine)
    out = cache / key
    done = out / "files.json"
    if done.is_file():
        print(f"== engine: {key} is already built ({out})", flush=True)
        return out / "bin"
    cache.mkdir(parents=True, exist_ok=True)
    source = source_tree(cache)
    cmake, ninja = cmake_tools()
    work = Path(tempfile.mkdtemp(prefix=f"{key}-", dir=cache))
    started = time.monotonic()
    print(f"== engine: building {', '.join(TARGETS)} ({variant}, {jobs} jobs) in {work}",
          flush=True)
    configure = [cmake, "-S", str(source), "-B", str(work / "build"),
                 *cmake_flags(variant, system, machine)]
    if ninja:
        configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    _run(configure)
    _run([cmake, "--build", str(work / "build"), "--config", "Release", "-j", str(jobs),
          "--target", *TARGETS])
    built = _collect(work / "build" / "bin", system)
    bin_dir = work / "bin"
    bin_dir.mkdir()
    for path in built:
        shutil.copy2(path, bin_dir / path.name)
    (work / "files.json").write_text(json.dumps(
        {"key": key, "flags": cmake_flags(variant, system, machine),
         "files": sorted(p.name for p in built),
         "seconds": round(time.monotonic() - started)}, indent=1))
    shutil.rmtree(work / "build", ignore_errors=True)
    if out.exists():
        shutil.rmtree(out, ignore_errors=True)
    work.rename(out)
    print(f"== engine: built in {time.monotonic() - started:.0f} s", flush=True)
    return out / "bin"


def _collect(bin_dir: Path, system: str) -> list[Path]:
    """The programs and the shared libraries they load (MSVC puts them under Release/)."""
    folders = [bin_dir, bin_dir / "Release"]
    files: list[Path] = []
    for target in TARGETS:
        found = next((f / exe_name(target, system) for f in folders
                      if (f / exe_name(target, system)).is_file()), None)
        if found is None:
            raise EngineBuildError(f"the build made no {exe_name(target, system)} in {bin_dir}.")
        files.append(found)
    for folder in folders:
        if folder.is_dir():
            for pattern in ("*.so", "*.so.*", "*.dylib", "*.dll"):
                files += [p for p in folder.glob(pattern) if p.is_file()]
    return files


def install(bin_dir: Path, dest: Path, source: Path | None = None) -> list[Path]:
    """Copy the built files into ``dest`` (emptied first), with llama.cpp's MIT licence and
    those of the code it includes (from ``source``, the unpacked llama.cpp) and a note of what
    they are."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    copied = []
    for path in sorted(bin_dir.iterdir()):
        shutil.copy2(path, dest / path.name)
        copied.append(dest / path.name)
    if source is not None:
        shutil.copy2(source / "LICENSE", dest / "LICENSE")
        copied.append(dest / "LICENSE")
        if (source / "licenses").is_dir():
            shutil.copytree(source / "licenses", dest / "licenses")
            copied.append(dest / "licenses")
    info = json.loads((bin_dir.parent / "files.json").read_text())
    (dest / "ENGINE.json").write_text(json.dumps(
        {"llama_cpp_python": LLAMA_CPP_PYTHON, "key": info["key"], "flags": info["flags"]},
        indent=1))
    return copied


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=VARIANTS, default="native",
                        help="native: this computer's processor (tests, benchmarks); portable: "
                             "any computer of this platform (installers). Default: native")
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST,
                        help=f"where the programs are copied (default {DEFAULT_DEST})")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="compile jobs at once (default: the number of cores)")
    parser.add_argument("--print-key", action="store_true", help="print the cache key and stop")
    args = parser.parse_args(argv)
    try:
        if args.print_key:
            print(build_key(args.variant, system_name(), machine_name()))
            return 0
        bin_dir = build(args.variant, jobs=max(1, args.jobs))
        copied = install(bin_dir, args.dest, source_tree(cache_root()))
        print(f"== engine: {len(copied)} file(s) in {args.dest}", flush=True)
        return 0
    except EngineBuildError as exc:
        print(f"build_llama_server.py: {exc}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
