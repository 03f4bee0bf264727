"""API keys: in the OS keyring, with environment variables as a fallback. Never in a file.

Keys are stored under the service ``EvalDesk`` with the profile name as the user name. When a
profile has no stored key, litellm's own environment variables (``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``, ...) still work, and so does ``EVALDESK_API_KEY_<PROFILE>``.
"""

from __future__ import annotations

import os
import re

SERVICE = "EvalDesk"


class KeyringUnavailable(Exception):
    """The OS keyring could not be used; the message says what to do instead."""


def _env_name(profile_name: str) -> str:
    return "EVALDESK_API_KEY_" + re.sub(r"[^A-Z0-9]+", "_", profile_name.upper()).strip("_")


def get_api_key(profile_name: str) -> str | None:
    """The key for ``profile_name``: keyring first, then ``EVALDESK_API_KEY_<PROFILE>``."""
    try:
        import keyring

        key = keyring.get_password(SERVICE, profile_name)
    except Exception:
        key = None
    return key or os.environ.get(_env_name(profile_name)) or None


def set_api_key(profile_name: str, key: str) -> None:
    try:
        import keyring

        if key:
            keyring.set_password(SERVICE, profile_name, key)
        else:
            delete_api_key(profile_name)
    except KeyringUnavailable:
        raise
    except Exception as exc:
        raise KeyringUnavailable(
            "The API key could not be stored in your system's password store "
            f"({type(exc).__name__}: {exc}). Set the environment variable "
            f"{_env_name(profile_name)} instead, or the provider's own variable (for example "
            "OPENAI_API_KEY)."
        ) from exc


def delete_api_key(profile_name: str) -> None:
    try:
        import keyring
        from keyring.errors import PasswordDeleteError

        try:
            keyring.delete_password(SERVICE, profile_name)
        except PasswordDeleteError:
            pass
    except Exception as exc:
        raise KeyringUnavailable(f"The stored API key could not be removed: {exc}") from exc


def has_api_key(profile_name: str) -> bool:
    return get_api_key(profile_name) is not None
