"""InteractEval's prompt templates (``resources/prompts/interacteval/<name>.txt``), read through
``core.prompts`` (one template type and one ``ask`` for every method)."""

from __future__ import annotations

from core.prompts import MethodPrompts, PromptTemplate

METHOD = "interacteval"

__all__ = ["METHOD", "PromptTemplate", "load", "parse", "template_path"]

_BOUND = MethodPrompts(METHOD)
template_path, load, parse = _BOUND.template_path, _BOUND.load, _BOUND.parse
