"""Renaming a dimension in a project (core.interacteval.session.choices.rename_dimension)."""

from __future__ import annotations

from core.interacteval.model import Dimension
from core.interacteval.session.choices import (
    STAGE_KIND,
    InteractEvalChoices,
    open_choices,
    rename_dimension,
)
from core.interacteval.session.stages import get_stage, put_stage
from core.project import Project


def test_work_moves_and_leftovers_of_a_deleted_dimension_give_way(tmp_path):
    with Project.create(tmp_path / "r.evaldesk") as project:
        state = InteractEvalChoices(dimensions=[Dimension(name="Clarity"),
                                                Dimension(name="Accuracy")],
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
        saved, _problem = open_choices(project)
        assert [d.name for d in saved.dimensions] == ["Readability", "Accuracy"]
        assert saved.current == "Readability" and saved.checklist_inputs == {"Readability": "h1"}
