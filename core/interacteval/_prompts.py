"""InteractEval's prompt templates (``resources/prompts/interacteval/<name>.txt``), read through
``core.prompts`` (one template type and one ``ask`` for every method)."""

from __future__ import annotations

from pathlib import Path

from core import prompts
from core.prompts import PromptTemplate

METHOD = "interacteval"

__all__ = ["METHOD", "PromptTemplate", "load", "parse", "template_path"]


def template_path(name: str) -> Path:
    return prompts.template_path(METHOD, name)


def load(name: str) -> PromptTemplate:
    return prompts.load(METHOD, name)


def parse(name: str, raw: str, path: Path | str = "") -> PromptTemplate:
    return prompts.parse(METHOD, name, raw, path)
