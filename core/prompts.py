"""Reading the methods' prompt template files (``resources/prompts/<method>/<name>.txt``).

A template file has comment lines (``#``), a ``version:`` line, then ``[system]`` and/or
``[user]`` sections. Each method decides which sections it needs and how it fills them (see
``core.interacteval._prompts`` and ``core.majeval._prompts``); this module only finds, reads and
splits the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from core import paths

__all__ = ["read_template", "split_template", "template_path"]

_SECTION = re.compile(r"^\[(system|user)\]\s*$", re.MULTILINE)


def template_path(method: str, name: str) -> Path:
    """Where the template ``name`` of ``method`` is installed."""
    return paths.resources_dir().joinpath("prompts", method, f"{name}.txt")


def read_template(method: str, name: str) -> tuple[Path, str]:
    """The template file's path and text; a missing file says to reinstall EvalDesk."""
    path = template_path(method, name)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FileNotFoundError(
            f"The prompt template {path} is missing ({exc.strerror}). Reinstall EvalDesk."
        ) from exc
    return path, raw


def split_template(raw: str) -> tuple[str, dict[str, str]]:
    """(version, {"system"/"user": section text}) of a template; the version is "" when the
    head (before the first section) has no ``version:`` line. Sections are stripped."""
    lines = raw.splitlines()
    version = ""
    start = len(lines)
    for i, line in enumerate(lines):
        stripped = line.strip()
        if _SECTION.match(stripped):
            start = i
            break
        if stripped.startswith("version:"):
            version = stripped.split(":", 1)[1].strip()
    parts = _SECTION.split("\n".join(lines[start:]))
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    return version, sections
