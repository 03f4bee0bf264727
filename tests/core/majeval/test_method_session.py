"""MAJ-Eval's session has the one shape of every method (:class:`core.method.MethodSession`):
every verb, with the protocol's parameters; projects that older EvalDesks kept open with their
choices; the usage of a step is what its models used, every run of it together."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from core.majeval import Item
from core.majeval.session import MajEvalChoices, MajEvalSession
from core.method import VERBS, MethodSession
from tests.core.majeval.majeval_support import SYNTHESIS, evaluation, kind, persona, turn


def _parameters(function):
    return list(inspect.signature(function).parameters.values())


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_of_the_protocol_with_its_parameters(verb):
    """Each verb takes the protocol's parameters, in its order and of its kinds; the session
    may add parameters of its own only as keywords with a default (so a caller of the protocol
    never has to give them)."""
    wanted = getattr(MethodSession, verb)
    found = getattr(MajEvalSession, verb)
    assert isinstance(inspect.getattr_static(MajEvalSession, verb), type(
        inspect.getattr_static(MethodSession, verb))), verb  # property, classmethod, method
    if isinstance(wanted, property):
        return
    assert inspect.iscoroutinefunction(found) == inspect.iscoroutinefunction(wanted), verb
    theirs, ours = _parameters(wanted), _parameters(found)
    names = [p.name for p in ours]
    for p in theirs:
        assert p.name in names, f"{verb} has no parameter {p.name}"
        mine = ours[names.index(p.name)]
        assert mine.kind == p.kind, f"{verb}({p.name}) is {mine.kind}, not {p.kind}"
        assert (mine.default is inspect.Parameter.empty) == \
            (p.default is inspect.Parameter.empty), f"{verb}({p.name})"
    extra = [p for p in ours if p.name not in {q.name for q in theirs}]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is not
               inspect.Parameter.empty for p in extra), (verb, extra)


def test_an_open_session_is_a_method_session(tmp_path):
    from core.project import Project
    from core.settings import Settings

    with Project.create(tmp_path / "p.evaldesk", method="majeval") as project:
        session = MajEvalSession.open(project, settings=Settings())
        assert isinstance(session, MethodSession)
        assert session.method == "majeval" and session.project is project
        assert session.choices == MajEvalChoices() and session.problem == ""


def test_choices_kept_by_an_older_evaldesk_still_open(tmp_path):
    """The choices keep the kind, key and version the wizard always stored them under
    ("majeval.wizard", "state", version 1), so a project saved before the session had its
    name opens with every choice in it."""
    from core.project import Project
    from core.project.payloads import VERSION_FIELD
    from core.settings import Settings

    stored = {VERSION_FIELD: 1, "page": "run", "task": "Judge QA pairs for children.",
              "documents": ["study.md"], "profile": "Work model", "repeats": 2,
              "settings": {"rounds": 2, "no_debate": False, "simple_roles": True},
              "item_list": [{"id": "q1", "content": "Q: Why? A: Because.", "context": "",
                             "human": {"Overall quality": 4.0}}]}
    with Project.create(tmp_path / "old.evaldesk", method="majeval") as project:
        project.put_artefact("majeval.wizard", "state", stored, origin="human")
    with Project.open(tmp_path / "old.evaldesk") as project:
        session = MajEvalSession.open(project, settings=Settings())
        assert session.problem == ""
        choices = session.choices
        assert (choices.page, choices.task, choices.documents, choices.profile,
                choices.repeats) == ("run", "Judge QA pairs for children.", ["study.md"],
                                     "Work model", 2)
        assert choices.settings.rounds == 2 and choices.settings.simple_roles
        assert choices.item_list == [Item(id="q1", content="Q: Why? A: Because.",
                                          human={"Overall quality": 4.0})]
        session.save_choices(choices.model_copy(update={"task": "Judge QA pairs."}))
        kept = project.get_artefact("majeval.wizard", "state").payload
        assert kept[VERSION_FIELD] == 1 and kept["task"] == "Judge QA pairs."


def _debates(messages):
    what = kind(messages)
    if what == "aggregate":
        return SYNTHESIS
    if what == "turn":
        return turn("I agree with the others.", 4)
    return evaluation(4, "Fits the child.")


def test_the_usage_of_a_run_adds_up_every_repeat(tmp_path, scripted_llm):
    """A run with repeats talks to one model per repeat: the session's usage is all of them
    (the wizard shows it live, the command line beside the estimate)."""
    from core.llm import gateway_for
    from core.project import Project
    from core.settings import Settings

    llm = scripted_llm(_debates)
    profile = llm.profile(name="Scripted", max_retries=0)
    made = []

    def models(profile, project, run_id):
        made.append(gateway_for(profile, project, run_id))
        return made[-1]

    with Project.create(tmp_path / "p.evaldesk", method="majeval") as project:
        session = MajEvalSession.open(project, models=models, settings=Settings(
            profiles=[profile], default_profile="Scripted"))
        assert session.usage is None
        session.replace_personas([persona("Parents", "Dana Ray"), persona("Parents", "Eli Ray")],
                                 "test")
        session.save_choices(session.choices.model_copy(update={
            "task": "Judge QA pairs.", "repeats": 2,
            "item_list": [Item(id="q1", content="Q: Why? A: Because.")]}))
        asyncio.run(session.run())
        assert len(made) == 2  # repeat 0 and repeat 1
        usage = session.usage
        assert usage is not None and usage.calls == llm.calls > 0
        assert usage.calls == sum(g.usage.calls for g in made)
        assert session.load_results() is not None and len(session.load_repeats()) == 2
