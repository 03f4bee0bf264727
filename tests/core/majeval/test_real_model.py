"""The bundled local model (Gemma 3 270M via llama.cpp, grammar-constrained JSON) end to end:
personas from a 2-page PDF made here, then 2 items debated by 2 small groups, and the workbook.
This checks the real path (constrained JSON, parsing, failures shown, files written) and the
honest outcome: the tiny model cannot do MAJ-Eval (it used to hand back our prompt's example,
which was shown as "Finished"), so most of its work must fail visibly, each failure with its
reason, and nothing it copied from our instructions may stand as a result."""

from __future__ import annotations

import pandas as pd
import pytest

from core import prompts
from core.majeval import (
    DebateSettings,
    Item,
    Persona,
    StageError,
    create_personas,
    evaluate,
    within_group_alpha,
    write_results,
)
from core.majeval.model import generic_name
from core.majeval.report import failure_warning
from tests.core.pdf_factory import wrap, write_pdf

pytestmark = pytest.mark.slow

PAGE_1 = ["Reading stories with young children", "",
          *wrap([("Parents told us that questions about a story should be short and fun. "
                 "One mother said that long questions make her child lose interest quickly.")])]
PAGE_2 = [*wrap([("Preschool teachers want questions that connect the story with the real "
                 "world. A teacher explained that children learn new words when a question "
                 "links the story to their own lives.")])]


def panel() -> list[Persona]:
    def p(group, name, perspective):
        return Persona(id=f"{group}/{name}", group=group, name=name, perspective=perspective,
                       demographics=f"{name} lives in a city.", specialty="Reading aloud.",
                       psychological_traits="Calm.", social_relationships="Knows teachers.")

    return [p("Parents", "Dana Ray", "Questions should be short and fun."),
            p("Parents", "Eli Stone", "Questions should not be too long."),
            p("Teachers", "Amy Lee", "Questions should link the story to real life."),
            p("Teachers", "Bo Chen", "Questions should teach new words.")]


async def test_bundled_model_finds_a_stakeholder_with_verbatim_evidence(tmp_path):
    """Held to the chunk's own sentences and asked for the people first, the bundled model finds
    at least one stakeholder of the study, each perspective backed by a sentence of the
    document word for word (what it writes in its own words may still be poor)."""
    from core.documents import load_document, sentences_of
    from core.llm import Gateway, MemoryCache
    from core.majeval import extract_perspectives
    from core.settings import bundled_profile

    document = load_document(write_pdf(tmp_path / "study.pdf", [PAGE_1, PAGE_2]))
    profile = bundled_profile().model_copy(update={"max_tokens": 600})
    found = await extract_perspectives(
        document, "Judge question-answer pairs for reading stories with children aged 3 to 6.",
        Gateway(profile, cache=MemoryCache()), context_window=profile.context_window or 8192,
        answer_tokens=profile.max_tokens)
    assert found.stakeholders, found.failures
    sentences = {s for page in document.pages for s in sentences_of(page.text)}
    for holder in found.stakeholders:
        assert holder.name.strip() and not generic_name(holder.name)
        for view in holder.perspectives:
            assert view.evidence in sentences
            assert view.page in (1, 2) and view.match == 1.0


async def test_bundled_model_end_to_end(tmp_path):
    from core.llm import Gateway, MemoryCache
    from core.settings import bundled_profile

    pdf = write_pdf(tmp_path / "study.pdf", [PAGE_1, PAGE_2])
    from core.documents import load_document

    document = load_document(pdf)
    assert [p.number for p in document.pages] == [1, 2]
    profile = bundled_profile().model_copy(update={"max_tokens": 200})
    gateway = Gateway(profile, cache=MemoryCache())
    task = "Judge question-answer pairs for reading stories with children aged 3 to 6."
    try:
        made = await create_personas([document], task, gateway)
    except StageError as exc:  # an honest outcome: the stage that failed, and the reason given
        assert exc.message.startswith(("No stakeholder perspectives", "Grouping the stakeholders",
                                       "No persona could be written"))
        assert "larger model" in exc.message
    else:  # whatever it made is grounded: every quote is on its page, no form words as names
        assert made.personas and all(p.group and p.name for p in made.personas)
        for p in made.personas:
            assert p.document == "study.pdf" and p.page in (1, 2)
            assert not generic_name(p.name)

    items = [Item(id="q1", content="Q: Why does the fox hide? A: Because it is cold.",
                  context="A fox hides in its burrow in winter."),
             Item(id="q2", content="Q: What colour is the sky? A: Blue.",
                  context="A girl looks at the sky.")]
    run = await evaluate(panel(), items, task, gateway, settings=DebateSettings(rounds=1),
                         model=profile)
    assert len(run.items) == 2 and len(run.groups) == 4
    # the honest outcome: most debates failed, and the results say so
    assert len(run.failed_units) > len(run.groups) // 2
    assert failure_warning(run).startswith("Most debates")
    wording = "\n".join(prompts.load("majeval", n).wording()
                        for n in ("agent", "phase1", "debate_shared", "debate_turn",
                                  "final_evaluation"))
    for g in run.groups:
        for a in g.agents:
            if a.status == "ok":
                assert a.final and all(1 <= v <= 5 for v in a.final.values())
                assert a.finalised_by in ("no more comments", "cap", "consensus", "no debate")
                assert not prompts.copied_text(a.final_rationale, wording)
            else:
                assert a.final is None and a.error  # failed, and says why
        if g.status == "failed":
            assert g.final_mean == {} and g.error
        else:
            assert all(1 <= v <= 5 for v in g.final_mean.values())
    path = tmp_path / "results.xlsx"
    write_results(path, run, alphas=within_group_alpha(run))
    sheets = pd.read_excel(path, sheet_name=None)
    assert len(sheets["Items"]) == 2
    failed = sheets["Items"][sheets["Items"].status == "failed"]
    assert failed["Overall quality"].isna().all() and failed.note.str.len().gt(0).all()
    assert sheets["Read me"].iloc[0, 0] == "WARNING"
    assert set(sheets["Transcripts"].group) == {"Parents", "Teachers"}
