"""A scripted LLM for tests of the methods: canned replies, chosen per prompt, no network.

It is a litellm custom provider (model strings ``scripted/<name>``), so calls take exactly the
gateway's real path (cache, retries, validation, usage) and only the model is fake. Every request
is recorded, so tests can assert on prompts. Scripted answers test our logic only, never quality.

    llm = ScriptedLLM({"Rate the answer": {"score": 4, "reason": "clear"},
                       "Write a persona": "A teacher of ten years ..."})
    gateway = Gateway(llm.profile(), cache=MemoryCache())
    result = await gateway.complete_json(messages, Score)
    assert "Rate the answer" in llm.prompts[0]

A reply is a string (the content), a dict or list (sent as JSON), a pydantic object (its JSON),
an exception to raise, or a :class:`ScriptedError` (an HTTP-like failure: 429, 500, 401...). A
list of replies under one key is used in turn, one per call (the last one repeats); to reply
with a JSON list, give it as a string. Keys are
matched as substrings of the last user message first, then of the whole conversation, in the
order given. A function ``replies(messages) -> reply`` may choose instead.

``context_window=N`` makes it behave like a server with a context window of N tokens (about four
characters a token): a longer prompt is refused with llama.cpp's words, and a reply longer than
the request's ``max_tokens`` is cut off there, as a real model's would be.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.settings import ModelProfile

PROVIDER = "scripted"

Reply = Any
ReplyRule = Callable[[list[dict[str, Any]]], Reply]


@dataclass
class ScriptedError:
    """A failure to script: ``status`` as an HTTP status (429, 500, 401, 404, 408 = timeout),
    ``retry_after`` in seconds for 429/503."""

    status: int
    message: str = "scripted failure"
    retry_after: float | None = None


@dataclass
class ScriptedRequest:
    """One request the scripted model received."""

    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)
    api_base: str | None = None

    @property
    def prompt(self) -> str:
        """The last user message."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return str(message.get("content") or "")
        return ""


class ScriptedLLM:
    """Canned replies for model ``scripted/<name>``. Registered with litellm on creation;
    :meth:`close` (or leaving a ``with`` block) unregisters it."""

    def __init__(
        self,
        replies: Mapping[str, Reply] | ReplyRule | Sequence[Reply] | None = None,
        *,
        name: str = "test",
        default: Reply = None,
        delay_s: float = 0.0,
        tokens_per_word: float = 1.0,
        context_window: int | None = None,
    ) -> None:
        self.name = name
        self.replies = replies
        self.default = default
        self.delay_s = delay_s
        self.tokens_per_word = tokens_per_word
        #: Set: behave like a server with this context window (see the module text).
        self.context_window = context_window
        self.requests: list[ScriptedRequest] = []
        #: Requests being answered now, and the most at once (to check concurrency limits).
        self.in_flight = 0
        self.max_in_flight = 0
        self._turns: dict[Any, int] = {}
        self._lock = threading.Lock()
        _register(self)

    # ---------------------------------------------------------------------------- for tests
    @property
    def model(self) -> str:
        return f"{PROVIDER}/{self.name}"

    @property
    def prompts(self) -> list[str]:
        """The last user message of every request, in order."""
        return [request.prompt for request in self.requests]

    @property
    def calls(self) -> int:
        return len(self.requests)

    def profile(self, **overrides: Any) -> ModelProfile:
        """A model profile that uses this scripted model (no retries wait: tests stay fast)."""
        values: dict[str, Any] = {
            "name": f"Scripted {self.name}",
            "model": self.model,
            "max_concurrency": 8,
            "timeout_s": 30,
        }
        values.update(overrides)
        return ModelProfile(**values)

    def close(self) -> None:
        _unregister(self)

    def __enter__(self) -> ScriptedLLM:  # noqa: PYI034
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -------------------------------------------------------------------------- answering
    def choose(self, messages: list[dict[str, Any]]) -> Reply:
        replies = self.replies
        if callable(replies) and not isinstance(replies, Mapping):
            return replies(messages)
        if isinstance(replies, Mapping):
            last = ScriptedRequest(self.model, messages).prompt
            everything = "\n".join(str(m.get("content") or "") for m in messages)
            for text in (last, everything):
                for key, reply in replies.items():
                    if key in text:
                        return self._next(key, reply)
            return self._default(messages)
        if isinstance(replies, Sequence) and not isinstance(replies, (str, bytes)):
            return self._next(None, list(replies)) if replies else self._default(messages)
        return self._default(messages)

    def _next(self, key: Any, reply: Reply) -> Reply:
        if not isinstance(reply, list) or not reply:
            return reply
        with self._lock:
            turn = self._turns.get(key, 0)
            self._turns[key] = turn + 1
        return reply[min(turn, len(reply) - 1)]

    def _default(self, messages: list[dict[str, Any]]) -> Reply:
        if self.default is None:
            prompt = ScriptedRequest(self.model, messages).prompt
            raise AssertionError(f"ScriptedLLM '{self.name}' has no reply for: {prompt[:200]!r}")
        return self.default

    def _tokens(self, text: str) -> int:
        return max(1, round(len(text.split()) * self.tokens_per_word))

    @staticmethod
    def server_tokens(text: str) -> int:
        """Tokens of ``text`` as the server of a ``context_window`` counts them: about four
        characters a token, as real tokenizers count English."""
        return -(-len(text) // 4)


def _within_limits(window: int, messages: list[dict[str, Any]], params: dict[str, Any],
                   content: str) -> tuple[str, str]:
    """As a server with a context window of ``window`` tokens does: a prompt longer than it is
    refused (400, llama.cpp's words), and an answer longer than ``max_tokens`` is cut off there
    (finish reason "length")."""
    from litellm.llms.custom_llm import CustomLLMError

    prompt = sum(ScriptedLLM.server_tokens(str(m.get("content") or "")) + 4 for m in messages)
    if prompt > window:
        raise CustomLLMError(
            status_code=400, message=f"Requested tokens ({prompt}) exceed context window of "
                                     f"{window}")
    limit = int(params.get("max_tokens") or 0)
    if limit and ScriptedLLM.server_tokens(content) > limit:
        return content[: limit * 4], "length"
    return content, "stop"


def _content(reply: Reply) -> str:
    if isinstance(reply, str):
        return reply
    if hasattr(reply, "model_dump_json"):
        return reply.model_dump_json()
    return json.dumps(reply, ensure_ascii=False)


# ---------------------------------------------------------------------------- registration
_scripts: dict[str, ScriptedLLM] = {}
_provider: Any = None


def _register(script: ScriptedLLM) -> None:
    from core.llm._litellm import litellm_module

    litellm = litellm_module()
    global _provider
    if _provider is None:
        _provider = _make_provider()
    _scripts[script.name] = script
    if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map.append({"provider": PROVIDER, "custom_handler": _provider})


def _unregister(script: ScriptedLLM) -> None:
    if _scripts.get(script.name) is script:
        del _scripts[script.name]


def _make_provider() -> Any:
    import httpx
    from litellm import CustomLLM
    from litellm.llms.custom_llm import CustomLLMError
    from litellm.types.utils import Usage as LitellmUsage

    from core.llm._litellm import litellm_module

    litellm = litellm_module()

    def raise_scripted(error: ScriptedError, model: str) -> None:
        headers = {}
        if error.retry_after is not None:
            headers["retry-after"] = str(error.retry_after)
        response = httpx.Response(
            error.status, headers=headers, request=httpx.Request("POST", "http://scripted")
        )
        if error.status == 408:
            raise litellm.Timeout(message=error.message, model=model, llm_provider=PROVIDER)
        if error.status == 429:
            exc = litellm.RateLimitError(
                message=error.message, llm_provider=PROVIDER, model=model, response=response
            )
            exc.litellm_response_headers = response.headers
            raise exc
        raise CustomLLMError(status_code=error.status, message=error.message)

    class ScriptedProvider(CustomLLM):
        async def acompletion(  # type: ignore[override]
            self, model: str, messages: list, api_base: str, model_response: Any,
            optional_params: dict, **_unused: Any,
        ) -> Any:
            """litellm passes every argument by keyword; the ones not named here are unused."""
            script = _scripts.get(model)
            if script is None:
                raise CustomLLMError(
                    status_code=404, message=f"No scripted model called '{model}' is registered."
                )
            copied = json.loads(json.dumps(list(messages), default=str))
            params = {k: v for k, v in optional_params.items() if k != "max_retries"}
            script.requests.append(ScriptedRequest(model, copied, params, api_base))
            script.in_flight += 1
            script.max_in_flight = max(script.max_in_flight, script.in_flight)
            try:
                if script.delay_s:
                    await asyncio.sleep(script.delay_s)
                reply = script.choose(copied)
            finally:
                script.in_flight -= 1
            if isinstance(reply, ScriptedError):
                raise_scripted(reply, model)
            if isinstance(reply, BaseException):
                raise reply
            content = _content(reply)
            finish = "stop"
            if script.context_window is not None:
                content, finish = _within_limits(script.context_window, copied, params, content)
            model_response.choices[0].message.content = content
            model_response.choices[0].finish_reason = finish
            prompt_tokens = sum(script._tokens(str(m.get("content") or "")) for m in copied)
            completion_tokens = script._tokens(content)
            model_response.usage = LitellmUsage(
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                total_tokens=prompt_tokens + completion_tokens,
            )
            model_response.model = f"{PROVIDER}/{model}"
            return model_response

    return ScriptedProvider()
