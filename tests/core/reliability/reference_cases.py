"""The rating tables every reliability statistic is checked on against the reference
implementations (rows = raters, columns = units; None = missing).

Three public rating sets (read in place, see :mod:`rating_sets`), two classic published
tables typed in with their source, and the edge cases issue 32 names: a rater who gives one
value only, missing ratings, two categories, all agree.
"""

from __future__ import annotations

from pathlib import Path

from tests.core.reliability import rating_sets

# Shrout & Fleiss (1979), "Intraclass correlations: uses in assessing rater reliability",
# Psychological Bulletin 86(2), Table 2: 4 judges x 6 targets (here rows = judges).
SHROUT_FLEISS = [
    [9, 6, 8, 7, 10, 6],
    [2, 1, 4, 1, 5, 2],
    [5, 3, 6, 2, 6, 4],
    [8, 2, 8, 6, 9, 7],
]

# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., the 4 raters x 12 units example
# with missing ratings on a 1-5 scale (rows = raters).
GWET_4_RATERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, None],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]

Y, N = 1, 0
EDGE_CASES = {
    # rater 1 answers Yes to everything: kappa is 0 although they agree on 17 of 20
    "one_value_rater": [[Y] * 20, [Y] * 17 + [N] * 3],
    # 3 raters, Yes/No, with missing ratings (one unit with a single rating)
    "missing_ratings": [
        [Y, Y, N, Y, None, N, Y, Y, N, Y, Y, None],
        [Y, None, N, Y, Y, N, Y, N, N, Y, None, None],
        [Y, Y, N, None, Y, Y, Y, Y, N, Y, Y, N],
    ],
    # two raters, two categories, moderate agreement
    "two_categories": [
        [Y, Y, Y, N, N, Y, N, Y, Y, N, Y, N, N, Y, Y],
        [Y, N, Y, N, Y, Y, N, Y, N, N, Y, N, Y, Y, Y],
    ],
    # three raters who agree on every unit, both answers used
    "all_agree": [[Y, N, Y, Y, N, Y, N, Y], [Y, N, Y, Y, N, Y, N, Y], [Y, N, Y, Y, N, Y, N, Y]],
}

#: Which cases are on a numeric scale (ICC, weighted statistics) and their scale's answers.
SCALES = {
    "shrout_fleiss": list(range(1, 11)),
    "gwet_4_raters": [1, 2, 3, 4, 5],
    "mohler": None,  # every mark used; uneven steps (half and quarter points)
    "mslr_fluency": [0, 1, 2],
}


def cases(shared: Path | None) -> dict[str, list[list]]:
    """Every case by name; the public sets only when the shared data folder is there."""
    out: dict[str, list[list]] = {"shrout_fleiss": SHROUT_FLEISS, "gwet_4_raters": GWET_4_RATERS}
    out.update(EDGE_CASES)
    if shared is not None and shared.exists():
        pg = rating_sets.powergrading(shared)
        out["powergrading_q8"] = pg[8].tolist()  # 60% correct: the least lopsided question
        out["powergrading_q20"] = pg[20].tolist()  # 95% correct: one answer dominates
        out["mohler"] = rating_sets.mohler(shared).tolist()
        out["mslr_fluency"] = rating_sets.mslr_fluency(shared)
    return out


def categories(name: str) -> list | None:
    """The scale's answers for a case (Yes/No cases: [0, 1])."""
    if name in SCALES:
        return SCALES[name]
    return [0, 1]


def numeric(name: str) -> bool:
    return name in SCALES
