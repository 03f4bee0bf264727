"""Step 3 of the AQER wizard: the embedding model, where it runs, and how AQER runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
)

from desktop.aqer.pages._base import AqerPage
from desktop.glossary import explain
from desktop.widgets import error_label, exclusive, group_box, hbox, hint_label, page_layout

if TYPE_CHECKING:  # pragma: no cover (the wizard imports the pages)
    from desktop.aqer.wizard import AqerWizard

__all__ = ["DEVICES", "TOLERANCES", "ModelPage"]

TOLERANCES = [(1e-4, "0.0001 (quicker, a little less exact)"),
              (1e-6, "0.000001 (the paper's setting)"),
              (1e-8, "0.00000001 (stricter)")]

DEVICES = [("auto", "Automatic (a graphics card when there is one)"),
           ("cpu", "Processor (CPU)"),
           ("cuda", "NVIDIA graphics card (CUDA)"),
           ("mps", "Apple graphics (MPS)")]


class ModelPage(AqerPage):
    """The embedding model (built-in or a folder), the device, and AQER's settings."""

    KEY, TITLE = "model", "Embedding model"

    def __init__(self, wizard: AqerWizard) -> None:
        super().__init__(wizard)
        self._filling = False
        self.bundled_radio = QRadioButton(
            "Built-in: all-MiniLM-L6-v2 (small and fast, English; comes with EvalDesk)")
        self.folder_radio = QRadioButton("A sentence-transformers model folder on this computer:")
        self.model_group = exclusive(self, self.bundled_radio, self.folder_radio)
        self.folder_edit = QLineEdit()
        self.folder_edit.setPlaceholderText("for example …/all-mpnet-base-v2")
        self.folder_button = QPushButton("Browse…")
        self.folder_button.clicked.connect(self._browse_model)
        self.model_error = error_label()
        self.bundled_radio.toggled.connect(self._model_chosen)
        self.folder_edit.editingFinished.connect(self._model_chosen)
        self.device_combo = QComboBox()
        for key, text in DEVICES:
            self.device_combo.addItem(text, key)
        self.device_combo.currentIndexChanged.connect(self._model_chosen)
        device_row = QFormLayout()
        device_row.addRow("Run it on:", self.device_combo)
        model_box = group_box(
            "Embedding model (turns each answer into numbers)", self.bundled_radio,
            self.folder_radio, hbox((self.folder_edit, 1), self.folder_button), self.model_error,
            device_row, hint_label(
                "The paper used a larger model (stsb-roberta-large); a larger model usually "
                "judges meaning better but is slower. Embeddings are kept in the project per "
                "model, so changing the settings below never embeds the same answers twice."))

        self.rounds_spin = QSpinBox()
        self.rounds_spin.setRange(1, 100_000)
        self.rounds_spin.setToolTip("AQER stops after this many rounds even if the weights "
                                    "still change (the paper: 100).")
        self.rounds_spin.valueChanged.connect(self._settings_chosen)
        self.tolerance_combo = QComboBox()
        for value, text in TOLERANCES:
            self.tolerance_combo.addItem(text, value)
        self.tolerance_combo.currentIndexChanged.connect(self._settings_chosen)
        self.baselines_check = QCheckBox(
            "Also compute the baselines RASA, F1 and BLEU-1 (to compare AQER with)")
        self.baselines_check.setToolTip("Three simpler ways of scoring the same workers, "
                                        "shown beside AQER.\n" + explain("RASA", "F1", "BLEU-1"))
        self.baselines_check.toggled.connect(self._settings_chosen)
        self.llm_workers_check = QCheckBox(
            "Score AI answers as extra workers (they then shape the consensus too)")
        self.llm_workers_check.setToolTip(explain("AI answers as workers"))
        self.llm_workers_check.toggled.connect(self._settings_chosen)
        settings_box = QGroupBox("How AQER runs")
        sf = QFormLayout(settings_box)
        sf.addRow("At most this many rounds:", self.rounds_spin)
        sf.addRow("Stop when the weights change less than:", self.tolerance_combo)
        sf.addRow(self.baselines_check)
        sf.addRow(self.llm_workers_check)

        layout = page_layout(
            self, "Embedding model and settings",
            "AQER compares answers by meaning: an embedding model turns every answer into a "
            "list of numbers, and answers with similar meaning get similar numbers. Everything "
            "runs on this computer; nothing is sent anywhere. The defaults are the paper's and "
            "suit most uses.")
        layout.addWidget(model_box)
        layout.addWidget(settings_box)
        layout.addStretch(1)

    # ------------------------------------------------------------------ the page's protocol
    def restore(self) -> None:
        """Put the saved choices into the widgets (without saving them again)."""
        self._filling = True
        try:
            s = self.wizard.choices
            (self.folder_radio if s.embedding_model else self.bundled_radio).setChecked(True)
            self.folder_edit.setText(s.embedding_model)
            self.device_combo.setCurrentIndex(max(0, self.device_combo.findData(s.device)))
            self.rounds_spin.setValue(s.settings.max_iterations)
            best = min(range(len(TOLERANCES)),
                       key=lambda i: abs(TOLERANCES[i][0] - s.settings.tolerance))
            if abs(TOLERANCES[best][0] - s.settings.tolerance) > 1e-15:
                self.tolerance_combo.addItem(f"{s.settings.tolerance:g}", s.settings.tolerance)
                best = self.tolerance_combo.count() - 1
            self.tolerance_combo.setCurrentIndex(best)
            self.baselines_check.setChecked(s.settings.baselines)
            self.llm_workers_check.setChecked(s.settings.llm_as_workers)
        finally:
            self._filling = False
        self._update_model_widgets()

    def next_state(self) -> tuple[bool, str]:
        return not self.model_error.text(), ""

    def reachable(self) -> bool:
        check = self.wizard.check
        return check is not None and check.ok and not check.needs_duplicate_choice

    # ------------------------------------------------------------------ choices
    @Slot()
    def _browse_model(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Choose a sentence-transformers model folder", self.folder_edit.text())
        if folder:
            self.folder_edit.setText(folder)
            self.folder_radio.setChecked(True)
            self._model_chosen()

    def _update_model_widgets(self) -> str:
        from core.embeddings import EmbeddingError, check_model_folder

        use_folder = self.folder_radio.isChecked()
        self.folder_edit.setEnabled(use_folder)
        self.folder_button.setEnabled(use_folder)
        problem = ""
        path = self.folder_edit.text().strip() if use_folder else ""
        if use_folder:
            if not path:
                problem = "Choose the model folder, or use the built-in model."
            else:
                try:
                    check_model_folder(path)
                except EmbeddingError as exc:
                    problem = str(exc)
        self.model_error.setText(problem)
        self.model_error.setVisible(bool(problem))
        return "" if problem else path

    @Slot()
    def _model_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        path = self._update_model_widgets()
        if not self.model_error.text():
            self.wizard.save(embedding_model=path, device=self.device_combo.currentData())
        self.wizard.update_nav()

    @Slot()
    def _settings_chosen(self, *_args: Any) -> None:
        if self._filling:
            return
        settings = self.wizard.choices.settings.model_copy(update={
            "max_iterations": self.rounds_spin.value(),
            "tolerance": float(self.tolerance_combo.currentData()),
            "baselines": self.baselines_check.isChecked(),
            "llm_as_workers": self.llm_workers_check.isChecked(),
        })
        self.wizard.save(settings=settings)
