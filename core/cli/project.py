"""``evaldesk project info FILE``: what a project file holds, without changing it."""

from __future__ import annotations

import argparse

from core.cli import UserError
from core.project import SCHEMA_VERSION, Project, ProjectError, ProjectInfo


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "project",
        help="look inside an EvalDesk project file",
        description="Look inside an EvalDesk project file (.evaldesk). Nothing is changed.",
    )
    actions = parser.add_subparsers(dest="project_action", metavar="ACTION", required=True)
    info = actions.add_parser(
        "info",
        help="show format, dates, method and what the project holds",
        description="Show the format, dates, method and the number of inputs, artefacts, edits, "
        "runs, results and LLM calls in a project file. The file is opened read-only.",
    )
    info.add_argument("file", metavar="FILE", help="the project file (.evaldesk)")
    info.set_defaults(func=run_info)


def run_info(args: argparse.Namespace) -> int:
    try:
        info = Project.inspect(args.file)
    except ProjectError as exc:
        raise UserError(str(exc)) from exc
    for label, value in format_info(info, SCHEMA_VERSION):
        print(f"{label + ':':<16}{value}")
    return 0


def format_info(info: ProjectInfo, reads_up_to: int) -> list[tuple[str, str]]:
    """(label, value) lines for a :class:`core.project.ProjectInfo`."""
    runs = f"{info.runs}"
    if info.runs_by_status:
        parts = ", ".join(f"{n} {status}" for status, n in sorted(info.runs_by_status.items()))
        runs += f" ({parts})"
    results = f"{info.results}"
    if info.failed_results:
        results += f" ({info.failed_results} failed)"
    if info.orphaned_results:
        results += (f"; {info.orphaned_results} belong to no run (deleted, perhaps by another "
                    "program): ignored")
    artefacts = f"{info.artefacts}"
    if info.edited_artefacts:
        artefacts += f" ({info.edited_artefacts} edited by a person)"
    usage = info.llm
    calls = (
        f"{usage.calls} ({usage.prompt_tokens:,} tokens in, {usage.completion_tokens:,} out, "
        f"cost {usage.cost:.4f} USD"
    )
    if usage.calls_without_cost:
        calls += f"; cost unknown for {usage.calls_without_cost} calls"
    calls += ")"
    fmt = f"{info.schema_version}"
    if info.schema_version < reads_up_to:
        fmt += f" (older; EvalDesk upgrades it to format {reads_up_to} when you open it)"
    return [
        ("File", str(info.path)),
        ("Format", fmt),
        ("Written by", f"EvalDesk {info.app_version}" if info.app_version else "unknown"),
        ("Title", info.title or "(none)"),
        ("Method", info.method or "(not chosen yet)"),
        ("Created", info.created_at or "unknown"),
        ("Modified", info.modified_at or "unknown"),
        ("Inputs", str(info.inputs)),
        ("Artefacts", artefacts),
        ("Edits", str(info.edits)),
        ("Runs", runs),
        ("Results", results),
        ("LLM calls", calls),
    ]

