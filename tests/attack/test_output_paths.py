"""Attack suite, issue 30 point 4: an output that cannot be written is found before the run,
not after it. A read-only or missing folder, a file in the way, ``-o`` naming a folder or one of
the inputs: each is refused before the first model call (20 calls were made and, without
``--project``, made again on the retry), with a message naming the file. A name without a
suffix gets ``.xlsx`` and the command names the exact file it wrote (``-o FOLDER`` wrote
``FOLDER.xlsx`` beside the folder and said "Results written to FOLDER").
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from tests.attack._faults import hostile_server, save_profile, score_args, statuses
from tests.attack.conftest import sheet_for, write_xlsx
from tests.attack.test_project_file import unwritable  # noqa: F401 - a fixture

PROFILE = "Attack server"


@pytest.fixture
def server():
    with hostile_server("none") as running:
        save_profile(PROFILE, running.base, max_retries=0)
        yield running


def score(tmp_path, output, *extra):
    """``evaldesk checklist score`` without --project (the run is lost when it fails)."""
    args = score_args(tmp_path, tmp_path / "unused.evaldesk", Path(output), PROFILE)
    at = args.index("--project")
    del args[at:at + 2]
    return main([*args, *extra])


def assert_refused_before_any_call(code, err, server, *words):
    assert code == 1, err
    assert "Traceback" not in err
    assert sum(server.hits.values()) == 0, f"{server.hits} model calls before the refusal"
    for word in words:
        assert word in err, err


@pytest.mark.timeout(60)
def test_a_read_only_output_folder_is_refused_before_the_run(tmp_path, server, capsys,
                                                              unwritable):  # noqa: F811
    folder = tmp_path / "shared-results"
    folder.mkdir()
    unwritable(folder)
    code = score(tmp_path, folder / "results.xlsx")
    err = capsys.readouterr().err
    assert_refused_before_any_call(code, err, server, "may not write in the folder", str(folder))
    assert list(folder.iterdir()) == []


@pytest.mark.timeout(60)
def test_a_missing_output_folder_is_refused_before_the_run(tmp_path, server, capsys):
    code = score(tmp_path, tmp_path / "no such folder" / "results.xlsx")
    err = capsys.readouterr().err
    assert_refused_before_any_call(code, err, server, "does not exist", "no such folder")


@pytest.mark.timeout(60)
def test_a_file_in_the_way_of_the_output_folder(tmp_path, server, capsys):
    (tmp_path / "reports").write_text("a file where the folder should be")
    code = score(tmp_path, tmp_path / "reports" / "results.xlsx")
    err = capsys.readouterr().err
    assert_refused_before_any_call(code, err, server, "does not exist")


@pytest.mark.timeout(60)
def test_output_naming_a_folder_is_refused_not_written_beside_it(tmp_path, server, capsys):
    """``-o FOLDER`` wrote FOLDER.xlsx beside the folder and said "Results written to FOLDER"."""
    folder = tmp_path / "results"
    folder.mkdir()
    code = score(tmp_path, folder)
    err = capsys.readouterr().err
    assert_refused_before_any_call(code, err, server, "is a folder", str(folder / "results.xlsx"))
    assert not (tmp_path / "results.xlsx").exists()


@pytest.mark.timeout(60)
def test_output_without_a_suffix_names_the_exact_file_written(tmp_path, server, capsys):
    code = score(tmp_path, tmp_path / "scores")
    err = capsys.readouterr().err
    assert code == 0, err
    written = tmp_path / "scores.xlsx"
    assert f"Results written to {written}." in err, err
    assert set(statuses(written).values()) == {"ok"}


@pytest.mark.timeout(60)
def test_output_of_another_kind_is_refused_before_the_run(tmp_path, server, capsys):
    code = score(tmp_path, tmp_path / "results.csv")
    err = capsys.readouterr().err
    assert_refused_before_any_call(code, err, server, "ending in .xlsx")


@pytest.mark.timeout(60)
def test_output_that_is_an_input_is_refused_before_the_run(tmp_path, server, capsys):
    args = score_args(tmp_path, tmp_path / "p.evaldesk", tmp_path / "x.xlsx", PROFILE)
    items = Path(args[args.index("--items") + 1])
    code = score(tmp_path, items)
    err = capsys.readouterr().err
    assert_refused_before_any_call(code, err, server, "items.xlsx itself")
    assert "Read me" not in pd.ExcelFile(items).sheet_names  # still the texts, not results


@pytest.mark.timeout(60)
def test_output_that_is_someone_elses_workbook_is_refused_before_the_run(tmp_path, server,
                                                                          capsys):
    mine = write_xlsx(tmp_path / "grades.xlsx", ["name", "grade"], [["Ann", "4"]])
    code = score(tmp_path, mine)
    err = capsys.readouterr().err
    assert_refused_before_any_call(code, err, server, "was not written by EvalDesk")


@pytest.mark.timeout(60)
def test_checklist_compare_and_build_check_the_output_first(tmp_path, server, capsys):
    folder = tmp_path / "out"
    folder.mkdir()
    definition = tmp_path / "def.txt"
    definition.write_text("Coherence: the text hangs together.")
    samples = tmp_path / "samples.xlsx"
    pd.DataFrame({"source": ["d1"] * 4, "text": [f"Sample {i}." for i in range(4)],
                  "score": ["1", "2", "4", "5"]}).to_excel(samples, index=False)
    notes = tmp_path / "ann.txt"
    notes.write_text("Flows well\n")
    build = ["checklist", "build", "--dimension", "Coherence", "--definition-file",
             str(definition), "--samples", str(samples), "--notes", str(notes), "--profile",
             PROFILE, "-o", str(folder)]
    code = main(build)
    assert_refused_before_any_call(code, capsys.readouterr().err, server, "is a folder")
    items = tmp_path / "texts.xlsx"
    pd.DataFrame({"id": ["a"], "text": ["One text."]}).to_excel(items, index=False)
    compare = ["checklist", "compare", "--dimension", "Coherence", "--definition-file",
               str(definition), "--samples", str(samples), "--notes", str(notes), "--profile",
               PROFILE, "--items", str(items), "--text-col", "text", "--id-col", "id",
               "-o", str(folder)]
    code = main(compare)
    assert_refused_before_any_call(code, capsys.readouterr().err, server, "is a folder")


@pytest.mark.timeout(60)
def test_majeval_run_checks_the_output_first(tmp_path, server, capsys, unwritable):  # noqa: F811
    folder = tmp_path / "locked"
    folder.mkdir()
    unwritable(folder)
    personas = tmp_path / "personas.xlsx"
    pd.DataFrame({"group": ["Teachers", "Teachers"], "name": ["Ann", "Bo"],
                  "perspective": ["Cares about clarity.", "Cares about facts."]}).to_excel(
        personas, index=False)
    items = tmp_path / "items.xlsx"
    pd.DataFrame({"id": ["1"], "content": ["A short answer."]}).to_excel(items, index=False)
    task = tmp_path / "task.txt"
    task.write_text("Judge short answers of pupils.")
    code = main(["majeval", "run", "--personas", str(personas), "--items", str(items),
                 "--task-file", str(task), "--profile", PROFILE, "-o",
                 str(folder / "results.xlsx")])
    assert_refused_before_any_call(code, capsys.readouterr().err, server,
                                   "may not write in the folder")


@pytest.mark.timeout(120)
def test_aqer_checks_a_read_only_output_folder_before_embedding(tmp_path, capsys, monkeypatch,
                                                                unwritable):  # noqa: F811
    def never(*a, **k):
        raise AssertionError("the answers were scored before the output was checked")

    monkeypatch.setattr("core.aqer.session.AqerSession.run", never)
    headers, rows = sheet_for("aqer_answers", ["yes", "no"])
    source = write_xlsx(tmp_path / "answers.xlsx", headers, rows)
    folder = tmp_path / "locked"
    folder.mkdir()
    unwritable(folder)
    assert main(["aqer", str(source), "-o", str(folder / "aqer.xlsx")]) == 1
    err = capsys.readouterr().err
    assert "may not write in the folder" in err, err
    for output in (tmp_path / "answers", tmp_path):  # no suffix: fine; a folder: refused
        if output.is_dir():
            assert main(["aqer", str(source), "-o", str(output)]) == 1
            assert "is a folder" in capsys.readouterr().err
