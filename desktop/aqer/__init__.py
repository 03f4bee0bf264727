"""The AQER wizard: answers file → columns → embedding model → run → results → export.

Importing this package only registers the wizard with :mod:`desktop.methods` (cheap: no pandas,
matplotlib or torch); the pages are imported when the wizard is first opened.
"""

from __future__ import annotations

from typing import Any

from desktop.methods import register_sample, register_wizard, sample_opener

__all__ = ["open_aqer_sample", "open_aqer_wizard"]


def open_aqer_wizard(main_window: Any, encoder_factory: Any = None) -> Any:
    """Show the AQER wizard for the main window's project (an untitled one if none is open).

    ``encoder_factory(model_path, device)`` makes the text encoder (default: the bundled
    MiniLM through :class:`core.embeddings.Encoder`); tests pass a tiny one.
    """
    from desktop.aqer.wizard import open_wizard

    return open_wizard(main_window, encoder_factory=encoder_factory)


#: Open the AQER wizard with the sample answers shipped with EvalDesk loaded (same arguments as
#: :func:`open_aqer_wizard`).
open_aqer_sample = sample_opener(open_aqer_wizard, lambda wizard: wizard.load_sample())

register_wizard("aqer", open_aqer_wizard)
register_sample("aqer", open_aqer_sample)
