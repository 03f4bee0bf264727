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
