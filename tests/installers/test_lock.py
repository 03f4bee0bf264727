"""The installers' hash-locked requirements (issue 30): installers/lock.py's check, the locks
themselves, build.py's steps that install them, and the bill of materials (installers/sbom.py).
Offline: nothing here resolves or downloads."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


lock = _load("lock", ROOT / "installers" / "lock.py")  # sbom.py imports it by this name
sbom = _load("evaldesk_installers_sbom", ROOT / "installers" / "sbom.py")
build = _load("evaldesk_installers_build_lock", ROOT / "installers" / "build.py")
PY = "/venv/bin/python"


def test_every_lock_is_up_to_date_with_pyproject():
    """What CI runs before a build (installers/build.py's first step): a lock made from other
    requirements than pyproject.toml's stops the build."""
    assert lock.check() == []


def test_each_lock_pins_every_package_with_hashes_and_torch_per_system():
    pins = {t: {p.name: p for p in lock.read_lock(lock.lock_path(t))[1]} for t in lock.TARGETS}
    for target, found in pins.items():
        assert len(found) > 100, target
        assert all(p.hashes for p in found.values()), target
        assert {"litellm", "pyinstaller", "pyside6-essentials", "socksio"} <= set(found)
        assert "llama-cpp-python" not in found  # model files run in llama.cpp's own server
    assert pins["linux-x64"]["torch"].version == "2.13.0+cpu"
    assert not [n for n in pins["linux-x64"] if n.startswith(("nvidia-", "triton"))]
    assert pins["windows-x64"]["torch"].version == "2.13.0"
    assert pins["macos-arm64"]["torch"].version == "2.13.0"
    assert pins["macos-x86_64"]["torch"].version == "2.2.2"
    assert pins["macos-x86_64"]["numpy"].version.startswith("1.")
    assert pins["macos-x86_64"]["transformers"].version.startswith("4.")


def test_the_linux_lock_holds_the_hash_of_the_cpu_wheel_this_machine_installs():
    wheels = [w for folder in lock._pip_find_links()
              for w in Path(folder).glob("torch-2.13.0+cpu-cp311-cp311-manylinux_*_x86_64.whl")]
    if not wheels:
        pytest.skip("no local torch CPU wheel on this machine")
    torch = {p.name: p for p in lock.read_lock(lock.lock_path("linux-x64"))[1]}["torch"]
    import hashlib

    assert hashlib.sha256(wheels[0].read_bytes()).hexdigest() in torch.hashes


def test_a_changed_dependency_makes_every_lock_out_of_date(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject.write_text(text.replace('"qasync>=0.27,<0.29"', '"qasync>=0.27,<0.30"'),
                         encoding="utf-8")
    problems = lock.check(pyproject=pyproject)
    assert len(problems) == 4 and all("other requirements" in p for p in problems)
    # a comment or the order of the requirements is not a change
    pyproject.write_text(text.replace("# crash", "# it crashes"), encoding="utf-8")
    assert lock.check(pyproject=pyproject) == []


def test_a_pin_outside_pyproject_or_without_hashes_is_refused(tmp_path):
    """A lock edited by hand to take the poisoned litellm 1.82.7 (March 2026), or a package
    left without hashes: refused even though its recorded digest still matches."""
    folder = tmp_path / "requirements"
    folder.mkdir()
    text = lock.lock_path("linux-x64").read_text(encoding="utf-8")
    poisoned = re.sub(r"^litellm==1\.100\.5", "litellm==1.82.7", text, flags=re.MULTILINE)
    unhashed = re.sub(r"^(qasync==\S+) \\\n(    --hash=\S+ \\\n)*    --hash=\S+\n",
                      r"\1\n", poisoned, flags=re.MULTILINE)
    (folder / "linux-x64.txt").write_text(unhashed, encoding="utf-8")
    problems = lock.check(["linux-x64"], lock_dir=folder)
    assert any("pins litellm 1.82.7" in p and "litellm==1.100.5" in p for p in problems), problems
    assert any("no hashes for qasync" in p for p in problems), problems


def test_lock_check_tells_what_to_do(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(lock, "LOCK_DIR", tmp_path)
    assert lock.main(["--check", "--target", "windows-x64"]) == 1
    err = capsys.readouterr().err
    assert "windows-x64.txt is missing" in err and "make lock" in err


def test_only_writes_one_package_with_its_hashes(tmp_path):
    out = lock.write_only("linux-x64", "torch", tmp_path / "torch.txt")
    text = out.read_text(encoding="utf-8")
    assert text.startswith("torch==2.13.0+cpu \\\n    --hash=sha256:")
    assert lock.read_lock(out)[1][0].hashes


def test_target_of_each_runner():
    assert lock.target_for("linux", "x86_64") == "linux-x64"
    assert lock.target_for("win32", "AMD64") == "windows-x64"
    assert lock.target_for("darwin", "arm64") == "macos-arm64"
    assert lock.target_for("darwin", "x86_64") == "macos-x86_64"
    with pytest.raises(lock.LockError, match="no locked set"):
        lock.target_for("linux", "aarch64")


# ------------------------------------------------------------------------------ build.py
def test_the_build_checks_the_lock_then_installs_it_with_hashes():
    steps = build.plan("linux", python=PY, version="0.1.0", lock_target="linux-x64")
    assert [s.name for s in steps[:2]] == ["locked requirements up to date", "locked packages"]
    assert steps[0].command == (PY, "installers/lock.py", "--check", "--target", "linux-x64")
    assert steps[1].command == (PY, "-m", "pip", "install", "--require-hashes", "-r",
                                "installers/requirements/linux-x64.txt")
    assert "build extras" not in [s.name for s in steps]  # nothing unlocked is installed
    assert "build extras" not in [s.name for s in build.plan(
        "linux", python=PY, version="0.1.0", lock_target="linux-x64", have_pyinstaller=False)]


def test_torch_comes_alone_from_its_own_index_with_its_locked_hash():
    steps = build.plan("linux", python=PY, version="0.1.0", lock_target="linux-x64",
                       torch_index="https://download.pytorch.org/whl/cpu")
    torch = next(s for s in steps if s.name == "torch (locked hash)")
    assert torch.command == (PY, "-m", "pip", "install", "--require-hashes", "--no-deps",
                             "--index-url", "https://download.pytorch.org/whl/cpu", "-r",
                             "build/torch-requirement.txt")
    names = [s.name for s in steps]
    assert names.index("torch (locked hash)") < names.index("locked packages")


def test_the_workflow_builds_from_the_locks_only():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "installers.yml").read_text())
    job = workflow["jobs"]["build"]
    runs = " ".join(step.get("run", "") for step in job["steps"])
    assert "pip install -e" not in runs and "install torch" not in runs
    linux = [e for e in job["strategy"]["matrix"]["include"] if e["os"].startswith("ubuntu")]
    assert linux[0]["torch_index"] == "https://download.pytorch.org/whl/cpu"
    build_step = next(s for s in job["steps"] if s.get("run") == "python installers/build.py")
    assert build_step["env"]["EVALDESK_TORCH_INDEX"] == "${{ matrix.torch_index }}"
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload"))
    assert "dist/*.cdx.json" in upload["with"]["path"]


def test_make_lock_is_the_one_documented_command():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^lock: .*\n\t.*uv==" + re.escape(lock.UV_VERSION), makefile, re.MULTILINE)
    assert "installers/lock.py" in makefile


# ------------------------------------------------------------------------------ the bill
def _fake_lock(tmp_path: Path, pins: dict[str, str]) -> Path:
    path = tmp_path / "linux-x64.txt"
    path.write_text("# inputs-sha256: abc\n" + "".join(
        f"{name}=={version} \\\n    --hash=sha256:{'a' * 64}\n" for name, version in pins.items()),
        encoding="utf-8")
    return path


def test_the_bill_lists_each_locked_package_as_installed(tmp_path):
    from importlib.metadata import version

    pins = {"packaging": version("packaging"), "PyYAML": version("pyyaml")}
    out = sbom.write_sbom("linux-x64", tmp_path / "bill.cdx.json",
                          lock_file=_fake_lock(tmp_path, pins), version="9.9.9")
    bill = json.loads(out.read_text(encoding="utf-8"))
    assert bill["bomFormat"] == "CycloneDX" and bill["specVersion"] == "1.5"
    assert bill["metadata"]["component"]["name"] == "EvalDesk"
    assert bill["metadata"]["component"]["version"] == "9.9.9"
    by_name = {c["name"]: c for c in bill["components"]}
    assert by_name["CPython"]["type"] == "platform"
    packaging_ = by_name["packaging"]
    assert packaging_["purl"] == f"pkg:pypi/packaging@{pins['packaging']}"
    assert packaging_["hashes"] == [{"alg": "SHA-256", "content": "a" * 64}]
    assert packaging_["licenses"]  # declared by the package
    assert by_name["PyYAML"]["purl"] == f"pkg:pypi/pyyaml@{pins['PyYAML']}"
    assert len(bill["dependencies"][0]["dependsOn"]) == 3


def test_the_bill_refuses_a_package_installed_at_another_version(tmp_path):
    with pytest.raises(sbom.SbomError, match="packaging is locked at 0.1 but"):
        sbom.bill("linux-x64", lock_file=_fake_lock(tmp_path, {"packaging": "0.1"}))
    with pytest.raises(sbom.SbomError, match="not installed"):
        sbom.bill("linux-x64", lock_file=_fake_lock(tmp_path, {"no-such-package-x": "1.0"}))


def test_sha256sums_covers_the_bill(tmp_path):
    installer = tmp_path / "evaldesk_0.1.0_amd64.deb"
    installer.write_bytes(b"deb")
    bill = tmp_path / "evaldesk-0.1.0-linux-x64.cdx.json"
    bill.write_text("{}")
    text = build.write_sha256sums([installer, bill], tmp_path / "SHA256SUMS")
    assert "evaldesk-0.1.0-linux-x64.cdx.json" in text and "evaldesk_0.1.0_amd64.deb" in text


