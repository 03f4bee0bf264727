"""Screenshots of the MAJ-Eval and InteractEval agreement tabs at 1280x800 with 30 and 300
made-up items (the scatter must stay readable at both sizes)::

    xvfb-run -a -s "-screen 0 1280x800x24" python -m desktop._agreement_shots /tmp/shots

The runs are made up in code (seeded): the scores follow a hidden "true" rating plus noise, so
the pictures show the layout only, nothing about either method's quality. Saves
``majeval-agreement-<n>.png`` and ``interacteval-agreement-<n>.png``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

DIM = "Overall quality"


def _majeval_view(n: int, rng: random.Random) -> Any:
    from core.majeval.agreement import human_agreement, within_group_alpha
    from core.majeval.model import (
        AgentEvaluation,
        AgentResult,
        DebateSettings,
        Dimension,
        GroupResult,
        Item,
        ItemResult,
        Persona,
        Scale,
    )
    from core.majeval.pipeline import EvaluationRun
    from desktop.majeval.results import ResultsView

    groups = ["Teachers", "Parents and carers", "School librarians"]
    personas = [Persona(id=f"{g}{k}", group=g, name=f"{g} {k}") for g in groups for k in (1, 2)]
    items, inputs = [], []
    for i in range(1, n + 1):
        truth = rng.uniform(1, 5)
        inputs.append(Item(id=f"item{i}", content=f"Question {i} about the story",
                           human={"teacher_rating": float(round(truth))}))
        results = []
        for g in groups:
            agents = []
            for k in (1, 2):
                first = round(min(5.0, max(1.0, truth + rng.gauss(0, 1))))
                last = round((first + truth) / 2)
                agents.append(AgentResult(
                    persona_id=f"{g}{k}", agent=f"{g} {k}", final={DIM: last},
                    finalised_by="consensus",
                    initial=AgentEvaluation(persona_id=f"{g}{k}", agent=f"{g} {k}",
                                            scores={DIM: first})))
            results.append(GroupResult(
                item_id=f"item{i}", group=g, agents=agents,
                initial_mean={DIM: sum(a.initial.scores[DIM] for a in agents) / 2},
                final_mean={DIM: sum(a.final[DIM] for a in agents) / 2}))
        overall = sum(r.final_mean[DIM] for r in results) / len(results)
        items.append(ItemResult(item_id=f"item{i}", overall={DIM: overall}, groups=results))
    run = EvaluationRun(items=items, personas=personas, dimensions=[Dimension(name=DIM)],
                        scale=Scale(), settings=DebateSettings(), task="Judge the questions.",
                        model="made-up run", item_inputs=inputs)
    view = ResultsView()
    view.set_run(run, alphas=within_group_alpha(run), humans=human_agreement(run, n_boot=200))
    view.tabs.setCurrentIndex(3)
    return view


def _interacteval_view(n: int, rng: random.Random) -> Any:
    from core.interacteval import agreement_rows, human_agreement
    from core.interacteval.model import Checklist, ScoringSettings, TextScore
    from core.interacteval.pipeline import ScoringRun
    from desktop.interacteval.results import ResultsView

    scores = []
    for dimension in ("Clarity", "Accuracy"):
        for i in range(1, n + 1):
            truth = rng.uniform(1, 5)
            score = min(5.0, max(1.0, truth + rng.gauss(0, 1)))
            scores.append(TextScore(text_id=f"t{i}", dimension=dimension, status="ok",
                                    score=round(score * 4) / 4, human=float(round(truth)),
                                    source_id=f"article {(i - 1) // 5 + 1}",
                                    system=f"system {i % 5 + 1}"))
    checklists = [Checklist(dimension="Clarity"), Checklist(dimension="Accuracy")]
    run = ScoringRun(scores=scores, settings=ScoringSettings(), model="made-up run",
                     checklists=checklists)
    view = ResultsView()
    view.set_run(run)
    view.set_agreement(agreement_rows(human_agreement(scores, n_boot=200)))
    view.tabs.setCurrentIndex(2)
    return view


def main(argv: list[str]) -> int:
    from PySide6.QtWidgets import QApplication, QMainWindow

    from desktop.app import load_style

    app = QApplication.instance() or QApplication([])
    load_style(app)
    folder = Path(argv[0] if argv else "resources/screenshots").resolve()
    folder.mkdir(parents=True, exist_ok=True)
    for name, make in (("majeval", _majeval_view), ("interacteval", _interacteval_view)):
        for n in (30, 300):
            window = QMainWindow()
            window.setCentralWidget(make(n, random.Random(n)))
            window.resize(1280, 800)
            window.show()
            for _ in range(30):
                app.processEvents()
            path = folder / f"{name}-agreement-{n}.png"
            window.grab().save(str(path))
            window.close()
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
