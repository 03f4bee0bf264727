"""Repeat runs: the same calls made again as real calls (not answered from the cache).

    llm_k = with_repeat(gateway, k)   # every complete_json/complete_text of llm_k uses repeat k

Repeat 0 is the model itself (the calls of an ordinary run), so results of earlier runs are
repeat 0. Repeat k > 0 adds k to the repeat index of every call, which is part of the cache key
(``core.llm._cache``): the calls of repeat k are distinct, and running repeat k again is free.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RepeatedLLM", "with_repeat"]


class RepeatedLLM:
    """``llm`` whose every call uses repeat index ``repeat`` (added to the one asked for);
    everything else (``profile``, ``usage``...) is ``llm``'s."""

    def __init__(self, llm: Any, repeat: int) -> None:
        self.llm = llm
        self.repeat = int(repeat)

    async def complete_json(self, messages: Any, schema: Any, *, repeat: int = 0,
                            **kwargs: Any) -> Any:
        return await self.llm.complete_json(messages, schema, repeat=repeat + self.repeat,
                                            **kwargs)

    async def complete_text(self, messages: Any, *, repeat: int = 0, **kwargs: Any) -> Any:
        return await self.llm.complete_text(messages, repeat=repeat + self.repeat, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llm, name)


def with_repeat(llm: Any, repeat: int) -> Any:
    """``llm`` itself for repeat 0, else ``llm`` with repeat index ``repeat`` on every call."""
    if not repeat:
        return llm
    if repeat < 0:
        raise ValueError("A repeat index is 0 or more.")
    return RepeatedLLM(llm, repeat)
