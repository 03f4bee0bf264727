"""Input files kept in the project, and the one fingerprint helper.

Every file a user gives a method (an answers sheet, a PDF, an items sheet) is copied into the
project when it is read, so the project still works when the file is moved, renamed or deleted.
One rule, for every method:

* the user's file is read where they chose it;
* if it changed since it was last read, the new version is read, copied into the project again,
  and the user is told (results that depended on the old version are then out of date);
* if it is gone, the project's copy is used (written once into the user's cache folder, one
  folder per content, reused), and the user is told.

    ref = store_input(project, "aqer_answers", "answers.xlsx")     # chosen now
    opened = open_input(project, "aqer_answers", ref)              # later: path, ref, note
    read_table(opened.path) ...; if opened.note: show(opened.note)
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from core import paths

if TYPE_CHECKING:  # pragma: no cover
    from core.project._file import Project

__all__ = ["InputRef", "OpenedInput", "SheetChoice", "file_hash", "fingerprint", "open_input", "store_input"]

_CHUNK = 1 << 20


def file_hash(path: str | os.PathLike[str]) -> str:
    """sha256 of a file's bytes (hex), read in pieces."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def fingerprint(value: Any, length: int = 16) -> str:
    """A short, stable hash of a JSON-able value (pydantic models are dumped first; key order
    does not matter). What a result depends on is fingerprinted with this, everywhere."""
    text = json.dumps(_plain(value), ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


class InputRef(BaseModel):
    """Where an input file came from and which content was read (kept in a method's state)."""

    path: str = ""
    """Where the user chose the file ("" = none yet)."""
    file_name: str = ""
    content_hash: str = ""
    """sha256 of the bytes last read (the project's copy has the same)."""
    input_id: int | None = None
    """The copy in the project (``Project.get_input``)."""

    @property
    def has_file(self) -> bool:
        return bool(self.path or self.input_id)

    @property
    def shown_name(self) -> str:
        return self.file_name or Path(self.path).name or "(no file)"


class SheetChoice(InputRef):
    """A sheet a method reads: the file (:class:`InputRef`), the sheet, and which column holds
    each of the method's roles (role -> column; None = not used)."""

    sheet: str | None = None
    columns: dict[str, str | None] = Field(default_factory=dict)
    header_row: int | None = Field(default=None, ge=1)
    """The sheet's header row (spreadsheet row number); None: the row that reads like the
    header above the rows of data (``core.tables.find_header_row``)."""


@dataclass(frozen=True)
class OpenedInput:
    """An input ready to read: ``path``, the (possibly updated) ``ref`` and a ``note`` for the
    user ("" when the file was read where it was chosen, unchanged)."""

    path: Path
    ref: InputRef
    note: str = ""
    changed: bool = False
    """A new version of the user's file was read (results of the old one are out of date)."""


def store_input(project: Project, kind: str, path: str | os.PathLike[str]) -> InputRef:
    """Copy the file at ``path`` into the project (as an input of ``kind``) and return where
    it came from. Adding the same content again reuses the stored copy."""
    path = Path(path)
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    input_id = project.add_input(kind, path.name, data)
    return InputRef(path=str(path), file_name=path.name, content_hash=digest, input_id=input_id)


def open_input(project: Project, kind: str, ref: InputRef) -> OpenedInput:
    """The file to read for ``ref`` (see the module's rule). Raises FileNotFoundError with a
    plain message when neither the user's file nor a copy is there."""
    chosen = Path(ref.path) if ref.path else None
    if chosen is not None and chosen.is_file():
        if not ref.content_hash or file_hash(chosen) == ref.content_hash:
            return OpenedInput(chosen, ref)
        fresh = store_input(project, kind, chosen)
        return OpenedInput(
            chosen,
            fresh,
            f"The file {chosen.name} changed since it was last read; EvalDesk read the new "
            "version (results that came from the old one are out of date).",
            changed=True,
        )
    stored = project.get_input(ref.input_id) if ref.input_id is not None else None
    if stored is None or not isinstance(stored.payload, bytes):
        raise FileNotFoundError(
            f"The file {ref.path or ref.file_name or '(none)'} is gone and the project has no "
            "copy of it. Choose the file again."
        )
    copy = _cached_copy(stored.content_hash, ref.file_name or stored.name, stored.payload)
    return OpenedInput(
        copy,
        ref,
        f"The file {ref.path or ref.file_name} is no longer there; EvalDesk uses the copy "
        "saved in the project.",
    )


def _cached_copy(digest: str, name: str, data: bytes) -> Path:
    """The project's copy as a file in the user's cache folder (written once per content)."""
    folder = paths.user_cache_dir() / "inputs" / digest[:16]
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / Path(name).name
    if not copy.is_file() or file_hash(copy) != digest:
        part = copy.with_name(copy.name + ".part")
        part.write_bytes(data)
        os.replace(part, copy)
    return copy
