"""MAJ-Eval's prompt templates (``resources/prompts/majeval/<name>.txt``).

A template file has comment lines (``#``), a ``version:`` line, then a ``[system]`` and/or a
``[user]`` section. Placeholders are ``$name`` (``string.Template``; ``$$`` is a literal dollar),
so JSON examples need no escaping. ``template_version`` (``majeval/<version>``) goes into the LLM
cache key: change the version whenever the wording changes, so old answers are not reused.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from core import paths

FOLDER = ("prompts", "majeval")
_SECTION = re.compile(r"^\[(system|user)\]\s*$", re.MULTILINE)


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    system: str
    user: str

    @property
    def template_version(self) -> str:
        return f"majeval/{self.version}"

    def fill(self, part: str, **values: Any) -> str:
        """One section (``"system"`` or ``"user"``) with every placeholder filled in."""
        text = {k: str(v) for k, v in values.items()}
        try:
            return string.Template(getattr(self, part)).substitute(text)
        except KeyError as exc:
            raise ValueError(
                f"The prompt template '{self.name}' needs a value for {exc.args[0]!r}."
            ) from None

    def messages(self, **values: Any) -> list[dict[str, str]]:
        """The template's sections as chat messages (system first), filled in."""
        out = []
        for part in ("system", "user"):
            if getattr(self, part):
                out.append({"role": part, "content": self.fill(part, **values)})
        return out


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


def parse(name: str, raw: str, path: Path | str = "") -> PromptTemplate:
    version = ""
    lines = raw.splitlines()
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
    if not version or not sections:
        raise ValueError(f"The prompt template {path or name} needs a 'version:' line and a "
                         "[system] or [user] section.")
    return PromptTemplate(name, version, sections.get("system", ""), sections.get("user", ""))


async def ask(llm: Any, template: str, schema: type, values: dict[str, Any], *,
              cancel: Any = None, repeat: int = 0) -> Any:
    """One structured call with a template. ``core.llm.LLMFailure`` and ``Cancelled`` pass
    through (the caller decides what a failure means for its unit of work)."""
    prompt = load(template)
    return await llm.complete_json(prompt.messages(**values), schema, repeat=repeat,
                                   template_version=prompt.template_version, cancel=cancel)
