"""The hook every model call passes (``core.llm.gateway_for``), over HTTP to a fake
OpenAI-compatible server on 127.0.0.1 that records what it is sent.

The server is on this computer, so these projects set "also for a model on this computer"
(``local_too``, as for a local proxy that passes texts on): what leaves the process is then
exactly what would leave the computer."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from pydantic import BaseModel

from core.deidentify import project as dp
from core.llm import LLMFailure, Rejection, gateway_for
from core.privacy import deidentification_sheets, deidentification_summary
from core.project import Project
from core.prompts import held_to
from core.settings import ModelProfile
from tests.core.deidentify.recording_server import recording_server

NOTE = ("Maria wrote a clear answer about foxes.\nHer mother (maria.lopez@example.org, "
        "555-201-3344) asked on 3 March 2021 whether Tom Berg helped. MRN 48291302.")
SECRETS = ("Maria", "Lopez", "Tom", "Berg", "maria.lopez@example.org", "555-201-3344",
           "3 March 2021", "48291302")


class Feedback(BaseModel):
    feedback: str
    evidence: str


def placeholders(text: str) -> list[str]:
    return re.findall(r"\[[A-Z]+ \d+\]", text)


def feedback_reply(messages):
    """A model that speaks of the people it was shown by their placeholders and quotes the
    first sentence of the text (as a model told to give evidence does)."""
    text = messages[-1]["content"]
    shown = placeholders(text)
    first = text.split("\n")[0]
    return {"feedback": f"{shown[0]} explains well; [STUDENT 41] is not in the text.",
            "evidence": first}


@pytest.fixture
def project(tmp_path):
    opened = Project.create(tmp_path / "p.evaldesk")
    dp.set_names(opened, "Ana Ruiz", students=["Maria Lopez", "Tom Berg"])
    dp.set_switch(opened, True, "Ana Ruiz", local_too=True)
    yield opened
    if not opened.closed:
        opened.close()


def profile_at(server) -> ModelProfile:
    return ModelProfile(name="fake", model="openai/fake-model", api_bases=[server.api_base],
                        max_retries=0)


def ask(gateway, **kw):
    return asyncio.run(gateway.complete_json(
        [{"role": "system", "content": "You give feedback."},
         {"role": "user", "content": NOTE}], Feedback, template_version="t1", **kw))


def test_nothing_identifying_is_sent_and_the_answer_shows_the_real_values(project):
    checked = []

    def check(value: Feedback):
        checked.append(value)
        return None if value.evidence in NOTE else Rejection("the evidence is not in the text")

    with recording_server(feedback_reply) as server:
        answer = ask(gateway_for(profile_at(server), project, None), check=check)
        sent = server.sent_text()
    for secret in SECRETS:
        assert secret not in sent, secret
    assert "[STUDENT 1] wrote a clear answer" in sent and "[EMAIL 1]" in sent
    # the real values back, the quote exactly as the text has it (the check read it so)
    assert answer.evidence == "Maria wrote a clear answer about foxes."
    assert checked and checked[0].evidence == answer.evidence
    # an invented placeholder is shown as such, never guessed
    assert answer.feedback == "Maria explains well; [STUDENT 41] is not in the text."
    # the log keeps the text as sent and says how it was de-identified (never a value)
    [(_run, note)] = project.llm_call_notes("deidentification")
    assert note == {"on": True, "counts": {"STUDENT": 2, "EMAIL": 1, "PHONE": 1, "DATE": 1,
                                           "ID": 1},
                    "values": 6, "invented": ["[STUDENT 41]"]}
    logged = json.dumps(_requests(project))
    for secret in SECRETS:
        assert secret not in logged, secret
    # the table holds the values, in the project, on this computer
    table = project.get_artefact(dp.KIND, dp.MAPPING_KEY).payload
    assert {e["value"] for e in table["entries"]} >= {"Maria Lopez", "maria.lopez@example.org"}


def test_a_rerun_is_answered_from_the_project_and_put_back_the_same(tmp_path, project):
    with recording_server(feedback_reply) as server:
        first = ask(gateway_for(profile_at(server), project, None))
        project.close()
        with Project.open(tmp_path / "p.evaldesk") as again:
            second = ask(gateway_for(profile_at(server), again, None))
        assert len(server.requests) == 1          # the same placeholders: the same request
    assert second == first


def test_with_the_switch_off_the_texts_go_as_written_and_the_log_says_so(project):
    dp.set_switch(project, False, "Ana Ruiz")
    with recording_server(feedback_reply) as server:
        with pytest.raises(LLMFailure):   # the fake model needs a placeholder to answer
            ask(gateway_for(profile_at(server), project, None))
        sent = server.sent_text()
    assert "Maria wrote a clear answer" in sent and "maria.lopez@example.org" in sent


def test_a_model_on_this_computer_gets_the_texts_as_written_unless_asked(project):
    dp.set_switch(project, True, "Ana Ruiz", local_too=False)

    def echo(messages):
        return {"feedback": "fine", "evidence": messages[-1]["content"].split("\n")[0]}

    with recording_server(echo) as server:
        answer = ask(gateway_for(profile_at(server), project, None))
        assert "Maria wrote a clear answer" in server.sent_text()
    assert answer.evidence == "Maria wrote a clear answer about foxes."
    [(_run, note)] = project.llm_call_notes("deidentification")
    assert note == {"on": False, "why": "this_computer"}
    assert deidentification_sheets(project) == []        # nothing left this computer


def test_the_schema_an_answer_is_held_to_is_de_identified_too(project):
    """A stage may hold the answer to a list of the document's own sentences (an enum in the
    JSON schema): those are texts sent too."""
    sentences = ["Maria wrote a clear answer about foxes.", "Tom Berg helped her."]

    def tighten(schema):
        schema["properties"]["evidence"]["enum"] = list(sentences)

    held = held_to(Feedback, tighten)

    def pick(messages):
        return {"feedback": "ok", "evidence": "[STUDENT 2] helped her."}

    with recording_server(pick) as server:
        answer = asyncio.run(gateway_for(profile_at(server), project, None).complete_json(
            NOTE, held, check=lambda v: None if v.evidence in sentences else "not a sentence"))
        body = server.requests[0]
    schema = json.dumps(body["response_format"])
    assert "[STUDENT 1] wrote a clear answer" in schema and "Tom" not in schema
    assert "Maria" not in json.dumps(body)
    assert answer.evidence == "Tom Berg helped her."


def test_text_answers_are_put_back_too(project):
    with recording_server(lambda m: "Dear " + placeholders(m[-1]["content"])[0] + ", well done."
                          ) as server:
        text = asyncio.run(gateway_for(profile_at(server), project, None).complete_text(
            "Write to Maria about her essay."))
        assert "Maria" not in server.sent_text()
    assert text == "Dear Maria, well done."


def test_a_table_that_cannot_be_read_stops_the_call_before_anything_is_sent(tmp_path, project):
    project.put_artefact(dp.KIND, dp.MAPPING_KEY, {"format": "something else"})
    project.close()
    with Project.open(tmp_path / "p.evaldesk") as damaged, \
            recording_server(feedback_reply) as server:
        with pytest.raises(LLMFailure) as failure:
            ask(gateway_for(profile_at(server), damaged, None))
        assert failure.value.kind == "deidentify" and "not sent" in failure.value.message
        assert server.requests == []


def test_the_export_sheet_lists_kinds_and_counts_never_values(project):
    with recording_server(feedback_reply) as server:
        ask(gateway_for(profile_at(server), project, 7))
    summary = deidentification_summary(project)
    assert summary.deidentified == 1 and summary.invented == 1
    [sheet] = deidentification_sheets(project)
    cells = sheet.frame.astype(str).to_string()
    for secret in SECRETS:
        assert secret not in cells
    rows = {r["What"]: r for r in sheet.frame.to_dict("records")}
    assert rows["Replaced: student names from your lists"]["Replacements in the texts sent"] == 2
    assert rows["Replaced: e-mail addresses"]["Different values"] == 1
    assert rows["Model calls sent with placeholders"]["Replacements in the texts sent"] == 1
    assert deidentification_sheets(project, run_ids=[8]) == []


def _requests(project) -> list:
    with project._reading() as conn:
        return [json.loads(r[0]) for r in conn.execute("SELECT request FROM llm_calls")]
