"""InteractEval's construction steps with more notes than the model reads at once: the notes are
split into parts that fit (prompt and reply), and the parts' results are put together.

The model is the scripted one behaving like a server with a small context window
(``ScriptedLLM(context_window=...)``: a longer prompt is refused with llama.cpp's words, and an
answer longer than ``max_tokens`` is cut off), reached through the real gateway. The notes are
the InteractEval authors' own 62 coherence notes (shared data)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.interacteval import Attribute, Dimension, StageError
from core.interacteval.attribute_clustering import cluster_attributes
from core.interacteval.component_extraction import extract_components
from core.interacteval.grounded import note_word_groups
from core.llm import Gateway, MemoryCache, ScriptedLLM, context

NOTES = Path("/work/shared/data/interacteval/summeval/coherence/human_llm_attributes.txt")
DEFINITION = NOTES.with_name("dimension_definition.txt")

pytestmark = pytest.mark.skipif(not NOTES.exists(), reason="shared data not present")


@pytest.fixture
def notes() -> list[Attribute]:
    from core.interacteval.inputs import read_notes

    read = read_notes(NOTES)
    assert len(read.attributes) == 62
    return read.attributes


@pytest.fixture
def dimension() -> Dimension:
    return Dimension(name="Coherence", definition=" ".join(DEFINITION.read_text().split()))


def _numbered(prompt: str) -> dict[int, str]:
    """The notes a prompt lists as "12. text", by number."""
    return {int(n): text for n, text in re.findall(r"^(\d+)\. (.+)$", prompt, re.MULTILINE)}


def _last_user(messages) -> str:
    return [m for m in messages if m["role"] == "user"][-1]["content"]


def _gateway(llm: ScriptedLLM, window: int, max_tokens: int) -> Gateway:
    return Gateway(llm.profile(context_window=window, max_tokens=max_tokens),
                   cache=MemoryCache())


# ------------------------------------------------------------------------- grounded path
def _grounded_reply(messages):
    """Each listed note named with its longest word group (as a model may choose)."""
    listed = _numbered(_last_user(messages).split("For each of the")[0])
    return {"components": [{"note": n, "name": max(note_word_groups(t), key=len)}
                           for n, t in listed.items()]}


async def test_the_authors_62_notes_get_components_with_an_8k_model_answering_512_tokens(
        notes, dimension):
    """The bundled model's limits (8,192 tokens, answers of 512): one call for 62 notes wanted
    a reply of ~850 tokens, cut off at 512, and asking again with the schema of every note's
    word groups needed ~9,000 tokens ("Requested tokens ... exceed context window")."""
    server = ScriptedLLM(_grounded_reply, name="ie-fit-grounded", context_window=8192)
    try:
        names = await extract_components(dimension, notes, _gateway(server, 8192, 512),
                                         grounded=True)
    finally:
        server.close()
    assert len(names) == 5 and len({n.casefold() for n in names}) == 5
    assert server.calls >= 2  # in parts
    asked = [text for request in server.requests
             for text in _numbered(request.prompt.split("For each of the")[0]).values()]
    assert sorted(asked) == sorted(" ".join(a.text.split()) for a in notes)  # each once
    # every note was asked about exactly once, no answer was cut off and none asked again
    assert all(request.params.get("max_tokens") == 512 for request in server.requests)
    assert all(len(request.messages) == 2 for request in server.requests)


async def test_grounded_parts_keep_the_notes_order_as_one_call_would(notes, dimension):
    """The names come in the notes' order, as with one call: the same five as a model
    without limits gives."""
    big = ScriptedLLM(_grounded_reply, name="ie-fit-big")
    small = ScriptedLLM(_grounded_reply, name="ie-fit-small", context_window=4096)
    try:
        whole = await extract_components(dimension, notes, _gateway(big, 200_000, 100_000),
                                         grounded=True)
        parts = await extract_components(dimension, notes, _gateway(small, 4096, 512),
                                         grounded=True)
    finally:
        big.close()
        small.close()
    assert big.calls == 1 and small.calls >= 3
    assert parts == whole


# ------------------------------------------------------------------------------ normal path
def _normal_reply(messages):
    prompt = "\n".join(m["content"] for m in messages)
    if "were read in" in prompt:  # the merge of the parts' components
        names = re.findall(r"^- (.+?) \(named for (\d+) of", _last_user(messages), re.MULTILINE)
        ranked = sorted(names, key=lambda pair: -int(pair[1]))
        return {"components": [name for name, _ in ranked[:5]]}
    if "Sort the notes" in prompt:
        numbers = sorted(_numbered(_last_user(messages).split("The notes, numbered:")[1]))
        comps = re.findall(r"^\d+\. (.+)$", _last_user(messages).split("The notes")[0],
                           re.MULTILINE)
        return {"clusters": [{"component": c, "notes": numbers[i::len(comps)]}
                             for i, c in enumerate(comps)]}
    notes = re.findall(r"^- (.+)$", _last_user(messages), re.MULTILINE)
    names = ["Logical flow", "Structure"]
    if any("summary" in n.casefold() for n in notes):
        names.append("Summary focus")
    first = notes[0].split()[2] if notes else ""
    names += [f"Theme of {len(notes)} notes from {first}",  # named by one part only
              f"Detail of {len(notes)} notes from {first}"]
    return {"components": names}


async def test_components_of_many_notes_from_parts_then_merged(notes, dimension):
    server = ScriptedLLM(_normal_reply, name="ie-fit-normal", context_window=2048)
    try:
        names = await extract_components(dimension, notes, _gateway(server, 2048, 256),
                                         grounded=False)
    finally:
        server.close()
    def merge(request):
        return "were read in" in "\n".join(m["content"] for m in request.messages)

    parts = [r for r in server.requests if not merge(r)]
    merges = [r for r in server.requests if merge(r)]
    assert len(parts) >= 2 and len(merges) == 1
    # every note went into exactly one part, in order
    seen = sorted((re.findall(r"^- (.+)$", r.prompt, re.MULTILINE) for r in parts),
                  key=lambda lines: [" ".join(a.text.split()) for a in notes].index(lines[0]))
    assert [line for lines in seen for line in lines] == [" ".join(a.text.split())
                                                          for a in notes]
    # the components every part named come first
    assert names[:3] == ["Logical flow", "Structure", "Summary focus"]
    assert len(names) == 5


async def test_components_in_one_call_when_the_notes_fit(notes, dimension):
    server = ScriptedLLM(_normal_reply, name="ie-fit-one", context_window=16384)
    try:
        names = await extract_components(dimension, notes, _gateway(server, 16384, 1024),
                                         grounded=False)
    finally:
        server.close()
    assert server.calls == 1
    assert names == ["Logical flow", "Structure", "Summary focus", "Theme of 62 notes from the",
                     "Detail of 62 notes from the"]


async def test_clusters_of_many_notes_sorted_in_parts(notes, dimension):
    components = ["Logical flow", "Structure", "Summary focus"]
    server = ScriptedLLM(_normal_reply, name="ie-fit-cluster", context_window=2048)
    try:
        grouped = await cluster_attributes(dimension, components, notes,
                                           _gateway(server, 2048, 256), grounded=False)
    finally:
        server.close()
    assert server.calls >= 2
    placed = [a for c in grouped.clusters for a in c.attributes]
    assert len(placed) == 62 and not grouped.left_out and not grouped.remarks
    order = {id(a): i for i, a in enumerate(notes)}
    for cluster in grouped.clusters:
        positions = [order[id(a)] for a in cluster.attributes]
        assert positions == sorted(positions)
    # the parts keep the notes' own numbers
    firsts = sorted(min(_numbered(r.prompt.split("The notes, numbered:")[1]))
                    for r in server.requests)
    assert firsts[0] == 1 and firsts[1] > 1


async def test_a_note_longer_than_the_whole_window_is_refused_before_any_call(dimension):
    long_note = Attribute(text="The summary " + "keeps to the point and " * 900,
                          source="anna")
    notes = [Attribute(text="Check the flow.", source="anna"), long_note]
    server = ScriptedLLM(_normal_reply, name="ie-fit-refuse", context_window=4096)
    try:
        with pytest.raises(StageError) as caught:
            await extract_components(dimension, notes, _gateway(server, 4096, 512),
                                     grounded=False)
    finally:
        server.close()
    assert server.calls == 0
    message = str(caught.value)
    assert "Note 2 (by anna) is too long" in message and "4,096" in message
    assert "Shorten that note" in message and caught.value.kind == "too_long"


def test_split_items_evens_out_the_parts():
    limits = context.Limits(window=1000, answer=100)
    items = [f"note number {i} about the flow of the text" for i in range(100)]

    def prompt_of(part):
        return [{"role": "user", "content": "Notes:\n" + "\n".join(part)}]

    parts = context.split_items(items, prompt_of, limits)
    assert [x for p in parts for x in p] == items
    assert all(context.prompt_tokens(prompt_of(p)) <= limits.prompt for p in parts)
    sizes = [len(p) for p in parts]
    assert len(parts) >= 2 and max(sizes) - min(sizes) <= 2


def test_the_estimate_counts_the_parts_a_run_sends_and_no_call_for_a_refused_text(notes):
    from core.interacteval import Checklist, ChecklistItem, ScoringSettings, TextItem
    from core.interacteval.checklist_scoring import question_parts, refused_texts
    from core.interacteval.estimate import plan_scoring
    from core.interacteval.grounded import note_question

    checklist = Checklist(dimension="Coherence", items=[
        ChecklistItem(question=note_question(a.text)) for a in notes])
    items = [TextItem(id="short", text="The council met. It agreed on a plan."),
             TextItem(id="long", row=3, text="The council met and talked. " * 1500)]
    limits = context.Limits(window=4096, answer=512, model="m")
    stages, _done = plan_scoring([checklist], items, ScoringSettings(), limits=limits)
    parts = question_parts(checklist, items[0], limits)
    assert len(parts) >= 2
    assert len(stages[0].prompts) == len(parts)  # the short text's parts; none for the long
    assert all(context.prompt_tokens(p) <= limits.prompt for p in stages[0].prompts)
    refused = refused_texts([checklist], items, ScoringSettings(), limits)
    assert [r.what for r in refused] == ["the text “long” (row 3), scored on Coherence"]
    unlimited, _done = plan_scoring([checklist], items, ScoringSettings())
    assert len(unlimited[0].prompts) == 2  # without limits: one call per text, as before
