"""A gateway wrapper for the repeat tests of both LLM methods (test support, not a test)."""

from __future__ import annotations


class RepeatSpy:
    """The gateway of a run, noting the repeat index of every call in ``seen``."""

    def __init__(self, gateway, seen):
        self.gateway, self.seen = gateway, seen

    async def complete_json(self, messages, schema, **kw):
        self.seen.append(kw.get("repeat", 0))
        return await self.gateway.complete_json(messages, schema, **kw)

    def __getattr__(self, name):
        return getattr(self.gateway, name)
