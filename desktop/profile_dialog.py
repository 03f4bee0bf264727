"""Add or edit one model profile (with its key in the OS keyring), and the connection test.

On a computer without a password store the dialog says so and offers to keep the key until
EvalDesk closes (:func:`core.secrets.set_session_key`) or to read it from an environment variable.

Moved out of ``desktop.settings_dialog`` (which still exports these names) to keep each module
short. API keys go to the keyring through :mod:`core.secrets` and are never written to a file.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from core import secrets
from core.settings import LOCAL_MODEL_PREFIX, ModelProfile, Settings, bundled_profile
from desktop.errors import spawn
from desktop.widgets import exclusive, hint_label

__all__ = [
    "API_BASES_HELP",
    "MODEL_STRING_HELP",
    "ProfileDialog",
    "check_profile",
    "run_connection_test",
    "validate_api_bases",
]

log = logging.getLogger("evaldesk.settings")

MODEL_STRING_HELP = (
    "Which model: the service, a slash, then the model's name as the service lists it. "
    "Examples:\n"
    "  openai/gpt-4o-mini\n"
    "  anthropic/claude-sonnet-4-5\n"
    "  gemini/gemini-2.0-flash\n"
    "  ollama/llama3.1   (server address http://localhost:11434)\n"
    "  hosted_vllm/Qwen/Qwen2.5-7B-Instruct   (server address: your vLLM server)\n"
    "  openai/<model>   for any server that works like OpenAI's (server address: its own)\n"
    "Every service and how to write it is listed at docs.litellm.ai/docs/providers."
)

API_BASES_HELP = (
    "The address of the server, when it is not the provider's usual one: Ollama "
    "(http://localhost:11434), vLLM, LM Studio, a department server, Azure. Leave empty for "
    "OpenAI, Anthropic, Google and other hosted providers.\n"
    "One address per line. Several addresses of servers running the same model share the "
    "work between them (load balancing)."
)


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
                f"Line {number} of the server addresses, “{line}”, is not a web address. Write it "
                "like http://localhost:11434 or https://api.example.com/v1 (starting with "
                "http:// or https://)."
            )
        else:
            bases.append(line)
    return bases, problems


def _key_state(name: str) -> bool:
    try:
        return secrets.has_api_key(name)
    except Exception:  # noqa: BLE001 - a broken keyring must not break the settings window
        return False



# ------------------------------------------------------------------------------ connection test
async def check_profile(profile: ModelProfile, api_key: str | None) -> tuple[bool, str]:
    """Run ``core.llm.check_connection`` and say in words what happened.

    Raises when the check itself could not run (``core.llm`` missing or broken); the caller
    shows "Could not test: ...".
    """
    from core.llm import check_connection  # not at start-up (~0.3 s); the check loads litellm

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
KeyAction = Literal["keep", "set", "session", "remove"]


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
        self.where_group = exclusive(self, self.service_radio, self.local_radio)

        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("e.g. openai/gpt-4o-mini or ollama/llama3.1")
        self.model_edit.setToolTip(MODEL_STRING_HELP)
        model_hint = hint_label(
            "The service, a slash, then the model's name, e.g. <i>openai/gpt-4o-mini</i>, "
            "<i>ollama/llama3.1</i>. Hover for more examples."
        )
        self.bases_edit = QPlainTextEdit()
        self.bases_edit.setPlaceholderText(
            "Leave empty for hosted providers. For Ollama: http://localhost:11434"
        )
        self.bases_edit.setToolTip(API_BASES_HELP)
        self.bases_edit.setFixedHeight(56)
        self.bases_edit.setTabChangesFocus(True)

        self.key_status = hint_label()
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
        key_box.addWidget(self._no_store_choice())

        self.service_box = QWidget()
        service_form = QFormLayout(self.service_box)
        service_form.setContentsMargins(22, 0, 0, 0)
        model_column = QVBoxLayout()
        model_column.setSpacing(2)
        model_column.addWidget(self.model_edit)
        model_column.addWidget(model_hint)
        service_form.addRow("Model:", model_column)
        bases_label = QLabel("Server address(es):")
        bases_label.setToolTip(API_BASES_HELP)
        service_form.addRow(bases_label, self.bases_edit)
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
        self._no_store = not base.is_local and not secrets.password_store_available()
        if profile is not None and secrets.key_source(profile.name) == "environment":
            self.env_radio.setChecked(True)
        stored = bool(profile) and not base.is_local and _key_state(profile.name)
        self._key_action = "keep" if stored else "new"
        self._update_key_widgets()
        self._update_mode()

    # -- key ----------------------------------------------------------------------------------
    def _no_store_choice(self) -> QWidget:
        """What to do with the key on a computer without a password store (hidden elsewhere)."""
        self.no_store_box = QWidget()
        self.no_store_box.setObjectName("noStoreBox")
        self.no_store_label = QLabel(
            f"{secrets.NO_STORE} Choose how EvalDesk gets the key:"
        )
        self.no_store_label.setWordWrap(True)
        self.session_radio = QRadioButton("Use this key until EvalDesk closes")
        self.session_radio.setToolTip(
            "The key is kept in memory only, never written anywhere. You type it again the "
            "next time you start EvalDesk."
        )
        self.env_radio = QRadioButton()
        self.env_hint = hint_label()
        self.env_hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        choice = QButtonGroup(self.no_store_box)
        choice.addButton(self.session_radio)
        choice.addButton(self.env_radio)
        self.session_radio.setChecked(True)
        box = QVBoxLayout(self.no_store_box)
        box.setContentsMargins(0, 4, 0, 0)
        box.setSpacing(2)
        box.addWidget(self.no_store_label)
        box.addWidget(self.session_radio)
        box.addWidget(self.env_radio)
        box.addWidget(self.env_hint)
        self.session_radio.toggled.connect(self._update_key_widgets)
        self.model_edit.textChanged.connect(self._update_env_text)
        self.name_edit.textChanged.connect(self._update_env_text)
        self._no_store = False
        self.no_store_box.hide()
        return self.no_store_box

    def env_variable(self) -> str:
        """The environment variable to name: the provider's own, else EvalDesk's."""
        name = self.name_edit.text().strip() or "profile name"
        return (secrets.provider_variable(self.model_edit.text())
                or secrets.environment_variable(name))

    @Slot()
    def _update_env_text(self) -> None:
        variable = self.env_variable()
        self.env_radio.setText(f"Use the environment variable {variable}")
        self.env_hint.setText(
            f"Set {variable} to the key before starting EvalDesk (for example in your "
            "shell's start-up file); EvalDesk then reads the key from there every time."
        )
        self.key_edit.setPlaceholderText(
            f"Read from {variable}" if self.uses_environment else "Paste the API key here"
        )

    @property
    def uses_environment(self) -> bool:
        """No password store, and the user chose the environment variable."""
        return self._no_store and self.env_radio.isChecked()

    @property
    def key_stored(self) -> bool:
        return self._key_action in ("keep", "replace", "remove")

    def _update_key_widgets(self) -> None:
        action = self._key_action
        self.no_store_box.setVisible(self._no_store)
        self._update_env_text()
        source = (secrets.key_source(self.original_name)
                  if self.original_name and action == "keep" else None)
        if self.uses_environment:
            self.key_status.setText(
                "The key is read from the environment variable named below." if action in (
                    "new", "replace") else
                "The key kept until EvalDesk closes is forgotten when you press OK; the key is "
                "then read from the environment variable named below."
                if source == "session" else "A key is found for this profile. It stays hidden."
            )
        elif action == "keep" and source == "session":
            self.key_status.setText("A key is kept for this profile until EvalDesk closes. It "
                                    "stays hidden.")
        elif action == "keep" and source == "environment":
            self.key_status.setText(
                "The key comes from the environment variable "
                f"{secrets.environment_variable(self.original_name or '')}. It stays hidden."
            )
        elif action == "keep":
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
        # what is typed would not be kept: it is neither used nor editable
        self.key_edit.setEnabled(not self.uses_environment)
        self.key_edit.setToolTip(
            "Kept in memory only, until EvalDesk closes. It is shown as dots." if self._no_store
            else "Kept in your system's password store (Keychain, Credential Manager, Secret "
            "Service), never in a file. It is shown as dots."
        )
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
        """What to do with the key when this dialog is applied: "set" (the password store),
        "session" (kept in memory until EvalDesk closes), "remove" or "keep"."""
        if self.local_radio.isChecked():
            return ("remove", None) if self.key_stored else ("keep", None)
        typed = self.key_edit.text().strip()
        if self.uses_environment:
            kept = self.original_name and secrets.key_source(self.original_name) == "session"
            return ("remove", None) if kept or self._key_action == "remove" else ("keep", None)
        if self._key_action in ("new", "replace") and typed:
            return ("session" if self._no_store else "set"), typed
        if self._key_action == "remove":
            return "remove", None
        return "keep", None

    def key_for_test(self) -> str | None:
        """The key the run will use once this dialog is applied (the same lookup as a run)."""
        action, typed = self.key_change()
        if action in ("set", "session"):
            return typed
        if action == "remove":  # only the environment is left ("" = the provider's variable)
            name = self.name_edit.text().strip() or self.original_name or ""
            return os.environ.get(secrets.environment_variable(name)) or ""
        if self.original_name and self._key_action == "keep":  # it moves if renamed
            return secrets.get_api_key(self.original_name)
        return None  # the run's own lookup under the profile's name

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
    text = secrets.redact(str(exc).strip())  # a provider's words may repeat the key
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _repolish(widget: QWidget) -> None:
    widget.style().unpolish(widget)
    widget.style().polish(widget)

