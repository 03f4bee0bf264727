"""MAJ-Eval's inputs that grow, with a model that reads little at once: a long debate keeps
every request within the window (its oldest turns left out, the standing instructions first
and unchanged), an item too long for the model is refused before any call, and a document in
Chinese is cut into chunks that fit a real tokenizer."""

from __future__ import annotations

from itertools import pairwise

import pytest

from core.llm import Gateway, MemoryCache, ScriptedLLM
from core.llm.context import TooLong
from core.majeval import (
    DEFAULT_DIMENSION,
    DebateSettings,
    Item,
    Scale,
    evaluate_individually,
    free_debate,
)

from .majeval_support import SYNTHESIS, evaluation, kind, persona, speaker, turn

PANEL = [persona("Teachers", name) for name in
         ("Ms Amy Lee", "Mr Bo Chen", "Dr Cara Diaz", "Mrs Dee Evans")]
ITEM = Item(id="q1", content="Q: Why is the sky blue? A: Because of the sea.",
            context="A story about the sea.")
LONG = ("I have read the question again with the child in mind, and I still think the answer "
        "teaches something false about light, which a parent would then have to correct; the "
        "wording is friendly, but a friendly wrong answer is worse than a dull right one. ")


def _reply(messages):
    who, what = speaker(messages), kind(messages)
    scores = {"Ms Amy Lee": 4, "Mr Bo Chen": 2, "Dr Cara Diaz": 1, "Mrs Dee Evans": 5}
    if what == "phase1":
        return evaluation(scores[who], f"{who} has reasons. " + LONG)
    if what == "turn":
        return turn(f"{who} keeps arguing. " + LONG * 2, scores[who])  # nobody gives in
    if what == "final":
        return evaluation(3, f"{who} ends here.")
    if "stakeholder group" in messages[0]["content"].casefold():
        return SYNTHESIS
    raise AssertionError(what)


async def test_a_long_debate_fits_a_small_window_and_keeps_the_prefix():
    server = ScriptedLLM(_reply, name="maj-fit-debate", context_window=3072)
    gateway = Gateway(server.profile(context_window=3072, max_tokens=256, max_retries=0),
                      cache=MemoryCache())
    try:
        agents = await evaluate_individually(PANEL, ITEM, "Judge QA pairs.",
                                             [DEFAULT_DIMENSION], Scale(), gateway)
        result = await free_debate(PANEL, ITEM, "Judge QA pairs.", [DEFAULT_DIMENSION],
                                   Scale(), gateway, agents,
                                   settings=DebateSettings(rounds=5))
    finally:
        server.close()
    # every turn was taken and every agent gave its final evaluation at the cap
    assert [a.status for a in result.agents] == ["ok"] * 4
    assert not [t for t in result.turns if t.error]
    assert sum(t.kind == "debate" for t in result.turns) == 20
    assert {a.finalised_by for a in result.agents} == {"cap"}
    later = [r for r in server.requests if kind(r.messages) in ("turn", "final")]
    assert any("are left out here" in r.messages[-1]["content"] for r in later)
    # the left-out turns are said with the latest scores given in them
    cut = next(r.messages[-1]["content"] for r in later
               if "are left out here" in r.messages[-1]["content"])
    assert "The latest scores given in them:" in cut
    # each agent's standing instructions are the same, byte for byte, in all its phase 2 calls
    for member in PANEL:
        systems = {r.messages[0]["content"] for r in later if speaker(r.messages) == member.name}
        assert len(systems) == 1, member.name
    # the discussion is left out in steps: between two steps the requests grow, so most of
    # the requests repeat the one before them as a prefix
    discussions = [r.messages[-1]["content"].split("\n\nIt is your turn")[0]
                   for r in later if kind(r.messages) == "turn"]
    grows = sum(after.startswith(before) for before, after in pairwise(discussions[4:]))
    assert grows >= len(discussions[5:]) // 2


async def test_an_item_too_long_for_the_model_is_refused_before_any_call():
    from core.majeval.pipeline import evaluate

    huge = Item(id="q7", row=8, content="A: " + LONG * 120, context="")
    server = ScriptedLLM(_reply, name="maj-fit-refuse", context_window=4096)
    gateway = Gateway(server.profile(context_window=4096, max_tokens=512), cache=MemoryCache())
    try:
        with pytest.raises(TooLong) as caught:
            await evaluate(PANEL, [ITEM, huge], "Judge QA pairs.", gateway)
    finally:
        server.close()
    assert server.calls == 0
    message = str(caught.value)
    assert message.startswith("Nothing was sent to the model.")
    assert "The item “q7” (row 8), debated by the group Teachers, is too long" in message
    assert "4,096" in message and "shorten the item" in message.casefold()


def test_a_chinese_document_is_cut_into_chunks_that_fit_a_real_tokenizer(gemma_tokens):
    """Cut at three characters a token, a page of Chinese made chunks about twice too long for
    Gemma's tokenizer (and more for Llama 2's)."""
    from core.documents import Document, Page
    from core.majeval import _prompts
    from core.majeval.perspective_extraction import (
        TEMPLATE,
        _pages_text,
        document_chunks,
    )

    paragraph = ("这位家长说，孩子在睡前听故事时最喜欢回答简单有趣的问题。老师们希望问题能够把故事"
                 "和孩子自己的生活联系起来，这样孩子更容易学会新的词语。")
    pages = [Page(number=n, text="\n\n".join([paragraph] * 12)) for n in range(1, 5)]
    doc = Document(path="研究.txt", name="研究.txt", kind="text", pages=pages)
    window, answer = 2048, 256
    chunks = document_chunks(doc, "Judge QA pairs.", window, answer)
    assert len(chunks) >= 3
    template = _prompts.load(TEMPLATE)
    for chunk in chunks:
        messages = template.messages(task="Judge QA pairs.", document=doc.name,
                                     pages=_pages_text(chunk.pages), text=chunk.text)
        real = sum(gemma_tokens(m["content"]) for m in messages)
        assert real + answer <= window, real
