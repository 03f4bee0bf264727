"""``AqerSession``: the verbs of ``core.method.MethodSession`` on AQER, the column roles as one
value kept flat in the project (projects kept before open and find their results), and a run of
the command line that Ctrl+C stops at once (the work runs in the event loop's executor)."""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.aqer.model import AqerChoices, AqerCondition, ColumnRoles
from core.aqer.report import read_report
from core.aqer.session import AqerSession, sample_path
from core.aqer.session.results import result_to_payload
from core.method import VERBS, MethodSession
from core.project import Project
from core.project.inputs import store_input
from tests.core.aqer.aqer_support import TinyEncoder

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def project():
    with Project.create_untitled(method="aqer") as p:
        yield p


def _parameters(function) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(function).parameters.values()
            if p.name not in ("self", "cls")]


def test_the_session_has_every_verb_of_the_protocol_with_its_parameters(project):
    for verb in VERBS:
        wanted, ours = getattr(MethodSession, verb), getattr(AqerSession, verb)
        if isinstance(wanted, property):
            assert isinstance(ours, property), verb
            continue
        assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(wanted), verb
        ours_by_name = {p.name: p for p in _parameters(ours)}
        for parameter in _parameters(wanted):
            assert parameter.name in ours_by_name, (verb, parameter.name)
            assert ours_by_name[parameter.name].kind == parameter.kind, (verb, parameter.name)
        extra = set(ours_by_name) - {p.name for p in _parameters(wanted)}
        assert all(ours_by_name[name].default is not inspect.Parameter.empty
                   for name in extra), (verb, extra)  # only optional keywords added
    assert isinstance(AqerSession.open(project), MethodSession)
    assert AqerSession.method == "aqer"


def test_the_verbs_in_the_order_a_run_uses_them(project, tmp_path):
    tiny = TinyEncoder()
    session = AqerSession.open(project, encoders=tiny.factory)
    with pytest.raises(ValueError, match="Choose the answers file first"):
        session.estimate()
    choices = session.store_input("answers", sample_path())
    assert choices.file_name == "aqer_sample.xlsx" and session.choices == choices
    opened = session.open_answers()
    notes = session.guess_columns(opened.read, opened.sheets, choices=opened.choices)
    assert notes and session.choices.columns.response_col == "response"
    assert session.check_answers(opened.read).ok
    assert session.estimate() is None  # AQER asks no language model anything
    stored = asyncio.run(session.run())
    assert session.load_results().run_id == stored.run_id
    name = session.add_condition(AqerCondition(blank_answers="missing"))
    assert session.load_conditions([name]) == {}
    others = asyncio.run(session.run_conditions([name]))
    assert list(others) == [name] and session.load_conditions([name])[name].run_id == \
        others[name].run_id
    judge, why = session.judge_to_check()
    assert why == "" and len(judge.items) == 12
    assert [key for _, key, _ in session.judges_to_compare()] == ["", name]
    written = session.export(tmp_path / "out.xlsx", who="Ana")
    sheets = read_report(written)
    assert {"Workers", "Comparison"} <= set(sheets)
    assert name in set(sheets["Comparison"].iloc[:, 0])  # the conditions, by name
    # reopened: the same choices and the same result, nothing computed again
    again = AqerSession.open(project, encoders=tiny.factory)
    assert again.choices == session.choices and again.problem == ""
    assert again.load_results().run_id == stored.run_id


def test_an_input_role_aqer_does_not_keep_is_named(project):
    with pytest.raises(ValueError, match="an answers file and a grades file, not “texts”"):
        AqerSession.open(project).store_input("texts", sample_path())


#: The choices as EvalDesk kept them before the column roles were one value (kind
#: ``aqer_setup``, version 1, each role beside the other choices), for the sample answers.
KEPT_BEFORE = {
    "path": "", "file_name": "aqer_sample.xlsx", "content_hash": "", "input_id": None,
    "sheet": "Long", "header_row": None, "format": "long", "question_col": "question",
    "worker_col": "worker", "response_col": "response", "grade_col": "grade",
    "wide_rows": "question", "llm_cols": [], "llm_workers": [], "ignore_cols": [],
    "blank_tokens": ["not answered", "no answer", "n/a", "-", "?"], "grades_sheet": None,
    "grades_file": None, "grades_name_col": None, "grades_value_col": None,
    "duplicates": "first", "embedding_model": "", "embedding_backend": "auto", "device": "auto",
    "settings": {"max_iterations": 100, "tolerance": 1e-06, "llm_as_workers": False,
                 "baselines": True, "rasa_alpha": 0.05, "max_reference_pairs": 50000000,
                 "blank_answers": "auto", "keep_absent": False},
    "conditions": [{"embedding_model": None, "embedding_backend": None,
                    "blank_answers": "worst"}],
    "_payload_version": 1,
}
#: What a result of those choices was stored under (the run's settings), as EvalDesk wrote it.
SCORED_BEFORE = {
    "answers": "", "sheet": "Long", "format": "long",
    "columns": {"question_col": "question", "worker_col": "worker", "response_col": "response",
                "grade_col": "grade", "llm_cols": [], "llm_workers": [],
                "blank_tokens": ["not answered", "no answer", "n/a", "-", "?"]},
    "duplicates": "first", "embedding": "built-in all-MiniLM-L6-v2",
    "settings": {"max_iterations": 100, "tolerance": 1e-06, "llm_as_workers": False,
                 "baselines": True, "rasa_alpha": 0.05, "max_reference_pairs": 50000000,
                 "blank_answers": "auto", "keep_absent": False},
}


def test_a_project_kept_before_opens_with_its_choices_and_finds_its_result(project):
    ref = store_input(project, "aqer_answers", sample_path())
    kept = {**KEPT_BEFORE, "path": ref.path, "content_hash": ref.content_hash,
            "input_id": ref.input_id}
    project.put_artefact("aqer_setup", "current", kept, origin="human")
    tiny = TinyEncoder()
    fresh = AqerSession(project, AqerChoices.model_validate(kept), encoders=tiny.factory)
    result = asyncio.run(fresh.run()).result
    # the run stored by the EvalDesk of before, under the settings it gave it
    run_id = project.start_run("aqer", "score", {**SCORED_BEFORE, "answers": ref.content_hash})
    project.put_result(run_id, "result", "aqer", {"result": result_to_payload(result),
                                                  "inputs": {"Input file": ref.path}})
    project.finish_run(run_id, "finished")

    session = AqerSession.open(project, encoders=tiny.factory)
    assert session.problem == ""
    assert session.choices.columns == ColumnRoles(
        question_col="question", worker_col="worker", response_col="response",
        grade_col="grade")
    assert session.choices.duplicates == "first"
    assert session.choices.conditions == [AqerCondition(blank_answers="worst")]
    assert session.load_results().run_id == run_id  # found again: nothing to compute
    # kept again in the same shape (an older EvalDesk reads it as before)
    session.save_choices(session.choices)
    again = project.get_artefact("aqer_setup", "current").payload
    assert again == kept and list(again) == list(kept)


SLOW_RUN = """
import sys, time
import core.embeddings
from core.cli import main
from tests.core.aqer.aqer_support import TinyEncoder

class Slow(TinyEncoder):
    def __init__(self, model_path="", device="auto", **_):
        super().__init__()
    def __call__(self, texts):
        print("embedding", flush=True)
        time.sleep(2)
        return super().__call__(texts)

core.embeddings.Encoder = Slow
core.embeddings.CACHE_BATCH = 4
sys.exit(main(["aqer", sys.argv[1], "-o", sys.argv[2], "--project", sys.argv[3]]))
"""


@pytest.mark.timeout(120)
def test_ctrl_c_stops_a_command_line_run_at_once_and_keeps_its_embeddings(tmp_path):
    """The run is CPU work in the event loop's executor: Ctrl+C cancels the task awaiting it
    and, with it, the run's cancel token, so the work stops at its next check (a run left to
    go on embedding would hold the command for its whole length)."""
    path = tmp_path / "p.evaldesk"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_RUN, str(sample_path()), str(tmp_path / "o.xlsx"),
         str(path)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    assert process.stdout.readline().strip() == "embedding"  # 15 calls of 2 s to come
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    _, err = process.communicate(timeout=60)
    took = time.monotonic() - started
    assert process.returncode == 130, err
    assert "stopped" in err and "kept" in err and "Traceback" not in err, err
    assert took < 15, f"the run went on for {took:.0f} s after Ctrl+C"
    assert not (tmp_path / "o.xlsx").exists()
    with Project.open(path, read_only=True) as opened:
        runs = {run.step: run for run in opened.list_runs()}
        assert runs["score"].status == "cancelled"
        kept = opened.get_results(runs["embeddings"].id)
    assert kept  # the vectors embedded before Ctrl+C are in the project
