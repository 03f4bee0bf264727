"""Chat requests to an OpenAI-compatible server sent straight over HTTP, where litellm would send
them unchanged.

litellm and the OpenAI client it drives cost several milliseconds of CPU on every call (building
and re-checking the request, logging in background threads, working out a cost it does not
know), mostly on the event-loop thread: one call at a time took 8.8 ms over the server's latency
with litellm and 3-4 ms without (``tests/benchmarks/bench_llm_gateway.py``). Against a fast local
server that is the bottleneck: with 16 calls in flight and a 100 ms server, 1,675 debate calls
took 1.3-1.5x the ideal wall time with litellm and 1.2x without
(``tests/benchmarks/bench_majeval_debate.py``). For the requests litellm passes through as they
are, this module sends the same JSON body with the gateway's connection-limited ``httpx`` client
and reads the answer itself.

Used only for a profile with one API base whose model litellm sends through its OpenAI
provider (``openai/<name>``: llama.cpp's server, LM Studio, Ollama's /v1, vLLM...) and that
litellm's price map has no price for: for a priced model (OpenAI's own, say) litellm may rename
or drop parameters and knows the price, so those calls keep litellm's path
(:func:`core.llm._pool.plan` decides). Errors are raised as exceptions that
:func:`core.llm._errors.classify` reads as it reads litellm's (HTTP status, the server's own
message, ``Retry-After``), so a failure says the same thing on either path.
"""

from __future__ import annotations

import contextlib
import json
from types import SimpleNamespace
from typing import Any

from core.llm._pool import openai_name


class ProviderError(Exception):
    """The server answered with an HTTP error (``status_code``), or with something that is not a
    chat completion (500). ``response`` carries the headers (``Retry-After``)."""

    def __init__(self, message: str, status_code: int | None, response: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.response = response


class ContextWindowExceededError(ProviderError):
    """The server said the prompt does not fit the model's context window."""


class APIConnectionError(ConnectionError):
    """The server could not be reached, or the connection broke before an answer."""


def url(api_base: str) -> str:
    """The chat-completions address under an OpenAI-style base (``http://host:port/v1``)."""
    return api_base.rstrip("/") + "/chat/completions"


async def complete(
    client: Any,
    api_base: str,
    api_key: str | None,
    model: str,
    messages: list[dict[str, Any]],
    request: dict[str, Any],
    *,
    stream: bool = False,
) -> Any:
    """One chat completion: POST ``{model, messages, **request}`` (request: temperature,
    max_tokens, seed, response_format) and return an object shaped like litellm's response
    (``choices[0].message.content``, ``choices[0].finish_reason``, ``usage``, ``model``).

    ``stream``: ask for the answer in pieces (server-sent events) and put them together. The
    answer is the same; what changes is that a request given up (Cancel, a timeout) closes a
    connection the server is writing to, which llama.cpp's server notices at its next piece and
    stops generating (for a request that is not streamed it goes on to the end)."""
    import httpx

    name = openai_name(model)
    body = {"model": name, "messages": messages, **request}
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    if stream:
        return await _streamed(client, api_base, name, body, headers)
    try:
        response = await client.post(url(api_base), content=json.dumps(body), headers=headers)
    except httpx.TimeoutException as exc:
        raise TimeoutError(f"no answer in time ({type(exc).__name__})") from exc
    except httpx.TransportError as exc:
        raise APIConnectionError(f"Connection error: {exc or type(exc).__name__}") from exc
    if response.status_code >= 400:
        raise _http_error(response)
    try:
        data = response.json()
        choice = data["choices"][0]
        content = (choice.get("message") or {}).get("content")
        usage = data.get("usage") or {}
        if not isinstance(usage, dict):
            raise TypeError("usage is not an object")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        # as litellm does: a server error (retried), since a working server never answers so
        raise ProviderError(
            f"the answer is not a chat completion: {' '.join(response.text.split())[:200]!r}; "
            "check the address, and any proxy in front of the model server", 500, response
        ) from exc
    return _answer(content, choice.get("finish_reason"), usage, data.get("model") or name,
                   api_base)


def _answer(content: Any, finish_reason: Any, usage: dict[str, Any], model: str,
            api_base: str) -> SimpleNamespace:
    return SimpleNamespace(
        choices=[SimpleNamespace(message=SimpleNamespace(content=content),
                                 finish_reason=finish_reason)],
        usage=SimpleNamespace(
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
            prompt_tokens_details=usage.get("prompt_tokens_details"),
        ),
        model=model,
        # no price: litellm's price map has none for the model (else litellm's path is used)
        _hidden_params={"api_base": api_base, "unpriced": True},
    )


async def _streamed(client: Any, api_base: str, name: str, body: dict[str, Any],
                    headers: dict[str, str]) -> Any:
    """:func:`complete` with ``stream``: the pieces of the answer read as they come."""
    import httpx

    body = {**body, "stream": True, "stream_options": {"include_usage": True}}
    # one connection per answer (a local server: it costs nothing): llama-server closes a
    # kept-alive connection after a few idle seconds, and the next call that took it from the
    # pool failed with "Server disconnected without sending a response"
    headers = {**headers, "Connection": "close"}
    parts: list[str] = []
    finish_reason = None
    usage: dict[str, Any] = {}
    model = name
    failure: ProviderError | None = None
    try:
        async with client.stream("POST", url(api_base), content=json.dumps(body),
                                 headers=headers) as response:
            if response.status_code >= 400:
                await response.aread()
                raise _http_error(response)
            # Read to the end of the answer, also after [DONE] and after an error piece (kept
            # and raised once the answer is read): a generator of the lines left before its
            # end was closed later from another task under the window's event loop (qasync),
            # failed ("cancel scope in a different task") and kept its connection, so after as
            # many calls as the engine has slots the next one waited for a connection until
            # its timeout.
            async with contextlib.aclosing(response.aiter_lines()) as lines:
                async for line in lines:
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        continue  # read on to the end of the answer (see above)
                    if failure is not None:
                        continue
                    try:
                        chunk = json.loads(data)
                    except ValueError:
                        failure = ProviderError(
                            f"the answer is not a chat completion: {data[:200]!r}", 500, response)
                        continue
                    if chunk.get("error"):
                        error = chunk["error"]
                        said = error.get("message") if isinstance(error, dict) else str(error)
                        failure = ProviderError(" ".join(str(said).split())[:1000], 500, response)
                        continue
                    model = chunk.get("model") or model
                    if isinstance(chunk.get("usage"), dict):
                        usage = chunk["usage"]
                    for choice in chunk.get("choices") or []:
                        piece = (choice.get("delta") or {}).get("content")
                        if piece:
                            parts.append(piece)
                        finish_reason = choice.get("finish_reason") or finish_reason
    except httpx.TimeoutException as exc:
        raise TimeoutError(f"no answer in time ({type(exc).__name__})") from exc
    except httpx.TransportError as exc:
        raise APIConnectionError(f"Connection error: {exc or type(exc).__name__}") from exc
    if failure is not None:
        raise failure
    if finish_reason is None:  # the stream ended without its last piece: the server stopped
        raise APIConnectionError("Connection error: the answer stopped before it was complete")
    return _answer("".join(parts), finish_reason, usage, model, api_base)


def _http_error(response: Any) -> ProviderError:
    """The exception for an HTTP error answer, with the server's own words."""
    text = response.text
    said = text
    try:
        error = json.loads(text).get("error")
        if isinstance(error, dict):
            said = str(error.get("message") or text)
        elif isinstance(error, str):
            said = error
    except (ValueError, AttributeError):
        pass
    said = " ".join(said.split())[:1000] or f"HTTP {response.status_code}"
    status = response.status_code
    if status in (400, 413) and _context_exceeded(said):
        return ContextWindowExceededError(said, status, response)
    return ProviderError(said, status, response)


def _context_exceeded(text: str) -> bool:
    """The words servers use for a prompt longer than the context window (litellm's own list,
    so both paths agree)."""
    from litellm.litellm_core_utils.exception_mapping_utils import ExceptionCheckers

    return bool(ExceptionCheckers.is_error_str_context_window_exceeded(text))
