"""The package face ``desktop`` imports its names lazily (``__getattr__``), so editors and type
checkers read them from ``desktop/__init__.pyi``: the stub must name the same objects."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import desktop

STUB = Path(desktop.__file__).with_suffix(".pyi")


def _stub_names() -> tuple[dict[str, str], list[str]]:
    """(name -> the module the stub imports it from, the stub's __all__)."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    where: dict[str, str] = {}
    listed: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                assert alias.asname == alias.name, f"{alias.name}: re-export it as itself"
                where[alias.name] = node.module or ""
        elif isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            listed = list(ast.literal_eval(node.value))
    return where, listed


def test_the_stub_names_every_lazy_name_from_its_module():
    where, listed = _stub_names()
    assert listed == desktop.__all__
    assert where == desktop._WHERE
    for name, module in where.items():
        assert getattr(desktop, name) is getattr(importlib.import_module(module), name), name
