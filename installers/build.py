#!/usr/bin/env python3
"""Build EvalDesk's installer for the system this runs on: one script for Linux, Windows and macOS.

Plain Python (no make, no bash needed to start it), run with the Python that has EvalDesk's
dependencies installed (the project's .venv here, the runner's Python in the GitHub workflow):

    python installers/build.py                  # app, smoke test, installer, dist/SHA256SUMS
    python installers/build.py --skip-smoke     # without the smoke test (installers/smoke_test.py)
    python installers/build.py --no-package     # only the app folder dist/EvalDesk/ (`make dist`)
    python installers/build.py --skip-build     # package the dist/EvalDesk/ that is already there
    python installers/build.py --sums-only      # write dist/SHA256SUMS again (after signing)
    python installers/build.py --dry-run        # print the steps and commands, run nothing

Steps, in order (each prints its command and how long it took):

1. build extras: ``pip install -e ".[build]"`` when PyInstaller is not importable;
2. icons (Windows and macOS only): ``installers/make_icons.py``, and on macOS ``iconutil`` for
   the ``.icns`` file;
3. app: the engine for model files (``installers/build_llama_server.py``: llama.cpp's
   ``llama-server``, portable to any computer of the platform unless ``--engine native``, built
   once and cached outside the clone) into ``build/llama.cpp/``, the bundled embedding model
   exported to ``resources/onnx`` (``python -m core.embeddings export-onnx``), then PyInstaller
   with ``build.spec`` -> ``dist/EvalDesk/`` (and ``dist/EvalDesk.app`` on macOS);
4. smoke test: ``installers/smoke_test.py`` on the built app (no Python from this tree used);
5. package: Linux ``installers/linux/build_deb.sh`` (the .deb; needs dpkg-deb), Windows Inno
   Setup's ``iscc`` on ``installers/windows/evaldesk.iss``, macOS ``installers/macos/make_dmg.sh``
   (hdiutil);
6. checksums: ``dist/SHA256SUMS`` for the installer files this run made, in the format
   ``sha256sum -c`` / ``shasum -a 256 -c`` read, and printed.

Exit code 0 when every step passed; otherwise the failing step's exit code (or 1) and a message
saying what to do.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
SUMS_NAME = "SHA256SUMS"
INNO_SETUP_URL = "https://jrsoftware.org/isdl.php"

LINUX, WINDOWS, MACOS = "linux", "windows", "macos"


class BuildError(Exception):
    """A step cannot run or failed; the message says what to do."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Step:
    name: str
    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)  # added to this process's environment

    def shown(self) -> str:
        """The command as one line to read (and paste into a shell) in the build log."""
        parts = [f"{key}={value}" for key, value in self.env.items()]
        parts += [_quote(part) for part in self.command]
        return " ".join(parts)


def _quote(part: str) -> str:
    if re.fullmatch(r"[\w./\\=:+,@%-]+", part):
        return part
    return f'"{part}"' if sys.platform == "win32" else "'" + part.replace("'", "'\\''") + "'"


# ------------------------------------------------------------------------------ pure parts
def platform_name(sys_platform: str = sys.platform) -> str:
    """``linux``, ``windows`` or ``macos`` for a ``sys.platform`` value; BuildError otherwise."""
    if sys_platform.startswith("linux"):
        return LINUX
    if sys_platform in ("win32", "cygwin"):
        return WINDOWS
    if sys_platform == "darwin":
        return MACOS
    raise BuildError(f"EvalDesk has no installer recipe for this system ({sys_platform}).")


def read_version(root: Path = ROOT) -> str:
    """``__version__`` from core/__init__.py, read as text (the build needs no import of core)."""
    text = (root / "core" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if not found:
        raise BuildError("core/__init__.py has no __version__ line: cannot name the installer.")
    return found.group(1)


def app_executable(platform: str, dist: Path = DIST) -> Path:
    """The built app's windowed executable inside dist/EvalDesk/."""
    return dist / "EvalDesk" / ("evaldesk.exe" if platform == WINDOWS else "evaldesk")


def package_patterns(platform: str, version: str) -> tuple[str, ...]:
    """File names (glob patterns in dist/) the platform's packaging step writes."""
    return {
        LINUX: (f"evaldesk_{version}_*.deb",),
        WINDOWS: (f"EvalDesk-{version}-setup.exe",),
        MACOS: (f"EvalDesk-{version}-macos-*.dmg",),
    }[platform]


def find_iscc(environ: Mapping[str, str] = os.environ, which=shutil.which) -> str | None:
    """Inno Setup's command-line compiler: on PATH, or in Inno Setup 6's usual install folders."""
    for name in ("iscc", "ISCC.exe"):
        found = which(name)
        if found:
            return found
    for base in ("ProgramFiles(x86)", "ProgramFiles", "LOCALAPPDATA"):
        if environ.get(base):
            folder = Path(environ[base]) / ("Programs" if base == "LOCALAPPDATA" else "")
            candidate = folder / "Inno Setup 6" / "ISCC.exe"
            if candidate.is_file():
                return str(candidate)
    return None


def plan(
    platform: str,
    *,
    python: str,
    version: str,
    build: bool = True,
    smoke: bool = True,
    package: bool = True,
    have_pyinstaller: bool = True,
    iscc: str | None = None,
    deb_compression: str = "xz",
    lock_target: str | None = None,
    torch_index: str | None = None,
    engine: str = "portable",
) -> list[Step]:
    """The steps for one run, in order (checksums are written after them, not a Step). With
    ``lock_target`` the build's packages are installed from its hash-locked requirements first
    (:func:`locked_install_steps`); without, the build extra when PyInstaller is missing."""
    steps: list[Step] = []
    if build:
        if lock_target is not None:
            steps += locked_install_steps(python, lock_target, torch_index=torch_index)
        elif not have_pyinstaller:
            steps.append(Step("build extras", (python, "-m", "pip", "install", "-e", ".[build]")))
        if platform in (WINDOWS, MACOS):
            steps.append(Step("icons", (python, "installers/make_icons.py")))
        if platform == MACOS:
            steps.append(Step("icons (icns)", ("iconutil", "-c", "icns",
                                               "build/icons/evaldesk.iconset",
                                               "-o", "build/icons/evaldesk.icns")))
        steps.append(engine_step(python, engine))
        # the bundled MiniLM as an ONNX file in resources/onnx (shipped with resources/): the
        # app never exports it on the user's computer, and the smoke test's source run and the
        # bundle read the same file, so their workbooks are equal
        steps.append(Step("embedding model (ONNX)", (python, "-m", "core.embeddings",
                                                     "export-onnx")))
        steps.append(Step("app", (python, "-m", "PyInstaller", "--noconfirm", "--log-level",
                                  "WARN", "build.spec")))
    if smoke:
        app = app_executable(platform, Path("dist"))
        steps.append(Step("smoke test", (python, "installers/smoke_test.py", "--app", str(app))))
    if package:
        if platform == LINUX:
            steps.append(Step("package (.deb)", ("bash", "installers/linux/build_deb.sh"),
                              {"DEB_COMPRESSION": deb_compression}))
        elif platform == WINDOWS:
            if not iscc:
                raise BuildError(
                    "Inno Setup 6 is not installed, so the Windows installer cannot be made. "
                    f"Install it from {INNO_SETUP_URL} (or `choco install innosetup`) and run "
                    "this again, or run with --no-package to build only the app folder."
                )
            steps.append(Step("package (setup.exe)", (iscc, f"/DMyAppVersion={version}",
                                                      r"installers\windows\evaldesk.iss")))
        else:
            steps.append(Step("package (.dmg)", ("bash", "installers/macos/make_dmg.sh")))
    return steps


# ------------------------------------------------------------- the locked packages (issue 30)
#: Set to PyTorch's CPU index (https://download.pytorch.org/whl/cpu) where torch's locked CPU
#: build comes from there (the GitHub workflow's Linux runner); unset, pip's own settings find it
#: (this CI machine keeps that wheel on its disk).
TORCH_INDEX_VARIABLE = "EVALDESK_TORCH_INDEX"


def lock_file(target: str) -> str:
    """The hash-locked requirements of one installer (written by ``make lock``)."""
    return f"installers/requirements/{target}.txt"


def locked_install_steps(python: str, target: str, *,
                         torch_index: str | None = None) -> list[Step]:
    """Install the build's packages from ``target``'s lock and nothing else: the lock must be
    up to date with pyproject.toml (``installers/lock.py --check``, else the build stops), then
    ``pip install --require-hashes``, which takes each package only at its pinned version and
    only as a file whose SHA-256 the lock lists. With ``torch_index``, torch (its CPU build) is
    installed first from that index alone, with its locked hash, so no other package can come
    from there."""
    lock = lock_file(target)
    steps = [Step("locked requirements up to date",
                  (python, "installers/lock.py", "--check", "--target", target))]
    if torch_index:
        torch_only = "build/torch-requirement.txt"
        steps.append(Step("torch from its index (locked)",
                          (python, "installers/lock.py", "--target", target, "--only", "torch",
                           "--out", torch_only)))
        steps.append(Step("torch (locked hash)",
                          (python, "-m", "pip", "install", "--require-hashes", "--no-deps",
                           "--index-url", torch_index, "-r", torch_only)))
    steps.append(Step("locked packages",
                      (python, "-m", "pip", "install", "--require-hashes", "-r", lock)))
    return steps


def write_bill_of_materials(target: str, version: str, dist: Path = DIST) -> Path:
    """The installer's software bill of materials (CycloneDX JSON, installers/sbom.py) beside
    SHA256SUMS: every locked package as installed for this build, with its licence and hashes."""
    sys.path.insert(0, str(ROOT / "installers"))
    try:
        import sbom
    finally:
        sys.path.pop(0)
    out = dist / sbom.sbom_name(version, target)
    try:
        return sbom.write_sbom(target, out, version=version)
    except sbom.SbomError as exc:
        raise BuildError(f"the bill of materials cannot be written: {exc}") from exc


def engine_step(python: str, variant: str) -> Step:
    """llama-server (and llama-batched-bench) into build/llama.cpp/, which build.spec ships:
    ``portable`` runs on any computer of the platform (installers), ``native`` only on one like
    this (quicker to build; CI's own check of the bundle)."""
    return Step("engine (llama-server)", (python, "installers/build_llama_server.py",
                                          "--variant", variant))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_sha256sums(files: Iterable[Path], out: Path) -> str:
    """Write ``out`` with one ``<sha256>  <name>`` line per file (names relative to out's folder,
    sorted; what ``sha256sum -c`` and ``shasum -a 256 -c`` check) and return its text."""
    lines = []
    for path in sorted(set(files), key=lambda p: p.name):
        name = path.resolve().relative_to(out.parent.resolve()).as_posix()
        lines.append(f"{sha256_of(path)}  {name}\n")
    text = "".join(lines)
    out.write_text(text, encoding="utf-8", newline="\n")
    return text


def produced_files(platform: str, version: str, dist: Path, since: float | None) -> list[Path]:
    """Installer files in ``dist`` for this version, changed at or after ``since`` (all if None)."""
    found: list[Path] = []
    for pattern in package_patterns(platform, version):
        for path in dist.glob(pattern):
            if path.is_file() and (since is None or path.stat().st_mtime >= since - 2):
                found.append(path)
    return sorted(found)


def folder_size(folder: Path) -> tuple[int, int]:
    """(bytes, files) under ``folder``, symlinks not followed."""
    total = count = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(dirpath) / name
            if not path.is_symlink():
                total += path.stat().st_size
                count += 1
    return total, count


def human_size(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return ""  # pragma: no cover


# ------------------------------------------------------------------------------ running
def run_step(step: Step, *, dry_run: bool = False) -> float:
    print(f"== {step.name}: {step.shown()}", flush=True)
    if dry_run:
        return 0.0
    started = time.monotonic()
    try:
        result = subprocess.run(list(step.command), cwd=ROOT, env={**os.environ, **step.env},
                                check=False)
    except FileNotFoundError as exc:
        raise BuildError(f"step {step.name!r} cannot start: {step.command[0]} was not found "
                         f"({exc}).") from exc
    took = time.monotonic() - started
    if result.returncode != 0:
        raise BuildError(f"step {step.name!r} failed (exit code {result.returncode}) after "
                         f"{took:.0f} s: see its output above.", result.returncode or 1)
    print(f"== {step.name}: done in {took:.0f} s", flush=True)
    return took


def _have_pyinstaller(python: str) -> bool:
    return subprocess.run([python, "-c", "import PyInstaller"], capture_output=True,
                          check=False).returncode == 0


def _check_tools(platform: str, steps: Sequence[Step]) -> None:
    names = {step.name for step in steps}
    if "package (.deb)" in names and not shutil.which("dpkg-deb"):
        raise BuildError("dpkg-deb is not installed, so the .deb cannot be made (it comes with "
                         "every Debian and Ubuntu). Run on Debian/Ubuntu, or run with "
                         "--no-package to build only the app folder.")
    if "package (.dmg)" in names and not shutil.which("hdiutil"):
        raise BuildError("hdiutil was not found: the .dmg can only be made on macOS.")


def _lock_target() -> str:
    """This system's lock target (installers/lock.py's names)."""
    sys.path.insert(0, str(ROOT / "installers"))
    try:
        import lock
    finally:
        sys.path.pop(0)
    try:
        return lock.target_for()
    except lock.LockError as exc:
        raise BuildError(str(exc)) from exc


def _bills(version: str, target: str) -> list[Path]:
    """This version's bill of materials in dist/, when there is one (for SHA256SUMS)."""
    path = DIST / f"evaldesk-{version}-{target}.cdx.json"
    return [path] if path.is_file() else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-build", action="store_true",
                        help="use the dist/EvalDesk/ already built (no PyInstaller run)")
    parser.add_argument("--skip-smoke", action="store_true",
                        help="do not run installers/smoke_test.py on the built app")
    parser.add_argument("--package", action=argparse.BooleanOptionalAction, default=True,
                        help="make the installer (.deb / setup.exe / .dmg); --no-package: only "
                             "the app folder (default: --package)")
    parser.add_argument("--sums-only", action="store_true",
                        help="only write dist/SHA256SUMS again for this version's installers "
                             "(e.g. after signing them)")
    parser.add_argument("--deb-compression", default=os.environ.get("DEB_COMPRESSION", "xz"),
                        choices=("xz", "zstd", "gzip", "none"),
                        help="the .deb's compression (default $DEB_COMPRESSION or xz: smallest; "
                             "zstd is much faster to build)")
    parser.add_argument("--engine", choices=("portable", "native"), default="portable",
                        help="the engine for model files: portable (any computer of this "
                             "platform; for installers) or native (only computers like this "
                             "one; quicker to build). Default: portable")
    parser.add_argument("--dry-run", action="store_true", help="print the steps, run nothing")
    parser.add_argument("--unlocked", action="store_true",
                        help="build with the packages this Python already has, not the "
                        "hash-locked ones (a quick local build; never for an installer you "
                        "hand out)")
    args = parser.parse_args(argv)

    try:
        platform = platform_name()
        version = read_version()
        sums = DIST / SUMS_NAME
        target = _lock_target()
        if args.sums_only:
            files = produced_files(platform, version, DIST, None)
            if not files:
                raise BuildError(f"no installer for version {version} in {DIST}: build one first.")
            files += _bills(version, target)
            print(f"== {sums}:\n" + write_sha256sums(files, sums), end="", flush=True)
            return 0
        python = sys.executable
        steps = plan(
            platform, python=python, version=version, build=not args.skip_build,
            smoke=not args.skip_smoke, package=args.package,
            have_pyinstaller=args.skip_build or args.dry_run or _have_pyinstaller(python),
            iscc=find_iscc() if platform == WINDOWS and args.package else None,
            deb_compression=args.deb_compression, engine=args.engine,
            lock_target=None if args.unlocked else target,
            torch_index=os.environ.get(TORCH_INDEX_VARIABLE) or None,
        )
        if not args.dry_run:
            _check_tools(platform, steps)
        print(f"== EvalDesk {version}: {platform} build with {python}", flush=True)
        packaged_since: float | None = None
        for step in steps:
            if step.name.startswith("package"):
                packaged_since = time.time()
            if step.name == "smoke test" and not args.dry_run \
                    and not app_executable(platform).exists():
                raise BuildError(f"{app_executable(platform)} does not exist: build the app "
                                 "first (run without --skip-build).")
            run_step(step, dry_run=args.dry_run)
            if step.name == "app" and not args.dry_run:
                size, count = folder_size(DIST / "EvalDesk")
                print(f"== dist/EvalDesk: {human_size(size)} in {count:,} files", flush=True)
        if args.dry_run:
            if args.package:
                print(f"== bill of materials and checksums: {sums}")
            return 0
        if not args.package:
            print("== no installer made (--no-package): no SHA256SUMS written", flush=True)
            return 0
        files = produced_files(platform, version, DIST, packaged_since)
        if not files:
            raise BuildError("the packaging step ran but wrote no installer matching "
                             f"{', '.join(package_patterns(platform, version))} in {DIST}.")
        for path in files:
            print(f"== {path.name}: {human_size(path.stat().st_size)}")
        if not args.unlocked:
            bill = write_bill_of_materials(target, version)
            print(f"== {bill.name}: the software bill of materials (CycloneDX)", flush=True)
            files.append(bill)
        print(f"== {sums}:\n" + write_sha256sums(files, sums), end="", flush=True)
        return 0
    except BuildError as exc:
        print(f"build.py: {exc}", file=sys.stderr, flush=True)
        return exc.code


if __name__ == "__main__":
    raise SystemExit(main())
