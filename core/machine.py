"""What this computer has: processor cores and memory (for how many calls a model file takes at
once, see :func:`default_local_concurrency` and ``core.llm._engine``).

Plain standard library: ``/proc/meminfo`` on Linux, ``sysconf`` on macOS, ``GlobalMemoryStatusEx``
on Windows. A figure that cannot be read is None, and callers fall back to a cautious choice.
"""

from __future__ import annotations

import os
import sys

GB = 1024**3


def cpu_cores() -> int:
    """Cores this process may use (at least 1)."""
    try:
        # Linux only: on Windows and macOS the attribute is missing (caught below)
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _meminfo() -> dict[str, int]:
    found: dict[str, int] = {}
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                name, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    found[name] = int(parts[0]) * 1024  # kB
    except OSError:
        pass
    return found


def _windows_memory() -> tuple[int, int] | None:
    import ctypes

    class MemoryStatus(ctypes.Structure):
        _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                    ("ullTotalPhys", ctypes.c_ulonglong), ("ullAvailPhys", ctypes.c_ulonglong),
                    ("ullTotalPageFile", ctypes.c_ulonglong),
                    ("ullAvailPageFile", ctypes.c_ulonglong),
                    ("ullTotalVirtual", ctypes.c_ulonglong),
                    ("ullAvailVirtual", ctypes.c_ulonglong),
                    ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]

    status = MemoryStatus()
    status.dwLength = ctypes.sizeof(MemoryStatus)
    if not ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
        return None
    return int(status.ullTotalPhys), int(status.ullAvailPhys)


def total_memory() -> int | None:
    """Bytes of memory (RAM) in this computer, or None."""
    if sys.platform == "win32":
        found = _windows_memory()
        return found[0] if found else None
    info = _meminfo()
    if "MemTotal" in info:
        return info["MemTotal"]
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def available_memory() -> int | None:
    """Bytes of memory free for a new program now (Linux: MemAvailable; Windows: available
    physical memory; elsewhere half the total, a cautious guess), or None."""
    if sys.platform == "win32":
        found = _windows_memory()
        return found[1] if found else None
    info = _meminfo()
    if "MemAvailable" in info:
        return info["MemAvailable"]
    total = total_memory()
    return total // 2 if total else None


def default_local_concurrency(cores: int | None = None, memory: int | None = None) -> int:
    """How many calls at once suit the bundled model (Gemma 3 270M, about 0.3 GB, and 0.15 GB of
    context per call) on a computer with ``cores`` cores and ``memory`` bytes of RAM.

    On a processor, several sequences decoded together share one pass over the weights: with 2
    cores, 4 at once gave about 1.9x the tokens per second of one (issue 29); more cores keep
    gaining up to about 8. Little memory (under 4 GB) keeps it at 2, one core at 1."""
    cores = cpu_cores() if cores is None else cores
    memory = total_memory() if memory is None else memory
    if cores <= 1:
        return 1
    if memory is not None and memory < 4 * GB:
        return 2
    if cores >= 8 and (memory is None or memory >= 8 * GB):
        return 8
    return 4
