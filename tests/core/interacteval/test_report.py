"""Checklist files (write, read back, validation messages) and the results workbook."""

from __future__ import annotations

import pandas as pd
import pytest

from core.interacteval import (
    Attribute,
    Checklist,
    ChecklistItem,
    ScoringSettings,
    TextScore,
    human_agreement,
    read_checklists,
    write_checklists,
    write_results,
)
from core.interacteval.model import ANSWER_COLUMNS, CHECKLIST_COLUMNS, QuestionAnswer
from core.interacteval.pipeline import ScoringRun


@pytest.fixture
def checklists() -> list[Checklist]:
    gpt = Attribute(text="Ideas follow logically.", source="GPT-4", source_kind="model")
    anna = Attribute(text="=No abrupt jumps", source="Anna", source_kind="person")
    return [
        Checklist(dimension="Coherence", definition="How the sentences hang together.", items=[
            ChecklistItem(component="Logical flow", key_question="Logical?",
                          question="Does each sentence follow?", source_attributes=[gpt, anna]),
            ChecklistItem(component="Logical flow", key_question="Logical?",
                          question="-Are links clear?", edited_by="Ben"),
        ]),
        Checklist(dimension="Fluency", definition="Grammar and readability.", items=[
            ChecklistItem(component="Grammar", question="Is it grammatical?")]),
    ]


def test_checklist_round_trip(tmp_path, checklists):
    path = tmp_path / "checklist.xlsx"
    report = write_checklists(path, checklists)
    assert {"Checklist", "Dimensions", "Attributes", "Read me"} <= set(report.sheets)
    frame = pd.read_excel(path, sheet_name="Checklist", dtype=str)
    assert list(frame.columns) == CHECKLIST_COLUMNS
    got = read_checklists(path)
    assert got.errors == [] and got.problems == []
    assert got.checklists == checklists  # questions, components, attributes, sources, editors


def test_checklist_read_names_row_and_column(tmp_path):
    path = tmp_path / "edited.xlsx"
    with pd.ExcelWriter(path) as writer:
        pd.DataFrame({
            "dimension": ["Coherence", "", "Coherence", "Coherence", "Fluency"],
            "component": ["A", "A", "B", "B", "C"],
            "question": ["Q1?", "Q2?", "", "q1?", "F1?"],
        }).to_excel(writer, sheet_name="Checklist", index=False)
        pd.DataFrame({"dimension": ["Coherence"], "definition": ["Hangs together."]}).to_excel(
            writer, sheet_name="Dimensions", index=False)
    got = read_checklists(path)
    assert len(got.errors) == 2
    assert "row 3" in got.errors[0] and "dimension" in got.errors[0]
    assert "row 4" in got.errors[1] and "question" in got.errors[1]
    assert any("row 5" in p and "twice" in p for p in got.problems)
    assert any("no definition for Fluency" in p for p in got.problems)
    assert [c.dimension for c in got.checklists] == ["Coherence", "Fluency"]
    assert got.checklists[0].definition == "Hangs together."


def test_checklist_read_without_checklist_sheet(tmp_path):
    path = tmp_path / "other.xlsx"
    with pd.ExcelWriter(path) as writer:
        pd.DataFrame({"a": [1]}).to_excel(writer, sheet_name="One", index=False)
        pd.DataFrame({"a": [1]}).to_excel(writer, sheet_name="Two", index=False)
    got = read_checklists(path)
    assert got.errors and '"Checklist"' in got.errors[0] and '"One"' in got.errors[0]


def test_checklist_read_missing_question_column(tmp_path):
    path = tmp_path / "one.xlsx"
    pd.DataFrame({"dimension": ["Coherence"], "questions text": ["Q?"]}).to_excel(
        path, sheet_name="Checklist", index=False)
    got = read_checklists(path)
    assert got.errors and any("question" in e for e in got.errors)


def test_results_workbook(tmp_path, checklists):
    coherence = checklists[0]
    scores = []
    for i, (pred, human, doc) in enumerate([(5.0, 4.0, "d1"), (3.0, 2.0, "d1"), (1.0, 1.0, "d1"),
                                            (3.0, 5.0, "d2"), (5.0, 4.0, "d2")]):
        scores.append(TextScore(
            text_id=f"t{i}", dimension="Coherence", status="ok", score=pred, human=human,
            source_id=doc, system=f"M{i % 2}", questions=2, answered=2, yes=1,
            answers=[QuestionAnswer(number=1, question=coherence.questions[0], answer="yes",
                                    raw="Yes"),
                     QuestionAnswer(number=2, question=coherence.questions[1], raw="maybe")],
            unanswered=[2]))
    scores.append(TextScore(text_id="t9", dimension="Coherence", status="failed",
                            note="The server had an error.", source_id="d2", human=3.0))
    run = ScoringRun(scores=scores, settings=ScoringSettings(), model="scripted/x",
                     checklists=[coherence])
    path = tmp_path / "results.xlsx"
    write_results(path, run, agreement=human_agreement(scores, n_boot=0))
    sheets = pd.read_excel(path, sheet_name=None, dtype=str)
    assert {"Scores", "Answers", "Checklists", "Attributes", "Agreement", "Read me"} <= set(sheets)
    scores_sheet = sheets["Scores"]
    assert list(scores_sheet.columns)[:10] == ["text_id", "source_id", "system", "dimension",
                                               "text", "status", "score", "answered",
                                               "questions", "unanswered"]
    failed = scores_sheet[scores_sheet.text_id == "t9"].iloc[0]
    assert failed.status == "failed" and pd.isna(failed.score)  # no default score
    assert "server" in failed.note
    assert scores_sheet.iloc[0].unanswered == "q2"
    answers = sheets["Answers"]
    assert list(answers.columns) == ANSWER_COLUMNS
    assert list(answers.answer[:2]) == ["yes", "(unanswered)"]
    assert list(answers.raw_answer[:2]) == ["Yes", "maybe"]
    attributes = sheets["Attributes"]
    assert set(attributes.source) == {"GPT-4", "Anna"}
    assert "'=No abrupt jumps" in set(attributes.attribute)  # formula-safe
    agreement = sheets["Agreement"]
    assert "per-source-document averaged" in set(agreement.kind)
    readme = sheets["Read me"].to_string()
    assert "scripted/x" in readme and "Ben" in readme


def test_results_workbook_reads_back_as_a_checklist_file(tmp_path, checklists):
    coherence = checklists[0]
    run = ScoringRun(scores=[], settings=ScoringSettings(), checklists=[coherence])
    path = tmp_path / "results.xlsx"
    write_results(path, run)
    got = read_checklists(path)
    assert not got.errors
    assert got.checklists[0].questions == coherence.questions
    assert got.checklists[0].items[0].source_attributes == coherence.items[0].source_attributes


# --------------------------------------------------------------------- think-aloud samples
def test_checklist_file_keeps_its_think_aloud_samples(tmp_path, checklists):
    from core.interacteval import ScoredSample

    coherence = checklists[0].model_copy(update={"samples": [
        ScoredSample(source="Article 1", text="A sample summary.", score=2.33, row=4),
        ScoredSample(source="Article 2", text="=Another one.", score=5.0, row=7)]})
    path = tmp_path / "checklist.xlsx"
    write_checklists(path, [coherence, checklists[1]])
    readme = pd.read_excel(path, sheet_name="Read me", dtype=str).to_string()
    assert "row 4 (score 2.33), row 7 (score 5)" in readme
    assert "left out of the agreement" in readme
    assert "1 + 4 × (yes answers / questions in the checklist)" in readme  # the scoring rule
    got = read_checklists(path)
    assert not got.errors, got.errors
    back = got.checklists[0]
    assert [(s.text, s.score, s.row) for s in back.samples] == [
        ("A sample summary.", 2.33, 4), ("=Another one.", 5.0, 7)]
    assert got.checklists[1].samples == []


def test_results_workbook_says_which_samples_were_left_out(tmp_path, checklists):
    scores = [TextScore(text_id=f"t{i}", dimension="Coherence", status="ok", score=float(s),
                        human=float(h), questions=2, answered=2, think_aloud_sample=i == 0)
              for i, (s, h) in enumerate([(5, 1), (1, 1), (3, 3), (5, 5)])]
    run = ScoringRun(scores=scores, settings=ScoringSettings(), model="m",
                     checklists=[checklists[0]], date="2025-01-02 03:04")
    path = tmp_path / "results.xlsx"
    write_results(path, run, agreement=human_agreement(scores, n_boot=0), texts="texts.csv")
    sheets = pd.read_excel(path, sheet_name=None, dtype=str)
    readme = sheets["Read me"].to_string()
    assert "1 scored text is a think-aloud sample (Coherence: t0)" in readme
    assert "left out of the agreement" in readme
    assert "2025-01-02 03:04" in readme and "texts.csv" in readme
    assert list(sheets["Scores"].think_aloud_sample) == ["yes", "no", "no", "no"]
    computed = sheets["Agreement"].dropna(subset=["value"])
    computed = computed[computed.comparison == "Coherence: checklist scores vs human scores"]
    assert len(computed) == 3  # pooled: Spearman, Kendall, Pearson over the 3 other texts
    assert computed.note.str.contains("1 think-aloud sample left out").all()
    assert set(computed.n) == {"3"}
