"""The installers workflow (.github/workflows/installers.yml), checked offline.

1. It is a valid GitHub Actions workflow: ``check-jsonschema --builtin-schema
   vendor.github-workflows`` (the schema ships inside check-jsonschema; no network).
2. It cannot drift from what CI runs here: on every runner of every job, a step that always runs
   calls ``installers/build.py`` with its smoke test and packaging on, and a step runs the smoke
   test on the installed app (``installers/smoke_test.py``, or ``installers/linux/test_deb.sh``,
   which runs it).
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "installers.yml"
SMOKE = ("installers/smoke_test.py", "installers/linux/test_deb.sh")
_RUNNER_OS = re.compile(r"runner\.os\s*==\s*'(\w+)'")


def load(path: Path = WORKFLOW) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def schema_check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema",
         "vendor.github-workflows", str(path)],
        capture_output=True, text=True, timeout=120, check=False,
    )


def runner_os(label: str) -> str:
    """GitHub's ``runner.os`` for a hosted runner label."""
    for prefix, name in (("windows", "Windows"), ("macos", "macOS"), ("ubuntu", "Linux")):
        if label.startswith(prefix):
            return name
    raise ValueError(f"unknown runner label {label!r}")


def runners(job: dict) -> list[str]:
    """The runner labels a job runs on (its matrix's ``os`` values when runs-on names it)."""
    runs_on = job["runs-on"]
    if "matrix.os" not in str(runs_on):
        return [runs_on]
    matrix = job["strategy"]["matrix"]
    return [entry["os"] for entry in matrix.get("include", [])] + list(matrix.get("os", []))


def always_runs(step: dict, os_name: str) -> bool:
    """True when the step runs on ``os_name`` whatever else happens: no ``if:``, or one that only
    compares ``runner.os`` with this system. Steps that also depend on secrets, tags etc. do not
    count."""
    condition = step.get("if")
    if condition is None:
        return True
    systems = _RUNNER_OS.findall(condition)
    if not systems or os_name not in systems:
        return False
    rest = _RUNNER_OS.sub("", condition)
    return not re.sub(r"[\s()|]", "", rest)


def drift_problems(workflow: dict) -> list[str]:
    """What a job fails to do that CI here does: empty when every job is in line."""
    problems = []
    for job_name, job in workflow["jobs"].items():
        for label in runners(job):
            os_name = runner_os(label)
            runs = [step.get("run", "") for step in job.get("steps", [])
                    if always_runs(step, os_name)]
            builds = [run for run in runs if "installers/build.py" in run
                      and "--sums-only" not in run]
            if not builds:
                problems.append(f"job {job_name} on {label}: no step runs installers/build.py")
            elif all("--skip-smoke" in run or "--no-package" in run for run in builds):
                problems.append(f"job {job_name} on {label}: installers/build.py runs without "
                                "its smoke test or without packaging")
            if not any(tool in run for run in runs for tool in SMOKE):
                problems.append(f"job {job_name} on {label}: no step runs the smoke test on the "
                                "installed app")
    return problems


def _steps_without(workflow: dict, needle: str, os_name: str | None = None) -> dict:
    changed = copy.deepcopy(workflow)
    for job in changed["jobs"].values():
        job["steps"] = [
            step for step in job["steps"]
            if needle not in step.get("run", "")
            or (os_name is not None and os_name not in str(step.get("if", "")))
        ]
    return changed


# ------------------------------------------------------------------------------ schema
def test_workflow_passes_githubs_workflow_schema():
    result = schema_check(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_check_rejects_a_broken_workflow(tmp_path):
    broken = load()
    del broken["jobs"]["build"]["runs-on"]  # a job must say where it runs
    path = tmp_path / "broken.yml"
    path.write_text(yaml.safe_dump(broken), encoding="utf-8")
    result = schema_check(path)
    assert result.returncode != 0
    assert "runs-on" in result.stdout + result.stderr


# ------------------------------------------------------------------------------ drift
def test_every_runner_builds_with_the_script_and_smoke_tests():
    workflow = load()
    assert drift_problems(workflow) == []
    labels = runners(workflow["jobs"]["build"])
    assert {runner_os(label) for label in labels} == {"Windows", "macOS", "Linux"}
    assert "ubuntu-22.04" in labels and "windows-latest" in labels and "macos-latest" in labels
    assert len([label for label in labels if label.startswith("macos")]) == 2  # arm64 + Intel


def test_drift_is_caught_when_the_build_script_call_goes():
    problems = drift_problems(_steps_without(load(), "installers/build.py"))
    assert len(problems) == 4 and all("no step runs installers/build.py" in p for p in problems)


def test_drift_is_caught_when_the_smoke_test_goes_from_one_system():
    problems = drift_problems(_steps_without(load(), "installers/smoke_test.py", "Windows"))
    assert problems == [("job build on windows-latest: no step runs the smoke test on the "
                        "installed app")]


def test_drift_is_caught_when_the_build_skips_its_smoke_test():
    workflow = load()
    for step in workflow["jobs"]["build"]["steps"]:
        if step.get("run", "").strip() == "python installers/build.py":
            step["run"] = "python installers/build.py --skip-smoke"
    assert len(drift_problems(workflow)) == 4


def test_a_signing_only_step_does_not_count_as_the_build():
    step = {"if": "runner.os == 'Windows' && env.WINDOWS_SIGNING != ''", "run": "x"}
    assert not always_runs(step, "Windows")
    assert always_runs({"if": "runner.os == 'Windows'", "run": "x"}, "Windows")
    assert not always_runs({"if": "runner.os == 'Windows'", "run": "x"}, "Linux")
    assert always_runs({"run": "x"}, "macOS")


@pytest.mark.parametrize("name", ["WINDOWS_SIGNING", "MACOS_SIGNING", "MACOS_NOTARISATION"])
def test_signing_steps_are_skipped_with_a_log_line_without_their_secrets(name):
    steps = load()["jobs"]["build"]["steps"]
    guarded = [step for step in steps if f"env.{name} != ''" in str(step.get("if", ""))]
    notices = [step for step in steps if f"env.{name} == ''" in str(step.get("if", ""))]
    assert guarded, f"no step runs only when {name} is set"
    assert notices and all("::notice::" in step["run"] for step in notices)
    # the secret itself never sits in the job's environment, only whether it exists
    assert "secrets." in load()["jobs"]["build"]["env"][name]
    assert "&& 'yes' || ''" in load()["jobs"]["build"]["env"][name]
