"""litellm, imported on first use (never at app start-up) with its offline price map."""

from __future__ import annotations

import os
import warnings
from typing import Any

_litellm: Any = None


def litellm_module() -> Any:
    """The ``litellm`` module, set up once: offline price map (litellm otherwise downloads one at
    import), no telemetry or banners."""
    global _litellm
    if _litellm is None:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        from core.llm._proxy import keep_loopback_direct

        keep_loopback_direct()  # a model server on this computer never goes through a proxy
        import litellm

        # Cancel while litellm prepares a request in its executor thread drops the prepared
        # request (a coroutine litellm made but never started): nothing was sent, which is what
        # Cancel means, so Python's "never awaited" warning about it says nothing useful.
        warnings.filterwarnings(
            "ignore",
            message=r"coroutine 'OpenAIChatCompletion\.acompletion' was never awaited",
            category=RuntimeWarning,
        )
        litellm.suppress_debug_info = True
        litellm.telemetry = False
        # httpx, not litellm's aiohttp transport: measurably less CPU per call here (see
        # tests/benchmarks/bench_llm_gateway.py) and no unclosed-session warnings at exit.
        litellm.disable_aiohttp_transport = True
        _litellm = litellm
    return _litellm
