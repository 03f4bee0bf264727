"""Where a model profile sends the texts it is given, in plain words, and the rule for the one
notice before texts first go to a service off this computer.

    where = destination(profile)     # Destination(kind, label, key)
    where.label                      # "On this computer: your texts do not leave it."
    needs_cloud_notice(project, profile)       # True before the first such run in a project
    remember_cloud_notice(project, profile, who)   # "don't ask again" for this project

``kind`` is ``"this_computer"`` (the built-in model, or a server on a loopback address),
``"network"`` (a server on a private address: your organisation's network) or ``"cloud"`` (a
provider on the internet). The notice is asked for both of the last two: the texts leave this
computer either way. "Don't ask again" is kept in the project, per destination, so agreeing to
OpenAI once does not silence the notice for another provider.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlparse

from core.settings import BUNDLED_PROFILE_NAME, ModelProfile

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "NOTICE_KIND",
    "Destination",
    "destination",
    "needs_cloud_notice",
    "remember_cloud_notice",
]

DestinationKind = Literal["this_computer", "network", "cloud"]

#: The project artefact kind that holds "don't ask again" (one per destination key).
NOTICE_KIND = "privacy.cloud_notice"

#: litellm provider prefixes -> the company, for "sent to <provider>".
PROVIDERS = {
    "openai": "OpenAI", "azure": "Microsoft Azure", "azure_ai": "Microsoft Azure",
    "anthropic": "Anthropic", "gemini": "Google (Gemini)", "vertex_ai": "Google (Vertex AI)",
    "bedrock": "Amazon (Bedrock)", "mistral": "Mistral AI", "groq": "Groq",
    "cohere": "Cohere", "cohere_chat": "Cohere", "together_ai": "Together AI",
    "openrouter": "OpenRouter", "deepseek": "DeepSeek", "fireworks_ai": "Fireworks AI",
    "perplexity": "Perplexity", "xai": "xAI", "huggingface": "Hugging Face",
    "databricks": "Databricks", "watsonx": "IBM watsonx", "ollama": "Ollama",
    "ollama_chat": "Ollama", "hosted_vllm": "a vLLM server",
}
#: Providers whose usual address (no API base given) is on this computer.
#: Providers whose texts stay on this computer unless an API base says otherwise: Ollama, and
#: ``scripted`` (core.llm.ScriptedLLM, an in-process stand-in for a model in tests and demos).
_LOCAL_BY_DEFAULT = {"ollama", "ollama_chat", "scripted"}


@dataclass(frozen=True)
class Destination:
    kind: DestinationKind
    label: str       # one plain sentence for lists and tooltips
    name: str        # "OpenAI", "the server at 10.0.0.5"; "" for this computer
    key: str         # what "don't ask again" is remembered under

    @property
    def leaves_computer(self) -> bool:
        return self.kind != "this_computer"

    @property
    def short(self) -> str:
        """A few words for a table cell: "On this computer: your texts do not leave it",
        "Sent to OpenAI", "Sent to the server at 10.0.0.5 (your network)"."""
        if self.kind == "this_computer":
            return "On this computer: your texts do not leave it"
        if self.kind == "network":
            return f"Sent to {self.name} (your network)"
        return f"Sent to {self.name}"


def _host_kind(host: str) -> DestinationKind:
    host = host.strip("[]").lower()
    if host in ("localhost", "") or host.endswith(".localhost"):
        return "this_computer"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "network" if host.endswith((".local", ".lan", ".internal")) or "." not in host \
            else "cloud"
    if address.is_loopback:
        return "this_computer"
    if address.is_private or address.is_link_local:
        return "network"
    return "cloud"


def destination(profile: ModelProfile) -> Destination:
    """Where ``profile`` sends the texts of a run."""
    if profile.is_local:
        if profile.name == BUNDLED_PROFILE_NAME or not profile.gguf_path:
            label = ("On this computer: your texts do not leave it. A demo model for trying "
                     "the app; its results are not trustworthy.")
        else:
            label = "On this computer: your texts do not leave it."
        return Destination("this_computer", label, "", "this_computer")
    provider = profile.model.split("/", 1)[0] if "/" in profile.model else ""
    company = PROVIDERS.get(provider, "")
    if profile.api_bases:
        hosts = [(urlparse(base).hostname or "") for base in profile.api_bases]
        kinds = [_host_kind(host) for host in hosts]
        if all(kind == "this_computer" for kind in kinds):
            return Destination("this_computer",
                               "On this computer: your texts do not leave it.", "",
                               "this_computer")
        # the furthest place any text may go decides
        worst: DestinationKind = "cloud" if "cloud" in kinds else "network"
        host = next(h for h, k in zip(hosts, kinds, strict=True) if k == worst)
        if worst == "network":
            name = f"the server at {host}"
            label = f"Sent to {name} on your network."
        else:
            name = company if company and _official_host(provider, host) else host
            label = f"Sent to {name}, a service on the internet."
        return Destination(worst, label, name, f"{worst}:{host}")
    if provider in _LOCAL_BY_DEFAULT:
        return Destination("this_computer", "On this computer: your texts do not leave it.",
                           "", "this_computer")
    name = company or (provider or profile.model)
    return Destination("cloud", f"Sent to {name}, a service on the internet.", name,
                       f"cloud:{provider or profile.model}")


_OFFICIAL = {"openai": "openai.com", "anthropic": "anthropic.com",
             "gemini": "googleapis.com", "vertex_ai": "googleapis.com",
             "azure": "azure.com", "mistral": "mistral.ai", "groq": "groq.com"}


def _official_host(provider: str, host: str) -> bool:
    domain = _OFFICIAL.get(provider)
    if not domain:
        return False
    return host == domain or host.endswith("." + domain)


def needs_cloud_notice(project: Project | None, profile: ModelProfile) -> bool:
    """True when a run with ``profile`` sends texts off this computer and the project has not
    been told "don't ask again" for that destination (no project: always ask)."""
    where = destination(profile)
    if not where.leaves_computer:
        return False
    if project is None or project.closed:
        return True
    return project.get_artefact(NOTICE_KIND, where.key) is None


def remember_cloud_notice(project: Project | None, profile: ModelProfile, who: str) -> bool:
    """Keep "don't ask again" for this destination in ``project``. False when it could not be
    kept (no project, or one opened read-only): the notice will be shown again next time."""
    where = destination(profile)
    if project is None or project.closed or project.read_only or not where.leaves_computer:
        return False
    project.put_artefact(NOTICE_KIND, where.key, {
        "destination": where.name, "label": where.label, "profile": profile.name,
        "model": profile.model, "who": who,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }, origin="human")
    return True
