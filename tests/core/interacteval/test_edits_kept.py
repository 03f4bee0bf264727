"""A step run again never replaces a person's edits silently (issue 28, point 6: "Run all
remaining steps" overwrote edited components with no warning and no undo). By default the
edited output is kept (the step is not run; later steps read it); asked to replace it, the
step runs and the edited version is kept aside, with who edited it and who replaced it, and
can be put back."""

from __future__ import annotations

from core.interacteval import Attribute, Dimension, SubQuestionGroup, session
from core.llm import Gateway, MemoryCache, ScriptedLLM
from core.project import Project
from tests.core.interacteval_support import BUILD_REPLIES

DIM = "Coherence"
NOTES = [Attribute(text="Sentences follow each other logically.", source="Anna",
                   source_kind="person"),
         Attribute(text="The text is organised.", source="Anna", source_kind="person"),
         Attribute(text="No abrupt jumps.", source="Anna", source_kind="person")]


def _state(project):
    state, _ = session.open_state(project)
    state.dimensions = [Dimension(name=DIM, definition="How well the text hangs together.")]
    state.current = DIM
    state.notes = {DIM: list(NOTES)}
    session.save_state(project, state)
    return state


def _new_note(state, text):
    state.notes[DIM].append(Attribute(text=text, source="Ben", source_kind="person"))


async def test_edited_components_are_kept_unless_replacing_is_asked_for(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as project, \
            ScriptedLLM(BUILD_REPLIES, name="edits-kept") as llm:
        gateway = Gateway(llm.profile(max_retries=0), cache=MemoryCache())
        state = _state(project)
        await session.run_build_steps(project, state, DIM, ["components"], gateway)
        assert session.get_stage(project, DIM, "components").value == ["Logical flow",
                                                                       "Structure"]
        edited = ["Flow of ideas", "Structure"]
        session.edit_stage(project, DIM, "components", edited, who="Anna")
        _new_note(state, "Paragraphs link up.")  # the step is out of date now
        assert session.get_stage(project, DIM, "components").input != \
            session.stage_input(project, state, DIM, "components")
        assert session.edited_steps(project, DIM, session.BUILD_KEYS) == [("components",
                                                                            "Anna")]

        calls = llm.calls
        await session.run_build_steps(project, state, DIM, ["components"], gateway)
        assert llm.calls == calls, "the edited components were made again"
        kept = session.get_stage(project, DIM, "components")
        assert kept.value == edited and kept.edited and kept.edited_by == "unnamed person"
        # current: made from today's notes by this model (the hash counts the builder)
        assert kept.input == session.stage_input(project, state, DIM, "components",
                                                 gateway.profile)

        _new_note(state, "The ending ties back to the start.")
        await session.run_build_steps(project, state, DIM, ["components"], gateway,
                                      edits="replace", who="Ben")
        assert llm.calls == calls + 1
        now = session.get_stage(project, DIM, "components")
        assert now.value == ["Logical flow", "Structure"] and not now.edited
        aside = session.replaced_version(project, DIM, "components")
        assert aside["value"] == edited and aside["edited_by"] == "unnamed person"
        assert aside["replaced_by"] == "Ben" and aside["replaced_at"]

        assert session.restore_replaced(project, DIM, "components", who="Ben") == edited
        back = session.get_stage(project, DIM, "components")
        assert back.value == edited and back.edited and back.edited_by == "Ben"
        assert session.replaced_version(project, DIM, "components") is None


async def test_a_checklist_edited_in_the_editor_is_not_made_again_silently(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as project, \
            ScriptedLLM(BUILD_REPLIES, name="edits-kept-2") as llm:
        gateway = Gateway(llm.profile(max_retries=0), cache=MemoryCache())
        state = _state(project)
        state.validate_questions = False  # the review without a model: no call either way
        groups = [SubQuestionGroup(component="Structure", key_question="Is it organised?",
                                   sub_questions=["Is there a clear beginning and end?",
                                                  "Are the paragraphs in order?"])]
        session.put_stage(project, DIM, "sub_questions", groups, input_hash="x")
        made = await session.run_build_steps(project, state, DIM, ["checklist"], gateway)
        edited = made.model_copy(update={"items": made.items[:1]})
        session.edit_checklist(project, edited, who="Anna")
        session.edit_stage(project, DIM, "sub_questions", groups + [SubQuestionGroup(
            component="Flow", key_question="Does it flow?",
            sub_questions=["Do the sentences follow on?"])], who="Anna")
        assert session.edited_steps(project, DIM, ["checklist"]) == [("checklist", "Anna")]

        await session.run_build_steps(project, state, DIM, ["checklist"], gateway)
        assert len(session.load_checklist(project, DIM).items) == 1  # Anna's checklist

        await session.run_build_steps(project, state, DIM, ["checklist"], gateway,
                                      edits="replace", who="Ben")
        assert len(session.load_checklist(project, DIM).items) == 3
        aside = session.replaced_version(project, DIM, "checklist")
        assert len(aside["value"]["items"]) == 1 and aside["edited_by"] == "Anna"
        session.restore_replaced(project, DIM, "checklist", who="Ben")
        assert len(session.load_checklist(project, DIM).items) == 1
        assert llm.calls == 0
