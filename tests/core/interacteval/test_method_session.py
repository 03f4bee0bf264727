"""``InteractEvalSession``: the one shape of a method's session (``core.method.MethodSession``)
that the wizard and ``evaldesk checklist`` both call. Its verbs have the protocol's parameters;
its package names every name the desktop and the command line use; choices saved before they
were called choices still open; a command's choices never replace the project's own; a run
reports the calls of every repeat."""

from __future__ import annotations

import ast
import asyncio
import inspect
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook

import core.interacteval.session as session_package
from core.interacteval import Checklist, ChecklistItem, Dimension
from core.interacteval.session import CHOICES_KIND, InteractEvalChoices, InteractEvalSession
from core.interacteval.session.choices import open_choices
from core.llm import ScriptedLLM
from core.method import VERBS, MethodSession
from core.project import Project
from core.settings import ModelProfile, Settings

ROOT = Path(__file__).resolve().parents[3]
MODEL = "scripted/ie-method-session"


def _parameters(function):
    return [(p.name, p.kind, p.default is inspect.Parameter.empty)
            for p in inspect.signature(function).parameters.values()]


def test_the_session_has_every_verb_of_the_protocol_with_its_parameters(tmp_path):
    with Project.create(tmp_path / "p.evaldesk", method="interacteval") as project:
        opened = InteractEvalSession.open(project, settings=Settings())
        assert isinstance(opened, MethodSession)  # runtime_checkable: every name is there
    for verb in VERBS:
        theirs = inspect.getattr_static(MethodSession, verb)
        mine = inspect.getattr_static(InteractEvalSession, verb)
        if isinstance(theirs, property):
            assert isinstance(mine, property), verb
            continue
        if isinstance(theirs, classmethod):
            assert isinstance(mine, classmethod), verb
            theirs, mine = theirs.__func__, mine.__func__
        assert inspect.iscoroutinefunction(mine) == inspect.iscoroutinefunction(theirs), verb
        wanted = _parameters(theirs)
        have = _parameters(mine)
        # the protocol's parameters first, by name and kind (a default where the protocol
        # has none is fine, never the other way); more only as keywords with a default
        assert [(n, k) for n, k, _r in have[:len(wanted)]] == \
            [(n, k) for n, k, _r in wanted], verb
        assert all(theirs_required or not mine_required for (_n, _k, mine_required),
                   (_m, _j, theirs_required) in zip(have, wanted)), verb
        for name, kind, required in have[len(wanted):]:
            assert kind is inspect.Parameter.KEYWORD_ONLY and not required, (verb, name)
    assert InteractEvalSession.method == "interacteval"


def _names_used_from_outside() -> set[str]:
    """Every name the desktop and the command line take from ``core.interacteval.session``
    (imported from it, or read as an attribute of it)."""
    used: set[str] = set()
    files = [*ROOT.joinpath("desktop").rglob("*.py"), *ROOT.joinpath("core", "cli").rglob("*.py")]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "core.interacteval.session":
                used |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module == "core.interacteval":
                aliases |= {a.asname or a.name for a in node.names if a.name == "session"}
            elif isinstance(node, ast.Import):
                aliases |= {a.asname for a in node.names
                            if a.name == "core.interacteval.session" and a.asname}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases:
                used.add(node.attr)
    return used


def test_every_name_the_desktop_and_the_command_line_use_is_in_all():
    used = _names_used_from_outside()
    assert {"InteractEvalSession", "InteractEvalChoices"} <= used
    assert used - set(session_package.__all__) == set()
    assert all(hasattr(session_package, name) for name in session_package.__all__)


def test_choices_saved_as_the_wizards_state_still_open_and_are_saved_the_same_way(tmp_path):
    old = {"page": "score", "dimensions": [{"name": "Clarity", "definition": "Plain."}],
           "current": "Clarity", "assessors": ["A"], "repeats": 2}
    with Project.create(tmp_path / "old.evaldesk", method="interacteval") as project:
        # as EvalDesk stored "the wizard's state": kind interacteval.wizard, key "state"
        # (written before payloads carried a version: version 1)
        project.put_artefact("interacteval.wizard", "state", old, origin="human")
        session = InteractEvalSession.open(project, settings=Settings())
        assert session.problem == ""
        assert session.choices.page == "score" and session.choices.repeats == 2
        assert [d.name for d in session.choices.dimensions] == ["Clarity"]
        session.save_choices(session.choices.model_copy(update={"scorer": "B"}))
        (kept,) = project.list_artefacts(CHOICES_KIND)
        assert (kept.kind, kept.key) == ("interacteval.wizard", "state")
        assert kept.payload["_payload_version"] == 1 and kept.payload["scorer"] == "B"
        assert open_choices(project)[0].scorer == "B"


def _files(tmp_path):
    pd.DataFrame({"text": ["A clear answer.", "Vague.", "Another clear one."],
                  "Clarity": [5, 1, 4]}).to_excel(tmp_path / "texts.xlsx", index=False)
    return tmp_path / "texts.xlsx"


def _checklist():
    return Checklist(dimension="Clarity", definition="Plain.",
                     items=[ChecklistItem(question="Is it clear?"),
                            ChecklistItem(question="Is it short?")])


@pytest.fixture
def scripted():
    def reply(messages):
        clear = "Vague." not in "\n".join(m["content"] for m in messages)
        return {"q1": "yes" if clear else "no", "q2": "yes"}

    llm = ScriptedLLM(reply, name="ie-method-session")
    yield llm
    llm.close()


def _settings():
    settings = Settings()
    settings.upsert_profile(ModelProfile(name="Judge", model=MODEL))
    return settings


def test_a_command_session_keeps_its_run_but_never_the_projects_choices(tmp_path, scripted):
    texts = _files(tmp_path)
    with Project.create(tmp_path / "p.evaldesk", method="interacteval") as project:
        wizard = InteractEvalSession.open(project, settings=_settings())
        wizard.save_choices(InteractEvalChoices(dimensions=[Dimension(name="Other")],
                                                current="Other", page="build"))
        command = InteractEvalSession.for_command(
            project, InteractEvalChoices(dimensions=[Dimension(name="Clarity")],
                                         scorer="Judge", repeats=2),
            settings=_settings(), checklists=[_checklist()])
        command.store_input("texts", texts)
        path, _note = command.locate_texts()
        opened = command.read_texts(path)
        command.use_texts(opened.read.items, opened.setup)
        run = asyncio.run(command.run())
        assert [s.status for s in run.scores] == ["ok"] * 3
        assert [s.score for s in run.scores] == [5.0, 3.0, 5.0]
        # the run's calls, both repeats together, live on the session
        assert command.usage is not None and command.usage.calls == 6 == scripted.calls
        out = command.export(tmp_path / "r.xlsx", who="Ann")
        assert "Stability" in load_workbook(out).sheetnames
        assert len(command.repeats_of(run)) == 2
        # the wizard's own choices are as the wizard left them
        stored, problem = open_choices(project)
        assert problem == "" and stored.page == "build" and stored.current == "Other"
        assert stored.run_id is None and stored.texts.file_name == ""
        # the run is in the project: the same choices score again with no call
        again = asyncio.run(command.run())
        assert scripted.calls == 6 and again.run_id == run.run_id
        assert command.usage is not None and command.usage.calls == 0


def test_plain_messages_when_a_run_cannot_start_or_an_input_is_unknown(tmp_path):
    with Project.create(tmp_path / "p.evaldesk", method="interacteval") as project:
        session = InteractEvalSession.open(project, settings=_settings())
        with pytest.raises(ValueError, match="There is no checklist yet"):
            session.estimate()
        session.save_choices(InteractEvalChoices(dimensions=[Dimension(name="Clarity")]))
        with pytest.raises(ValueError, match="only texts, checklists"):
            session.store_input("notes", tmp_path / "x.txt")
        with pytest.raises(ValueError, match="There are no results to export"):
            session.export(tmp_path / "r.xlsx", who="Ann")
