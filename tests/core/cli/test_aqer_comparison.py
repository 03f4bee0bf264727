"""``evaldesk aqer`` writes the Comparison sheet (and, when asked, the Workers needed sheet)."""

from __future__ import annotations

import openpyxl
import pytest

from core import cli
from tests.core.aqer.aqer_support import HashedBagOfWords, graded_answers


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


def test_compare_model_through_another_backend_is_a_row_kept_in_the_project(
        tmp_path, capsys, monkeypatch):
    """``--compare-model built-in@torch``: the bundled model through PyTorch (here another tiny
    encoder) is a row of the Comparison sheet with its paired test against AQER; with
    --project it is kept, so the same command embeds nothing again."""
    made = []

    class ByBackend(HashedBagOfWords):
        def __init__(self, model_path="", device="auto", batch_size=32, backend="auto"):
            super().__init__(dim=24 if backend == "torch" else 16)
            self.backend = backend
            made.append(backend)

    monkeypatch.setattr("core.embeddings.Encoder", ByBackend)
    source = tmp_path / "answers.xlsx"
    graded_answers().to_excel(source, index=False)
    out = tmp_path / "out.xlsx"
    args = ["aqer", str(source), "-o", str(out), "--project", str(tmp_path / "p.evaldesk"),
            "--compare-model", "built-in@torch"]
    assert cli.main(args) == 0, capsys.readouterr().err
    assert made == ["auto", "torch"]
    header, body = rows(out, "Comparison")
    row = dict(zip(header, body[-1]))
    assert row["Condition"] == "AQER (model all-MiniLM-L6-v2, through PyTorch)"
    assert row["Workers in the paired test"] == 12
    assert row["Difference in r vs AQER"] is not None and row["p (paired test)"] is not None
    assert "through PyTorch" in row["Settings"]
    assert cli.main(args) == 0
    assert made == ["auto", "torch"]  # nothing loaded, nothing embedded the second time
    _, again = rows(out, "Comparison")
    numbers = [i for i, name in enumerate(header) if name != "Settings"]
    assert [[r[i] for i in numbers] for r in again] == [[r[i] for i in numbers] for r in body]
