"""The screens of de-identification: names and other identifiers replaced by placeholders before
texts leave this computer (the engine and the project's choices are ``core.deidentify``).

* :class:`PrivacyLine`: one line in the MAJ-Eval and InteractEval wizards, above every step,
  saying whether the texts will be de-identified for the model chosen, with the switch and a
  button to the review page.
* :class:`PrivacyDialog`: the review page. The switch and its two options; the names lists
  (typed, pasted or imported) and the names the project already holds; a sample of the
  project's texts with every replacement highlighted; words to replace and false hits, each
  with who and when. Nothing is kept until Save (one edit in the project's history, by who).

    open_privacy(parent, project, who)      # window-modal, never exec()
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.deidentify import CANNOT_FIND, KIND_LABELS
from core.deidentify import project as dp
from core.privacy import destination
from desktop.widgets import group_box, hint_label, push_button, wrapped_label

__all__ = ["SAMPLE_SIZE", "PrivacyDialog", "PrivacyLine", "open_privacy", "sample_of"]

log = logging.getLogger("evaldesk.privacy")

#: How many of the project's texts the review page shows.
SAMPLE_SIZE = 40
SWITCH_TEXT = ("Replace names and other identifiers with placeholders before texts leave this "
               "computer (recommended)")
_HIGHLIGHT = "background:#ffe08a; color:#3b2f00;"
_PLACEHOLDER = "color:#6b5a00; font-size:small;"


def sample_of(texts: Sequence[Any], size: int = SAMPLE_SIZE) -> list[Any]:
    """Up to ``size`` of ``texts`` spread evenly over them (first and last included), in
    their order: a sample that is the same each time the page opens."""
    n = len(texts)
    if n <= size:
        return list(texts)
    step = (n - 1) / (size - 1)
    return [texts[round(i * step)] for i in range(size)]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _when(at: str) -> str:
    """An ISO time as a teacher reads it ("27 Nov 2026, 16:40"), in this computer's time."""
    try:
        moment = datetime.fromisoformat(at).astimezone()
    except ValueError:
        return at
    return f"{moment.day} {moment:%b %Y, %H:%M}"


def highlighted(text: str, replacements: Sequence[Any]) -> str:
    """``text`` as HTML with each replaced value highlighted, its placeholder after it."""
    out, pos = [], 0
    for r in sorted(replacements, key=lambda r: r.start):
        out.append(html.escape(text[pos:r.start]))
        out.append(f'<span style="{_HIGHLIGHT}">{html.escape(text[r.start:r.end])}</span>'
                   f'<span style="{_PLACEHOLDER}">&nbsp;{html.escape(r.placeholder)}</span>')
        pos = r.end
    out.append(html.escape(text[pos:]))
    return "".join(out).replace("\n", "<br>")


def line_text(project: Any, profiles: Sequence[Any]) -> str:
    """What the wizard's line says for ``profiles`` (the models the next steps use)."""
    profiles = [p for p in profiles if p is not None]
    if project is None or getattr(project, "closed", False):
        return ""
    try:
        on = dp.switch_on(project)
        choices = dp.load_choices(project)
    except dp.DeidentifyUnavailable as exc:
        return f"De-identification cannot be used in this project: {exc}"
    away = [p for p in profiles if destination(p).leaves_computer]
    if not away:
        if on and choices.local_too:
            return "De-identification is on, also for models on this computer."
        return ("The model chosen runs on this computer: texts stay here, nothing needs to be "
                "replaced.")
    where = ", ".join(dict.fromkeys(destination(p).name for p in away))
    if on:
        return (f"Texts go to {where}. De-identification is on: names and other identifiers "
                "are replaced by placeholders before they leave this computer, and put back "
                "in the results.")
    return (f"Texts go to {where}. De-identification is off: names and other identifiers are "
            "sent as they are written.")


class PrivacyLine(QWidget):
    """The switch and the way to the review page, in a wizard (above every step).
    ``profiles()`` gives the models the method's next steps use."""

    changed = Signal()

    def __init__(self, wizard: Any, profiles: Callable[[], Sequence[Any]]) -> None:
        super().__init__()
        self.setObjectName("privacyLine")
        self.wizard = wizard
        self.profiles = profiles
        self.label = QLabel()
        self.label.setObjectName("privacyText")
        self.label.setWordWrap(True)
        self.switch = QCheckBox("Replace names before sending")
        self.switch.setObjectName("privacySwitch")
        self.switch.setToolTip(SWITCH_TEXT + ". Kept in this project, with your name and the "
                               "time.")
        self.switch.toggled.connect(self._switched)
        self.review = push_button("Review names and a sample…",
                                  "See what is replaced in a sample of this project's texts, add "
                                  "names or words to replace, mark words that are not "
                                  "identifiers.", self.open_review, name="privacyReview")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.switch)
        row.addWidget(self.review)
        self.dialog: PrivacyDialog | None = None
        self.hide()  # the wizard refreshes it with its steps (its profiles are ready then)

    @property
    def project(self) -> Any:
        return self.wizard.project

    def refresh(self) -> None:
        project = self.project
        usable = project is not None and not getattr(project, "closed", False)
        self.setVisible(usable)
        if not usable:
            return
        try:
            self.label.setText(line_text(project, list(self.profiles())))
            on = dp.switch_on(project)
        except Exception:  # a line must never stop the wizard from opening
            log.exception("Reading the de-identification choices failed")
            self.label.setText("The de-identification choices of this project could not be "
                               "read.")
            on = False
        self.switch.blockSignals(True)
        self.switch.setChecked(on)
        self.switch.blockSignals(False)
        writable = not getattr(project, "read_only", False)
        self.switch.setEnabled(writable)
        busy = bool(getattr(self.wizard, "busy", ""))
        self.switch.setEnabled(writable and not busy)

    def _switched(self, on: bool) -> None:
        try:
            dp.set_switch(self.project, on, getattr(self.wizard, "who", ""))
        except Exception as exc:
            log.exception("Keeping the switch failed")
            self.label.setText(f"The switch could not be kept in the project: {exc}")
            return
        self.refresh()
        self.changed.emit()

    def open_review(self) -> PrivacyDialog:
        self.dialog = open_privacy(self, self.project, getattr(self.wizard, "who", ""))
        self.dialog.finished.connect(lambda _r: (self.refresh(), self.changed.emit()))
        return self.dialog


def open_privacy(parent: QWidget | None, project: Any, who: str) -> PrivacyDialog:
    """Open the review page window-modal (``open()``, never ``exec()``)."""
    dialog = PrivacyDialog(project, who, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


class PrivacyDialog(QDialog):
    """The review page (see the module)."""

    def __init__(self, project: Any, who: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("privacyDialog")
        self.setWindowTitle("Names and identifiers: what is replaced before texts are sent")
        self.project = project
        self.who = (who or "").strip() or "unnamed person"
        self.choices = dp.load_choices(project).model_copy(deep=True)
        self.choices.enabled = dp.switch_on(project, self.choices)
        self.read_only = bool(getattr(project, "read_only", False))
        self.texts = sample_of(dp.project_texts(project, inputs=True))
        self.found: list[Any] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(400)
        self._timer.timeout.connect(self.update_preview)
        self.finished.connect(self._timer.stop)

        intro = wrapped_label(
            "Before a text goes to a model on another computer, EvalDesk can replace names, "
            "e-mail addresses, phone numbers, dates, record numbers and other identifiers with "
            "placeholders such as [STUDENT 3], and put the real values back in everything you "
            "see and export. The table of real values stays in this project, on this computer. "
            "Read the sample: what is highlighted is replaced; add what was missed.", "intro")

        self.switch = QCheckBox(SWITCH_TEXT)
        self.switch.setObjectName("privacySwitch")
        self.keep_year = QCheckBox("Keep the year in dates (“[DATE 1], 2021”)")
        self.local_too = QCheckBox("Also for models on this computer (a local server that "
                                   "passes texts on to a service)")
        self.switch.setChecked(bool(self.choices.enabled))
        self.keep_year.setChecked(self.choices.keep_year)
        self.local_too.setChecked(self.choices.local_too)
        self.switch.toggled.connect(self._options)
        self.keep_year.toggled.connect(self._options)
        self.local_too.toggled.connect(self._options)
        options = QHBoxLayout()
        options.addWidget(self.keep_year)
        options.addWidget(self.local_too)
        options.addStretch(1)

        # names
        self.students = QPlainTextEdit("\n".join(self.choices.students))
        self.students.setObjectName("studentNames")
        self.students.setPlaceholderText("One name a line, e.g.\nMaria Lopez\nJake Miller")
        self.people = QPlainTextEdit("\n".join(self.choices.people))
        self.people.setObjectName("peopleNames")
        self.people.setPlaceholderText("Parents, staff, doctors… one a line")
        for edit in (self.students, self.people):
            edit.textChanged.connect(self._names_edited)
        self.import_button = push_button(
            "Import a names list…", "A text file or spreadsheet column with one name a line; a "
            "line “People:” starts names of other people.", self.import_names)
        self.known = hint_label()
        self.known.setWordWrap(True)
        names_box = group_box(
            "Names to replace",
            QLabel("Students or patients ([STUDENT n])"), self.students,
            QLabel("Other people ([PERSON n])"), self.people,
            self.import_button, self.known)

        # words added, false hits
        self.added = QListWidget()
        self.added.setObjectName("addedWords")
        self.new_word = QLineEdit()
        self.new_word.setPlaceholderText("A word to replace too: a school, a ward, a nickname")
        self.new_word.returnPressed.connect(self.add_typed)
        add_row = QHBoxLayout()
        add_row.addWidget(self.new_word, 1)
        add_row.addWidget(push_button("Replace it", "Replace this word wherever it stands.",
                                      self.add_typed))
        self.kept = QListWidget()
        self.kept.setObjectName("keptWords")
        words_box = group_box(
            "Your words",
            QLabel("Also replaced:"), self.added, add_row,
            push_button("Remove", "Stop replacing the chosen word (unless found otherwise).",
                        lambda: self._remove(self.added, "added")),
            QLabel("Not identifiers (never replaced):"), self.kept,
            push_button("Remove", "Replace the chosen word again when it is found.",
                        lambda: self._remove(self.kept, "kept")))
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(names_box, 3)
        left_layout.addWidget(words_box, 2)

        # the sample
        self.pick = QComboBox()
        self.pick.setObjectName("sampleText")
        for i, t in enumerate(self.texts, 1):
            first = " ".join(t.text.split())[:80]
            self.pick.addItem(f"{i}. {t.where}: {first}")
        self.pick.currentIndexChanged.connect(self.show_text)
        self.browser = QTextBrowser()
        self.browser.setObjectName("sampleView")
        self.table = QTableWidget(0, 3)
        self.table.setObjectName("replacements")
        self.table.setHorizontalHeaderLabels(["In the text", "Sent as", "Kind"])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.summary = hint_label()
        self.summary.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(push_button(
            "Not an identifier: keep it", "The chosen value is sent as it is, in every text "
            "of this project.", self.keep_chosen))
        buttons.addWidget(push_button(
            "Replace the selected words", "Select words in the text above that were missed, "
            "then press this: they are replaced wherever they stand.", self.add_selected))
        buttons.addStretch(1)
        sample = QWidget()
        sample_layout = QVBoxLayout(sample)
        sample_layout.addWidget(self.pick)
        sample_layout.addWidget(self.summary)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.browser)
        split.addWidget(self.table)
        split.setSizes([220, 240])
        sample_layout.addWidget(split, 1)
        sample_layout.addLayout(buttons)
        limits = QTextBrowser()
        limits.setObjectName("cannotFind")
        limits.setHtml(
            "<p>It cannot find these by itself: add them as names or words to replace, or "
            "reword the text.</p><ul>" + "".join(
                f"<li><b>{html.escape(limit.what)}</b> For example: "
                f"{html.escape(limit.example)} <i>{html.escape(limit.advice)}</i></li>"
                for limit in CANNOT_FIND) + "</ul>")
        self.tabs = QTabWidget()
        self.tabs.addTab(sample, f"Sample of the texts ({len(self.texts)})")
        self.tabs.addTab(limits, "What it cannot find")

        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(left)
        body.addWidget(self.tabs)
        body.setStretchFactor(0, 2)
        body.setStretchFactor(1, 3)
        body.setSizes([440, 700])

        self.box = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                    | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = self.box.button(QDialogButtonBox.StandardButton.Save)
        if self.read_only:
            self.save_button.setEnabled(False)
            self.save_button.setToolTip("This project is open read-only: nothing can be kept.")
        self.box.accepted.connect(self.save)
        self.box.rejected.connect(self.reject)
        self.error = QLabel()
        self.error.setObjectName("errorText")
        self.error.setWordWrap(True)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.switch)
        layout.addLayout(options)
        layout.addWidget(body, 1)
        layout.addWidget(self.error)
        layout.addWidget(self.box)
        self.resize(1180, 740)
        self._fill_words()
        self.update_preview()

    # ------------------------------------------------------------------------ the choices
    def _options(self) -> None:
        self.choices.enabled = self.switch.isChecked()
        self.choices.keep_year = self.keep_year.isChecked()
        self.choices.local_too = self.local_too.isChecked()
        self.update_preview()

    def _names_edited(self) -> None:
        self.choices.students = _lines(self.students.toPlainText())
        self.choices.people = _lines(self.people.toPlainText())
        self._timer.start()

    def ask_names_file(self) -> str | None:
        from desktop.file_dialogs import open_file

        return open_file(self, "Import a names list",
                         "Names lists (*.txt *.csv *.tsv *.xlsx *.xls);;All files (*)")

    def import_names(self) -> None:
        path = self.ask_names_file()
        if not path:
            return
        try:
            text = _names_text(path)
        except (OSError, ValueError) as exc:
            self.error.setText(f"{path} could not be read: {exc}. Save it as a text file with "
                               "one name a line and import it again.")
            return
        students, people = dp.names_of_file(text)
        if not students and not people:
            self.error.setText(f"No names were found in {path}: write one name a line.")
            return
        self.error.setText("")
        self.students.setPlainText("\n".join(_merge(_lines(self.students.toPlainText()),
                                                    students)))
        self.people.setPlainText("\n".join(_merge(_lines(self.people.toPlainText()), people)))
        self._names_edited()
        self._timer.stop()
        self.update_preview()

    def add_word(self, value: str, kind: str = "OTHER") -> bool:
        value = " ".join(value.split())
        if not value:
            self.error.setText("Type the word or words to replace.")
            return False
        self.error.setText("")
        c = self.choices
        c.kept = [k for k in c.kept if k.value.casefold() != value.casefold()]
        if not any(a.value.casefold() == value.casefold() for a in c.added):
            c.added.append(dp.AddedValue(value=value, kind=kind, who=self.who, at=_now()))
        self._fill_words()
        self.update_preview()
        return True

    def keep_word(self, value: str) -> bool:
        value = " ".join(value.split())
        if not value:
            self.error.setText("Choose a highlighted value in the table first.")
            return False
        self.error.setText("")
        c = self.choices
        c.added = [a for a in c.added if a.value.casefold() != value.casefold()]
        if not any(k.value.casefold() == value.casefold() for k in c.kept):
            c.kept.append(dp.KeptValue(value=value, who=self.who, at=_now()))
        self._fill_words()
        self.update_preview()
        return True

    def add_typed(self) -> None:
        if self.add_word(self.new_word.text()):
            self.new_word.clear()

    def add_selected(self) -> None:
        self.add_word(self.browser.textCursor().selectedText().replace("\u2029", " "))

    def keep_chosen(self) -> None:
        row = self.table.currentRow()
        item = self.table.item(row, 0) if row >= 0 else None
        self.keep_word(item.text() if item is not None else "")

    def _remove(self, widget: QListWidget, which: str) -> None:
        item = widget.currentItem()
        if item is None:
            return
        value = item.data(Qt.ItemDataRole.UserRole)
        if which == "added":
            self.choices.added = [a for a in self.choices.added if a.value != value]
        else:
            self.choices.kept = [k for k in self.choices.kept if k.value != value]
        self._fill_words()
        self.update_preview()

    def _fill_words(self) -> None:
        for widget, values in ((self.added, self.choices.added), (self.kept, self.choices.kept)):
            widget.clear()
            for v in values:
                item = QListWidgetItem(f"{v.value}  (by {v.who}, {_when(v.at)})")
                item.setData(Qt.ItemDataRole.UserRole, v.value)
                widget.addItem(item)

    # ------------------------------------------------------------------------ the sample
    def update_preview(self) -> None:
        if getattr(self.project, "closed", False):
            return
        try:
            deid = dp.preview_deidentifier(self.project, self.choices)
        except dp.DeidentifyUnavailable as exc:
            self.error.setText(str(exc))
            self.found = []
            return
        self.found = [deid.deidentify(t.text) for t in self.texts]
        names = dp.known_names(self.project, self.choices)
        others = {s: n for s, n in names.sources.items()
                  if s not in (dp.SOURCE_STUDENTS, dp.SOURCE_PEOPLE)}
        self.known.setText(
            "Also replaced, from this project: " + "; ".join(
                f"{len(n)} from {s}" for s, n in others.items()) + "."
            if others else "The project holds no other names yet (answers' student column, "
            "personas, raters are added when they are there).")
        self.show_text(self.pick.currentIndex())

    def show_text(self, index: int) -> None:
        total = sum(len(f.replacements) for f in self.found)
        state = ("on" if self.choices.enabled else
                 "off: these replacements are NOT made until you turn it on")
        self.summary.setText(
            f"De-identification is {state}. In the {len(self.texts)} texts of the sample: "
            f"{total} replacements." if self.texts else
            "This project holds no texts yet: open the review again once the texts are in.")
        if not (0 <= index < len(self.found)):
            self.browser.setHtml("")
            self.table.setRowCount(0)
            return
        found = self.found[index]
        text = self.texts[index].text
        self.browser.setHtml(highlighted(text, found.replacements))
        rows = sorted({(text[r.start:r.end], r.placeholder, r.kind)
                       for r in found.replacements}, key=lambda row: row[1])
        rows = [(text_value, ph, KIND_LABELS.get(kind, kind)) for text_value, ph, kind in rows]
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, value in enumerate(row):
                self.table.setItem(i, j, QTableWidgetItem(value))

    # ---------------------------------------------------------------------------- keep it
    def save(self) -> None:
        if self.read_only:
            self.reject()
            return
        self._names_edited()
        self._timer.stop()
        try:
            dp.save_choices(self.project, self.choices, self.who)
        except Exception as exc:
            log.exception("Keeping the de-identification choices failed")
            self.error.setText(f"The choices could not be kept in the project: {exc}")
            return
        self.accept()


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _merge(old: list[str], new: list[str]) -> list[str]:
    seen = {n.casefold() for n in old}
    return old + [n for n in new if n.casefold() not in seen and not seen.add(n.casefold())]


def _names_text(path: str) -> str:
    """The text of a names file: a text file as it is, a spreadsheet's cells a line each."""
    if path.lower().endswith((".xlsx", ".xls", ".xlsm", ".csv", ".tsv")):
        from core.tables import TableError, read_table

        try:
            frame = read_table(path, None, header_row=None).frame
        except TableError as exc:
            raise ValueError(exc.message) from None
        return "\n".join(" ".join(str(v) for v in row if str(v).strip() and str(v) != "nan")
                         for row in frame.itertuples(index=False))
    with open(path, encoding="utf-8-sig") as handle:
        return handle.read()
