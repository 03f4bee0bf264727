"""Renaming a dimension in a project (core.interacteval.session.rename_dimension)."""

from __future__ import annotations

from core.interacteval.model import Dimension
from core.interacteval.session import (
    STAGE_KIND,
    WizardState,
    get_stage,
    load_state,
    put_stage,
    rename_dimension,
)
from core.project import Project


def test_work_moves_and_leftovers_of_a_deleted_dimension_give_way(tmp_path):
    with Project.create(tmp_path / "r.evaldesk") as project:
        state = WizardState(dimensions=[Dimension(name="Clarity"), Dimension(name="Accuracy")],
                            current="Clarity", checklist_inputs={"Clarity": "h1"})
        put_stage(project, "Clarity", "components", ["Plain words"], input_hash="a")
        # a dimension "Readability" deleted earlier left its clusters behind
        project.put_artefact(STAGE_KIND, "Readability/key_questions", {"input": "c", "value": []})

        rename_dimension(project, state, "Clarity", "Readability", "ana")

        assert get_stage(project, "Readability", "components").value == ["Plain words"]
        assert get_stage(project, "Clarity", "components") is None
        assert get_stage(project, "Readability", "key_questions") is None  # the leftover went
        gone = project.list_edits((STAGE_KIND, "Readability/key_questions"))
        assert gone and gone[-1].new is None and gone[-1].who == "ana"
        saved = load_state(project)
        assert [d.name for d in saved.dimensions] == ["Readability", "Accuracy"]
        assert saved.current == "Readability" and saved.checklist_inputs == {"Readability": "h1"}
