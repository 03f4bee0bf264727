"""User settings: model profiles, embedding model and device, recent projects.

Stored as one versioned JSON file in the per-user config folder. Reading an older file migrates it
(one function per version step, in ``MIGRATIONS``); a file from a newer EvalDesk or a damaged file
is never overwritten: it is kept aside and defaults are used, with a message saying so.

API keys are *not* settings: they live in the OS keyring (see ``core.secrets``).
"""

from __future__ import annotations

import getpass
import json
import os
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from core import paths

SETTINGS_VERSION = 1
SETTINGS_FILE = "settings.json"

#: The model string of a model file run on this computer (llama.cpp's server, ``core.llm._engine``).
LOCAL_MODEL_PREFIX = "evaldesk-local/"
BUNDLED_PROFILE_NAME = "Built-in local model (Gemma 3 270M, for trying the app)"

Device = Literal["auto", "cpu", "cuda", "mps"]


class ModelProfile(BaseModel):
    """How to reach one LLM. ``model`` is a litellm model string ("openai/gpt-4o-mini",
    "anthropic/claude-sonnet-4-5", "ollama/llama3.1", "hosted_vllm/Qwen/Qwen2.5-7B-Instruct") or
    ``evaldesk-local/<name>`` for the built-in local model running ``gguf_path`` (empty = bundled)."""

    name: str = Field(min_length=1, max_length=120)
    model: str = Field(min_length=1)
    api_bases: list[str] = Field(default_factory=list)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    seed: int | None = 0
    max_tokens: int = Field(default=1024, ge=1, le=1_000_000)
    timeout_s: float = Field(default=120.0, gt=0)
    max_concurrency: int = Field(default=4, ge=1, le=256)
    max_retries: int = Field(default=4, ge=0, le=10)
    context_window: int = Field(default=8192, ge=512)
    gguf_path: str = ""

    @field_validator("name")
    @classmethod
    def _strip_name(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("A profile needs a name.")
        return value

    @field_validator("api_bases")
    @classmethod
    def _clean_bases(cls, value: list[str]) -> list[str]:
        return [v.strip() for v in value if v and v.strip()]

    @property
    def is_local(self) -> bool:
        return self.model.startswith(LOCAL_MODEL_PREFIX)


def bundled_profile() -> ModelProfile:
    """The built-in model's profile. Its calls at once suit this computer (cores and memory,
    ``core.machine.default_local_concurrency``): the engine decodes them together."""
    from core.machine import default_local_concurrency

    return ModelProfile(
        name=BUNDLED_PROFILE_NAME,
        model=LOCAL_MODEL_PREFIX + "gemma-3-270m",
        max_concurrency=default_local_concurrency(),
        max_tokens=512,
        context_window=8192,
        timeout_s=600,
    )


class EmbeddingSettings(BaseModel):
    """``model_path`` empty means the bundled all-MiniLM-L6-v2."""

    model_path: str = ""
    device: Device = "auto"


class Settings(BaseModel):
    version: int = SETTINGS_VERSION
    profiles: list[ModelProfile] = Field(default_factory=lambda: [bundled_profile()])
    default_profile: str = BUNDLED_PROFILE_NAME
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    recent_projects: list[str] = Field(default_factory=list)
    user_name: str = Field(default_factory=lambda: _login_name())
    first_run_done: bool = False

    def profile(self, name: str | None = None) -> ModelProfile:
        """The profile called ``name`` (default profile when None). KeyError if there is none."""
        wanted = name or self.default_profile
        for profile in self.profiles:
            if profile.name == wanted:
                return profile
        raise KeyError(f"There is no model profile called '{wanted}'. Check Settings → Models.")

    def upsert_profile(self, profile: ModelProfile, old_name: str | None = None) -> None:
        """Add ``profile`` or replace the one called ``old_name`` (or its own name)."""
        key = old_name or profile.name
        for i, existing in enumerate(self.profiles):
            if existing.name == key:
                self.profiles[i] = profile
                if self.default_profile == key:
                    self.default_profile = profile.name
                return
        self.profiles.append(profile)

    def remove_profile(self, name: str) -> None:
        self.profiles = [p for p in self.profiles if p.name != name]
        if self.default_profile == name:
            self.default_profile = self.profiles[0].name if self.profiles else ""

    def add_recent(self, path: str | Path, keep: int = 10) -> None:
        text = str(Path(path).resolve())
        self.recent_projects = [text] + [p for p in self.recent_projects if p != text]
        del self.recent_projects[keep:]


def _login_name() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name on some systems (each raises its own)
        return "me"


#: ``MIGRATIONS[n]`` turns a version-n dict into a version-(n+1) dict.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


class SettingsProblem(Exception):
    """The settings file could not be used; ``str()`` says what happened and what was done."""


def settings_path() -> Path:
    return paths.user_config_dir() / SETTINGS_FILE


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    version = int(data.get("version", 0))
    if version > SETTINGS_VERSION:
        raise SettingsProblem(
            f"The settings file was written by a newer version of EvalDesk (format {version}, "
            f"this version reads up to {SETTINGS_VERSION}). It was left untouched; this session "
            "uses default settings and will not save over it. Update EvalDesk to use them."
        )
    while version < SETTINGS_VERSION:
        if version not in MIGRATIONS:
            raise SettingsProblem(f"No way to upgrade settings from format {version}.")
        data = MIGRATIONS[version](dict(data))
        version += 1
        data["version"] = version
    return data


class SettingsStore:
    """Loads and saves :class:`Settings`. ``problem`` holds a message for the user after load."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or settings_path()
        self.problem: str | None = None
        self.read_only = False

    def load(self) -> Settings:
        self.problem, self.read_only = None, False
        if not self.path.exists():
            return Settings()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                # one route for every unreadable file: the ValueError handled below
                raise ValueError("not a JSON object")  # noqa: TRY004
            return Settings.model_validate(migrate(data))
        except SettingsProblem as exc:
            self.problem, self.read_only = str(exc), True
            return Settings()
        except (ValueError, ValidationError, OSError) as exc:
            backup = self.path.with_name(
                f"{self.path.stem}.damaged-{datetime.now():%Y%m%d-%H%M%S}{self.path.suffix}"
            )
            try:
                self.path.replace(backup)
                kept = f"It was kept as {backup}."
            except OSError:
                kept, self.read_only = "It could not be moved aside, so it was left as it is.", True
            self.problem = (
                f"Your settings file {self.path} could not be read ({_first_line(exc)}). {kept} "
                "EvalDesk started with default settings."
            )
            return Settings()

    def save(self, settings: Settings) -> None:
        if self.read_only:
            raise SettingsProblem(
                f"Settings were not saved: {self.path} belongs to a newer EvalDesk or is damaged."
            )
        data = settings.model_dump(mode="json")
        data["version"] = SETTINGS_VERSION
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2, ensure_ascii=False)
            os.replace(tmp, self.path)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise SettingsProblem(
                f"Settings could not be saved to {self.path}: {exc.strerror or exc}. "
                "Check that the folder exists and you may write to it."
            ) from exc


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
