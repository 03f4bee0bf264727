"""Download a recommended model file: progress, pause and resume, integrity, repair.

    result = download_model(model, progress=progress, cancel=cancel)   # blocking: run it in a
                                                                        # worker thread

* The file grows as ``<name>.gguf.part`` beside a small ``.part.json`` that remembers the
  address, the size and the checksum. Pause (cancel the token) or a broken connection keeps it;
  the next call continues from where it stopped with an HTTP ``Range`` request (a server that
  ignores ``Range`` is read from the start and the bytes already here are skipped, not written).
  A broken connection is resumed automatically a few times before the download stops.
* Integrity: the SHA-256 listed with the model, else the one the server publishes for the
  file. Hugging Face sends it for large files in the ``X-Linked-ETag`` header of the first
  answer (before it redirects to its storage), with the size in ``X-Linked-Size``. Without a
  published checksum only the size is checked, and the result says so.
* Repair: Hugging Face publishes one checksum for the whole file, no checksums of its pieces,
  so a mismatch cannot say which bytes are wrong. The downloaded file is never thrown away:
  it is compared piece by piece with the server's copy (``Range`` requests), a piece that
  differs is replaced, and the whole file is checked again after each replaced piece, stopping
  as soon as it matches. Without ``Range`` support nothing can be mended: the file is kept and
  the message says what to do.
* :func:`discard_partial` deletes a partial download (only when the user asks to cancel it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from core.local_models.catalogue import RecommendedModel, format_size, models_dir
from core.local_models.files import ModelFile, note_for_download, read_gguf
from core.runs import Cancelled, CancelToken, Progress

__all__ = [
    "PIECE_SIZE",
    "DownloadError",
    "DownloadResult",
    "RemoteFile",
    "discard_partial",
    "download_model",
    "look_up",
    "partial_state",
]

PIECE_SIZE = 32 * 1024 * 1024
CHUNK = 1024 * 1024
_SHA = re.compile(r"^[0-9a-f]{64}$")


class DownloadError(Exception):
    """The download stopped; the message says what happened, what was kept and what to do."""


@dataclass(frozen=True)
class RemoteFile:
    url: str                 # where the bytes are (after redirects)
    size: int | None
    sha256: str              # "" when nobody published one
    sha_source: str          # "listed with the model" / "published by the server" / ""
    ranges: bool             # the server says it answers Range requests


@dataclass(frozen=True)
class DownloadResult:
    model: ModelFile
    verified: str            # in words: how the file was checked
    repaired_pieces: int = 0
    resumed_from: int = 0


def _client(timeout_s: float) -> Any:
    import httpx

    return httpx.Client(follow_redirects=True,
                        timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 15.0)))


def _published_sha(headers: Any) -> str:
    value = str(headers.get("x-linked-etag") or "").strip().strip('"').lower()
    if value.startswith("w/"):
        value = value[2:].strip('"')
    return value if _SHA.match(value) else ""


def look_up(url: str, *, listed_sha256: str = "", client: Any = None,
            timeout_s: float = 30.0) -> RemoteFile:
    """Ask the server about the file without downloading it: size, checksum, Range support."""
    import httpx

    own = client is None
    client = client or _client(timeout_s)
    try:
        first = client.head(url, follow_redirects=False)
        sha = _published_sha(first.headers)
        size = first.headers.get("x-linked-size")
        final = url
        response = first
        if first.is_redirect:
            final = urljoin(url, first.headers["location"])
            response = client.head(final, follow_redirects=True)
            final = str(response.url)
        response.raise_for_status()
        if not sha:
            sha = _published_sha(response.headers)
        size = size or response.headers.get("content-length")
        ranges = response.headers.get("accept-ranges", "").lower() == "bytes"
    except httpx.HTTPStatusError as exc:
        raise DownloadError(
            f"The server refused the file (HTTP {exc.response.status_code}) at {url}. The model "
            "may have moved: check its page, or download the file in your browser and use "
            "“Use a model file I already have”."
        ) from None
    except httpx.HTTPError as exc:
        raise DownloadError(_network_problem(exc, url)) from None
    finally:
        if own:
            client.close()
    listed = listed_sha256.strip().lower()
    if listed:
        source = "listed with the model"
        if sha and sha != listed:
            raise DownloadError(
                "The server publishes another checksum for this file than the one EvalDesk "
                "lists, so the file has changed since EvalDesk was released. Nothing was "
                "downloaded. Update EvalDesk, or download the file yourself from the model's "
                "page and use “Use a model file I already have”."
            )
        sha = listed
    else:
        source = "published by the server" if sha else ""
    try:
        size_value = int(size) if size else None
    except ValueError:
        size_value = None
    return RemoteFile(final, size_value, sha, source, ranges)


def _network_problem(exc: BaseException, url: str) -> str:
    host = url.split("/")[2] if "://" in url else url
    return (f"{host} could not be reached ({type(exc).__name__}). Check the internet "
            "connection (and the proxy, at work), then press Resume: what was downloaded is "
            "kept.")


def _paths(model: RecommendedModel, folder: Path | None) -> tuple[Path, Path, Path]:
    folder = folder or models_dir()
    target = folder / model.file_name
    part = target.with_name(target.name + ".part")
    return target, part, part.with_name(part.name + ".json")


def partial_state(model: RecommendedModel, folder: Path | None = None) -> int:
    """Bytes of ``model`` already downloaded (0 when no partial file)."""
    _target, part, _state = _paths(model, folder)
    try:
        return part.stat().st_size
    except OSError:
        return 0


def discard_partial(model: RecommendedModel, folder: Path | None = None) -> None:
    """Delete the partial download of ``model`` (the user cancelled it)."""
    _target, part, state = _paths(model, folder)
    part.unlink(missing_ok=True)
    state.unlink(missing_ok=True)


def _sha256_of(path: Path, progress: Progress, cancel: CancelToken, stage: str) -> str:
    digest = hashlib.sha256()
    progress.start(stage, total=path.stat().st_size)
    with path.open("rb") as handle:
        while True:
            cancel.raise_if_cancelled()
            block = handle.read(CHUNK * 4)
            if not block:
                break
            digest.update(block)
            progress.advance(len(block))
    return digest.hexdigest()


def download_model(
    model: RecommendedModel,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    folder: Path | None = None,
    retries: int = 5,
    piece_size: int = PIECE_SIZE,
    timeout_s: float = 30.0,
    free_disk: Callable[[Path], int] | None = None,
    wait: Callable[[float], None] | None = None,
) -> DownloadResult:
    """Download (or resume, or check and repair) ``model`` into the models folder. Blocking.

    Raises :class:`core.runs.Cancelled` on pause (the partial file is kept) and
    :class:`DownloadError` with a plain message otherwise (the partial file is kept)."""
    import httpx

    progress = progress or Progress()
    cancel = cancel or CancelToken()
    target, part, state_path = _paths(model, folder)
    if target.exists():
        raise DownloadError(f"{target.name} is already downloaded, in {target.parent}.")
    client = _client(timeout_s)
    cancel.on_cancel(client.close)  # a paused download stops at once, even mid-read
    try:
        progress.start(f"Asking {model.url.split('/')[2]} about {model.file_name}")
        remote = look_up(model.url, listed_sha256=model.sha256, client=client)
        state = _load_state(state_path)
        have = part.stat().st_size if part.exists() else 0
        if have and state and (state.get("sha256") != remote.sha256
                               or state.get("size") != remote.size):
            raise DownloadError(
                f"The file on the server has changed since this download began, so the "
                f"{format_size(have)} downloaded so far cannot be continued. They are kept in "
                f"{part}. Choose “Cancel download” to delete them and start again."
            )
        _save_state(state_path, {"url": model.url, "size": remote.size, "sha256": remote.sha256})
        size = remote.size
        if size is not None:
            room = (free_disk or (lambda p: shutil.disk_usage(p).free))(part.parent)
            if room < size - have:
                raise DownloadError(
                    f"Not enough free disk space in {part.parent}: the download needs "
                    f"{format_size(size - have)} more and {format_size(room)} is free. Free "
                    "some space, then press Resume."
                )
        resumed_from = have
        failures = 0
        while size is None or have < size:
            try:
                have = _fetch(client, remote, part, have, progress, cancel)
                break
            except Cancelled:
                raise
            except (httpx.TransportError, OSError) as exc:
                if cancel.cancelled:
                    raise Cancelled("Paused. What was downloaded is kept.") from None
                failures += 1
                have = part.stat().st_size if part.exists() else 0
                if failures > retries:
                    raise DownloadError(
                        f"The connection broke {failures} times ({type(exc).__name__}). "
                        f"{format_size(have)} of {format_size(size)} is downloaded and kept; "
                        "press Resume to continue."
                    ) from None
                progress.note(f"The connection broke; continuing from {format_size(have)}…")
                (wait or time.sleep)(min(30.0, 2.0 ** failures))
        have = part.stat().st_size if part.exists() else 0
        if size is not None and have < size:
            raise DownloadError(
                f"The server says the file is complete, but only {format_size(have)} of "
                f"{format_size(size)} arrived. They are kept in {part}; press Resume to try "
                "again."
            )
        if size is not None and have > size:
            raise DownloadError(
                f"{part.name} is larger than the file on the server, so it cannot be the same "
                f"file. It was kept in {part.parent}; choose “Cancel download” to delete it and "
                "start again."
            )
        verified, repaired = _verify(client, remote, part, progress, cancel, piece_size)
        try:
            read_gguf(part)
        except Exception as exc:
            raise DownloadError(f"The downloaded file is not a usable model file: {exc}") from exc
        os.replace(part, target)
        state_path.unlink(missing_ok=True)
        note = note_for_download(model, target, remote.sha256, verified)
        return DownloadResult(note, verified, repaired, resumed_from)
    except (httpx.HTTPError, RuntimeError) as exc:  # RuntimeError: client closed by Pause
        if cancel.cancelled:
            raise Cancelled("Paused. What was downloaded is kept.") from None
        raise DownloadError(_network_problem(exc, model.url)) from None
    finally:
        client.close()


def _load_state(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _save_state(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def _fetch(client: Any, remote: RemoteFile, part: Path, have: int, progress: Progress,
           cancel: CancelToken) -> int:
    """Append the rest of the file to ``part``; returns the bytes now here."""
    headers = {"Range": f"bytes={have}-"} if have else {}
    progress.start(f"Downloading {part.name[:-5]}", total=remote.size,
                   detail=f"continuing from {format_size(have)}" if have else "")
    progress.advance(have)
    with client.stream("GET", remote.url, headers=headers) as response:
        if response.status_code == 416:  # nothing left to send
            return have
        response.raise_for_status()
        skip = have if (have and response.status_code == 200) else 0  # Range was ignored
        with part.open("ab") as out:
            for block in response.iter_bytes():  # as it arrives: a break loses nothing
                cancel.raise_if_cancelled()
                if skip:
                    dropped = min(skip, len(block))
                    skip -= dropped
                    block = block[dropped:]
                    if not block:
                        continue
                out.write(block)
                have += len(block)
                progress.advance(len(block))
    if remote.size is not None and have < remote.size:
        import httpx

        raise httpx.RemoteProtocolError("the server closed the connection early")
    return have


def _verify(client: Any, remote: RemoteFile, part: Path, progress: Progress,
            cancel: CancelToken, piece_size: int) -> tuple[str, int]:
    """Check the finished file; mend it piece by piece when its checksum does not match."""
    size = part.stat().st_size
    if not remote.sha256:
        return (f"size checked ({format_size(size)}); the server published no checksum", 0)
    if _sha256_of(part, progress, cancel, "Checking the file (SHA-256)") == remote.sha256:
        return (f"SHA-256 checked ({remote.sha_source})", 0)
    repaired = _mend(client, remote, part, size, progress, cancel, piece_size)
    pieces = f"piece{'s' if repaired != 1 else ''} of {format_size(piece_size)}"
    return (f"SHA-256 checked ({remote.sha_source}) after replacing {repaired} damaged {pieces}",
            repaired)


def _mend(client: Any, remote: RemoteFile, part: Path, size: int, progress: Progress,
          cancel: CancelToken, piece_size: int) -> int:
    pieces = (size + piece_size - 1) // piece_size
    repaired = 0
    for index in range(pieces):
        start = index * piece_size
        end = min(size, start + piece_size) - 1
        progress.start(
            "The file did not match its checksum: comparing it with the server's copy, piece "
            f"by piece ({repaired} replaced so far)", total=pieces)
        progress.advance(index)
        cancel.raise_if_cancelled()
        with client.stream("GET", remote.url,
                           headers={"Range": f"bytes={start}-{end}"}) as response:
            if response.status_code != 206:  # not read: it may be the whole file
                raise DownloadError(
                    "The downloaded file does not match the checksum the server publishes, and "
                    "this server does not send parts of a file, so it cannot be mended. The "
                    f"file is kept as {part}. Press Resume to try again later, or choose "
                    "“Cancel download” to delete it and download it again."
                )
            response.read()
        fresh = response.content
        with part.open("r+b") as handle:
            handle.seek(start)
            if handle.read(len(fresh)) == fresh:
                continue
            handle.seek(start)
            handle.write(fresh)
        repaired += 1
        if _sha256_of(part, progress, cancel, "Checking the mended file") == remote.sha256:
            return repaired
    raise DownloadError(
        "Even after comparing every piece with the server's copy the file does not match the "
        "checksum the server publishes: the server's own copy seems damaged. The file is kept "
        f"as {part}; try again later, or get the file another way."
    )
