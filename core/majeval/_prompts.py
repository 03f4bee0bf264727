"""MAJ-Eval's prompt templates (``resources/prompts/majeval/<name>.txt``), read through
``core.prompts`` (one template type and one ``ask`` for every method)."""

from __future__ import annotations

from typing import Any

from core import prompts
from core.prompts import MethodPrompts, PromptTemplate

METHOD = "majeval"

__all__ = ["METHOD", "PromptTemplate", "ask", "load", "parse", "template_path"]

_BOUND = MethodPrompts(METHOD)
template_path, load, parse = _BOUND.template_path, _BOUND.load, _BOUND.parse


async def ask(llm: Any, template: str, schema: type, values: dict[str, Any], **options: Any) -> Any:
    """One structured call with a MAJ-Eval template (see :func:`core.prompts.ask`)."""
    return await prompts.ask(llm, load(template), schema, values, **options)
