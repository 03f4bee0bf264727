"""``evaldesk <command> ...``: the headless entry point. Never imports Qt.

:data:`COMMANDS` is one static table: command name -> (module, one help line). Only the module of
the command being run is imported, so ``evaldesk --version`` and ``evaldesk --help`` load no
pandas, scipy or litellm. A command module has ``add_parser(subparsers)``, which adds its
sub-parser whose ``func(args) -> int`` does the work through the method's ``session`` and
``inputs`` modules (the same code the app runs).

Progress goes to stderr, results to files or stdout. Exit codes: 0 success, 1 a problem the user
can fix (the message says what to do), 2 bad arguments, 3 results written but some items failed
(they are marked in the file), 130 interrupted (finished work is kept), 143 stopped by SIGTERM
(as Ctrl+C). A project file that fails during a run (read-only, damaged, disk full) is a problem
the user can fix: exit code 1.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from core import __version__
from core.runs import ProgressState
from core.secrets import redact_logs

__all__ = [
    "COMMANDS",
    "EXIT_SOME_FAILED",
    "QUIET_LOGGERS",
    "UserError",
    "build_parser",
    "configure_logging",
    "main",
    "stderr_progress",
]

#: Exit code when results were written but some items failed (they are marked failed in the file).
EXIT_SOME_FAILED = 3

#: command name -> (the module that defines it, the help line ``evaldesk --help`` shows).
COMMANDS: dict[str, tuple[str, str]] = {
    "project": ("core.cli.project", "look inside an EvalDesk project file"),
    "llm": ("core.cli.llm", "check a language-model connection"),
    "models": ("core.cli.models", "find, download and import language models for this computer"),
    "aqer": ("core.cli.aqer", "score crowd workers and LLM answers without an answer key (AQER)"),
    "checklist": (
        "core.cli.checklist",
        "InteractEval: build a Yes/No checklist from think-aloud, score texts with it",
    ),
    "majeval": (
        "core.cli.majeval",
        "MAJ-Eval: stakeholder personas from documents debate and score content",
    ),
}

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
    parser = argparse.ArgumentParser(
        prog="evaldesk",
        description="EvalDesk: evaluate AI-generated text. Run without a command to open the app.",
    )
    parser.add_argument("--version", action="version", version=f"EvalDesk {__version__}")
    parser.add_argument("--verbose", action="store_true",
                        help="also print the libraries' own messages (litellm, llama.cpp, HTTP); "
                        "may stand anywhere on the line")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_line) in COMMANDS.items():
        if command is not None and name != command:
            subparsers.add_parser(name, help=help_line)
            continue
        importlib.import_module(module).add_parser(subparsers)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The command word of ``argv`` (the first argument that is not an option)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


#: Libraries whose INFO lines would bury our own messages in the terminal.
QUIET_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "httpcore",
                 "llama_cpp", "sentence_transformers", "urllib3", "filelock")


def configure_logging(verbose: bool) -> None:
    """Keep the libraries' INFO lines out of the terminal unless ``--verbose`` asks for them
    (then everything from INFO up goes to stderr)."""
    import logging
    import os

    if logging.lastResort is not None:  # what prints a warning when nothing else is set up
        redact_logs(logging.lastResort)
    if verbose:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                            format="%(levelname)s %(name)s: %(message)s")
        for handler in logging.getLogger().handlers:  # no key a library logs reaches the screen
            redact_logs(handler)
        os.environ.setdefault("LITELLM_LOG", "INFO")
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.INFO)
        return
    os.environ.setdefault("LITELLM_LOG", "ERROR")  # read when litellm is imported
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in arguments
    arguments = [a for a in arguments if a != "--verbose"]
    configure_logging(verbose)
    parser = build_parser(_command_in(arguments) or "")
    args = parser.parse_args(arguments)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    terminated: list[int] = []
    previous = _stop_on_sigterm(terminated)
    from core.llm._engine import add_engine_listener

    remove = add_engine_listener(_tell_engine_event)
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"evaldesk: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if terminated:
            print("evaldesk: stopped: the system asked EvalDesk to end (SIGTERM). Finished work "
                  "was kept.", file=sys.stderr)
            return EXIT_TERMINATED
        print("evaldesk: stopped. Finished work was kept.", file=sys.stderr)
        return 130
    except Exception as exc:
        # a project file that fails during the run (read-only, damaged, disk full, in use):
        # its message says what to do; what was saved before is kept
        project_file = sys.modules.get("core.project._file")
        paths = sys.modules.get("core.paths")
        if paths is not None and isinstance(exc, paths.UserFoldersUnwritable):
            print(f"evaldesk: {exc}", file=sys.stderr)
            return 1
        if project_file is None or not isinstance(exc, project_file.ProjectError):
            raise
        print(f"evaldesk: {exc}", file=sys.stderr)
        return 1
    finally:
        remove()
        if previous is not None:
            import signal

            signal.signal(signal.SIGTERM, previous)
        _say_unwritable_folders()


def _tell_engine_event(event: object) -> None:
    """The local model's engine in the terminal: when it starts loading, is ready, or crashed
    (not every second of loading)."""
    kind = getattr(event, "kind", "")
    if kind in ("ready", "crashed") or (kind == "starting" and not getattr(event, "seconds", 0)):
        print(f"evaldesk: {getattr(event, 'message', '')}", file=sys.stderr, flush=True)



def _say_unwritable_folders() -> None:
    """A read-only home folder: say once, at the end, what could not be kept."""
    paths = sys.modules.get("core.paths")
    notice = paths.unwritable_folders_notice() if paths is not None else None
    if notice:
        print(f"evaldesk: note: {notice}", file=sys.stderr)


#: Exit code after SIGTERM (128 + 15, as a shell reports a process that SIGTERM ended).
EXIT_TERMINATED = 143


def _stop_on_sigterm(terminated: list[int]) -> Any:
    """Make SIGTERM (a logout, ``kill``, a scheduler's time limit) stop a command as Ctrl+C
    does: the run is cancelled, finished work is kept and the project's lock let go, instead of
    the process ending on the spot. Returns the handler it replaced (None when it cannot set
    one: not the main thread, or no SIGTERM on this system)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal,
                                                                                   "SIGTERM"):
        return None

    def as_ctrl_c(signum: int, frame: Any) -> None:
        terminated.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):  # asyncio's runner cancels the run; otherwise KeyboardInterrupt
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, as_ctrl_c)
    except (ValueError, OSError):
        return None
