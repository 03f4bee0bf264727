"""The ``evaldesk`` console script.

``evaldesk`` alone (or with a ``.evaldesk`` file, as a file association passes it) opens the app.
``evaldesk <command> ...`` and ``evaldesk --version`` run headless through ``core.cli`` and never
import Qt.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and not (len(args) == 1 and args[0].lower().endswith(".evaldesk")):
        from core.cli import main as cli_main

        return cli_main(args)
    from desktop.app import run

    return run(project_path=args[0] if args else None)


if __name__ == "__main__":
    raise SystemExit(main())
