"""Typed artefacts: versions, migrations, and unreadable payloads never silently replaced."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from core.project import Project
from core.project.payloads import (
    UNREADABLE_SUFFIX,
    VERSION_FIELD,
    PayloadType,
    PayloadUnreadable,
    get_payload,
    load_or_recover,
    put_payload,
)


class ChoicesV2(BaseModel):
    file: str = ""
    rounds: int = 3
    rule: str = "worst"


def _add_rule(data: dict) -> dict:
    return {**data, "rule": "missing"}  # what version 1 did, said explicitly


CHOICES = PayloadType("test.choices", ChoicesV2, version=2, migrations={1: _add_rule},
                      label="the test choices")


@pytest.fixture
def project(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as p:
        yield p


def test_round_trip_stores_the_version_and_skips_identical_writes(project):
    put_payload(project, CHOICES, "current", ChoicesV2(file="a.xlsx"))
    stored = project.get_artefact("test.choices", "current")
    assert stored.payload[VERSION_FIELD] == 2
    assert get_payload(project, CHOICES, "current") == ChoicesV2(file="a.xlsx")
    assert put_payload(project, CHOICES, "current", ChoicesV2(file="a.xlsx")) is None
    assert get_payload(project, CHOICES, "other") is None


def test_an_older_payload_is_migrated_and_one_without_a_version_counts_as_version_1(project):
    project.put_artefact("test.choices", "old", {"file": "b.xlsx", "rounds": 5})
    assert get_payload(project, CHOICES, "old") == ChoicesV2(file="b.xlsx", rounds=5,
                                                            rule="missing")


def test_a_newer_or_invalid_payload_raises_and_is_left_alone(project):
    project.put_artefact("test.choices", "new", {"file": "c", VERSION_FIELD: 3})
    with pytest.raises(PayloadUnreadable) as caught:
        get_payload(project, CHOICES, "new")
    assert caught.value.newer and "newer EvalDesk" in str(caught.value)
    project.put_artefact("test.choices", "bad", {"rounds": "many", VERSION_FIELD: 2})
    with pytest.raises(PayloadUnreadable, match="The test choices could not be read.*rounds"):
        get_payload(project, CHOICES, "bad")
    assert project.get_artefact("test.choices", "bad").payload["rounds"] == "many"


def test_load_or_recover_keeps_the_original_aside_and_says_so(project):
    project.put_artefact("test.choices", "current", {"rounds": "many", VERSION_FIELD: 2},
                         origin="human")
    value, message = load_or_recover(project, CHOICES, "current", ChoicesV2)
    assert value == ChoicesV2()
    assert "The test choices could not be read" in message and "kept in the project" in message
    kept = project.list_artefacts("test.choices" + UNREADABLE_SUFFIX)
    assert len(kept) == 1 and kept[0].payload["rounds"] == "many"
    assert kept[0].key in message
    assert project.get_artefact("test.choices", "current") is None
    # the step goes on: new choices can be saved, the kept copy stays
    put_payload(project, CHOICES, "current", value)
    assert len(project.list_artefacts("test.choices" + UNREADABLE_SUFFIX)) == 1
    # and all is quiet the next time
    assert load_or_recover(project, CHOICES, "current", ChoicesV2) == (ChoicesV2(), "")


def test_a_version_without_its_migrations_is_refused():
    with pytest.raises(ValueError, match="missing \\[2\\]"):
        PayloadType("x", ChoicesV2, version=3, migrations={1: _add_rule})
