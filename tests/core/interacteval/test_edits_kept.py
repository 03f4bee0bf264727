"""A step run again never replaces a person's edits silently (issue 28, point 6: "Run all
remaining steps" overwrote edited components with no warning and no undo). By default the
edited output is kept (the step is not run; later steps read it); asked to replace it, the
step runs and the edited version is kept aside, with who edited it and who replaced it, and
can be put back."""

from __future__ import annotations

from core.interacteval import Attribute, Dimension, SubQuestionGroup
from core.interacteval.session import building, stages
from core.interacteval.session import choices as ie_choices
from core.llm import Gateway, MemoryCache, ScriptedLLM
from core.project import Project
from tests.core.interacteval_support import BUILD_REPLIES

DIM = "Coherence"
NOTES = [Attribute(text="Sentences follow each other logically.", source="Anna",
                   source_kind="person"),
         Attribute(text="The text is organised.", source="Anna", source_kind="person"),
         Attribute(text="No abrupt jumps.", source="Anna", source_kind="person")]


def _state(project):
    state, _ = ie_choices.open_choices(project)
    state.dimensions = [Dimension(name=DIM, definition="How well the text hangs together.")]
    state.current = DIM
    state.notes = {DIM: list(NOTES)}
    ie_choices.save_choices(project, state)
    return state


def _new_note(state, text):
    state.notes[DIM].append(Attribute(text=text, source="Ben", source_kind="person"))


async def test_edited_components_are_kept_unless_replacing_is_asked_for(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as project, \
            ScriptedLLM(BUILD_REPLIES, name="edits-kept") as llm:
        gateway = Gateway(llm.profile(max_retries=0), cache=MemoryCache())
        state = _state(project)
        await building.run_build_steps(project, state, DIM, ["components"], gateway)
        assert stages.get_stage(project, DIM, "components").value == ["Logical flow",
                                                                       "Structure"]
        edited = ["Flow of ideas", "Structure"]
        stages.edit_stage(project, DIM, "components", edited, who="Anna")
        _new_note(state, "Paragraphs link up.")  # the step is out of date now
        assert stages.get_stage(project, DIM, "components").input != \
            stages.stage_input(project, state, DIM, "components", gateway.profile)
        assert stages.edited_steps(project, DIM, building.BUILD_KEYS) == [("components",
                                                                            "Anna")]

        calls = llm.calls
        await building.run_build_steps(project, state, DIM, ["components"], gateway)
        assert llm.calls == calls, "the edited components were made again"
        kept = stages.get_stage(project, DIM, "components")
        assert kept.value == edited and kept.edited and kept.edited_by == "unnamed person"
        # current: made from today's notes by this model (the hash counts the builder)
        assert kept.input == stages.stage_input(project, state, DIM, "components",
                                                gateway.profile)

        _new_note(state, "The ending ties back to the start.")
        await building.run_build_steps(project, state, DIM, ["components"], gateway,
                                      edits="replace", who="Ben")
        assert llm.calls == calls + 1
        now = stages.get_stage(project, DIM, "components")
        assert now.value == ["Logical flow", "Structure"] and not now.edited
        aside = stages.replaced_version(project, DIM, "components")
        assert aside["value"] == edited and aside["edited_by"] == "unnamed person"
        assert aside["replaced_by"] == "Ben" and aside["replaced_at"]

        assert stages.restore_replaced(project, DIM, "components", who="Ben") == edited
        back = stages.get_stage(project, DIM, "components")
        assert back.value == edited and back.edited and back.edited_by == "Ben"
        assert stages.replaced_version(project, DIM, "components") is None


async def test_a_checklist_edited_in_the_editor_is_not_made_again_silently(tmp_path):
    with Project.create(tmp_path / "p.evaldesk") as project, \
            ScriptedLLM(BUILD_REPLIES, name="edits-kept-2") as llm:
        gateway = Gateway(llm.profile(max_retries=0), cache=MemoryCache())
        state = _state(project)
        state.validate_questions = False  # the review without a model: no call either way
        groups = [SubQuestionGroup(component="Structure", key_question="Is it organised?",
                                   sub_questions=["Is there a clear beginning and end?",
                                                  "Are the paragraphs in order?"])]
        stages.put_stage(project, DIM, "sub_questions", groups, input_hash="x")
        made = await building.run_build_steps(project, state, DIM, ["checklist"], gateway)
        edited = made.model_copy(update={"items": made.items[:1]})
        stages.edit_checklist(project, edited, who="Anna")
        stages.edit_stage(project, DIM, "sub_questions", groups + [SubQuestionGroup(
            component="Flow", key_question="Does it flow?",
            sub_questions=["Do the sentences follow on?"])], who="Anna")
        assert stages.edited_steps(project, DIM, ["checklist"]) == [("checklist", "Anna")]

        await building.run_build_steps(project, state, DIM, ["checklist"], gateway)
        assert len(stages.load_checklist(project, DIM).items) == 1  # Anna's checklist

        await building.run_build_steps(project, state, DIM, ["checklist"], gateway,
                                      edits="replace", who="Ben")
        assert len(stages.load_checklist(project, DIM).items) == 3
        aside = stages.replaced_version(project, DIM, "checklist")
        assert len(aside["value"]["items"]) == 1 and aside["edited_by"] == "Anna"
        stages.restore_replaced(project, DIM, "checklist", who="Ben")
        assert len(stages.load_checklist(project, DIM).items) == 1
        assert llm.calls == 0
