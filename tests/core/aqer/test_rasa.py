"""Our RASA against crowd-kit's (Apache-2.0 reference, dev dependency) on the same embeddings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.aqer.rasa import rasa_skills
from core.aqer.synthetic_exemplary_answer import EmbeddedResponses

crowdkit = pytest.importorskip("crowdkit.aggregation")


def make(seed: int, m: int = 8, n: int = 10, d: int = 12, skip: float = 0.3):
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(n, d))
    noise = np.linspace(0.2, 2.0, m)
    rows = []
    for i in range(m):
        for j in range(n):
            if rng.random() < skip and i > 1 and j > 1:
                continue
            rows.append((j, i, (truth[j] + noise[i] * rng.normal(size=d)).astype(np.float32)))
    return rows


@pytest.mark.parametrize("seed", [0, 1])
def test_rasa_matches_crowd_kit(seed):
    # Ours runs on unit vectors (see the next test); crowd-kit is given them already unit.
    rows = [(j, i, (v / np.linalg.norm(v)).astype(np.float32)) for j, i, v in make(seed)]
    data = pd.DataFrame(
        {
            "task": [r[0] for r in rows],
            "worker": [r[1] for r in rows],
            "output": [f"answer {k}" for k in range(len(rows))],
            "embedding": [r[2].astype(np.float64) for r in rows],
        }
    )
    reference = crowdkit.RASA().fit(data)
    ours = rasa_skills(
        EmbeddedResponses(
            np.stack([r[2] for r in rows]),
            np.arange(len(rows)),
            np.array([r[1] for r in rows]),
            np.array([r[0] for r in rows]),
        )
    )
    expected = reference.skills_.sort_index().to_numpy()
    np.testing.assert_allclose(ours.skill, expected, rtol=1e-4)
    # Same ordering of workers: the least noisy worker is the most reliable.
    assert int(np.argmax(ours.skill)) == int(np.argmax(expected))
    agg = np.stack(reference.aggregated_embeddings_.sort_index().to_numpy())
    np.testing.assert_allclose(ours.aggregate, agg, rtol=1e-4, atol=1e-5)
