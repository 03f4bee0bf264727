"""MAJ-Eval's single-judge baseline: one call per item with our own definition-and-steps
prompt, refusing a copy of our instructions like every other MAJ-Eval prompt."""

from __future__ import annotations

from core.majeval import DEFAULT_DIMENSION, Scale
from core.majeval.single_judge import judge_item, single_judge

from .majeval_support import evaluation


async def test_the_single_judge_refuses_a_copy_of_its_instructions(scripted, items):
    def copying(messages):
        return {"rationale": "your reasons in at most four sentences",
                "scores": {"Overall quality": 3}}

    llm, gateway = scripted(copying)
    result = await judge_item(items[0], "Judge QA pairs.", [DEFAULT_DIMENSION], Scale(),
                              gateway)
    assert result.status == "failed" and not result.scores
    assert result.error_kind == "copied_instructions"
    assert llm.calls == 2  # asked again once


async def test_one_call_per_item_with_the_definitions_and_steps(scripted, items):
    from core.majeval import Dimension

    llm, gateway = scripted(lambda m: evaluation(4, "Clear and correct."))
    dims = [Dimension(name="Overall quality", definition="How well it helps the child.")]
    results = await single_judge(items, "Judge QA pairs.", dims, Scale(), gateway)
    assert [r.scores for r in results] == [{"Overall quality": 4}] * 2
    assert llm.calls == 2
    system = llm.requests[0].messages[0]["content"]
    assert "Overall quality: How well it helps the child." in system
    assert "Evaluation steps:" in system and "Judge QA pairs." in system
    assert "Why is the sky blue?" in llm.requests[0].messages[-1]["content"]
