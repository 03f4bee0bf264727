"""PyInstaller runtime hook: runs inside the built app before any of our code.

The bundled app must never reach for the network on its own: Hugging Face hub off (the MiniLM
weights are inside the bundle), litellm's price map read from its bundled copy, tokenizers from
litellm's bundled tiktoken files.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
