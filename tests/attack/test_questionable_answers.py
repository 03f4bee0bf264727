"""Attack suite, questionable answers (issue 30, point 7): five inputs EvalDesk took without a
word. Each is decided here, and the decision is in the attack table of docs/development.md.

* A score of ``true``: was taken as 1. Refused: a boolean is never a number in a reply (scores,
  note and perspective numbers); the model is asked again once, then the item fails with the
  reason. (A checklist answer of true/false still counts as yes/no: it answers a yes/no
  question, as the scoring module says.)
* A JSON key given twice with different values: the last won, with no remark. Refused the same
  way, naming the key and both values. The same value twice is no ambiguity and is read.
* ``d0``, the internal name of MAJ-Eval's first dimension, was accepted as that dimension's key.
  Refused: a reply names dimensions by their names only.
* A formula that reads another workbook: its saved value was read with no note. Read (it is what
  Excel showed when the file was saved) with a warning that names the cell and the other
  workbook and says what to do if it changed.
* ``--project same.xlsx`` made a project file with a workbook's name. Refused before anything is
  made or asked: a new project's name ends in ``.evaldesk``.
"""

from __future__ import annotations

import asyncio
import json
import zipfile
from pathlib import Path

import pytest

from core.cli import main
from core.llm import Gateway, MemoryCache, ScriptedLLM
from tests.attack._faults import hostile_server, save_profile, score_args
from tests.attack.conftest import IMPORTERS, inline_row, raw_xlsx, run_importer, sheet_for
from tests.attack.test_llm_faults import attack, waits  # noqa: F401 - waits is autouse

QUALITY = "Overall quality"


def _ask_twice(reply):
    """A scripted model that answers ``reply`` every time, and the gateway over it."""
    llm = ScriptedLLM(lambda messages: reply, name="questionable")
    return llm, Gateway(llm.profile(max_retries=0), cache=MemoryCache())


# ------------------------------------------------------------------------------ true as a score
def test_a_score_of_true_is_refused_not_taken_as_1():
    """MAJ-Eval's agents and InteractEval's single judge: a score of ``true`` made a 1."""
    from core.interacteval.model import Dimension as TextDimension
    from core.interacteval.model import TextItem
    from core.interacteval.single_judge import judge_text
    from core.majeval import DEFAULT_DIMENSION, Item, Persona, Scale
    from core.majeval.debate import evaluate_individually

    llm, gateway = _ask_twice({"rationale": "It is fine.", "scores": {QUALITY: True}})
    with llm:
        persona = Persona(id="t/a", group="Teachers", name="Ana Ruiz", perspective="Clarity.")
        agents = asyncio.run(evaluate_individually(
            [persona], Item(id="i1", content="Q: Why? A: Because."), "Judge QA pairs.",
            [DEFAULT_DIMENSION], Scale(), gateway))
    assert agents[0].status == "failed" and agents[0].initial is None
    assert "not true or false" in agents[0].error and agents[0].error_kind == "invalid_output"
    assert llm.calls == 2  # asked again once with the reason

    llm, gateway = _ask_twice({"reasons": "Clear and short.", "score": True})
    with llm:
        scored = asyncio.run(judge_text(TextDimension(name="Clarity"),
                                        TextItem(id="t1", text="A short clear text."), gateway))
    assert scored.status == "failed" and scored.score is None
    assert "not true or false" in scored.note and llm.calls == 2


def test_a_score_given_as_text_or_a_float_is_still_read():
    """What stays accepted: "4" and 4.0 are the number 4 (models write them; nothing is lost)."""
    from core.majeval import DEFAULT_DIMENSION, Scale
    from core.majeval.model import evaluation_schema, scores_of

    schema = evaluation_schema([DEFAULT_DIMENSION], Scale())
    for given in ('"4"', "4.0", "4"):
        reply = schema.model_validate_json(
            f'{{"rationale": "r", "scores": {{"{QUALITY}": {given}}}}}')
        assert scores_of(reply) == {QUALITY: 4}


# ------------------------------------------------------------------- a key given twice (last won)
@pytest.mark.timeout(60)
def test_a_key_given_twice_with_different_values_is_refused(tmp_path, evaldesk_home, capsys):
    """``{"q1": "yes", ..., "q1": "no"}`` counted q1 as no: now asked again once, then the text
    is failed with a note naming the key and both values."""
    result = attack(tmp_path, capsys, "duplicate_key")
    assert 'the key "q1" is given twice with different values ("yes", then "no")' in result.note
    assert result.hits["C"] == 2  # asked again once


def test_the_same_key_twice_with_the_same_value_is_read():
    from core.llm._gateway import _Reply, _validate
    from core.majeval import DEFAULT_DIMENSION, Scale
    from core.majeval.model import evaluation_schema, scores_of

    schema = evaluation_schema([DEFAULT_DIMENSION], Scale())
    text = f'{{"rationale": "r", "scores": {{"{QUALITY}": 3, "{QUALITY}": 3}}}}'
    value, problem = _validate(_Reply(text, "stop", 0, 0, 0.0, 0.0, ""), schema)
    assert problem == "" and scores_of(value) == {QUALITY: 3}


def test_a_question_answered_twice_under_two_spellings_is_refused():
    """``{"q1": "yes", "Q1": "no"}``: the labels fold to the same question and the first was
    kept without a word; now the checklist's check refuses it (asked again once, then the text
    is failed, naming both)."""
    from core.interacteval.checklist_scoring import _reply_check

    check = _reply_check([1, 2], 2, complete=False)
    problem = check({"q1": "yes", "Q1": "no", "q2": "yes"})
    assert problem is not None and problem.problem.startswith(
        'q1 is answered twice with different answers ("q1": "yes", "Q1": "no")')
    assert check({"q1": "yes", "Q1": "Yes.", "q2": "no"}) is None  # the same answer twice


# ---------------------------------------------------------------------- the internal alias d0
def test_the_internal_name_d0_is_not_a_dimensions_key():
    """A reply keyed ``d0`` (our field's own name) was read as the first dimension's score."""
    from core.majeval import DEFAULT_DIMENSION, Item, Persona, Scale
    from core.majeval.debate import evaluate_individually

    llm, gateway = _ask_twice({"rationale": "Good.", "scores": {"d0": 5}})
    with llm:
        persona = Persona(id="t/a", group="Teachers", name="Ana Ruiz", perspective="Clarity.")
        agents = asyncio.run(evaluate_individually(
            [persona], Item(id="i1", content="Q: Why? A: Because."), "Judge QA pairs.",
            [DEFAULT_DIMENSION], Scale(), gateway))
    assert agents[0].status == "failed" and agents[0].initial is None
    assert f"'scores.{QUALITY}': Field required" in agents[0].error
    assert llm.calls == 2


def test_a_dimension_named_like_an_internal_field_keeps_its_own_score():
    """Dimensions named "d1" and "d0" (in that order) each get their own score."""
    from core.majeval import Dimension, Scale
    from core.majeval.model import evaluation_schema, scores_of

    schema = evaluation_schema([Dimension(name="d1"), Dimension(name="d0")], Scale())
    reply = schema.model_validate_json('{"rationale": "r", "scores": {"d1": 2, "d0": 4}}')
    assert scores_of(reply) == {"d1": 2, "d0": 4}


# ----------------------------------------------------------- a formula reading another workbook
def _linked_workbook(path: Path, kind: str) -> Path:
    """A workbook as Excel saves it when a text cell is a formula reading ``prices.xlsx``: the
    formula ``[1]Sheet1!$A$2``, its saved value, and the external link parts naming the file."""
    headers, rows = sheet_for(kind, ["first text", "LINKED-VALUE", "third text"])
    body = inline_row(1, list(headers))
    for number, cells in enumerate(rows, 2):
        body += inline_row(number, [str(c) for c in cells])
    # the attacked cell: the importer's text column in row 3
    column = next(i for i, c in enumerate(rows[1]) if c == "LINKED-VALUE")
    ref = f"{chr(65 + column)}3"
    plain = inline_row(3, [str(c) for c in rows[1]])
    cell = (f'<c r="{ref}" t="str"><f>[1]Sheet1!$A$2</f><v>LINKED-VALUE</v></c>')
    linked_row = plain.replace(
        f'<c r="{ref}" t="inlineStr"><is><t>LINKED-VALUE</t></is></c>', cell)
    assert linked_row != plain
    body = body.replace(plain, linked_row)
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    raw_xlsx(path, f'<?xml version="1.0" encoding="UTF-8"?><worksheet {ns}><sheetData>{body}'
                   "</sheetData></worksheet>".encode())
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("xl/externalLinks/externalLink1.xml",
                    f'<?xml version="1.0" encoding="UTF-8"?><externalLink {ns}><externalBook '
                    f'xmlns:r="{rel}" r:id="rId1"><sheetNames><sheetName val="Sheet1"/>'
                    "</sheetNames></externalBook></externalLink>")
        zf.writestr("xl/externalLinks/_rels/externalLink1.xml.rels",
                    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
                    'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" '
                    f'Type="{rel}/externalLinkPath" Target="file:///C:/Shared/prices%20list.xlsx"'
                    ' TargetMode="External"/></Relationships>')
    return path


@pytest.mark.parametrize("kind", sorted(k for k in IMPORTERS if k != "aqer_grades"))
def test_a_formula_reading_another_workbook_is_read_with_a_note(kind, tmp_path):
    """Every importer of texts: the value Excel saved is read, and a warning names the cell,
    the other workbook and what to do."""
    from core.tables import read_table

    path = _linked_workbook(tmp_path / "linked.xlsx", kind)
    outcome = run_importer(kind, path)
    assert not outcome.errors and "LINKED-VALUE" in outcome.texts, outcome
    warnings = outcome.warnings
    if kind == "majeval_dimensions":  # this reader returns only errors
        warnings = [w.message for w in read_table(path).warnings]
    linked = [w for w in warnings if "another workbook" in w]
    assert len(linked) == 1, warnings
    column = next(i for i, c in enumerate(sheet_for(kind, ["", "LINKED-VALUE"])[1][1])
                  if c == "LINKED-VALUE")
    assert "prices list.xlsx" in linked[0] and f"{chr(65 + column)}3" in linked[0], linked
    assert "linked.xlsx" in linked[0]


# ------------------------------------------------------------- --project with a workbook's name
@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["same.xlsx", "results.csv", "myrun"])
def test_a_new_project_named_like_a_workbook_is_refused(name, tmp_path, evaldesk_home, capsys):
    with hostile_server("none") as server:
        save_profile("Attack server", server.base)
        args = score_args(tmp_path, tmp_path / name, tmp_path / "results.xlsx", "Attack server")
        code = main(args)
        err = capsys.readouterr().err
        assert code == 1, err
        assert server.requests == []  # refused before any call
    stem = name.split(".")[0]
    assert f"--project {name}: a new project file's name ends in .evaldesk" in err
    assert f"Give --project {stem}.evaldesk" in err
    assert not (tmp_path / name).exists() and not (tmp_path / "results.xlsx").exists()


def test_an_existing_project_with_another_name_still_opens(tmp_path, evaldesk_home, capsys):
    """A project made under another name (by an earlier EvalDesk, or renamed) is still opened:
    only a new project must be named .evaldesk."""
    from core.project import Project

    old = tmp_path / "work.evaldesk"
    Project.create(old, method="interacteval").close()
    renamed = old.rename(tmp_path / "work.db")
    with hostile_server("none") as server:
        save_profile("Attack server", server.base)
        code = main(score_args(tmp_path, renamed, tmp_path / "results.xlsx", "Attack server"))
    assert code == 0, capsys.readouterr().err
    assert json.loads(json.dumps(sorted(p.name for p in tmp_path.iterdir()))).count(
        "work.db") == 1
