"""MAJ-Eval's documents in the project: each file kept with its extracted pages, a person's
corrections of a page (who and when), and the stakeholders stage 1 found in each document
(:class:`DocumentPerspectives`, with the fingerprint of what they were read from)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from core.documents import Document
from core.llm.identity import model_fields
from core.majeval.inputs import read_document
from core.majeval.model import RunModel, Stakeholder
from core.majeval.pipeline import DOCUMENT_ARTEFACT, PERSPECTIVES_ARTEFACT
from core.majeval.session.choices import MajEvalChoices, save_choices
from core.project.inputs import fingerprint, store_input
from core.project.payloads import PayloadType, PayloadUnreadable, get_payload
from core.runs import CancelToken, Progress

if TYPE_CHECKING:  # pragma: no cover
    from core.project import Edit, Project

__all__ = [
    "DOCUMENT_INPUT_KIND",
    "PERSPECTIVES",
    "DocumentPerspectives",
    "add_document",
    "corrected_pages",
    "edit_page",
    "evidence_span",
    "extraction_fingerprint",
    "has_document",
    "load_documents",
    "page_edits",
    "remove_document",
    "revert_page",
    "stored_document",
    "stored_perspectives",
]


#: The kind of a document file kept in the project.
DOCUMENT_INPUT_KIND = "majeval_document"


class DocumentPerspectives(BaseModel):
    """The stakeholders stage 1 found in one document, with the fingerprint of what they were
    read from (:func:`extraction_fingerprint`; "" when not known)."""

    fingerprint: str = ""
    stakeholders: list[Stakeholder] = Field(default_factory=list)


def _perspectives_from_v1(old: Any) -> dict[str, Any]:
    """Version 1 had two shapes: the wizard's ``{"fingerprint", "stakeholders"}`` and the
    command line's bare list of stakeholders (no fingerprint: the document is read again,
    from the cache)."""
    if isinstance(old, list):
        return {"fingerprint": "", "stakeholders": old}
    return old


#: The perspectives found per document (key = document name).
PERSPECTIVES: PayloadType[DocumentPerspectives] = PayloadType(
    PERSPECTIVES_ARTEFACT, DocumentPerspectives, version=2,
    migrations={1: _perspectives_from_v1}, label="the stakeholders found in a document")


def stored_perspectives(project: Project, name: str) -> DocumentPerspectives | None:
    """The perspectives kept for document ``name`` (None when there are none or they cannot be
    read: then the document is read again, from the cache)."""
    try:
        return get_payload(project, PERSPECTIVES, name)
    except PayloadUnreadable:
        return None


def add_document(project: Project, choices: MajEvalChoices, path: str | Path, *,
                 progress: Progress | None = None, cancel: CancelToken | None = None
                 ) -> Document:
    """Read a PDF/.txt/.md file (blocking: run it in an executor), keep a copy of the file and
    the extracted pages in the project, and list it in ``choices`` (saved). A document of the same
    name is replaced. Raises :class:`core.documents.DocumentError` with a plain message."""
    path = Path(path)
    doc = read_document(path, max_pages=choices.max_pages,
                        drop_references=not choices.keep_references, progress=progress,
                        cancel=cancel)
    with project.transaction():
        store_input(project, DOCUMENT_INPUT_KIND, path)
        project.put_artefact(DOCUMENT_ARTEFACT, doc.name, doc.to_dict(), origin="imported")
        if doc.name not in choices.documents:
            choices.documents.append(doc.name)
        choices.extracted.pop(doc.name, None)
        save_choices(project, choices)
    return doc


def corrected_pages(project: Project) -> list[str]:
    """Each correction of a document's text in the Documents page's words and numbers
    ("report.pdf page 4 by Ann", "notes.md section 3 by Ann"), oldest first."""
    out = []
    for e in project.list_edits(kind=DOCUMENT_ARTEFACT):
        if not e.field.startswith("pages."):
            continue
        page = e.new if isinstance(e.new, dict) else e.old if isinstance(e.old, dict) else {}
        number = page.get("number")
        artefact = project.get_artefact(DOCUMENT_ARTEFACT, e.key)
        kind = artefact.payload.get("kind") if artefact is not None else None
        unit = "page" if kind == "pdf" or (kind is None and e.key.lower().endswith(".pdf")) \
            else "section"
        out.append(f"{e.key} {unit} {number if number is not None else '?'} by {e.who}")
    return out


def remove_document(project: Project, choices: MajEvalChoices, name: str, who: str) -> None:
    """Take a document out of the choices (its artefact is deleted with who and when)."""
    with project.transaction():
        if project.get_artefact(DOCUMENT_ARTEFACT, name) is not None:
            project.delete_artefact((DOCUMENT_ARTEFACT, name), who or "unknown")
        if name in choices.documents:
            choices.documents.remove(name)
        choices.extracted.pop(name, None)
        save_choices(project, choices)


def load_documents(project: Project, choices: MajEvalChoices) -> list[Document]:
    """The chosen documents (with the people's corrections) in the order added."""
    out = []
    for name in choices.documents:
        artefact = project.get_artefact(DOCUMENT_ARTEFACT, name)
        if artefact is None:
            continue
        try:
            out.append(Document.from_dict(artefact.payload))
        except ValidationError:
            continue
    return out


def edit_page(project: Project, name: str, number: int, text: str, who: str) -> Document:
    """A person corrected the text of page ``number`` of document ``name``: stored with who and
    when (``project.record_edit``); returns the updated document."""
    artefact = project.get_artefact(DOCUMENT_ARTEFACT, name)
    if artefact is None:
        raise KeyError(f"The document {name} is not in the project.")
    doc = Document.from_dict(artefact.payload)
    index = next(i for i, p in enumerate(doc.pages) if p.number == number)
    if doc.pages[index].text == text:
        return doc
    updated = doc.with_page_text(number, text)
    project.record_edit((DOCUMENT_ARTEFACT, name), f"pages.{index}",
                        artefact.payload["pages"][index],
                        updated.pages[index].model_dump(mode="json"), who or "unknown")
    return updated


def revert_page(project: Project, name: str, number: int, who: str) -> Document | None:
    """Put page ``number`` of document ``name`` back as it was extracted from the file (recorded
    as an edit too, so it can be followed); None when it was never corrected."""
    artefact = project.get_artefact(DOCUMENT_ARTEFACT, name)
    if artefact is None:
        raise KeyError(f"The document {name} is not in the project.")
    doc = Document.from_dict(artefact.payload)
    index = next(i for i, p in enumerate(doc.pages) if p.number == number)
    edits = page_edits(project, name, index)
    if not edits or not isinstance(edits[0].old, dict):
        return None
    original = dict(edits[0].old)
    if doc.pages[index].text == original.get("text") and not doc.pages[index].edited:
        return doc
    project.record_edit((DOCUMENT_ARTEFACT, name), f"pages.{index}",
                        artefact.payload["pages"][index], original, who or "unknown")
    return stored_document(project, name)


def has_document(project: Project, name: str) -> bool:
    """Whether document ``name`` is kept in the project."""
    return project.get_artefact(DOCUMENT_ARTEFACT, name) is not None


def stored_document(project: Project, name: str) -> Document:
    """Document ``name`` as kept in the project (with the people's corrections). Raises
    ``KeyError`` when it is not there."""
    artefact = project.get_artefact(DOCUMENT_ARTEFACT, name)
    if artefact is None:
        raise KeyError(f"The document {name} is not in the project.")
    return Document.from_dict(artefact.payload)


def page_edits(project: Project, name: str, index: int) -> list[Edit]:
    """The people's corrections of the ``index``-th page (0 = the first) of document ``name``,
    oldest first (who and when)."""
    return [e for e in project.list_edits((DOCUMENT_ARTEFACT, name))
            if e.field == f"pages.{index}"]


def extraction_fingerprint(task: str, doc: Document, model: RunModel = None) -> str:
    """What stage 1's result for a document depends on: the task, the pages' text and the model
    that reads them (``model``: a profile, or the recorded model of earlier personas; None when
    not known). Another model, or the same one with other settings, reads the documents again
    (issue 28: a capable model chosen after the built-in one only regrouped the built-in
    model's stakeholders)."""
    parts: list[object] = [task.strip(), doc.name, [(p.number, p.text) for p in doc.pages]]
    if model is not None:
        fields = model_fields(model)
        if fields["model"]:
            parts.append(fields)
    return fingerprint(parts)


def evidence_span(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` is in a page's ``text`` (character start, end) for highlighting: its
    sentence when the quote stands in the text word for word (only the quote itself when that
    "sentence" is a long block, as a table's cells read from a PDF are); else the sentence, or
    two neighbouring sentences, sharing the most of the quote's words (at least half of them)
    and not much longer than the quote; None when there is none."""
    words = re.findall(r"\w+", quote.casefold())
    if not words or not text:
        return None
    longest = 2 * len(words) + 8  # a highlight longer than this is no longer the quote's
    sentences = [(m.start(), m.end()) for m in re.finditer(r"[^.!?\n]+[.!?]*", text)]
    tokens = [(m.start(), m.end(), m.group().casefold()) for m in re.finditer(r"\w+", text)]
    for i in range(len(tokens) - len(words) + 1):
        if all(tokens[i + k][2] == w for k, w in enumerate(words)):
            start, stop = tokens[i][0], tokens[i + len(words) - 1][1]
            around = next(((a, b) for a, b in sentences if a <= start < b), None)
            if around is not None and around[1] >= stop and \
                    len(re.findall(r"\w+", text[around[0]:around[1]])) <= longest:
                start, stop = around
            while start < stop and text[start].isspace():
                start += 1
            return start, stop
    wanted = set(words)
    best: tuple[float, int, int] | None = None
    for i, (start, end) in enumerate(sentences):
        for j in (i, i + 1):
            if j >= len(sentences):
                continue
            stop = sentences[j][1]
            span_words = re.findall(r"\w+", text[start:stop].casefold())
            if len(span_words) > longest:
                continue
            found = set(span_words)
            share = len(wanted & found) / len(wanted)
            extra = len(found - wanted) / max(1, len(found))
            score = share - 0.1 * extra
            if best is None or score > best[0] + 1e-9:
                best = (score, start, stop)
    if best is None or best[0] < 0.5:
        return None
    start, stop = best[1], best[2]
    while start < stop and text[start].isspace():
        start += 1
    return start, stop
