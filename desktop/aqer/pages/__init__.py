"""The pages of the AQER wizard, one class per step: the answers file, the columns, the
embedding model and settings, the run, the results, and checking AQER against your own
grades of the AI answers. Each page only collects choices and
shows outcomes; the wizard (:mod:`desktop.aqer.wizard`) holds what they share and the work is
in :mod:`core.aqer.session` and :mod:`core.aqer.inputs`."""

from desktop.aqer.pages.check import CheckJudgePage
from desktop.aqer.pages.columns import ColumnsPage
from desktop.aqer.pages.file import FilePage
from desktop.aqer.pages.model import ModelPage
from desktop.aqer.pages.run import ResultsPage, RunPage

__all__ = ["IN_ORDER", "CheckJudgePage", "ColumnsPage", "FilePage", "ModelPage", "ResultsPage",
           "RunPage"]

#: The wizard's steps in order (its ``PAGE_CLASSES``).
IN_ORDER = (FilePage, ColumnsPage, ModelPage, RunPage, ResultsPage, CheckJudgePage)
