"""The AQER workbook's headers are the results page's words (issue 13, point 7): a column the
screen shows has the same title in the export."""

from __future__ import annotations

import pytest

from core.aqer.report import LABELS
from desktop.aqer import results


@pytest.mark.parametrize("screen, sheet", [
    (results.WORKER_COLUMNS, "workers"),
    (results.QUESTION_COLUMNS, "questions"),
    (results.ANSWER_COLUMNS, "answers"),
    (results.LLM_SUMMARY_COLUMNS, "llm_summary"),
    (results.AGREEMENT_COLUMNS, "agreement"),
    (results.WARNING_COLUMNS, "warnings"),
])
def test_export_headers_are_the_screens(screen, sheet):
    words = LABELS[sheet]
    shown = {c.key: c.title for c in screen if c.key in words}
    assert shown, sheet
    assert shown == {key: words[key] for key in shown}
