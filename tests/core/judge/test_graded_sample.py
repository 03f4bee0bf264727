""""Check the judge" does not flatter the judge (issue 28, point 2). A teacher grades 25 of 40
essays. When the 25 are the judge's highest and lowest scored (the order EvalDesk offered
before), the judge-vs-teacher correlation on them overstates the one over all 40, and "Pick
the judge" favours the model whose extremes chose them. Now the items come in a random order
(seed kept in the project), the report says how the graded items were chosen (screen, Read me,
command line), a sample chosen by extremes is labelled not representative, and a ranking on it
is not called fair."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from core.cli import main
from core.judge_check import (
    JudgeData,
    JudgeItem,
    Rating,
    _extremes,
    check_step,
    describe_sampling,
    fair_ranking,
    grading_order,
    judge_report,
    next_item,
    write_report,
)

N, K = 40, 25


def _world(seed: int = 5):
    """The teacher's scores (1 to 5) of 40 essays and two judges: A and B, two different
    noisy judges of about the same quality (Spearman rho about 0.6 with the teacher)."""
    rng = np.random.default_rng(seed)
    teacher = rng.integers(1, 6, N).astype(float)
    a = teacher + rng.normal(0, 2.0, N)
    b = teacher + rng.normal(0, 2.0, N)
    return teacher, a, b


def _judge(scores, model) -> JudgeData:
    items = [JudgeItem(item_id=f"E{k:02d}", text=" ".join(["word"] * (50 + 7 * k % 90)),
                       scores={"Vocabulary": float(s)}) for k, s in enumerate(scores)]
    return JudgeData(method="InteractEval", items=items, dimensions=["Vocabulary"], model=model)


def _ratings(ids, teacher):
    return [Rating(i, "Ms Ortiz", {"Vocabulary": float(teacher[int(i[1:])])}) for i in ids]


def _extreme_ids(judge):
    """What the old order offered first: the judge's highest, lowest, highest, ..."""
    return _extremes(judge, [i.item_id for i in judge.items], K)


def test_extremes_overstate_the_agreement_and_a_random_sample_does_not():
    """Over 150 classes: on the judge's 25 extremes the judge-vs-teacher rho exceeds the one
    over all 40 essays by about 0.08 on average; on the first 25 of the random order the
    difference averages 0."""
    flattery, random_error = [], []
    for seed in range(150):
        teacher, a, _b = _world(seed)
        judge = _judge(a, "model-a")
        everyone = sps.spearmanr(a, teacher).statistic
        chosen = judge_report(judge, _ratings(sorted(_extreme_ids(judge)), teacher), n_boot=0)
        flattery.append(chosen.dimensions[0].spearman.value - everyone)
        idx = [int(i[1:]) for i in grading_order(judge, seed)[:K]]
        random_error.append(sps.spearmanr(a[idx], teacher[idx]).statistic - everyone)
    assert np.mean(flattery) > 0.05
    assert abs(np.mean(random_error)) < 0.02


def test_the_report_says_how_the_graded_items_were_chosen(tmp_path):
    teacher, a, _b = _world()
    judge = _judge(a, "model-a")
    seed = 1234
    # graded in the order offered now: a random sample
    ratings: list[Rating] = []
    while len(ratings) < K:
        item = next_item(judge, ratings, "Ms Ortiz", seed=seed)
        ratings += _ratings([item], teacher)
    report = judge_report(judge, ratings, n_boot=0, order_seed=seed)
    assert report.sampling.kind == "random" and report.sampling.representative
    lines = dict(report.describe())
    assert "random sample of the 40 items" in lines["Graded items"]
    assert f"seed {seed}" in lines["Graded items"]
    assert "not a random sample" not in lines.get("WARNING", "")
    # graded by the judge's extremes: labelled not representative, on screen and in Excel
    extremes = judge_report(judge, _ratings(sorted(_extreme_ids(judge)), teacher), n_boot=0,
                            order_seed=seed)
    assert extremes.sampling.kind == "extremes" and not extremes.sampling.representative
    assert extremes.sampling.overlap == K
    lines = dict(extremes.describe())
    assert lines["Graded items"].startswith("Not a random sample: 25 of the 25 graded items")
    assert "Extremes inflate a correlation" in lines["Graded items"]
    assert "not a random sample" in lines["WARNING"]
    path = tmp_path / "report.xlsx"
    write_report(path, extremes)
    readme = pd.read_excel(path, sheet_name="Read me", header=None, dtype=str)
    got = dict(zip(readme[0], readme[1], strict=True))
    assert "Extremes inflate a correlation" in got["Graded items"]
    # every item graded: the whole population
    everything = judge_report(judge, _ratings([i.item_id for i in judge.items], teacher),
                              n_boot=0, order_seed=seed)
    assert everything.sampling.kind == "all" and everything.sampling.representative


def test_skipped_or_imported_samples_are_labelled_too():
    _teacher, a, _b = _world()
    judge = _judge(a, "model-a")
    order = grading_order(judge, 9)
    skipped = describe_sampling(judge, [*order[:10], *order[12:20]], 9)
    assert skipped.kind == "other" and skipped.passed_over == 2
    assert "2 items before the last graded one were passed over" in skipped.sentence
    unknown = describe_sampling(judge, order[:10], None)
    assert unknown.kind == "other" and "no random grading order recorded" in unknown.sentence


def test_pick_the_judge_does_not_favour_the_model_whose_extremes_chose_the_texts():
    teacher, a, b = _world()
    judge_a, judge_b = _judge(a, "model-a"), _judge(b, "model-b")
    candidates = [("model A", "model-a", judge_a), ("model B", "model-b", judge_b)]
    graded = _ratings(sorted(_extreme_ids(judge_a)), teacher)
    result = check_step(judge_a, graded, candidates=candidates, method="spearman",
                        report=False, order_seed=77)
    assert result.sampling.kind == "extremes" and result.sampling.by_key == "model-a"
    assert "model A's highest and lowest" in fair_ranking(result.sampling)
    # on a random sample of the same size the ranking is fair
    order = grading_order(judge_a, 77)
    fair = check_step(judge_a, _ratings(order[:K], teacher), candidates=candidates,
                      method="spearman", report=False, order_seed=77)
    assert fair.sampling.kind == "random" and fair_ranking(fair.sampling) == ""


def test_the_command_line_says_how_the_graded_items_were_chosen(tmp_path, capsys):
    """``evaldesk checklist agreement`` on ratings imported from a file: no random order was
    recorded in the project, so the sample is said not to be a random one."""
    from core.llm import ScriptedLLM
    from tests.core.cli.checklist_cli_support import score_args

    (tmp_path / "items.xlsx").parent.mkdir(exist_ok=True)
    rows = [{"doc_id": f"d{k}", "system_id": "M", "source": f"Article {k}",
             "summary": f"A {'good summary' if k % 2 else 'weak text'} number {k}.",
             "Coherence": str(4.5 if k % 2 else 2.0)} for k in range(8)]
    pd.DataFrame(rows).to_excel(tmp_path / "items.xlsx", index=False)

    def reply(messages):
        prompt = "\n".join(m["content"] for m in messages)
        good = "good summary" in prompt
        return {"q1": "yes", "q2": "yes" if good else "no", "q3": "yes" if good else "no"}

    llm = ScriptedLLM(reply, name="ie-cli")
    try:
        assert main(score_args(tmp_path)) == 0
    finally:
        llm.close()
    pd.DataFrame([{"rater": "Anna", "item": f"row {r}", "dimension": "Coherence",
                   "question": "", "rating": 4, "note": ""} for r in (2, 3, 4)]
                 ).to_excel(tmp_path / "ratings.xlsx", index=False)
    capsys.readouterr()
    out = tmp_path / "agreement.xlsx"
    assert main(["checklist", "agreement", "--project", str(tmp_path / "p.evaldesk"),
                 "--ratings", str(tmp_path / "ratings.xlsx"), "--no-bootstrap",
                 "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "How the graded items were chosen: Not a random sample" in err
    readme = pd.read_excel(out, sheet_name="Read me", header=None, dtype=str)
    assert "Graded items" in set(readme[0])


@pytest.mark.parametrize("seed", [0, 3, 11])
def test_the_extremes_check_does_not_fire_on_random_samples(seed):
    _teacher, a, _b = _world(seed)
    judge = _judge(a, "model-a")
    for other in range(30):
        ids = grading_order(judge, 1000 + other)[:K]
        assert describe_sampling(judge, ids, None).kind == "other"
