"""MAJ-Eval's prompt templates (``resources/prompts/majeval/<name>.txt``).

A template file has comment lines (``#``), a ``version:`` line, then a ``[system]`` and/or a
``[user]`` section. Placeholders are ``$name`` (``string.Template``; ``$$`` is a literal dollar),
so JSON examples need no escaping. ``template_version`` (``majeval/<version>``) goes into the LLM
cache key: change the version whenever the wording changes, so old answers are not reused.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from core import prompts

METHOD = "majeval"


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
    return prompts.template_path(METHOD, name)


@cache
def load(name: str) -> PromptTemplate:
    """Read and parse one template (cached for the process)."""
    path, raw = prompts.read_template(METHOD, name)
    return parse(name, raw, path)


def parse(name: str, raw: str, path: Path | str = "") -> PromptTemplate:
    version, sections = prompts.split_template(raw)
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
