"""Typed artefacts: a pydantic model kept in the project with the version of its shape.

A method declares each thing it keeps once::

    SETUP = PayloadType("aqer.setup", AqerSetup, version=2, label="the AQER choices",
                        migrations={1: add_blank_answer_rule})
    setup = get_payload(project, SETUP, "current")          # None when there is none
    put_payload(project, SETUP, "current", setup)

The payload is stored as the model's JSON with one extra field, ``_payload_version``. Reading
migrates an older shape step by step (``migrations[n]`` turns version n into n + 1; a payload
written before versions were kept counts as version 1, and one kept then as a list rather than
an object is given to ``migrations[1]`` as that list). A payload that is newer than this
EvalDesk, or that no longer validates, raises :class:`PayloadUnreadable`; it is never replaced
by defaults and saved over. :func:`load_or_recover` is what a session calls when it must go on:
it keeps the unreadable payload in the project under another key, says so in plain words, and
starts that step afresh.
"""

from __future__ import annotations

import copy
import datetime as _dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from core.project._file import Artefact, ProjectError

if TYPE_CHECKING:  # pragma: no cover
    from core.project._file import Origin, Project

__all__ = [
    "UNREADABLE_SUFFIX",
    "VERSION_FIELD",
    "PayloadType",
    "PayloadUnreadable",
    "get_payload",
    "load_or_recover",
    "put_payload",
]

M = TypeVar("M", bound=BaseModel)

#: The field that holds the version of a stored payload's shape.
VERSION_FIELD = "_payload_version"
#: Unreadable payloads are kept under the kind ``<kind>.unreadable``.
UNREADABLE_SUFFIX = ".unreadable"


@dataclass(frozen=True)
class PayloadType(Generic[M]):
    """One kind of typed artefact: its ``kind`` in the project, its ``model``, the ``version`` of
    its shape, how to bring older shapes up to date, and a ``label`` in the user's words ("the
    AQER choices") for messages."""

    kind: str
    model: type[M]
    version: int = 1
    migrations: Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]] = field(
        default_factory=dict
    )
    label: str = ""

    def __post_init__(self) -> None:
        missing = [n for n in range(1, self.version) if n not in self.migrations]
        if missing:
            raise ValueError(
                f"{self.kind}: version {self.version} needs a migration from each older "
                f"version; missing {missing}"
            )

    @property
    def what(self) -> str:
        return self.label or f"the stored {self.kind}"

    def dump(self, value: M) -> dict[str, Any]:
        payload = value.model_dump(mode="json")
        payload[VERSION_FIELD] = self.version
        return payload

    def load(self, payload: Any, key: str = "") -> M:
        """The model from a stored payload (migrated); :class:`PayloadUnreadable` otherwise."""
        if isinstance(payload, list) and 1 in self.migrations:
            # kept before versions were, as a list: version 1's migration reads it as it is
            payload = {VERSION_FIELD: 2, **self._migrate(1, copy.deepcopy(payload), key)}
        if not isinstance(payload, dict):
            raise PayloadUnreadable(self, key, "it is not in the expected form")
        data = copy.deepcopy(payload)
        version = data.pop(VERSION_FIELD, 1)
        if not isinstance(version, int) or version < 1:
            raise PayloadUnreadable(self, key, f"its version mark ({version!r}) is not valid")
        if version > self.version:
            raise PayloadUnreadable(
                self,
                key,
                f"it was saved by a newer EvalDesk (format {version}; this one reads up to "
                f"{self.version}). Update EvalDesk to use it",
                newer=True,
            )
        while version < self.version:
            data = self._migrate(version, data, key)
            version += 1
        try:
            return self.model.model_validate(data)
        except ValidationError as exc:
            errors = exc.errors()
            where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
            message = errors[0]["msg"] if errors else ""
            detail = f"{where}: {message}" if where else message
            raise PayloadUnreadable(self, key, f"it does not fit ({detail})") from exc


    def _migrate(self, version: int, data: Any, key: str) -> dict[str, Any]:
        try:
            return self.migrations[version](data)
        except Exception as exc:
            raise PayloadUnreadable(
                self, key, f"it could not be brought up to date ({exc})"
            ) from exc


class PayloadUnreadable(ProjectError):
    """A stored payload that cannot be used as it is (newer format, or no longer valid)."""

    def __init__(self, ptype: PayloadType[Any], key: str, reason: str, *, newer: bool = False):
        self.ptype = ptype
        self.key = key
        self.reason = reason
        self.newer = newer
        #: Where :func:`load_or_recover` kept it (its key under ``<kind>.unreadable``).
        self.kept_as = ""
        super().__init__(f"{ptype.what[0].upper()}{ptype.what[1:]} could not be read: {reason}.")


def get_payload(project: Project, ptype: PayloadType[M], key: str) -> M | None:
    """The stored model, or None when there is none. Raises :class:`PayloadUnreadable`."""
    artefact = project.get_artefact(ptype.kind, key)
    if artefact is None:
        return None
    return ptype.load(artefact.payload, key)


def put_payload(
    project: Project,
    ptype: PayloadType[M],
    key: str,
    value: M,
    *,
    origin: Origin = "human",
    run_id: int | None = None,
) -> Artefact | None:
    """Store ``value`` (nothing is written when the stored payload is already the same)."""
    payload = ptype.dump(value)
    current = project.get_artefact(ptype.kind, key)
    if current is not None and current.payload == payload and current.origin == origin:
        return None
    return project.put_artefact(ptype.kind, key, payload, origin=origin, run_id=run_id)


def load_or_recover(
    project: Project, ptype: PayloadType[M], key: str, fresh: Callable[[], M]
) -> tuple[M, str]:
    """The stored model (``fresh()`` when there is none) and a message for the user ("" when
    all is well). An unreadable payload is moved aside first, under
    ``<kind>.unreadable`` / ``<key> <date>``, so the original is kept in the project and
    nothing is saved over it; the message says which step and why."""
    try:
        found = get_payload(project, ptype, key)
    except PayloadUnreadable as problem:
        kept = _set_aside(project, ptype, key)
        problem.kept_as = kept
        return fresh(), (
            f"{problem} The stored version is kept in the project (as “{kept}”); this step "
            "starts again from the beginning."
        )
    return (found if found is not None else fresh()), ""


def _set_aside(project: Project, ptype: PayloadType[Any], key: str) -> str:
    artefact = project.get_artefact(ptype.kind, key)
    if artefact is None:
        return ""
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    kept = f"{key} {stamp}"
    n = 1
    while project.get_artefact(ptype.kind + UNREADABLE_SUFFIX, kept) is not None:
        n += 1
        kept = f"{key} {stamp} ({n})"
    with project.transaction():
        project.put_artefact(ptype.kind + UNREADABLE_SUFFIX, kept, artefact.payload,
                             origin=artefact.origin)  # type: ignore[arg-type]
        project.delete_artefact(artefact, "EvalDesk (kept aside: could not be read)")
    return kept
