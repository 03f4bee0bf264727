"""Model files on this computer: is it a GGUF file, what does it say about itself, importing one
("Use a model file I already have"), the files EvalDesk keeps, and a profile for a file.

Each kept file ``<models>/<name>.gguf`` has a small note beside it, ``<name>.gguf.json``: where
it came from, its licence, whether its checksum was verified. A file used where it is (on a
network drive, say) is listed in ``linked.json`` instead of being copied.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from core.local_models.catalogue import RecommendedModel, models_dir
from core.runs import CancelToken, Progress
from core.settings import LOCAL_MODEL_PREFIX, ModelProfile

__all__ = [
    "GGUFInfo",
    "ModelFile",
    "NotAModelFile",
    "import_model_file",
    "installed_models",
    "profile_for_file",
    "read_gguf",
    "save_note",
]

GGUF_MAGIC = b"GGUF"
_COPY_CHUNK = 8 * 1024 * 1024


class NotAModelFile(Exception):
    """The file is not a GGUF model; the message names it and says what to do."""


@dataclass(frozen=True)
class GGUFInfo:
    version: int
    name: str = ""
    architecture: str = ""
    size_label: str = ""
    licence: str = ""
    context_length: int | None = None


# ------------------------------------------------------------------------------ reading GGUF
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_WANTED = {"general.name": "name", "general.architecture": "architecture",
           "general.size_label": "size_label", "general.license": "licence"}


def _read(handle: IO[bytes], size: int) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise EOFError()
    return data


def _string(handle: IO[bytes]) -> str:
    (length,) = struct.unpack("<Q", _read(handle, 8))
    if length > 1 << 24:
        raise ValueError("implausible string length")
    return _read(handle, length).decode("utf-8", "replace")


def _value(handle: IO[bytes], kind: int) -> Any:
    if kind in _SCALARS:
        fmt = _SCALARS[kind]
        return struct.unpack(fmt, _read(handle, struct.calcsize(fmt)))[0]
    if kind == _STRING:
        return _string(handle)
    if kind == _ARRAY:
        (item_kind,) = struct.unpack("<I", _read(handle, 4))
        (count,) = struct.unpack("<Q", _read(handle, 8))
        if item_kind in _SCALARS:  # skip the whole array at once
            handle.seek(count * struct.calcsize(_SCALARS[item_kind]), os.SEEK_CUR)
            return None
        for _ in range(count):
            _value(handle, item_kind)
        return None
    raise ValueError(f"unknown value type {kind}")


def read_gguf(path: str | os.PathLike[str]) -> GGUFInfo:
    """Check that ``path`` is a GGUF model file and read its name, licence and size label.
    Raises :class:`NotAModelFile` with a plain message."""
    file = Path(path)
    try:
        with file.open("rb") as handle:
            head = handle.read(8)
            if len(head) < 8 or head[:4] != GGUF_MAGIC:
                raise NotAModelFile(
                    f"{file.name} is not a GGUF model file (it does not start like one). "
                    "EvalDesk runs model files in the GGUF format: download the .gguf version "
                    "of the model."
                )
            (version,) = struct.unpack("<I", head[4:])
            if version not in (1, 2, 3):
                raise NotAModelFile(
                    f"{file.name} is a GGUF file of a version EvalDesk does not know ({version})."
                )
            found: dict[str, Any] = {}
            try:
                _tensors, kv_count = struct.unpack("<QQ", _read(handle, 16))
                for _ in range(min(kv_count, 100_000)):
                    key = _string(handle)
                    if key.startswith("tokenizer."):
                        break  # the long vocabulary lists follow; what we want came before
                    (kind,) = struct.unpack("<I", _read(handle, 4))
                    value = _value(handle, kind)
                    if key in _WANTED:
                        found[_WANTED[key]] = str(value)
                    elif key.endswith(".context_length") and isinstance(value, int):
                        found["context_length"] = int(value)
            except EOFError:
                raise NotAModelFile(
                    f"{file.name} ends too early: it is incomplete (an interrupted download or "
                    "copy?). Fetch or copy it again."
                ) from None
            except (ValueError, struct.error):
                pass  # unusual metadata: the header is still a GGUF header
    except OSError as exc:
        raise NotAModelFile(f"{file} could not be read: {exc.strerror or exc}.") from exc
    return GGUFInfo(version=version, **found)


def gguf_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Every number and text of a GGUF file's header, by key (arrays such as the vocabulary are
    skipped: their keys map to None). Raises :class:`NotAModelFile` (not a GGUF file, or cut
    short) or OSError."""
    file = Path(path)
    with file.open("rb") as handle:
        head = handle.read(8)
        if len(head) < 8 or head[:4] != GGUF_MAGIC:
            raise NotAModelFile(f"{file.name} is not a GGUF model file.")
        (version,) = struct.unpack("<I", head[4:])
        if version not in (2, 3):
            raise NotAModelFile(f"{file.name} is a GGUF file of a version EvalDesk does not "
                                f"know ({version}).")
        found: dict[str, Any] = {}
        try:
            _tensors, kv_count = struct.unpack("<QQ", _read(handle, 16))
            for _ in range(min(kv_count, 100_000)):
                key = _string(handle)
                (kind,) = struct.unpack("<I", _read(handle, 4))
                found[key] = _value(handle, kind)
        except EOFError:
            raise NotAModelFile(f"{file.name} ends too early: it is incomplete.") from None
        except (ValueError, struct.error) as exc:
            raise NotAModelFile(f"{file.name} has a header EvalDesk cannot read ({exc}).") \
                from None
    return found


# ------------------------------------------------------------------------------ kept files
@dataclass
class ModelFile:
    """A model file EvalDesk knows: in its folder (downloaded or copied) or used where it is."""

    path: str
    name: str
    licence: str = ""
    licence_url: str = ""
    source: str = ""            # a download URL, or the file it was copied from
    sha256: str = ""
    verified: str = ""          # how the file was checked, in words
    quality: str = ""
    context_window: int = 8192
    linked: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def exists(self) -> bool:
        return Path(self.path).is_file()

    @property
    def size_bytes(self) -> int | None:
        try:
            return Path(self.path).stat().st_size
        except OSError:
            return None


def _note_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def save_note(model: ModelFile, folder: Path | None = None) -> None:
    """Write the note about a kept file (or add a linked file to ``folder``'s list)."""
    data = asdict(model)
    if model.linked:
        linked = (folder or models_dir()) / "linked.json"
        entries = [e for e in _read_json(linked, []) if e.get("path") != model.path]
        entries.append(data)
        _write_json(linked, entries)
    else:
        _write_json(_note_path(Path(model.path)), data)


def _read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def _from_dict(data: dict[str, Any]) -> ModelFile | None:
    known = {k: data[k] for k in ModelFile.__dataclass_fields__ if k in data}
    try:
        return ModelFile(**known)
    except TypeError:
        return None


def installed_models(folder: Path | None = None) -> list[ModelFile]:
    """The complete model files in EvalDesk's folder and the files used where they are."""
    folder = folder or models_dir()
    found: list[ModelFile] = []
    for path in sorted(folder.glob("*.gguf")):
        note = _read_json(_note_path(path), {})
        model = _from_dict(note) if isinstance(note, dict) and note else None
        if model is None:
            model = ModelFile(path=str(path), name=path.stem,
                              licence="not recorded: see where the file came from")
        model.path = str(path)
        found.append(model)
    for entry in _read_json(folder / "linked.json", []):
        model = _from_dict(entry) if isinstance(entry, dict) else None
        if model is not None:
            model.linked = True
            found.append(model)
    return found


def import_model_file(
    source: str | os.PathLike[str],
    *,
    copy: bool = True,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    folder: Path | None = None,
) -> ModelFile:
    """Make a .gguf file the user already has usable. ``copy``: into EvalDesk's folder (safe when
    the file is on a USB stick); otherwise it is used where it is. The file is checked first.
    A cancelled copy leaves no half file behind (the original is never touched)."""
    progress = progress or Progress()
    cancel = cancel or CancelToken()
    path = Path(source).expanduser()
    if not path.is_file():
        raise NotAModelFile(f"The file {path} was not found. Choose an existing .gguf file.")
    info = read_gguf(path)
    licence = f"{info.licence} (as the file says)" if info.licence else (
        "not stated in the file: see where you got it")
    name = info.name or path.stem
    if info.size_label:
        name = f"{name} ({info.size_label})" if info.size_label not in name else name
    model = ModelFile(path=str(path.resolve()), name=name, licence=licence, source=str(path),
                      verified="GGUF format checked (no published checksum)",
                      context_window=min(info.context_length or 8192, 16384), linked=not copy)
    folder = folder or models_dir()
    if not copy:
        save_note(model, folder)
        return model
    target = folder / path.name
    if target.exists():
        if target.resolve() == path.resolve():
            model.linked = False
            save_note(model)
            return model
        if target.stat().st_size == path.stat().st_size:
            model.path = str(target)
            save_note(model)
            return model
        target = folder / f"{path.stem}-copy{path.suffix}"
    partial = target.with_name(target.name + ".copying")
    total = path.stat().st_size
    progress.start(f"Copying {path.name}", total=total)
    try:
        with path.open("rb") as src, partial.open("wb") as dst:
            while True:
                cancel.raise_if_cancelled()
                chunk = src.read(_COPY_CHUNK)
                if not chunk:
                    break
                dst.write(chunk)
                progress.advance(len(chunk))
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    model.path = str(target)
    save_note(model)
    return model


def profile_for_file(model: ModelFile) -> ModelProfile:
    """A model profile that runs ``model`` in llama.cpp's server on this computer, with as many
    calls at once as suit its cores and memory (the engine takes fewer when the model's contexts
    do not fit in free memory)."""
    from core.machine import default_local_concurrency

    stem = Path(model.path).stem
    return ModelProfile(
        name=f"{model.name} (this computer)"[:120],
        model=LOCAL_MODEL_PREFIX + stem,
        gguf_path=model.path,
        max_concurrency=default_local_concurrency(),
        max_tokens=1024,
        context_window=max(512, model.context_window),
        timeout_s=600.0,
    )


def note_for_download(recommended: RecommendedModel, path: Path, sha256: str,
                      verified: str) -> ModelFile:
    model = ModelFile(
        path=str(path), name=recommended.name, licence=recommended.licence,
        licence_url=recommended.licence_url, source=recommended.url, sha256=sha256,
        verified=verified, quality=recommended.quality,
        context_window=recommended.context_window,
    )
    save_note(model)
    return model
