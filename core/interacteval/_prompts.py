"""The prompt templates of InteractEval (``resources/prompts/interacteval/<name>.txt``).

A template file has comment lines (``#``), a ``version:`` line, then a ``[system]`` and a
``[user]`` section. Placeholders are ``$name`` (``string.Template``; ``$$`` is a literal dollar),
so JSON examples need no escaping. The version goes into the LLM cache key: change it whenever
the wording changes, so cached answers to the old wording are not reused.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from core import paths

FOLDER = ("prompts", "interacteval")


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    system: str
    user: str

    @property
    def template_version(self) -> str:
        """The string passed as ``template_version`` to the gateway (part of the cache key)."""
        return f"interacteval/{self.version}"

    def messages(self, **values: Any) -> list[dict[str, str]]:
        """The system and user messages with every ``$placeholder`` filled in."""
        text = {k: str(v) for k, v in values.items()}
        try:
            system = string.Template(self.system).substitute(text)
            user = string.Template(self.user).substitute(text)
        except KeyError as exc:  # a bug in our code or in an edited template
            raise ValueError(
                f"The prompt template '{self.name}' needs a value for {exc.args[0]!r}."
            ) from None
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def template_path(name: str) -> Path:
    return paths.resources_dir().joinpath(*FOLDER, f"{name}.txt")


@cache
def load(name: str) -> PromptTemplate:
    """Read and parse one template (cached for the process)."""
    path = template_path(name)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FileNotFoundError(
            f"The prompt template {path} is missing ({exc.strerror}). Reinstall EvalDesk."
        ) from exc
    return parse(name, raw, path)


_SECTION = re.compile(r"^\[(system|user)\]\s*$", re.MULTILINE)


def parse(name: str, raw: str, path: Path | str = "") -> PromptTemplate:
    lines = raw.splitlines()
    version = ""
    head_end = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("[") and _SECTION.match(stripped):
            head_end = i
            break
        if stripped.startswith("version:"):
            version = stripped.split(":", 1)[1].strip()
    body = "\n".join(lines[head_end:])
    parts = _SECTION.split(body)
    sections = {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 1, 2)}
    if not version or "system" not in sections or "user" not in sections:
        raise ValueError(
            f"The prompt template {path or name} needs a 'version:' line and [system] and [user] "
            "sections."
        )
    return PromptTemplate(name, version, sections["system"].strip(), sections["user"].strip())
