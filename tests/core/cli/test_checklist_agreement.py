"""``evaldesk checklist agreement``: per checklist question the judge's Yes/No against the
person's (kappa, MCC, false-pass, false-fail), from a ratings workbook, read back."""

from __future__ import annotations

import pandas as pd
import pytest

from core.cli import main
from tests.core.cli.checklist_cli_support import (  # noqa: F401 (fixtures)
    inputs,
    score_args,
    scripted_model,
)


def test_checklist_agreement_per_question(inputs, scripted_model, capsys):  # noqa: F811
    project = inputs / "p.evaldesk"
    assert main(score_args(inputs)) == 0
    # the judge says yes, yes, yes to good texts (rows 2, 4 ...), yes, no, no to weak ones
    rows = []
    for k, (text_id, score, b) in enumerate((("row 2", 5, "Yes"), ("row 3", 4, "Yes"),
                                             ("row 4", 4, "Yes"), ("row 5", 5, "No"))):
        rows.append({"rater": "Anna", "item": text_id, "dimension": "Coherence", "question": "",
                     "rating": score, "note": ""})
        rows.append({"rater": "Anna", "item": text_id, "dimension": "Coherence",
                     "question": "B?", "rating": b, "note": ""})
    pd.DataFrame(rows).to_excel(inputs / "ratings.xlsx", index=False)
    out = inputs / "agreement.xlsx"
    code = main(["checklist", "agreement", "--project", str(project), "--ratings",
                 str(inputs / "ratings.xlsx"), "--no-bootstrap", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "question 2 fails good texts" in err
    questions = pd.read_excel(out, sheet_name="Questions")
    b = questions[questions.question == "B?"].iloc[0]
    # judge B?: row 2 yes, row 3 no (weak), row 4 yes, row 5 yes; person yes, yes, yes, no
    assert b.n == 4 and b.false_fail_rate == pytest.approx(1 / 3, abs=1e-4)
    assert b.false_pass_rate == pytest.approx(1.0) and b.fails_good_texts == "yes"
