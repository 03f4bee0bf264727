"""Shared tools of the attack suite (issue 18).

Every importer of the three methods is reached through :data:`IMPORTERS`: one entry per kind of
sheet a person can give EvalDesk, with the columns that importer expects and a ``run(path)`` that
calls the method's own public reader and returns an :class:`Outcome` (the texts read back, the
errors and the warnings as the user sees them). An importer may end in a clear message
(``TableError``, ``AqerInputError`` or an ``errors`` list); any other exception is a bug and fails
the test with its traceback.

:func:`run_limited` runs a piece of code in a child Python with an address-space limit and
returns its output and peak memory, so a case can prove that it is bounded in memory as well as
in time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------------------------
# Every importer, called as the app and the CLI call it
# --------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What a person sees after an import: the ``texts`` read from the importer's main text
    column (in row order), the ``errors`` that stop the step and the ``warnings``."""

    texts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def messages(self) -> str:
        return "\n".join(self.errors + self.warnings)


@dataclass(frozen=True)
class Importer:
    headers: tuple[str, ...]
    row: Callable[[int, str], list[str]]  # (row index, the text under attack) -> the row's cells
    run: Callable[[Path], Outcome]


def _aqer_answers(path: Path) -> Outcome:
    from core.aqer.inputs import read_answers, read_responses
    from core.aqer.model import ColumnRoles
    from core.aqer.responses import AqerInputError
    from core.tables import TableError

    try:
        _, read = read_answers(path)
    except TableError as exc:
        return Outcome(errors=[exc.message])
    if read.errors:
        return Outcome(errors=[i.message for i in read.errors])
    try:
        prepared = read_responses(path, ColumnRoles(format="long", question_col="question",
                                                    worker_col="worker",
                                                    response_col="answer"))
    except AqerInputError as exc:
        return Outcome(errors=[str(exc)], warnings=[i.message for i in read.warnings])
    frame = prepared.frame
    column = next(c for c in ("response", "answer", "text") if c in frame.columns)
    return Outcome(texts=[str(t) for t in frame[column]],
                   warnings=[n.message for n in prepared.notices])


def _aqer_grades(path: Path) -> Outcome:
    import pandas as pd

    from core.aqer.inputs import attach_grades_sheet
    from core.aqer.responses import prepare_responses

    answers = pd.DataFrame({"question": ["Q1", "Q1"], "worker": ["Ann", "Bo"],
                            "answer": ["yes", "no"]})
    prepared = prepare_responses(answers, format="long", question_col="question",
                                 worker_col="worker", response_col="answer")
    issues = attach_grades_sheet(prepared, path, None, "name", "grade")
    return Outcome(texts=[str(v) for v in prepared.person_grades.values()],
                   errors=[i.message for i in issues if i.severity == "error"],
                   warnings=[i.message for i in issues if i.severity != "error"])


def _majeval_items(path: Path) -> Outcome:
    from core.majeval.inputs import ItemsSetup, open_items

    opened = open_items(path, ItemsSetup())
    return Outcome(texts=[i.content for i in opened.read.items], errors=opened.read.errors,
                   warnings=opened.read.problems)


def _majeval_personas(path: Path) -> Outcome:
    from core.majeval.inputs import read_personas
    from core.tables import TableError

    try:
        read = read_personas(path)
    except TableError as exc:
        return Outcome(errors=[exc.message])
    return Outcome(texts=[p.perspective for p in read.personas],
                   errors=[i.message for i in read.errors],
                   warnings=[i.message for i in read.warnings])


def _majeval_dimensions(path: Path) -> Outcome:
    from core.majeval.inputs import read_dimensions

    read = read_dimensions(path)
    return Outcome(texts=[d.definition for d in read.dimensions], errors=read.errors)


def _ie_samples(path: Path) -> Outcome:
    from core.interacteval.inputs import read_samples

    read = read_samples(path)
    return Outcome(texts=[s.text for s in read.samples], errors=read.errors,
                   warnings=read.problems)


def _ie_texts(path: Path) -> Outcome:
    from core.interacteval.inputs import TextsSetup, open_texts

    opened = open_texts(path, TextsSetup(), ["Clarity"])
    return Outcome(texts=[t.text for t in opened.read.items], errors=opened.read.errors,
                   warnings=opened.read.problems)


def _ie_notes(path: Path) -> Outcome:
    from core.interacteval.inputs import read_notes

    read = read_notes(path)
    return Outcome(texts=[a.text for a in read.attributes], errors=read.errors,
                   warnings=read.problems)


def _ie_checklists(path: Path) -> Outcome:
    from core.interacteval.inputs import read_checklists

    read = read_checklists(path)
    return Outcome(texts=[item.question for c in read.checklists for item in c.items],
                   errors=read.errors, warnings=read.problems)


IMPORTERS: dict[str, Importer] = {
    "aqer_answers": Importer(("question", "worker", "answer"),
                             lambda i, t: ["Q1", f"worker {i}", t], _aqer_answers),
    "aqer_grades": Importer(("name", "grade"),
                            lambda i, t: [["Ann", "Bo"][i % 2] if i < 2 else f"x{i}", t],
                            _aqer_grades),
    "majeval_items": Importer(("id", "content"), lambda i, t: [f"item {i}", t], _majeval_items),
    "majeval_personas": Importer(("group", "name", "perspective"),
                                 lambda i, t: ["Teachers", f"Person {i}", t],
                                 _majeval_personas),
    "majeval_dimensions": Importer(("dimension", "definition"),
                                   lambda i, t: [f"Dimension {i}", t], _majeval_dimensions),
    "ie_samples": Importer(("text", "source", "score"), lambda i, t: [t, f"doc {i}", "3"],
                           _ie_samples),
    "ie_texts": Importer(("id", "text"), lambda i, t: [f"t{i}", t], _ie_texts),
    "ie_notes": Importer(("attribute", "author"), lambda i, t: [t, "Ann"], _ie_notes),
    "ie_checklists": Importer(("dimension", "question"), lambda i, t: ["Clarity", t],
                              _ie_checklists),
}


def run_importer(kind: str, path: Path) -> Outcome:
    return IMPORTERS[kind].run(Path(path))


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


def write_xlsx(path: Path, headers: Sequence[str], rows: Sequence[Sequence[object]],
               sheet: str = "Sheet1") -> Path:
    """A plain workbook written with openpyxl (not with our exporter)."""
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = sheet
    ws.append(list(headers))
    for row in rows:
        ws.append(list(row))
    wb.save(path)
    return path


def write_csv(path: Path, headers: Sequence[str], rows: Sequence[Sequence[str]], *,
              encoding: str = "utf-8", delimiter: str = ",") -> Path:
    import csv
    import io

    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter)
    writer.writerow(headers)
    writer.writerows(rows)
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def sheet_for(kind: str, texts: Sequence[str]) -> tuple[tuple[str, ...], list[list[str]]]:
    """The headers and rows that importer ``kind`` reads, with ``texts`` in its text column."""
    spec = IMPORTERS[kind]
    return spec.headers, [spec.row(i, t) for i, t in enumerate(texts)]


def raw_xlsx(path: Path, sheet_xml: bytes, *, shared: bytes | None = None,
             compress: int = 8) -> Path:
    """A minimal workbook written part by part, so a test controls the XML exactly (a lying
    dimension, a formula without a value, a huge part)."""
    import zipfile

    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rns = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
    ct = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    parts = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.'
            'org/package/2006/content-types"><Default Extension="rels" ContentType="application/'
            'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType='
            f'"application/xml"/><Override PartName="/xl/workbook.xml" ContentType="{ct}.sheet.'
            f'main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="{ct}.'
            'worksheet+xml"/>'
            + (f'<Override PartName="/xl/sharedStrings.xml" ContentType="{ct}.sharedStrings+xml"'
               '/>' if shared is not None else "")
            + "</Types>").encode(),
        "_rels/.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}"><Relationship '
            f'Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ).encode(),
        "xl/workbook.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><workbook {ns} {rns}><sheets><sheet '
            'name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>').encode(),
        "xl/_rels/workbook.xml.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}"><Relationship '
            f'Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/>'
            + (f'<Relationship Id="rId2" Type="{rel}/sharedStrings" Target="sharedStrings.xml"/>'
               if shared is not None else "")
            + "</Relationships>").encode(),
        "xl/worksheets/sheet1.xml": sheet_xml,
    }
    if shared is not None:
        parts["xl/sharedStrings.xml"] = shared
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=compress) as zf:
        for name, data in parts.items():
            zf.writestr(name, data)
    return path


SHEET_NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'


def sheet_xml(rows_xml: str, dimension: str | None = None) -> bytes:
    dim = f'<dimension ref="{dimension}"/>' if dimension else ""
    return (f'<?xml version="1.0" encoding="UTF-8"?><worksheet {SHEET_NS}>{dim}'
            f"<sheetData>{rows_xml}</sheetData></worksheet>").encode()


def inline_row(number: int, cells: Sequence[str]) -> str:
    from xml.sax.saxutils import escape

    out = []
    for j, text in enumerate(cells):
        ref = f"{chr(65 + j)}{number}"
        out.append(f'<c r="{ref}" t="inlineStr"><is><t>{escape(text)}</t></is></c>')
    return f'<row r="{number}">{"".join(out)}</row>'


# --------------------------------------------------------------------------------------------
# A child process with a memory limit
# --------------------------------------------------------------------------------------------


@dataclass
class ChildResult:
    returncode: int
    output: dict
    stderr: str
    peak_mb: float


def run_limited(code: str, *, memory_mb: int = 1500, timeout: float = 60) -> ChildResult:
    """Run ``code`` in a child Python whose address space is limited to ``memory_mb``; the code
    sets ``result`` (a JSON-able dict), which comes back as ``output`` with the child's peak
    resident memory in MB. A child that runs out of memory ends with MemoryError (returncode != 0)
    instead of taking the machine's memory."""
    script = "\n".join([
        "import json, resource, sys",
        f"resource.setrlimit(resource.RLIMIT_AS, ({memory_mb} << 20, {memory_mb} << 20))",
        "result = {}",
        textwrap.dedent(code).strip("\n"),
        # VmHWM, not ru_maxrss: ru_maxrss keeps the parent's (pytest's) size across exec
        ("peak = next(int(l.split()[1]) for l in open('/proc/self/status') "
         "if l.startswith('VmHWM')) / 1024"),
        "sys.stdout.write('\\n@@RESULT@@' + json.dumps({'result': result, 'peak_mb': peak}))",
    ])
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=timeout, cwd=str(ROOT), env=env, check=False)
    output: dict = {}
    peak = 0.0
    if "@@RESULT@@" in proc.stdout:
        payload = json.loads(proc.stdout.rsplit("@@RESULT@@", 1)[1])
        output, peak = payload["result"], payload["peak_mb"]
    return ChildResult(proc.returncode, output, proc.stderr[-3000:], peak)


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a socket to another machine fails the test."""
    import socket

    real = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if host not in ("127.0.0.1", "::1", "localhost") and not str(host).startswith("/"):
            raise AssertionError(f"network access attempted: {address}")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield


def files_in(folder: Path) -> list[str]:
    """The names in ``folder``, leaving out the test's EvalDesk home (root conftest)."""
    return sorted(p.name for p in Path(folder).iterdir() if p.name != "home")
