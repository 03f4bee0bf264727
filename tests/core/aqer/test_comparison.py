"""AQER's conditions side by side (core.aqer.comparison and the session's conditions):
the Comparison table equals core.stats on the same numbers, per-condition results survive
reopening, an unchanged condition re-runs without embedding, the workers curve is seeded."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from core import stats
from core.aqer.comparison import (
    BUILT_IN_CONDITIONS,
    comparison_table,
    curve_sizes,
    workers_curve,
)
from core.aqer.model import AqerChoices, AqerCondition
from core.aqer.pipeline import aqer
from core.aqer.report import write_report
from core.aqer.responses import clean_responses
from core.aqer.session.choices import open_answers, save_choices
from core.aqer.session.conditions import comparison, load_conditions, run_conditions
from core.aqer.session.results import export_result, load_result, run_choices
from core.aqer.session.workers_curve import load_workers_curve, run_workers_curve
from core.project import Project
from tests.core.aqer.aqer_support import (
    TORCH,
    TinyEncoder,
    _TwoModels,
    graded_answers,
)

# ----------------------------------------------------------------------------- the table


def test_comparison_numbers_equal_core_stats_and_scipy(encoder):
    result = aqer(graded_answers(), encoder)
    table = comparison_table(result, n_boot=400, seed=7)
    frame = table.frame.set_index("condition")
    workers = result.workers
    grades = workers["expert_grade"].astype(float).to_numpy()
    assert list(frame.index) == [name for name, _, _ in BUILT_IN_CONDITIONS]
    for name, column, _ in BUILT_IN_CONDITIONS:
        scores = workers[column].astype(float).to_numpy()
        report = stats.correlations(scores, grades, n_boot=400, seed=7)
        row = frame.loc[name]
        assert row["pearson"] == pytest.approx(sps.pearsonr(scores, grades).statistic)
        assert row["spearman"] == pytest.approx(sps.spearmanr(scores, grades).statistic)
        assert (row["pearson_ci_low"], row["pearson_ci_high"]) == pytest.approx(
            (report.pearson.ci_low, report.pearson.ci_high))
        assert row["n"] == len(workers)
        if name == "AQER":
            assert pd.isna(row["difference"])
            continue
        paired = stats.paired_correlation_difference(
            scores, workers["score"].astype(float).to_numpy(), grades, method="pearson",
            n_boot=400, seed=7)
        assert row["difference"] == pytest.approx(paired.difference)
        assert (row["difference_ci_low"], row["difference_ci_high"], row["p_value"]) == \
            pytest.approx((paired.ci_low, paired.ci_high, paired.p_value))
        assert row["paired_n"] == 12
        assert row["summary"] == paired.summary(name, "AQER").replace("12 pairs", "12 workers")
    assert "Pearson r" in table.note and "seed 7" in table.note


def test_below_ten_workers_the_paired_test_says_not_enough_units(encoder):
    result = aqer(graded_answers(n_workers=6), encoder)
    table = comparison_table(result, n_boot=100)
    rasa = table.frame.set_index("condition").loc["RASA"]
    assert pd.isna(rasa["difference"]) and pd.isna(rasa["p_value"])
    assert rasa["paired_n"] == 6
    assert "not enough units" in rasa["summary"]
    skill, grade = result.workers[["rasa_skill", "expert_grade"]].astype(float).to_numpy().T
    assert rasa["pearson"] == pytest.approx(sps.pearsonr(skill, grade).statistic)


def test_without_grades_there_is_no_table_and_the_reason_is_said(encoder, tmp_path):
    result = aqer(graded_answers().drop(columns="grade"), encoder)
    table = comparison_table(result)
    assert len(table.frame) == 0
    assert "no expert grades" in table.reason
    path = write_report(result, tmp_path / "r.xlsx", comparison=table)
    book = pd.read_excel(path, sheet_name=None)
    assert "Comparison" not in book
    readme = book["Read me"].astype(str).to_numpy().ravel().tolist()
    assert any("no expert grades" in cell for cell in readme)


def test_another_condition_is_matched_by_worker_name_and_tested_against_aqer(encoder):
    dense = aqer(graded_answers(blanks=True), encoder, blank_answers="worst")
    sparse = aqer(graded_answers(blanks=True), encoder, blank_answers="missing")
    name = AqerCondition(blank_answers="missing").label()
    table = comparison_table(dense, {name: sparse}, n_boot=300)
    row = table.frame.set_index("condition").loc[name]
    by_name = dict(zip(sparse.workers["worker"], sparse.workers["score"].astype(float)))
    scores = [by_name[w] for w in dense.workers["worker"]]
    grades = dense.workers["expert_grade"].astype(float).tolist()
    assert row["pearson"] == pytest.approx(sps.pearsonr(scores, grades).statistic)
    paired = stats.paired_correlation_difference(
        scores, dense.workers["score"].astype(float).tolist(), grades, method="pearson",
        n_boot=300)
    assert row["difference"] == pytest.approx(paired.difference)
    assert "left out" in row["settings"]


# ----------------------------------------------------------------------------- workers curve


def test_curve_sizes():
    assert curve_sizes(4) == [3, 4]
    assert curve_sizes(12) == [3, 5, 10, 12]
    assert curve_sizes(31) == [3, 5, 10, 15, 20, 25, 30, 31]


def test_workers_curve_is_seeded_reproducible_and_ends_at_the_full_panel():
    answers = graded_answers()
    result = aqer(answers, TinyEncoder())
    prepared = clean_responses(answers)
    first = workers_curve(prepared, TinyEncoder(), result, repetitions=4, seed=5)
    again = workers_curve(prepared, TinyEncoder(), result, repetitions=4, seed=5)
    other = workers_curve(prepared, TinyEncoder(), result, repetitions=4, seed=6)
    assert first.values == again.values
    assert first.values != other.values
    assert first.frame["workers"].tolist() == [3, 5, 10, 12]
    assert first.frame["repetitions"].tolist() == [4, 4, 4, 1]
    assert first.against == "the expert grades" and first.statistic == "Pearson r"
    workers = result.workers
    full = sps.pearsonr(workers["score"].astype(float), workers["expert_grade"].astype(float))
    assert first.values[12] == [pytest.approx(full.statistic)]
    row = first.frame.iloc[1]
    values = np.array(first.values[5])
    assert row["mean"] == pytest.approx(values.mean())
    assert row["sd"] == pytest.approx(values.std(ddof=1))
    assert pd.isna(first.frame.iloc[-1]["sd"])  # one draw of the full panel: no spread


def test_workers_curve_without_grades_compares_with_the_full_panel_ranking():
    answers = graded_answers().drop(columns="grade")
    result = aqer(answers, TinyEncoder())
    curve = workers_curve(clean_responses(answers), TinyEncoder(), result, repetitions=3)
    assert curve.against == "the full panel's AQER ranking"
    assert curve.statistic == "Spearman rho"
    assert curve.values[12] == [pytest.approx(1.0)]


def test_workers_curve_embeds_each_answer_once():
    answers = graded_answers()
    result = aqer(answers, TinyEncoder())
    tiny = TinyEncoder()
    workers_curve(clean_responses(answers), tiny, result, repetitions=3)
    assert sum(tiny.calls) == answers["response"].nunique()


# ----------------------------------------------------------------------------- in a project


@pytest.fixture
def ready(tmp_path):
    path = tmp_path / "answers.xlsx"
    graded_answers(blanks=True).to_excel(path, index=False)
    project_path = tmp_path / "p.evaldesk"
    with Project.create(project_path, method="aqer") as project:
        setup = open_answers(project, AqerChoices(), path).choices.with_columns(
            question_col="question", worker_col="worker", response_col="response",
            grade_col="grade")
        save_choices(project, setup)
    return project_path, setup


def test_conditions_survive_reopening_and_an_unchanged_condition_does_no_work(ready, tmp_path):
    project_path, setup = ready
    setup = setup.model_copy(update={"conditions": [
        AqerCondition(blank_answers="missing"), AqerCondition(blank_answers="worst")]})
    tiny = TinyEncoder()
    with Project.open(project_path) as project:
        main = run_choices(project, setup, tiny.factory)
        assert main.result.blank_rule == "worst"  # decided from the data: a dense design
        embedded_first = sum(tiny.calls)
        assert embedded_first > 0
        others = run_conditions(project, setup, tiny.factory)
        # "worst" is what the setup already does (auto -> worst) but is a setting of its own;
        # both are new runs, and neither embeds anything: the texts are in the cache.
        assert set(others) == {"AQER (blank answers left out)",
                               "AQER (blank answers count as the weakest)"}
        assert sum(tiny.calls) == embedded_first
        assert all(stored.embedded == 0 for stored in others.values())
        run_ids = {name: stored.run_id for name, stored in others.items()}
    calls_before = len(tiny.calls)
    with Project.open(project_path) as project:
        again = load_conditions(project, setup)
        assert {name: s.run_id for name, s in again.items()} == run_ids
        assert load_result(project, setup).run_id == main.run_id
        rerun = run_conditions(project, setup, tiny.factory)
        assert {name: s.run_id for name, s in rerun.items()} == run_ids
        table = comparison(project, setup, load_result(project, setup))
        out = export_result(load_result(project, setup), tmp_path / "out.xlsx", others=again)
    assert len(tiny.calls) == calls_before  # nothing embedded, nothing recomputed
    assert tiny.made == 1  # the model was loaded once, for the first run only
    assert "AQER (blank answers left out)" in table.frame["condition"].tolist()
    import openpyxl

    sheet = openpyxl.load_workbook(out)["Comparison"]
    names = [row[0] for row in sheet.iter_rows(min_row=2, values_only=True)]
    assert names[:5] == [name for name, _, _ in BUILT_IN_CONDITIONS]
    assert "AQER (blank answers left out)" in names


def test_a_condition_with_another_model_embeds_only_with_that_model(ready):
    project_path, setup = ready
    made: list[str] = []
    tiny = TinyEncoder()

    def factory(model_path, device):
        made.append(model_path)
        return tiny

    setup = setup.model_copy(update={"conditions": [AqerCondition(embedding_model="/m/other")]})
    with Project.open(project_path) as project:
        run_choices(project, setup, factory)
        first = sum(tiny.calls)
        others = run_conditions(project, setup, factory)
        assert made == ["", "/m/other"]
        assert sum(tiny.calls) == 2 * first  # the new model embeds every text once
        assert others["AQER (model other)"].embedded == first
        run_conditions(project, setup, factory)
        assert made == ["", "/m/other"] and sum(tiny.calls) == 2 * first


def test_the_workers_curve_is_stored_and_read_back(ready):
    project_path, setup = ready
    tiny = TinyEncoder()
    with Project.open(project_path) as project:
        curve = run_workers_curve(project, setup, tiny.factory, repetitions=3)
    with Project.open(project_path) as project:
        back = load_workers_curve(project, setup, repetitions=3)
        assert load_workers_curve(project, setup, repetitions=4) is None
    assert back is not None
    assert back.values == curve.values
    pd.testing.assert_frame_equal(back.frame, curve.frame, check_dtype=False)
    assert back.describe() == curve.describe()


def _old_curve_values(prepared, encoder, result, sizes, repetitions, seed):
    """The curve as it was computed before (each panel scored by ``aqer`` with its members'
    answers and grades, so with its own agreement table), kept here to compare values."""
    from dataclasses import replace

    from core.aqer.responses import AqerInputError

    workers = result.workers
    names = sorted(workers.loc[workers["score"].notna(), "worker"].tolist())
    grades = dict(zip(workers["worker"], workers["expert_grade"].astype(float)))
    settings = result.settings.model_copy(
        update={"baselines": False, "llm_as_workers": False, "blank_answers": result.blank_rule})
    frame = prepared.frame[~prepared.frame["is_llm"]]
    blanks = prepared.blanks
    rng = np.random.default_rng(seed)
    values = {}
    for size in sizes:
        got = []
        for _ in range(1 if size == len(names) else repetitions):
            panel = set(rng.choice(names, size=size, replace=False).tolist())
            subset = replace(prepared, frame=frame[frame["worker"].isin(panel)],
                             blanks=blanks[blanks["worker"].isin(panel)] if len(blanks)
                             else blanks, notices=[])
            value = float("nan")
            try:
                s = aqer(subset, encoder, settings=settings).workers
            except AqerInputError:
                s = None
            if s is not None:
                s = s[s["score"].notna()]
                x = s["score"].astype(float).to_numpy()
                y = np.array([grades[n] for n in s["worker"]])
                if len(x) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
                    value = float(sps.pearsonr(x, y).statistic)
            got.append(value)
        values[size] = got
    return values


@pytest.mark.parametrize("blanks", [False, True])
def test_workers_curve_values_equal_the_old_route_without_per_panel_agreement(monkeypatch,
                                                                             blanks):
    """The curve no longer computes each panel's own agreement with the grades (bootstrap CIs
    that were thrown away: nine tenths of its time on Mohler); its values stay exactly those
    of the old route for the same seed."""
    from core.aqer import pipeline

    answers = graded_answers(blanks=blanks)
    result = aqer(answers, TinyEncoder())
    prepared = clean_responses(answers)
    expected = _old_curve_values(prepared, TinyEncoder(), result, [3, 5, 10, 12], 4, 7)

    def no_agreement(*args, **kwargs):
        raise AssertionError("a panel's agreement table was computed")

    monkeypatch.setattr(pipeline, "agreement_table", no_agreement)
    curve = workers_curve(prepared, TinyEncoder(), result, repetitions=4, seed=7)
    assert list(curve.values) == list(expected)
    for size, values in expected.items():
        np.testing.assert_array_equal(curve.values[size], values)


# ----------------------------------------------------------------------------- embedding models


def test_an_embedding_model_condition_is_kept_per_model_and_tested_against_aqer(ready):
    project_path, setup = ready
    two = _TwoModels()
    setup = setup.model_copy(update={"conditions": [
        AqerCondition(embedding_model="", embedding_backend="torch")]})
    with Project.open(project_path) as project:
        main = run_choices(project, setup, two.factory)
        others = run_conditions(project, setup, two.factory)
        assert two.made == ["auto", "torch"]
        # its vectors are its own: every text embedded again by the other model
        assert len(two.torch.texts_seen) == sum(two.auto.calls) > 0
        assert list(others) == [TORCH]
        other = others[TORCH].result
        assert other.embedding_model == "hashed-bag-of-words through PyTorch"
        assert not np.allclose(other.workers["score"].astype(float),
                               main.result.workers["score"].astype(float))
        table = comparison(project, setup, main).frame.set_index("condition")
        run_id = others[TORCH].run_id
    row = table.loc[TORCH]
    expected = stats.paired_correlation_difference(
        [float(v) for v in other.workers.set_index("worker")["score"].reindex(
            main.result.workers["worker"])],
        main.result.workers["score"].astype(float).tolist(),
        main.result.workers["expert_grade"].astype(float).tolist(),
        method="pearson", n_boot=2000, seed=0)
    assert row["paired_n"] == 12
    assert row["difference"] == pytest.approx(expected.difference)
    assert row["p_value"] == pytest.approx(expected.p_value)
    assert "PyTorch" in row["settings"]
    seen = len(two.torch.calls)
    with Project.open(project_path) as project:  # reopened: kept, and nothing computed again
        assert load_conditions(project, setup)[TORCH].run_id == run_id
        again = run_conditions(project, setup, two.factory)
        assert again[TORCH].run_id == run_id
    assert len(two.torch.calls) == seen and two.made == ["auto", "torch"]


def test_the_embedding_choices_are_the_bundled_model_through_the_other_backend():
    from core.aqer.session.encoders import embedding_choices

    cpu = AqerChoices(device="cpu")
    assert [c.label() for c in embedding_choices(cpu)] == [TORCH]  # auto on the CPU = ONNX
    forced = AqerChoices(device="cpu", embedding_backend="torch")
    assert [c.embedding_backend for c in embedding_choices(forced)] == ["onnx"]
    folder = AqerChoices(device="cpu", embedding_model="/models/mpnet")
    assert [(c.embedding_model, c.embedding_backend) for c in embedding_choices(folder)] == [
        ("", "torch"), ("", "onnx")]
    # the default setup's fingerprint is unchanged (results kept before stay found)
    assert AqerChoices().fingerprint()["embedding"] == "built-in all-MiniLM-L6-v2"
    assert forced.fingerprint()["embedding"] == "built-in all-MiniLM-L6-v2 [torch]"


def test_a_forced_backend_that_cannot_run_is_an_error_not_another_backend(monkeypatch):
    from core.aqer.session import default_encoder_factory
    from core.embeddings import EmbeddingError

    class FellBack:
        def __init__(self, model_path="", device="auto", backend="auto", **_):
            self.backend, self.fallback_reason = "torch", "NoSuchFile: model.onnx"

    monkeypatch.setattr("core.embeddings.Encoder", FellBack)
    with pytest.raises(EmbeddingError, match="cannot run through ONNX Runtime.*NoSuchFile"):
        default_encoder_factory("", "auto", backend="onnx")
    assert default_encoder_factory("", "auto", backend="torch").backend == "torch"
