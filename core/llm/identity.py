"""What a run records of the model that made its results, so results made with other settings
are never shown as current.

The model's name alone is not enough: a profile with the same model name but another server,
seed, temperature or answer length gives other answers (issue 28: such a profile made no call
and showed the old scores under its own name). A run's settings therefore hold the model
string (``"model"``, shown to people) and everything else of the profile that can change an
answer (``"model_settings"``)::

    settings = {"checklists": ..., **model_fields(profile)}   # a run's settings
    model_differences(old_run.settings, model_fields(profile))  # ["the server (...)"]
    describe_model(run.settings)       # "llama3.1 on http://gpu:11434, temperature 0, ..."
    profiles_of(app_settings.profiles, run.settings)           # the profiles that match

The calls themselves are cached under the same things (``core.llm._cache.cache_key``); this is
for a method's "is this result current?" and for its run to be resumed only by the same model.
A run recorded before EvalDesk kept these settings has only ``"model"``: it is not current for
a profile (the calls are still in the cache, so running again costs nothing when nothing
changed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from core.settings import LOCAL_MODEL_PREFIX, ModelProfile

__all__ = [
    "BUILT_IN_MODEL",
    "DEMO_NOTE",
    "answer_settings",
    "describe_model",
    "is_demo_model",
    "made_with",
    "model_differences",
    "model_fields",
    "model_name",
    "profiles_of",
]

#: The built-in model's model string (``core.settings.bundled_profile``).
BUILT_IN_MODEL = LOCAL_MODEL_PREFIX + "gemma-3-270m"
#: Said wherever content written by the built-in model is shown or exported.
DEMO_NOTE = (
    "Made by the built-in demo model (Gemma 3 270M), which is there to try EvalDesk without a "
    "server: its output only looks like real work. Do not use it for decisions; choose a larger "
    "model for real results."
)


def answer_settings(profile: ModelProfile) -> dict[str, Any]:
    """Everything of ``profile`` besides the model string that can change an answer: where it
    runs (servers, with any key in an address hidden; the local model file), temperature, seed,
    the longest answer and the context window (inputs longer than it are read in parts, and a
    long debate leaves out its oldest turns: :mod:`core.llm.context`)."""
    from core.secrets import hide_url_secrets

    out: dict[str, Any] = {
        # a key inside an address never reaches a project or a workbook (the same server with
        # another key gives the same answers)
        "api_bases": sorted(hide_url_secrets(b) for b in profile.api_bases),
        "temperature": float(profile.temperature),
        "seed": profile.seed,
        "max_tokens": int(profile.max_tokens),
        "context_window": int(profile.context_window),
    }
    if profile.is_local:
        out["gguf_path"] = profile.gguf_path or ""
    return out


def model_fields(model: Any) -> dict[str, Any]:
    """The entries of a run's settings that name its model: ``{"model": ...}`` plus
    ``"model_settings"`` (:func:`answer_settings`) for a :class:`ModelProfile`. ``model`` may
    also be a model string (only the name is known), or a run's settings (its entries are
    taken as they are)."""
    if isinstance(model, ModelProfile):
        return {"model": model.model, "model_settings": answer_settings(model)}
    if isinstance(model, Mapping):
        out: dict[str, Any] = {"model": str(model.get("model", "") or "")}
        if model.get("model_settings") is not None:
            out["model_settings"] = dict(model["model_settings"])
        return out
    return {"model": str(model or "")}


def model_name(model: Any) -> str:
    """The model string of ``model`` (a profile, a string or a run's settings)."""
    return model_fields(model)["model"]


def is_demo_model(model: Any) -> bool:
    """Whether ``model`` (a profile, a model string or a run's settings) is the built-in demo
    model (the bundled Gemma 3 270M: the local model without a file of its own)."""
    if isinstance(model, ModelProfile):
        return model.is_local and not model.gguf_path
    fields = model_fields(model)
    if not fields["model"].startswith(LOCAL_MODEL_PREFIX):
        return False
    settings = fields.get("model_settings")
    if settings is not None:
        return not settings.get("gguf_path")
    return fields["model"] == BUILT_IN_MODEL


def _number(value: Any) -> str:
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return str(value)


def _where(settings: Mapping[str, Any], model: str) -> str:
    if model.startswith(LOCAL_MODEL_PREFIX):
        path = settings.get("gguf_path") or ""
        return f"the model file {path}" if path else "the built-in model file"
    bases = settings.get("api_bases") or []
    if not bases:
        return "the provider's own service"
    return ("the server " if len(bases) == 1 else "the servers ") + ", ".join(bases)


def describe_model(model: Any) -> str:
    """The model of a run in plain words: "gpt-4o-mini (on the provider's own service,
    temperature 0, seed 0, answers of at most 1,024 tokens)"; only the name for a run that did
    not record the rest."""
    fields = model_fields(model)
    name = fields["model"] or "a model that was not recorded"
    settings = fields.get("model_settings")
    if settings is None:
        return name
    seed = settings.get("seed")
    parts = [f"on {_where(settings, fields['model'])}",
             f"temperature {_number(settings.get('temperature', 0))}",
             "no seed" if seed is None else f"seed {seed}",
             f"answers of at most {int(settings.get('max_tokens') or 0):,} tokens"]
    return f"{name} ({', '.join(parts)})"


def model_differences(then: Any, now: Any) -> list[str]:
    """What differs between the model a result was made with (``then``) and the one chosen
    (``now``), in plain words ("the server (http://a then, http://b now)"); empty when they
    give the same answers. A result that did not record its model's settings differs from a
    profile in "the model's settings (not recorded with these results)"."""
    before, after = model_fields(then), model_fields(now)
    if before["model"] != after["model"]:
        return [(f"the model ({before['model'] or 'not recorded'} then, "
                 f"{after['model'] or 'none'} now)")]
    old, new = before.get("model_settings"), after.get("model_settings")
    if old == new:
        return []
    if old is None or new is None:
        return [("the model's settings (server, temperature, seed and answer length were not "
                 "recorded with these results)")]
    out = []
    model = after["model"]
    if (old.get("api_bases"), old.get("gguf_path")) != (new.get("api_bases"),
                                                         new.get("gguf_path")):
        what = "the model file" if model.startswith(LOCAL_MODEL_PREFIX) else "the server"
        out.append(f"{what} ({_where(old, model)} then, {_where(new, model)} now)")
    if _number(old.get("temperature")) != _number(new.get("temperature")):
        out.append(f"the temperature ({_number(old.get('temperature'))} then, "
                   f"{_number(new.get('temperature'))} now)")
    if old.get("seed") != new.get("seed"):
        out.append(f"the seed ({old.get('seed')} then, {new.get('seed')} now)")
    if old.get("max_tokens") != new.get("max_tokens"):
        out.append(f"the longest answer ({old.get('max_tokens')} tokens then, "
                   f"{new.get('max_tokens')} now)")
    return out or ["the model's settings"]


def profiles_of(profiles: Iterable[ModelProfile], model: Any) -> list[str]:
    """The names of the ``profiles`` that give the answers ``model`` (a run's settings) was made
    with: same model and, when recorded, the same settings."""
    wanted = model_fields(model)
    out = []
    for profile in profiles:
        mine = model_fields(profile)
        if mine["model"] != wanted["model"]:
            continue
        if "model_settings" in wanted and mine["model_settings"] != wanted["model_settings"]:
            continue
        out.append(profile.name)
    return out


def made_with(profiles: Iterable[ModelProfile], model: Any) -> str:
    """Which profile made a result, in plain words: "profile “Judge”: openai/judge (on the
    server ..., temperature 0, ...)"; when no profile has those settings now, the model and its
    settings, saying so."""
    names = profiles_of(profiles, model)
    described = describe_model(model)
    if names:
        return "profile " + " / ".join(f"“{n}”" for n in names) + f": {described}"
    return f"{described}; no profile in Settings has these settings now"
