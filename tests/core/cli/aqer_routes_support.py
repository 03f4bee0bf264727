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


class TheWizardsCalls:
    """The calls of :class:`core.aqer.session.AqerSession` that the wizard's pages make, one
    method per thing the user does (the route tests drive these, so the workbook they compare
    with the command line's is the wizard's own, not a third way of running AQER)."""

    def __init__(self, project) -> None:
        from core.aqer.session import AqerSession

        self.session = AqerSession.open(project)
        self.read = None
        self.sheets: list[str] = []

    def choose_file(self, path=None) -> None:
        """The file page: a file chosen (None: the chosen file read again with a new sheet
        or header row), its columns guessed anew (``FilePage._read``, ``_read_done``)."""
        opened = self.session.open_answers(path)
        self.read, self.sheets = opened.read, opened.sheets
        self.session.guess_columns(opened.read, opened.sheets, choices=opened.choices)

    def choose_header_row(self, row: int) -> None:
        """The file page's "Header row" box (``FilePage._header_chosen``)."""
        self.save(header_row=row)
        self.choose_file()

    def choose_layout(self, layout: str) -> None:
        """The file page's long / wide buttons (``FilePage._format_chosen``)."""
        self.session.guess_columns(self.read, self.sheets, format=layout)

    def save(self, **update) -> None:
        """A choice made on a page (``AqerWizard.save``)."""
        self.session.save_choices(self.session.choices.model_copy(update=update))

    def save_columns(self, **update) -> None:
        """A column role chosen on the Columns page (``AqerWizard.save_columns``)."""
        self.session.save_choices(self.session.choices.with_columns(**update))

    def choose_grades_file(self, path) -> None:
        """The Columns page's "Grades file…" (``ColumnsPage.choose_grades_file``): a grade
        column of numbers that is no longer the grades stays left out."""
        from core.aqer.inputs import numeric_columns

        roles = self.session.choices.columns
        ignore = list(roles.ignore_cols)
        if roles.grade_col and roles.grade_col in numeric_columns(self.read) \
                and roles.grade_col not in ignore:
            ignore.append(roles.grade_col)
        self.session.store_input("grades", path)
        self.save_columns(ignore_cols=ignore)

    def check(self):
        """The Columns page's check of the whole sheet (``ColumnsPage._check``)."""
        return self.session.check_answers(self.read, self.session.choices)

    def score_and_export(self, out) -> None:
        """Run's "Score the answers", the Results page shown, then Export (``RunPage.start_run``,
        ``ResultsPage.set_result``, ``start_comparison``, ``export``)."""
        import asyncio

        session = self.session
        stored = asyncio.run(session.run())
        curve = session.load_workers_curve()
        table = session.comparison(stored)
        session.export(out, who="a tester", stored=stored, curve=curve, table=table)
