"""InteractEval's repeat runs (``core.interacteval.repeats``): repeat k of the checklist scoring
is made of real calls with repeat index k, kept as its own run (reopening reads it, a finished
repeat re-runs with zero calls), repeat 0 is the ordinary run; the stability is Krippendorff's
alpha (interval) across the repeats, and the export has a Stability sheet."""

from __future__ import annotations

import threading

import pytest

from core.interacteval import ScoringSettings, TextItem
from core.interacteval.session import export as ie_export
from core.interacteval.session import judge as ie_judge
from core.interacteval.session import scoring
from tests.core.repeat_support import RepeatSpy

N = 12


def _items():
    return [TextItem(id=f"t{i}", text=f"Text number {i}.", source="Article", source_id=f"d{i % 4}",
                     human={"Coherence": float(i % 5 + 1)}) for i in range(N)]


class _Judge:
    """Per text, the answers of the n-th time it is asked: they change from one repeat to the
    next when ``steady`` is False."""

    def __init__(self, steady):
        self.steady, self.asked, self.lock = steady, {}, threading.Lock()

    def __call__(self, messages):
        number = int(messages[-1]["content"].split("Text number ")[1].split(".")[0])
        with self.lock:
            n = self.asked.get(number, 0)
            self.asked[number] = n + 1
        shift = 0 if self.steady else n
        return {"q1": "yes" if (number + shift) % 2 else "no",
                "q2": "yes" if (number // 2 + shift) % 2 else "no"}


def _factory(project, llm, seen):
    from core.llm import gateway_for

    return lambda run_id: RepeatSpy(gateway_for(llm.profile(max_retries=0), project, run_id), seen)


async def test_repeats_are_real_calls_kept_and_free_to_run_again(tmp_path, scripted, checklist):
    from openpyxl import load_workbook

    from core.interacteval.repeats import stability
    from core.interacteval.session.scoring import load_repeats, score_repeats
    from core.project import Project
    from core.stats import krippendorff_alpha

    llm = scripted(_Judge(steady=False))
    items, settings, seen = _items(), ScoringSettings(), []
    with Project.create(tmp_path / "p.evaldesk") as project:
        runs = await score_repeats(project, [checklist], items, _factory(project, llm, seen), 3,
                                   settings=settings, model=llm.model)
        assert llm.calls == 3 * N  # no repeat came from the cache
        assert sorted(set(seen)) == [0, 1, 2] and seen.count(2) == N
        assert [r.settings.repeat for r in runs] == [0, 1, 2]
        assert len({r.run_id for r in runs}) == 3
        table = [[s.score for s in r.scores] for r in runs]
        assert table[0] != table[1]
        (condition, dim, result), = stability(runs)
        assert (condition, dim) == ("Checklist", "Coherence")
        assert result.alpha.value == pytest.approx(krippendorff_alpha(table, "interval").value)
        assert result.flagged
        assert "The checklist judge gives different scores when asked again" in result.sentence

        again = await score_repeats(project, [checklist], items, _factory(project, llm, []), 3,
                                    settings=settings, model=llm.model)
        assert llm.calls == 3 * N
        kept = load_repeats(project, [checklist], settings, llm.model, 3,
                            order=[i.id for i in items])
        assert [[s.score for s in r.scores] for r in kept] == table
        assert [[s.score for s in r.scores] for r in again] == table
        assert len(load_repeats(project, [checklist], settings, llm.model, 5)) == 3

        # repeat 0 is the ordinary run: scoring once more as before makes no call
        plain = await scoring.score_texts([checklist], items, _factory(project, llm, [])(
            scoring.open_scoring_run(project, [checklist], settings, llm.model)),
            project=project, settings=settings, model=llm.model)
        assert plain.run_id == runs[0].run_id and llm.calls == 3 * N

        path = ie_export.export_results(project, runs[0], tmp_path / "r.xlsx", repeats=runs).path
    book = load_workbook(path, read_only=True)
    assert "Stability" in book.sheetnames
    rows = list(book["Stability"].iter_rows(values_only=True))
    head = rows[0]
    body = [dict(zip(head, r)) for r in rows[1:]]
    assert head[:6] == ("condition", "dimension", "unit", "repeat 0", "repeat 1", "repeat 2")
    assert body[0]["alpha"] == pytest.approx(result.alpha.value, abs=1e-9)
    assert body[0]["n"] == N and "different scores when asked again" in body[0]["note"]
    t3 = next(r for r in body if r["unit"] == "t3")
    assert [t3["repeat 0"], t3["repeat 1"], t3["repeat 2"]] == [table[k][3] for k in range(3)]
    readme = {r[0]: r[1] for r in book["Read me"].iter_rows(values_only=True) if r and r[0]}
    assert "the scores shown are repeat 0's" in readme["Repeats"]


async def test_a_steady_judge_is_not_flagged(tmp_path, scripted, checklist):
    from core.interacteval.repeats import stability
    from core.interacteval.session.scoring import score_repeats
    from core.project import Project

    llm = scripted(_Judge(steady=True))
    with Project.create(tmp_path / "p.evaldesk") as project:
        runs = await score_repeats(project, [checklist], _items(), _factory(project, llm, []), 2,
                                   settings=ScoringSettings(), model=llm.model)
    (_, _, result), = stability(runs)
    assert result.alpha.value == pytest.approx(1.0) and not result.flagged
    assert "much the same scores" in result.sentence


async def test_repeats_are_not_judges_of_their_own(tmp_path, scripted, checklist):
    from core.interacteval.session.scoring import score_repeats
    from core.project import Project

    llm = scripted(_Judge(steady=False))
    with Project.create(tmp_path / "p.evaldesk") as project:
        runs = await score_repeats(project, [checklist], _items(), _factory(project, llm, []), 2,
                                   settings=ScoringSettings(), model=llm.model)
        judges = ie_judge.scoring_judges(project)
        assert [j[0] for j in judges] == [f"{llm.model} (run {runs[0].run_id}, {runs[0].date})"]


def test_stability_follows_the_checklists_order_not_the_order_texts_finished():
    """A run's scores are kept in the order the texts finished, which differs between runs:
    the stability lines and sheet list the dimensions in the checklists' order."""
    from types import SimpleNamespace as NS

    from core.interacteval.repeats import stability

    def run(order):
        scores = [NS(text_id=f"t{k}", dimension=dim, score=float(k % 3), status="ok")
                  for dim in order for k in range(4)]
        return NS(checklists=[NS(dimension="Clarity"), NS(dimension="Accuracy")],
                  scores=scores)

    entries = stability([run(["Accuracy", "Clarity"]), run(["Clarity", "Accuracy"])])
    assert [dim for _c, dim, _s in entries] == ["Clarity", "Accuracy"]
