"""The embedding model of a project's choices, behind the project's vector cache: the model is
loaded only when a text is not cached yet, and each model (and forced backend) keeps vectors of
its own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import embeddings
from core.aqer.model import BACKEND_NAMES, AqerChoices, AqerCondition
from core.embeddings import CachedEncoder, EmbeddingError, model_key, resolve_device

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Project
    from core.runs import CancelToken, Progress

__all__ = [
    "CACHED_DEVICE",
    "EMBED_STEP",
    "EncoderFactory",
    "cached_encoder",
    "default_encoder_factory",
    "embedding_choices",
]

#: The step under which the project keeps each model's vectors.
EMBED_STEP = "embeddings"

#: The device of a run whose every vector came from the project's cache (the model never ran).
CACHED_DEVICE = "none (every answer's vector was already in the project)"

#: ``factory(model_path, device)`` -> an encoder (``encoder(texts)`` returns one vector per
#: text); called with ``backend=`` too when the choices force one ("onnx" or "torch").
EncoderFactory = Callable[..., Any]


def default_encoder_factory(model_path: str, device: str, backend: str = "auto") -> Any:
    """The real encoder: :class:`core.embeddings.Encoder` (bundled MiniLM when path is ""),
    looked up when called (tests put a tiny one there). A forced ``backend`` that cannot run
    the model is an error, never a silent other backend."""
    if backend == "auto":
        return embeddings.Encoder(model_path, device=device)
    encoder = embeddings.Encoder(model_path, device="cpu" if backend == "onnx" else device,
                      backend=backend)
    if encoder.backend != backend:
        raise EmbeddingError(
            f"The model cannot run through {BACKEND_NAMES.get(backend, backend)} here"
            + (f" ({encoder.fallback_reason})" if encoder.fallback_reason else "")
            + ". Remove that condition, or choose another model.")
    return encoder


def cached_encoder(project: Project, choices: AqerChoices, factory: EncoderFactory,
                   progress: Progress | None = None,
                   cancel: CancelToken | None = None) -> CachedEncoder:
    """The encoder of ``choices`` behind the project's vector cache (the model is loaded only
    when a text is not cached yet). A forced backend (``choices.embedding_backend``) has
    vectors of its own in the cache, and is passed to ``factory`` as ``backend=``."""
    backend = choices.embedding_backend
    name = (Path(choices.embedding_model).name if choices.embedding_model
            else model_key("").removeprefix("built-in "))
    if backend != "auto":
        name += f" through {BACKEND_NAMES[backend]}"

    def make() -> Any:
        if backend == "auto":
            return factory(choices.embedding_model, choices.device)
        inner = factory(choices.embedding_model, choices.device, backend=backend)
        return _Named(inner, f" through {BACKEND_NAMES[backend]}")

    return CachedEncoder(
        project,
        choices.embedding_key(),
        make,
        cancel=cancel,
        model_name=name,
        device=choices.device,
        progress=progress,
        owner="aqer",
        step=EMBED_STEP,
    )


class _Named:
    """An encoder whose ``model_name`` also says the backend it was forced through (the
    results name it so)."""

    def __init__(self, inner: Any, suffix: str) -> None:
        self._inner = inner
        self.model_name = f"{getattr(inner, 'model_name', '') or 'the model'}{suffix}"

    def __call__(self, texts: list[str]) -> Any:
        return self._inner(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def embedding_choices(choices: AqerChoices) -> list[AqerCondition]:
    """The other ways to embed that this computer has, as conditions to compare with
    ``choices``: the built-in all-MiniLM-L6-v2 through PyTorch and through ONNX Runtime (the
    one ``choices`` already uses is left out; "auto" runs ONNX Runtime on the CPU). Any
    sentence-transformers folder is a condition too (``AqerCondition(embedding_model=path)``)."""
    current: str
    if choices.embedding_backend != "auto":
        current = choices.embedding_backend
    else:
        try:
            current = "onnx" if resolve_device(choices.device) == "cpu" else "torch"
        except Exception:  # noqa: BLE001 - a device that is not there: offer both
            current = ""
    out = []
    for backend in ("torch", "onnx"):
        if choices.embedding_model or backend != current:
            out.append(AqerCondition(embedding_model="", embedding_backend=backend))
    return out
