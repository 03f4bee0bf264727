"""The MAJ-Eval wizard: task → documents → find stakeholders → personas → items → run →
results → export.

Importing this package only registers the wizard with :mod:`desktop.methods` (cheap: no pandas,
litellm or matplotlib); the pages are imported when the wizard is first opened.
"""

from __future__ import annotations

from typing import Any

from desktop.methods import register_sample, register_wizard, sample_opener

__all__ = ["open_majeval_sample", "open_majeval_wizard"]


def open_majeval_wizard(main_window: Any, llm_factory: Any = None) -> Any:
    """Show the MAJ-Eval wizard for the main window's project (an untitled one if none is open).

    ``llm_factory(profile, project, run_id)`` makes the model for a profile (default: a
    ``core.llm.Gateway`` caching in the project); tests may pass their own.
    """
    from desktop.majeval.wizard import open_wizard

    return open_wizard(main_window, llm_factory=llm_factory)


#: Open the MAJ-Eval wizard with the sample set shipped with EvalDesk loaded (same arguments as
#: :func:`open_majeval_wizard`).
open_majeval_sample = sample_opener(open_majeval_wizard,
                                   lambda wizard: wizard.pages["task"].load_sample())

register_wizard("majeval", open_majeval_wizard)
register_sample("majeval", open_majeval_sample)
