"""The workbooks use the page numbers the Documents page shows (issue 13, point 15): 1-based
page numbers of a PDF, section numbers of a .md file, for a persona's evidence and for the
corrections a person made. Real CC-BY documents from /work/shared/data/persona-source-docs
(SOURCE.md), read in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.documents import find_evidence, sentences_of
from core.majeval import session as st
from core.majeval.model import Persona
from core.majeval.personas_io import read_personas, write_personas

DOCS = Path("/work/shared/data/persona-source-docs")
PDF = DOCS / "ChanHu2023_students_voices_generative_AI_IJETHE.pdf"
MD = DOCS / "Schneider2025_patient_perspectives_AI-CDSS_DigitalHealth.md"

pytestmark = pytest.mark.skipif(not PDF.exists() or not MD.exists(),
                                reason="the shared persona documents are not on this machine")


@pytest.mark.parametrize(("path", "unit"), [(PDF, "page"), (MD, "section")],
                         ids=["pdf", "markdown"])
def test_evidence_and_corrections_carry_the_number_the_screen_shows(tmp_path, path, unit):
    from core.project import Project

    with Project.create(tmp_path / "p.evaldesk") as project:
        state = st.WizardState(task="Judge answers about generative AI.")
        doc = st.add_document(project, state, path)
        assert doc.unit == unit
        shown = doc.pages[4]  # the Documents page lists it as f"{Unit} {number}"
        assert shown.number == 5
        quote = sentences_of(shown.text)[2]
        assert find_evidence(doc, quote)[0] == shown.number

        persona = Persona(id="kim", group="Students", name="Kim Lee", perspective="Wants clear rules.",
                          evidence=quote, document=doc.name, page=shown.number)
        workbook = tmp_path / "personas.xlsx"
        write_personas(workbook, [persona])
        back = read_personas(workbook)
        assert back.personas[0].page == shown.number
        import pandas as pd

        sheet = pd.read_excel(workbook, sheet_name="Personas")
        assert sheet["Page"].tolist() == [shown.number]
        readme = pd.read_excel(workbook, sheet_name="Read me", header=None).to_string()
        assert "section of a .txt or .md file" in readme  # the Page column says what it counts

        st.edit_page(project, doc.name, shown.number, shown.text + " (checked)", "Ann")
        assert st.corrected_pages(project) == [f"{doc.name} {unit} {shown.number} by Ann"]
