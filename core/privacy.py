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
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlparse

from core.deidentify.kinds import KIND_LABELS, KINDS
from core.settings import BUNDLED_PROFILE_NAME, ModelProfile

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project

__all__ = [
    "DEIDENTIFICATION_SHEET",
    "NOTICE_KIND",
    "DeidentificationSummary",
    "Destination",
    "deidentification_notice",
    "deidentification_readme",
    "deidentification_sheets",
    "deidentification_summary",
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


# -------------------------------------------------------------------- de-identification, said
#: The export sheet that lists what de-identification replaced (kinds and counts, never values).
DEIDENTIFICATION_SHEET = "De-identification"


@dataclass
class DeidentificationSummary:
    """What the calls logged in a project say about de-identification: how many were sent
    with placeholders and how many as written (and why), the replacements of each kind in the
    texts sent, the different values of each kind in the project's table, and the placeholders
    models made up (left as they were). Kinds and numbers only, never a value."""

    calls: int = 0
    deidentified: int = 0
    switch_off: int = 0
    this_computer: int = 0
    older: int = 0  #: not known: logged before calls were flagged, or outside gateway_for
    other: int = 0  #: sent as written without a project
    replaced: dict[str, int] = field(default_factory=dict)
    values: dict[str, int] = field(default_factory=dict)
    invented: int = 0

    @property
    def left_computer(self) -> bool:
        """Whether any call is known to have sent texts off this computer (with placeholders
        or as written)."""
        return bool(self.deidentified or self.switch_off or self.other)

    def sentence(self) -> str:
        """One plain sentence for a Read me sheet or the command line."""
        if not self.calls:
            return "no model calls were made"
        parts = [(f"{self.deidentified} of {self.calls} model calls sent with placeholders "
                  "instead of names and other identifiers")]
        if self.switch_off:
            parts.append(f"{self.switch_off} sent as written (de-identification off)")
        if self.this_computer:
            parts.append(f"{self.this_computer} to a model on this computer, as written")
        if self.older:
            parts.append(f"{self.older} not known (made before EvalDesk de-identified texts)")
        if self.other:
            parts.append(f"{self.other} sent as written")
        if self.replaced:
            parts.append("replaced: " + ", ".join(
                f"{n:,} × {KIND_LABELS.get(kind, kind)}" for kind, n in self.replaced.items()))
        if self.invented:
            parts.append(f"{self.invented} placeholders made up by a model, left as they were")
        return "; ".join(parts)


def deidentification_summary(project: Project, run_ids: Iterable[int] | None = None
                             ) -> DeidentificationSummary:
    """What the project's logged calls (of ``run_ids``; all when None) say about
    de-identification (see :class:`DeidentificationSummary`)."""
    from core.deidentify.project import CALL_FIELD, KIND, MAPPING_KEY

    notes: list[Any] = []
    if run_ids is None:
        notes = [note for _run, note in project.llm_call_notes(CALL_FIELD)]
    else:
        for run_id in dict.fromkeys(run_ids):
            notes += [note for _run, note in project.llm_call_notes(CALL_FIELD, run_id)]
    summary = DeidentificationSummary(calls=len(notes))
    replaced: dict[str, int] = {}
    for note in notes:
        if not isinstance(note, dict):
            summary.older += 1
            continue
        if note.get("on"):
            summary.deidentified += 1
            for kind, n in (note.get("counts") or {}).items():
                replaced[str(kind)] = replaced.get(str(kind), 0) + int(n)
            summary.invented += len(note.get("invented") or [])
        elif note.get("why") == "off":
            summary.switch_off += 1
        elif note.get("why") == "this_computer":
            summary.this_computer += 1
        elif note.get("why") == "no_project":
            summary.other += 1
        else:  # made outside ``core.llm.gateway_for``: where it went is not known
            summary.older += 1
    summary.replaced = {k: replaced[k] for k in KINDS if replaced.get(k)}
    table = project.get_artefact(KIND, MAPPING_KEY)
    entries = table.payload.get("entries", []) if table and isinstance(table.payload, dict) \
        else []
    for entry in entries:
        kind = str(entry.get("kind", "")) if isinstance(entry, dict) else ""
        if kind:
            summary.values[kind] = summary.values.get(kind, 0) + 1
    summary.values = {k: summary.values[k] for k in KINDS if summary.values.get(k)}
    return summary


def deidentification_sheets(project: Project, run_ids: Iterable[int] | None = None
                            ) -> list[Any]:
    """The export's "De-identification" sheet (a ``core.tables.Sheet``; none when no call of
    the project is known to have sent texts off this computer): per kind of identifier, the replacements in the texts sent and the
    different values in the project's table; then the calls sent with placeholders, sent as
    written (and why) and the placeholders a model made up. Never a value. Every method's
    workbook adds it with one line (``sheets += deidentification_sheets(project)``)."""
    import pandas as pd

    from core.tables import Sheet

    summary = deidentification_summary(project, run_ids)
    if not summary.left_computer:
        return []
    rows: list[dict[str, Any]] = []
    for kind in dict.fromkeys([*summary.replaced, *summary.values]):
        rows.append({"What": f"Replaced: {KIND_LABELS.get(kind, kind)}",
                     "Placeholder": f"[{kind} n]",
                     "Replacements in the texts sent": summary.replaced.get(kind, 0),
                     "Different values": summary.values.get(kind, 0)})
    for what, n in (("Model calls sent with placeholders", summary.deidentified),
                    ("Model calls sent as written: de-identification off", summary.switch_off),
                    ("Model calls sent as written: the model runs on this computer",
                     summary.this_computer),
                    ("Model calls not known (made before EvalDesk de-identified texts)",
                     summary.older),
                    ("Model calls sent as written: no project", summary.other),
                    ("Placeholders a model made up (left as they were, never guessed)",
                     summary.invented)):
        if n or what.startswith("Model calls sent with"):
            rows.append({"What": what, "Placeholder": "",
                         "Replacements in the texts sent": n, "Different values": ""})
    frame = pd.DataFrame(rows, columns=["What", "Placeholder", "Replacements in the texts sent",
                                        "Different values"])
    return [Sheet(DEIDENTIFICATION_SHEET, frame, description=(
        "what was replaced by placeholders before texts left this computer, in every model "
        "call this project made: kinds and counts only, never the values (they stay in the "
        "project, on this computer); the last rows count the calls"),
        widths={"What": 62, "Placeholder": 14, "Replacements in the texts sent": 16,
                "Different values": 12})]


def deidentification_readme(project: Project, run_ids: Iterable[int] | None = None
                            ) -> list[tuple[str, str]]:
    """The Read me line about de-identification (none when no call is known to have sent
    texts off this computer),
    for a workbook without room for the sheet (``readme += deidentification_readme(project)``)."""
    summary = deidentification_summary(project, run_ids)
    return [("De-identification", summary.sentence())] if summary.left_computer else []


def deidentification_notice(project: Project | None, profile: ModelProfile) -> str:
    """What the cloud notice says about de-identification for a run with ``profile`` (plain
    words; "" when the texts stay on this computer)."""
    from core.deidentify.project import DeidentifyUnavailable, load_choices, switch_on, why

    try:
        reason = why(project, profile)
    except DeidentifyUnavailable as exc:
        return f"De-identification cannot be used in this project: {exc}"
    if reason == "this_computer":
        return ""
    if reason == "no_project":
        return ("De-identification is off: without a project there is no table to put the "
                "real names back from.")
    if reason == "off":
        assert project is not None
        choices = load_choices(project)
        if choices.enabled is None and not switch_on(project, choices):
            return ("De-identification is off for this project: it already sent texts before "
                    "EvalDesk could replace names, so its finished steps keep their answers. "
                    "To replace names and other identifiers from now on, tick “Replace names "
                    "before sending” above the wizard's steps.")
        return ("De-identification is off for this project: names and other identifiers are "
                "sent as they are written. To replace them, tick “Replace names before "
                "sending” above the wizard's steps.")
    return ("De-identification is on: names you gave, names after a title or greeting, "
            "e-mail addresses, phone numbers, dates, record numbers and other identifiers are "
            "replaced by placeholders such as [STUDENT 3] before the texts are sent, and put "
            "back in the results. It cannot find every name (for example a name you did not "
            "list, written on its own): look at the sample with “Review names and a "
            "sample”, above the wizard's steps.")
