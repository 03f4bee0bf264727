"""``evaldesk llm test``: send one short JSON request and show the reply, latency and usage.

    evaldesk llm test                                  # the default profile
    evaldesk llm test --profile "My OpenAI"
    evaldesk llm test --model openai/gpt-4o-mini
    evaldesk llm test --model openai/qwen --api-base http://gpu1:8000/v1 --api-base http://gpu2:8000/v1

Exit code 0 when the model answered, 1 with the reason otherwise. litellm is imported only when
the command runs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from pydantic import ValidationError

from core.cli import UserError
from core.cli._common import load_settings, profile_names
from core.llm import check_connection
from core.secrets import hide_url_secrets
from core.settings import ModelProfile


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "llm", help="check a language-model connection", description="Language-model tools."
    )
    commands = parser.add_subparsers(dest="llm_command", metavar="SUBCOMMAND")
    test = commands.add_parser(
        "test",
        help="send one short request and show the reply, time and usage",
        description="Send one short JSON request to a model and show the reply, the time it took "
        "and the tokens and cost. Uses the default model profile unless told otherwise.",
    )
    which = test.add_mutually_exclusive_group()
    which.add_argument("--profile", metavar="NAME", help="a model profile from Settings")
    which.add_argument(
        "--model", metavar="STRING", help="a litellm model string, e.g. openai/gpt-4o-mini"
    )
    test.add_argument(
        "--api-base",
        metavar="URL",
        action="append",
        default=[],
        help="the server's address (give it several times to spread calls over servers)",
    )
    test.add_argument("--timeout", type=float, metavar="SECONDS", help="wait at most this long")
    test.set_defaults(func=run_llm_test)

    def no_subcommand(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=no_subcommand)


def run_llm_test(args: argparse.Namespace) -> int:
    try:
        if args.model:
            profile = ModelProfile(
                name="command line", model=args.model, api_bases=args.api_base, max_concurrency=1
            )
        else:
            settings = load_settings()
            try:
                profile = settings.profile(args.profile)
            except KeyError as exc:
                raise UserError(
                    f"{exc.args[0]} The profiles are: {profile_names(settings)}."
                ) from None
            if args.api_base:
                profile = profile.model_copy(update={"api_bases": args.api_base})
        if args.timeout:
            profile = ModelProfile.model_validate(
                {**profile.model_dump(), "timeout_s": args.timeout}
            )
    except ValidationError as exc:
        raise UserError(f"These settings cannot be used: {exc.errors()[0]['msg']}.") from None

    where = f" at {hide_url_secrets(', '.join(profile.api_bases))}" if profile.api_bases else ""
    print(f"Testing '{profile.model}'{where} (profile '{profile.name}')...", file=sys.stderr)
    check = asyncio.run(check_connection(profile))
    if not check.ok:
        raise UserError(check.message)
    cost = "unknown" if check.cost is None else f"${check.cost:.6f}"
    print(f"Reply:    {check.reply}")
    print(f"Latency:  {check.latency_s:.2f} s")
    print(f"Tokens:   {check.prompt_tokens} in, {check.completion_tokens} out")
    print(f"Cost:     {cost}")
    print(check.message)
    return 0

