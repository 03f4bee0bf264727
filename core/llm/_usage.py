"""Usage counters: calls, cache hits, tokens and cost, per gateway (a run) and per session.

``calls`` counts answers the model gave (a re-ask is a second call); ``cache_hits`` counts answers
taken from the cache (no call, no cost); ``failures`` counts requests that ended without an answer
after the retries. ``cost`` sums the known costs in US dollars (0 for the local model);
``calls_without_cost`` counts calls whose price litellm does not know, so a total is never
silently too low. ``cached_prompt_tokens`` counts the prompt tokens the provider took from its
prompt cache (included in ``prompt_tokens``; billed at a lower price, which ``cost`` already
reflects when litellm knows the model's cache price).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

log = logging.getLogger(__name__)


@dataclass
class Usage:
    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    calls_without_cost: int = 0
    cached_prompt_tokens: int = 0

    def copy(self) -> Usage:
        return replace(self)

    @classmethod
    def total(cls, usages: Iterable[Usage]) -> Usage:
        """Several counters added up (a run with repeats or conditions has a gateway each)."""
        out = cls()
        for u in usages:
            for name in _FIELDS:
                setattr(out, name, getattr(out, name) + getattr(u, name))
        return out

    def add_call(self, prompt_tokens: int, completion_tokens: int, cost: float | None) -> None:
        self.calls += 1
        self.prompt_tokens += int(prompt_tokens or 0)
        self.completion_tokens += int(completion_tokens or 0)
        if cost is None:
            self.calls_without_cost += 1
        else:
            self.cost += float(cost)

    @property
    def summary(self) -> str:
        """One line for a status bar: '12 calls, 30 from cache, 4,210 tokens, $0.0031'."""
        tokens = self.prompt_tokens + self.completion_tokens
        text = f"{self.calls:,} calls, {self.cache_hits:,} from cache, {tokens:,} tokens"
        if self.cached_prompt_tokens:
            text += f" ({self.cached_prompt_tokens:,} from the provider's prompt cache)"
        if self.cost or not self.calls_without_cost:
            text += f", ${self.cost:.4f}"
        if self.calls_without_cost:
            text += f" (+ {self.calls_without_cost:,} calls of unknown price)"
        if self.failures:
            text += f", {self.failures:,} failed"
        return text


_FIELDS = tuple(Usage.__dataclass_fields__)

_session = Usage()
_listeners: list[Callable[[Usage], None]] = []


def session_usage() -> Usage:
    """A copy of the totals of this session (every gateway since the app started)."""
    return _session.copy()


def add_usage_listener(callback: Callable[[Usage], None]) -> Callable[[], None]:
    """Call ``callback(session_usage)`` after every call, cache hit or failure, on the event-loop
    thread. Returns a function that removes the listener."""
    _listeners.append(callback)

    def remove() -> None:
        remove_usage_listener(callback)

    return remove


def remove_usage_listener(callback: Callable[[Usage], None]) -> None:
    try:
        _listeners.remove(callback)
    except ValueError:
        pass


def record(
    run: Usage,
    *,
    call: tuple[int, int, float | None] | None = None,
    cache_hit: bool = False,
    failure: bool = False,
    cached_tokens: int = 0,
) -> None:
    """Count one event in ``run`` and in the session totals, then tell the listeners.
    ``cached_tokens``: prompt tokens of ``call`` that the provider took from its prompt cache."""
    for usage in (run, _session):
        if call is not None:
            usage.add_call(*call)
            usage.cached_prompt_tokens += int(cached_tokens or 0)
        if cache_hit:
            usage.cache_hits += 1
        if failure:
            usage.failures += 1
    snapshot = _session.copy()
    for callback in _listeners.copy():  # a listener may remove itself
        try:
            callback(snapshot)
        except Exception:  # a broken listener must not break a run
            log.exception("usage listener %r failed", callback)


def reset_session_usage() -> None:
    """Start the session totals from zero (tests; "reset counters" in the app)."""
    global _session
    _session = Usage()
