"""What the built-in demo model writes must not pass for real work (issue 28, point 7). Seen
with it on a glaucoma article and a focus-group study: 3 "stakeholders" ("Glaucoma", "A",
"patient") for papers naming at least 8 kinds of people, and a persona "John" whose "Who they
are" was "1" and whose perspective was "open". Such fields are refused like copies of our
instructions (asked again once, then the part fails with the reason), the step says when it
found too little to go on, and every result the demo model made says so."""

from __future__ import annotations

import pytest

from core.documents import Document, Page
from core.majeval import session as st
from core.majeval.persona_construction import usable_personas
from core.majeval.perspective_extraction import document_title, grounded_in
from core.majeval.pipeline import PERSONA_ARTEFACT, too_little
from core.prompts import says_nothing

from .majeval_support import kind

STUDY = Document(path="glaucoma.pdf", name="glaucoma-patient-education.pdf", kind="pdf", pages=[
    Page(number=1, text=(
        "Glaucoma: what patients need to know\n\nPatients with glaucoma told us that drops "
        "are hard to use. Nurses explain the drops at every visit. Ophthalmologists decide the "
        "treatment. Pharmacists check the dose. Caregivers help older patients at home. "
        "Family members remind patients of their appointments. Optometrists find the disease "
        "early. Nurses and pharmacists want short leaflets. Caregivers and optometrists "
        "asked for large print. Ophthalmologists and family members want plain words.")),
])


@pytest.mark.parametrize("text, why", [
    ("A", "single letter"), ("1", "no words"), ("Glaucoma", "title"), ("  7.  ", "no words")])
def test_a_stakeholder_name_that_names_nobody_is_refused(text, why):
    check = grounded_in(STUDY.pages[0].text, "glaucoma.pdf, page 1", document_title(STUDY))
    from core.majeval.perspective_extraction import StakeholderList

    reply = StakeholderList.model_validate({"stakeholders": [{
        "name": text, "characteristics": "", "perspectives": [{
            "perspective": "Drops are hard to use.",
            "evidence": "Patients with glaucoma told us that drops are hard to use."}]}]})
    rejection = check(reply)
    assert rejection is not None and why in rejection.problem
    assert "larger model" in rejection.advice


@pytest.mark.parametrize("name", ["Patients", "patient", "Nurses", "family members"])
def test_a_stakeholder_named_with_people_words_is_kept(name):
    check = grounded_in(STUDY.pages[0].text, "p1", document_title(STUDY))
    from core.majeval.perspective_extraction import StakeholderList

    reply = StakeholderList.model_validate({"stakeholders": [{
        "name": name, "characteristics": "", "perspectives": [{
            "perspective": "Drops are hard to use.",
            "evidence": "Patients with glaucoma told us that drops are hard to use."}]}]})
    assert check(reply) is None


def test_a_persona_whose_fields_say_nothing_is_refused():
    from core.majeval.persona_construction import PersonaReply

    check = usable_personas("Patients", 1)
    good = {"perspective_no": 1, "name": "John Mills",
            "demographics": "A retired bus driver, 71, with glaucoma for ten years.",
            "perspective": "Eye drops should come with instructions I can read.",
            "specialty": "Living with glaucoma.", "psychological_traits": "Patient.",
            "social_relationships": "Lives with his daughter."}
    assert check(PersonaReply.model_validate({"personas": [good]})) is None
    for field, value, words in (("demographics", "1", "Who they are"),
                                ("perspective", "open", "Their perspective"),
                                ("name", "A", "“Name”")):
        rejection = check(PersonaReply.model_validate({"personas": [{**good, field: value}]}))
        assert rejection is not None and words in rejection.problem, (field, rejection)


def test_says_nothing_in_plain_words():
    assert says_nothing("x") == "is a single letter"
    assert says_nothing("12.5") == "has no words, only a number or marks"
    assert says_nothing("open", words=3) == "is one word, not a description"
    assert says_nothing("Retired teacher of 67", words=2) == ""
    assert says_nothing("Glaucoma", title="Glaucoma care") == "is only a word of the document's title"
    assert says_nothing("Glaucoma specialists", title="Glaucoma care") == ""


def test_the_step_says_when_it_found_too_little_to_go_on():
    from core.majeval import Stakeholder

    found = [Stakeholder(name=n, document=STUDY.name) for n in ("patient", "Nurses")]
    warning = too_little(found, [STUDY])
    assert "found too little to go on" in warning and "larger model" in warning
    assert "at least 7 kinds of people" in warning and "“patient”" in warning
    many = [Stakeholder(name=n, document=STUDY.name)
            for n in ("patients", "nurses", "pharmacists", "caregivers")]
    assert too_little(many, [STUDY]) == ""


async def test_the_step_refuses_a_letter_for_a_stakeholder_and_says_it_found_too_little(
        scripted, tmp_path):
    """The whole step with a model answering as the built-in one did. A reply naming a
    stakeholder "A" is asked again, then that part fails with the reason; a reply with only
    "patient" and "Nurses" makes personas, and the step says it found too little to go on."""
    from core.majeval.model import StageError
    from core.majeval.pipeline import DOCUMENT_ARTEFACT
    from core.project import Project

    found = {"names": ["A", "patient"]}

    def demo(messages):
        what = kind(messages)
        if what == "extract":
            return {"stakeholders": [
                {"name": name, "characteristics": "", "perspectives": [
                    {"perspective": "Drops are hard to use.", "evidence":
                     "Patients with glaucoma told us that drops are hard to use."}]}
                for name in found["names"]]}
        if what == "group":
            return {"groups": [{"name": "Patients", "stakeholders": found["names"],
                                "perspectives": [[1]]}]}
        return {"personas": [{"perspective_no": 1, "name": "John Mills",
                              "demographics": "A retired driver with glaucoma.",
                              "perspective": "Drops need instructions I can read.",
                              "specialty": "Living with glaucoma."}]}

    with Project.create(tmp_path / "p.evaldesk") as project:
        project.put_artefact(DOCUMENT_ARTEFACT, STUDY.name, STUDY.to_dict(), origin="imported")
        state = st.MajEvalChoices(task="Judge glaucoma leaflets for patients.",
                               documents=[STUDY.name])
        llm, gateway = scripted(demo, cache=project, context_window=4000, max_tokens=300)
        with pytest.raises(StageError) as refused:
            await st.personas.create_personas_stored(project, state, gateway)
        assert "“A” is a single letter" in refused.value.message
        # asked again once, then that part failed; it is not read a third time (a failed part
        # was read again for the other parts' stakeholders: the built-in model's 59 s doubled)
        assert sum(1 for r in llm.requests if kind(r.messages) == "extract") == 2

        found["names"] = ["patient"]
        made = await st.personas.create_personas_stored(project, state, gateway)
        assert [p.name for p in made.personas] == ["John Mills"]
        assert "found too little to go on" in made.too_little
        assert st.choices.load_choices(project).too_little == made.too_little  # shown after reopening


async def test_the_demo_models_personas_and_results_say_so(tmp_path):
    """Personas and results made by the built-in model say so in the workbooks' Read me."""
    from openpyxl import load_workbook

    from core.majeval import Persona
    from core.project import Project

    with Project.create(tmp_path / "p.evaldesk") as project:
        state = st.MajEvalChoices(task="Judge leaflets.",
                               personas_model={"model": "evaldesk-local/gemma-3-270m",
                                               "model_settings": {"gguf_path": ""}})
        persona = Persona(id="a1", group="Patients", name="John Mills", demographics="x y",
                          perspective="a b c", specialty="s", psychological_traits="t",
                          social_relationships="r")
        project.put_artefact(PERSONA_ARTEFACT, persona.id, persona.model_dump(mode="json"),
                             origin="generated")
        target = st.personas.export_personas(project, state, tmp_path / "personas.xlsx")
        readme = {r[0].value: r[1].value for r in load_workbook(target)["Read me"].iter_rows()
                  if r[0].value}
        assert "built-in demo model" in readme["Demo model"]
        assert readme["Personas written by"].startswith("evaldesk-local/gemma-3-270m (on the "
                                                        "built-in model file")
