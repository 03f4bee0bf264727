"""``evaldesk aqer`` writes the Comparison sheet (and, when asked, the Workers needed sheet)."""

from __future__ import annotations

import openpyxl
import pytest

from core import cli
from tests.core.aqer.aqer_support import HashedBagOfWords
from tests.core.aqer.test_comparison import graded_answers


@pytest.fixture(autouse=True)
def tiny_encoder(monkeypatch):
    class TinyEncoder(HashedBagOfWords):
        def __init__(self, model_path="", device="auto", batch_size=32):
            super().__init__()

    monkeypatch.setattr("core.embeddings.Encoder", TinyEncoder)


def rows(path, sheet):
    book = openpyxl.load_workbook(path)
    values = list(book[sheet].iter_rows(values_only=True))
    return values[0], values[1:]


def test_the_comparison_sheet_is_written_when_the_answers_have_grades(tmp_path, capsys):
    source = tmp_path / "answers.xlsx"
    graded_answers(blanks=True).to_excel(source, index=False)
    out = tmp_path / "out.xlsx"
    assert cli.main(["aqer", str(source), "-o", str(out), "--compare-blank-answers", "missing",
                     "--workers-curve", "--curve-repetitions", "2"]) == 0
    header, body = rows(out, "Comparison")
    assert header[:3] == ("Condition", "Pearson r", "r 95% CI low")
    assert [r[0] for r in body] == ["AQER", "Simplified AQER", "RASA", "Pseudo-reference F1",
                                    "BLEU-1", "AQER (blank answers left out)"]
    summary = header.index("In words")
    assert all(r[summary] for r in body)
    assert body[0][header.index("Workers")] == 12
    assert body[2][header.index("Workers in the paired test")] == 12
    header, body = rows(out, "Workers needed")
    assert [r[0] for r in body] == [3, 5, 10, 12]
    err = capsys.readouterr().err
    assert "Comparison sheet" in err and "Workers needed sheet: Pearson r" in err


def test_no_comparison_sheet_without_grades(tmp_path, capsys):
    source = tmp_path / "answers.xlsx"
    graded_answers().drop(columns="grade").to_excel(source, index=False)
    out = tmp_path / "out.xlsx"
    assert cli.main(["aqer", str(source), "-o", str(out)]) == 0
    assert "Comparison" not in openpyxl.load_workbook(out).sheetnames
    assert "no Comparison sheet: the answers have no expert grades" in capsys.readouterr().err
