"""Page 4: build the checklist step by step (components, groups, key questions, sub-questions, review),
each result editable before the next step reads it."""

from __future__ import annotations

from functools import partial
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QStyledItemDelegate,
    QVBoxLayout,
    QWidget,
)

from core.interacteval.model import AttributeCluster
from core.interacteval.session import GROUNDED_NOTICE, uses_grounded_path
from core.words import count
from desktop.interacteval.models import RowColumn, RowsModel
from desktop.interacteval.pages._base import InteractEvalPage
from desktop.run_panel import RunPanel
from desktop.runner import RunOutcome
from desktop.views import fit_rows
from desktop.widgets import estimate_label, hint_label, page_layout, row_table

if TYPE_CHECKING:  # pragma: no cover
    from core.runs import CancelToken, Progress
    from desktop.interacteval.wizard import InteractEvalWizard


__all__ = ["BUILD_STEPS", "BuildPage"]

#: The construction steps on the Build page: (stage key, title, what it does).
BUILD_STEPS = [
    ("components", "1. Components",
     ("The model names at most five components of the dimension that recur in the think-aloud "
     "attributes. Edit the list (one per line): rename, delete or add components.")),
    ("clusters", "2. Attribute groups",
     ("Each attribute is put under the component it fits best; the model may leave out "
     "redundant or confusing ones. Change a component in the right-hand column to regroup.")),
    ("key_questions", "3. Key questions",
     ("One Yes/No key question per component (“Yes” is the good answer). They become the "
     "headings of the checklist. Double-click a question to change it.")),
    ("sub_questions", "4. Sub-questions",
     ("Several Yes/No sub-questions under each key question. These are the questions that "
     "will be asked. Double-click to change one; empty it to drop it.")),
    ("checklist", "5. Review (validation)",
     ("The model merges near-duplicates, drops irrelevant questions and rewords unclear ones. "
     "The result is the checklist, which you can edit on the next page.")),
]
LEFT_OUT = "(left out)"


class ChoiceDelegate(QStyledItemDelegate):
    """A combo box editor offering the column's choices (the component of an attribute)."""

    def __init__(self, model: RowsModel, key: str, parent=None) -> None:
        super().__init__(parent)
        self.model, self.key = model, key

    def createEditor(self, parent, option, index):
        combo = QComboBox(parent)
        column = self.model.columns[self.model.column_of(self.key)]
        combo.addItems(list(column.choices))
        return combo

    def setEditorData(self, editor, index):
        editor.setCurrentText(str(index.data(Qt.ItemDataRole.EditRole)))

    def setModelData(self, editor, model, index):
        model.setData(index, editor.currentText(), Qt.ItemDataRole.EditRole)


class BuildPage(InteractEvalPage):
    KEY, TITLE = "build", "Build"

    def __init__(self, wizard: InteractEvalWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self._components_timer = QTimer(self)
        self._components_timer.setSingleShot(True)
        self._components_timer.setInterval(400)
        self._components_timer.timeout.connect(self._save_components)
        self.build_list = QListWidget()
        self.build_list.setMaximumWidth(250)
        for _key, title, _what in BUILD_STEPS:
            self.build_list.addItem(QListWidgetItem(title))
        self.build_list.currentRowChanged.connect(self._build_step_chosen)
        self.build_stack = QStackedWidget()
        self.build_status: dict[str, QLabel] = {}
        self.build_run_buttons: dict[str, QPushButton] = {}
        self.restore_buttons: dict[str, QPushButton] = {}
        #: The question asked before a step would replace a person's edits (None when none is
        #: open; tests answer it).
        self.edits_box: QMessageBox | None = None

        self.components_edit = QPlainTextEdit()
        self.components_edit.setPlaceholderText("One component per line")
        self.components_edit.textChanged.connect(self._components_typed)

        self.clusters_model = RowsModel([
            RowColumn("text", "Attribute"), RowColumn("who", "Whose"),
            RowColumn("component", "Component", True,
                      "Double-click to put the attribute under another component."),
        ], self)
        self.clusters_model.edited.connect(self._clusters_edited)
        self.clusters_view = row_table(self.clusters_model, stretch=0)
        self.clusters_view.setItemDelegateForColumn(
            2, ChoiceDelegate(self.clusters_model, "component", self.clusters_view))

        self.keys_model = RowsModel([
            RowColumn("component", "Component"),
            RowColumn("question", "Key question", True),
        ], self)
        self.keys_model.edited.connect(self._keys_edited)
        self.keys_view = row_table(self.keys_model, stretch=1)

        self.subs_model = RowsModel([
            RowColumn("component", "Component"),
            RowColumn("question", "Sub-question", True),
        ], self)
        self.subs_model.edited.connect(self._subs_edited)
        self.subs_view = row_table(self.subs_model, stretch=1)

        self.validate_check = QCheckBox("Let the model review the questions (the paper's "
                                        "validation step)")
        self.validate_check.toggled.connect(self._validate_toggled)
        self.checklist_summary = QLabel()
        self.checklist_summary.setWordWrap(True)
        self.checklist_summary.setTextFormat(Qt.TextFormat.RichText)
        review = QWidget()
        rv = QVBoxLayout(review)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addWidget(self.validate_check)
        rv.addWidget(self.checklist_summary)
        rv.addStretch(1)

        editors = {"components": self.components_edit, "clusters": self.clusters_view,
                   "key_questions": self.keys_view, "sub_questions": self.subs_view,
                   "checklist": review}
        for key, title, what in BUILD_STEPS:
            step = QWidget()
            pv = QVBoxLayout(step)
            pv.setContentsMargins(8, 0, 0, 0)
            header = QLabel(f"<b>{title}</b>")
            status = QLabel()
            status.setWordWrap(True)
            status.setTextFormat(Qt.TextFormat.RichText)
            self.build_status[key] = status
            run = QPushButton("Run this step")
            run.clicked.connect(partial(self.run_stage, key))
            self.build_run_buttons[key] = run
            restore = QPushButton("Restore the edited version")
            restore.setToolTip("Put back the version a person edited, which the last run of "
                               "this step replaced (it was kept).")
            restore.clicked.connect(partial(self.restore_edited, key))
            restore.hide()
            self.restore_buttons[key] = restore
            row = QHBoxLayout()
            row.addWidget(header)
            row.addStretch(1)
            row.addWidget(restore)
            row.addWidget(run)
            pv.addLayout(row)
            pv.addWidget(hint_label(what))
            pv.addWidget(status)
            pv.addWidget(editors[key], 1)
            self.build_stack.addWidget(step)

        self.run_rest_button = QPushButton("Run all remaining steps")
        self.run_rest_button.setObjectName("primaryButton")
        self.run_rest_button.setToolTip("Run every step that has not run yet or is out of "
                                        "date, one after the other (your edits to earlier "
                                        "steps are used; a step you edited is not made again "
                                        "without asking).")
        self.run_rest_button.clicked.connect(self.run_remaining)
        self.build_estimate = estimate_label("Calls, cost and time of the remaining steps, "
                                             "worked out from our prompts and your attributes "
                                             "before anything runs (later steps read what "
                                             "earlier ones write, so their size is a rough "
                                             "figure).")
        self.build_estimate.setMaximumWidth(250)
        self.build_panel = RunPanel()
        self.build_panel.hide()
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.build_list, 1)
        lv.addWidget(self.run_rest_button)
        lv.addWidget(self.build_estimate)
        body = QHBoxLayout()
        body.addWidget(left)
        body.addWidget(self.build_stack, 1)
        self.build_note = hint_label()
        layout = page_layout(
            self, "Build the checklist, step by step",
            "The model turns the attributes into a checklist in five steps. Each result is "
            "shown here and <b>you can change it before the next step runs</b>: the next step "
            "reads your version. A step whose input changed since it ran is marked “out of "
            "date”. Run one step at a time, or all remaining steps at once.")
        layout.addWidget(self.build_note)
        layout.addLayout(body, 1)
        layout.addWidget(self.build_panel)

    def refresh(self) -> None:
        self._fill_build()

    def leave(self) -> None:
        self.flush_edits()

    def busy_changed(self, busy: str) -> None:
        ready = not busy and self.dimension is not None
        for button in [*self.build_run_buttons.values(), *self.restore_buttons.values()]:
            button.setEnabled(ready)
        self.run_rest_button.setEnabled(ready)

    def _stage_status(self, key: str) -> tuple[str, bool]:
        """(plain status text, done and current)."""
        text, done = self._stage_status_alone(key)
        aside = self.session.replaced_version(self.choices.current, key) \
            if self.choices.current else None
        if aside is not None:
            who = aside.get("edited_by") or "a person"
            text += (f" <span style='color:#b45309'>The version edited by {escape(who)} was "
                     f"replaced by a new run on {escape(str(aside.get('replaced_at', '')))} "
                     f"({escape(str(aside.get('replaced_by', '')))}); it is kept: “Restore "
                     "the edited version” puts it back.</span>")
        return text, done

    def _stage_status_alone(self, key: str) -> tuple[str, bool]:
        name = self.choices.current
        if key == "checklist":
            checklist = self.session.checklist(name)
            if checklist is None:
                return "Not run yet.", False
            current = self.choices.checklist_inputs.get(name) == self.session.stage_input(
                name, "checklist")
            origin, was_edited = self.session.checklist_origin(name)
            made = "imported" if origin == "imported" else "made"
            edited = " and edited in the checklist editor" if was_edited else ""
            text = f"{count(len(checklist.items), 'question')} ({made}{edited})."
            if not current and made != "imported":
                return ("<span style='color:#b45309'>Out of date: the sub-questions changed "
                        "since. Run again to use them (this replaces the checklist).</span> "
                        + text), False
            return text, True
        stored = self.session.stage(name, key)
        if stored is None:
            return "Not run yet.", False
        current = stored.input == self.session.stage_input(name, key)
        who = f"edited by {stored.edited_by}" if stored.edited else "as the model made it"
        if not current and not (stored.edited and not stored.input):
            return ("<span style='color:#b45309'>Out of date: the step before changed since "
                    f"this was made ({who}). Run again to use the change.</span>"), False
        return f"Done ({who}).", True

    def _fill_build(self) -> None:
        name = self.choices.current
        self._filling = True
        try:
            attributes = self.session.attributes(name) if name else []
            note = (f"{len(attributes)} think-aloud attributes for {name}; the model that "
                    f"builds is “{self._builder_name() or 'the default profile'}”."
                    if name else "Add a dimension first.")
            if name and uses_grounded_path(self._profile(self._builder_name())):
                note += " " + GROUNDED_NOTICE
            self.build_note.setText(note)
            comps = self.session.stage(name, "components")
            text = "\n".join(comps.value) if comps else ""
            if self.components_edit.toPlainText() != text:
                self.components_edit.setPlainText(text)
            clusters = self.session.stage(name, "clusters")
            rows = []
            if clusters is not None:
                for cluster in clusters.value.clusters:
                    rows += [{"text": a.text, "who": a.source, "component": cluster.component,
                              "_attribute": a} for a in cluster.attributes]
                rows += [{"text": a.text, "who": a.source, "component": LEFT_OUT,
                          "_attribute": a} for a in clusters.value.left_out]
                self.clusters_model.set_choices(
                    "component", [c.component for c in clusters.value.clusters] + [LEFT_OUT])
            self.clusters_model.set_rows(rows)
            keys = self.session.stage(name, "key_questions")
            self.keys_model.set_rows([{"component": k.component, "question": k.question}
                                      for k in (keys.value if keys else [])])
            subs = self.session.stage(name, "sub_questions")
            self.subs_model.set_rows([{"component": g.component, "question": q, "_group": gi}
                                      for gi, g in enumerate(subs.value if subs else [])
                                      for q in g.sub_questions])
            for view in (self.clusters_view, self.keys_view, self.subs_view):
                fit_rows(view)
            self.validate_check.setChecked(self.choices.validate_questions)
            checklist = self.session.checklist(name)
            if checklist is not None:
                remarks = "".join(f"<br>• {r}" for r in checklist.remarks)
                self.checklist_summary.setText(
                    f"The checklist of {name} has <b>{count(len(checklist.items), 'question')}</b> "
                    f"under {count(len(checklist.components), 'component')}. Edit it on the next "
                    "page "
                    f"(Checklist).{remarks}")
            else:
                self.checklist_summary.setText("No checklist yet.")
        finally:
            self._filling = False
        for i, (key, title, _what) in enumerate(BUILD_STEPS):
            status, done = self._stage_status(key)
            self.build_status[key].setText(status)
            self.restore_buttons[key].setVisible(bool(name) and self.session.replaced_version(
                name, key) is not None)
            item = self.build_list.item(i)
            item.setText(f"{title}  {'✓' if done else ('…' if 'Out of date' in status else '')}")
        if self.build_list.currentRow() < 0:
            self.build_list.setCurrentRow(0)
        self.busy_changed(self.busy)
        self.update_estimate()

    def remaining_steps(self) -> list[str]:
        """The steps "Run all remaining steps" runs: from the first missing or out-of-date
        one to the end."""
        keys = [k for k, _t, _w in BUILD_STEPS]
        first = next((i for i, k in enumerate(keys) if not self._stage_is_current(k)), None)
        return [] if first is None else keys[first:]

    def update_estimate(self) -> Any:
        """The calls, cost and time of the remaining steps (worker thread); returns the task
        (tests await it)."""
        from desktop.interacteval.pages._base import show_estimate

        dim, keys = self.dimension, self.remaining_steps()
        profile = self._profile(self._builder_name())
        if dim is None or profile is None or not keys:
            self.build_estimate.setText("")
            return None
        return show_estimate(self, self.build_estimate,
                             lambda: self.session.estimate_build(dim.name, keys),
                             lead="The remaining steps", profiles=[profile])

    @Slot(int)
    def _build_step_chosen(self, row: int) -> None:
        if row >= 0:
            self.build_stack.setCurrentIndex(row)

    def show_build_step(self, key: str) -> None:
        self.build_list.setCurrentRow([k for k, _t, _w in BUILD_STEPS].index(key))

    # -- edits between steps (stored with who and when) ----------------------------------------

    @Slot()
    def _components_typed(self) -> None:
        if not self._filling:
            self._components_timer.start()

    @Slot()
    def _save_components(self) -> None:
        name = self.choices.current
        lines = [" ".join(line.split()) for line in self.components_edit.toPlainText()
                 .splitlines()]
        components = list(dict.fromkeys(line for line in lines if line))
        stored = self.session.stage(name, "components")
        if stored is not None and stored.value == components:
            return
        self.session.edit_stage(name, "components", components)
        self._refresh_build_status()

    def flush_edits(self) -> None:
        """Store a pending edit now (before a step runs, or when the page changes)."""
        if self._components_timer.isActive():
            self._components_timer.stop()
            self._save_components()

    def _refresh_build_status(self) -> None:
        for i, (key, title, _w) in enumerate(BUILD_STEPS):
            status, done = self._stage_status(key)
            self.build_status[key].setText(status)
            self.build_list.item(i).setText(
                f"{title}  {'✓' if done else ('…' if 'Out of date' in status else '')}")

    @Slot(int, str)
    def _clusters_edited(self, _row: int, _key: str) -> None:
        name = self.choices.current
        stored = self.session.stage(name, "clusters")
        if stored is None or self._filling:
            return
        rows = self.clusters_model.rows()
        clusters = [AttributeCluster(component=c.component) for c in stored.value.clusters]
        left_out = []
        for r in rows:
            target = next((c for c in clusters if c.component == r["component"]), None)
            (target.attributes if target is not None else left_out).append(r["_attribute"])
        value = stored.value.model_copy(update={"clusters": clusters, "left_out": left_out})
        self.session.edit_stage(name, "clusters", value)
        self._refresh_build_status()

    @Slot(int, str)
    def _keys_edited(self, row: int, _key: str) -> None:
        name = self.choices.current
        stored = self.session.stage(name, "key_questions")
        if stored is None or self._filling:
            return
        rows = self.keys_model.rows()
        value = [k.model_copy(update={"question": rows[i]["question"] or k.question})
                 for i, k in enumerate(stored.value)]
        self.session.edit_stage(name, "key_questions", value)
        self._refresh_build_status()

    @Slot(int, str)
    def _subs_edited(self, _row: int, _key: str) -> None:
        name = self.choices.current
        stored = self.session.stage(name, "sub_questions")
        if stored is None or self._filling:
            return
        groups = [g.model_copy(update={"sub_questions": []}) for g in stored.value]
        for r in self.subs_model.rows():
            if r["question"].strip():
                groups[r["_group"]].sub_questions.append(r["question"])
        self.session.edit_stage(name, "sub_questions", groups)
        self._refresh_build_status()

    @Slot(bool)
    def _validate_toggled(self, checked: bool) -> None:
        if self._filling:
            return
        self.choices.validate_questions = checked
        self._save()
        self._refresh_build_status()

    # -- running steps ---------------------------------------------------------------------------

    def _stage_is_current(self, key: str) -> bool:
        return self._stage_status(key)[1]

    @Slot()
    def run_stage(self, key: str) -> Any:
        """Run one construction step for the current dimension."""
        return self._run_stages([key])

    @Slot()
    def run_remaining(self) -> Any:
        """Run every step from the first missing or out-of-date one to the end."""
        keys = self.remaining_steps()
        if not keys:
            self.build_panel.show()
            self.build_panel.finish("Every step is done and up to date.")
            return None
        return self._run_stages(keys)

    def _run_stages(self, keys: list[str]) -> Any:
        if self.dimension is None or self.busy:
            return None
        self.flush_edits()
        edited = self.session.edited_steps(self.dimension.name, keys)
        if edited:
            return self.ask_about_edits(keys, edited)
        return self._after_notice(keys, "keep")

    def _after_notice(self, keys: list[str], edits: str) -> Any:
        return self.wizard.after_cloud_notice(self._profile(self._builder_name()),
                                              partial(self._start_stages, keys, edits))

    def ask_about_edits(self, keys: list[str], edited: list[tuple[str, str]]) -> QMessageBox:
        """Some of the steps to run hold a person's edits: keep them (those steps are not run;
        the later ones read the edits), replace them (the edited versions are kept and can be
        restored), or run nothing. Returns the open question (``self.edits_box``)."""
        titles = {k: t.split(". ", 1)[-1] for k, t, _w in BUILD_STEPS}
        which = "; ".join(f"{titles[k]} (edited by {who})" if who else titles[k]
                          for k, who in edited)
        box = QMessageBox(QMessageBox.Icon.Question, "Keep your edits?",
                          f"These steps were changed by a person: {which}. Running them again "
                          "would replace those changes.", QMessageBox.StandardButton.NoButton,
                          self)
        box.setInformativeText(
            "Keep the edits: those steps are not run again and the later steps use your "
            "version. Replace: the steps are run again; the edited versions are kept and "
            "“Restore the edited version” puts them back.")
        keep = box.addButton("Keep my edits", QMessageBox.ButtonRole.AcceptRole)
        replace = box.addButton("Replace them", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(keep)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(button: Any) -> None:
            self.edits_box = None
            if button is keep:
                self._after_notice(keys, "keep")
            elif button is replace:
                self._after_notice(keys, "replace")

        box.buttonClicked.connect(answered)
        self.edits_box = box
        box.open()
        return box

    @Slot()
    def restore_edited(self, key: str) -> None:
        """Put back the edited version of step ``key`` that a new run replaced."""
        name = self.choices.current
        if not name or self.busy:
            return
        self.session.restore_edited(name, key)
        self._fill_build()

    def _start_stages(self, keys: list[str], edits: str = "keep") -> Any:
        dim = self.dimension
        if dim is None or self.busy:
            return None
        async def job(progress: Progress, cancel: CancelToken) -> Any:
            return await self.session.build_steps(dim.name, keys, edits=edits,
                                                  progress=progress, cancel=cancel)

        titles = {k: t for k, t, _w in BUILD_STEPS}
        title = (f"{titles[keys[0]]} for {dim.name}" if len(keys) == 1 else
                 f"Steps {titles[keys[0]].split('.')[0]} to 5 for {dim.name}")
        self.build_panel.show()
        return self.wizard.run_step(self.build_panel, job, title=title,
                          on_done=partial(self._stages_done, keys), busy="build")

    def _stages_done(self, keys: list[str], outcome: RunOutcome) -> None:
        self._fill_build()
        done = [k for k in keys if self._stage_is_current(k)]
        if done:
            self.show_build_step(done[-1])
