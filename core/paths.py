"""Where EvalDesk keeps its files.

Per-user folders come from ``platformdirs``. Setting ``EVALDESK_HOME`` puts all of them under one
folder instead (tests use it so they never touch a real user's settings, cache or logs).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

APP_NAME = "EvalDesk"


def _home_override(kind: str) -> Path | None:
    home = os.environ.get("EVALDESK_HOME")
    return Path(home) / kind if home else None


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def user_config_dir() -> Path:
    return _ensure(_home_override("config") or Path(platformdirs.user_config_dir(APP_NAME, False)))


def user_data_dir() -> Path:
    return _ensure(_home_override("data") or Path(platformdirs.user_data_dir(APP_NAME, False)))


def user_cache_dir() -> Path:
    return _ensure(_home_override("cache") or Path(platformdirs.user_cache_dir(APP_NAME, False)))


def user_log_dir() -> Path:
    return _ensure(_home_override("logs") or Path(platformdirs.user_log_dir(APP_NAME, False)))


def resources_dir() -> Path:
    """The shipped ``resources/`` folder (beside the source tree, or inside a PyInstaller bundle)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def current_umask() -> int:
    """The process's umask (read from /proc where it exists, so it is never changed)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def temp_file_beside(target: Path, *, prefix: str, suffix: str) -> Path:
    """An empty temporary file in ``target``'s folder, to be renamed onto ``target`` when it is
    complete (so ``target`` is never seen half-written).

    ``tempfile.mkstemp`` creates its file readable by its owner only (0600), and the rename
    keeps that: a workbook or project the user saved on a shared drive would be unreadable to
    colleagues. The file gets the permissions a plainly created file would have instead
    (0666 minus the umask, e.g. 0644). Raises ``OSError`` when the folder is not writable.
    """
    import tempfile

    fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=Path(target).parent)
    try:
        if os.name == "posix":
            os.fchmod(fd, 0o666 & ~current_umask())
    finally:
        os.close(fd)
    return Path(name)
