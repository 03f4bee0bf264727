"""Attack suite, language-model faults: ``evaldesk checklist score --project`` against a hostile
OpenAI-compatible server on 127.0.0.1 (``_faults.HostileServer``). In every case text C meets the
fault and texts A, B, D get good answers. The run finishes (exit code 3, results written) with C
marked failed or incomplete and the reason in its note, and the others scored; retries are capped
and the message says how many tries were made; nothing is cached from the failure; the re-run
with the fault gone asks only for C and scores it.
"""

from __future__ import annotations

import asyncio

import pytest

from core.cli import main
from core.llm import _gateway
from tests.attack._faults import (
    calls_line,
    hostile_server,
    notes,
    save_profile,
    statuses,
    write_scoring_inputs,
)

PROFILE = "Attack server"


@pytest.fixture(autouse=True)
def waits(monkeypatch) -> list[float]:
    """The gateway's retry waits, recorded instead of slept (their number and length are what
    is checked; the suite stays fast)."""
    recorded: list[float] = []

    async def fake_sleep(seconds: float, cancel=None) -> None:
        recorded.append(seconds)
        await asyncio.sleep(0)

    monkeypatch.setattr(_gateway, "_sleep", fake_sleep)
    return recorded


def score(folder, project, results):
    checklist, items = write_scoring_inputs(folder)
    return main(["checklist", "score", "--checklist", str(checklist), "--items", str(items),
                 "--text-col", "text", "--id-col", "id", "--profile", PROFILE,
                 "--project", str(project), "-o", str(results)])


class Attack:
    """What one attacked run left: stderr, C's note, requests per text, the server."""

    def __init__(self, err, note, hits, server):
        self.err, self.note, self.hits, self.server = err, note, hits, server


def attack(tmp_path, capsys, fault, *, expect="failed", retries=2, **profile) -> Attack:
    """Run with the fault, then again with it gone (same project)."""
    with hostile_server(fault) as server:
        save_profile(PROFILE, server.base, max_retries=retries, **profile)
        project, results = tmp_path / "p.evaldesk", tmp_path / "results.xlsx"
        code = score(tmp_path, project, results)
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert code == 3, err
        got = statuses(results)
        assert got["C"] == expect, (got, notes(results))
        assert {got[t] for t in "ABD"} == {"ok"}
        assert "1 text(s) have no score" in err
        note = notes(results)["C"]
        assert note.strip(), "a failed text says why"
        hits = dict(server.hits)
        assert hits["A"] == hits["B"] == hits["D"] == 1
        server.fixed()
        rerun = tmp_path / "rerun.xlsx"
        code = score(tmp_path, project, rerun)
        err2 = capsys.readouterr().err
        assert code == 0, err2
        assert dict(server.hits) == {"C": 1}, server.hits  # nothing asked again but C
        assert set(statuses(rerun).values()) == {"ok"}
        assert calls_line(err2)[0] == 1  # A, B, D kept in the project from the first run
        return Attack(err, note, hits, server)


# ------------------------------------------------------------------------- malformed answers
@pytest.mark.timeout(60)
def test_invalid_json_is_asked_again_once_then_marked_failed(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "invalid_json")
    assert run.hits["C"] == 2 and not waits  # one re-ask, no retry of a well-delivered answer
    assert "not valid JSON" in run.note and "It began" in run.note


@pytest.mark.timeout(60)
def test_prose_instead_of_json(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "prose")
    assert run.hits["C"] == 2
    assert "did not have the expected form" in run.note


@pytest.mark.timeout(60)
def test_json_off_the_schema(tmp_path, capsys):
    run = attack(tmp_path, capsys, "off_schema")
    assert run.hits["C"] == 2
    assert "could not be used" in run.note or "expected form" in run.note


@pytest.mark.timeout(60)
def test_json_of_the_wrong_type(tmp_path, capsys):
    run = attack(tmp_path, capsys, "wrong_types")
    assert run.hits["C"] == 2
    assert "expected form" in run.note


@pytest.mark.timeout(60)
def test_answers_to_questions_the_checklist_does_not_have(tmp_path, capsys):
    run = attack(tmp_path, capsys, "unknown_labels")
    assert run.hits["C"] == 2
    assert "q7" in run.note or "question" in run.note


@pytest.mark.timeout(60)
def test_a_question_left_unanswered_leaves_the_text_incomplete_not_no(tmp_path, capsys):
    run = attack(tmp_path, capsys, "half_answered", expect="incomplete")
    # the unanswered questions asked again in one call (whose unusable answer is re-asked once)
    assert run.hits["C"] == 3
    assert "maybe" in run.note or "unanswered" in run.note.lower()


@pytest.mark.timeout(60)
def test_an_answer_cut_off_at_the_maximum_length_says_so(tmp_path, capsys):
    run = attack(tmp_path, capsys, "cut_off_length")
    assert run.hits["C"] == 2
    assert "cut off" in run.note and "maximum tokens" in run.note


@pytest.mark.timeout(60)
def test_a_reply_that_copies_the_prompts_description_of_the_answer(tmp_path, capsys):
    run = attack(tmp_path, capsys, "copies_prompt")
    assert run.hits["C"] == 2
    assert "repeated the instructions" in run.note  # refused, never read as a score


@pytest.mark.timeout(60)
def test_a_reply_that_echoes_the_whole_prompt(tmp_path, capsys):
    run = attack(tmp_path, capsys, "echo_prompt")
    assert run.hits["C"] == 2


# ------------------------------------------------------------------------------ empty answers
@pytest.mark.timeout(60)
def test_empty_content(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "empty")
    assert run.hits["C"] == 2
    assert "empty" in run.note


@pytest.mark.timeout(60)
def test_null_content(tmp_path, capsys):
    run = attack(tmp_path, capsys, "null_content")
    assert run.hits["C"] == 2
    assert "empty" in run.note


@pytest.mark.timeout(60)
def test_a_completion_without_choices(tmp_path, capsys):
    run = attack(tmp_path, capsys, "no_choices")
    assert "Traceback" not in run.note
    assert run.hits["C"] <= 3


@pytest.mark.timeout(60)
def test_an_html_page_with_status_200(tmp_path, capsys):
    run = attack(tmp_path, capsys, "html_200")
    assert run.hits["C"] <= 3


# -------------------------------------------------------------------------- errors and limits
@pytest.mark.timeout(60)
def test_429_with_retry_after_is_waited_for_then_capped(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "429_retry_after", retries=2)
    assert run.hits["C"] == 3  # the first try and two retries
    assert len(waits) == 2 and all(2.0 <= w < 2.5 for w in waits)  # Retry-After: 2 honoured
    assert "tried 3 times" in run.note


@pytest.mark.timeout(60)
def test_429_asking_to_wait_an_hour_is_not_waited_for(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "429_long_retry_after")
    assert run.hits["C"] == 1 and not waits
    assert "3600 seconds" in run.note and "later" in run.note


@pytest.mark.timeout(60)
def test_429_without_retry_after_backs_off_then_capped(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "429_bare", retries=3)
    assert run.hits["C"] == 4 and len(waits) == 3
    assert waits[0] < waits[2]  # exponential backoff
    assert "tried 4 times" in run.note


@pytest.mark.timeout(60)
def test_500_forever_is_retried_a_capped_number_of_times(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "500", retries=2)
    assert run.hits["C"] == 3 and len(waits) == 2
    assert "tried 3 times" in run.note


@pytest.mark.timeout(60)
def test_500_with_no_retries_in_the_profile(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "500", retries=0)
    assert run.hits["C"] == 1 and not waits


@pytest.mark.timeout(60)
def test_503_html_page(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "503_html", retries=1)
    assert run.hits["C"] == 2
    assert "tried 2 times" in run.note


@pytest.mark.timeout(60)
def test_a_hang_past_the_timeout(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "hang", retries=1, timeout_s=1)
    assert run.hits["C"] == 2
    assert "tried 2 times" in run.note


@pytest.mark.timeout(60)
def test_connection_closed_before_any_answer(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "cut_before_headers", retries=2)
    assert run.hits["C"] == 3
    assert "tried 3 times" in run.note


@pytest.mark.timeout(60)
def test_connection_closed_in_the_middle_of_the_body(tmp_path, capsys, waits):
    run = attack(tmp_path, capsys, "cut_mid_body", retries=2)
    assert run.hits["C"] == 3
    assert "tried 3 times" in run.note


@pytest.mark.timeout(90)
def test_a_very_slow_stream_is_cut_by_the_time_limit(tmp_path, capsys, waits):
    # a byte each half second never trips the read timeout; the gateway's total bound stops it
    run = attack(tmp_path, capsys, "slow_drip", retries=0, timeout_s=1)
    assert run.hits["C"] == 1
    assert "did not answer in time" in run.note


@pytest.mark.timeout(60)
def test_a_2_mb_reply_of_prose(tmp_path, capsys):
    run = attack(tmp_path, capsys, "huge_junk")
    assert run.hits["C"] == 2
    assert len(run.note) < 2000  # the message quotes the start, not 2 MB


@pytest.mark.timeout(60)
def test_a_2_mb_json_reply(tmp_path, capsys):
    run = attack(tmp_path, capsys, "huge_json")
    assert len(run.note) < 2000
