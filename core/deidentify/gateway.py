"""The hook every model call of a project passes: texts de-identified before they are sent, the
real values put back in the answer.

``core.llm.gateway_for(profile, project, run_id)`` (the one place the app and the command line
make a run's model) returns ``protect(gateway, project)``: the gateway itself when the texts go
as written (the project's switch is off, or the model runs on this computer), else a
:class:`DeidentifyingGateway` around it. Either way every call is logged with a
``deidentification`` field: ``{"on": false, "why": ...}`` or ``{"on": true, "counts": {kind:
n}, "values": n, "invented": [...]}`` (kinds and numbers, never a value).

One call, step by step:

1. Every message (and every text of the JSON schema the answer is held to, such as a list of
   the document's own sentences) is de-identified with the project's one table, after the
   names that titles and greetings point to in all of them were learnt. New placeholders are
   kept in the project before anything is sent.
2. The gateway sends the texts with placeholders (that is what it caches and logs).
3. The answer is put back: parsed JSON with ``restore_data``, text with ``restore``, with the
   texts sent (:meth:`~core.deidentify.engine.Deidentifier.restore`'s ``sent``): a placeholder
   the model was not shown is left as it is, never guessed, and listed in the log's
   ``invented``. The stage's own check of the answer reads it with the real values back.

If the texts cannot be de-identified (the project's table cannot be read), the call fails as
:class:`core.llm.LLMFailure` (kind ``deidentify``) and nothing is sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from core.deidentify import project as dp
from core.deidentify.engine import Deidentified, Deidentifier, kind_counts

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = ["DeidentifyingGateway", "protect"]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

#: Keys of a JSON schema whose strings may hold the user's texts (an enum of the document's
#: sentences, a description made from a dimension's definition).
_SCHEMA_TEXT_KEYS = frozenset({"enum", "const", "default", "examples", "description"})


def protect(gateway: Any, project: Project | None) -> Any:
    """``gateway`` as the project's de-identification wants it: wrapped when the texts it sends
    are de-identified, else as it is, with the reason kept in the log of each call."""
    profile = gateway.profile
    try:
        reason = dp.why(project, profile)
    except dp.DeidentifyUnavailable as exc:
        return DeidentifyingGateway(gateway, project, problem=str(exc))
    if reason != "on":
        gateway.audit = {dp.CALL_FIELD: {"on": False, "why": reason}}
        return gateway
    assert project is not None
    return DeidentifyingGateway(gateway, project)


@dataclass
class _Prepared:
    """One call's texts as sent, and what to put back."""

    messages: list[dict[str, Any]]
    schema: Any
    sent: list[Deidentified]
    counts: dict[str, int]
    values: int


class DeidentifyingGateway:
    """A gateway whose calls are de-identified (see the module). Everything else (``profile``,
    ``usage``, ``run_id``...) is the wrapped gateway's."""

    def __init__(self, inner: Any, project: Project | None, *, problem: str = "") -> None:
        self.inner = inner
        self.project = project
        self._problem = problem
        self._deid: Deidentifier | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def deidentifies(self) -> bool:
        return True

    # ------------------------------------------------------------------------- the calls
    async def complete_json(self, messages: Any, schema: type[T], *, repeat: int = 0,
                            template_version: str = "", cancel: Any = None,
                            check: Callable[[Any], Any] | None = None) -> T:
        prepared = self._prepare(messages, schema)

        def checked(value: Any) -> Any:
            return check(self._restore_model(value, prepared)) if check is not None else None

        value = await self.inner.complete_json(
            prepared.messages, prepared.schema, repeat=repeat,
            template_version=template_version, cancel=cancel, check=checked,
            audit=self._audit(prepared))
        return self._restore_model(value, prepared)

    async def complete_text(self, messages: Any, *, repeat: int = 0, template_version: str = "",
                            cancel: Any = None) -> str:
        prepared = self._prepare(messages, None)
        text = await self.inner.complete_text(
            prepared.messages, repeat=repeat, template_version=template_version, cancel=cancel,
            audit=self._audit(prepared))
        return self._deidentifier().restore(str(text), sent=prepared.sent).text

    # ---------------------------------------------------------------------------- inside
    def _deidentifier(self) -> Deidentifier:
        if self._problem:
            raise _unavailable(self._problem)
        if self._deid is None:
            assert self.project is not None
            try:
                self._deid = dp.deidentifier_for(self.project)
            except dp.DeidentifyUnavailable as exc:
                self._problem = str(exc)
                raise _unavailable(self._problem) from exc
        return self._deid

    def _prepare(self, messages: Any, schema: type[BaseModel] | None) -> _Prepared:
        deid = self._deidentifier()
        conversation: list[dict[str, Any]] = (
            [{"role": "user", "content": messages}] if isinstance(messages, str)
            else [dict(m) for m in messages])
        deid.learn(_texts_of(conversation))
        sent: list[Deidentified] = []

        def hide(text: str) -> str:
            result = deid.deidentify(text)
            sent.append(result)
            return result.text

        for message in conversation:
            content = message.get("content")
            if isinstance(content, str):
                message["content"] = hide(content)
            elif isinstance(content, list):  # parts of a message: only the text parts
                parts: list[Any] = [
                    {**part, "text": hide(part["text"])}
                    if isinstance(part, dict) and isinstance(part.get("text"), str) else part
                    for part in content]
                message["content"] = parts
        held = _held_schema(schema, hide) if schema is not None else None
        assert self.project is not None
        try:
            dp.save_mapping(self.project)
        except Exception as exc:
            raise _unavailable(f"The project's table of placeholders could not be kept ({exc}); "
                               "nothing was sent.") from exc
        counts = kind_counts(sent)
        values = len({r.placeholder for d in sent for r in d.replacements})
        return _Prepared(conversation, held or schema, sent, counts, values)

    def _audit(self, prepared: _Prepared) -> Callable[[str], dict[str, Any]]:
        deid = self._deidentifier()

        def audit(content: str) -> dict[str, Any]:
            invented = list(deid.restore(content, sent=prepared.sent).invented)
            return {dp.CALL_FIELD: {"on": True, "counts": prepared.counts,
                                    "values": prepared.values, "invented": invented}}
        return audit

    def _restore_model(self, value: T, prepared: _Prepared) -> T:
        """``value`` with the real values back in every string it holds (field by field: a
        model's aliases and types stay as validated)."""
        deid = self._deidentifier()
        invented: list[str] = []

        def walk(node: Any) -> Any:
            if isinstance(node, str):
                back = deid.restore(node, sent=prepared.sent)
                invented.extend(p for p in back.invented if p not in invented)
                return back.text
            if isinstance(node, BaseModel):
                return node.model_copy(update={name: walk(getattr(node, name))
                                               for name in type(node).model_fields})
            if isinstance(node, dict):
                return {walk(k): walk(v) for k, v in node.items()}
            if isinstance(node, list | tuple):
                return type(node)(walk(v) for v in node)
            return node

        restored: T = walk(value)
        if invented:
            log.info("A model's answer holds placeholders it was not shown: %s (left as they "
                     "are)", ", ".join(invented))
        return restored


def _texts_of(conversation: Sequence[dict[str, Any]]) -> list[str]:
    texts: list[str] = []
    for message in conversation:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(p["text"] for p in content
                         if isinstance(p, dict) and isinstance(p.get("text"), str))
    return texts


def _held_schema(schema: type[T], hide: Callable[[str], str]) -> type[T] | None:
    """``schema`` with the texts of its JSON schema de-identified (None when it holds none that
    change); validation stays ``schema``'s own."""
    original = schema.model_json_schema()
    changed = False

    def walk(node: Any, texts: bool) -> Any:
        nonlocal changed
        if isinstance(node, str):
            if not texts:
                return node
            hidden = hide(node)
            changed = changed or hidden != node
            return hidden
        if isinstance(node, list):
            return [walk(v, texts) for v in node]
        if isinstance(node, dict):
            return {k: walk(v, texts or k in _SCHEMA_TEXT_KEYS) if k != "properties"
                    else {name: walk(sub, False) for name, sub in v.items()}
                    for k, v in node.items()}
        return node

    held = walk(original, False)
    if not changed:
        return None

    class Held(schema):  # type: ignore[valid-type, misc]
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return held

    Held.__name__ = Held.__qualname__ = schema.__name__
    return Held


def _unavailable(message: str) -> Exception:
    from core.llm import LLMFailure

    return LLMFailure("deidentify", message)
