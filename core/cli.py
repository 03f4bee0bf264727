"""``evaldesk <command> ...``: the headless entry point. Never imports Qt.

Each command is a function ``add_<name>_parser(subparsers)`` registering a sub-parser whose
``func(args) -> int`` does the work through the same ``core`` code the app uses. Progress goes to
stderr, results to files or stdout; exit code 0 on success, 1 on a user-fixable problem (the
message says what to do), 2 on bad arguments, 3 when results were written but some items failed,
130 when interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable, Sequence

from core import __version__
from core.runs import ProgressState

#: Exit code when results were written but some items failed (they are marked failed in the file).
EXIT_SOME_FAILED = 3

#: Functions that each add one command's sub-parser. Method packages append theirs here.
COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = []


class UserError(Exception):
    """A problem the user can fix; printed as one plain message, exit code 1."""


def stderr_progress(state: ProgressState) -> None:
    """A ``Progress`` listener that draws one updating line on stderr."""
    if state.total:
        line = f"{state.stage}: {state.done}/{state.total}"
    else:
        line = f"{state.stage}: {state.done}" if state.done else state.stage
    if state.detail:
        line += f"  {state.detail}"
    end = "\n" if state.total and state.done >= state.total else ""
    sys.stderr.write("\r\x1b[2K" + line[:200] + end if sys.stderr.isatty() else line + "\n")
    sys.stderr.flush()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; only ``command``'s module is imported (all of them when None)."""
    import core.cli as registry  # the registry, even when this file runs as __main__
    from core.cli_commands import COMMAND_MODULES

    parser = argparse.ArgumentParser(
        prog="evaldesk",
        description="EvalDesk: evaluate AI-generated text. Run without a command to open the app.",
    )
    parser.add_argument("--version", action="version", version=f"EvalDesk {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_line) in COMMAND_MODULES.items():
        if command is not None and name != command:
            subparsers.add_parser(name, help=help_line)
            continue
        before = len(registry.COMMANDS)
        importlib.import_module(module)
        added = registry.COMMANDS[before:] or [
            add for add in registry.COMMANDS if getattr(add, "__module__", "") == module
        ]
        for add in added:
            add(subparsers)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The command word of ``argv`` (the first argument that is not an option)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_in(arguments) or "")
    args = parser.parse_args(arguments)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"evaldesk: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("evaldesk: stopped. Finished work was kept.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
