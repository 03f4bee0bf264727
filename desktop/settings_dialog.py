"""Settings: language-model profiles (with keys in the OS keyring), embeddings, your name.

Changes are saved as they are made (profiles when their editor is confirmed), through
:class:`core.settings.SettingsStore`. API keys go to the keyring through :mod:`core.secrets` and
are never written to a file; the dialogs only say whether a key is stored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from core import secrets
from core.settings import (
    LOCAL_MODEL_PREFIX,
    ModelProfile,
    Settings,
    SettingsProblem,
    SettingsStore,
    bundled_profile,
)
from desktop.errors import spawn
from desktop.widgets import note_box

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

MODEL_STRING_HELP = (
    "The model as litellm names it, usually provider/model. Examples:\n"
    "  openai/gpt-4o-mini\n"
    "  anthropic/claude-sonnet-4-5\n"
    "  gemini/gemini-2.0-flash\n"
    "  ollama/llama3.1   (API base http://localhost:11434)\n"
    "  hosted_vllm/Qwen/Qwen2.5-7B-Instruct   (API base: your vLLM server)\n"
    "  openai/<model>   for any OpenAI-compatible server (API base: its address)\n"
    "Every provider is listed at docs.litellm.ai/docs/providers."
)

API_BASES_HELP = (
    "The address of the server, when it is not the provider's usual one: Ollama "
    "(http://localhost:11434), vLLM, LM Studio, a department server, Azure. Leave empty for "
    "OpenAI, Anthropic, Google and other hosted providers.\n"
    "One address per line. Several addresses of servers running the same model share the "
    "work between them (load balancing)."
)

DEVICE_CHOICES = (
    ("auto", "Automatic (the fastest available)"),
    ("cpu", "Processor (CPU): works everywhere"),
    ("cuda", "NVIDIA graphics card (CUDA)"),
    ("mps", "Apple silicon graphics (MPS)"),
)

_Index = QModelIndex | QPersistentModelIndex


# ------------------------------------------------------------------------------ plain helpers
def validate_api_bases(text: str) -> tuple[list[str], list[str]]:
    """Split ``text`` into addresses (one per line) and plain messages for malformed ones."""
    bases: list[str] = []
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        parsed = urlparse(line)
        if (
            parsed.scheme not in ("http", "https")
            or not parsed.netloc
            or " " in line
            or parsed.netloc.startswith(":")
        ):
            problems.append(
                f"Line {number} of the API base URLs, “{line}”, is not a web address. Write it "
                "like http://localhost:11434 or https://api.example.com/v1 (starting with "
                "http:// or https://)."
            )
        else:
            bases.append(line)
    return bases, problems


def detect_devices() -> list[str]:
    """The devices the embedding model can use here (imports torch: call it off the GUI thread)."""
    from core.embeddings import available_devices

    devices = list(available_devices())
    return devices or ["cpu"]


def _key_state(name: str) -> bool:
    try:
        return secrets.has_api_key(name)
    except Exception:  # a broken keyring must not break the settings window
        return False


def _runs_on(profile: ModelProfile) -> str:
    if profile.is_local:
        file = Path(profile.gguf_path).name if profile.gguf_path else "bundled model"
        return f"This computer ({file})"
    if profile.api_bases:
        extra = f" (+{len(profile.api_bases) - 1} more)" if len(profile.api_bases) > 1 else ""
        return profile.api_bases[0] + extra
    return "The provider's usual address"


# ------------------------------------------------------------------------------ table model
class ProfilesTableModel(QAbstractTableModel):
    """The model profiles as a read-only table: name, model, where it runs, key, default."""

    HEADERS = ("Name", "Model", "Runs on", "API key", "Default")

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

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

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
                return "stored" if self._keys[index.row()] else "none"
            if column == 4:
                return "default" if profile.name == self._settings.default_profile else ""
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 3 and not profile.is_local:
                return (
                    "A key is stored in your system's password store (hidden)."
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

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole):
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(self.HEADERS)
        ):
            return self.HEADERS[section]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


# ------------------------------------------------------------------------------ connection test
async def check_profile(profile: ModelProfile, api_key: str | None) -> tuple[bool, str]:
    """Run ``core.llm.check_connection`` and say in words what happened.

    Raises when the check itself could not run (``core.llm`` missing or broken); the caller
    shows "Could not test: ...".
    """
    from core.llm import check_connection  # lazy: imports litellm

    timeout = float(profile.timeout_s) * 2 + 15
    check = await asyncio.wait_for(check_connection(profile, api_key), timeout=timeout)
    if check.ok:
        reply = (check.reply or "").strip().replace("\n", " ")
        if len(reply) > 120:
            reply = reply[:117] + "…"
        if check.cost is None:
            cost = "price unknown"
        else:
            cost = f"${check.cost:.4f}" if check.cost else "no cost"
        text = (
            f"It works. The model answered in {check.latency_s:.1f} s: “{reply}” "
            f"({check.prompt_tokens} tokens sent, {check.completion_tokens} received, {cost})."
        )
        return True, f"{text} {check.warning}" if check.warning else text
    return False, f"The connection did not work: {check.message}"


# ------------------------------------------------------------------------------ profile editor
KeyAction = Literal["keep", "set", "remove"]


class ProfileDialog(QDialog):
    """Add or edit one model profile. Confirm with OK (validated); the caller applies it."""

    def __init__(
        self,
        settings: Settings,
        profile: ModelProfile | None = None,
        parent: QWidget | None = None,
        *,
        local: bool | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.original = profile
        self.original_name = profile.name if profile else None
        self.result_profile: ModelProfile | None = None
        self._key_action: str = "new"
        self._test_task: asyncio.Task | None = None
        self.setWindowTitle("Edit model profile" if profile else "Add a model profile")
        self.setMinimumWidth(660)

        intro = QLabel(
            "A profile says which language model EvalDesk talks to and how. You can keep "
            "several (for example a small local model for trying things and a hosted model for "
            "real runs) and pick one in each wizard."
        )
        intro.setWordWrap(True)
        intro.setObjectName("intro")

        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("e.g. GPT-4o mini (work account)")
        self.name_edit.setToolTip("A name you will recognise in the wizards. Must be unique.")

        # -- where the model runs
        self.service_radio = QRadioButton(
            "A model service: a hosted provider, Ollama, vLLM or another server"
        )
        self.local_radio = QRadioButton("Use a model file on this computer (.gguf)")
        self.local_radio.setToolTip(
            "Runs a GGUF model file inside EvalDesk with llama.cpp, fully offline. Larger files "
            "(3 to 8 billion parameters) give much better results than the bundled one."
        )
        group = QButtonGroup(self)
        group.addButton(self.service_radio)
        group.addButton(self.local_radio)

        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("e.g. openai/gpt-4o-mini or ollama/llama3.1")
        self.model_edit.setToolTip(MODEL_STRING_HELP)
        model_hint = QLabel(
            "The litellm model string: provider/model, e.g. <i>openai/gpt-4o-mini</i>, "
            "<i>ollama/llama3.1</i>. Hover for more examples."
        )
        model_hint.setObjectName("hint")
        model_hint.setWordWrap(True)
        self.bases_edit = QPlainTextEdit()
        self.bases_edit.setPlaceholderText(
            "Leave empty for hosted providers. For Ollama: http://localhost:11434"
        )
        self.bases_edit.setToolTip(API_BASES_HELP)
        self.bases_edit.setFixedHeight(56)
        self.bases_edit.setTabChangesFocus(True)

        self.key_status = QLabel()
        self.key_status.setWordWrap(True)
        self.key_status.setObjectName("hint")
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("Paste the API key here")
        self.key_edit.setToolTip(
            "Kept in your system's password store (Keychain, Credential Manager, Secret "
            "Service), never in a file. It is shown as dots."
        )
        self.key_stored_label = QLabel("●●●●●●●●  stored")
        self.key_stored_label.setToolTip("The key itself is never shown.")
        self.replace_key_button = QPushButton("Replace key")
        self.replace_key_button.clicked.connect(self._replace_key)
        self.remove_key_button = QPushButton("Remove key")
        self.remove_key_button.clicked.connect(self._remove_key)
        self.keep_key_button = QPushButton("Keep the stored key")
        self.keep_key_button.clicked.connect(self._keep_key)
        key_buttons = QHBoxLayout()
        key_buttons.addWidget(self.key_edit, 1)
        key_buttons.addWidget(self.key_stored_label, 1)
        key_buttons.addWidget(self.replace_key_button)
        key_buttons.addWidget(self.remove_key_button)
        key_buttons.addWidget(self.keep_key_button)
        key_box = QVBoxLayout()
        key_box.setSpacing(2)
        key_box.addLayout(key_buttons)
        key_box.addWidget(self.key_status)

        self.service_box = QWidget()
        service_form = QFormLayout(self.service_box)
        service_form.setContentsMargins(22, 0, 0, 0)
        model_column = QVBoxLayout()
        model_column.setSpacing(2)
        model_column.addWidget(self.model_edit)
        model_column.addWidget(model_hint)
        service_form.addRow("Model:", model_column)
        service_form.addRow("API base URL(s):", self.bases_edit)
        service_form.addRow("API key:", key_box)

        self.gguf_edit = QLineEdit()
        self.gguf_edit.setPlaceholderText("Empty = the bundled Gemma 3 270M (for trying only)")
        self.gguf_edit.setToolTip("The .gguf file of an instruction-tuned model.")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_gguf)
        gguf_row = QHBoxLayout()
        gguf_row.addWidget(self.gguf_edit, 1)
        gguf_row.addWidget(browse)
        self.local_box = QWidget()
        local_form = QFormLayout(self.local_box)
        local_form.setContentsMargins(22, 0, 0, 0)
        local_form.addRow("Model file:", gguf_row)

        where = QGroupBox("Where the model runs")
        where_layout = QVBoxLayout(where)
        where_layout.addWidget(self.service_radio)
        where_layout.addWidget(self.service_box)
        where_layout.addWidget(self.local_radio)
        where_layout.addWidget(self.local_box)

        # -- generation settings
        self.temperature_spin = QDoubleSpinBox()
        self.temperature_spin.setRange(0.0, 2.0)
        self.temperature_spin.setSingleStep(0.1)
        self.temperature_spin.setDecimals(2)
        self.temperature_spin.setToolTip(
            "How much the answers vary. 0 (the default) gives the most repeatable scores."
        )
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(-1, 2_147_483_647)
        self.seed_spin.setSpecialValueText("none")
        self.seed_spin.setToolTip(
            "A fixed number makes repeated runs more alike where the provider supports it. "
            "Set to “none” (the lowest value) to send no seed."
        )
        self.max_tokens_spin = QSpinBox()
        self.max_tokens_spin.setRange(1, 1_000_000)
        self.max_tokens_spin.setToolTip("The longest answer the model may write, in tokens.")
        self.concurrency_spin = QSpinBox()
        self.concurrency_spin.setRange(1, 256)
        self.concurrency_spin.setToolTip(
            "How many requests go to the model at the same time. Higher is faster if the "
            "provider allows it; lower it if you see 'rate limit' messages. Local models: 1."
        )
        self.timeout_spin = QDoubleSpinBox()
        self.timeout_spin.setRange(1, 3600)
        self.timeout_spin.setDecimals(0)
        self.timeout_spin.setSuffix(" s")
        self.timeout_spin.setToolTip("Give up on one call after this many seconds (then retry).")
        self.retries_spin = QSpinBox()
        self.retries_spin.setRange(0, 10)
        self.retries_spin.setToolTip("How often a failed call is tried again before it counts "
                                     "as failed.")
        self.context_spin = QSpinBox()
        self.context_spin.setRange(512, 10_000_000)
        self.context_spin.setSingleStep(1024)
        self.context_spin.setToolTip(
            "How much text the model can read at once (in tokens). Long documents are split "
            "to fit."
        )
        for spin in (self.temperature_spin, self.seed_spin, self.max_tokens_spin,
                     self.concurrency_spin, self.timeout_spin, self.retries_spin,
                     self.context_spin):
            spin.setMinimumWidth(130)
            spin.setMaximumWidth(170)
        gen = QGroupBox("How it answers")
        gen_form = QFormLayout(gen)
        left = QFormLayout()
        left.addRow("Temperature:", self.temperature_spin)
        left.addRow("Seed:", self.seed_spin)
        left.addRow("Max tokens per answer:", self.max_tokens_spin)
        left.addRow("Context window:", self.context_spin)
        right = QFormLayout()
        right.addRow("Max concurrent calls:", self.concurrency_spin)
        right.addRow("Timeout:", self.timeout_spin)
        right.addRow("Retries:", self.retries_spin)
        columns = QHBoxLayout()
        columns.addLayout(left)
        columns.addSpacing(18)
        columns.addLayout(right)
        columns.addStretch(1)
        gen_form.addRow(columns)

        self.error_label = QLabel()
        self.error_label.setObjectName("errorText")
        self.error_label.setWordWrap(True)
        self.error_label.hide()

        self.test_button = QPushButton("Test connection")
        self.test_button.setToolTip(
            "Send one tiny request with these settings (and the key you typed or stored) and "
            "show the answer, the time it took and its cost."
        )
        self.test_button.clicked.connect(self._test)
        self.test_result = QLabel()
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("Profile name:", self.name_edit)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(where)
        layout.addWidget(gen)
        layout.addLayout(test_row)
        layout.addWidget(self.error_label)
        layout.addStretch(1)
        layout.addWidget(self.buttons)

        self.service_radio.toggled.connect(self._update_mode)
        self._load(profile, local)
        self.resize(720, self.sizeHint().height())

    # -- loading ------------------------------------------------------------------------------
    def _load(self, profile: ModelProfile | None, local: bool | None) -> None:
        base = profile or ModelProfile(name="new", model="openai/gpt-4o-mini")
        is_local = base.is_local if local is None else local
        if profile is None and is_local:
            base = bundled_profile().model_copy(update={"name": "new"})
        self.name_edit.setText(profile.name if profile else "")
        self.model_edit.setText("" if base.is_local else (base.model if profile else ""))
        self.bases_edit.setPlainText("\n".join(base.api_bases))
        self.gguf_edit.setText(base.gguf_path)
        self.temperature_spin.setValue(base.temperature)
        self.seed_spin.setValue(-1 if base.seed is None else base.seed)
        self.max_tokens_spin.setValue(base.max_tokens)
        self.concurrency_spin.setValue(base.max_concurrency)
        self.timeout_spin.setValue(base.timeout_s)
        self.retries_spin.setValue(base.max_retries)
        self.context_spin.setValue(base.context_window)
        (self.local_radio if is_local else self.service_radio).setChecked(True)
        stored = bool(profile) and not base.is_local and _key_state(profile.name)
        self._key_action = "keep" if stored else "new"
        self._update_key_widgets()
        self._update_mode()

    # -- key ----------------------------------------------------------------------------------
    @property
    def key_stored(self) -> bool:
        return self._key_action in ("keep", "replace", "remove")

    def _update_key_widgets(self) -> None:
        action = self._key_action
        if action == "keep":
            self.key_status.setText("A key is stored for this profile. It stays hidden.")
        elif action == "replace":
            self.key_status.setText("Type the new key; it replaces the stored one when you "
                                    "press OK.")
        elif action == "remove":
            self.key_status.setText("The stored key will be removed when you press OK.")
        else:
            self.key_status.setText(
                "Hosted providers need a key; servers on your own network usually do not."
            )
        self.key_edit.setVisible(action in ("new", "replace"))
        self.key_stored_label.setVisible(action in ("keep", "remove"))
        self.key_stored_label.setEnabled(action == "keep")
        self.replace_key_button.setVisible(action == "keep")
        self.remove_key_button.setVisible(action == "keep")
        self.keep_key_button.setVisible(action in ("replace", "remove"))
        if action == "keep":
            self.key_edit.clear()

    @Slot()
    def _replace_key(self) -> None:
        self._key_action = "replace"
        self._update_key_widgets()
        self.key_edit.setFocus()

    @Slot()
    def _remove_key(self) -> None:
        self._key_action = "remove"
        self.key_edit.clear()
        self._update_key_widgets()

    @Slot()
    def _keep_key(self) -> None:
        self._key_action = "keep"
        self._update_key_widgets()

    def key_change(self) -> tuple[KeyAction, str | None]:
        """What to do with the keyring when this dialog is applied."""
        if self.local_radio.isChecked():
            return ("remove", None) if self.key_stored else ("keep", None)
        typed = self.key_edit.text().strip()
        if self._key_action in ("new", "replace") and typed:
            return "set", typed
        if self._key_action == "remove":
            return "remove", None
        return "keep", None

    def key_for_test(self) -> str | None:
        action, typed = self.key_change()
        if action == "set":
            return typed
        if action == "keep" and self.original_name and self._key_action == "keep":
            return secrets.get_api_key(self.original_name)
        return None

    # -- mode ---------------------------------------------------------------------------------
    @Slot()
    def _update_mode(self) -> None:
        service = self.service_radio.isChecked()
        self.service_box.setEnabled(service)
        self.local_box.setEnabled(not service)

    @Slot()
    def _browse_gguf(self) -> None:
        start = self.gguf_edit.text() or str(Path.home())
        path, _ = QFileDialog.getOpenFileName(
            self, "Choose a model file", start, "GGUF model files (*.gguf);;All files (*)"
        )
        if path:
            self.gguf_edit.setText(path)

    # -- validation ---------------------------------------------------------------------------
    def collect(self) -> tuple[ModelProfile | None, list[str]]:
        """The profile described by the form, or plain messages saying what to fix."""
        problems: list[str] = []
        name = self.name_edit.text().strip()
        if not name:
            problems.append("Give the profile a name, for example “GPT-4o mini”.")
        elif name != self.original_name and any(
            p.name == name for p in self.settings.profiles
        ):
            problems.append(
                f"There is already a profile called “{name}”. Choose another name, or edit "
                "that profile instead."
            )
        local = self.local_radio.isChecked()
        bases: list[str] = []
        gguf = ""
        if local:
            gguf = self.gguf_edit.text().strip().strip('"')
            if gguf:
                path = Path(gguf).expanduser()
                if not path.is_file():
                    problems.append(
                        f"The model file {path} was not found. Choose it with Browse…, or leave "
                        "the field empty to use the bundled model."
                    )
                elif path.suffix.lower() != ".gguf":
                    problems.append(
                        f"{path.name} is not a .gguf file. EvalDesk runs model files in the GGUF "
                        "format (they end in .gguf)."
                    )
                gguf = str(path)
                model = LOCAL_MODEL_PREFIX + path.stem
            else:
                model = bundled_profile().model
        else:
            model = self.model_edit.text().strip()
            if not model:
                problems.append(
                    "Enter the model, for example openai/gpt-4o-mini or ollama/llama3.1 "
                    "(hover over the field for more examples)."
                )
            elif any(ch.isspace() for ch in model):
                problems.append(
                    f"The model “{model}” contains a space. Model strings have no spaces, for "
                    "example openai/gpt-4o-mini."
                )
            elif model.startswith(LOCAL_MODEL_PREFIX):
                problems.append(
                    f"Model strings starting with {LOCAL_MODEL_PREFIX} are for model files on "
                    "this computer: choose “Use a model file on this computer” instead."
                )
            bases, base_problems = validate_api_bases(self.bases_edit.toPlainText())
            problems += base_problems
        if problems:
            return None, problems
        seed = self.seed_spin.value()
        try:
            profile = ModelProfile(
                name=name,
                model=model,
                api_bases=bases,
                temperature=self.temperature_spin.value(),
                seed=None if seed < 0 else seed,
                max_tokens=self.max_tokens_spin.value(),
                timeout_s=self.timeout_spin.value(),
                max_concurrency=self.concurrency_spin.value(),
                max_retries=self.retries_spin.value(),
                context_window=self.context_spin.value(),
                gguf_path=gguf,
            )
        except ValueError as exc:  # pydantic: field limits
            return None, [f"Please check the values: {exc}"]
        return profile, []

    def show_problems(self, problems: list[str]) -> None:
        self.error_label.setText("\n".join(problems))
        self.error_label.setVisible(bool(problems))

    def accept(self) -> None:
        profile, problems = self.collect()
        self.show_problems(problems)
        if profile is None:
            return
        self.result_profile = profile
        super().accept()

    # -- test connection ------------------------------------------------------------------------
    @Slot()
    def _test(self) -> None:
        profile, problems = self.collect()
        if profile is None:
            self.show_problems(problems)
            return
        self.show_problems([])
        self._test_task = run_connection_test(self, profile, self.key_for_test(),
                                              self.test_button, self.test_result)

    def done(self, result: int) -> None:
        if self._test_task is not None and not self._test_task.done():
            self._test_task.cancel()
        super().done(result)


def run_connection_test(
    parent: QWidget,
    profile: ModelProfile,
    api_key: str | None,
    button: QPushButton,
    result_label: QLabel,
) -> asyncio.Task | None:
    """Start a connection test; the outcome appears in ``result_label``. Never raises."""

    button.setEnabled(False)
    button.setText("Testing…")
    result_label.setObjectName("hint")
    result_label.setText(
        f"Sending one short request to {profile.model}. This can take up to "
        f"{profile.timeout_s:.0f} seconds (local models load first)."
    )
    _repolish(result_label)

    async def _go() -> None:
        ok = False
        try:
            ok, message = await check_profile(profile, api_key)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the test could not even run
            log.warning("Connection test could not run", exc_info=True)
            message = f"Could not test: {_exception_text(exc)}"
            if isValid(parent):
                box = QMessageBox(
                    QMessageBox.Icon.Warning, "Could not test the connection", message,
                    QMessageBox.StandardButton.Ok, parent,
                )
                box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
                box.open()
        if isValid(result_label):
            result_label.setObjectName("okText" if ok else "errorText")
            result_label.setText(message)
            _repolish(result_label)
        if isValid(button):
            button.setEnabled(True)
            button.setText("Test connection")

    try:
        return spawn(_go(), where="the connection test")
    except RuntimeError as exc:  # no event loop (should not happen in the app)
        result_label.setText(f"Could not test: {exc}")
        button.setEnabled(True)
        button.setText("Test connection")
        return None


def _exception_text(exc: BaseException) -> str:
    if isinstance(exc, ImportError):
        return (
            "the part of EvalDesk that talks to language models is not available in this "
            f"installation ({exc})."
        )
    if isinstance(exc, asyncio.TimeoutError):
        return "no answer in time. Check the address and that the server is running."
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _repolish(widget: QWidget) -> None:
    widget.style().unpolish(widget)
    widget.style().polish(widget)


# ------------------------------------------------------------------------------ settings dialog
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
        self.devices: list[str] | None = None
        self._detect_task: asyncio.Task | None = None
        self._test_task: asyncio.Task | None = None
        self.setWindowTitle("EvalDesk settings")
        self.resize(960, 660)

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
        page = QWidget()
        text = QLabel(
            "Every method that asks a language model goes through one of these profiles. The "
            "default profile is preselected in the wizards."
        )
        text.setWordWrap(True)
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
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.ResizeToContents)
        self.profiles_view.setColumnWidth(0, 300)
        self.profiles_view.setColumnWidth(1, 230)
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
        self.test_result = QLabel()
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = QHBoxLayout()
        for button in (self.add_button, self.add_local_button, self.edit_button,
                       self.delete_button, self.default_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.test_button)

        layout = QVBoxLayout(page)
        layout.addWidget(text)
        layout.addWidget(note)
        layout.addWidget(self.profiles_view, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.test_result)
        self._update_buttons()
        return page

    def _build_embedding_tab(self) -> QWidget:
        page = QWidget()
        text = QLabel(
            "AQER compares answers by turning each into numbers that capture its meaning (an "
            "embedding). This runs on this computer; nothing is sent anywhere."
        )
        text.setWordWrap(True)
        self.bundled_radio = QRadioButton(
            "The bundled all-MiniLM-L6-v2: small and fast, good for English text"
        )
        self.folder_radio = QRadioButton("A sentence-transformers model folder on this computer")
        self.folder_radio.setToolTip(
            "A folder holding a sentence-transformers model (it contains modules.json), for "
            "example all-mpnet-base-v2, downloaded once by your IT department."
        )
        group = QButtonGroup(page)
        group.addButton(self.bundled_radio)
        group.addButton(self.folder_radio)
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
        self.embedding_error = QLabel()
        self.embedding_error.setObjectName("errorText")
        self.embedding_error.setWordWrap(True)
        self.embedding_error.hide()

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
        self.device_label = QLabel("Detected on this computer: detecting…")
        self.device_label.setObjectName("hint")
        self.device_label.setWordWrap(True)

        model_box = QGroupBox("Embedding model")
        model_layout = QVBoxLayout(model_box)
        model_layout.addWidget(self.bundled_radio)
        model_layout.addWidget(self.folder_radio)
        model_layout.addLayout(folder_row)
        model_layout.addWidget(self.embedding_error)
        device_box = QGroupBox("Device")
        device_layout = QVBoxLayout(device_box)
        device_row = QHBoxLayout()
        device_row.addWidget(QLabel("Run on:"))
        device_row.addWidget(self.device_combo, 1)
        device_layout.addLayout(device_row)
        device_layout.addWidget(self.device_label)

        layout = QVBoxLayout(page)
        layout.addWidget(text)
        layout.addWidget(model_box)
        layout.addWidget(device_box)
        layout.addStretch(1)

        self.bundled_radio.toggled.connect(self._embedding_changed)
        self.folder_edit.editingFinished.connect(self._embedding_changed)
        self.device_combo.currentIndexChanged.connect(self._embedding_changed)
        self._update_embedding_widgets()
        return page

    def _build_you_tab(self) -> QWidget:
        page = QWidget()
        text = QLabel(
            "Your name is stored with every change you make to generated material (personas, "
            "checklists, extracted text), so exports can say who changed what."
        )
        text.setWordWrap(True)
        self.user_edit = QLineEdit(self.settings.user_name)
        self.user_edit.setToolTip("Shown in exports next to your edits.")
        self.user_edit.editingFinished.connect(self._user_changed)
        form = QFormLayout()
        form.addRow("Your name:", self.user_edit)
        layout = QVBoxLayout(page)
        layout.addWidget(text)
        layout.addLayout(form)
        layout.addStretch(1)
        return page

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
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.apply_profile(dialog))
        self.profile_dialog = dialog
        dialog.open()
        return dialog

    def apply_profile(self, dialog: ProfileDialog) -> None:
        """Store the profile of a confirmed editor (and its key in the keyring)."""
        profile = dialog.result_profile
        if profile is None:
            return
        old = dialog.original_name
        action, key = dialog.key_change()
        self.settings.upsert_profile(profile, old_name=old)
        try:
            if old and old != profile.name:  # renamed: the key moves with the profile
                moved = secrets.get_api_key(old) if action == "keep" else None
                secrets.delete_api_key(old)
                if moved:
                    secrets.set_api_key(profile.name, moved)
            if action == "set" and key:
                secrets.set_api_key(profile.name, key)
            elif action == "remove":
                secrets.delete_api_key(profile.name)
        except secrets.KeyringUnavailable as exc:
            self._warn("The API key was not stored", str(exc))
        self.save()
        self.profiles_model.reload()
        self.select_profile(profile.name)

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

