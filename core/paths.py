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


class UserFoldersUnwritable(OSError):
    """Neither a per-user folder of EvalDesk nor a temporary stand-in for it can be written;
    ``str()`` says which folder and what to do."""


#: kind -> (the folder EvalDesk wanted, the temporary folder used instead, why), for the folders
#: that could not be made or written in this session (see :func:`unwritable_folders_notice`).
_STAND_INS: dict[str, tuple[Path, Path, str]] = {}

#: What each folder keeps, for the notice (in the words a user knows).
_WHAT_IS_KEPT = {
    "config": "your settings and model profiles",
    "data": "untitled projects, recovered work and downloaded models",
    "cache": "the cache",
    "logs": "the log file",
}


def _writable_folder(path: Path) -> str | None:
    """Why ``path`` cannot be made or written (None when it can)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return exc.strerror or str(exc)
    if not os.access(path, os.W_OK):
        return "it is read-only"
    return None


def _ensure(path: Path, kind: str) -> Path:
    """``path``, made if missing. When it cannot be made or written (a read-only home folder,
    a full or missing drive), a folder in the system's temporary folder stands in for this
    session, so EvalDesk still opens and works; :func:`unwritable_folders_notice` says what
    cannot be kept. :class:`UserFoldersUnwritable` when that cannot be written either."""
    if kind in _STAND_INS and _STAND_INS[kind][0] == path:
        return _STAND_INS[kind][1]
    why = _writable_folder(path)
    if why is None:
        return path
    import getpass
    import tempfile

    try:
        user = getpass.getuser()
    except (KeyError, OSError, ImportError):
        user = "user"
    stand_in = Path(tempfile.gettempdir()) / f"EvalDesk-{user}" / kind
    problem = _writable_folder(stand_in)
    if problem is not None:
        raise UserFoldersUnwritable(
            f"EvalDesk cannot write in {path} ({why}) nor in the temporary folder {stand_in} "
            f"({problem}), so it cannot keep {_WHAT_IS_KEPT.get(kind, 'its files')}. Ask whoever "
            "looks after this computer to make your home folder writable (or free some space), "
            "then start EvalDesk again."
        )
    _STAND_INS[kind] = (path, stand_in, why)
    return stand_in


def unwritable_folders_notice() -> str | None:
    """A plain notice of what cannot be kept because EvalDesk's own folders under the home
    folder cannot be written in this session (None when they all can)."""
    for kind, (folder, _, _) in list(_STAND_INS.items()):
        if folder != _wanted(kind) or _writable_folder(folder) is None:
            del _STAND_INS[kind]  # another home (EVALDESK_HOME changed), or writable again
    if not _STAND_INS:
        return None
    wanted = sorted(_STAND_INS.items())
    kept = ", ".join(_WHAT_IS_KEPT.get(kind, kind) for kind, _ in wanted)
    where = "; ".join(f"{folder} ({why})" for _, (folder, _, why) in wanted)
    stand_in = wanted[0][1][1].parent
    return (f"EvalDesk cannot write in its folders under your home folder: {where}. It works "
            f"anyway, but {kept} are kept only in the temporary folder {stand_in}, which the "
            "computer may empty at any time (at the latest when it restarts). Save projects "
            "with Save As in a folder you can write to, and ask whoever looks after this "
            "computer to make your home folder writable.")


def _wanted(kind: str) -> Path:
    """The per-user folder of ``kind`` (config, data, cache, logs), before any stand-in."""
    found = {
        "config": platformdirs.user_config_dir,
        "data": platformdirs.user_data_dir,
        "cache": platformdirs.user_cache_dir,
        "logs": platformdirs.user_log_dir,
    }[kind]
    return _home_override(kind) or Path(found(APP_NAME, False))


def user_config_dir() -> Path:
    return _ensure(_wanted("config"), "config")


def user_data_dir() -> Path:
    return _ensure(_wanted("data"), "data")


def user_cache_dir() -> Path:
    return _ensure(_wanted("cache"), "cache")


def user_log_dir() -> Path:
    return _ensure(_wanted("logs"), "logs")


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
