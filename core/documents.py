"""Documents (PDF, .txt, .md) to pages of text, chunks for the LLM, and evidence back to a page.

MAJ-Eval stage 1 reads research papers about stakeholders. This module turns such a file into a
:class:`Document`: a list of :class:`Page` s of clean text that the wizard shows and the user may
correct, with plain-language ``warnings`` (empty pages, the dropped reference list, a guessed text
encoding). :func:`chunk_pages` cuts the pages at paragraph boundaries into :class:`Chunk` s that
fit a model's context window, and :func:`find_evidence` finds the page a quoted sentence came
from, so every persona can be traced back to a page of a document.

Reading is CPU work: callers run :func:`load_document` in an executor (``loop.run_in_executor``),
never on the GUI thread. It reports progress per page, checks ``cancel`` between pages, and gives
up with a :class:`DocumentError` once the whole document has taken longer than ``time_budget_s``
(pypdf cannot be interrupted inside one page, so a single pathological page can still take a
while; the budget stops the next one from starting).

How the text is cleaned (the rules, so a reader can predict the result):

* PDF text comes from pypdf's ``extract_text()`` in its default "plain" mode, which follows the
  order of the page's content stream. "layout" mode was tried on the real papers in
  ``shared/data/persona-source-docs`` and rejected: it lays out text by position, so a sidebar
  next to the abstract (and any two-column paper) gets its columns interleaved line by line, it
  pads lines with long runs of spaces, and it lost word spaces ("CeciliaKa YukChan"). Plain mode
  keeps columns apart; what it loses is paragraph breaks, which we rebuild: a line much shorter
  than the document's usual line (< 75 % of the 90th-percentile length) ends a paragraph when it
  ends a sentence or the next line starts with a capital or digit; a bullet starts one.
* A hyphen at the end of a line is removed when the next line starts with a lower-case letter
  ("opera-/tional" -> "operational"), unless the hyphenated form is used elsewhere in the document
  and the joined form is not ("pre-/trained" stays "pre-trained"). Before a capital or a digit the
  hyphen is kept ("GPT-/4" -> "GPT-4").
* A line repeated at the top or bottom (first or last 3 lines) of at least 40 % of the pages, digits
  ignored, is a running header or footer ("Page 3 of 25", the journal line) and is removed from
  those places. A warning says so.
* The reference list is dropped: the last line that is only a heading "References",
  "Bibliography", "Works cited", "Literature cited" (or "Reference list"; case-insensitive;
  numbered or Markdown "#" headings too) lying after the first third of the text starts it; it
  ends at the document's end or at the first later heading starting with "Appendix"/"Appendices",
  which is kept. A warning names the page. ``drop_references=False`` keeps everything.
* Text files (.txt, .md) are decoded as UTF-8 (with or without BOM), otherwise with the encoding
  charset-normalizer finds (a tie between Windows code pages goes to Windows-1252), with a warning.
  Their "pages" are the form-feed separated parts when the file has form feeds; otherwise blocks of
  about ``TEXT_PAGE_CHARS`` characters made of whole paragraphs (blank-line separated; a longer
  paragraph is split at sentence ends), so an evidence reference "page 4" points to a few
  paragraphs a person can find. In Markdown, front matter and HTML comments are removed and
  docling's ligature glyph names ("arti /uniFB01 cial") are repaired.

Page text is paragraphs separated by one blank line ("\\n\\n").
"""

from __future__ import annotations

import bisect
import difflib
import html
import itertools
import logging
import math
import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from core.runs import CancelToken, Progress

__all__ = [
    "DEFAULT_MAX_PAGES",
    "SUPPORTED_EXTENSIONS",
    "TEXT_PAGE_CHARS",
    "Chunk",
    "Document",
    "DocumentError",
    "Page",
    "chunk_pages",
    "estimate_tokens",
    "find_evidence",
    "load_document",
    "sentences_of",
]

#: Documents with more pages than this are refused unless the caller raises ``max_pages``.
DEFAULT_MAX_PAGES = 200
#: A page with fewer non-space characters than this has no usable text layer (scanned image).
MIN_PAGE_CHARS = 20
#: Size of a "page" of a text file without form feeds (whole paragraphs, about this many chars).
TEXT_PAGE_CHARS = 3000
#: Conservative characters per token for :func:`estimate_tokens` (English averages about 4;
#: 3 leaves a 25 % margin for numbers, names, other languages and tokenizer differences).
CHARS_PER_TOKEN = 3.0
#: Default time budget of one :func:`load_document` call, checked between pages.
DEFAULT_TIME_BUDGET_S = 120.0

DocumentKind = Literal["pdf", "text", "markdown"]

SUPPORTED_EXTENSIONS: dict[str, DocumentKind] = {
    ".pdf": "pdf", ".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown"}


# --------------------------------------------------------------------------------------------
# Data types
# --------------------------------------------------------------------------------------------


class Page(BaseModel):
    """One page as the reader sees it: ``number`` is 1-based (page 1 is the first page of the
    file, also when earlier pages were dropped); ``edited`` is True once a person changed it."""

    number: int = Field(ge=1)
    text: str
    edited: bool = False


class Document(BaseModel):
    """A read document. ``pages`` keeps the original page numbers; pages entirely inside the
    dropped reference list are left out (``references_from_page`` says where it began)."""

    path: str
    name: str
    kind: DocumentKind
    pages: list[Page]
    warnings: list[str] = Field(default_factory=list)
    references_from_page: int | None = None

    @property
    def unit(self) -> str:
        """What a part is called on screen and in messages: "page" in a PDF, "section" in a
        text or Markdown file (split at headings and blank lines)."""
        return "page" if self.kind == "pdf" else "section"

    def page(self, number: int) -> Page:
        """The page with this (1-based) number; KeyError if it is not in the document."""
        for page in self.pages:
            if page.number == number:
                return page
        raise KeyError(f"{self.name} has no page {number}")

    def with_page_text(self, number: int, text: str) -> Document:
        """A copy with page ``number`` replaced by a person's corrected ``text`` (marked edited).
        Who edited and when is recorded by the project file, not here."""
        self.page(number)  # KeyError for an unknown page
        pages = [
            Page(number=p.number, text=text, edited=True) if p.number == number else p
            for p in self.pages
        ]
        return self.model_copy(update={"pages": pages})

    @property
    def text(self) -> str:
        """All pages' text, separated by blank lines."""
        return "\n\n".join(p.text for p in self.pages if p.text)

    def to_dict(self) -> dict:
        """JSON-ready dict for the project file."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict) -> Document:
        return cls.model_validate(data)


class Chunk(BaseModel):
    """A piece of a document that fits the model's context: whole paragraphs (``text``, separated
    by blank lines), the page numbers it covers, and its 0-based position ``index``."""

    text: str
    pages: list[int]
    index: int


class DocumentError(Exception):
    """A document that cannot be read, with a message that names the file (and page) and says
    what to do. ``path`` and ``page`` are there for the UI."""

    def __init__(self, message: str, *, path: str | Path | None = None, page: int | None = None):
        super().__init__(message)
        self.path = str(path) if path is not None else None
        self.page = page


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def load_document(
    path: str | Path,
    *,
    max_pages: int | None = DEFAULT_MAX_PAGES,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    drop_references: bool = True,
    time_budget_s: float = DEFAULT_TIME_BUDGET_S,
) -> Document:
    """Read a PDF, .txt or .md file into pages of clean text.

    Raises :class:`DocumentError` (file missing, unsupported type, not really a PDF, damaged,
    password-protected, no text layer, more than ``max_pages`` pages (None = no limit), slower than
    ``time_budget_s``) and :class:`core.runs.Cancelled`. Blocking: run it in an executor.
    """
    path = Path(path)
    name = path.name
    if not path.exists():
        raise DocumentError(
            f"“{name}” was not found at {path}. It may have been moved, renamed or deleted; "
            "choose the file again.", path=path)
    if path.is_dir():
        raise DocumentError(f"“{name}” is a folder, not a document. Choose a PDF, .txt or .md "
                            "file inside it.", path=path)
    kind = SUPPORTED_EXTENSIONS.get(path.suffix.lower())
    if kind is None:
        raise DocumentError(_unsupported_message(path), path=path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DocumentError(
            f"“{name}” could not be opened ({exc.strerror or exc}). Check that you may read it "
            "and that it is not open in a program that locks it, then try again.",
            path=path) from exc
    if not data.strip():
        raise DocumentError(f"“{name}” is empty. Choose the file that contains the text.",
                            path=path)
    progress = progress or Progress()
    cancel = cancel or CancelToken()
    if kind == "pdf":
        raw_pages, warnings = _read_pdf(path, data, max_pages, progress, cancel, time_budget_s)
        lines_per_page = [_pdf_lines(text) for text in raw_pages]
        lines_per_page, header_warning = _drop_running_lines(lines_per_page)
        warnings += header_warning
    else:
        text, warnings = _decode_text(path, data)
        if kind == "markdown":
            text = _clean_markdown(text)
        text = _fix_glyph_names(_normalise_chars(text))
        raw_pages = _split_text_pages(text)
        _check_page_limit(path, len(raw_pages), max_pages, unit="sections")
        lines_per_page = [t.split("\n") for t in raw_pages]
        progress.start(f"Reading {name}", total=len(raw_pages))
        progress.advance(len(raw_pages), detail=f"{len(raw_pages)} sections")

    numbers = list(range(1, len(lines_per_page) + 1))
    references_from = None
    if drop_references:
        lines_per_page, numbers, references_from, ref_warning = _drop_references(
            lines_per_page, numbers, kind)
        warnings += ref_warning

    if kind == "pdf":
        width = _typical_width(lines_per_page)
        vocabulary = _vocabulary(lines_per_page)
        texts = ["\n\n".join(_pdf_paragraphs(lines, width, vocabulary))
                 for lines in lines_per_page]
    else:
        texts = [_tidy_text_page("\n".join(lines)) for lines in lines_per_page]

    pages = [Page(number=n, text=t) for n, t in zip(numbers, texts)]
    return Document(path=str(path), name=name, kind=kind, pages=pages, warnings=warnings,
                    references_from_page=references_from)


def _unsupported_message(path: Path) -> str:
    suffix = path.suffix.lower() or "(no extension)"
    advice = "Save it as PDF or plain text (.txt) and import that file."
    if suffix in {".doc", ".docx", ".odt", ".rtf", ".pages"}:
        advice = "Open it in your word processor, use Save as / Export to PDF, and import the PDF."
    elif suffix in {".html", ".htm"}:
        advice = "Print the web page to PDF from your browser, or copy its text into a .txt file."
    elif suffix in {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".gif", ".bmp"}:
        advice = ("It is a picture: run text recognition (OCR) on it, or type or paste the text "
                  "into a .txt file.")
    return (f"“{path.name}” is a {suffix} file, which EvalDesk cannot read. EvalDesk reads PDF, "
            f".txt and .md files. {advice}")


def _check_page_limit(path: Path, count: int, max_pages: int | None, unit: str = "pages") -> None:
    if max_pages is not None and count > max_pages:
        raise DocumentError(
            f"“{path.name}” has {count} {unit}; the limit is {max_pages}. Reading and "
            "analysing a document this long takes a long time and many model calls. If you "
            "need all of it, raise “Maximum pages per document” in the wizard (max_pages when "
            "calling load_document) and import it again; otherwise import only the chapters "
            "about your stakeholders (save them as a separate PDF).", path=path)


@contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf logs font warnings ("fontTools is required ...") that mean nothing to our users."""
    logger = logging.getLogger("pypdf")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)


def _read_pdf(path: Path, data: bytes, max_pages: int | None, progress: Progress,
              cancel: CancelToken, time_budget_s: float) -> tuple[list[str], list[str]]:
    """Open, decrypt, check the page count, then extract the raw text of every page."""
    import io

    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError

    name = path.name
    head = data[:1024]
    if b"%PDF-" not in head:
        raise DocumentError(_not_a_pdf_message(name, head), path=path)
    damaged = (f"“{name}” is damaged or incomplete and could not be read as a PDF. If it came "
               "from a download or an e-mail, fetch it again; if it opens in your PDF reader, "
               "print or save it as a new PDF and import that.")
    started = time.monotonic()
    with _quiet_pypdf():
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
        except Exception as exc:  # pypdf raises many types on broken files
            raise DocumentError(damaged, path=path) from exc
        if reader.is_encrypted:
            _decrypt(reader, path)
        try:
            count = len(reader.pages)
        except FileNotDecryptedError as exc:
            raise DocumentError(_password_message(name), path=path) from exc
        except DependencyError as exc:
            raise DocumentError(_aes_message(name), path=path) from exc
        except Exception as exc:
            raise DocumentError(damaged, path=path) from exc
        if count == 0:
            raise DocumentError(
                f"“{name}” contains no pages. If it opens in your PDF reader, print or save it "
                "as a new PDF and import that.", path=path)
        _check_page_limit(path, count, max_pages)

        progress.start(f"Reading {name}", total=count)
        texts: list[str] = []
        failed: list[int] = []
        for index in range(count):
            cancel.raise_if_cancelled()
            elapsed = time.monotonic() - started
            if elapsed > time_budget_s:
                raise DocumentError(
                    f"Reading “{name}” took longer than {time_budget_s:.0f} seconds and was "
                    f"stopped at page {index + 1} of {count}. The PDF may be damaged or unusually "
                    "complex. Print or save it as a new PDF and import that, or paste its text "
                    "into a .txt file.", path=path, page=index + 1)
            try:
                text = reader.pages[index].extract_text() or ""
            except DependencyError as exc:
                raise DocumentError(_aes_message(name), path=path) from exc
            except Exception:  # noqa: BLE001 - one damaged page must not stop the others
                text = ""
                failed.append(index + 1)
            texts.append(text)
            progress.advance(1, detail=f"page {index + 1} of {count}")

    warnings: list[str] = []
    if failed and len(failed) == count:
        raise DocumentError(damaged, path=path)
    if failed:
        warnings.append(
            f"{_pages_phrase(failed).capitalize()} of “{name}” could not be read (damaged or "
            f"oversized content) and {'is' if len(failed) == 1 else 'are'} empty. Paste "
            f"{'its' if len(failed) == 1 else 'their'} text in the page editor if "
            f"{'it matters' if len(failed) == 1 else 'they matter'}.")
    empty = [i + 1 for i, t in enumerate(texts)
             if len(re.sub(r"\s", "", t)) < MIN_PAGE_CHARS and i + 1 not in failed]
    if len(empty) + len(failed) == count:
        raise DocumentError(
            f"“{name}” has no text layer: "
            f"{'its one page has' if count == 1 else 'none of its pages has'} readable text "
            "(it is probably a scanned image). Use your PDF reader's “Recognise text” (OCR) "
            "tool, save the result and import it again, or paste the text into a .txt file.",
            path=path)
    if empty:
        warnings.append(
            f"{_pages_phrase(empty).capitalize()} of “{name}” "
            f"{'has' if len(empty) == 1 else 'have'} no text (scanned images, "
            "figures or blank pages). If they contain text you need, run your PDF reader's "
            "“Recognise text” (OCR) tool and import again, or type the text in the page editor.")
    return texts, warnings


def _decrypt(reader, path: Path) -> None:
    from pypdf.errors import DependencyError

    try:
        ok = reader.decrypt("")
    except DependencyError as exc:
        raise DocumentError(_aes_message(path.name), path=path) from exc
    except Exception as exc:
        raise DocumentError(_password_message(path.name), path=path) from exc
    if not ok:
        raise DocumentError(_password_message(path.name), path=path)


def _password_message(name: str) -> str:
    return (f"“{name}” is protected with a password. Remove the password: open it in your PDF "
            "reader with the password, print or save it as a new PDF (without a password), and "
            "import the new file.")


def _aes_message(name: str) -> str:
    return (f"“{name}” is encrypted (AES) and this installation cannot decrypt it (the "
            "“cryptography” package is missing). Open it in your PDF reader, print or save it as "
            "a new PDF, and import the new file.")


def _not_a_pdf_message(name: str, head: bytes) -> str:
    what = "It is not a PDF file"
    if head.startswith(b"PK"):
        what = "It is a ZIP-based file (perhaps a Word .docx renamed to .pdf), not a PDF"
    elif head.startswith(b"\xd0\xcf\x11\xe0"):
        what = "It is an old Microsoft Office file (perhaps a Word .doc), not a PDF"
    elif head.lstrip().lower().startswith((b"<!doctype html", b"<html")):
        what = "It is a web page (HTML), not a PDF; the download may have failed"
    elif head.startswith((b"\x89PNG", b"\xff\xd8\xff")):
        what = "It is a picture, not a PDF"
    return (f"“{name}” is named .pdf but its content is not a PDF. {what}. Open it in the program "
            "that made it, save or print it as PDF, and import that file.")


def _pages_phrase(numbers: Sequence[int]) -> str:
    """[1, 2, 3, 7] -> 'pages 1–3, 7'; [4] -> 'page 4'."""
    numbers = sorted(set(numbers))
    parts: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}–{prev}")
        if n is not None:
            start = prev = n
    word = "page" if len(numbers) == 1 else "pages"
    return f"{word} {', '.join(parts)}"


# --------------------------------------------------------------------------------------------
# Text files
# --------------------------------------------------------------------------------------------


def _decode_text(path: Path, data: bytes) -> tuple[str, list[str]]:
    name = path.name
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), []
        except UnicodeDecodeError:
            pass
    if b"\x00" in data[:4096] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentError(
            f"“{name}” does not look like a text file (it contains binary data). If it is a "
            "Word or PDF file with the wrong extension, rename it or save it as PDF or .txt.",
            path=path)
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError:
        pass
    import charset_normalizer

    matches = list(charset_normalizer.from_bytes(data))
    if not matches:
        raise DocumentError(
            f"EvalDesk could not tell which text encoding “{name}” uses. Open it in a text "
            "editor, save it as UTF-8, and import it again.", path=path)
    best = matches[0]
    for match in matches:  # cp1250 and cp1252 often tie: prefer the common Western one
        if (match.encoding == "cp1252" and match.chaos <= best.chaos + 0.01
                and match.coherence >= best.coherence - 0.05):
            best = match
            break
    label = {"cp1252": "Windows-1252 (Western European)"}.get(best.encoding, best.encoding)
    return str(best), [
        (f"“{name}” is not UTF-8; it was read as {label}. If some letters look wrong, open it in "
        "a text editor, save it as UTF-8 and import it again.")]


def _clean_markdown(text: str) -> str:
    text = re.sub(r"\A\ufeff?---\n.*?\n---\n", "", text, flags=re.DOTALL)  # YAML front matter
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    return html.unescape(text)


_LIGATURES = {"FB00": "ff", "FB01": "fi", "FB02": "fl", "FB03": "ffi", "FB04": "ffl",
              "FB05": "st", "FB06": "st"}
_GLYPH_NAME = re.compile(r"(\w*)( ?)/uni(FB0[0-6]) ?(\w*)")
#: Words that are also common prefixes before a ligature ("in /uniFB02 uenced" -> influenced).
_PREFIX_WORDS = frozenset({"in"})


def _fix_glyph_names(text: str) -> str:
    """Repair ligatures written as glyph names by some converters: 'arti /uniFB01 cial' ->
    'artificial', 'the /uniFB01 ndings' -> 'the findings'. The space after the glyph name is
    always dropped; the one before is kept when the word before it occurs on its own elsewhere
    in the text and the joined word does not."""
    if "/uniFB0" not in text:
        return text
    vocabulary = set(re.findall(r"[^\W\d_]+", _GLYPH_NAME.sub(" ", text).lower()))

    def repl(m: re.Match) -> str:
        before, space, lig, after = m.group(1), m.group(2), _LIGATURES[m.group(3)], m.group(4)
        joined = (before + lig + after).lower()
        separate = (bool(space) and before.lower() in vocabulary
                    and before.lower() not in _PREFIX_WORDS and joined not in vocabulary)
        return f"{before} {lig}{after}" if separate else f"{before}{lig}{after}"

    return _GLYPH_NAME.sub(repl, text)


def _split_text_pages(text: str) -> list[str]:
    """Form-feed pages if there are any; else ~TEXT_PAGE_CHARS blocks of whole paragraphs."""
    if "\f" in text:
        pages = [p.strip("\n") for p in text.split("\f")]
        while pages and not pages[-1].strip():
            pages.pop()
        return pages or [""]
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    pieces: list[str] = []
    for paragraph in paragraphs:
        pieces.extend(_split_long(paragraph.strip("\n"), TEXT_PAGE_CHARS))
    pages = []
    current: list[str] = []
    size = 0
    for piece in pieces:
        if current and size + len(piece) + 2 > TEXT_PAGE_CHARS:
            pages.append("\n\n".join(current))
            current, size = [], 0
        current.append(piece)
        size += len(piece) + 2
    if current:
        pages.append("\n\n".join(current))
    return pages or [""]


def _tidy_text_page(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n")


# --------------------------------------------------------------------------------------------
# Characters, lines, headers, references, paragraphs
# --------------------------------------------------------------------------------------------

_CHAR_MAP = str.maketrans({
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2007": " ", "\u2009": " ", "\u200a": " ",
    "\u202f": " ", "\u2000": " ", "\u2001": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ",
    "\u2008": " ", "\u205f": " ", "\u3000": " ", "\t": " ",
    "\u00ad": None, "\u200b": None, "\u200c": None, "\u200d": None, "\ufeff": None,
    "\u2010": "-", "\u2011": "-",
    "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
    "\ufb05": "st", "\ufb06": "st",
})
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _normalise_chars(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_CHAR_MAP)
    return _CONTROL.sub("", text)


def _pdf_lines(text: str) -> list[str]:
    text = _normalise_chars(text).replace("\f", "\n")
    return [re.sub(r" {2,}", " ", line).strip() for line in text.split("\n")]


def _line_key(line: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", line.lower())).strip()


def _drop_running_lines(pages: list[list[str]], zone: int = 3) -> tuple[list[list[str]], list[str]]:
    """Remove lines repeated at the top/bottom of at least 40 % of the pages (3 minimum)."""
    with_text = [p for p in pages if any(p)]
    if len(with_text) < 3:
        return pages, []

    def zone_indices(lines: list[str]) -> list[int]:
        filled = [i for i, line in enumerate(lines) if line]
        return sorted(set(filled[:zone] + filled[-zone:]))

    counts: Counter[str] = Counter()
    for lines in pages:
        counts.update({_line_key(lines[i]) for i in zone_indices(lines)})
    needed = max(3, math.ceil(len(with_text) * 0.4))  # 0.4: odd/even pages may differ
    repeated = {key for key, n in counts.items() if n >= needed and key}
    if not repeated:
        return pages, []
    removed_example = ""
    result = []
    for lines in pages:
        drop = {i for i in zone_indices(lines) if _line_key(lines[i]) in repeated}
        if drop and not removed_example:
            removed_example = max((lines[i] for i in drop), key=len)
        result.append([line for i, line in enumerate(lines) if i not in drop])
    return result, [
        ("Removed running headers/footers repeated on most pages (for example "
        f"“{removed_example[:80]}”).")]


_REFERENCES_HEADING = re.compile(
    r"^(?:#{1,6}\s*)?[*_]{0,2}\s*(?:(?:\d+(?:\.\d+)*|[IVXLC]+)\.?\s+)?"
    r"(?:references?|reference\s+list|list\s+of\s+references|bibliography|works\s+cited|"
    r"literature\s+cited|references\s+and\s+notes|notes\s+and\s+references)"
    r"\s*[*_]{0,2}\s*:?\s*$",
    re.IGNORECASE)
_APPENDIX_HEADING = re.compile(
    r"^(?:#{1,6}\s*)?[*_]{0,2}\s*(?:appendix|appendices)\b", re.IGNORECASE)


def _drop_references(
    pages: list[list[str]], numbers: list[int], kind: DocumentKind
) -> tuple[list[list[str]], list[int], int | None, list[str]]:
    """Cut the reference list (see the module docstring for the rule)."""
    sizes = [sum(len(line) + 1 for line in lines) for lines in pages]
    total = sum(sizes)
    if total == 0:
        return pages, numbers, None, []
    position = 0
    candidate: tuple[int, int] | None = None
    for p, lines in enumerate(pages):
        offset = position
        for i, line in enumerate(lines):
            if offset >= total / 3 and len(line) < 60 and _REFERENCES_HEADING.match(line.strip()):
                candidate = (p, i)
            offset += len(line) + 1
        position += sizes[p]
    if candidate is None:
        return pages, numbers, None, []
    start_page, start_line = candidate
    appendix: tuple[int, int] | None = None
    for p in range(start_page, len(pages)):
        first = start_line + 1 if p == start_page else 0
        for i in range(first, len(pages[p])):
            line = pages[p][i].strip()
            if len(line) < 100 and _APPENDIX_HEADING.match(line):
                appendix = (p, i)
                break
        if appendix:
            break
    new_pages: list[list[str]] = []
    new_numbers: list[int] = []
    for p, lines in enumerate(pages):
        if p < start_page or (appendix and p > appendix[0]):
            kept = lines
        elif appendix and p == appendix[0]:
            kept = (lines[:start_line] if p == start_page else []) + lines[appendix[1]:]
        elif p == start_page:
            kept = lines[:start_line]
        else:
            kept = []
        if p > start_page and not kept and not (appendix and p >= appendix[0]):
            continue  # a page entirely inside the reference list
        new_pages.append(kept)
        new_numbers.append(numbers[p])
    unit = "page" if kind == "pdf" else "section"
    first_number = numbers[start_page]
    if appendix:
        last = numbers[appendix[0]]
        span = (f"from {unit} {first_number} to {unit} {last} (the appendix after it was kept)"
                if last != first_number else f"on {unit} {first_number} (the appendix after it "
                "was kept)")
    else:
        span = f"from {unit} {first_number} to the end"
    heading = pages[start_page][start_line].strip().lstrip("#*_ ").rstrip("*_ ")
    return new_pages, new_numbers, first_number, [
        (f"Dropped the reference list (heading “{heading}”) {span}. If you need it, tick “Keep "
        "the reference list” and add the document again (command line: --keep-references).")]


def _typical_width(pages: list[list[str]]) -> int:
    lengths = sorted(len(line) for lines in pages for line in lines if len(line) >= 10)
    if not lengths:
        return 80
    return lengths[min(len(lengths) - 1, int(len(lengths) * 0.9))]


def _vocabulary(pages: list[list[str]]) -> set[str]:
    words: set[str] = set()
    for lines in pages:
        for line in lines:
            words.update(re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)*", line.lower()))
    return words


_BULLET = re.compile(r"^[•◦▪▫●○■□‣⁃∙·*–—-]\s")
_HYPHEN_END = re.compile(r"([^\W\d_]+) ?-$")
_WORD_START = re.compile(r"[^\W\d_]+")
_SUSPENDED = frozenset({"and", "or", "to", "und", "oder", "et", "ou", "y", "o"})
#: Line-end hyphens after these stay ("self-/reported" -> "self-reported").
_HYPHEN_PREFIXES = frozenset({"self", "non", "well", "cross", "ill", "half", "ex", "all"})
_TERMINAL = tuple(".!?:;\"”’)]")


def _join_lines(current: str, line: str, vocabulary: set[str]) -> str:
    m = _HYPHEN_END.search(current)
    if not m:
        return f"{current} {line}"
    left = m.group(1)
    stem = current[: m.start()] + left
    right = _WORD_START.match(line)
    if not right or not line[0].islower():
        return f"{stem}-{line}"  # "GPT-" + "4", "Chat-" + "GPT"
    word = right.group(0)
    if word.lower() in _SUSPENDED:
        return f"{stem}- {line}"  # "pen- and paper-based"
    joined, hyphenated = (left + word).lower(), f"{left}-{word}".lower()
    if left.lower() in _HYPHEN_PREFIXES or (
            hyphenated in vocabulary and joined not in vocabulary):
        return f"{stem}-{line}"
    return f"{stem}{line}"


def _starts_upper(line: str | None) -> bool:
    """Starts like a new sentence, heading or list item: capital, digit or bullet."""
    return bool(line) and (line[0].isupper() or line[0].isdigit()  # type: ignore[index]
                           or bool(_BULLET.match(line)))  # type: ignore[arg-type]


def _is_heading(line: str, following: str | None, width: int) -> bool:
    """A short line that starts with a capital, does not end a sentence or a clause, and is
    followed by a line starting with a capital (or nothing)."""
    return (len(line) < 0.75 * width and _starts_upper(line) and not line.endswith(_TERMINAL)
            and not line.endswith((",", "-")) and (not following or _starts_upper(following)))


def _ends_paragraph(line: str, following: str | None, after: str | None, width: int) -> bool:
    if following is None or not following:
        return True
    if _BULLET.match(following):
        return True
    if not line.endswith((",", "-")) and _is_heading(following, after, width):
        return True  # the next line is a heading (also after a full-width last line)
    if _HYPHEN_END.search(line) or len(line) >= 0.75 * width:
        return False
    return line.endswith(_TERMINAL) or _starts_upper(following)


def _pdf_paragraphs(lines: list[str], width: int, vocabulary: set[str]) -> list[str]:
    paragraphs: list[str] = []
    current = ""
    for i, line in enumerate(lines):
        if not line:
            if current:
                paragraphs.append(current)
            current = ""
            continue
        current = _join_lines(current, line, vocabulary) if current else line
        following = lines[i + 1] if i + 1 < len(lines) else None
        after = lines[i + 2] if i + 2 < len(lines) else None
        if _ends_paragraph(line, following, after, width):
            paragraphs.append(current)
            current = ""
    if current:
        paragraphs.append(current)
    return [re.sub(r" {2,}", " ", p).strip() for p in paragraphs if p.strip()]


# --------------------------------------------------------------------------------------------
# Chunking
# --------------------------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """A conservative token count: ``ceil(len(text) / CHARS_PER_TOKEN)`` (3 characters per token,
    where English text averages about 4), so a chunk sized with it fits real tokenizers."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’)\]]*\s+")


def _split_long(text: str, max_chars: int) -> list[str]:
    """Split one paragraph longer than ``max_chars`` at line breaks, then sentence ends, then
    spaces, then anywhere; pieces are packed back together up to ``max_chars``."""
    if len(text) <= max_chars:
        return [text]
    for splitter, joiner in ((lambda t: t.split("\n"), "\n"), (_sentences, " "), (_words, " ")):
        units = [u for u in splitter(text) if u.strip()]
        if len(units) > 1:
            break
    else:
        return [text[i:i + max_chars] for i in range(0, len(text), max_chars)]
    pieces: list[str] = []
    current = ""
    for unit in units:
        if len(unit) > max_chars:
            if current:
                pieces.append(current)
                current = ""
            pieces.extend(_split_long(unit, max_chars))
            continue
        candidate = f"{current}{joiner}{unit}" if current else unit
        if len(candidate) > max_chars:
            pieces.append(current)
            current = unit
        else:
            current = candidate
    if current:
        pieces.append(current)
    return pieces


def _sentences(text: str) -> list[str]:
    parts, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        parts.append(text[start:m.start() + len(m.group(0).rstrip())].strip())
        start = m.end()
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def sentences_of(text: str, *, min_words: int = 3) -> list[str]:
    """The sentences of ``text`` as they stand in it (spacing tidied), one per line break or
    sentence end, without repeats; pieces of fewer than ``min_words`` words (headings, page
    numbers) are left out. What a quote of the text may be, word for word."""
    found: list[str] = []
    seen: set[str] = set()
    for line in text.split("\n"):
        for sentence in _sentences(" ".join(line.split())):
            if len(sentence.split()) >= min_words and sentence not in seen:
                seen.add(sentence)
                found.append(sentence)
    return found


def _words(text: str) -> list[str]:
    return text.split()


def chunk_pages(
    pages: Sequence[Page], *, max_tokens: int, overlap_paragraphs: int = 0
) -> list[Chunk]:
    """Cut pages into chunks of whole paragraphs that each fit ``max_tokens`` (by
    :func:`estimate_tokens`). A paragraph larger than the budget is split at sentence ends (then
    at spaces, then anywhere). ``overlap_paragraphs`` repeats that many trailing paragraphs of a
    chunk at the start of the next, when they fit. ``max_tokens`` is the room left for the
    document in the prompt: the caller subtracts the prompt and the expected answer from the
    model's context window."""
    if max_tokens < 20:
        raise ValueError(f"max_tokens must be at least 20 (got {max_tokens})")
    if overlap_paragraphs < 0:
        raise ValueError("overlap_paragraphs must be 0 or more")
    max_chars = int(max_tokens * CHARS_PER_TOKEN)
    units: list[tuple[str, int]] = []  # (paragraph or piece, page number)
    for page in pages:
        for paragraph in re.split(r"\n\s*\n", page.text):
            paragraph = paragraph.strip()
            if paragraph:
                units.extend((piece, page.number) for piece in _split_long(paragraph, max_chars))

    chunks: list[Chunk] = []
    current: list[tuple[str, int]] = []

    def size(items: list[tuple[str, int]]) -> int:
        return sum(len(t) for t, _ in items) + 2 * max(0, len(items) - 1)

    def emit() -> None:
        text = "\n\n".join(t for t, _ in current)
        chunks.append(Chunk(text=text, pages=sorted({n for _, n in current}), index=len(chunks)))

    fresh = 0  # units in `current` that are not overlap from the previous chunk
    for unit in units:
        if current and size(current + [unit]) > max_chars:
            if fresh:
                emit()
            overlap = current[-overlap_paragraphs:] if overlap_paragraphs and fresh else []
            while overlap and size(overlap + [unit]) > max_chars:
                overlap = overlap[1:]
            current = list(overlap)
            fresh = 0
        current.append(unit)
        fresh += 1
    if current and fresh:
        emit()
    return chunks


# --------------------------------------------------------------------------------------------
# Evidence
# --------------------------------------------------------------------------------------------

_QUOTE_MAP = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "–": "-",
                            "—": "-"})


def _evidence_words(text: str) -> list[str]:
    """Lower-case words with hyphenation and punctuation removed ('writ- ten' -> 'written')."""
    text = _normalise_chars(text).translate(_QUOTE_MAP).lower()
    text = re.sub(r"(\w) ?-\s+(\w)", r"\1\2", text)  # line-break hyphen left in the text
    text = re.sub(r"(\w)-(\w)", r"\1\2", text)
    return re.findall(r"\w+", text)


def find_evidence(document: Document, quote: str, *, min_score: float = 0.75,
                  pages: Sequence[int] | None = None) -> tuple[int, float] | None:
    """The page a quoted sentence comes from, and how well it matches (1.0 = word for word).

    Case, whitespace, punctuation and hyphenation are ignored. If the quote is not found word for
    word, the best window of a page is scored as the share of the quote's words it contains in
    order (difflib), so a lightly paraphrased quote still finds its page; below ``min_score`` (or
    for an empty quote) the answer is None. A quote that runs over a page break belongs to the
    page where it starts.

    ``pages``: the pages the quote was read from (the part of the document a model was given).
    They are searched first, so words that also stand on an earlier page (a table cell on page
    5 whose words are in a sentence of page 2) are placed where they were read; the rest of the
    document only when they are not found there."""
    if pages:
        wanted = set(pages)
        part = document.model_copy(update={
            "pages": [p for p in document.pages if p.number in wanted]})
        if part.pages and len(part.pages) < len(document.pages):
            found = find_evidence(part, quote, min_score=min_score)
            if found is not None:
                return found
    target = _evidence_words(quote)
    if not target or not document.pages:
        return None
    needle = " " + " ".join(target) + " "
    page_words = [(p.number, _evidence_words(p.text)) for p in document.pages]

    # Word for word, inside a page or across a page break.
    for k, (number, words) in enumerate(page_words):
        text = " " + " ".join(words) + " "
        if needle in text:
            return number, 1.0
        if k + 1 < len(page_words):
            joined = text + " ".join(page_words[k + 1][1]) + " "
            at = joined.find(needle)
            if at != -1 and at < len(text) - 1:  # starts on this page
                return number, 1.0

    if len(target) < 4:
        return None
    # Fuzzy: anchor windows on shared word pairs, score each window with difflib.
    pairs = {(a, b): i for i, (a, b) in enumerate(itertools.pairwise(target))}
    slack = len(target) // 4 + 2
    best: tuple[float, int] | None = None
    for k, (number, words) in enumerate(page_words):
        if k + 1 < len(page_words):
            words = words + page_words[k + 1][1][: len(target)]
        own = len(page_words[k][1])
        starts: set[int] = set()
        for j in range(len(words) - 1):
            i = pairs.get((words[j], words[j + 1]))
            if i is not None and j - i < own:
                starts.add(max(0, j - i))
        if not starts:
            continue
        checked: list[int] = []
        for start in sorted(starts):
            position = bisect.bisect_left(checked, start - 2)
            if position < len(checked) and abs(checked[position] - start) <= 2:
                continue
            bisect.insort(checked, start)
            first = max(0, start - slack)
            window = words[first: start + len(target) + slack]
            matcher = difflib.SequenceMatcher(None, target, window, autojunk=False)
            blocks = [block for block in matcher.get_matching_blocks() if block.size]
            if not blocks or first + blocks[0].b >= own:
                continue  # the match starts on the next page: it is scored there
            matched = sum(block.size for block in blocks)
            score = matched / len(target)
            if best is None or score > best[0] + 1e-9:
                best = (score, number)
    if best is None or best[0] < min_score:
        return None
    return best[1], round(best[0], 3)
