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
    "expected_speed",
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
    """Memory and free disk (bytes), processor cores, and how fast this computer was measured
    writing with a model (``measured``: (file size in bytes, tokens written per second) of a
    model timed here, e.g. the built-in one); None where they could not be measured."""

    total_ram: int | None
    free_disk: int | None
    folder: str = ""
    cores: int | None = None
    measured: tuple[int, float] | None = None


def computer(folder: Path | None = None) -> Computer:
    """Measure this computer's memory and the free space where models are kept."""
    target = folder or models_dir()
    try:
        free = shutil.disk_usage(target).free
    except OSError:
        free = None
    return Computer(total_ram=_total_ram(), free_disk=free, folder=str(target),
                    cores=os.cpu_count(), measured=_measured_here())


def _measured_here() -> tuple[int, float] | None:
    """How fast the built-in model wrote on this computer, when it was timed (a time estimate
    or a run keeps its calls: ``core.llm.estimate.recalled_speed``): its file size and tokens
    per second."""
    from core.llm.estimate import fit_speed, recalled_speed
    from core.settings import LOCAL_MODEL_PREFIX

    calls = recalled_speed(LOCAL_MODEL_PREFIX + "gemma-3-270m")
    speed = fit_speed(calls, local=True) if calls else None
    if speed is None or speed.completion_s <= 0:
        return None
    try:
        from core.llm._local import bundled_gguf_path

        size = bundled_gguf_path().stat().st_size
    except Exception:  # noqa: BLE001 - the bundled file is not there: nothing to scale from
        return None
    return size, 1.0 / speed.completion_s


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
    """Whether a model fits: ``ok`` False means it will not run or not be stored here;
    ``speed`` how fast it is expected to write here (:func:`expected_speed`)."""

    ok: bool
    ram: str
    disk: str
    speed: str = ""
    speed_class: str = ""

    @property
    def summary(self) -> str:
        return " ".join(part for part in (self.ram, self.disk, self.speed) if part)


#: Tokens a second a model writes on one processor core per GB of its file, without a
#: graphics card (writing reads the whole file for every token, so a file twice as big writes
#: half as fast; more cores help up to about 8). A rough rule, used only when this computer was
#: never measured writing with a model.
TOKENS_PER_CORE_GB = 5.0
#: Speed classes by tokens written per second: (at least, word, what it means).
SPEED_CLASSES = (
    (20.0, "fast", "an answer in a few seconds"),
    (6.0, "usable", "an answer in under a minute"),
    (2.0, "slow", "minutes per answer; a run of many items takes hours"),
    (0.0, "very slow", "many minutes per answer; only for a handful of items"),
)


def expected_speed(model: RecommendedModel, here: Computer) -> tuple[str, str]:
    """(speed class, one plain sentence) of ``model`` writing on ``here``: from how fast a
    model was measured writing here, scaled by file size, else from the processor cores (a
    14B model "fits" a 2-core computer without a graphics card, but writes about a token a
    second). ("", "") when nothing is known of this computer."""
    if here.measured is not None:
        size, rate = here.measured
        tokens = rate * size / model.size_bytes
        basis = "measured on this computer with the built-in model, scaled to its size"
    elif here.cores:
        tokens = TOKENS_PER_CORE_GB * min(here.cores, 8) * GB / model.size_bytes
        basis = (f"worked out from this computer's {here.cores} processor "
                 f"core{'s' if here.cores != 1 else ''}, without a graphics card")
    else:
        return "", ""
    word, means = next((w, m) for least, w, m in SPEED_CLASSES if tokens >= least)
    shown = f"{tokens:.0f}" if tokens >= 10 else f"{tokens:.1f}"
    return word, (f"Expected speed here: {word}, about {shown} tokens a second ({means}; "
                  f"{basis}).")


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
    word, speed = expected_speed(model, here)
    return Fit(ok, ram, disk, speed, word)
