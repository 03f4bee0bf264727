"""Attack suite, section 3: hostile and broken PDFs given to MAJ-Eval's document reader.

Every case goes through ``core.majeval.inputs.read_document`` (what the wizard and the CLI call)
and ends in the pages' text or a :class:`core.documents.DocumentError` naming the file and saying
what to do. Bombs run in a child process with a memory limit and a time limit.
"""

from __future__ import annotations

import io
import re
import zlib
from pathlib import Path

import pytest

from core.documents import DocumentError
from core.majeval.inputs import read_document
from tests.attack.conftest import run_limited
from tests.core.pdf_factory import pdf_bytes, write_pdf

LINES = ["Parents worry about screen time at home.", "Teachers want short reading tasks.",
         "Children enjoy stories with animals and jokes."]


def _error(path: Path, **kw) -> str:
    with pytest.raises(DocumentError) as err:
        read_document(path, **kw)
    message = str(err.value)
    assert path.name in message and "Traceback" not in message
    return message


def raw_pdf(objects: list[bytes], root: int = 1, *, trailer_extra: bytes = b"") -> bytes:
    """A PDF from numbered object bodies (object k+1 = objects[k]) with a correct xref."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root %d 0 R %s>>\nstartxref\n%d\n%%%%EOF\n"
              % (len(objects) + 1, root, trailer_extra, xref))
    return out.getvalue()


def _stream(data: bytes, *, compress: bool = False, extra: bytes = b"") -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def _text_page_objects(content: bytes, *, catalog_extra: bytes = b"",
                       page_extra: bytes = b"") -> list[bytes]:
    return [
        b"<< /Type /Catalog /Pages 2 0 R " + catalog_extra + b">>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> " + page_extra + b">>",
        content,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]


def _text_content(lines: list[str]) -> bytes:
    ops = [b"BT /F1 11 Tf 72 720 Td 14 TL"]
    for line in lines:
        ops.append(b"(" + line.encode("latin-1") + b") Tj T*")
    ops.append(b"ET")
    return _stream(b"\n".join(ops))


# --------------------------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_pdf_normal_reference(tmp_path):
    doc = read_document(write_pdf(tmp_path / "paper.pdf", [LINES]))
    assert "screen time" in doc.text


@pytest.mark.timeout(30)
@pytest.mark.parametrize("keep", [0.2, 0.5, 0.9])
def test_pdf_truncated(tmp_path, keep):
    data = pdf_bytes([LINES, LINES, LINES])
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: int(len(data) * keep)])
    try:
        doc = read_document(path)
    except DocumentError as exc:
        assert "cut.pdf" in str(exc) and ("damaged" in str(exc) or "no text" in str(exc))
    else:  # pypdf recovered what it could: never less than was there without saying so
        assert doc.pages and ("cut.pdf" in " ".join(doc.warnings) or len(doc.pages) == 3)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("content,word", [
    pytest.param(b"just some notes\n", "not a PDF", id="text"),
    pytest.param(b"PK\x03\x04word/document.xml....", "docx", id="docx_renamed"),
    pytest.param(b"<!DOCTYPE html><html><body>404</body></html>", "web page", id="html"),
    pytest.param(b"\x89PNG\r\n\x1a\n....", "picture", id="png"),
    pytest.param(b"%PDF-1.7\n", "damaged", id="header_only"),
])
def test_not_a_pdf(tmp_path, content, word):
    path = tmp_path / "paper.pdf"
    path.write_bytes(content)
    assert word.lower() in _error(path).lower()


@pytest.mark.timeout(30)
def test_pdf_empty_file(tmp_path):
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    assert "empty" in _error(path)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_pdf_encrypted_with_user_password(tmp_path, algorithm):
    path = write_pdf(tmp_path / "locked.pdf", [LINES], user_password="pw",
                     algorithm=algorithm)
    assert "password" in _error(path)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128"])
def test_pdf_encrypted_without_user_password(tmp_path, algorithm):
    """Only an owner password (printing/copying restrictions): opens without a password, so
    it is read like any PDF."""
    path = write_pdf(tmp_path / "restricted.pdf", [LINES], user_password="",
                     algorithm=algorithm)
    doc = read_document(path)
    assert "screen time" in doc.text


@pytest.mark.timeout(30)
def test_pdf_image_only(tmp_path):
    path = write_pdf(tmp_path / "scan.pdf", [None, None])
    message = _error(path)
    assert "no text layer" in message and "OCR" in message


@pytest.mark.timeout(120)
def test_pdf_500_pages(tmp_path):
    """Refused by the page limit (which says so and how to raise it); read to the end, memory
    bounded, when the limit is raised."""
    path = write_pdf(tmp_path / "book.pdf", [[f"Page {k} about parents and teachers today."]
                                             for k in range(500)])
    child = run_limited(f"""
        from core.documents import DocumentError
        from core.majeval.inputs import read_document
        try:
            read_document({str(path)!r})
        except DocumentError as exc:
            result["error"] = str(exc)
        result["pages"] = len(read_document({str(path)!r}, max_pages=None).pages)
    """, memory_mb=1500, timeout=100)
    assert child.returncode == 0, child.stderr
    message = child.output["error"]
    assert "book.pdf" in message and "500 pages" in message and "limit is 200" in message
    assert "Maximum pages per document" in message
    assert child.output["pages"] == 500
    print(f"500-page PDF: peak memory {child.peak_mb:.0f} MB")
    assert child.peak_mb < 600


@pytest.mark.timeout(30)
def test_pdf_javascript_and_launch_actions_never_run(tmp_path, monkeypatch, no_network):
    """A PDF whose opening runs JavaScript and launches a program: we only read text."""
    import os
    import subprocess

    marker = tmp_path / "launched.txt"
    command = f"/bin/sh -c 'touch {marker}'".encode()
    objects = _text_page_objects(
        _text_content(LINES),
        catalog_extra=b"/OpenAction 6 0 R /Names << /JavaScript << /Names [(x) 7 0 R] >> >> "
                      b"/AA << /WC 7 0 R >>",
        page_extra=b"/AA << /O 6 0 R >>")
    objects.append(b"<< /Type /Action /S /Launch /F (" + command + b") /Win << /F (cmd.exe) "
                   b"/P (/c calc) >> >>")
    objects.append(b"<< /Type /Action /S /JavaScript /JS (app.launchURL\\('http://attacker."
                   b"invalid'\\); this.exportDataObject\\({cName: 'x', nLaunch: 2}\\);) >>")
    path = tmp_path / "active.pdf"
    path.write_bytes(raw_pdf(objects))

    def refuse(*a, **k):
        raise AssertionError("a program was started while reading a PDF")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "system", refuse)
    doc = read_document(path)
    assert "screen time" in doc.text
    assert not marker.exists()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("damage", ["wrong_startxref", "garbage_xref", "no_xref"])
def test_pdf_malformed_cross_reference_table(tmp_path, damage):
    data = raw_pdf(_text_page_objects(_text_content(LINES)))
    if damage == "wrong_startxref":
        data = re.sub(rb"startxref\n\d+", b"startxref\n99999", data)
    elif damage == "garbage_xref":
        data = re.sub(rb"(\d{10}) 00000 n", b"0000000007 00000 n", data)
    else:
        data = data[: data.index(b"xref")] + b"%%EOF\n"
    path = tmp_path / "xref.pdf"
    path.write_bytes(data)
    try:
        doc = read_document(path)
    except DocumentError as exc:
        assert "xref.pdf" in str(exc)
    else:  # pypdf rebuilt the table from the objects: the text is the text
        assert "screen time" in doc.text


@pytest.mark.timeout(90)
def test_pdf_bomb_huge_compressed_content_stream(tmp_path):
    """A page whose 1 MB compressed content unpacks to about 1 GB of text drawing: bounded in
    time and memory; a clear message or the page reported unreadable, never a crash."""
    block = b"BT /F1 11 Tf 72 720 Td (" + b"A" * 1000 + b") Tj ET\n"
    compressor = zlib.compressobj(9)
    first = compressor.compress(block * 1000) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(block * 1000) + compressor.flush(zlib.Z_FULL_FLUSH)
    # after a full flush each 1 MB chunk compresses to the same bytes: 1,000 of them is ~1 GB
    data = first + again * 999 + compressor.flush()
    content = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + \
        b"\nendstream"
    objects = _text_page_objects(content)
    objects[1] = b"<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 >>"
    objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 7 0 R "
                   b"/Resources << /Font << /F1 5 0 R >> >> >>")
    objects.append(_text_content(LINES))
    path = tmp_path / "bomb.pdf"
    path.write_bytes(raw_pdf(objects))
    child = run_limited(f"""
        from core.documents import DocumentError
        from core.majeval.inputs import read_document
        try:
            doc = read_document({str(path)!r})
            result["text"] = doc.text[:200]
            result["warnings"] = doc.warnings
        except DocumentError as exc:
            result["error"] = str(exc)
    """, memory_mb=1500, timeout=80)
    assert child.returncode == 0, child.stderr
    if "error" in child.output:
        assert "bomb.pdf" in child.output["error"]
    else:
        assert "screen time" in child.output["text"]
        assert any(w.startswith("Page 1 of “bomb.pdf” could not be read") and "is empty" in w
                   for w in child.output["warnings"]), child.output["warnings"]
    print(f"PDF bomb (1 GB content stream): peak memory {child.peak_mb:.0f} MB")
    assert child.peak_mb < 1000, child.peak_mb


def _nested_pdf() -> bytes:
    nested = b"[" * 200_000 + b"]" * 200_000
    objects = _text_page_objects(_text_content(LINES),
                                 page_extra=b"/Junk " + nested + b" /Deep 6 0 R")
    objects.append(b"<< /A " * 50_000 + b"1" + b" >>" * 50_000)
    return raw_pdf(objects)


def _loop_pdf() -> bytes:
    """The page tree points back to itself and claims a billion pages."""
    objects = _text_page_objects(_text_content(LINES))
    objects[1] = b"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 1000000000 >>"
    return raw_pdf(objects)


def _objstm_pdf() -> bytes:
    """An object stream that claims 50 million objects."""
    header = b" ".join(b"%d 0" % (10 + k) for k in range(10)) + b" "
    body = header + b"<< /A 1 >> " * 10
    objstm = _stream(body, compress=True,
                     extra=b" /Type /ObjStm /N 50000000 /First %d" % len(header))
    objects = _text_page_objects(_text_content(LINES))
    objects.append(objstm)
    return raw_pdf(objects)


@pytest.fixture(scope="module")
def small_bombs(tmp_path_factory):
    """The three structural bombs, read one after the other in ONE child limited to 1.5 GB
    (one child instead of three keeps the suite quick)."""
    folder = tmp_path_factory.mktemp("pdf-bombs")
    files = {"nested": _nested_pdf(), "loop": _loop_pdf(), "objstm": _objstm_pdf()}
    for name, data in files.items():
        (folder / f"{name}.pdf").write_bytes(data)
    child = run_limited(f"""
        import time
        from core.documents import DocumentError
        from core.majeval.inputs import read_document
        for name in {list(files)!r}:
            started = time.monotonic()
            try:
                doc = read_document({str(folder)!r} + "/" + name + ".pdf")
                result[name] = {{"text": doc.text[:200], "pages": len(doc.pages)}}
            except DocumentError as exc:
                result[name] = {{"error": str(exc)}}
            result[name]["seconds"] = time.monotonic() - started
    """, memory_mb=1500, timeout=80)
    assert child.returncode == 0, child.stderr
    print(f"structural PDF bombs: peak memory {child.peak_mb:.0f} MB, "
          + ", ".join(f"{k} {v['seconds']:.1f} s" for k, v in child.output.items()))
    assert child.peak_mb < 1000
    return child.output


@pytest.mark.timeout(90)
def test_pdf_bomb_deeply_nested_objects(small_bombs):
    seen = small_bombs["nested"]
    assert "nested.pdf" in seen.get("error", "") or "screen time" in seen["text"]


@pytest.mark.timeout(90)
def test_pdf_bomb_page_tree_loop_and_huge_count(small_bombs):
    seen = small_bombs["loop"]
    assert "loop.pdf" in seen.get("error", "") or seen["pages"] <= 200


@pytest.mark.timeout(90)
def test_pdf_bomb_object_stream_claiming_millions_of_objects(small_bombs):
    seen = small_bombs["objstm"]
    assert "objstm.pdf" in seen.get("error", "") or "screen time" in seen["text"]


@pytest.mark.timeout(60)
def test_pdf_time_budget_stops_a_slow_document(tmp_path, monkeypatch):
    """Pages that each take long: the budget stops the next page and names where it stopped."""
    import time

    from pypdf import PageObject

    path = write_pdf(tmp_path / "slow.pdf", [LINES] * 5)
    real = PageObject.extract_text

    def slow(self, *a, **k):
        time.sleep(0.3)
        return real(self, *a, **k)

    monkeypatch.setattr(PageObject, "extract_text", slow)
    from core.documents import load_document

    with pytest.raises(DocumentError) as err:
        load_document(path, time_budget_s=0.5)
    assert "slow.pdf" in str(err.value) and "stopped at page" in str(err.value)
