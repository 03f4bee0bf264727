"""The InteractEval wizard: dimensions → samples → think-aloud → build → checklist editor →
score → results → export.

Importing this package only registers the wizard with :mod:`desktop.methods` (cheap: no pandas,
litellm or matplotlib); the pages are imported when the wizard is first opened.
"""

from __future__ import annotations

from typing import Any

from desktop.methods import register_sample, register_wizard, sample_opener

__all__ = ["open_interacteval_sample", "open_interacteval_wizard"]


def open_interacteval_wizard(main_window: Any, llm_factory: Any = None) -> Any:
    """Show the InteractEval wizard for the main window's project (an untitled one if none is
    open).

    ``llm_factory(profile, project, run_id)`` makes the model for a profile (default: a
    ``core.llm.Gateway`` caching in the project); tests may pass a fake.
    """
    from desktop.interacteval.wizard import open_wizard

    return open_wizard(main_window, llm_factory=llm_factory)


#: Open the InteractEval wizard with the sample set shipped with EvalDesk loaded (same
#: arguments as :func:`open_interacteval_wizard`).
open_interacteval_sample = sample_opener(
    open_interacteval_wizard, lambda wizard: wizard.pages["dimensions"].load_sample_set())

register_wizard("interacteval", open_interacteval_wizard)
register_sample("interacteval", open_interacteval_sample)
