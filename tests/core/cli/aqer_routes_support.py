"""Shared by the AQER route tests (CLI and wizard session give the same workbook) and the file
permission tests: a stand-in for ``core.embeddings.Encoder`` and a long answers workbook."""

from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook

from tests.core.aqer.aqer_support import FACTS, HashedBagOfWords


class TinyEncoder(HashedBagOfWords):
    """``core.embeddings.Encoder``'s stand-in: the same words give the same vectors."""

    def __init__(self, model_path: str = "", device: str = "auto", batch_size: int = 32):
        super().__init__()
        self.max_seq_length = 256

    def truncated(self, texts):
        return [len(t) > 1000 for t in texts]


def answers_workbook(path: Path) -> Path:
    """A long sheet as people write them: "Question ID", "Worker", "Answer", an AI's answers in
    a "Bot" column, a teacher's "Grade", a duplicate to choose from and a blank answer."""
    book = Workbook()
    sheet = book.active
    sheet.title = "Class 3B"
    sheet.append(["Question ID", "Worker", "Answer", "Bot", "Grade"])
    wrong_bot = {1, 4}
    for w in range(5):
        for k, (question, (right, wrong)) in enumerate(FACTS.items()):
            answer = wrong if (w == 0 or (w == 3 and k % 2)) else right
            if w == 4 and k == 2:
                answer = ""  # left blank
            bot = wrong if k in wrong_bot else right
            sheet.append([question, f"student {w + 1}", answer, bot, 1 if answer == right else 0])
    question = next(iter(FACTS))
    sheet.append([question, "student 2", "Paris, the capital city", FACTS[question][0], 1])
    book.save(path)
    return path
