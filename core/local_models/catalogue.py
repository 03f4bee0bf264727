"""The recommended model files, in our own words, and whether each fits this computer.

The list lives in ``resources/models/recommended.json`` (data, not code). Every entry is a real,
published GGUF file of an instruction-tuned model on huggingface.co (the Q4_K_M quantisation,
which keeps most of the quality at about a third of the size). Sizes are the ones published on
the model pages, rounded; the download itself checks the exact size and SHA-256 the server
publishes. Nothing here touches the network.

``computer()`` measures the memory and free disk of this computer; ``fit(model, computer)``
says whether a model will run here, plainly. Tests pass their own :class:`Computer`.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from core import paths

__all__ = [
    "BUNDLED_DEMO",
    "RECOMMENDED",
    "Computer",
    "Fit",
    "RecommendedModel",
    "computer",
    "find_recommended",
    "fit",
    "format_size",
    "models_dir",
]

GB = 1_000_000_000


@dataclass(frozen=True)
class RecommendedModel:
    key: str                 # short name for the command line: "qwen2.5-7b"
    name: str                # "Qwen2.5 7B Instruct"
    parameters: str          # "7.6 billion"
    file_name: str
    repo: str                # the Hugging Face repository holding the file
    size_bytes: int          # as published, rounded (the download checks the exact size)
    ram_bytes: int           # memory it needs while answering (file + working memory)
    licence: str
    licence_url: str
    good_for: str
    quality: str
    sha256: str = ""         # listed here when known; otherwise the server's published one
    download_url: str = ""   # another address of the same file (tests: a local server)
    context_window: int = 8192

    @property
    def url(self) -> str:
        return self.download_url or (
            f"https://huggingface.co/{self.repo}/resolve/main/{self.file_name}")

    @property
    def page_url(self) -> str:
        return f"https://huggingface.co/{self.repo}"


def _load_recommended() -> tuple[RecommendedModel, ...]:
    """The entries of ``resources/models/recommended.json`` (shipped with the app)."""
    path = paths.resources_dir() / "models" / "recommended.json"
    return tuple(RecommendedModel(**entry)
                 for entry in json.loads(path.read_text(encoding="utf-8"))["models"])


#: The recommended models, smallest first (the data: ``resources/models/recommended.json``).
RECOMMENDED: tuple[RecommendedModel, ...] = _load_recommended()

#: What the bundled model is, for lists that show it beside the recommended ones.
BUNDLED_DEMO = (
    "The built-in model (Gemma 3 270M) is a demo for trying the app: it runs anywhere and sends "
    "nothing, but it is far too small for results you can trust (it often finds nothing in a "
    "document, or writes one-question checklists)."
)


def find_recommended(key: str) -> RecommendedModel:
    """The recommended model called ``key`` (its short name or file name). KeyError if none."""
    wanted = key.strip().lower()
    for model in RECOMMENDED:
        if wanted in (model.key, model.file_name.lower(), model.name.lower()):
            return model
    names = ", ".join(m.key for m in RECOMMENDED)
    raise KeyError(f"There is no recommended model called '{key}'. The list has: {names}.")


def models_dir() -> Path:
    """Where downloaded and copied model files live: the per-user data folder."""
    folder = paths.user_data_dir() / "models"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# ---------------------------------------------------------------------------- this computer
@dataclass(frozen=True)
class Computer:
    """Memory and free disk (bytes); None where they could not be measured."""

    total_ram: int | None
    free_disk: int | None
    folder: str = ""


def computer(folder: Path | None = None) -> Computer:
    """Measure this computer's memory and the free space where models are kept."""
    target = folder or models_dir()
    try:
        free = shutil.disk_usage(target).free
    except OSError:
        free = None
    return Computer(total_ram=_total_ram(), free_disk=free, folder=str(target))


def _total_ram() -> int | None:
    try:
        if sys.platform == "win32":
            class _Status(ctypes.Structure):
                _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                            ("ullTotalPhys", ctypes.c_ulonglong),
                            ("ullAvailPhys", ctypes.c_ulonglong),
                            ("ullTotalPageFile", ctypes.c_ulonglong),
                            ("ullAvailPageFile", ctypes.c_ulonglong),
                            ("ullTotalVirtual", ctypes.c_ulonglong),
                            ("ullAvailVirtual", ctypes.c_ulonglong),
                            ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]

            status = _Status()
            status.dwLength = ctypes.sizeof(_Status)
            if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore
                return int(status.ullTotalPhys)
            return None
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


@dataclass(frozen=True)
class Fit:
    """Whether a model fits: ``ok`` False means it will not run or not be stored here."""

    ok: bool
    ram: str
    disk: str

    @property
    def summary(self) -> str:
        return f"{self.ram} {self.disk}"


def format_size(size: int | None) -> str:
    if size is None:
        return "unknown"
    if size >= GB:
        return f"{size / GB:.1f} GB"
    if size >= 10_000_000:
        return f"{size / 1e6:.0f} MB"
    if size >= 100_000:
        return f"{size / 1e6:.1f} MB"
    return f"{max(1, round(size / 1000))} KB"


def fit(model: RecommendedModel, here: Computer, *, already: int = 0) -> Fit:
    """Does ``model`` fit ``here``? ``already``: bytes of it already downloaded."""
    ok = True
    if here.total_ram is None:
        ram = f"Needs about {format_size(model.ram_bytes)} of memory (this computer's could " \
              "not be measured)."
    elif here.total_ram < model.ram_bytes:
        ok = False
        ram = (f"Needs about {format_size(model.ram_bytes)} of memory; this computer has "
               f"{format_size(here.total_ram)}: it will not run well here.")
    else:
        ram = (f"Needs about {format_size(model.ram_bytes)} of memory; this computer has "
               f"{format_size(here.total_ram)}.")
    needed = max(0, model.size_bytes - already)
    if here.free_disk is None:
        disk = f"Needs {format_size(needed)} of disk (free space could not be measured)."
    elif here.free_disk < needed + GB // 2:  # keep some room for everything else
        ok = False
        disk = (f"Needs {format_size(needed)} of disk; only {format_size(here.free_disk)} is "
                "free. Free some space first.")
    else:
        disk = f"Needs {format_size(needed)} of disk; {format_size(here.free_disk)} is free."
    return Fit(ok, ram, disk)
