"""Attack suite, issue 30 point 8: the software we ship.

The litellm releases 1.82.7 and 1.82.8 carried a credential stealer (March 2026). The installers
are built from hash-locked requirements (``installers/requirements/<system>.txt``, ``make
lock``) installed with ``pip install --require-hashes``: a package file that is not the one
locked (a release replaced on the index, a poisoned mirror), a package without a hash, a lock
pinning a version pyproject.toml does not allow and a lock out of date with pyproject.toml each
stop the build. Real pip and the real scripts, offline (a local folder of wheels).
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def wheel(folder: Path, name: str, version: str, body: str) -> Path:
    """A minimal pure-Python wheel ``name``-``version`` whose module holds ``body``."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": body.encode(),
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                         b"Tag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    out = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return out


def build_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("evaldesk_build_attack",
                                                  ROOT / "installers" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def pip_install(requirements: Path, wheels: Path, target: Path) -> subprocess.CompletedProcess:
    """The build's own install step (installers/build.py), pointed at ``requirements`` and a
    local folder of wheels instead of the index, into ``target``."""
    step = build_script().locked_install_steps(sys.executable, "linux-x64")[-1]
    command = list(step.command)
    assert "--require-hashes" in command and command[-2] == "-r"
    command[-1] = str(requirements)
    command[-2:-2] = ["--no-index", "--isolated", "--find-links", str(wheels), "--target",
                      str(target)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.timeout(180)
def test_a_package_file_that_is_not_the_locked_one_is_refused(tmp_path):
    """The locked file installs; the same name and version with other bytes (a release
    replaced on the index, a poisoned mirror) stops the install, and nothing is installed."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    good = wheel(wheels, "llmgateway", "1.82.6", "def complete():\n    return 'ok'\n")
    lock = tmp_path / "lock.txt"
    lock.write_text(f"llmgateway==1.82.6 \\\n    --hash=sha256:{sha256(good)}\n")
    installed = pip_install(lock, wheels, tmp_path / "clean")
    assert installed.returncode == 0, installed.stderr
    assert (tmp_path / "clean" / "llmgateway.py").exists()

    good.unlink()
    wheel(wheels, "llmgateway", "1.82.6",
          "import os\ndef complete():\n    return os.environ  # steals the keys\n")
    refused = pip_install(lock, wheels, tmp_path / "poisoned")
    assert refused.returncode != 0
    assert "DO NOT MATCH THE HASHES" in refused.stderr
    assert not (tmp_path / "poisoned" / "llmgateway.py").exists()


@pytest.mark.timeout(180)
def test_a_package_without_a_hash_is_refused(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    locked = wheel(wheels, "locked", "1.0", "x = 1\n")
    wheel(wheels, "sneaked", "2.0", "x = 2\n")
    lock = tmp_path / "lock.txt"
    lock.write_text(f"locked==1.0 --hash=sha256:{sha256(locked)}\nsneaked==2.0\n")
    refused = pip_install(lock, wheels, tmp_path / "site")
    assert refused.returncode != 0
    assert "sneaked" in refused.stderr and "hash" in refused.stderr.lower()


def tree_copy(tmp_path: Path) -> Path:
    """The parts of the checkout that lock.py and build.py read, in a folder of their own."""
    root = tmp_path / "checkout"
    shutil.copytree(ROOT / "installers", root / "installers",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "core").mkdir()
    shutil.copyfile(ROOT / "core" / "__init__.py", root / "core" / "__init__.py")
    shutil.copyfile(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.timeout(120)
def test_a_lock_that_takes_the_poisoned_litellm_is_refused(tmp_path):
    """Someone edits a lock by hand to litellm 1.82.7 (with that release's hashes): the check
    the build runs first refuses it, naming the pin and pyproject.toml's requirement."""
    root = tree_copy(tmp_path)
    path = root / "installers" / "requirements" / "linux-x64.txt"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"^litellm==1\.100\.5", "litellm==1.82.7", text, flags=re.MULTILINE),
                    encoding="utf-8")
    result = subprocess.run([sys.executable, str(root / "installers" / "lock.py"), "--check"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert "pins litellm 1.82.7, but pyproject.toml asks for litellm==1.100.5" in result.stderr
    assert "make lock" in result.stderr


@pytest.mark.timeout(120)
def test_a_build_with_a_lock_out_of_date_is_refused(tmp_path):
    """pyproject.toml changed (a dependency raised) without `make lock`: installers/build.py
    stops at its first step, before installing or building anything."""
    root = tree_copy(tmp_path)
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('"litellm==1.100.5"', '"litellm==1.100.6"'),
                         encoding="utf-8")
    result = subprocess.run([sys.executable, str(root / "installers" / "build.py"),
                             "--no-package", "--skip-smoke"],
                            capture_output=True, text=True, timeout=60, check=False, cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "other requirements than pyproject.toml's" in result.stderr
    assert "step 'locked requirements up to date' failed" in result.stderr
    assert "== locked packages" not in result.stdout and "== app" not in result.stdout
