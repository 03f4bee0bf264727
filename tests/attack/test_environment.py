"""Attack suite, issue 30 point 6: the environment EvalDesk runs in.

* A home folder EvalDesk cannot write in: the app showed no window at all (the traceback went
  to a terminal the user does not have), and ``evaldesk aqer`` and ``models list`` ended in a
  traceback. Now both work, with a notice of what cannot be kept and where it goes instead.
* A workbook whose first sheet is hidden in Excel ("Old draft"): it was scored without a word
  (CLI) and pre-selected in the wizard. Now the first visible sheet is read, the sheet used is
  named in the command's output and the results' Read me, and hidden sheets are marked in the
  wizard's list.
* Merged question cells: the run stopped with "finds 1 worker(s) ... Check the columns chosen
  above" with nothing printed above; now the message gives the reader's merged-cell warning.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import Workbook

from core.cli import main
from tests.attack._faults import cli_command, cli_env, hostile_server, save_profile, score_args
from tests.desktop.conftest import qloop, store, window  # noqa: F401 - the wizard's fixtures

ROOT = Path(__file__).resolve().parents[2]
PROFILE = "Attack server"


@pytest.fixture
def read_only_home(tmp_path):
    """An EvalDesk home (``EVALDESK_HOME``) that cannot be written, even by root; the child's
    temporary folder is the test's own."""
    home = tmp_path / "home-ro"
    home.mkdir()
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(
                ["chattr", "+i", str(home)], capture_output=True, check=False).returncode:
            pytest.skip("root without chattr +i: cannot make a folder read-only")
    else:
        home.chmod(0o555)
    (tmp_path / "tmp").mkdir()
    env = dict(cli_env(), EVALDESK_HOME=str(home), TMPDIR=str(tmp_path / "tmp"),
               QT_QPA_PLATFORM="offscreen")
    yield home, env
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(home)], capture_output=True, check=False)
    else:
        home.chmod(0o755)


@pytest.mark.timeout(120)
def test_models_list_with_a_read_only_home_folder(read_only_home):
    home, env = read_only_home
    result = subprocess.run(cli_command(["models", "list"]), env=env, capture_output=True,
                            text=True, timeout=100, check=False)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "cannot write in its folders under your home folder" in result.stderr
    assert str(home) in result.stderr and "temporary folder" in result.stderr
    assert list(home.iterdir()) == []


@pytest.mark.timeout(300)
@pytest.mark.slow
def test_aqer_with_a_read_only_home_folder(read_only_home, tmp_path):
    home, env = read_only_home
    output = tmp_path / "aqer.xlsx"
    sample = ROOT / "resources" / "samples" / "aqer_sample.xlsx"
    result = subprocess.run(cli_command(["aqer", str(sample), "-o", str(output)]),
                            env=env, capture_output=True, text=True, timeout=280, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert output.exists()
    assert "your settings and model profiles" in result.stderr
    assert list(home.iterdir()) == []


READ_ONLY_HOME_APP = """
import json, sys
from desktop.app import start
from tests.desktop.conftest import visible_message_boxes
session = start()
for _ in range(20):
    session.app.processEvents()
boxes = visible_message_boxes(session.window)
print(json.dumps({"visible": session.window.isVisible(),
                  "boxes": [box.windowTitle() + " | " + box.text() for box in boxes]}))
sys.stdout.flush()
"""


@pytest.mark.timeout(120)
def test_the_app_with_a_read_only_home_folder_opens_with_a_notice(read_only_home):
    home, env = read_only_home
    result = subprocess.run([sys.executable, "-c", READ_ONLY_HOME_APP], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=100, check=False)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, result.stderr[-3000:]
    report = json.loads(lines[-1])
    assert report["visible"] is True
    notice = next((b for b in report["boxes"] if "cannot save in your home folder" in b), "")
    assert str(home) in notice and "temporary folder" in notice and "Save As" in notice, report


UNWRITABLE_EVERYWHERE = """
import sys, tempfile
tempfile.tempdir = sys.argv[1]  # the temporary folder is read-only too
from PySide6.QtWidgets import QApplication, QMessageBox
shown = []
QMessageBox.critical = staticmethod(lambda parent, title, text: shown.append((title, text)))
from desktop.app import run
code = run()
print("CODE", code, "|", shown[0][0], "|", shown[0][1], flush=True)
"""


@pytest.mark.timeout(120)
def test_the_app_refuses_in_a_dialog_when_nothing_can_be_written(read_only_home, tmp_path):
    home, env = read_only_home
    result = subprocess.run([sys.executable, "-c", UNWRITABLE_EVERYWHERE, str(home)], cwd=ROOT,
                            env=env,
                            capture_output=True, text=True, timeout=100, check=False)
    assert "CODE 1 | EvalDesk cannot start" in result.stdout, result.stderr[-3000:]
    assert "make your home folder writable" in result.stdout
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------------------------ hidden sheets
def hidden_first_sheet(path: Path, state: str = "hidden") -> Path:
    """A texts workbook whose first sheet, an old draft with other texts, is hidden."""
    wb = Workbook()
    old = wb.active
    old.title = "Old draft"
    old.append(["id", "text"])
    for key in ("A", "B", "C", "D"):
        old.append([key, f"OLD DRAFT {key}: never meant to be scored."])
    old.sheet_state = state
    texts = wb.create_sheet("Texts")
    items = pd.read_excel(path.with_name("items.xlsx"), dtype=str)
    texts.append(["id", "text"])
    for row in items.itertuples(index=False):
        texts.append([row.id, row.text])
    wb.save(path)
    return path


@pytest.mark.timeout(90)
@pytest.mark.parametrize("state", ["hidden", "veryHidden"])
def test_a_hidden_first_sheet_is_not_scored_and_the_sheet_read_is_named(tmp_path, capsys,
                                                                         state):
    with hostile_server("none") as server:
        save_profile(PROFILE, server.base, max_retries=0)
        output = tmp_path / "results.xlsx"
        args = score_args(tmp_path, tmp_path / "p.evaldesk", output, PROFILE)
        items = hidden_first_sheet(tmp_path / "two-sheets.xlsx", state)
        args[args.index("--items") + 1] = str(items)
        assert main(args) == 0
        err = capsys.readouterr().err
        prompts = json.dumps([body for _, body in server.requests])
    assert "OLD DRAFT" not in prompts
    assert 'read the sheet "Texts"' in err and '"Old draft"' in err and "hidden" in err, err
    assert "two-sheets.xlsx, sheet Texts" in err
    readme = pd.read_excel(output, sheet_name="Read me", header=None, dtype=str).fillna("")
    assert readme.apply(lambda r: r.str.contains("sheet Texts")).any().any()


def test_the_wizard_marks_hidden_sheets_and_does_not_preselect_them(
        qtbot, window, tmp_path):  # noqa: F811 - the fixture imported above
    from core.majeval.inputs import ItemsSetup, open_items

    wb = Workbook()
    old = wb.active
    old.title = "Old draft"
    old.append(["id", "content"])
    old.append(["x", "Old answer"])
    old.sheet_state = "hidden"
    new = wb.create_sheet("Answers")
    new.append(["id", "content"])
    new.append(["1", "A real answer"])
    path = tmp_path / "items.xlsx"
    wb.save(path)
    opened = open_items(path, ItemsSetup())
    assert opened.setup.sheet == "Answers"  # was "Old draft"
    assert [i.content for i in opened.read.items] == ["A real answer"]
    from desktop.majeval import open_majeval_wizard
    from desktop.widgets import chosen_sheet, fill_sheets

    wiz = open_majeval_wizard(window)
    page = wiz.pages["items"]
    fill_sheets(page.sheet_combo, opened.sheets, opened.hidden, opened.setup.sheet)
    combo = page.sheet_combo
    assert [combo.itemText(i) for i in range(combo.count())] == [
        "Old draft (hidden in Excel)", "Answers"]
    assert chosen_sheet(combo) == "Answers"
    combo.setCurrentIndex(0)
    assert chosen_sheet(combo) == "Old draft"


# ------------------------------------------------------------------------------ merged cells
@pytest.mark.timeout(60)
def test_merged_question_cells_are_explained(tmp_path, capsys):
    wb = Workbook()
    ws = wb.active
    ws.title = "Answers"
    ws.append(["question", "worker", "answer"])
    row = 2
    for question in ("What is photosynthesis?", "Why is the sky blue?"):
        for worker in ("Ann", "Bo", "Cy"):
            ws.append([question if worker == "Ann" else None, worker,
                       f"{worker} on {question}"])
        ws.merge_cells(start_row=row, start_column=1, end_row=row + 2, end_column=1)
        row += 3
    source = tmp_path / "merged.xlsx"
    wb.save(source)
    assert main(["aqer", str(source), "-o", str(tmp_path / "out.xlsx"), "--format", "long"]) == 1
    err = capsys.readouterr().err
    assert "finds 1 worker(s)" in err
    assert "Cells A2:A4 are merged" in err and "Unmerge them" in err
    assert "chosen above" not in err
