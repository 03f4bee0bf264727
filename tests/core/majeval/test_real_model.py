"""The bundled local model (Gemma 3 270M via llama.cpp, grammar-constrained JSON) end to end:
personas from a 2-page PDF made here, then 2 items debated by 2 small groups, and the workbook.
This checks the real path (constrained JSON, parsing, failures shown, files written), not the
tiny model's judgement."""

from __future__ import annotations

import pandas as pd
import pytest

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
    except StageError as exc:  # a tiny model may find nobody: said plainly
        assert exc.message
    else:
        assert made.personas and all(p.group and p.name for p in made.personas)
        for p in made.personas:
            assert p.document in ("", "study.pdf") and p.page in (None, 1, 2)

    items = [Item(id="q1", content="Q: Why does the fox hide? A: Because it is cold.",
                  context="A fox hides in its burrow in winter."),
             Item(id="q2", content="Q: What colour is the sky? A: Blue.",
                  context="A girl looks at the sky.")]
    run = await evaluate(panel(), items, task, gateway, settings=DebateSettings(rounds=1),
                         model=profile.model)
    assert len(run.items) == 2 and len(run.groups) == 4
    for g in run.groups:
        for a in g.agents:
            if a.status == "ok":
                assert a.final and all(1 <= v <= 5 for v in a.final.values())
                assert a.finalised_by in ("no more comments", "cap", "consensus")
            else:
                assert a.final is None and a.error  # failed, and says why
        if g.status != "failed":
            assert all(1 <= v <= 5 for v in g.final_mean.values())
    path = tmp_path / "results.xlsx"
    write_results(path, run, alphas=within_group_alpha(run))
    sheets = pd.read_excel(path, sheet_name=None)
    assert len(sheets["Items"]) == 2
    assert set(sheets["Transcripts"].group) == {"Parents", "Teachers"}
