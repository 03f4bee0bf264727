"""One route: the same documents and items workbook through ``evaldesk majeval personas`` +
``evaldesk majeval run`` and through the session calls the wizard's pages make give the same
results workbook, cell by cell.

The only cells left out of the comparison are the two that say when the workbook was made:
the Read me's "Run" (when the last debate finished) and "Written" (when the file was written).
"""

from __future__ import annotations

import asyncio

import openpyxl
import pytest

from core.cli import main
from tests.core.majeval.majeval_support import (
    GROUPS,
    STUDY,
    STUDY_EXTRACT,
    SYNTHESIS,
    evaluation,
    item_of,
    kind,
    turn,
)

#: Two lines, as a person writes it (the app keeps the line break; so does the command line).
TASK = ("Judge question-and-answer pairs written for reading stories with children.\n"
        "Good pairs are short, correct and fun.\n")

PERSONAS = {
    "Parents": {"personas": [
        {"perspective_no": 1, "name": "Dana Ray", "demographics": "A mother of two.",
         "perspective": "I want fun, short questions.", "specialty": "Bedtime stories.",
         "psychological_traits": "Cheerful.", "social_relationships": "Talks to teachers."},
        {"perspective_no": 2, "name": "Eli Stone", "demographics": "A father.",
         "perspective": "Long questions bore my son.", "specialty": "Football coach.",
         "psychological_traits": "Impatient.", "social_relationships": "Other dads."}]},
    "Teachers": {"personas": [
        {"perspective_no": 1, "name": "Ms Amy Lee", "demographics": "A preschool teacher.",
         "perspective": "Link stories to life.", "specialty": "Early literacy.",
         "psychological_traits": "Calm.", "social_relationships": "Works with parents."}]},
}
#: The items workbook, with the headers people use: the content is in "Bot", its context in
#: "Prompt", the id in "Question ID", human ratings in "Rating".
ITEMS = [
    ["Question ID", "Prompt", "Bot", "Rating"],
    ["fox-1", "A fox story.", "Q: What does a fox eat? A: Mice.", 5],
    ["sky-1", "A sky story.", "Q: Why is the sky blue? A: Because.", 2],
    ["fox-2", "Another fox story.", "Q: What colour is a fox? A: Red.", 4],
    ["sky-2", "A sky story again.", "Q: Is the sky big? A: Very.", 3],
]


def reply(messages):
    what = kind(messages)
    if what == "extract":
        return STUDY_EXTRACT
    if what == "group":
        return GROUPS
    if what == "persona":
        group = "Parents" if "Stakeholder group: Parents" in messages[-1]["content"] \
            else "Teachers"
        return PERSONAS[group]
    if what == "aggregate":
        return SYNTHESIS
    content = item_of(messages)
    score = 5 if "fox" in content else 2
    if what == "phase1":
        return evaluation(score - 1 if "Dana Ray" in messages[0]["content"] else score)
    if what in ("turn", "final"):
        return turn("NO MORE COMMENTS", score, done=True)
    raise AssertionError(what)


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "study.txt").write_text(STUDY, encoding="utf-8")
    (tmp_path / "task.txt").write_text(TASK, encoding="utf-8")
    book = openpyxl.Workbook()
    for row in ITEMS:
        book.active.append(row)
    book.save(tmp_path / "items.xlsx")
    return tmp_path


def through_the_command_line(folder, model: str) -> None:
    personas = folder / "personas.xlsx"
    assert main(["majeval", "personas", str(folder / "study.txt"), "--task-file",
                 str(folder / "task.txt"), "--model", model, "-o", str(personas)]) == 0
    assert main(["majeval", "run", "--personas", str(personas), "--items",
                 str(folder / "items.xlsx"), "--task-file", str(folder / "task.txt"),
                 "--model", model, "-o", str(folder / "cli.xlsx")]) == 0


def through_the_wizards_session(folder, model: str) -> None:
    """The session calls the wizard's pages make, in the order a person goes through them
    (desktop/majeval/pages)."""
    from core.cli._common import adhoc_profile
    from core.majeval.inputs import task_text
    from core.majeval.session import MajEvalSession
    from core.project import Project
    from core.settings import Settings

    profile = adhoc_profile(model)
    settings = Settings(profiles=[profile], default_profile=profile.name)
    with Project.create(folder / "wizard.evaldesk", method="majeval") as project:
        session = MajEvalSession.open(project, settings=settings)
        # Task: the paragraph as typed
        session.choices.task = task_text((folder / "task.txt").read_text(encoding="utf-8"))
        session.save_choices(session.choices)
        # Documents, then Find stakeholders
        session.add_document(folder / "study.txt")
        asyncio.run(session.find_stakeholders())
        # Items: the file kept and read with the app's column guesses
        opened = session.store_items(folder / "items.xlsx")
        session.use_items(opened.setup, opened.read.items)
        # Run: the estimate shown, then the debates; Results: Export
        estimate = session.snapshot().estimate()
        run = asyncio.run(session.run(estimate=estimate))
        session.snapshot().export(folder / "wizard.xlsx", who="Ana", run=run)


def cells(path) -> dict[str, list[list]]:
    book = openpyxl.load_workbook(path)
    out = {}
    for sheet in book.worksheets:
        rows = [list(r) for r in sheet.iter_rows(values_only=True)]
        if sheet.title == "Read me":
            rows = [r for r in rows if r and r[0] not in ("Run", "Written")]
        out[sheet.title] = rows
    return out


def test_the_command_line_and_the_wizard_give_the_same_workbook(inputs):
    from core.llm import ScriptedLLM

    llm = ScriptedLLM(reply, name="majeval-routes")
    try:
        through_the_command_line(inputs, llm.model)
        through_the_wizards_session(inputs, llm.model)
    finally:
        llm.close()
    cli, wizard = cells(inputs / "cli.xlsx"), cells(inputs / "wizard.xlsx")
    assert list(cli) == list(wizard)
    # the conditions the debates give (after and before the debate) are compared in both, as
    # the wizard's export always did (the command line's workbook once left them out)
    assert {"Comparison", "Condition scores"} <= set(cli)
    for sheet in cli:
        assert len(cli[sheet]) == len(wizard[sheet]), sheet
        for n, (a, b) in enumerate(zip(cli[sheet], wizard[sheet], strict=True), 1):
            assert a == b, f"sheet {sheet}, row {n}"
    # and they are the results of this workbook, read with its own headers
    items = cli["Items"]
    assert [r[0] for r in items[1:]] == ["fox-1", "sky-1", "fox-2", "sky-2"]
    assert "Agreement" in cli  # the "Rating" column was taken as the human ratings
    # both routes put the length baseline and the "does it tell the items apart?" rows there
    groups = {r[1] for r in cli["Agreement"][1:]}
    assert "Text length alone (number of words)" in groups
    assert any("does the debate tell the items apart" in str(r[0]) for r in cli["Agreement"])
    readme = {}
    for row in cli["Read me"]:
        readme.setdefault(row[0], row[1])
    assert readme["Items"] == "4 items from items.xlsx, sheet Sheet"
    assert readme["Task"] == TASK.strip()
