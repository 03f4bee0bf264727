"""The prompt templates of InteractEval (``resources/prompts/interacteval/<name>.txt``).

A template file has comment lines (``#``), a ``version:`` line, then a ``[system]`` and a
``[user]`` section. Placeholders are ``$name`` (``string.Template``; ``$$`` is a literal dollar),
so JSON examples need no escaping. The version goes into the LLM cache key: change it whenever
the wording changes, so cached answers to the old wording are not reused.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from core import prompts

METHOD = "interacteval"


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
    return prompts.template_path(METHOD, name)


@cache
def load(name: str) -> PromptTemplate:
    """Read and parse one template (cached for the process)."""
    path, raw = prompts.read_template(METHOD, name)
    return parse(name, raw, path)


def parse(name: str, raw: str, path: Path | str = "") -> PromptTemplate:
    version, sections = prompts.split_template(raw)
    if not version or "system" not in sections or "user" not in sections:
        raise ValueError(
            f"The prompt template {path or name} needs a 'version:' line and [system] and [user] "
            "sections."
        )
    return PromptTemplate(name, version, sections["system"].strip(), sections["user"].strip())
