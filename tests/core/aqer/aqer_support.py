"""What AQER's tests share: a tiny deterministic encoder (hashed bag of words -> small vectors),
small answer sets, a long frame builder, graded answers of workers of rising quality and two
encoders standing for two embedding backends (``_TwoModels``)."""

from __future__ import annotations

import hashlib
import re
import threading
import zlib

import numpy as np
import pandas as pd

DIM = 64


class HashedBagOfWords:
    """Each word adds 1 to a dimension chosen by its CRC32; counts calls and texts seen."""

    model_name = "hashed-bag-of-words"
    device = "cpu"

    def __init__(self, dim: int = DIM) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                out[i, zlib.crc32(token.encode()) % self.dim] += 1.0
        return out

    @property
    def texts_seen(self) -> list[str]:
        return [t for call in self.calls for t in call]


def long_frame(answers: dict[str, dict[str, str]]):
    """{worker: {question: answer}} -> long DataFrame (question, worker, response)."""
    import pandas as pd

    rows = [
        (question, worker, text)
        for worker, by_question in answers.items()
        for question, text in by_question.items()
    ]
    return pd.DataFrame(rows, columns=["question", "worker", "response"])


#: Six questions, the consensus answer of each, and a wrong answer an outlier gives.
FACTS = {
    "What is the capital of France?": ("Paris is the capital", "Berlin I think"),
    "How many legs does a spider have?": ("a spider has eight legs", "six legs maybe"),
    "What gas do plants take in?": ("plants take in carbon dioxide", "they breathe oxygen only"),
    "What is frozen water called?": ("frozen water is called ice", "it is called steam"),
    "Which planet is closest to the sun?": ("mercury is the closest planet", "jupiter obviously"),
    "What do bees make?": ("bees make honey", "bees make milk"),
}


class TinyEncoder:
    """Bag of hashed words: deterministic, instant, and similar answers get similar vectors."""

    model_name = "tiny-test-encoder"
    device = "cpu"

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.calls: list[int] = []
        self.made = 0
        self.gate = gate
        self.entered = threading.Event()

    def factory(self, model_path: str, device: str) -> TinyEncoder:
        self.made += 1
        return self

    def __call__(self, texts):
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(10), "the test never released the encoder"
        self.calls.append(len(texts))
        out = np.zeros((len(texts), 32), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 32] += 1.0
            out[i, 0] += 0.2
        return out


WRONG_WORDS = ["maybe", "perhaps", "no idea", "guess", "not sure", "something else", "unsure"]


def graded_answers(n_workers: int = 12, blanks: bool = False, seed: int = 3) -> pd.DataFrame:
    """Workers of rising quality: worker k answers right with probability (k+1)/(n+1); a right
    answer is graded 5, a wrong one 1. With ``blanks`` the weakest worker leaves one blank."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n_workers):
        for j, (question, (right, wrong)) in enumerate(FACTS.items()):
            good = rng.random() < (k + 1) / (n_workers + 1)
            text = right if good else f"{wrong} {WRONG_WORDS[(k + j) % len(WRONG_WORDS)]}"
            if blanks and k == 0 and j == 0:
                text = ""
            rows.append((question, f"w{k:02d}", text, "5" if good else "1"))
    return pd.DataFrame(rows, columns=["question", "worker", "response", "grade"])


class _TwoModels:
    """Two different tiny encoders as two ways to embed: the setup's (backend "auto") and the
    one through PyTorch (another hashing of the words), counting the texts each embeds."""

    def __init__(self):
        self.auto, self.torch = TinyEncoder(), HashedBagOfWords(dim=24)
        self.made: list[str] = []

    def factory(self, model_path, device, backend="auto"):
        self.made.append(backend)
        return self.torch if backend == "torch" else self.auto


TORCH = "AQER (model all-MiniLM-L6-v2, through PyTorch)"
