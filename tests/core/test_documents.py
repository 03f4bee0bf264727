"""core.documents: PDF/text to pages, reference list, errors, chunking, evidence lookup."""

from __future__ import annotations

import itertools
import re

import pytest

from core import documents
from core.documents import (
    Chunk,
    Document,
    DocumentError,
    Page,
    chunk_pages,
    estimate_tokens,
    find_evidence,
    load_document,
)
from core.runs import Cancelled, CancelToken, Progress
from tests.core.pdf_factory import pdf_bytes, write_pdf

PERSONA_DOCS = "persona-source-docs"
CHAN = "Chan2023_AI_policy_education_framework_IJETHE.pdf"
CHAN_HU = "ChanHu2023_students_voices_generative_AI_IJETHE.pdf"
SCHNEIDER = "Schneider2025_patient_perspectives_AI-CDSS_DigitalHealth.md"

FULL = "and the sentence keeps running over several more words to fill a whole printed line"


def paragraph(tag: str) -> list[str]:
    """Three printed lines: two full ones and a short last one ending the paragraph."""
    return [
        f"Paragraph {tag} starts here {FULL}"[:86].rstrip(),
        f"while teachers and students discuss what generative AI means {FULL}"[:86].rstrip(),
        f"for their courses ({tag}).",
    ]


def body_page(*tags: str) -> list[str]:
    lines: list[str] = []
    for tag in tags:
        lines += paragraph(tag)
    return lines


# --------------------------------------------------------------------------------------------
# PDFs
# --------------------------------------------------------------------------------------------


def test_pdf_pages_paragraphs_headers_and_reference_list(tmp_path):
    pages = [
        ["Introduction"] + body_page("A1", "A2", "A3"),
        body_page("B1", "B2", "B3"),
        body_page("C1", "C2") + [
            "References",
            "Smith, J. (2020). A study of things. Journal of Studies, 1(2), 3-4.",
            "Jones, K. (2021). Another study. Journal of Studies, 2(1), 5-6.",
        ],
        ["Zhang, L. (2022). A third study of things. Journal of Studies, 3(1), 7-8."] * 5,
    ]
    path = write_pdf(tmp_path / "paper.pdf", pages, header="Journal of Tests 12:3 Page {n} of {total}")

    doc = load_document(path)

    assert doc.kind == "pdf" and doc.name == "paper.pdf"
    assert [p.number for p in doc.pages] == [1, 2, 3]  # page 4 is all references
    assert doc.references_from_page == 3
    assert any("reference list" in w and "page 3" in w for w in doc.warnings)
    assert any("headers/footers" in w for w in doc.warnings)
    text = doc.text
    assert "Smith, J." not in text and "Zhang" not in text and "References" not in text
    assert "Journal of Tests" not in text
    # Paragraphs are rebuilt from printed lines: one paragraph per three lines, one heading.
    first = doc.pages[0].text.split("\n\n")
    assert first[0] == "Introduction"
    assert len(first) == 4
    assert first[1].startswith("Paragraph A1 starts") and first[1].endswith("(A1).")
    assert "\n" not in first[1]
    assert doc.pages[2].text.split("\n\n")[-1].endswith("(C2).")


def test_appendix_after_the_references_is_kept(tmp_path):
    pages = [
        body_page("A1", "A2", "A3"),
        body_page("B1", "B2") + ["References", "Smith, J. (2020). A study. Journal, 1, 2-3."],
        ["Jones, K. (2021). Another study. Journal, 2, 5-6."] * 3
        + ["Appendix A: Interview guide", "What do you think about AI tutors in your course?"],
    ]
    doc = load_document(write_pdf(tmp_path / "with-appendix.pdf", pages))

    assert "Smith" not in doc.text and "Jones" not in doc.text
    assert "Appendix A: Interview guide" in doc.text
    assert "AI tutors" in doc.page(3).text
    assert any("appendix" in w and "page 2" in w for w in doc.warnings)


def test_reference_list_kept_on_request_and_early_heading_ignored(tmp_path):
    pages = [
        ["References"] + body_page("A1", "A2"),  # a heading in the first third is not a list
        body_page("B1", "B2", "B3"),
        body_page("C1") + ["Bibliography", "Smith, J. (2020). A study. Journal, 1, 2-3."],
    ]
    path = write_pdf(tmp_path / "paper.pdf", pages)

    dropped = load_document(path)
    assert "Smith" not in dropped.text and dropped.references_from_page == 3
    assert dropped.page(1).text.startswith("References")

    kept = load_document(path, drop_references=False)
    assert "Smith, J." in kept.text and kept.references_from_page is None
    assert not any("reference list" in w for w in kept.warnings)


def test_line_break_hyphens(tmp_path):
    lines = [
        "The framework is organised into three dimensions, the pedagogical and the opera-",
        "tional one, and it was tested with GPT-3.5 and with the newer model called GPT-",
        "4 in several classes where students and teachers used tools that were pre-",
        "trained on text. Since pre-trained tools are common, a short closing line here.",
        "Some teachers reported self-",
        "reported use of the tools among students of pen- and paper-based assessment -",
        "and of written work; they found the results very encour -",
        "aging for the next year of teaching in their departments and faculties today.",
    ]
    doc = load_document(write_pdf(tmp_path / "hyphens.pdf", [lines, body_page("X"),
                                                             body_page("Y")]))
    text = doc.page(1).text

    assert "operational one" in text  # line-break hyphen removed
    assert "GPT-4 in" in text  # kept before a digit
    assert "pre-trained on text" in text  # the hyphenated form is used elsewhere
    assert "self-reported use" in text
    assert "encouraging for" in text  # "encour -" as pypdf often gives it
    assert "pen- and paper-based" in text
    assert "\n" not in text.split("\n\n")[0]


def test_encrypted_pdf_with_empty_password_opens(tmp_path):
    path = write_pdf(tmp_path / "locked-open.pdf", [body_page("A"), body_page("B")],
                     user_password="")
    doc = load_document(path)
    assert "Paragraph A starts" in doc.page(1).text


@pytest.mark.parametrize("algorithm", ["AES-128", "RC4-128"])
def test_password_protected_pdf_says_how_to_remove_the_password(tmp_path, algorithm):
    path = write_pdf(tmp_path / "secret.pdf", [body_page("A")], user_password="s3cret",
                     algorithm=algorithm)
    with pytest.raises(DocumentError) as info:
        load_document(path)
    message = str(info.value)
    assert "secret.pdf" in message and "password" in message
    assert "save it as a new PDF" in message


def test_scanned_pdf_without_text_layer(tmp_path):
    path = write_pdf(tmp_path / "scan.pdf", [None, None, None])
    with pytest.raises(DocumentError) as info:
        load_document(path)
    message = str(info.value)
    assert "scan.pdf" in message and "no text layer" in message and "OCR" in message


def test_some_pages_without_text_are_listed_in_a_warning(tmp_path):
    pages = [body_page("A"), None, None, body_page("D"), None, body_page("F")]
    doc = load_document(write_pdf(tmp_path / "mixed.pdf", pages))

    assert [p.number for p in doc.pages] == [1, 2, 3, 4, 5, 6]
    assert doc.page(2).text == "" and "Paragraph D" in doc.page(4).text
    warning = next(w for w in doc.warnings if "no text" in w)
    assert "Pages 2–3, 5" in warning and "mixed.pdf" in warning


def test_a_page_that_fails_to_extract_is_reported_not_fatal(tmp_path, monkeypatch):
    from pypdf import PageObject

    path = write_pdf(tmp_path / "partly.pdf", [body_page("A"), body_page("B"), body_page("C")])
    original = PageObject.extract_text

    def extract(self, *args, **kwargs):
        if "Paragraph B" in original(self, *args, **kwargs):
            raise ValueError("broken content stream")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(PageObject, "extract_text", extract)
    doc = load_document(path)
    assert doc.page(2).text == "" and "Paragraph C" in doc.page(3).text
    assert any("Page 2" in w and "could not be read" in w for w in doc.warnings)


def test_truncated_pdf(tmp_path):
    data = pdf_bytes([body_page("A"), body_page("B"), body_page("C")])
    path = tmp_path / "half.pdf"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DocumentError) as info:
        load_document(path)
    assert "half.pdf" in str(info.value) and "damaged or incomplete" in str(info.value)


def test_random_bytes_named_pdf(tmp_path):
    import random

    path = tmp_path / "noise.pdf"
    path.write_bytes(bytes(random.Random(1).randrange(256) for _ in range(5000)))
    with pytest.raises(DocumentError) as info:
        load_document(path)
    assert "noise.pdf" in str(info.value) and "not a PDF" in str(info.value)


def test_word_file_renamed_to_pdf(tmp_path):
    path = tmp_path / "report.pdf"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    with pytest.raises(DocumentError, match="Word"):
        load_document(path)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("notes.docx", b"PK\x03\x04", "Export to PDF"),
        ("scan.png", b"\x89PNG", "OCR"),
        ("data", b"text", "no extension"),
        ("empty.txt", b"", "is empty"),
        ("empty.pdf", b"   \n", "is empty"),
    ],
)
def test_unsupported_or_empty_files(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DocumentError) as info:
        load_document(path)
    assert expected in str(info.value) and name in str(info.value)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(DocumentError, match="was not found"):
        load_document(tmp_path / "gone.pdf")
    with pytest.raises(DocumentError, match="is a folder"):
        load_document(tmp_path)


def test_page_limit_is_checked_before_any_text_is_extracted(tmp_path, monkeypatch):
    from pypdf import PageObject

    topics = ["trust", "grading", "privacy", "feedback", "careers", "ethics", "access"]
    path = write_pdf(tmp_path / "book.pdf", [[f"Page {n} of the long book is about {topics[n % 7]}."]
                                             for n in range(1, 301)])

    def fail(*args, **kwargs):
        raise AssertionError("text extracted before the page count was checked")

    with monkeypatch.context() as patch:
        patch.setattr(PageObject, "extract_text", fail)
        with pytest.raises(DocumentError) as info:
            load_document(path)
    message = str(info.value)
    assert "book.pdf" in message and "300 pages" in message and "limit is 200" in message
    assert "max_pages" in message and "Maximum pages" in message

    doc = load_document(path, max_pages=300)
    assert len(doc.pages) == 300
    assert doc.page(300).text == "Page 300 of the long book is about access."


def test_progress_per_page_and_cancel_between_pages(tmp_path):
    path = write_pdf(tmp_path / "three.pdf", [body_page("A"), body_page("B"), body_page("C")])
    states = []
    load_document(path, progress=Progress(states.append))
    assert states[0].total == 3 and states[-1].done == 3
    assert states[-1].detail == "page 3 of 3"

    cancel = CancelToken()

    def listener(state):
        if state.done == 1:
            cancel.cancel()

    with pytest.raises(Cancelled):
        load_document(path, progress=Progress(listener), cancel=cancel)


def test_time_budget_stops_between_pages(tmp_path, monkeypatch):
    from types import SimpleNamespace

    path = write_pdf(tmp_path / "slow.pdf", [body_page(t) for t in "ABCD"])
    clock = iter(range(0, 10_000, 50))  # every look at the clock is 50 s later
    monkeypatch.setattr(documents, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    with pytest.raises(DocumentError) as info:
        load_document(path, time_budget_s=120)
    message = str(info.value)
    assert "longer than 120 seconds" in message and "slow.pdf" in message
    assert "stopped at page 3 of 4" in message and info.value.page == 3


# --------------------------------------------------------------------------------------------
# Text files
# --------------------------------------------------------------------------------------------


def test_txt_in_windows_1252(tmp_path):
    text = ("Les élèves ont dit « c’est très utile » – même si l’accès coûte 5 € par mois.\n\n"
            "Second paragraph: naïve façade, œuvre and “quoted” words.\n")
    path = tmp_path / "notes.txt"
    path.write_bytes(text.encode("cp1252"))

    doc = load_document(path)
    assert doc.kind == "text"
    assert doc.text == text.strip()
    assert any("Windows-1252" in w and "notes.txt" in w for w in doc.warnings)


def test_utf8_with_bom_and_form_feed_pages(tmp_path):
    path = tmp_path / "pages.txt"
    path.write_bytes("\ufeffFirst page text.\r\n\fSecond page ünïcode.\n\f\n".encode("utf-8"))
    doc = load_document(path)
    assert [(p.number, p.text) for p in doc.pages] == [
        (1, "First page text."), (2, "Second page ünïcode.")]
    assert doc.warnings == []


def test_long_text_is_cut_into_pages_of_whole_paragraphs(tmp_path):
    paragraphs = [f"Paragraph {i}. " + "Students weigh benefits and risks. " * 12
                  for i in range(40)]
    path = tmp_path / "long.txt"
    path.write_text("\n\n".join(paragraphs), encoding="utf-8")

    doc = load_document(path)
    assert len(doc.pages) > 5
    assert all(len(p.text) <= documents.TEXT_PAGE_CHARS for p in doc.pages)
    rebuilt = [para for p in doc.pages for para in p.text.split("\n\n")]
    assert rebuilt == [p.strip() for p in paragraphs]
    assert [p.number for p in doc.pages] == list(range(1, len(doc.pages) + 1))


def test_binary_file_named_txt(tmp_path):
    path = tmp_path / "blob.txt"
    path.write_bytes(b"\x00\x01\x02binary\x00" * 50)
    with pytest.raises(DocumentError, match="does not look like a text file"):
        load_document(path)


def test_markdown_front_matter_comments_glyph_names_and_references(tmp_path):
    body = "\n\n".join(f"Patients said the arti /uniFB01 cial system {i} helped; the /uniFB01 ndings"
                       " were clear. " * 3 for i in range(12))
    text = ("---\nsource: x\n---\n\n## Study\n\n<!-- image -->\n\n" + body
            + "\n\n## References\n\n1. Topol EJ. High-performance medicine. Nat Med 2019.\n")
    path = tmp_path / "study.md"
    path.write_text(text, encoding="utf-8")

    doc = load_document(path)
    assert doc.kind == "markdown"
    assert doc.pages[0].text.startswith("## Study")
    assert "source: x" not in doc.text and "<!--" not in doc.text
    assert "artificial system 0" in doc.text and "the findings were" in doc.text
    assert "Topol" not in doc.text
    assert any("section" in w for w in doc.warnings if "reference list" in w)


# --------------------------------------------------------------------------------------------
# Data types
# --------------------------------------------------------------------------------------------


def test_document_round_trip_and_edits():
    doc = Document(path="/x/a.pdf", name="a.pdf", kind="pdf",
                   pages=[Page(number=1, text="one"), Page(number=3, text="three")],
                   warnings=["w"], references_from_page=4)
    assert Document.from_dict(doc.to_dict()) == doc

    edited = doc.with_page_text(3, "three, corrected")
    assert edited.page(3).text == "three, corrected" and edited.page(3).edited
    assert not edited.page(1).edited and doc.page(3).text == "three"
    with pytest.raises(KeyError):
        doc.with_page_text(2, "no such page")


# --------------------------------------------------------------------------------------------
# Chunking
# --------------------------------------------------------------------------------------------


def _pages(n_pages: int = 6, per_page: int = 5) -> list[Page]:
    return [
        Page(number=p, text="\n\n".join(
            (f"P{p}.{k} " + "Teachers and students disagree about grading. " * (2 + k)).strip()
            for k in range(per_page)))
        for p in range(1, n_pages + 1)
    ]


def test_chunks_fit_the_budget_keep_paragraphs_and_record_pages():
    pages = _pages()
    chunks = chunk_pages(pages, max_tokens=300)

    assert len(chunks) > 3
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(estimate_tokens(c.text) <= 300 for c in chunks)
    originals = {para: page.number for page in pages for para in page.text.split("\n\n")}
    seen = []
    for chunk in chunks:
        paras = chunk.text.split("\n\n")
        assert all(para in originals for para in paras)  # never split a paragraph
        assert chunk.pages == sorted({originals[para] for para in paras})
        seen += paras
    assert seen == list(originals)  # every paragraph once, in order


def test_chunk_overlap_repeats_trailing_paragraphs():
    pages = _pages(3, 4)
    plain = chunk_pages(pages, max_tokens=300)
    overlapping = chunk_pages(pages, max_tokens=300, overlap_paragraphs=1)
    assert len(overlapping) >= len(plain)
    for before, after in itertools.pairwise(overlapping):
        assert after.text.split("\n\n")[0] == before.text.split("\n\n")[-1]
    assert all(estimate_tokens(c.text) <= 300 for c in overlapping)


def test_oversized_paragraph_is_split_at_sentences_then_hard():
    sentence = "The patient trusted the doctor more than the system. "
    long_para = sentence * 40
    chunks = chunk_pages([Page(number=7, text=long_para.strip())], max_tokens=100)
    assert len(chunks) > 1
    assert all(estimate_tokens(c.text) <= 100 for c in chunks)
    assert all(c.text.endswith("system.") for c in chunks)  # cut at sentence ends
    assert all(c.pages == [7] for c in chunks)
    assert " ".join(c.text for c in chunks) == long_para.strip()

    blob = "x" * 1000  # no spaces at all: hard split
    hard = chunk_pages([Page(number=1, text=blob)], max_tokens=50)
    assert "".join(c.text for c in hard) == blob
    assert all(len(c.text) <= 150 for c in hard)


def test_chunk_pages_rejects_tiny_budgets_and_skips_empty_pages():
    with pytest.raises(ValueError):
        chunk_pages(_pages(1, 1), max_tokens=5)
    chunks = chunk_pages([Page(number=1, text=""), Page(number=2, text="Only text.")],
                         max_tokens=100)
    assert chunks == [Chunk(text="Only text.", pages=[2], index=0)]


# --------------------------------------------------------------------------------------------
# Real documents
# --------------------------------------------------------------------------------------------

_REAL: dict[str, Document] = {}


def real(shared_data, name: str) -> Document:
    if name not in _REAL:
        _REAL[name] = load_document(shared_data / PERSONA_DOCS / name)
    return _REAL[name]


@pytest.mark.parametrize(("name", "last_page", "first_reference"),
                         [(CHAN, 23, "Abduljabbar, R., Dia, H."), (CHAN_HU, 16, "Adiguzel, T., Kaya")])
def test_real_pdfs_read_cleanly(shared_data, name, last_page, first_reference):
    doc = real(shared_data, name)
    assert doc.references_from_page == last_page
    assert doc.pages[-1].number == last_page
    assert first_reference not in doc.text
    assert not re.search(r"Page \d+ of \d+", doc.text)  # running header removed
    assert "Int J Educ Technol High Educ (2023)" not in doc.pages[3].text
    assert "generative AI" in doc.page(2).text
    assert " -\n" not in doc.text and "writ -" not in doc.text
    assert len(doc.page(5).text.split("\n\n")) > 3  # paragraphs rebuilt


def test_real_markdown_reads_cleanly(shared_data):
    doc = real(shared_data, SCHNEIDER)
    assert doc.kind == "markdown"
    assert "/uniFB0" not in doc.text and "artificial intelligence" in doc.text
    assert "Topol EJ" not in doc.text
    assert all(len(p.text) <= documents.TEXT_PAGE_CHARS for p in doc.pages)


def _sentence_on(doc: Document, number: int, index: int = 1) -> str:
    text = doc.page(number).text
    sentences = [s for s in re.split(r"(?<=\.)\s+", text) if 80 < len(s) < 300]
    return sentences[min(index, len(sentences) - 1)]


def _perturb(sentence: str) -> str:
    words = sentence.upper().split()
    return "  \n ".join(words)


@pytest.mark.parametrize("name", [CHAN, CHAN_HU, SCHNEIDER])
def test_find_evidence_on_real_documents(shared_data, name):
    doc = real(shared_data, name)
    for number in (2, 5, doc.pages[-2].number):
        sentence = _sentence_on(doc, number)
        assert find_evidence(doc, sentence) == (number, 1.0)
        assert find_evidence(doc, _perturb(sentence)) == (number, 1.0)
        words = sentence.split()
        # A light paraphrase: one word dropped, one changed, re-hyphenated and quoted.
        paraphrase = " ".join(words[:3] + words[4:-3] + ["really"] + words[-2:])
        paraphrase = "“" + paraphrase.replace(words[5], words[5][:3] + "- " + words[5][3:]) + "”"
        found = find_evidence(doc, paraphrase)
        assert found is not None and found[0] == number and 0.75 <= found[1] < 1.0
    assert find_evidence(doc, "Penguins migrate across the frozen Antarctic sea every "
                              "winter to find their breeding colonies.") is None
    assert find_evidence(doc, "") is None


def test_find_evidence_across_a_page_break_belongs_to_the_first_page():
    doc = Document(path="x", name="x", kind="text", pages=[
        Page(number=1, text="Intro. Students said the tool was"),
        Page(number=2, text="helpful for drafting essays. Then more."),
    ])
    assert find_evidence(doc, "students said the tool was helpful for drafting") == (1, 1.0)
    # A quote that starts at the top of page 2 is on page 2, also when paraphrased.
    assert find_evidence(doc, "Helpful for drafting essays.") == (2, 1.0)
    assert find_evidence(doc, "helpful for drafting their essays. then more") == (2, 0.857)
