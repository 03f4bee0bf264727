"""Files the user gets (exports, Save As, the command line's workbooks) follow the umask.

They are written to a temporary file beside the target and renamed onto it (so a reader never
sees half a file). ``tempfile.mkstemp`` makes that file owner-only (0600), which made exported
workbooks and saved projects unreadable to colleagues on a shared drive (issue 13, point 7).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pandas as pd
import pytest

from core import cli
from core.project import Project
from core.tables import Sheet, write_workbook
from tests.core.cli.aqer_routes_support import TinyEncoder, answers_workbook

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are a POSIX matter")


@pytest.fixture(params=[(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)],
                ids=["umask 022", "umask 077", "umask 002"])
def umask(request):
    """Set the umask for the test (restored after); gives the mode a new file should get."""
    mask, expected = request.param
    previous = os.umask(mask)
    try:
        yield expected
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_exported_workbook_follows_the_umask(tmp_path, umask):
    write_workbook(tmp_path / "export.xlsx",
                   [Sheet("Scores", pd.DataFrame({"id": ["a"], "score": [0.5]}))])
    assert mode(tmp_path / "export.xlsx") == umask
    # a second export over it too (the rename replaces the file)
    write_workbook(tmp_path / "export.xlsx",
                   [Sheet("Scores", pd.DataFrame({"id": ["b"], "score": [0.7]}))])
    assert mode(tmp_path / "export.xlsx") == umask
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("~evaldesk-")]


def test_save_as_follows_the_umask(tmp_path, umask):
    with Project.create(tmp_path / "first.evaldesk", method="aqer") as project:
        project.save_as(tmp_path / "shared copy.evaldesk")
    assert mode(tmp_path / "shared copy.evaldesk") == umask


def test_the_command_lines_workbook_follows_the_umask(tmp_path, umask, monkeypatch):
    monkeypatch.setattr("core.embeddings.Encoder", TinyEncoder)
    source = answers_workbook(tmp_path / "class.xlsx")
    out = tmp_path / "results.xlsx"
    assert cli.main(["aqer", str(source), "-o", str(out), "--llm-col", "Bot",
                     "--duplicates", "last"]) == 0
    assert mode(out) == umask


def test_the_aqer_template_copy_follows_the_umask(tmp_path, umask):
    from core.aqer.session import copy_template

    assert mode(copy_template(tmp_path / "template.xlsx")) == umask
