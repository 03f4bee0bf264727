"""Shared by the tests of ``core.secrets`` and of the profile dialog on a computer without a
password store: ``NoStore``, a keyring backend that always fails."""

from __future__ import annotations

import keyring.backend
from keyring.errors import NoKeyringError


class NoStore(keyring.backend.KeyringBackend):
    """A computer without a password store: every call raises, as keyring's own stand-in does."""

    priority = 1

    def get_password(self, service, username):
        raise NoKeyringError("No recommended backend was available. Install keyrings.alt")

    def set_password(self, service, username, password):
        raise NoKeyringError("No recommended backend was available. Install keyrings.alt")

    def delete_password(self, service, username):
        raise NoKeyringError("No recommended backend was available. Install keyrings.alt")
