"""Test-only PDF writer: pages of given lines with a real text layer (reportlab), optionally
encrypted (pypdf). Each line is drawn exactly as given, so tests control line breaks."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

#: A page given as None is drawn with shapes only (no text), like a scanned image.
PageLines = Sequence[str] | None


def pdf_bytes(pages: Sequence[PageLines], *, header: str | None = None) -> bytes:
    """A PDF with one page per entry; ``header`` ("... {n} of {total}") is drawn on top of each
    page with text."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, pageCompression=1)
    width, height = A4
    for number, lines in enumerate(pages, start=1):
        if lines is None:
            pdf.setFillGray(0.4)
            pdf.rect(72, 300, width - 144, height - 400, fill=1)
            for k in range(20):
                pdf.line(72, 100 + 10 * k, width - 72, 120 + 10 * k)
        else:
            pdf.setFont("Helvetica", 10)
            if header:
                pdf.drawString(72, height - 40, header.format(n=number, total=len(pages)))
            y = height - 72
            for line in lines:
                if y < 60:
                    raise ValueError("too many lines for one page")
                pdf.drawString(72, y, line)
                y -= 13
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def write_pdf(path: Path, pages: Sequence[PageLines], *, header: str | None = None,
              user_password: str | None = None, algorithm: str = "AES-128") -> Path:
    data = pdf_bytes(pages, header=header)
    if user_password is not None:
        from pypdf import PdfReader, PdfWriter

        writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
        writer.encrypt(user_password, "owner-secret", algorithm=algorithm)
        out = io.BytesIO()
        writer.write(out)
        data = out.getvalue()
    path.write_bytes(data)
    return path


def wrap(paragraphs: Sequence[str], width: int = 80) -> list[str]:
    """Lines of the paragraphs wrapped at ``width``, the way a typeset page breaks them (no blank
    lines between paragraphs, as pypdf's plain extraction returns them)."""
    import textwrap

    lines: list[str] = []
    for paragraph in paragraphs:
        lines.extend(textwrap.wrap(paragraph, width=width))
    return lines
