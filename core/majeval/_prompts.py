"""MAJ-Eval's prompt templates (``resources/prompts/majeval/<name>.txt``), read through
``core.prompts`` (one template type and one ``ask`` for every method)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import prompts
from core.prompts import PromptTemplate

METHOD = "majeval"

__all__ = ["METHOD", "PromptTemplate", "ask", "load", "parse", "template_path"]


def template_path(name: str) -> Path:
    return prompts.template_path(METHOD, name)


def load(name: str) -> PromptTemplate:
    return prompts.load(METHOD, name)


def parse(name: str, raw: str, path: Path | str = "") -> PromptTemplate:
    return prompts.parse(METHOD, name, raw, path)


async def ask(llm: Any, template: str, schema: type, values: dict[str, Any], **options: Any) -> Any:
    """One structured call with a MAJ-Eval template (see :func:`core.prompts.ask`)."""
    return await prompts.ask(llm, load(template), schema, values, **options)
