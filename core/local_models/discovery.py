"""Find language-model servers already running on this computer.

Only loopback addresses are asked (127.0.0.1 by default), each with a short timeout, and only when
the user asks ("Look for models on this computer", ``evaldesk models find``): nothing here runs
at start-up or at import. Two kinds of server are understood:

* Ollama (port 11434): ``GET /api/tags`` lists its models with their size on disk, parameter
  count and quantisation. A profile for it uses litellm's ``ollama_chat/<model>`` with the
  server's address.
* OpenAI-compatible servers (LM Studio on 1234, the llama.cpp server on 8080, vLLM on 8000):
  ``GET /v1/models``. llama.cpp adds the file size and parameter count, vLLM the context length,
  LM Studio its model types (``/api/v0/models``, so embedding models are left out). A profile
  uses ``openai/<model>`` with the base URL ``http://127.0.0.1:<port>/v1``.

Which program answers is told by its answer where it can be (``owned_by``), otherwise by the
usual program on that port, said as such.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from core.settings import ModelProfile

__all__ = [
    "DEFAULT_CANDIDATES",
    "Candidate",
    "FoundModel",
    "ServerReport",
    "find_local_servers",
    "profile_for",
]

ServerKind = Literal["ollama", "openai"]


@dataclass(frozen=True)
class Candidate:
    """A place a server may answer: its API kind, the port, and the program usually there."""

    kind: ServerKind
    port: int
    usual: str


#: The usual local ports (tests pass their own candidates with the ports of their fake servers).
DEFAULT_CANDIDATES: tuple[Candidate, ...] = (
    Candidate("ollama", 11434, "Ollama"),
    Candidate("openai", 1234, "LM Studio"),
    Candidate("openai", 8080, "llama.cpp server"),
    Candidate("openai", 8000, "vLLM"),
)

#: ``owned_by`` values that name the program behind an OpenAI-compatible answer.
_OWNERS = {"llamacpp": "llama.cpp server", "vllm": "vLLM", "ollama": "Ollama",
           "library": "Ollama", "organization_owner": "LM Studio"}


@dataclass(frozen=True)
class FoundModel:
    """One model a server offers. Sizes are None where the server does not say."""

    name: str
    size_bytes: int | None = None
    parameters: str = ""
    quantisation: str = ""
    context_length: int | None = None
    loaded: bool | None = None

    def describe(self) -> str:
        """A short plain description: "4.7 GB on disk, 8.0B parameters, Q4_K_M"."""
        parts = []
        if self.size_bytes:
            parts.append(f"{self.size_bytes / 1e9:.1f} GB on disk")
        if self.parameters:
            parts.append(f"{self.parameters} parameters")
        if self.quantisation:
            parts.append(self.quantisation)
        if self.context_length:
            parts.append(f"reads up to {self.context_length:,} tokens")
        if self.loaded is False:
            parts.append("not loaded yet")
        return ", ".join(parts) or "size not given by the server"


@dataclass
class ServerReport:
    """What one candidate port said. ``program`` is None when nothing answered there."""

    candidate: Candidate
    base_url: str
    program: str | None = None
    models: list[FoundModel] = field(default_factory=list)
    problem: str = ""

    @property
    def found(self) -> bool:
        return self.program is not None

    @property
    def port(self) -> int:
        return self.candidate.port


def _check_loopback(host: str) -> None:
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(
            f"{host} is not an address of this computer: EvalDesk only looks for servers on "
            "this computer (127.0.0.1)."
        )


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


async def find_local_servers(
    candidates: Sequence[Candidate] = DEFAULT_CANDIDATES,
    *,
    host: str = "127.0.0.1",
    timeout_s: float = 1.5,
) -> list[ServerReport]:
    """Ask every candidate port on ``host`` (loopback only) at the same time, each for at most
    ``timeout_s`` seconds. Returns one report per candidate, in the order given."""
    _check_loopback(host)
    import httpx

    timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 0.5))
    # trust_env=False: a proxy from the environment must never see these requests.
    async with httpx.AsyncClient(timeout=timeout, trust_env=False,
                                 follow_redirects=False) as client:
        return list(await asyncio.gather(
            *(_ask(client, host, candidate) for candidate in candidates)
        ))


async def _ask(client: Any, host: str, candidate: Candidate) -> ServerReport:
    root = f"http://{_url_host(host)}:{candidate.port}"
    if candidate.kind == "ollama":
        report = ServerReport(candidate, root)
        data = await _listing(client, f"{root}/api/tags", report)
        if data is not None:
            report.program = "Ollama"
            report.models = _ollama_models(data)
        return report

    report = ServerReport(candidate, f"{root}/v1")
    data = await _listing(client, f"{root}/v1/models", report)
    if data is None:
        return report
    return await _openai_server(client, root, data, report)


async def _listing(client: Any, url: str, report: ServerReport) -> dict[str, Any] | None:
    """The server's list of models at ``url``; None when nothing answers there, or when the
    answer is not a usable list (then ``report.problem`` says what went wrong)."""
    import httpx

    try:
        return await _get_json(client, url)
    except _NoServer:
        return None
    except (_NotJson, httpx.HTTPError) as exc:
        report.problem = _problem(report.candidate, exc)
        return None


async def _openai_server(client: Any, root: str, data: dict[str, Any],
                         report: ServerReport) -> ServerReport:
    import httpx

    candidate = report.candidate
    entries = [e for e in (data.get("data") or []) if isinstance(e, dict) and e.get("id")]
    owners = {str(e.get("owned_by") or "") for e in entries}
    program = next((_OWNERS[o] for o in owners if o in _OWNERS), None)
    if program == "LM Studio":
        program = None  # only said when LM Studio's own list confirms it (below)
    kinds: dict[str, dict[str, Any]] = {}
    if program is None:
        try:  # LM Studio describes its models (and their types) here
            extra = await _get_json(client, f"{root}/api/v0/models")
            listed = [e for e in extra.get("data") or [] if isinstance(e, dict)]
            if any(_lm_studio_entry(e) for e in listed):  # a server answering every
                kinds = {str(e.get("id")): e for e in listed}  # address alike is not it
                program = "LM Studio"
        except (_NoServer, _NotJson, httpx.HTTPError):
            pass
    usual = "" if candidate.usual.startswith("an OpenAI-compatible") else \
        f" ({candidate.usual} uses this port)"
    report.program = program or f"an OpenAI-compatible server{usual}"
    report.models = [m for m in (_openai_model(e, kinds.get(str(e["id"]))) for e in entries) if m]
    return report


def _lm_studio_entry(entry: dict[str, Any]) -> bool:
    """Whether an entry of ``/api/v0/models`` is LM Studio's own description of a model (its
    type and how it is stored), not an OpenAI-style list entry given for any address."""
    return "type" in entry and any(key in entry for key in (
        "arch", "compatibility_type", "quantization", "state", "max_context_length"))


class _NoServer(Exception):
    pass


class _NotJson(Exception):
    pass


async def _get_json(client: Any, url: str) -> dict[str, Any]:
    import httpx

    try:
        response = await client.get(url)
    except (httpx.ConnectError, httpx.ConnectTimeout):
        raise _NoServer() from None
    if response.status_code == 404:
        raise _NotJson("it has no model list at this address (HTTP 404)")
    response.raise_for_status()
    try:
        data = response.json()
    except ValueError:
        raise _NotJson("its answer is not a model list") from None
    if not isinstance(data, dict):
        raise _NotJson("its answer is not a model list")
    return data


def _problem(candidate: Candidate, exc: BaseException) -> str:
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        reason = "it did not answer in time"
    elif isinstance(exc, httpx.HTTPStatusError):
        reason = f"it answered with an error (HTTP {exc.response.status_code})"
    else:
        reason = str(exc) or type(exc).__name__
    return (f"Something answered on port {candidate.port} (usually {candidate.usual}), but "
            f"{reason}. Check that program, or add a profile by hand in Settings.")


def _int(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def _ollama_models(data: dict[str, Any]) -> list[FoundModel]:
    models = []
    for entry in data.get("models") or []:
        if not isinstance(entry, dict):
            continue
        name = str(entry.get("name") or entry.get("model") or "").strip()
        if not name or "embed" in name.lower():  # embedding models cannot chat
            continue
        details = found if isinstance(found := entry.get("details"), dict) else {}
        models.append(FoundModel(
            name=name,
            size_bytes=_int(entry.get("size")),
            parameters=str(details.get("parameter_size") or ""),
            quantisation=str(details.get("quantization_level") or ""),
        ))
    return models


def _openai_model(entry: dict[str, Any], lmstudio: dict[str, Any] | None) -> FoundModel | None:
    name = str(entry["id"]).strip()
    if lmstudio and str(lmstudio.get("type") or "") not in ("", "llm", "vlm"):
        return None  # an embedding model
    if not lmstudio and "embed" in name.lower():
        return None
    meta = found if isinstance(found := entry.get("meta"), dict) else {}
    params = _int(meta.get("n_params"))
    context = _int(entry.get("max_model_len")) or _int(meta.get("n_ctx_train"))
    loaded = None
    quant = ""
    if lmstudio:
        context = context or _int(lmstudio.get("max_context_length"))
        quant = str(lmstudio.get("quantization") or "")
        state = lmstudio.get("state")
        loaded = None if state is None else state == "loaded"
    return FoundModel(
        name=name,
        size_bytes=_int(meta.get("size")),
        parameters=f"{params / 1e9:.1f}B" if params else "",
        quantisation=quant,
        context_length=context,
        loaded=loaded,
    )


def profile_for(report: ServerReport, model: FoundModel) -> ModelProfile:
    """A model profile for ``model`` served by ``report``'s server (one click in the app)."""
    if report.candidate.kind == "ollama":
        model_string = f"ollama_chat/{model.name}"
        program = "Ollama"
    else:
        model_string = f"openai/{model.name}"
        program = report.program if report.program and len(report.program) < 30 else (
            f"server on port {report.port}")
    context = model.context_length or 8192
    return ModelProfile(
        name=f"{model.name} ({program} on this computer)"[:120],
        model=model_string,
        api_bases=[report.base_url],
        max_concurrency=1,
        timeout_s=600.0,
        max_tokens=1024,
        context_window=max(512, min(context, 131_072)),
    )
