"""``evaldesk aqer`` on the shipped sample with the real bundled all-MiniLM-L6-v2."""

from __future__ import annotations

import pytest

from core import cli
from core.aqer.report import read_report
from core.paths import resources_dir

SAMPLE = resources_dir() / "samples" / "aqer_sample.xlsx"


@pytest.mark.slow
def test_sample_with_minilm(tmp_path, capsys):
    out = tmp_path / "result.xlsx"
    code = cli.main(
        ["aqer", str(SAMPLE), "-o", str(out), "--grade-col", "grade", "--device", "cpu"]
    )
    assert code == 0, capsys.readouterr().err
    book = read_report(out)
    workers = book["Workers"].set_index("worker")
    # Hugo answered every question wrongly: the lowest score, weight 0.
    assert workers["score"].idxmin() == "Hugo"
    assert workers.loc["Hugo", "weight"] == 0
    # LLM A is right everywhere, LLM B wrong on four questions.
    means = book["LLM summary"].set_index("model")["mean_score"]
    assert means["LLM A"] > means["LLM B"]
    readme = book["Read me"].astype(str).to_string()
    assert "all-MiniLM-L6-v2" in readme and "cpu" in readme
    # Agreement with the teacher's grades is positive for AQER.
    agreement = book["Agreement"]
    pearson = agreement[
        agreement["comparison"].str.startswith("AQER score")
        & (agreement["statistic"] == "Pearson r")
    ]["value"].iloc[0]
    assert pearson > 0.5
