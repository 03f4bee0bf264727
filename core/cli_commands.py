"""The list of modules that register ``evaldesk`` commands (see ``core.cli``).

Kept separate so ``core.cli`` stays importable cheaply: each command module imports its heavy
dependencies (pandas, torch, litellm) inside its ``func``, not at import time.
"""

import core.project_cli  # noqa: F401
import core.llm._cli  # noqa: F401
import core.aqer._cli  # noqa: F401
import core.interacteval._cli  # noqa: F401
import core.majeval._cli  # noqa: F401
