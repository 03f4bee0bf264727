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
        state = st.MajEvalChoices(task="Judge answers about generative AI.")
        doc = st.documents.add_document(project, state, path)
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

        st.documents.edit_page(project, doc.name, shown.number, shown.text + " (checked)", "Ann")
        assert st.documents.corrected_pages(project) == [f"{doc.name} {unit} {shown.number} by Ann"]


CHAN = DOCS / "Chan2023_AI_policy_education_framework_IJETHE.pdf"
#: A row of the framework's table on page 15 whose words also stand in the table of page 13
#: ("5. Attributing AI technologies Promote academic integrity ...").
CELL = "(5) Attributing AI technologies"


@pytest.mark.skipif(not CHAN.exists(), reason="the shared persona documents are not here")
async def test_a_table_cell_is_placed_on_the_page_the_model_read_it_from(scripted):
    """Issue 28, point 12: a table cell on page 5 was attributed to page 2 (where the same words
    stand) and a large block of page 2 was highlighted. The quote is placed on the pages of the
    part the model was given, and only the quote (or its short sentence) is highlighted."""
    from core.documents import load_document
    from core.majeval.perspective_extraction import extract_perspectives

    doc = load_document(CHAN, max_pages=None)
    assert find_evidence(doc, CELL)[0] == 13  # the words stand earlier too
    assert find_evidence(doc, CELL, pages=[14, 15, 16]) == (15, 1.0)

    def reply(messages):
        text = messages[-1]["content"]
        if CELL not in text:
            return {"stakeholders": []}
        return {"stakeholders": [{"name": "University teachers", "characteristics": "",
                                  "perspectives": [{"perspective": "AI use must be credited.",
                                                    "evidence": CELL}]}]}

    _llm, gateway = scripted(reply, context_window=2500, max_tokens=200)
    found = await extract_perspectives(doc, "Judge AI policy answers.", gateway,
                                       context_window=2500, answer_tokens=200)
    (perspective,) = found.perspectives
    assert perspective.page == 15 and 15 in perspective.chunk_pages

    span = st.documents.evidence_span(doc.page(15).text, CELL)
    assert doc.page(15).text[span[0]:span[1]] == CELL
    on_13 = st.documents.evidence_span(doc.page(13).text, CELL)  # a person looks at page 13 anyway
    shown = doc.page(13).text[on_13[0]:on_13[1]]
    assert shown == "5. Attributing AI technologies"  # not the 151 characters of its row
