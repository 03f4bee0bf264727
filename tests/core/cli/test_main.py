"""The ``evaldesk`` entry point: dispatch, help, and that headless commands stay light."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core import __version__
from core.cli import COMMANDS as COMMAND_MODULES
from core.cli import main

HEAVY = ("pandas", "scipy", "torch", "litellm", "sentence_transformers", "PySide6", "qasync")


def _modules_after(argv: list[str]) -> set[str]:
    code = (
        "import json, sys\n"
        "from desktop.launch import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["project", "--help"]])
def test_light_commands_import_no_heavy_library_and_no_qt(argv):
    loaded = _modules_after(argv)
    assert not [name for name in HEAVY if name in loaded]


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"EvalDesk {__version__}"


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name in COMMAND_MODULES:
        assert name in out


def test_each_command_module_registers_its_own_parser(capsys):
    for name in COMMAND_MODULES:
        with pytest.raises(SystemExit) as stop:
            main([name, "--help"])
        assert stop.value.code == 0
        assert f"evaldesk {name}" in capsys.readouterr().out


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


def test_unknown_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["no-such-command"])
    assert stop.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_cli_project_is_the_given_file_or_a_temporary_one(tmp_path):
    from core.cli._common import cli_project

    with cli_project(None, "aqer") as project:
        temporary = project.path
        assert temporary.exists() and project.method == "aqer"
        project.put_artefact("x", "y", {"z": 1})
    assert not temporary.exists() and not temporary.parent.exists()
    target = tmp_path / "kept.evaldesk"
    with cli_project(str(target), "aqer") as project:
        project.put_artefact("x", "y", {"z": 1})
    assert target.exists()
    with cli_project(str(target), "aqer") as project:
        assert project.get_artefact("x", "y").payload == {"z": 1}


def test_library_info_lines_stay_out_unless_verbose(tmp_path, capsys, monkeypatch):
    """litellm's and llama.cpp's INFO lines do not bury our messages; --verbose (anywhere on
    the line) lets them through."""
    import logging

    from core.cli import QUIET_LOGGERS, main
    from core.project import Project

    for name in QUIET_LOGGERS:  # put every level back afterwards
        monkeypatch.setattr(logging.getLogger(name), "level", logging.getLogger(name).level)
    monkeypatch.delenv("LITELLM_LOG", raising=False)
    path = tmp_path / "p.evaldesk"
    Project.create(path).close()
    assert main(["project", "info", str(path)]) == 0
    assert logging.getLogger("LiteLLM").getEffectiveLevel() == logging.WARNING
    assert logging.getLogger("llama_cpp").getEffectiveLevel() == logging.WARNING
    logging.getLogger("LiteLLM").info("litellm chatter")
    assert "litellm chatter" not in capsys.readouterr().err

    monkeypatch.delenv("LITELLM_LOG", raising=False)
    assert main(["project", "info", str(path), "--verbose"]) == 0
    assert logging.getLogger("LiteLLM").getEffectiveLevel() == logging.INFO
    import os

    assert os.environ["LITELLM_LOG"] == "INFO"
    monkeypatch.delenv("LITELLM_LOG", raising=False)
