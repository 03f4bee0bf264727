"""Where EvalDesk keeps its files.

Per-user folders come from ``platformdirs``. Setting ``EVALDESK_HOME`` puts all of them under one
folder instead (tests use it so they never touch a real user's settings, cache or logs).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

APP_NAME = "EvalDesk"


def _home_override(kind: str) -> Path | None:
    home = os.environ.get("EVALDESK_HOME")
    return Path(home) / kind if home else None


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def user_config_dir() -> Path:
    return _ensure(_home_override("config") or Path(platformdirs.user_config_dir(APP_NAME, False)))


def user_data_dir() -> Path:
    return _ensure(_home_override("data") or Path(platformdirs.user_data_dir(APP_NAME, False)))


def user_cache_dir() -> Path:
    return _ensure(_home_override("cache") or Path(platformdirs.user_cache_dir(APP_NAME, False)))


def user_log_dir() -> Path:
    return _ensure(_home_override("logs") or Path(platformdirs.user_log_dir(APP_NAME, False)))


def resources_dir() -> Path:
    """The shipped ``resources/`` folder (beside the source tree, or inside a PyInstaller bundle)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def current_umask() -> int:
    """The process's umask (read from /proc where it exists, so it is never changed)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def temp_file_beside(target: Path, *, prefix: str, suffix: str) -> Path:
    """An empty temporary file in ``target``'s folder, to be renamed onto ``target`` when it is
    complete (so ``target`` is never seen half-written).

    ``tempfile.mkstemp`` creates its file readable by its owner only (0600), and the rename
    keeps that: a workbook or project the user saved on a shared drive would be unreadable to
    colleagues. The file gets the permissions a plainly created file would have instead
    (0666 minus the umask, e.g. 0644). Raises ``OSError`` when the folder is not writable.
    """
    import tempfile

    fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=Path(target).parent)
    try:
        if os.name == "posix":
            os.fchmod(fd, 0o666 & ~current_umask())
    finally:
        os.close(fd)
    return Path(name)


#: Characters Windows does not allow in a file name (besides control characters).
WINDOWS_FORBIDDEN = '<>:"/\\|?*'
#: Names Windows keeps for devices, with any extension ("CON.xlsx" is the console too).
WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"]
    + [f"{kind}{n}" for kind in ("COM", "LPT") for n in [*"123456789", "¹", "²", "³"]]
)
#: The longest file name (one path part) the usual file systems accept, in UTF-8 bytes.
MAX_NAME_BYTES = 255


def file_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a file name EvalDesk writes, in a plain sentence; None when it can.

    The rules are Windows' (the strictest of the systems EvalDesk runs on), so a file written on
    a Mac or Linux can also be opened, copied or sent to a Windows computer: none of
    ``< > : " / \\ | ? *`` or control characters, no dot or space at the end, not a device name
    such as CON or LPT1, at most 255 bytes."""
    if not name or not name.strip():
        return "The file name is empty. Type a name for the file."
    shown = name if len(name) <= 80 else name[:77] + "…"
    bad = sorted({ch for ch in name if ch in WINDOWS_FORBIDDEN}, key=WINDOWS_FORBIDDEN.index)
    if bad:
        listed = " ".join(bad)
        return (f'The file name "{shown}" contains {listed}, which Windows does not allow in file '
                "names (the file could not be opened or copied there). Choose a name without "
                f"{' '.join(WINDOWS_FORBIDDEN)}.")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return (f"The file name {shown!r} contains an invisible control character (such as a "
                "line break or a tab). Type the name again without it.")
    if name.endswith((".", " ")):
        return (f'The file name "{shown}" ends with a dot or a space, which Windows removes, so '
                "the file would not be found under this name. Remove it.")
    stem = name.split(".", 1)[0].rstrip(" ").upper()
    if stem in WINDOWS_RESERVED:
        return (f'The file name "{shown}" begins with {stem}, a name Windows keeps for a device, '
                "so no file can have it there. Choose another name.")
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > MAX_NAME_BYTES:
        return (f"The file name is too long ({len(name):,} characters, {size:,} bytes; at most "
                f"{MAX_NAME_BYTES} bytes fit in a file name). Choose a shorter name.")
    return None


#: Names ``tempfile.mkstemp`` gives: the prefix, 8 characters of its alphabet, the suffix.
_MKSTEMP_PART = "[a-z0-9_]{8}"


def claim_temp_file_beside(target: Path, *, prefix: str, suffix: str) -> tuple[Path, int | None]:
    """:func:`temp_file_beside`, held while it is being written, after removing the temporary
    files of the same kind that a killed EvalDesk left in that folder.

    Returns the file and an open handle that holds the operating system's lock on it (None where
    it could not be opened); pass the handle to :func:`let_go` when the file has been renamed or
    deleted. Left-over files are those named ``prefix`` + 8 random characters + ``suffix`` (as
    this function makes them) whose lock nobody holds: an export running at the same time, in
    this EvalDesk or another, holds its lock, so its file is never touched."""
    remove_stale_temp_files(Path(target).parent, prefix=prefix, suffix=suffix)
    name = temp_file_beside(target, prefix=prefix, suffix=suffix)
    if sys.platform == "win32":
        # an open file can be neither renamed nor deleted there: the writer's own handle guards
        # it while it is written, and nothing is held in between
        return name, None
    try:
        fd = os.open(name, os.O_RDWR)
    except OSError:
        return name, None
    _lock_now(fd)  # a new file: nobody else holds it
    return name, fd


def let_go(fd: int | None) -> None:
    """Close a handle from :func:`claim_temp_file_beside` (its lock goes with it)."""
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def remove_stale_temp_files(folder: Path, *, prefix: str, suffix: str) -> list[Path]:
    """Delete the temporary files ``prefix`` + 8 random characters + ``suffix`` in ``folder``
    whose lock nobody holds (left by an EvalDesk killed while writing); returns those deleted.
    Anything else, and anything that cannot be checked, is left alone."""
    import re

    pattern = re.compile(re.escape(prefix) + _MKSTEMP_PART + re.escape(suffix) + r"\Z")
    removed: list[Path] = []
    try:
        names = [entry.name for entry in os.scandir(folder)
                 if pattern.match(entry.name) and entry.is_file(follow_symlinks=False)]
    except OSError:
        return removed
    for name in names:
        path = Path(folder) / name
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0)
                         | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            if not _lock_now(fd):
                continue  # being written right now
            if sys.platform == "win32":
                os.close(fd)
                fd = -1
            os.unlink(path)
            removed.append(path)
        except OSError:
            continue
        finally:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
    return removed


def _lock_now(fd: int) -> bool:
    """Take the operating system's exclusive lock on ``fd`` without waiting (False when another
    open of the file holds it). Closing ``fd`` lets it go."""
    if sys.platform == "win32":
        return True  # a file open elsewhere cannot be deleted there: the deletion is the test
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True
