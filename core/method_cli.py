"""Old home of the CLI helpers; they live in :mod:`core.cli._common` now (kept for the method
command modules until they move into ``core.cli``)."""

from core.cli._common import (  # noqa: F401
    adhoc_profile,
    cli_progress,
    load_settings,
    open_project,
    profile_names,
    project_gateway,
    read_text_file,
    say,
)
