"""Proxy settings (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``, and the system's
own settings on Windows and macOS), as school and hospital laptops often have them.

* A model server on this computer (127.0.0.1, localhost, ::1) is never reached through a proxy:
  :func:`keep_loopback_direct` adds those names to ``NO_PROXY`` for every HTTP library in this
  process (httpx, litellm's clients, requests), so a proxy that is down cannot break a local
  server, and a local server's traffic never leaves the computer.
* When a remote server cannot be reached and the request went through a proxy that does not
  answer, :func:`explain_unreachable` names the proxy and where its setting comes from, instead
  of blaming the server.
* SOCKS proxies (``socks5://``, ``socks5h://``) work (httpx with ``socksio``); other kinds are
  refused by :func:`unusable_proxy` in plain words.
"""

from __future__ import annotations

import os
import socket
import urllib.request
from urllib.parse import urlsplit

LOOPBACK = ("127.0.0.1", "localhost", "::1")
_SUPPORTED = ("http", "https", "socks5", "socks5h")


def keep_loopback_direct(environ: dict[str, str] | os._Environ[str] | None = None) -> None:
    """Add 127.0.0.1, localhost and ::1 to ``NO_PROXY`` and ``no_proxy`` (keeping what is
    there). Harmless when no proxy is set."""
    env = os.environ if environ is None else environ
    for name in ("no_proxy", "NO_PROXY"):
        current = [p.strip() for p in env.get(name, "").split(",") if p.strip()]
        if "*" in current:
            continue
        missing = [host for host in LOOPBACK if host not in current]
        if missing or name not in env:
            env[name] = ",".join(current + missing)


def proxy_for(url: str) -> tuple[str, str] | None:
    """(proxy URL, the setting it comes from) that a request to ``url`` goes through, or None."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host in LOOPBACK:
        return None
    proxies = urllib.request.getproxies()
    no_proxy = proxies.get("no", "")
    if no_proxy and _bypassed(host, no_proxy):
        return None
    for scheme in (parts.scheme, "all"):
        if proxies.get(scheme):
            return proxies[scheme], _setting_name(scheme)
    return None


def _bypassed(host: str, no_proxy: str) -> bool:
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        entry = entry.lstrip(".")
        if host.lower() == entry or host.lower().endswith("." + entry):
            return True
    return False


def _setting_name(scheme: str) -> str:
    name = f"{scheme.upper()}_PROXY"
    if name in os.environ or name.lower() in os.environ:
        return name
    return "the system's proxy settings"


def reachable(proxy_url: str, timeout_s: float = 2.0) -> bool:
    """Whether something answers at the proxy's address (a TCP connection opens)."""
    parts = urlsplit(proxy_url if "://" in proxy_url else f"http://{proxy_url}")
    default = 1080 if (parts.scheme or "").startswith("socks") else 8080
    try:
        port = parts.port or default
    except ValueError:
        return False
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout_s):
            return True
    except OSError:
        return False


def explain_unreachable(api_base: str) -> str | None:
    """For a server that could not be reached: a sentence naming the proxy that requests to it
    go through when that proxy does not answer; None when there is no proxy or it answers."""
    found = proxy_for(api_base)
    if found is None:
        return None
    proxy, setting = found
    if reachable(proxy):
        return None
    shown = _without_password(proxy)
    return (
        f"Requests to {api_base} go through the proxy {shown} (set in {setting}), and that "
        "proxy does not answer. Check the proxy setting with whoever manages this computer's "
        "network, or remove it if it is no longer used; the model server itself was not asked."
    )


def unusable_proxy(api_base: str) -> str | None:
    """A sentence saying why the proxy set for ``api_base`` cannot be used (a kind EvalDesk does
    not speak, such as SOCKS4), or None when there is none or it can be used."""
    found = proxy_for(api_base)
    if found is None:
        return None
    proxy, setting = found
    scheme = urlsplit(proxy if "://" in proxy else f"http://{proxy}").scheme.lower()
    if scheme in _SUPPORTED:
        return None
    return (
        f"The proxy {_without_password(proxy)} (set in {setting}) is a '{scheme}' proxy, which "
        "EvalDesk cannot use: it works through HTTP, HTTPS and SOCKS5 proxies. Ask whoever "
        "manages this computer's network for one of those, or for the model server to be "
        "reachable without a proxy."
    )


def _without_password(url: str) -> str:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.password is None and parts.username is None:
        return url
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return parts._replace(netloc=netloc).geturl()
