"""Finding words a teacher would not know on a screen (issue 13, point 5): every visible label,
button, group box, tab, table column title and combo item is read; a term of :data:`TERMS` in
it needs a tooltip (on the widget, or on the column title) that says it in plain words. A
chart's words (title, axes, legend) count as the chart widget's."""

from __future__ import annotations

import re
from typing import Any

#: Research and programming words that need a plain-words tooltip where they appear.
TERMS = [
    "SEA", "RASA", "BLEU", "ROUGE", "RMSE", "MAE", "MCC", "kappa", "litellm", "model string",
    "paper section", "section 7.4", "Krippendorff", "Spearman", "Kendall", "Pearson", "tau-b",
    "cosine", "bootstrap", "ablation", "ordinal", "G-Eval", "summary-level", "sample-level",
    "ONNX", "NaN", "API base", "JSON", "z-score", "Eq.",
]
_PATTERNS = [(t, re.compile(r"(?<![A-Za-z])" + re.escape(t) + r"(?![A-Za-z])",
                            0 if t.isupper() or t in ("Eq.",) else re.IGNORECASE))
             for t in TERMS]


def terms_in(text: str) -> list[str]:
    plain = re.sub(r"<[^>]+>", " ", text or "")
    return [term for term, pattern in _PATTERNS if pattern.search(plain)]


def _shown(widget: Any, root: Any) -> bool:
    return widget.isVisibleTo(root) and widget.isVisible()


def unexplained(root: Any) -> list[str]:
    """Each visible text under ``root`` that holds a term of :data:`TERMS` without a tooltip,
    as "where: 'text' (terms)"."""
    from PySide6.QtCore import QModelIndex, Qt
    from PySide6.QtWidgets import (
        QAbstractButton,
        QComboBox,
        QGroupBox,
        QLabel,
        QTableView,
        QTabWidget,
        QTreeView,
        QWidget,
    )

    found: list[str] = []

    def check(where: str, text: str, tip: str) -> None:
        terms = terms_in(text)
        if terms and not (tip or "").strip():
            found.append(f"{where}: {text[:90]!r} ({', '.join(terms)})")

    for widget in [root, *root.findChildren(QWidget)]:
        if not _shown(widget, root):
            continue
        name = type(widget).__name__
        figure = getattr(widget, "figure", None)
        if name.startswith("FigureCanvas"):
            continue  # its chart widget (the parent, holding the same figure) is checked
        if figure is not None and hasattr(figure, "findobj"):  # a matplotlib chart's words
            from matplotlib.text import Text

            words = " ".join(t.get_text() for t in figure.findobj(Text))
            check(f"{name} chart", words, widget.toolTip())
        if isinstance(widget, (QLabel, QAbstractButton)):
            check(name, widget.text(), widget.toolTip())
        elif isinstance(widget, QGroupBox):
            check(name, widget.title(), widget.toolTip())
        elif isinstance(widget, QTabWidget):
            for i in range(widget.count()):
                check("tab", widget.tabText(i), widget.tabToolTip(i))
        elif isinstance(widget, QComboBox):
            for i in range(widget.count()):
                tip = widget.itemData(i, Qt.ItemDataRole.ToolTipRole) or widget.toolTip()
                check("combo item", widget.itemText(i), tip)
        elif isinstance(widget, (QTableView, QTreeView)) and widget.model() is not None:
            model = widget.model()
            header = widget.horizontalHeader() if isinstance(widget, QTableView) \
                else widget.header()
            if header.isHidden():
                continue
            for c in range(model.columnCount(QModelIndex())):
                if header.isSectionHidden(c):
                    continue
                title = model.headerData(c, Qt.Orientation.Horizontal,
                                         Qt.ItemDataRole.DisplayRole)
                tip = model.headerData(c, Qt.Orientation.Horizontal,
                                       Qt.ItemDataRole.ToolTipRole)
                check("column title", str(title or ""), str(tip or ""))
    return found


def unexplained_in_tabs(qtbot: Any, window: Any, tabs: Any) -> list[str]:
    """:func:`unexplained` for ``window`` with each tab of ``tabs`` shown in turn."""
    found = []
    for i in range(tabs.count()):
        tabs.setCurrentIndex(i)
        qtbot.wait(50)
        found += [f"[{tabs.tabText(i)}] {f}" for f in unexplained(window)]
    return sorted(set(found))


def unexplained_on_pages(qtbot: Any, window: Any, wizard: Any) -> list[str]:
    """:func:`unexplained` for ``window`` with each page of ``wizard`` shown in turn."""
    found = []
    for key in list(wizard.pages):
        wizard.show_page(key)
        qtbot.wait(20)
        found += [f"[{key}] {f}" for f in unexplained(window)]
    return found
