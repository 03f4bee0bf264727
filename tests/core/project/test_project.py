"""The project file: round trips, transactions, resume, edits, cache, Save As, damaged/newer
files, locks and migrations."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

import core.project._file as project_module
from core.project import (
    APPLICATION_ID,
    NotAProject,
    Project,
    ProjectDamaged,
    ProjectError,
    ProjectLocked,
    ProjectTooNew,
    ProjectUnwritable,
)


class Persona(BaseModel):
    name: str
    perspective: str


def snapshot(path: Path) -> tuple[bytes, int, list[str]]:
    """The file's bytes, its modification time and the names in its folder."""
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(os.listdir(path.parent))


def make_project(path: Path, **kwargs) -> Path:
    with Project.create(path, **kwargs) as project:
        project.add_input("task", "task description", {"text": "Judge the answers."})
        run_id = project.start_run("aqer", "score", {"iterations": 100})
        project.put_result(run_id, "worker", "w1", {"score": 0.5})
    return path


def run_python(code: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "EVALDESK_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env, cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True,
        check=False,
        timeout=120,
    )


# ------------------------------------------------------------------------------- round trip
def test_round_trip_of_every_kind_of_data(tmp_path):
    path = tmp_path / "study.evaldesk"
    pdf_bytes = b"%PDF-1.7\x00\x01\xff binary"
    with Project.create(path, method="majeval", title="Patients' views") as project:
        assert project.path == path and not project.is_temporary and project.schema_version == 1
        spreadsheet = project.add_input("items", "items.xlsx", [{"id": "1", "text": "Zoë’s ✓"}])
        pdf = project.add_input("document", "views.pdf", pdf_bytes)
        assert project.add_input("document", "views.pdf", pdf_bytes) == pdf  # same content
        run_id = project.start_run("majeval", "personas", {"model": "m", "rounds": 3})
        project.put_artefact("persona", "p1", Persona(name="Ana", perspective="parent"),
                             run_id=run_id)
        project.put_artefact("group", "g1", {"name": "Parents", "personas": ["p1"]},
                             origin="human")
        project.record_edit(("persona", "p1"), "name", "Ana", "Anna", "dr.smith")
        project.put_result(run_id, "debate", "item-1", {"score": 4, "note": "ok"})
        project.put_result(run_id, "debate", "item-2", None, status="failed",
                           error="The model's answer was not valid JSON.")
        project.finish_run(run_id, "finished", "2 items")
        project.llm_cache_put("k1", model="openai/gpt-4o-mini", api_base=None,
                              request={"messages": [{"role": "user", "content": "hi"}]},
                              response={"content": "hello"}, prompt_tokens=10,
                              completion_tokens=3, cost=0.002, latency_s=1.5, run_id=run_id)

    with Project.open(path) as project:
        assert project.method == "majeval" and project.title == "Patients' views"
        assert project.created_at and project.modified_at >= project.created_at
        inputs = project.list_inputs()
        assert [(i.kind, i.name) for i in inputs] == [("items", "items.xlsx"),
                                                      ("document", "views.pdf")]
        assert project.get_input(spreadsheet).payload == [{"id": "1", "text": "Zoë’s ✓"}]
        assert project.get_input(pdf).payload == pdf_bytes
        assert project.list_inputs("document")[0].content_hash == inputs[1].content_hash
        assert project.get_input(999) is None

        persona = project.get_artefact("persona", "p1")
        assert persona.payload == {"name": "Anna", "perspective": "parent"}
        assert persona.edited and persona.origin == "generated" and persona.run_id == run_id
        assert project.get_artefact(persona.id) == persona
        assert project.get_artefact("persona", "missing") is None
        assert [a.key for a in project.list_artefacts()] == ["p1", "g1"]
        assert project.list_artefacts("group")[0].origin == "human"

        (edit,) = project.list_edits()
        assert (edit.kind, edit.key, edit.field, edit.old, edit.new, edit.who) == (
            "persona", "p1", "name", "Ana", "Anna", "dr.smith")
        assert edit.at

        run = project.get_run(run_id)
        assert run.settings == {"model": "m", "rounds": 3}
        assert (run.status, run.message, run.finished_at is not None) == ("finished", "2 items",
                                                                          True)
        results = project.get_results(run_id)
        assert [(r.key, r.status, r.payload, r.error) for r in results] == [
            ("item-1", "ok", {"score": 4, "note": "ok"}, None),
            ("item-2", "failed", None, "The model's answer was not valid JSON."),
        ]
        cached = project.llm_cache_get("k1")
        assert cached["response"] == {"content": "hello"}
        assert cached["request"]["messages"][0]["content"] == "hi"
        assert (cached["model"], cached["prompt_tokens"], cached["cost"]) == (
            "openai/gpt-4o-mini", 10, 0.002)
    # closed: one self-contained file, no journal, no lock
    assert sorted(os.listdir(tmp_path)) == ["home", "study.evaldesk"]


def test_json_is_stored_readable_and_nan_is_refused(tmp_path):
    with Project.create(tmp_path / "a.evaldesk") as project:
        run_id = project.start_run("aqer", "score", {})
        project.put_result(run_id, "worker", "w", {"name": "Zoë"})
        with pytest.raises(ValueError):
            project.put_result(run_id, "worker", "x", {"score": float("nan")})
        assert project.finished_keys(run_id, "worker") == {"w"}
    raw = sqlite3.connect(tmp_path / "a.evaldesk").execute("SELECT payload FROM results")
    assert raw.fetchone()[0] == '{"name": "Zoë"}'  # ensure_ascii=False


# ----------------------------------------------------------------------------- transactions
def test_an_exception_inside_a_transaction_leaves_nothing(tmp_path):
    with Project.create(tmp_path / "t.evaldesk") as project:
        run_id = project.start_run("aqer", "score", {})
        with pytest.raises(RuntimeError), project.transaction():
            project.put_result(run_id, "worker", "w1", {"score": 1})
            project.put_artefact("checklist", "c1", {"q": []})
            raise RuntimeError("boom")
        assert project.get_results(run_id) == []
        assert project.get_artefact("checklist", "c1") is None

        with project.transaction():  # a failed inner block keeps the outer block's writes
            project.put_result(run_id, "worker", "kept", {"score": 1})
            with pytest.raises(RuntimeError), project.transaction():
                project.put_result(run_id, "worker", "dropped", {"score": 2})
                raise RuntimeError("inner")
        assert project.finished_keys(run_id, "worker") == {"kept"}


def test_each_write_is_on_disk_at_once(tmp_path):
    path = tmp_path / "t.evaldesk"
    with Project.create(path) as project:
        run_id = project.start_run("aqer", "score", {})
        project.put_result(run_id, "worker", "w1", {"score": 1})
        other = sqlite3.connect(path)  # another reader sees it without any "save"
        assert other.execute("SELECT key FROM results").fetchall() == [("w1",)]
        other.close()


def test_writes_from_several_threads(tmp_path):
    with Project.create(tmp_path / "t.evaldesk") as project:
        run_id = project.start_run("majeval", "debate", {})

        def work(t: int) -> None:
            for i in range(25):
                project.put_result(run_id, "item", f"{t}-{i}", {"i": i})
                project.finished_keys(run_id, "item")

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(project.finished_keys(run_id, "item")) == 100


# ------------------------------------------------------------------------- runs and results
def test_results_upsert_and_resume_skips_finished_units(tmp_path):
    with Project.create(tmp_path / "r.evaldesk") as project:
        run_id = project.start_run("interacteval", "score", {"dimension": "coherence"})
        project.put_result(run_id, "text", "t1", {"score": 3.0})
        project.put_result(run_id, "text", "t2", None, status="failed", error="timeout")
        project.put_result(run_id, "other", "t1", {"x": 1})
        assert project.finished_keys(run_id, "text") == {"t1"}  # failed t2 is retried
        project.finish_run(run_id, "cancelled", "Stopped by the user")

        resumed = project.start_run("interacteval", "score", {"dimension": "coherence"},
                                    resume=True)
        assert resumed == run_id and project.get_run(run_id).status == "running"
        project.put_result(run_id, "text", "t2", {"score": 4.0})  # the retry replaces it
        results = project.get_results(run_id, "text")
        assert [(r.key, r.status, r.payload, r.error) for r in results] == [
            ("t1", "ok", {"score": 3.0}, None), ("t2", "ok", {"score": 4.0}, None)]
        assert project.finished_keys(run_id, "text") == {"t1", "t2"}
        assert len(project.get_results(run_id)) == 3
        assert project.get_results(run_id, status="failed") == []

        with pytest.raises(ValueError):
            project.put_result(run_id, "text", "t3", None, status="failed")  # no message
        with pytest.raises(ValueError):
            project.finish_run(run_id, "running")
        with pytest.raises(KeyError):
            project.finish_run(12345, "finished")


def test_find_run_matches_identical_settings_only(tmp_path):
    with Project.create(tmp_path / "r.evaldesk") as project:
        settings = {"model": "m", "temperature": 0, "dimensions": ["a", "b"]}
        first = project.start_run("majeval", "debate", settings)
        second = project.start_run("majeval", "debate", settings)
        project.start_run("majeval", "debate", {**settings, "temperature": 0.7})

        found = project.find_run("majeval", "debate",
                                 {"dimensions": ["a", "b"], "temperature": 0, "model": "m"})
        assert found.id == second and second > first  # the latest, key order irrelevant
        assert project.find_run("majeval", "debate", {**settings, "model": "other"}) is None
        assert project.find_run("majeval", "personas", settings) is None
        assert project.find_run("aqer", "debate", settings) is None
        fresh = project.start_run("majeval", "debate", {**settings, "model": "x"}, resume=True)
        assert fresh not in (first, second)
        assert [r.id for r in project.list_runs("majeval", "debate")][:2] == [first, second]


# ----------------------------------------------------------------------------------- edits
def test_edits_record_who_and_when_and_update_the_payload(tmp_path):
    with Project.create(tmp_path / "e.evaldesk") as project:
        project.put_artefact("checklist", "coherence", {
            "questions": [{"text": "Is it clear?"}, {"text": "Is it ordered?"}]})
        updated = project.record_edit(("checklist", "coherence"), "questions.1.text",
                                      "Is it ordered?", "Does it follow a logical order?", "ana")
        assert updated.payload["questions"][1]["text"] == "Does it follow a logical order?"
        assert updated.edited and updated.origin == "generated"
        project.record_edit(updated.id, "", updated.payload, {"questions": []}, "ben")

        # a stale "old" value means someone else changed it: nothing is written
        with pytest.raises(ProjectError, match="changed elsewhere"):
            project.record_edit(updated, "questions", ["stale"], [], "carl")
        with pytest.raises(ValueError):
            project.record_edit(updated, "questions", [], [1], " ")

        edits = project.list_edits(("checklist", "coherence"))
        assert [(e.field, e.who) for e in edits] == [("questions.1.text", "ana"), ("", "ben")]
        assert edits[0].old == "Is it ordered?" and edits[0].at
        assert edits[1].new == {"questions": []}

        # regenerating gives a fresh, unedited version; the history stays
        regenerated = project.put_artefact("checklist", "coherence", {"questions": ["new"]})
        assert not regenerated.edited and regenerated.id == updated.id
        assert len(project.list_edits(kind="checklist")) == 2

        project.put_artefact("persona", "p9", {"name": "Zed"}, origin="human")
        project.delete_artefact(("persona", "p9"), who="ana")
        assert project.get_artefact("persona", "p9") is None
        deletion = project.list_edits(("persona", "p9"))[-1]
        assert (deletion.field, deletion.old, deletion.new, deletion.who) == (
            "", {"name": "Zed"}, None, "ana")
        with pytest.raises(ProjectError, match="no longer in the project"):
            project.record_edit(("persona", "p9"), "name", "Zed", "Z", "ana")


# ------------------------------------------------------------------------------ LLM cache
def test_llm_cache_and_usage_totals(tmp_path):
    with Project.create(tmp_path / "l.evaldesk") as project:
        run_a = project.start_run("majeval", "debate", {})
        run_b = project.start_run("majeval", "debate", {"x": 1})
        assert project.llm_cache_get("nope") is None
        common = {"model": "m", "api_base": "http://127.0.0.1:8000/v1", "request": {"q": 1}}
        assert project.llm_cache_put("a1", **common, response={"r": 1}, prompt_tokens=100,
                                     completion_tokens=20, cost=0.01, run_id=run_a)
        assert project.llm_cache_put("a2", **common, response={"r": 2}, prompt_tokens=50,
                                     completion_tokens=5, cost=None, run_id=run_a)
        assert project.llm_cache_put("b1", **common, response={"r": 3}, prompt_tokens=7,
                                     completion_tokens=1, cost=0.0, run_id=run_b)
        # the same key again changes nothing
        assert not project.llm_cache_put("a1", **common, response={"r": "other"},
                                         prompt_tokens=999, run_id=run_b)
        assert project.llm_cache_get("a1")["response"] == {"r": 1}

        usage_a = project.llm_usage(run_a)
        assert (usage_a.calls, usage_a.prompt_tokens, usage_a.completion_tokens) == (2, 150, 25)
        assert usage_a.cost == pytest.approx(0.01) and usage_a.calls_without_cost == 1
        total = project.llm_usage()
        assert (total.calls, total.prompt_tokens, total.completion_tokens) == (3, 157, 26)
        assert project.llm_usage(run_id=424242).calls == 0


# --------------------------------------------------------------------- untitled / Save As
def test_new_work_save_as_moves_an_untitled_project(tmp_path):
    project = Project.create_untitled(method="aqer")
    untitled = project.path
    assert project.is_temporary and untitled.parent.name == "untitled"
    run_id = project.start_run("aqer", "score", {"n": 1})
    project.put_result(run_id, "worker", "w1", {"score": 0.9})
    project.put_artefact("note", "n", {"text": "x"})

    target = tmp_path / "docs" / "My study.evaldesk"
    target.parent.mkdir()
    project.save_as(target)
    assert project.path == target and not project.is_temporary
    assert not untitled.exists() and not Path(str(untitled) + ".lock").exists()
    assert Path(str(target) + ".lock").exists()
    project.put_result(run_id, "worker", "w2", {"score": 0.1})  # keeps working in the new file
    project.close()
    assert not Path(str(target) + ".lock").exists()

    with Project.open(target) as reopened:
        assert reopened.method == "aqer"
        assert reopened.finished_keys(run_id, "worker") == {"w1", "w2"}
        assert reopened.get_artefact("note", "n").payload == {"text": "x"}
    assert Project.list_untitled() == []


def test_save_as_of_a_saved_project_keeps_the_original(tmp_path):
    original = make_project(tmp_path / "a.evaldesk")
    before = original.read_bytes()
    with Project.open(original) as project:
        with pytest.raises(ProjectError, match="own file"):
            project.save_as(original)
        with pytest.raises(ProjectError, match="own file"):
            project.save_as(tmp_path / "." / "a.evaldesk")
        existing = tmp_path / "b.evaldesk"
        existing.write_bytes(b"old content the user chose to replace")
        Path(str(existing) + "-journal").write_bytes(b"a stale journal of the old file")
        project.save_as(existing)
        project.set_title("Copy")
        assert project.path == existing
    assert original.read_bytes() == before
    assert not Path(str(existing) + "-journal").exists()
    assert Project.inspect(existing).title == "Copy"
    assert Project.inspect(original).title == ""
    assert Project.inspect(existing).inputs == 1


def test_save_as_onto_a_project_open_elsewhere_is_refused(tmp_path):
    make_project(tmp_path / "a.evaldesk")
    make_project(tmp_path / "b.evaldesk")
    with Project.open(tmp_path / "a.evaldesk") as a, Project.open(tmp_path / "b.evaldesk"):
        b_before = snapshot(tmp_path / "b.evaldesk")[:2]
        with pytest.raises(ProjectLocked):
            a.save_as(tmp_path / "b.evaldesk")
        assert snapshot(tmp_path / "b.evaldesk")[:2] == b_before
        assert a.path == tmp_path / "a.evaldesk"


def test_a_renamed_artefact_keeps_its_edits_and_a_taken_name_is_refused(tmp_path):
    with Project.create(tmp_path / "r.evaldesk") as project:
        project.put_artefact("checklist", "coherence", {"items": ["Is it clear?"]})
        project.record_edit(("checklist", "coherence"), "items.0", "Is it clear?", "Clear?", "ana")
        project.put_artefact("checklist", "fluency", {"items": []})
        moved = project.rename_artefact(("checklist", "coherence"), "structure")
        assert moved.key == "structure" and moved.edited and moved.payload["items"] == ["Clear?"]
        assert project.get_artefact("checklist", "coherence") is None
        assert [e.who for e in project.list_edits(("checklist", "structure"))] == ["ana"]
        assert project.list_edits(("checklist", "coherence")) == []
        with pytest.raises(ProjectError, match="already a checklist 'fluency'"):
            project.rename_artefact(moved, "fluency")
        assert project.get_artefact("checklist", "structure").payload["items"] == ["Clear?"]


def test_empty_untitled_projects_vanish_and_discard_deletes(tmp_path):
    empty = Project.create_untitled()
    path = empty.path
    empty.close()
    assert not path.exists()

    project = Project.create_untitled()
    project.add_input("task", "t", {"text": "x"})
    path = project.path
    assert Project.list_untitled() == []  # open in this process: not offered for recovery
    project.discard()
    assert not path.exists()

    saved = Project.create(tmp_path / "s.evaldesk")
    with pytest.raises(ProjectError, match="does not delete"):
        saved.discard()
    saved.close()


def test_untitled_work_survives_a_crash(tmp_path, evaldesk_home):
    crashed = run_python(
        """
        import os
        from core.project import Project
        p = Project.create_untitled(method="majeval", title="Unsaved")
        run_id = p.start_run("majeval", "debate", {"rounds": 3})
        p.put_result(run_id, "item", "1", {"score": 4})
        print(p.path)
        os._exit(3)  # the app crashes before Save As
        """,
        evaldesk_home,
    )
    assert crashed.returncode == 3, crashed.stderr
    path = Path(crashed.stdout.strip())
    assert Path(str(path) + ".lock").exists()  # left behind by the dead process

    assert Project.list_untitled() == [path]
    with Project.open(path) as recovered:  # the stale lock is replaced
        assert recovered.is_temporary and recovered.title == "Unsaved"
        run = recovered.find_run("majeval", "debate", {"rounds": 3})
        assert recovered.finished_keys(run.id, "item") == {"1"}
        recovered.save_as(tmp_path / "recovered.evaldesk")
    assert not path.exists() and Project.list_untitled() == []


# --------------------------------------------------------------- damaged, foreign, newer
def _random_file(tmp_path: Path) -> Path:
    path = tmp_path / "random.evaldesk"
    path.write_bytes(os.urandom(8192))
    return path


def _truncated(tmp_path: Path) -> Path:
    path = tmp_path / "truncated.evaldesk"
    with Project.create(path) as project:
        run_id = project.start_run("aqer", "score", {})
        with project.transaction():
            for i in range(300):
                project.put_result(run_id, "worker", f"w{i}", {"text": "x" * 200})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    return path


def _header_only(tmp_path: Path) -> Path:
    path = make_project(tmp_path / "header.evaldesk")
    path.write_bytes(path.read_bytes()[:60])
    return path


def _scrambled_pages(tmp_path: Path) -> Path:
    path = tmp_path / "scrambled.evaldesk"
    with Project.create(path) as project:
        run_id = project.start_run("aqer", "score", {})
        with project.transaction():
            for i in range(300):
                project.put_result(run_id, "worker", f"w{i}", {"text": "y" * 200})
    data = bytearray(path.read_bytes())
    data[4096 * 2: 4096 * 6] = os.urandom(4096 * 4)  # keep the header, ruin some pages
    path.write_bytes(bytes(data))
    return path


def _other_apps_database(tmp_path: Path) -> Path:
    path = tmp_path / "other.evaldesk"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta(key, value)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.commit()
    conn.close()
    return path


def _empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty.evaldesk"
    path.write_bytes(b"")
    return path


def _spreadsheet(tmp_path: Path) -> Path:
    path = tmp_path / "answers.xlsx"
    path.write_bytes(b"PK\x03\x04" + os.urandom(500))
    return path


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (_random_file, NotAProject, "not a readable EvalDesk project"),
        (_spreadsheet, NotAProject, "start a new project and import it"),
        (_empty, NotAProject, "empty"),
        (_truncated, ProjectDamaged, "damaged"),
        (_header_only, ProjectDamaged, "damaged"),
        (_scrambled_pages, ProjectDamaged, "damaged"),
        (_other_apps_database, NotAProject, "another program"),
    ],
)
@pytest.mark.parametrize("read_only", [False, True])
def test_a_file_that_cannot_be_opened_is_left_untouched(tmp_path, make, error, words,
                                                        read_only):
    path = make(tmp_path)
    before = snapshot(path)
    with pytest.raises(error, match=words) as caught:
        Project.open(path, read_only=read_only)
    assert str(path) in str(caught.value)
    assert "not changed" in str(caught.value) or error is NotAProject
    assert snapshot(path) == before  # same bytes, same time, no lock or journal left


def test_a_newer_file_is_refused_and_untouched(tmp_path):
    path = make_project(tmp_path / "new.evaldesk")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    before = snapshot(path)
    for read_only in (False, True):
        with pytest.raises(ProjectTooNew) as caught:
            Project.open(path, read_only=read_only)
        message = str(caught.value)
        assert "newer EvalDesk (format 7" in message and "Update EvalDesk" in message
        assert "was not changed" in message
        assert snapshot(path) == before


def test_missing_file_and_folder_are_plain_errors(tmp_path):
    with pytest.raises(ProjectError, match="There is no file"):
        Project.open(tmp_path / "gone.evaldesk")
    with pytest.raises(NotAProject, match="is a folder"):
        Project.open(tmp_path)
    make_project(tmp_path / "x.evaldesk")
    with pytest.raises(ProjectError, match="already exists"):
        Project.create(tmp_path / "x.evaldesk")


def test_a_crash_while_saving_is_rolled_back_on_open(tmp_path, evaldesk_home):
    path = make_project(tmp_path / "crash.evaldesk")
    crashed = run_python(
        f"""
        import os
        from core.project import Project
        p = Project.open({str(path)!r})
        p._conn.execute("PRAGMA cache_size = 2")  # spill half-written pages into the file
        with p.transaction():
            p.put_artefact("big", "b", {{"text": "z" * 200000}})
            for i in range(500):
                p.put_artefact("many", str(i), {{"text": "z" * 500}})
            os._exit(0)
        """,
        evaldesk_home,
    )
    assert crashed.returncode == 0, crashed.stderr
    assert Path(str(path) + "-journal").exists()
    with pytest.raises(ProjectError, match="needs repairing"):
        Project.open(path, read_only=True)
    with Project.open(path) as project:
        assert project.list_artefacts() == []  # the unfinished change is gone
        assert len(project.list_inputs()) == 1  # finished work is kept
    assert not Path(str(path) + "-journal").exists()


# ------------------------------------------------------------------------ unwritable places
def test_create_and_save_as_under_a_file_or_missing_folder(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for bad in (blocker / "sub" / "p.evaldesk", tmp_path / "no-such-folder" / "p.evaldesk"):
        with pytest.raises(ProjectUnwritable, match="Choose another folder") as caught:
            Project.create(bad)
        assert str(bad.parent) in str(caught.value)
    with Project.create(tmp_path / "ok.evaldesk") as project:
        with pytest.raises(ProjectUnwritable, match="Choose another folder"):
            project.save_as(blocker / "p.evaldesk")
        assert project.path == tmp_path / "ok.evaldesk"
        project.add_input("task", "t", {"still": "writable"})


def test_create_in_a_read_only_folder(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        probe = folder / "probe"
        try:
            probe.write_text("x")
        except OSError:
            pass
        else:
            probe.unlink()
            pytest.skip("this account (root?) may write to read-only folders")
        with pytest.raises(ProjectUnwritable, match="Choose another folder") as caught:
            Project.create(folder / "p.evaldesk")
        assert str(folder) in str(caught.value)
        assert os.listdir(folder) == []
    finally:
        folder.chmod(0o700)


def test_read_only_projects_take_no_lock_and_refuse_writes(tmp_path):
    path = make_project(tmp_path / "ro.evaldesk")
    before = snapshot(path)
    with Project.open(path, read_only=True) as project:
        assert project.read_only and project.list_inputs()[0].name == "task description"
        assert not Path(str(path) + ".lock").exists()
        with pytest.raises(ProjectUnwritable, match="read-only"):
            project.add_input("task", "x", {})
        with pytest.raises(ProjectUnwritable):
            project.put_artefact("a", "b", {})
    assert snapshot(path) == before


# ------------------------------------------------------------------------------------ locks
def test_the_same_project_cannot_be_open_twice(tmp_path):
    path = make_project(tmp_path / "l.evaldesk")
    first = Project.open(path)
    with pytest.raises(ProjectLocked, match="already open in this EvalDesk"):
        Project.open(path)
    with Project.open(path, read_only=True) as viewer:  # looking is fine
        assert viewer.list_inputs()
    first.close()
    Project.open(path).close()


def test_lock_of_another_live_process_blocks(tmp_path):
    """The guard is the operating system's lock, held by a live EvalDesk; the lock file's text
    names it in the message."""
    path = make_project(tmp_path / "l.evaldesk")
    holder = subprocess.Popen(
        [sys.executable, "-c", ("import sys, time\nfrom core.project import Project\n"
                                "p = Project.open(sys.argv[1])\nprint('open', flush=True)\n"
                                "time.sleep(60)"), str(path)],
        stdout=subprocess.PIPE, text=True, cwd=str(Path(__file__).resolve().parents[3]))
    try:
        assert holder.stdout.readline().strip() == "open"
        before = snapshot(path)[:2]
        with pytest.raises(ProjectLocked, match="another EvalDesk window") as caught:
            Project.open(path)
        assert caught.value.owner["pid"] == holder.pid
        assert snapshot(path)[:2] == before
        assert project_module._LockFile.owner_if_live(path)["pid"] == holder.pid
        with Project.open(path, break_lock=True) as anyway:  # the user said nobody uses it
            assert anyway.list_inputs()
    finally:
        holder.kill()
        holder.wait(10)
    with Project.open(path):  # the killed holder's lock went with its process
        pass


def test_a_lock_file_without_its_lock_is_only_information(tmp_path):
    """A lock file left behind (a crash; the process id reused by another program; another
    computer) holds no lock: it is taken over, whatever it says."""
    path = make_project(tmp_path / "l.evaldesk")
    lock = Path(str(path) + ".lock")
    for owner in ({"pid": os.getppid(), "host": socket.gethostname(), "token": "t"},
                  {"pid": 1, "host": "lab-pc-42", "user": "anna"}):
        lock.write_text(json.dumps(owner))
        assert project_module._LockFile.owner_if_live(path) is None
        with Project.open(path):
            assert json.loads(lock.read_text())["pid"] == os.getpid()
        assert not lock.exists()


def test_a_project_dropped_without_close_can_be_reopened(tmp_path):
    path = make_project(tmp_path / "l.evaldesk")
    project = Project.open(path)
    project._conn.close()
    del project  # garbage: its lock goes with it
    with Project.open(path) as again:
        assert again.list_inputs()


# ------------------------------------------------------------------------------- migrations
def _add_notes_table(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("INSERT INTO notes(text) VALUES ('migrated')")


def test_opening_an_older_file_upgrades_it_after_keeping_a_copy(tmp_path, monkeypatch):
    path = make_project(tmp_path / "old.evaldesk")
    original = path.read_bytes()
    monkeypatch.setattr(project_module, "SCHEMA_VERSION", 2)
    monkeypatch.setattr(project_module, "MIGRATIONS", {1: _add_notes_table})

    info = Project.inspect(path)  # read-only: no upgrade
    assert info.schema_version == 1 and path.read_bytes() == original

    with Project.open(path) as project:
        assert project.schema_version == 2
        assert project._conn.execute("SELECT text FROM notes").fetchall() == [("migrated",)]
        assert project.list_inputs()[0].name == "task description"
        project.add_input("task", "after", {"x": 1})
    backup = tmp_path / "old.before-v2.evaldesk"
    assert backup.read_bytes() == original
    meta = dict(sqlite3.connect(path).execute("SELECT key, value FROM meta").fetchall())
    assert meta["schema_version"] == "2"

    # new files get every migration too
    with Project.create(tmp_path / "fresh.evaldesk") as fresh:
        assert fresh.schema_version == 2
        assert fresh._conn.execute("SELECT COUNT(*) FROM notes").fetchone() == (1,)


def test_a_failed_upgrade_changes_nothing(tmp_path, monkeypatch):
    path = make_project(tmp_path / "old.evaldesk")
    original = path.read_bytes()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half (x)")
        raise RuntimeError("bug in the upgrade")

    monkeypatch.setattr(project_module, "SCHEMA_VERSION", 2)
    monkeypatch.setattr(project_module, "MIGRATIONS", {1: broken})
    with pytest.raises(ProjectError, match="could not be upgraded") as caught:
        Project.open(path)
    assert "was not changed" in str(caught.value)
    assert path.read_bytes() == original
    assert (tmp_path / "old.before-v2.evaldesk").read_bytes() == original
    assert not Path(str(path) + ".lock").exists()
    monkeypatch.setattr(project_module, "SCHEMA_VERSION", 1)
    with Project.open(path) as project:
        assert project.schema_version == 1


def test_header_marks_the_file_as_evaldesk(tmp_path):
    path = make_project(tmp_path / "h.evaldesk")
    head = path.read_bytes()[:100]
    assert int.from_bytes(head[68:72], "big") == APPLICATION_ID
    assert int.from_bytes(head[60:64], "big") == project_module.SCHEMA_VERSION
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "delete"


def test_info_counts(tmp_path):
    path = tmp_path / "i.evaldesk"
    with Project.create(path, method="interacteval", title="T") as project:
        run_id = project.start_run("interacteval", "score", {})
        project.put_artefact("checklist", "c", {"q": "a"})
        project.record_edit(("checklist", "c"), "q", "a", "b", "me")
        project.put_result(run_id, "text", "1", None, status="failed", error="no answer")
        project.finish_run(run_id, "failed", "1 failed")
        project.llm_cache_put("k", model="m", api_base=None, request={}, response={},
                              prompt_tokens=3, completion_tokens=2, cost=0.5, run_id=run_id)
    info = Project.inspect(path)
    assert (info.method, info.title, info.schema_version) == ("interacteval", "T", 1)
    assert (info.inputs, info.artefacts, info.edited_artefacts, info.edits) == (0, 1, 1, 1)
    assert (info.runs, info.runs_by_status, info.results, info.failed_results) == (
        1, {"failed": 1}, 1, 1)
    assert (info.llm.calls, info.llm.prompt_tokens, info.llm.cost) == (1, 3, 0.5)


def test_input_file_prefers_the_chosen_file_while_it_is_unchanged(tmp_path):
    chosen = tmp_path / "items.xlsx"
    chosen.write_bytes(b"first version")
    with Project.create(tmp_path / "p.evaldesk") as project:
        stored = project.add_input("items", "items.xlsx", chosen.read_bytes())
        assert project.input_file(stored, chosen, "items.xlsx") == chosen

        chosen.write_bytes(b"edited since")  # changed on disk: the stored copy is what was used
        copy = project.input_file(stored, chosen, "items.xlsx")
        assert copy != chosen and copy.name == "items.xlsx"
        assert copy.read_bytes() == b"first version"

        chosen.unlink()  # moved away: still readable from the project
        assert project.input_file(stored, chosen, "items.xlsx").read_bytes() == b"first version"

        other = tmp_path / "other.xlsx"
        other.write_bytes(b"x")
        assert project.input_file(None, other) == other  # nothing stored: the chosen file
        assert project.input_file(None, tmp_path / "missing.xlsx") is None
