"""The public rating sets the reliability statistics are checked on, read in place from the
shared data folder (never copied into the repository), as raters x units tables.

* Powergrading (Basu, Jacobs & Vanderwende, TACL 2013): 3 judges marked 698 crowd answers to
  each of 10 citizenship-test questions correct (1) or not (0): Yes/No, one answer dominant.
* Mohler et al. (ACL 2011): 2 graders marked 2,273 short answers from 0 to 5 (half and quarter
  points): a numeric scale for the ICC and weighted agreement.
* MSLR-Cochrane pilot (Wang et al., ACL 2023): 3 annotators rated 100 generated summaries'
  fluency (0 no, 1 somewhat, 2 yes), many left blank: an ordered scale with missing ratings.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

POWERGRADING_QUESTIONS = (1, 2, 3, 4, 5, 6, 7, 8, 13, 20)


def powergrading(shared: Path) -> dict[int, np.ndarray]:
    """Question number -> 3 x 698 table of 0/1 marks."""
    frame = pd.read_csv(shared / "powergrading" / "studentanswers_grades_698.tsv", sep="\t",
                        quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False)
    out = {}
    for q in POWERGRADING_QUESTIONS:
        rows = frame[frame["Q#"] == str(q)]
        out[q] = rows[["G1", "G2", "G3"]].astype(int).to_numpy().T
        assert (out[q] >= 0).all() and out[q].shape == (3, 698)
    return out


def mohler(shared: Path) -> np.ndarray:
    """2 x 2273 table of marks from 0 to 5."""
    frame = pd.read_csv(shared / "mohler2011" / "mohler_dataset_edited.csv", dtype=str)
    return frame[["score_me", "score_other"]].astype(float).to_numpy().T


def mslr_fluency(shared: Path) -> list[list[float | None]]:
    """3 x 100 table of fluency marks 0/1/2, None where the annotator left it blank."""
    question = "Is the generated summary fluent?"
    rows = []
    keys = None
    for a in range(3):
        frame = pd.read_csv(shared / "mslr-annotated" / "Pilot" / f"ms2_pilot_facets_A{a}.tsv",
                            sep="\t", dtype=str, keep_default_na=False)
        these = list(frame["docid"] + "/" + frame["model"])
        assert keys is None or these == keys
        keys = these
        rows.append([float(v.split(":")[0]) if v.strip() else None for v in frame[question]])
    return rows
