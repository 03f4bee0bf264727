"""One route: ``evaldesk checklist score`` and the session calls the wizard's pages make give the
same results workbook for the same texts sheet and checklist, cell by cell.

The texts sheet has the headers a chatbot evaluation has ("Question ID", "Bot", "Prompt",
"Response"): both routes must find the source, its id and the system in them (before, the CLI
did not, so its Scores sheet had no source ids or systems, its prompts had no source and its
agreement had no documents). Only the run's date and time cells ("Scored on", "Exported" on the
Read me sheet) may differ.
"""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest
from openpyxl import load_workbook

from core.cli import main
from core.interacteval import Checklist, ChecklistItem
from core.interacteval.report import write_checklists
from core.interacteval.session import InteractEvalSession
from core.llm import ScriptedLLM, gateway_for
from core.project import Project
from core.settings import ModelProfile, SettingsStore

#: Read me rows that hold when the run happened (the only cells allowed to differ).
DATE_ROWS = {"Scored on", "Exported"}
MODEL = "scripted/ie-routes"


@pytest.fixture
def scripted():
    def reply(messages):
        prompt = "\n".join(m["content"] for m in messages)
        # the answers depend on the text and on whether the prompt carried its source
        good = "clear answer" in prompt
        sourced = "How do I reset" in prompt or "Which plan" in prompt
        return {"q1": "yes", "q2": "yes" if good else "no", "q3": "yes" if sourced else "no"}

    llm = ScriptedLLM(reply, name="ie-routes")
    yield llm
    llm.close()


@pytest.fixture
def files(tmp_path):
    rows = []
    for qid, prompt in (("Q1", "How do I reset my password?"),
                        ("Q2", "Which plan suits a small school?")):
        for bot, answer, human in (("Bot A", "A clear answer with steps.", 4.5),
                                   ("Bot B", "Something vague.", 2.0),
                                   ("Bot C", "Another clear answer, shorter.", 4.0)):
            rows.append({"Question ID": qid, "Bot": bot, "Prompt": prompt,
                         "Response": f"{answer} ({qid})", "Helpfulness": human})
    pd.DataFrame(rows).to_excel(tmp_path / "texts.xlsx", index=False, sheet_name="Answers")
    checklist = Checklist(dimension="Helpfulness", definition="Whether the reply helps.",
                          items=[ChecklistItem(question="Does it answer the question?"),
                                 ChecklistItem(question="Is it clear?"),
                                 ChecklistItem(question="Does it use the question's details?")])
    write_checklists(tmp_path / "checklist.xlsx", [checklist])
    return tmp_path


def _wizard_route(folder, out):
    """The calls the wizard's pages make on its session (``wizard.session``), in their order:
    the Checklist page imports the checklist file; the Score page stores the texts file,
    locates and reads it (columns guessed), keeps the texts and the chosen profile and runs
    the scoring; the Results page computes the agreement and exports."""
    settings = SettingsStore().load()
    settings.upsert_profile(ModelProfile(name=MODEL, model=MODEL))  # chosen in Settings
    with Project.create(folder / "wizard.evaldesk", method="interacteval") as project:
        session = InteractEvalSession.open(project, settings=settings)
        assert session.problem == ""
        assert not session.import_checklists(folder / "checklist.xlsx").errors
        session.store_input("texts", folder / "texts.xlsx")
        path, _note = session.locate_texts()
        opened = session.read_texts(path)
        assert not opened.read.errors
        session.use_texts(opened.read.items, opened.setup)
        session.choices.scorer = MODEL
        session.save_choices()
        run = asyncio.run(session.run())
        agreement, _rows = session.agreement(run)
        session.export(out, who=session.who, run=run, agreement=agreement)
    assert session.models is gateway_for  # the wizard's default model factory


def _cells(path):
    book = load_workbook(path)
    out = {}
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            if sheet.title == "Read me" and row and row[0].value in DATE_ROWS:
                continue
            for cell in row:
                out[(sheet.title, cell.coordinate)] = cell.value
    return out


def test_cli_and_wizard_session_write_the_same_workbook(files, scripted, capsys):
    cli_out = files / "cli.xlsx"
    code = main(["checklist", "score", "--checklist", str(files / "checklist.xlsx"),
                 "--items", str(files / "texts.xlsx"), "--model", MODEL, "-o", str(cli_out)])
    assert code == 0, capsys.readouterr().err
    wizard_out = files / "wizard.xlsx"
    _wizard_route(files, wizard_out)

    cli, wizard = _cells(cli_out), _cells(wizard_out)
    assert load_workbook(cli_out).sheetnames == load_workbook(wizard_out).sheetnames
    differ = {key: (cli.get(key), wizard.get(key)) for key in cli.keys() | wizard.keys()
              if cli.get(key) != wizard.get(key)}
    assert differ == {}

    # both routes put the length baseline and the "does it tell the texts apart?" rows there
    agreement = pd.read_excel(cli_out, sheet_name="Agreement", dtype=str)
    assert agreement.comparison.str.contains("text length \\(number of words\\) vs human").any()
    assert agreement.comparison.str.contains("does the checklist tell the texts apart").any()
    scores = pd.read_excel(cli_out, sheet_name="Scores", dtype=str)
    # the chatbot headers were understood: source id, system, and the prompt as the source
    assert list(scores.source_id) == ["Q1"] * 3 + ["Q2"] * 3
    assert list(scores.system) == ["Bot A", "Bot B", "Bot C"] * 2
    # q3 is yes only when the prompt carried the question: 3 of 3 yes (5) or 2 of 3 (3.667)
    assert [round(float(s), 3) for s in scores.score] == [5.0, 3.667, 5.0] * 2
    texts = pd.read_excel(cli_out, sheet_name="Read me", header=None, dtype=str)
    texts_row = texts[texts[0] == "Texts"][1].tolist()
    assert texts_row == ["texts.xlsx, sheet Answers: 6 texts"]
