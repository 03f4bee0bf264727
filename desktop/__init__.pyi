# What type checkers and editors see of the package face: desktop/__init__.py imports these
# names only when first used (so `evaldesk --version`, which starts in desktop.launch, never
# loads Qt). Keep it the same as __init__.py's _WHERE (tests/desktop/test_package_face.py).
from desktop.app import run as run
from desktop.errors import spawn as spawn
from desktop.main_window import MainWindow as MainWindow
from desktop.methods import register_wizard as register_wizard
from desktop.methods import unregister_wizard as unregister_wizard
from desktop.run_panel import RunPanel as RunPanel
from desktop.runner import RunOutcome as RunOutcome
from desktop.runner import run_step as run_step
from desktop.runner import start_step as start_step

__all__ = [
    "MainWindow",
    "RunOutcome",
    "RunPanel",
    "register_wizard",
    "run",
    "run_step",
    "spawn",
    "start_step",
    "unregister_wizard",
]
