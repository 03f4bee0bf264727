"""``evaldesk models list|find|download|import``: language models on this computer.

    evaldesk models list                        # recommended files (and whether they fit here),
                                                # the files you have, downloads under way
    evaldesk models find                        # servers on this computer (Ollama, LM Studio,
    evaldesk models find --add                  # llama.cpp, vLLM); --add makes profiles
    evaldesk models download qwen2.5-7b         # Ctrl+C pauses; run it again to resume
    evaldesk models download qwen2.5-7b --discard   # delete a partial download
    evaldesk models import /media/usb/model.gguf [--in-place]

A downloaded or imported file gets a model profile (unless ``--no-profile``). Nothing here goes
to the network except ``download``; ``find`` asks only this computer (127.0.0.1).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import textwrap
from collections.abc import Sequence

from core.cli import UserError
from core.cli._common import load_settings, say
from core.local_models import catalogue
from core.local_models.catalogue import (
    BUNDLED_DEMO,
    computer,
    find_recommended,
    fit,
    format_size,
    models_dir,
)
from core.local_models.discovery import (
    DEFAULT_CANDIDATES,
    Candidate,
    ServerKind,
    find_local_servers,
    profile_for,
)
from core.local_models.download import (
    DownloadError,
    discard_partial,
    download_model,
    partial_state,
)
from core.local_models.files import (
    ModelFile,
    NotAModelFile,
    import_model_file,
    installed_models,
    profile_for_file,
)
from core.runs import Cancelled, CancelToken, Progress, ProgressState
from core.settings import Settings, SettingsProblem, SettingsStore
from core.words import count


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "models", help="find, download and import language models for this computer",
        description="Language models on this computer: recommended model files, servers "
        "already running here, downloads and model files you already have.",
    )
    commands = parser.add_subparsers(dest="models_command", metavar="SUBCOMMAND")

    listing = commands.add_parser(
        "list", help="recommended model files, whether they fit here, and the files you have")
    listing.set_defaults(func=run_list)

    find = commands.add_parser(
        "find", help="look for model servers on this computer (Ollama, LM Studio, ...)",
        description="Ask the usual ports of this computer (127.0.0.1 only) which models they "
        "serve: Ollama 11434, LM Studio 1234, llama.cpp server 8080, vLLM 8000.")
    find.add_argument("--add", action="store_true",
                      help="add a model profile for every model found")
    find.add_argument("--port", metavar="KIND:PORT", action="append", default=[],
                      help="look on this port instead of the usual ones; KIND is ollama or "
                      "openai (give it several times)")
    find.add_argument("--timeout", type=float, default=1.5, metavar="SECONDS",
                      help="wait at most this long for each port (default 1.5)")
    find.set_defaults(func=run_find)

    download = commands.add_parser(
        "download", help="download a recommended model file (Ctrl+C pauses; run again to "
        "resume)")
    download.add_argument("model", help="its short name from 'evaldesk models list'")
    download.add_argument("--from", dest="source", metavar="URL",
                          help="another address of the same file (a mirror in your "
                          "organisation); it is checked the same way")
    download.add_argument("--discard", action="store_true",
                          help="delete the partial download of this model instead")
    _add_no_profile(download)
    download.set_defaults(func=run_download)

    imported = commands.add_parser(
        "import", help="use a .gguf model file you already have")
    imported.add_argument("path", help="the .gguf file")
    imported.add_argument("--in-place", action="store_true",
                          help="use it where it is instead of copying it into EvalDesk's "
                          "folder (the drive must stay connected)")
    _add_no_profile(imported)
    imported.set_defaults(func=run_import)

    def no_subcommand(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=no_subcommand)


def _add_no_profile(parser: argparse.ArgumentParser) -> None:
    """``--no-profile``: a downloaded or imported model file gets no model profile."""
    parser.add_argument("--no-profile", action="store_true",
                        help="do not add a model profile for it")


def _byte_progress() -> Progress:
    """A ``Progress`` printing sizes in MB on stderr, at most once per percent."""
    last: dict[str, str | int | None] = {"stage": None, "percent": -1}

    def show(state: ProgressState) -> None:
        percent = int(100 * state.fraction) if state.fraction is not None else -1
        if state.stage == last["stage"] and percent == last["percent"] and not state.detail:
            return
        last.update(stage=state.stage, percent=percent)
        line = state.stage
        if state.total and state.total > 1_000_000:
            line += f": {state.done / 1e6:,.0f} of {state.total / 1e6:,.0f} MB ({percent}%)"
        elif state.total:
            line += f": {state.done} of {state.total}"
        if state.detail:
            line += f"  {state.detail}"
        end = "\n" if not sys.stderr.isatty() else ""
        sys.stderr.write(("\r\x1b[2K" if sys.stderr.isatty() else "") + line[:160] + end)
        sys.stderr.flush()

    return Progress(show)


def run_list(_args: argparse.Namespace) -> int:
    here = computer()
    cores = f", {here.cores} processor cores" if here.cores else ""
    print(f"This computer: {format_size(here.total_ram)} of memory{cores}, "
          f"{format_size(here.free_disk)} free in {here.folder}.")
    print()
    print("Recommended model files (download with: evaldesk models download NAME)")
    for model in catalogue.RECOMMENDED:  # read when asked: tests add a model to the list
        have = partial_state(model)
        verdict = fit(model, here, already=have)
        mark = "DOES NOT FIT" if not verdict.ok else (
            f"fits, {verdict.speed_class}" if verdict.speed_class else "fits")
        print(f"  {model.key:<13} {model.name}, {model.parameters} parameters, "
              f"{format_size(model.size_bytes)}  [{mark}]")
        for text in (f"Licence: {model.licence}", f"Good for: {model.good_for}",
                     f"Quality: {model.quality}", verdict.summary):
            print(textwrap.fill(text, 100, initial_indent=" " * 16,
                                subsequent_indent=" " * 16))
        if have:
            print(f"                Paused download: {format_size(have)} of "
                  f"{format_size(model.size_bytes)} here.")
    print()
    print(textwrap.fill(BUNDLED_DEMO, 100))
    print()
    files = installed_models()
    print(f"Model files you have ({models_dir()}):" if files else
          "You have no model files yet.")
    for file in files:
        where = "used where it is" if file.linked else "in EvalDesk's folder"
        missing = "" if file.exists else "  (MISSING: the file is not there now)"
        print(f"  {file.name}: {file.path} ({where}, {format_size(file.size_bytes)}){missing}")
        print(f"      Licence: {file.licence}. Checked: {file.verified or 'not recorded'}.")
    return 0


#: What ``--port KIND:NUMBER`` may say, and the kind of server it means.
_PORT_KINDS: dict[str, ServerKind] = {"ollama": "ollama", "openai": "openai"}


def _candidates(ports: list[str]) -> Sequence[Candidate]:
    if not ports:
        return DEFAULT_CANDIDATES
    found = []
    for text in ports:
        word, _, number = text.partition(":")
        kind = _PORT_KINDS.get(word)
        if kind is None or not number.isdigit():
            raise UserError(f"--port {text}: write it as ollama:11434 or openai:1234.")
        found.append(Candidate(kind, int(number), "Ollama" if kind == "ollama" else
                               "an OpenAI-compatible server"))
    return found


def run_find(args: argparse.Namespace) -> int:
    candidates = _candidates(args.port)
    say("Looking on this computer (127.0.0.1) for: " + ", ".join(
        f"{c.usual} (port {c.port})" for c in candidates) + "…")
    reports = asyncio.run(find_local_servers(candidates, timeout_s=args.timeout))
    profiles = []
    for report in reports:
        if not report.found:
            if report.problem:
                print(report.problem)
            continue
        print(f"{report.program} at {report.base_url}:")
        if not report.models:
            print("  serves no chat model yet (load or pull one there first).")
        for model in report.models:
            profile = profile_for(report, model)
            profiles.append(profile)
            print(f"  {model.name}: {model.describe()}")
            print(f"      profile: {profile.model} at {profile.api_bases[0]}")
    if not any(r.found for r in reports):
        print("No model server answered on this computer. Start Ollama or LM Studio (with "
              "its server switched on), or download a model file: evaldesk models list.")
        return 1
    if args.add and profiles:
        settings = load_settings()
        for profile in profiles:
            settings.upsert_profile(profile)
        _save(settings)
        print(f"Added {count(len(profiles), 'model profile')}: "
              + ", ".join(f"'{p.name}'" for p in profiles) + ".")
    elif profiles:
        ports = "".join(f" --port {p}" for p in args.port)  # the same places, as asked
        say(f"Add them as model profiles with: evaldesk models find{ports} --add")
    return 0


def _save(settings: Settings) -> None:
    try:
        SettingsStore().save(settings)
    except SettingsProblem as exc:
        raise UserError(str(exc)) from None


def _add_profile(model_file: ModelFile) -> None:
    settings = load_settings()
    profile = profile_for_file(model_file)
    settings.upsert_profile(profile)
    _save(settings)
    print(f"Added the model profile '{profile.name}'. Choose it in a wizard, or make it the "
          "default in Settings.")


def run_download(args: argparse.Namespace) -> int:
    try:
        model = find_recommended(args.model)
    except KeyError as exc:
        raise UserError(exc.args[0]) from None
    if args.source:
        model = dataclasses.replace(model, download_url=args.source)
    have = partial_state(model)
    if args.discard:
        discard_partial(model)
        print(f"Deleted the partial download of {model.name} ({format_size(have)})."
              if have else f"There was no partial download of {model.name}.")
        return 0
    verdict = fit(model, computer(), already=have)
    say(f"{model.name}: {verdict.summary}")
    say(f"Licence: {model.licence} ({model.licence_url})")
    if not verdict.ok:
        say("evaldesk: note: this model does not fit this computer well (see above).")
    cancel = CancelToken()
    try:
        result = download_model(model, progress=_byte_progress(), cancel=cancel)
    except (KeyboardInterrupt, Cancelled):
        cancel.cancel()
        print(f"\nPaused: {format_size(partial_state(model))} is kept. Run the same command "
              "again to continue.", file=sys.stderr)
        return 130
    except DownloadError as exc:
        raise UserError(str(exc)) from None
    print(f"Downloaded {result.model.path} ({result.verified}).")
    if result.resumed_from:
        print(f"Continued from {format_size(result.resumed_from)} already here.")
    if not args.no_profile:
        _add_profile(result.model)
    return 0


def run_import(args: argparse.Namespace) -> int:
    try:
        model = import_model_file(args.path, copy=not args.in_place, progress=_byte_progress())
    except NotAModelFile as exc:
        raise UserError(str(exc)) from None
    except (Cancelled, KeyboardInterrupt):
        print("Stopped: nothing was copied; your file is untouched.", file=sys.stderr)
        return 130
    except OSError as exc:
        raise UserError(f"The file could not be copied: {exc.strerror or exc}. Check the free "
                        "space, or use --in-place.") from None
    where = "used where it is" if model.linked else f"copied to {model.path}"
    print(f"{model.name}: {where}. Licence: {model.licence}.")
    if not args.no_profile:
        _add_profile(model)
    return 0
