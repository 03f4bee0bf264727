"""EvalDesk's engine: everything that runs without a window.

Nothing below this package imports Qt, qasync or ``desktop`` (an import-linter contract checks it),
so every method can be run and tested headless, from the CLI or from a script.
"""

__version__ = "0.1.0"
