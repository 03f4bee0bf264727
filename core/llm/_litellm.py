"""litellm, imported on first use (never at app start-up) with its offline price map."""

from __future__ import annotations

import os
import warnings
from typing import Any

_litellm: Any = None


def litellm_module() -> Any:
    """The ``litellm`` module, set up once: offline price map (litellm otherwise downloads one at
    import), no telemetry or banners, and the built-in local model registered as a provider."""
    global _litellm
    if _litellm is None:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        import litellm

        from core.llm import _local

        # Cancel while litellm prepares a request in its executor thread drops the prepared
        # request (a coroutine litellm made but never started): nothing was sent, which is what
        # Cancel means, so Python's "never awaited" warning about it says nothing useful.
        warnings.filterwarnings(
            "ignore",
            message=r"coroutine '(OpenAIChatCompletion|.*LocalLLM)\.acompletion' was never awaited",
            category=RuntimeWarning,
        )
        litellm.suppress_debug_info = True
        litellm.telemetry = False
        # httpx, not litellm's aiohttp transport: measurably less CPU per call here (see
        # tests/benchmarks/bench_llm_gateway.py) and no unclosed-session warnings at exit.
        litellm.disable_aiohttp_transport = True
        if not any(i.get("provider") == _local.PROVIDER for i in litellm.custom_provider_map):
            litellm.custom_provider_map.append(
                {"provider": _local.PROVIDER, "custom_handler": _local.local_provider()}
            )
        _litellm = litellm
    return _litellm
