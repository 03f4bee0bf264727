"""Stage 1: stakeholders and their perspectives from documents (paper 3.1 step 1, Table 12).

A document (a :class:`core.documents.Document` the user has checked) is cut at paragraph
boundaries into chunks that fit the model's context (context window minus the prompt and the
answer allowance, ours; :func:`document_chunks`, sized with ``core.llm.context``'s token count). Per chunk the model lists the stakeholders named in it, with a
characteristics line and perspectives on the task, each with a quote as evidence. Chunks of one
document are merged by normalised stakeholder name; every quote is located on its page with
:func:`core.documents.find_evidence`, so a persona can be traced back to a sentence in a PDF.
A reply is checked before it is used (:func:`grounded_in`): every quote must be found in the
chunk, and no stakeholder may be called by a word of our form; a reply that fails is asked again
once. A chunk whose call fails is listed in ``failures`` (with the kind, e.g.
"copied_instructions" when the model repeated the instructions); the other chunks still count.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from core import prompts
from core.documents import (
    Document,
    Page,
    chunk_pages,
    find_evidence,
    sentences_of,
)
from core.llm import LLMFailure, Rejection, context, copied_instructions
from core.majeval import _prompts
from core.majeval.model import (
    JsonLLM,
    Perspective,
    StageFailure,
    Stakeholder,
    generic_name,
)
from core.runs import CancelToken, Progress

__all__ = ["PerspectiveExtraction", "chunk_budget", "document_chunks", "document_title",
           "extract_perspectives", "names_people", "normalise_name", "people_named",
           "reply_schema"]

STAGE = "Perspective extraction"
TEMPLATE = "perspective_extraction"
#: Smallest room for document text in one chunk; below it the model's context is too small.
MIN_CHUNK_TOKENS = 300
#: Bounds of one chunk's reply in the schema a model is held to (a small model otherwise repeats
#: itself until the answer is cut off): stakeholders per chunk, perspectives per stakeholder,
#: characters of a name and of a sentence of the model's own.
MAX_STAKEHOLDERS = 8
MAX_PERSPECTIVES = 6
MAX_NAME_CHARS = 80
MAX_SENTENCE_CHARS = 300


class _FoundPerspective(BaseModel):
    perspective: str
    evidence: str = ""


class _FoundStakeholder(BaseModel):
    name: str
    characteristics: str = ""
    perspectives: list[_FoundPerspective] = Field(default_factory=list)


class StakeholderList(BaseModel):
    """The model's reply for one chunk."""

    stakeholders: list[_FoundStakeholder] = Field(default_factory=list)


def reply_schema(text: str) -> type[StakeholderList]:
    """The reply's form for one chunk ``text``: a :class:`StakeholderList` whose JSON schema (what
    a model with structured output is held to, e.g. the bundled model's grammar) allows only the
    chunk's own sentences as evidence and, when the chunk plainly names people, asks for at least
    one stakeholder, each with at least one perspective, names first. A small model then cannot
    invent a quote or take the empty list as the easy answer; the reply is still checked in full
    (:func:`grounded_in`), since not every server holds a model to the schema."""
    quotes = sentences_of(text)
    names_people = bool(people_named([Document(path="", name="", kind="text",
                                                pages=[Page(number=1, text=text)])]))

    def tighten(schema: dict[str, Any]) -> None:
        defs = schema.get("$defs", {})
        perspective = defs.get("_FoundPerspective", {})
        fields = perspective.get("properties", {})
        fields.get("perspective", {})["maxLength"] = MAX_SENTENCE_CHARS
        if quotes:
            fields.get("evidence", {})["enum"] = quotes
        perspective["required"] = ["perspective", "evidence"]
        stakeholder = defs.get("_FoundStakeholder", {})
        fields = stakeholder.get("properties", {})
        fields.get("name", {})["maxLength"] = MAX_NAME_CHARS
        fields.get("characteristics", {})["maxLength"] = MAX_SENTENCE_CHARS
        views = fields.get("perspectives", {})
        views["maxItems"] = max(1, min(MAX_PERSPECTIVES, len(quotes)))
        stakeholder["required"] = ["name", "characteristics", "perspectives"]
        people = schema.get("properties", {}).get("stakeholders", {})
        people["maxItems"] = MAX_STAKEHOLDERS
        if names_people:
            views["minItems"] = 1
            people["minItems"] = 1
        schema["required"] = ["stakeholders"]

    return prompts.held_to(StakeholderList, tighten)


@dataclass
class PerspectiveExtraction:
    """Stage 1 for one document: its stakeholders (merged over chunks) and what failed."""

    document: str
    stakeholders: list[Stakeholder] = field(default_factory=list)
    failures: list[StageFailure] = field(default_factory=list)
    chunks: int = 0

    @property
    def perspectives(self) -> list[Perspective]:
        return [p for s in self.stakeholders for p in s.perspectives]


def chunk_budget(context_window: int, answer_tokens: int, task: str) -> int:
    """Tokens left for document text (counted as :func:`core.llm.context.text_tokens` counts):
    the context window minus the prompt (with the task), the answer allowance and the room for
    a second asking. Raises ValueError when too small."""
    prompt = _prompts.load(TEMPLATE)
    empty = prompt.messages(task=task, document="x" * 40, pages="pages 100-200", text="")
    limits = context.Limits(context_window, answer_tokens)
    budget = limits.prompt - context.prompt_tokens(empty)
    if budget < MIN_CHUNK_TOKENS:
        raise ValueError(
            f"The model's context window ({context_window} tokens) leaves too little room for "
            f"the document after the instructions and an answer of {answer_tokens} tokens. "
            "Choose a model with a larger context window or lower 'maximum tokens'.")
    return budget


def document_chunks(document: Document, task: str, context_window: int,
                    answer_tokens: int) -> list[Any]:
    """``document`` cut at paragraph boundaries into chunks whose prompt fits the model
    (:func:`chunk_budget` tokens of text each, counted as ``core.llm.context`` counts: a page in
    Thai or Chinese makes smaller chunks than one in English)."""
    from core.documents import CHARS_PER_TOKEN

    budget = chunk_budget(context_window, answer_tokens, task)
    text = "\n\n".join(page.text for page in document.pages)
    density = max(context.text_tokens(text) / max(1, len(text)), 0.05)  # tokens per character
    size = max(20, int(budget / density / CHARS_PER_TOKEN))  # chunk_pages' own unit
    for _attempt in range(8):
        chunks = chunk_pages(document.pages, max_tokens=size)
        worst = max((context.text_tokens(c.text) for c in chunks), default=0)
        if worst <= budget or size <= 20:
            return chunks
        size = max(20, int(size * budget / worst * 0.95))
    return chunks


_ARTICLE = re.compile(r"^(the|a|an|all|some|many)\s+")

#: Words that name people (stakeholders of the kind the paper finds): a document using them
#: plainly talks about people, so a model that finds nobody in it found nothing.
_PEOPLE = re.compile(
    r"\b(parents?|mothers?|fathers?|famil(?:y|ies)|carers?|caregivers?|grandparents?|"
    r"grandmothers?|grandfathers?|child(?:ren)?|kids?|students?|pupils?|learners?|teachers?|"
    r"educators?|librarians?|clinicians?|doctors?|physicians?|nurses?|patients?|therapists?|"
    r"pharmacists?|ophthalmologists?|optometrists?|specialists?|surgeons?|dentists?|"
    r"midwi(?:fe|ves)|researchers?|developers?|designers?|engineers?|users?|readers?|"
    r"participants?|respondents?|interviewees?|experts?|professionals?|practitioners?|"
    r"administrators?|managers?|policymakers?|residents?|citizens?|consumers?|workers?|"
    r"employees?|volunteers?|caretakers?|guardians?|adults?|adolescents?|teenagers?|people)\b",
    re.IGNORECASE)


def people_named(documents: Sequence[Document], *, at_least: int = 3) -> list[tuple[str, int]]:
    """The words naming people that the documents use, most frequent first, with their counts
    (e.g. ``[("parents", 12), ("teachers", 8)]``); empty when they use fewer than ``at_least``
    such words in all (then the documents do not plainly talk about people)."""
    counts: dict[str, int] = {}
    for doc in documents:
        for page in doc.pages:
            for found in _PEOPLE.finditer(page.text):
                word = found.group(1).casefold()
                counts[word] = counts.get(word, 0) + 1
    if sum(counts.values()) < at_least:
        return []
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def normalise_name(name: str) -> str:
    """``"The Parents"`` -> ``"parents"``: case, spacing, punctuation and a leading article
    ignored (how stakeholders of one document are merged over chunks)."""
    text = " ".join(re.sub(r"[^\w\s'-]", " ", str(name).casefold()).split())
    return _ARTICLE.sub("", text).strip()


def _pages_text(pages: Sequence[int]) -> str:
    if not pages:
        return "no pages"
    if len(pages) == 1:
        return f"page {pages[0]}"
    return f"pages {pages[0]}-{pages[-1]}"


def _perspective_id(document: str, stakeholder: str, text: str) -> str:
    digest = hashlib.sha256("\x1f".join([document, normalise_name(stakeholder), text])
                            .encode("utf-8")).hexdigest()
    return "p" + digest[:10]


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: Endings of single words that name people ("teachers", "physician", "parents"): such a word
#: may be a stakeholder's whole name even when it is also a word of the document's title.
_PEOPLE_ENDINGS = ("er", "ers", "or", "ors", "ist", "ists", "ian", "ians", "ant", "ants", "ent",
                   "ents", "ee", "ees", "ive", "ives", "man", "men", "people", "child",
                   "children", "staff", "public", "family", "families", "nurse", "nurses",
                   "adult", "adults", "person", "persons", "youth", "elderly")


def names_people(word: str) -> bool:
    """Whether one word may name a kind of people (:data:`_PEOPLE` or a people ending)."""
    folded = str(word).casefold()
    return bool(_PEOPLE.fullmatch(folded)) or folded.endswith(_PEOPLE_ENDINGS)


def document_title(document: Document) -> str:
    """A document's title as far as it can be told: its file name and the first line of its
    first page."""
    first = next((line for page in document.pages[:1] for line in page.text.splitlines()
                  if line.strip()), "")
    return f"{re.sub(r'[_.-]+', ' ', document.name)} {first[:200]}"


def grounded_in(text: str, name: str = "the text", title: str = ""
                ) -> Callable[[StakeholderList], Rejection | None]:
    """The stage's check of a reply for one chunk ``text``: every stakeholder has a name (not a
    word of our form such as "stakeholder", not a single letter, a number or a word of the
    document's ``title`` that names no people: :func:`core.prompts.says_nothing`), and every
    perspective has its evidence, found in the chunk word for word or nearly
    (:func:`core.documents.find_evidence`). A reply that fails is asked again once, then the
    chunk fails with the reason."""
    chunk = Document(path="", name=name, kind="text", pages=[Page(number=1, text=text)])

    def check(reply: StakeholderList) -> Rejection | None:
        for s in reply.stakeholders:
            if not s.name.strip() or generic_name(s.name):
                return copied_instructions(f"the stakeholder name “{_short(s.name)}”")
            why = prompts.says_nothing(s.name, title=title, keep=names_people)
            if why:
                return Rejection(
                    f"the stakeholder name “{_short(s.name)}” {why}; name a kind of people the "
                    "text talks about (for example “parents of young children”)",
                    advice="The model named stakeholders with words that are not names of "
                           "people: it is too small for this step; try a larger model.")
            for p in s.perspectives:
                if not p.perspective.strip():
                    return Rejection(f"a perspective of {_short(s.name)} is empty")
                quote = " ".join(p.evidence.split())
                if not quote:
                    return Rejection(
                        f"the perspective “{_short(p.perspective)}” of {_short(s.name)} "
                        "has no evidence; give the sentence of the text that supports it",
                        advice="The model gave perspectives without a sentence from the "
                               "document: try a larger model.")
                if find_evidence(chunk, quote) is None:
                    return Rejection(
                        f"the evidence “{_short(quote)}” for {_short(s.name)} is not in "
                        "the text; give the supporting sentence exactly as it stands in the text",
                        advice="The model quoted sentences that are not in the document: try a "
                               "larger model.")
        return None

    return check


async def extract_perspectives(
    document: Document,
    task: str,
    llm: JsonLLM,
    *,
    context_window: int | None = None,
    answer_tokens: int | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> PerspectiveExtraction:
    """Stakeholders and perspectives of one document, chunk by chunk (chunks concurrently,
    bounded by the model's own concurrency limit). ``context_window`` and ``answer_tokens``
    default to the model's (``core.llm.context``: the server's or the profile's window, the
    profile's ``max_tokens``)."""
    progress = progress or Progress()
    limits = await context.limits_for(llm)
    window = context_window or (limits.window if limits else 8192)
    answer = answer_tokens or (limits.answer if limits else 1024)
    chunks = document_chunks(document, task, window, answer)
    title = document_title(document)
    result = PerspectiveExtraction(document=document.name, chunks=len(chunks))
    progress.start(f"Reading {document.name} for stakeholders", total=len(chunks))

    async def one(chunk) -> StakeholderList | None:
        where = f"{document.name}, {_pages_text(chunk.pages)}"
        try:
            reply = await _prompts.ask(llm, TEMPLATE, reply_schema(chunk.text), {
                "task": task, "document": document.name, "pages": _pages_text(chunk.pages),
                "text": chunk.text}, check=grounded_in(chunk.text, where, title), cancel=cancel,
            refuse_loops=True)
        except LLMFailure as failure:
            result.failures.append(StageFailure(stage=STAGE, where=where, kind=failure.kind,
                                                message=failure.message))
            progress.advance(1, f"{where}: failed")
            return None
        progress.advance(1, f"{where}: {len(reply.stakeholders)} stakeholders")
        return reply

    replies = await asyncio.gather(*(one(chunk) for chunk in chunks))
    merged: dict[str, Stakeholder] = {}
    for chunk, reply in zip(chunks, replies):
        if reply is None:
            continue
        for found in reply.stakeholders:
            key = normalise_name(found.name)
            if not key:
                continue
            holder = merged.get(key)
            if holder is None:
                holder = merged[key] = Stakeholder(
                    name=" ".join(found.name.split()), document=document.name,
                    characteristics=" ".join(found.characteristics.split()))
            elif not holder.characteristics and found.characteristics.strip():
                holder.characteristics = " ".join(found.characteristics.split())
            known = {normalise_name(p.perspective) for p in holder.perspectives}
            for item in found.perspectives:
                text = " ".join(item.perspective.split())
                if not text or normalise_name(text) in known:
                    continue
                known.add(normalise_name(text))
                quote = " ".join(item.evidence.split())
                located = find_evidence(document, quote, pages=chunk.pages) if quote \
                    else None
                holder.perspectives.append(Perspective(
                    id=_perspective_id(document.name, holder.name, text),
                    stakeholder=holder.name, perspective=text, evidence=quote,
                    document=document.name,
                    page=located[0] if located else None,
                    match=located[1] if located else None,
                    chunk_pages=list(chunk.pages)))
    result.stakeholders = [s for s in merged.values() if s.perspectives]
    return result
