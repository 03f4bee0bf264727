"""MAJ-Eval's items file in the project: a copy kept (so a moved or deleted file can still be
read), read with the app's column guesses, and named as the results name it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.majeval.inputs import ItemsSetup, OpenedItems, open_items
from core.majeval.session.choices import MajEvalChoices
from core.project.inputs import InputRef, open_input, store_input

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = ["ITEMS_INPUT_KIND", "items_file", "items_source", "store_items", "store_items_file"]


#: The kind of the items file kept in the project.
ITEMS_INPUT_KIND = "majeval_items"


def store_items_file(project: Project, setup: ItemsSetup, path: str | Path) -> ItemsSetup:
    """Copy the items file into the project (so a moved file can still be read)."""
    ref = store_input(project, ITEMS_INPUT_KIND, path)
    return setup.model_copy(update={"path": ref.path, "file_name": ref.file_name,
                                    "input_id": ref.input_id, "content_hash": ref.content_hash,
                                    "sheet": None, "columns": {}, "human": [],
                                    "human_names": {}, "header_row": None})


def items_file(project: Project, setup: ItemsSetup) -> Path | None:
    """The items file: where it was chosen, or the project's copy when it is gone (None when
    neither is there). A file that changed since it was chosen is read as it is now."""
    if not setup.path and setup.input_id is None:
        return None
    ref = InputRef(path=setup.path, file_name=setup.file_name, content_hash=setup.content_hash,
                   input_id=setup.input_id)
    try:
        return open_input(project, ITEMS_INPUT_KIND, ref).path
    except FileNotFoundError:
        return None


def store_items(project: Project, path: str | Path, *, sheet: str | None = None,
                header_row: int | None = None) -> OpenedItems:
    """Keep a copy of the items file ``path`` in the project and read it (``sheet``: the sheet,
    else the first; ``header_row``: the row of the column names, else found) with the columns
    guessed as the app guesses them. Blocking: run it in an executor. The choices are not
    changed (:meth:`MajEvalSession.use_items` takes what was read). Raises ``OSError`` when the
    file cannot be read; problems of its content come back in ``read.errors``."""
    setup = store_items_file(project, ItemsSetup(), path)
    return open_items(path, setup.model_copy(update={"sheet": sheet, "header_row": header_row}))


def items_source(choices: MajEvalChoices) -> str:
    """The items file and sheet, as the results name them."""
    setup = choices.items
    name = setup.file_name or Path(setup.path).name
    if not name:
        return ""
    return f"{name}, sheet {setup.sheet}" if setup.sheet else name
