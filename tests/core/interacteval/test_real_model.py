"""The bundled local model (Gemma 3 270M via llama.cpp) end to end on real data: a checklist
built from the authors' coherence attributes (a few per source, to stay small), then 8 SummEval
summaries scored with it. This checks that the real path works (constrained JSON, parsing,
failures shown, workbook written), not the tiny model's judgement."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.interacteval import (
    Attribute,
    Dimension,
    TextItem,
    build_checklist,
    human_agreement,
    score_texts,
    write_results,
)

pytestmark = pytest.mark.slow


async def test_bundled_model_builds_and_scores(shared_data, tmp_path):
    from core.llm import Gateway, MemoryCache
    from core.settings import bundled_profile

    folder = shared_data / "interacteval" / "summeval" / "coherence"
    dimension = Dimension(name="Coherence",
                          definition=(folder / "dimension_definition.txt").read_text().strip())
    by_source = json.loads((shared_data / "interacteval" / "summeval" /
                            "attributes_by_source_guess.json").read_text())
    notes = [
        Attribute(text=text, source=block["source_guess"],
                  source_kind="person" if block["source_guess"] == "human" else "model")
        for block in by_source["dimensions"]["coherence"]
        for text in block["attributes"][:3]
    ]
    gateway = Gateway(bundled_profile(), cache=MemoryCache())
    build = await build_checklist(dimension, [], assessors={}, builder=gateway, notes=notes)
    checklist = build.checklist
    assert 1 <= len(build.components) <= 5
    assert checklist.items, checklist.remarks
    assert all(item.question.strip() for item in checklist.items)

    documents = {}
    for line in (shared_data / "summeval" / "documents.jsonl").open(encoding="utf-8"):
        record = json.loads(line)
        documents[record["doc_id"]] = record["source"]
    summaries = []
    for line in (shared_data / "summeval" / "summaries.jsonl").open(encoding="utf-8"):
        summaries.append(json.loads(line))
        if len(summaries) == 8:
            break
    items = [
        TextItem(id=f"{r['doc_id']}/{r['system_id']}", text=r["system_output"],
                 source=documents[r["doc_id"]], source_id=r["doc_id"], system=r["system_id"],
                 human={"Coherence": r["scores"]["coherence"]})
        for r in summaries
    ]
    run = await score_texts([checklist], items, gateway, model=bundled_profile().model)
    assert len(run.scores) == 8
    for score in run.scores:
        if score.status == "ok":
            assert 1.0 <= score.score <= 5.0
            assert score.answered >= 1 and len(score.answers) == len(checklist.items)
        else:
            assert score.score is None and score.note  # failed, and says why
    assert gateway.usage.calls >= 5 + 8

    path = tmp_path / "results.xlsx"
    write_results(path, run, agreement=human_agreement(run.scores, n_boot=0))
    sheets = pd.read_excel(path, sheet_name=None)
    assert len(sheets["Scores"]) == 8
    agreement = sheets["Agreement"]
    assert set(agreement.kind) >= {"per-source-document averaged", "pooled over all texts"}
    undefined = agreement[agreement.value.isna()]
    assert undefined.note.str.contains("Not computed").all()  # undefined values say why
