"""Done means (issue 33): with a fake OpenAI-compatible server on 127.0.0.1 recording every
request, a full MAJ-Eval run (personas from a document naming people, then the debates) and a
full InteractEval run (build, then score) on texts holding the user's names send no listed
name and no pattern identifier; scores, feedback and exports show the real names again; the
same runs with de-identification off send them (so these tests can fail).

The commands run as the user runs them: ``python -m core.cli`` in a process of its own for the
de-identified MAJ-Eval route (what leaves that process is what the server records), in this
process for the others. The server is on this computer, so ``--deidentify`` is given (it also
covers a model on this computer: a local server that passes texts on); a new project's default
for a model off this computer is tested in ``tests/core/deidentify``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from core.project import Project
from tests.core.cli.deidentify_routes_support import (
    NAMES,
    PATTERNS,
    fake_profile,
    found_in,
    interacteval_inputs,
    interacteval_reply,
    majeval_inputs,
    majeval_reply,
)
from tests.core.deidentify.recording_server import recording_server

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m core.cli ARGS`` from this checkout, with this test's EvalDesk home."""
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, check=False,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def sheet(path: Path, name: str) -> str:
    return pd.read_excel(path, sheet_name=name, dtype=str).fillna("").to_string()


def majeval_args(folder: Path, switch: str) -> tuple[list[str], list[str]]:
    project = str(folder / "p.evaldesk")
    personas = ["majeval", "personas", str(folder / "study.txt"), "--task-file",
                str(folder / "task.txt"), "--profile", "Fake cloud", "--project", project,
                "--names-file", str(folder / "names.txt"), switch,
                "-o", str(folder / "personas.xlsx")]
    run = ["majeval", "run", "--personas", str(folder / "personas.xlsx"), "--items",
           str(folder / "items.xlsx"), "--task-file", str(folder / "task.txt"), "--profile",
           "Fake cloud", "--project", project, "--no-bootstrap",
           "-o", str(folder / "results.xlsx")]
    return personas, run


def test_majeval_sends_no_name_and_shows_the_real_names_again(tmp_path):
    majeval_inputs(tmp_path)
    personas, run = majeval_args(tmp_path, "--deidentify")
    with recording_server(majeval_reply) as server:
        fake_profile(server)
        made = cli(*personas)
        assert made.returncode == 0, made.stderr
        assert "De-identification: on" in made.stderr
        debated = cli(*run)          # the switch is kept in the project: on again
        assert debated.returncode == 0, debated.stderr
        assert "De-identification: on" in debated.stderr
        sent = server.sent_text()
        calls = len(server.requests)
    assert calls >= 20            # stakeholders, groups, personas, every debate
    assert found_in(sent, NAMES) == []
    assert found_in(sent, PATTERNS) == []
    assert "[STUDENT 1]" in sent and "[PERSON 1]" in sent and "[EMAIL 1]" in sent
    # the personas: the evidence exactly as the document has it, the real names back
    evidence = sheet(tmp_path / "results.xlsx", "Evidence")
    assert "Maria Lopez's mother said that long questions make her child lose interest." in \
        evidence
    assert "On 4 March 2021 Tom Berg explained" in evidence
    written = sheet(tmp_path / "personas.xlsx", "Personas")
    assert "Knows Maria Lopez's family." in written and "Dana Ray" in written
    # the debates: feedback speaks of the student by name, the scores are there
    transcripts = sheet(tmp_path / "results.xlsx", "Transcripts")
    assert "Jake Miller answered the question." in transcripts
    assert "I agree about Maria Lopez." in transcripts and "[STUDENT" not in transcripts
    feedback = sheet(tmp_path / "results.xlsx", "Feedback")
    assert "Jake Miller" in feedback
    scores = pd.read_excel(tmp_path / "results.xlsx", sheet_name="Items", dtype=str)
    assert list(scores["Overall quality"]) == ["5", "2", "5"]
    # the proof: kinds and counts, never a value; the log holds the texts as sent
    proof = sheet(tmp_path / "results.xlsx", "De-identification")
    assert "student names from your lists" in proof and "e-mail addresses" in proof
    assert found_in(proof, NAMES) == [] and found_in(proof, PATTERNS) == []
    with Project.open(tmp_path / "p.evaldesk", read_only=True) as project:
        notes = [note for _run, note in project.llm_call_notes("deidentification")]
        assert len(notes) == calls and all(n["on"] for n in notes)
        with project._reading() as conn:
            logged = "\n".join(r[0] for r in conn.execute("SELECT request FROM llm_calls"))
    assert found_in(logged, NAMES) == [] and "[STUDENT 1]" in logged


def test_majeval_with_deidentification_off_sends_the_names(tmp_path):
    majeval_inputs(tmp_path)
    personas, run = majeval_args(tmp_path, "--no-deidentify")
    with recording_server(majeval_reply) as server:
        fake_profile(server)
        assert main(personas) == 0
        assert main(run) == 0
        sent = server.sent_text()
    assert {"Maria Lopez", "Jake Miller", "Sarah Chen", "Tom Berg", "Dana Ray"} <= set(
        found_in(sent, NAMES))
    assert set(found_in(sent, PATTERNS)) == set(PATTERNS)
    assert "De-identification" in pd.ExcelFile(tmp_path / "results.xlsx").sheet_names
    assert "de-identification off" in sheet(tmp_path / "results.xlsx", "De-identification")


def interacteval_args(folder: Path, switch: str) -> tuple[list[str], list[str]]:
    project = str(folder / "p.evaldesk")
    build = ["checklist", "build", "--dimension", "Coherence", "--definition-file",
             str(folder / "def.txt"), "--samples", str(folder / "samples.xlsx"), "--notes",
             str(folder / "anna.txt"), "--profile", "Fake cloud", "--project", project,
             "--names-file", str(folder / "names.txt"), switch,
             "-o", str(folder / "checklist.xlsx")]
    score = ["checklist", "score", "--checklist", str(folder / "checklist.xlsx"), "--items",
             str(folder / "items.xlsx"), "--text-col", "summary", "--profile", "Fake cloud",
             "--project", project, "-o", str(folder / "scores.xlsx")]
    return build, score


@pytest.mark.parametrize("switch", ["--deidentify", "--no-deidentify"])
def test_interacteval_build_and_score(tmp_path, switch, capsys):
    interacteval_inputs(tmp_path)
    (tmp_path / "anna.txt").write_text("- Check how Maria Lopez links her ideas\n"
                                       "- Check pronouns\n", encoding="utf-8")
    build, score = interacteval_args(tmp_path, switch)
    with recording_server(interacteval_reply) as server:
        fake_profile(server)
        assert main(build) == 0, capsys.readouterr().err
        assert main(score) == 0, capsys.readouterr().err
        sent = server.sent_text()
    on = switch == "--deidentify"
    if on:
        assert found_in(sent, NAMES) == [] and found_in(sent, PATTERNS) == []
        assert "[STUDENT 1]" in sent
    else:   # the same run, de-identification off: the names and identifiers go out
        assert {"Maria Lopez", "Jake Miller", "Tom Berg"} <= set(found_in(sent, NAMES))
        assert {"sarah.chen@lincoln.example.org", "20231234", "4 March 2021"} <= set(
            found_in(sent, PATTERNS))
    # the checklist's notes and the scored texts show the real names either way
    built = "\n".join(pd.read_excel(tmp_path / "checklist.xlsx", sheet_name=None, dtype=str)[s]
                      .fillna("").to_string() for s in
                      pd.ExcelFile(tmp_path / "checklist.xlsx").sheet_names)
    assert "Check how Maria Lopez links her ideas" in built
    assert "as Maria Lopez does" in built or not on   # the model spoke of [STUDENT 1]
    assert "[STUDENT" not in built
    texts = sheet(tmp_path / "scores.xlsx", "Scores")
    assert "A good summary of d1 by Maria Lopez (sarah.chen@lincoln.example.org)." in texts
    assert "[STUDENT" not in texts and "[EMAIL" not in texts
    scores = pd.read_excel(tmp_path / "scores.xlsx", sheet_name="Scores", dtype=str)
    assert list(scores.status) == ["ok"] * 6 and scores.score.notna().all()
    if on:
        proof = sheet(tmp_path / "scores.xlsx", "De-identification")
        assert found_in(proof, NAMES) == [] and found_in(proof, PATTERNS) == []
        assert "Model calls sent with placeholders" in proof
