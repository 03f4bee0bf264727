#!/usr/bin/env python3
"""The hash-locked requirements EvalDesk's installers are built from (``make lock``).

One lock file per installer, ``installers/requirements/<target>.txt``: every package the app
and its build need (``pyproject.toml``'s dependencies and its ``build`` extra) pinned to one
version with the SHA-256 of each of that version's files, so that
``pip install --require-hashes -r installers/requirements/<target>.txt`` installs exactly those
files or nothing (a release replaced on the index, or a poisoned one such as litellm 1.82.7 and
1.82.8 in March 2026, fails the build instead of entering the installer).

    python installers/lock.py              # write the locks again (keeps pins that still fit)
    python installers/lock.py --upgrade    # ... taking the newest versions that fit
    python installers/lock.py --check      # exit 1 when a lock is out of date (CI, build.py)

The locks are made with uv (``pip install uv``; a build tool, never shipped), which resolves for
another system than the one it runs on. torch is pinned per target: the CPU build on Linux
(``+cpu``, from PyTorch's CPU index or a folder holding that wheel: PyPI's Linux build pulls in
several GB of CUDA libraries), PyPI's own builds on Windows (CPU only) and on Apple silicon, and
torch 2.2.2 with numpy < 2, transformers < 5 and sentence-transformers < 6 on Intel Macs (the
last torch built for them).

``--check`` needs no network: each lock records a digest of what it was made from (the
requirements in pyproject.toml, the target's settings), and every requirement of pyproject.toml
must hold for the versions pinned.
"""

from __future__ import annotations

import argparse
import configparser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK_DIR = ROOT / "installers" / "requirements"
#: The uv the locks are made with (a newer uv may write them slightly differently).
UV_VERSION = "0.13.9"
#: PyTorch's own index of CPU-only builds (Linux's torch comes from there).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
DIGEST_LINE = "# inputs-sha256: "


@dataclass(frozen=True)
class Target:
    """One installer's system, as uv names it, and what is pinned for it beyond pyproject.toml."""

    python_platform: str
    torch: str
    constraints: tuple[str, ...] = ()
    macos_target: str = ""  # MACOSX_DEPLOYMENT_TARGET for uv (torch 2.13 needs macOS 14)
    torch_cpu_build: bool = False  # the +cpu wheel from PyTorch's CPU index

    @property
    def torch_version(self) -> str:
        return self.torch.split("==", 1)[1]


#: target -> its system; build.py picks one with :func:`target_for`. Linux: Ubuntu 22.04's
#: glibc (2.35), the oldest the Linux build supports.
TARGETS: dict[str, Target] = {
    "linux-x64": Target("x86_64-manylinux_2_35", "torch==2.13.0+cpu", torch_cpu_build=True),
    "windows-x64": Target("x86_64-pc-windows-msvc", "torch==2.13.0"),
    "macos-arm64": Target("aarch64-apple-darwin", "torch==2.13.0", macos_target="14.0"),
    "macos-x86_64": Target("x86_64-apple-darwin", "torch==2.2.2",
                           constraints=("numpy<2", "transformers<5", "sentence-transformers<6")),
}


class LockError(Exception):
    """A lock cannot be made or is out of date; the message says what to do."""


def target_for(sys_platform: str = sys.platform, machine: str | None = None) -> str:
    """The lock target of the system this runs on."""
    import platform as _platform

    machine = (machine or _platform.machine()).lower()
    if sys_platform.startswith("linux") and machine in ("x86_64", "amd64"):
        return "linux-x64"
    if sys_platform in ("win32", "cygwin") and machine in ("amd64", "x86_64"):
        return "windows-x64"
    if sys_platform == "darwin":
        return "macos-arm64" if machine in ("arm64", "aarch64") else "macos-x86_64"
    raise LockError(f"There is no locked set of packages for this system ({sys_platform}, "
                    f"{machine}): the installers are built for Linux x86-64, Windows x64 and "
                    "macOS.")


def lock_path(target: str) -> Path:
    return LOCK_DIR / f"{target}.txt"


# ------------------------------------------------------------------------------- inputs
def project_requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The requirements the installers are made of: the dependencies and the build extra."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    project = data["project"]
    return [*project["dependencies"], *project.get("optional-dependencies", {}).get("build", [])]


def inputs_digest(target: str, pyproject: Path = ROOT / "pyproject.toml") -> str:
    """What a lock was made from, as one digest: pyproject.toml's requirements (their text,
    comments aside, in any order), Python's version range, the target's settings and uv's
    version. A lock whose recorded digest differs is out of date."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    made_of = {
        "requirements": sorted(" ".join(r.split()) for r in project_requirements(pyproject)),
        "requires-python": data["project"].get("requires-python", ""),
        "target": target,
        "settings": asdict(TARGETS[target]),
        "uv": UV_VERSION,
    }
    text = json.dumps(made_of, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------- reading a lock
@dataclass
class Pin:
    name: str
    version: str
    hashes: list[str] = field(default_factory=list)
    marker: str = ""


_PIN_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;\\]+)\s*(?:;\s*([^\\]+))?")


def read_lock(path: Path) -> tuple[str, list[Pin]]:
    """(the recorded inputs digest, the pins) of a lock file."""
    digest = ""
    pins: list[Pin] = []
    logical = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.startswith(DIGEST_LINE):
            digest = raw[len(DIGEST_LINE):].strip()
            continue
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("--hash") else raw
        if raw.lstrip().startswith("#") or not line.strip():
            continue
        logical += " " + line.strip().rstrip("\\").strip()
        if line.rstrip().endswith("\\"):
            continue
        entry, logical = logical.strip(), ""
        found = _PIN_RE.match(entry)
        if not found:
            continue
        hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", entry)
        pins.append(Pin(_normal(found.group(1)), found.group(3), hashes,
                        (found.group(4) or "").split("--hash")[0].strip()))
    return digest, pins


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# ------------------------------------------------------------------------------------ check
def check(targets: list[str] | None = None, pyproject: Path = ROOT / "pyproject.toml",
          lock_dir: Path | None = None) -> list[str]:
    """The problems of the locks (empty when every lock is up to date): missing, made from
    other inputs than pyproject.toml's, a package without hashes, or a pin that does not meet a
    requirement of pyproject.toml."""
    try:
        from packaging.requirements import Requirement
        from packaging.version import Version
    except ImportError:  # a bare Python (a fresh runner): pip's own copy
        from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]
        from pip._vendor.packaging.version import Version  # type: ignore[no-redef]

    problems: list[str] = []
    folder = lock_dir or LOCK_DIR
    for target in targets or list(TARGETS):
        path = folder / f"{target}.txt"
        if not path.is_file():
            problems.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} "
                            "is missing.")
            continue
        digest, pins = read_lock(path)
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        if digest != inputs_digest(target, pyproject):
            problems.append(f"{shown} was made from other requirements than pyproject.toml's "
                            "now (or for other settings of its target).")
        unhashed = [p.name for p in pins if not p.hashes]
        if unhashed:
            problems.append(f"{shown}: no hashes for {', '.join(unhashed)}.")
        pinned = {p.name: p.version for p in pins}
        for text in project_requirements(pyproject):
            req = Requirement(text.split("#", 1)[0].strip())
            name = _normal(req.name)
            if name not in pinned:
                problems.append(f"{shown} has no pin for {req.name}, which pyproject.toml needs.")
            elif not req.specifier.contains(Version(pinned[name]), prereleases=True):
                problems.append(f"{shown} pins {req.name} {pinned[name]}, but pyproject.toml "
                                f"asks for {req.name}{req.specifier}.")
    return problems


# ------------------------------------------------------------------------------------- make
def _pip_find_links() -> list[str]:
    """The folders pip is told to look in for wheels (PIP_FIND_LINKS, pip's config files)."""
    found = os.environ.get("PIP_FIND_LINKS", "").split()
    parser = configparser.ConfigParser()
    for candidate in ("/etc/pip.conf", "/etc/xdg/pip/pip.conf",
                      os.path.expanduser("~/.config/pip/pip.conf"),
                      os.path.expanduser("~/.pip/pip.conf"), os.environ.get("PIP_CONFIG_FILE", "")):
        if candidate and os.path.isfile(candidate):
            try:
                parser.read(candidate)
            except configparser.Error:
                continue
    for section in ("global", "install"):
        if parser.has_option(section, "find-links"):
            found += parser.get(section, "find-links").split()
    return [f.removeprefix("file://") for f in found if os.path.isdir(f.removeprefix("file://"))]


def _torch_cpu_wheels(version: str) -> Path:
    """A folder holding torch's Linux CPU wheel ``version`` for CPython 3.11: one pip already
    uses (this machine's), else ``build/torch-cpu`` after downloading it from PyTorch's index."""
    pattern = f"torch-{version}-cp311-cp311-manylinux_*_x86_64.whl"
    for folder in _pip_find_links():
        if any(Path(folder).glob(pattern)):
            return Path(folder)
    folder = ROOT / "build" / "torch-cpu"
    if not any(folder.glob(pattern)):
        folder.mkdir(parents=True, exist_ok=True)
        print(f"== downloading torch {version} (CPU build) from {TORCH_CPU_INDEX}", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary",
                        ":all:", "--platform", "manylinux_2_28_x86_64", "--python-version", "3.11",
                        "--index-url", TORCH_CPU_INDEX, "-d", str(folder), f"torch=={version}"],
                       check=True)
    return folder


def _uv() -> list[str]:
    found = shutil.which("uv")
    if found:
        return [found]
    probe = subprocess.run([sys.executable, "-m", "uv", "--version"], capture_output=True,
                           check=False)
    if probe.returncode == 0:
        return [sys.executable, "-m", "uv"]
    raise LockError(f"uv is needed to make the locks: `{sys.executable} -m pip install "
                    f"uv=={UV_VERSION}` (a build tool; it is not shipped), then run this again.")


def make(target: str, *, upgrade: bool = False, out: Path | None = None) -> Path:
    """Write the lock of ``target`` with uv (pins already in it are kept while they fit,
    unless ``upgrade``)."""
    import tempfile

    settings = TARGETS[target]
    path = out or lock_path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="evaldesk-lock-") as scratch:
        overrides = Path(scratch) / "overrides.txt"
        overrides.write_text(settings.torch + "\n", encoding="utf-8")
        constraints = Path(scratch) / "constraints.txt"
        constraints.write_text("".join(c + "\n" for c in settings.constraints), encoding="utf-8")
        body = Path(scratch) / "lock.txt"
        if path.is_file() and not upgrade:
            shutil.copyfile(path, body)  # uv keeps the versions it finds there when they fit
        command = [*_uv(), "pip", "compile", str(ROOT / "pyproject.toml"), "--extra", "build",
                   "--python-version", "3.11", "--python-platform", settings.python_platform,
                   "--generate-hashes", "--override", str(overrides), "--no-header",
                   "--quiet", "-o", str(body)]
        if settings.constraints:
            command += ["--constraint", str(constraints)]
        if settings.torch_cpu_build:
            command += ["--find-links", str(_torch_cpu_wheels(settings.torch_version))]
        if upgrade:
            command.append("--upgrade")
        env = dict(os.environ, UV_NO_CONFIG="1")
        if settings.macos_target:
            env["MACOSX_DEPLOYMENT_TARGET"] = settings.macos_target
        print(f"== {target}: uv pip compile for {settings.python_platform}", flush=True)
        done = subprocess.run(command, cwd=ROOT, env=env, check=False)
        if done.returncode != 0:
            raise LockError(f"uv could not lock {target} (exit code {done.returncode}): see "
                            "its output above.")
        text = body.read_text(encoding="utf-8")
    text = text.replace(str(overrides), "the torch pin of installers/lock.py")
    text = text.replace(str(constraints), "the constraints of installers/lock.py")
    header = (
        f"# EvalDesk's installer requirements for {target} ({settings.python_platform}, "
        "CPython 3.11): every package\n"
        "# pinned, with the SHA-256 of each of its files. Do not edit: `make lock` "
        "(installers/lock.py) writes it\n"
        f"# from pyproject.toml with uv {UV_VERSION}; installers/build.py installs it with "
        "pip install --require-hashes.\n"
        f"{DIGEST_LINE}{inputs_digest(target)}\n"
    )
    path.write_text(header + text, encoding="utf-8", newline="\n")
    return path


def write_only(target: str, package: str, out: Path) -> Path:
    """Write ``package``'s pin from ``target``'s lock, with its hashes, as a requirements file
    of its own."""
    _, pins = read_lock(lock_path(target))
    found = [p for p in pins if p.name == _normal(package)]
    if not found:
        raise LockError(f"{lock_path(target).name} has no pin for {package}.")
    pin = found[0]
    lines = [f"{pin.name}=={pin.version}" + (f" ; {pin.marker}" if pin.marker else "")]
    lines += [f"    --hash=sha256:{h}" for h in pin.hashes]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(" \\\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="check that every lock is up to date with pyproject.toml (no "
                        "network); exit 1 when one is not")
    parser.add_argument("--upgrade", action="store_true",
                        help="take the newest versions that fit (default: keep the pinned "
                        "versions that still fit)")
    parser.add_argument("--target", action="append", choices=sorted(TARGETS),
                        help="only this target (repeatable; default: all)")
    parser.add_argument("--only", metavar="PACKAGE",
                        help="with --target and --out: write that package's locked line (with "
                        "its hashes) alone, for installing it from an index of its own")
    parser.add_argument("--out", type=Path, help="where --only writes")
    args = parser.parse_args(argv)
    targets = args.target or list(TARGETS)
    try:
        if args.only:
            if len(targets) != 1 or args.out is None:
                raise LockError("--only needs one --target and --out.")
            write_only(targets[0], args.only, args.out)
            return 0
        if args.check:
            problems = check(targets)
            if problems:
                print("The installers' locked requirements are out of date:\n"
                      + "\n".join(f"- {p}" for p in problems)
                      + "\nRun `make lock` (python installers/lock.py) and commit "
                      "installers/requirements/.", file=sys.stderr)
                return 1
            print(f"== locks up to date: {', '.join(targets)}")
            return 0
        for target in targets:
            print(f"== wrote {make(target, upgrade=args.upgrade).relative_to(ROOT)}", flush=True)
        problems = check(targets)
        if problems:
            raise LockError("\n".join(problems))
        return 0
    except (LockError, subprocess.CalledProcessError) as exc:
        print(f"lock.py: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
