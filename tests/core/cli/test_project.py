"""``evaldesk project info FILE``."""

from __future__ import annotations

import os
import sqlite3

from core.cli import main
from core.project import Project


def _lines(text: str) -> dict[str, str]:
    pairs = (line.split(":", 1) for line in text.splitlines() if ":" in line)
    return {label.strip(): value.strip() for label, value in pairs}


def test_info_prints_what_the_project_holds(tmp_path, capsys):
    path = tmp_path / "study.evaldesk"
    with Project.create(path, method="majeval", title="Reading QA") as project:
        project.add_input("items", "items.xlsx", [{"id": "1"}])
        run_id = project.start_run("majeval", "debate", {"rounds": 3})
        project.put_artefact("persona", "p1", {"name": "Ana"})
        project.put_artefact("persona", "p2", {"name": "Ben"})
        project.record_edit(("persona", "p1"), "name", "Ana", "Anna", "me")
        project.put_result(run_id, "item", "1", {"score": 4})
        project.put_result(run_id, "item", "2", None, status="failed", error="bad JSON")
        project.finish_run(run_id, "cancelled", "stopped")
        project.llm_cache_put("k", model="m", api_base=None, request={}, response={},
                              prompt_tokens=1200, completion_tokens=30, cost=0.25, run_id=run_id)
    before = path.read_bytes()

    assert main(["project", "info", str(path)]) == 0
    out = capsys.readouterr().out
    fields = _lines(out)
    assert fields["File"] == str(path)
    assert fields["Format"] == "1"
    assert fields["Method"] == "majeval" and fields["Title"] == "Reading QA"
    assert fields["Created"] and fields["Modified"]
    assert fields["Inputs"] == "1"
    assert fields["Artefacts"] == "2 (1 edited by a person)"
    assert fields["Edits"] == "1"
    assert fields["Runs"] == "1 (1 cancelled)"
    assert fields["Results"] == "2 (1 failed)"
    assert fields["LLM calls"].startswith("1 (1,200 tokens in, 30 out, cost 0.2500 USD")
    assert path.read_bytes() == before


def test_info_on_an_empty_project(tmp_path, capsys):
    path = tmp_path / "new.evaldesk"
    Project.create(path).close()
    assert main(["project", "info", str(path)]) == 0
    fields = _lines(capsys.readouterr().out)
    assert fields["Method"] == "(not chosen yet)"
    assert fields["Runs"] == "0" and fields["LLM calls"].startswith("0 (")


def test_info_on_damaged_newer_or_missing_files_exits_1(tmp_path, capsys):
    damaged = tmp_path / "damaged.evaldesk"
    damaged.write_bytes(os.urandom(4096))
    newer = tmp_path / "newer.evaldesk"
    Project.create(newer).close()
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version = 9")
    conn.close()
    newer_bytes = newer.read_bytes()

    assert main(["project", "info", str(damaged)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("evaldesk: ") and str(damaged) in err and "damaged" in err
    assert "Traceback" not in err

    assert main(["project", "info", str(newer)]) == 1
    err = capsys.readouterr().err
    assert "newer EvalDesk (format 9" in err and "Update EvalDesk" in err
    assert newer.read_bytes() == newer_bytes

    assert main(["project", "info", str(tmp_path / "missing.evaldesk")]) == 1
    assert "There is no file" in capsys.readouterr().err


def test_info_works_while_the_project_is_open_in_the_app(tmp_path, capsys):
    path = tmp_path / "busy.evaldesk"
    with Project.create(path) as project:
        project.add_input("task", "t", {"text": "x"})
        assert main(["project", "info", str(path)]) == 0
    assert _lines(capsys.readouterr().out)["Inputs"] == "1"


def test_a_command_records_its_method_in_a_project_that_had_none(tmp_path):
    """`evaldesk project info` no longer says "not chosen yet" after runs in the project."""
    from core.cli._common import cli_project

    path = tmp_path / "mine.evaldesk"
    Project.create(path).close()
    with cli_project(str(path), "aqer") as project:
        assert project.method == "aqer"
    with cli_project(str(path), "majeval") as project:
        assert project.method == "aqer"  # a method once recorded stays
