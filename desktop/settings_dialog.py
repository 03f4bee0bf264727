"""Settings: language-model profiles (with keys in the OS keyring), embeddings, your name.

The profile editor and the connection test are in :mod:`desktop.profile_dialog` (their names are
exported here too); the local-model windows in :mod:`desktop.model_discovery` and
:mod:`desktop.model_manager`.

Changes are saved as they are made (profiles when their editor is confirmed), through
:class:`core.settings.SettingsStore`. API keys go to the keyring through :mod:`core.secrets` and
are never written to a file; the dialogs only say whether a key is stored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from core import secrets
from core.privacy import destination
from core.settings import ModelProfile, Settings, SettingsProblem, SettingsStore
from desktop.errors import spawn
from desktop.profile_dialog import (  # noqa: F401 - these names are also exported from here
    API_BASES_HELP,
    MODEL_STRING_HELP,
    KeyAction,
    ProfileDialog,
    _key_state,
    check_profile,
    run_connection_test,
    validate_api_bases,
)
from desktop.views import HeaderedTableModel
from desktop.widgets import (
    add_parts,
    error_label,
    exclusive,
    group_box,
    hbox,
    hint_label,
    note_box,
    open_window,
    push_button,
    wrapped_label,
)

__all__ = [
    "ProfileDialog",
    "ProfilesTableModel",
    "SettingsDialog",
    "detect_devices",
    "validate_api_bases",
]

log = logging.getLogger("evaldesk.settings")

BUNDLED_MODEL_NOTE = (
    "<b>About the built-in model.</b> EvalDesk comes with a very small model (Gemma 3 270M) "
    "that runs on this computer without internet. It is there so you can try the app; its "
    "scores are not trustworthy. For real evaluations use a capable model: a larger model file "
    "(.gguf; 3 to 8 billion parameters runs on many laptops), Ollama or vLLM on a computer in "
    "your department, or a hosted provider such as OpenAI, Anthropic or Google."
)

DEVICE_CHOICES = (
    ("auto", "Automatic (the fastest available)"),
    ("cpu", "Processor (CPU): works everywhere"),
    ("cuda", "NVIDIA graphics card (CUDA)"),
    ("mps", "Apple silicon graphics (MPS)"),
)

_Index = QModelIndex | QPersistentModelIndex


def detect_devices() -> list[str]:
    """The devices the embedding model can use here (imports torch: call it off the GUI thread)."""
    from core.embeddings import available_devices  # not at start-up (~50 ms)

    devices = list(available_devices())
    return devices or ["cpu"]


def _runs_on(profile: ModelProfile) -> str:
    if profile.is_local:
        file = Path(profile.gguf_path).name if profile.gguf_path else "bundled model"
        return f"This computer ({file})"
    if profile.api_bases:
        extra = f" (+{len(profile.api_bases) - 1} more)" if len(profile.api_bases) > 1 else ""
        return profile.api_bases[0] + extra
    return "The provider's usual address"


# ------------------------------------------------------------------------------ table model
_KEY_WORDS = {"session": "until EvalDesk closes", "environment": "environment variable"}
_KEY_TIPS = {
    "session": "This computer has no password store: the key is kept in memory until EvalDesk "
               "closes (hidden). Type it again next time, or set an environment variable.",
    "environment": "The key is read from an environment variable (hidden).",
}


def _source(name: str) -> str | None:
    try:
        return secrets.key_source(name)
    except Exception:  # noqa: BLE001 - a broken keyring must not break the settings window
        return None


class ProfilesTableModel(HeaderedTableModel):
    """The model profiles as a read-only table: name, model, where it runs, key, default."""

    HEADERS = ("Name", "Model", "Runs on", "API key", "Default", "Your texts")

    def __init__(
        self,
        settings: Settings,
        key_state: Callable[[str], bool] = _key_state,
        parent=None,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._key_state = key_state
        self._keys: list[bool] = []
        self.reload()

    def reload(self) -> None:
        self.beginResetModel()
        self._keys = [
            False if p.is_local else self._key_state(p.name) for p in self._settings.profiles
        ]
        self.endResetModel()

    def profile(self, row: int) -> ModelProfile:
        return self._settings.profiles[row]

    def row_of(self, name: str) -> int | None:
        for row, profile in enumerate(self._settings.profiles):
            if profile.name == name:
                return row
        return None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._settings.profiles)


    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._settings.profiles):
            return None
        profile = self._settings.profiles[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return profile.name
            if column == 1:
                return profile.model
            if column == 2:
                return _runs_on(profile)
            if column == 3:
                if profile.is_local:
                    return "not needed"
                if not self._keys[index.row()]:
                    return "none"
                return _KEY_WORDS.get(_source(profile.name), "stored")
            if column == 4:
                return "default" if profile.name == self._settings.default_profile else ""
            if column == 5:
                where = destination(profile).short
                if profile.is_local and not profile.gguf_path:
                    return f"{where} (a demo)"
                return where
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 5:
                return destination(profile).label
            if column == 3 and not profile.is_local:
                return (
                    _KEY_TIPS.get(_source(profile.name),
                                  "A key is stored in your system's password store (hidden).")
                    if self._keys[index.row()]
                    else "No key stored. Servers on your own network often need none; hosted "
                    "providers also accept their usual environment variable (e.g. "
                    "OPENAI_API_KEY)."
                )
            if column == 2:
                return "\n".join(profile.api_bases) or _runs_on(profile)
            if column == 4:
                return "Wizards use the default profile unless you pick another."
        return None




# ------------------------------------------------------------------------------ settings dialog
def _tab(intro: str, *parts: Any) -> QWidget:
    """A tab of the dialog: its wrapped first paragraph, then ``parts`` (widgets.add_parts)."""
    page = QWidget()
    add_parts(QVBoxLayout(page), (wrapped_label(intro, ""), *parts))
    return page


class SettingsDialog(QDialog):
    """All settings, saved as they change. Open it with ``open()`` (never ``exec()``)."""

    settings_saved = Signal()

    #: Finds the embedding devices (runs in the loop's executor). Tests replace it.
    detect_devices: Callable[[], list[str]] = staticmethod(detect_devices)

    def __init__(self, settings: Settings, store: SettingsStore, parent: QWidget | None = None):
        super().__init__(parent)
        self.settings = settings
        self.store = store
        self.profile_dialog: ProfileDialog | None = None
        self.local_dialog: QDialog | None = None
        self.devices: list[str] | None = None
        self._detect_task: asyncio.Task | None = None
        self._test_task: asyncio.Task | None = None
        self.setWindowTitle("EvalDesk settings")
        self.resize(1140, 660)

        intro = QLabel(
            "Settings apply to every project on this computer and are saved as you change them. "
            "API keys are kept in your system's password store, never in a file."
        )
        intro.setWordWrap(True)
        intro.setObjectName("intro")

        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_models_tab(), "Language models")
        self.tabs.addTab(self._build_embedding_tab(), "Text embeddings")
        self.tabs.addTab(self._build_you_tab(), "You")

        self.save_error = QLabel()
        self.save_error.setObjectName("errorText")
        self.save_error.setWordWrap(True)
        self.save_error.hide()
        if store.read_only:
            self.save_error.setText(
                "Changes made now are used in this session only: "
                + (store.problem or "the settings file cannot be written.")
            )
            self.save_error.show()
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        close.accepted.connect(self.accept)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.save_error)
        layout.addWidget(close)

    # -- tabs ---------------------------------------------------------------------------------
    def _build_models_tab(self) -> QWidget:
        note = note_box(BUNDLED_MODEL_NOTE)
        note.setTextFormat(Qt.TextFormat.RichText)

        self.profiles_model = ProfilesTableModel(self.settings, parent=self)
        self.profiles_view = QTableView()
        self.profiles_view.setModel(self.profiles_model)
        self.profiles_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.profiles_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.profiles_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.profiles_view.verticalHeader().hide()
        self.profiles_view.setAlternatingRowColors(True)
        self.profiles_view.setWordWrap(False)
        header = self.profiles_view.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        self.profiles_view.setColumnWidth(0, 250)
        self.profiles_view.setColumnWidth(1, 190)
        self.profiles_view.setColumnWidth(2, 150)
        self.profiles_view.doubleClicked.connect(lambda _i: self.edit_profile())
        self.profiles_view.selectionModel().selectionChanged.connect(self._update_buttons)
        self.profiles_model.modelReset.connect(self._update_buttons)

        self.add_button = QPushButton("Add…")
        self.add_button.setToolTip("Add a profile for a hosted provider or a server.")
        self.add_button.clicked.connect(lambda: self.add_profile())
        self.add_local_button = QPushButton("Use a model file on this computer…")
        self.add_local_button.setToolTip(
            "Add a profile that runs a .gguf model file inside EvalDesk, without internet."
        )
        self.add_local_button.clicked.connect(lambda: self.add_profile(local=True))
        self.edit_button = QPushButton("Edit…")
        self.edit_button.clicked.connect(self.edit_profile)
        self.delete_button = QPushButton("Delete")
        self.delete_button.setToolTip("Delete the profile and its stored API key.")
        self.delete_button.clicked.connect(self.delete_profile)
        self.default_button = QPushButton("Make default")
        self.default_button.clicked.connect(self.make_default)
        self.test_button = QPushButton("Test connection")
        self.test_button.setToolTip("Send one tiny request with the selected profile.")
        self.test_button.clicked.connect(self.test_selected)
        self.discover_button = push_button(
            "Look for models on this computer…",
            "Find Ollama, LM Studio, a llama.cpp server or vLLM running on this computer and "
            "add their models in one click. Only this computer is asked.", self.open_discovery)
        self.manager_button = push_button(
            "Download or import a model file…",
            "Recommended model files that run inside EvalDesk (and whether they fit this "
            "computer), or a .gguf file you already have.", self.open_model_manager)
        self.test_result = QLabel()
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = hbox(self.add_button, self.add_local_button, self.edit_button,
                       self.delete_button, self.default_button, 1, self.test_button)
        local_row = hbox(self.discover_button, self.manager_button, 1)
        self._update_buttons()
        return _tab(
            "Every method that asks a language model goes through one of these profiles. The "
            "default profile is preselected in the wizards.",
            note, (self.profiles_view, 1), buttons, local_row, self.test_result)

    def _build_embedding_tab(self) -> QWidget:
        self.bundled_radio = QRadioButton(
            "The bundled all-MiniLM-L6-v2: small and fast, good for English text"
        )
        self.folder_radio = QRadioButton("A sentence-transformers model folder on this computer")
        self.folder_radio.setToolTip(
            "A folder holding a sentence-transformers model (it contains modules.json), for "
            "example all-mpnet-base-v2, downloaded once by your IT department."
        )
        self.embedding_group = exclusive(self, self.bundled_radio, self.folder_radio)
        self.folder_edit = QLineEdit(self.settings.embedding.model_path)
        self.folder_edit.setPlaceholderText("Folder of a sentence-transformers model")
        self.folder_edit.setToolTip(self.folder_radio.toolTip())
        self.folder_browse = QPushButton("Browse…")
        self.folder_browse.clicked.connect(self._browse_folder)
        folder_row = QHBoxLayout()
        folder_row.setContentsMargins(22, 0, 0, 0)
        folder_row.addWidget(self.folder_edit, 1)
        folder_row.addWidget(self.folder_browse)
        (self.folder_radio if self.settings.embedding.model_path else self.bundled_radio
         ).setChecked(True)
        self.embedding_error = error_label()

        self.device_combo = QComboBox()
        for value, label in DEVICE_CHOICES:
            self.device_combo.addItem(label, value)
        self.device_combo.setCurrentIndex(
            max(0, self.device_combo.findData(self.settings.embedding.device))
        )
        self.device_combo.setToolTip(
            "Where the embedding model runs. A graphics card is much faster on large inputs; "
            "“Automatic” picks CUDA, then Apple MPS, then the processor."
        )
        self.device_label = hint_label("Detected on this computer: detecting…")

        model_box = group_box("Embedding model", self.bundled_radio, self.folder_radio,
                              folder_row, self.embedding_error)
        device_box = group_box("Device", hbox("Run on:", (self.device_combo, 1)),
                               self.device_label)

        self.bundled_radio.toggled.connect(self._embedding_changed)
        self.folder_edit.editingFinished.connect(self._embedding_changed)
        self.device_combo.currentIndexChanged.connect(self._embedding_changed)
        self._update_embedding_widgets()
        return _tab(
            "AQER compares answers by turning each into numbers that capture its meaning (an "
            "embedding). This runs on this computer; nothing is sent anywhere.",
            model_box, device_box, 1)

    def _build_you_tab(self) -> QWidget:
        self.user_edit = QLineEdit(self.settings.user_name)
        self.user_edit.setToolTip("Shown in exports next to your edits.")
        self.user_edit.editingFinished.connect(self._user_changed)
        form = QFormLayout()
        form.addRow("Your name:", self.user_edit)
        return _tab(
            "Your name is stored with every change you make to generated material (personas, "
            "checklists, extracted text), so exports can say who changed what.",
            form, 1)

    # -- saving -------------------------------------------------------------------------------
    def save(self) -> bool:
        try:
            self.store.save(self.settings)
        except SettingsProblem as exc:
            self.save_error.setText(str(exc))
            self.save_error.show()
            return False
        self.settings_saved.emit()
        return True

    # -- profiles -----------------------------------------------------------------------------
    def selected_row(self) -> int | None:
        rows = self.profiles_view.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def select_profile(self, name: str) -> None:
        row = self.profiles_model.row_of(name)
        if row is not None:
            self.profiles_view.selectRow(row)

    @Slot()
    def _update_buttons(self, *args) -> None:
        has = self.selected_row() is not None
        for button in (self.edit_button, self.delete_button, self.default_button,
                       self.test_button):
            button.setEnabled(has)

    def add_profile(self, local: bool = False) -> ProfileDialog:
        return self._open_profile_dialog(None, local=local)

    @Slot()
    def edit_profile(self) -> ProfileDialog | None:
        row = self.selected_row()
        if row is None:
            return None
        return self._open_profile_dialog(self.profiles_model.profile(row))

    def _open_profile_dialog(self, profile: ModelProfile | None,
                             local: bool | None = None) -> ProfileDialog:
        dialog = ProfileDialog(self.settings, profile, self, local=local)
        dialog.accepted.connect(lambda: self.apply_profile(dialog))
        self.profile_dialog = dialog
        return open_window(dialog)

    def apply_profile(self, dialog: ProfileDialog) -> None:
        """Store the profile of a confirmed editor (and its key in the keyring)."""
        profile = dialog.result_profile
        if profile is None:
            return
        old = dialog.original_name
        action, key = dialog.key_change()
        self.settings.upsert_profile(profile, old_name=old)
        problem, title = "", "The API key is kept until EvalDesk closes"
        try:
            if old and old != profile.name:  # renamed: the key moves with the profile
                moved = secrets.get_api_key(old) if action == "keep" else None
                if moved and secrets.key_source(old) == "environment":
                    moved = None  # an environment variable cannot move
                secrets.delete_api_key(old)
                if moved:  # never dropped: kept for this session when it cannot be stored
                    problem = secrets.keep_api_key(profile.name, moved)[1]
            if action in ("set", "session") and key:
                problem = secrets.keep_api_key(profile.name, key,
                                               session_only=action == "session")[1]
            elif action == "remove":
                secrets.delete_api_key(profile.name)
        except secrets.KeyringUnavailable as exc:  # only removing raises
            problem, title = str(exc), "The API key was not removed"
        if problem:
            self._warn(title, problem)
        self.save()
        self.profiles_model.reload()
        self.select_profile(profile.name)

    @Slot()
    def open_discovery(self) -> QDialog:
        """“Look for models on this computer” (the search starts when it opens)."""
        from desktop.model_discovery import DiscoveryDialog  # not at start-up (~40 ms)

        return self._open_local_dialog(DiscoveryDialog(self.settings, self.save, self))

    @Slot()
    def open_model_manager(self) -> QDialog:
        from desktop.model_manager import ModelManagerDialog  # not at start-up (~0.1 s)

        return self._open_local_dialog(ModelManagerDialog(self.settings, self.save, self))

    def _open_local_dialog(self, dialog: QDialog) -> QDialog:
        dialog.profile_added.connect(self._profile_added)
        self.local_dialog = dialog
        return open_window(dialog)

    @Slot(str)
    def _profile_added(self, name: str) -> None:
        self.profiles_model.reload()
        self.select_profile(name)

    @Slot()
    def delete_profile(self) -> QMessageBox | None:
        row = self.selected_row()
        if row is None:
            return None
        name = self.profiles_model.profile(row).name
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Delete profile",
            f"Delete the profile “{name}”? Its stored API key is removed from your password "
            "store too. Projects keep the results they already have.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        box.button(QMessageBox.StandardButton.Yes).setText("Delete")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(
            lambda result: self.remove_profile(name)
            if result == QMessageBox.StandardButton.Yes else None
        )
        box.open()
        return box

    def remove_profile(self, name: str) -> None:
        self.settings.remove_profile(name)
        try:
            secrets.delete_api_key(name)
        except secrets.KeyringUnavailable as exc:
            self._warn("The API key was not removed", str(exc))
        self.save()
        self.profiles_model.reload()

    @Slot()
    def make_default(self) -> None:
        row = self.selected_row()
        if row is None:
            return
        name = self.profiles_model.profile(row).name
        self.settings.default_profile = name
        self.save()
        self.profiles_model.reload()
        self.select_profile(name)

    @Slot()
    def test_selected(self) -> None:
        row = self.selected_row()
        if row is None:
            return
        profile = self.profiles_model.profile(row)
        key = None if profile.is_local else secrets.get_api_key(profile.name)
        self._test_task = run_connection_test(
            self, profile, key, self.test_button, self.test_result
        )

    # -- embeddings ---------------------------------------------------------------------------
    def _update_embedding_widgets(self) -> None:
        folder = self.folder_radio.isChecked()
        self.folder_edit.setEnabled(folder)
        self.folder_browse.setEnabled(folder)

    @Slot()
    def _browse_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(
            self, "Choose a sentence-transformers model folder",
            self.folder_edit.text() or str(Path.home()),
        )
        if path:
            self.folder_edit.setText(path)
            self._embedding_changed()

    @Slot()
    def _embedding_changed(self, *args) -> None:
        self._update_embedding_widgets()
        problem = ""
        model_path = ""
        if self.folder_radio.isChecked():
            text = self.folder_edit.text().strip().strip('"')
            folder = Path(text).expanduser() if text else None
            if folder is None:
                problem = "Choose the model folder, or pick the bundled model."
            elif not folder.is_dir():
                problem = f"The folder {folder} was not found. Choose it with Browse…."
            elif not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
                problem = (
                    f"{folder} does not look like a sentence-transformers model (it has no "
                    "modules.json or config.json). Choose the folder that holds the model files."
                )
            else:
                model_path = str(folder)
        self.embedding_error.setText(problem)
        self.embedding_error.setVisible(bool(problem))
        device = self.device_combo.currentData() or "auto"
        changed = False
        if not problem and self.settings.embedding.model_path != model_path:
            self.settings.embedding.model_path = model_path
            changed = True
        if self.settings.embedding.device != device:
            self.settings.embedding.device = device
            changed = True
        self._show_devices()
        if changed:
            self.save()

    def start_device_detection(self) -> asyncio.Task | None:
        """Find the available devices in the executor (torch import) and show them."""
        if self._detect_task is not None:
            return self._detect_task
        detect = type(self).detect_devices

        async def _go() -> None:
            note = ""
            try:
                loop = asyncio.get_running_loop()
                devices = await loop.run_in_executor(None, detect)
            except (ImportError, AttributeError) as exc:
                devices = ["cpu"]
                note = (
                    f" (Graphics cards could not be checked: {exc}. The processor is always "
                    "available.)"
                )
            except Exception as exc:  # torch failing to initialise a driver, ...
                log.warning("Device detection failed", exc_info=True)
                devices = ["cpu"]
                note = f" (Graphics cards could not be checked: {type(exc).__name__}: {exc}.)"
            if isValid(self):
                self.devices = devices
                self._device_note = note
                self._show_devices()

        try:
            self._detect_task = spawn(_go(), where="detecting embedding devices")
        except RuntimeError:
            self.device_label.setText("Detected on this computer: not checked.")
        return self._detect_task

    def _show_devices(self) -> None:
        if self.devices is None:
            self.device_label.setText("Detected on this computer: detecting…")
            return
        names = {"cpu": "processor (cpu)", "cuda": "NVIDIA GPU (cuda)", "mps": "Apple GPU (mps)"}
        found = ", ".join(names.get(d, d) for d in self.devices)
        chosen = self.device_combo.currentData()
        text = f"Detected on this computer: {found}."
        if chosen == "auto":
            best = next((d for d in ("cuda", "mps", "cpu") if d in self.devices), "cpu")
            text += f" Automatic will use {names.get(best, best)}."
        elif chosen not in self.devices:
            text += (
                f" {names.get(chosen, chosen).capitalize()} was not found here: EvalDesk "
                "will use the processor instead."
            )
        self.device_label.setText(text + getattr(self, "_device_note", ""))

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._detect_task is None:
            self.start_device_detection()

    # -- you ----------------------------------------------------------------------------------
    @Slot()
    def _user_changed(self) -> None:
        name = self.user_edit.text().strip()
        if name and name != self.settings.user_name:
            self.settings.user_name = name
            self.save()

    # -- misc ---------------------------------------------------------------------------------
    def _warn(self, title: str, text: str) -> QMessageBox:
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok,
                          self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box

    def done(self, result: int) -> None:
        for task in (self._test_task,):
            if task is not None and not task.done():
                task.cancel()
        super().done(result)

