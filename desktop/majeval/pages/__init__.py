"""The pages of the MAJ-Eval wizard, one class per step (two small steps share a module):
task, documents, find stakeholders + personas, items, run + results. Each page only collects
input and shows output; the work is in :mod:`core.majeval.session`."""

from desktop.majeval.pages.check import CheckJudgePage
from desktop.majeval.pages.documents import DocumentsPage
from desktop.majeval.pages.extraction import ExtractionPage, PersonasPage
from desktop.majeval.pages.items import ItemsPage
from desktop.majeval.pages.run import ResultsPage, RunPage
from desktop.majeval.pages.task import TaskPage

__all__ = [
    "IN_ORDER",
    "CheckJudgePage",
    "DocumentsPage",
    "ExtractionPage",
    "ItemsPage",
    "PersonasPage",
    "ResultsPage",
    "RunPage",
    "TaskPage",
]

#: The wizard's steps in order (its ``PAGE_CLASSES``).
IN_ORDER = (TaskPage, DocumentsPage, ExtractionPage, PersonasPage, ItemsPage, RunPage,
            ResultsPage, CheckJudgePage)
