"""What AQER keeps in the project (core.aqer.session): file copies, cache, results."""

from __future__ import annotations

import shutil

import pytest

from core.aqer.model import AqerChoices
from core.aqer.session import copy_template, sample_path
from core.aqer.session.choices import load_choices, open_answers, save_choices
from core.aqer.session.results import load_result, run_choices
from core.project import Project
from tests.core.aqer.aqer_support import TinyEncoder


@pytest.fixture
def project():
    with Project.create_untitled(method="aqer") as p:
        yield p


def _ready(project, path) -> AqerChoices:
    opened = open_answers(project, AqerChoices(), path)
    setup = opened.choices.with_columns(
        question_col="question", worker_col="worker", response_col="response")
    save_choices(project, setup)
    return setup


def test_changed_file_is_read_again_and_recomputed(project, tmp_path):
    import openpyxl

    path = tmp_path / "answers.xlsx"
    shutil.copyfile(sample_path(), path)
    setup = _ready(project, path)
    tiny = TinyEncoder()
    first = run_choices(project, setup, tiny.factory)
    assert load_result(project, setup).run_id == first.run_id

    book = openpyxl.load_workbook(path)
    book["Long"]["C3"] = "There are eight continents."  # Ana changes her answer
    book.save(path)
    opened = open_answers(project, load_choices(project))
    assert "changed since it was last read" in opened.note
    assert opened.choices.content_hash != setup.content_hash
    assert load_result(project, opened.choices) is None  # the old result does not apply
    second = run_choices(project, opened.choices, tiny.factory)
    assert second.embedded == 1  # only the changed answer was embedded
    answers = second.result.responses
    assert "There are eight continents." in answers["response"].tolist()


def test_a_moved_file_is_read_from_the_project_copy(project, tmp_path):
    path = tmp_path / "answers.xlsx"
    shutil.copyfile(sample_path(), path)
    setup = _ready(project, path)
    path.unlink()
    opened = open_answers(project, setup)
    assert "copy saved in the project" in opened.note
    assert len(opened.read.frame) == 60
    stored = run_choices(project, opened.choices, TinyEncoder().factory)
    assert stored.inputs["Note"].startswith("The file")


def test_embeddings_are_cached_per_model(project, tmp_path):
    setup = _ready(project, sample_path())
    tiny = TinyEncoder()
    run_choices(project, setup, tiny.factory)
    assert tiny.made == 1
    other = setup.model_copy(update={"embedding_model": str(tmp_path / "other-model")})
    run_choices(project, other, tiny.factory)
    assert tiny.made == 2 and sum(tiny.calls) == 2 * 57  # another model: embedded again
    again = setup.model_copy(update={"settings": setup.settings.model_copy(
        update={"baselines": False})})
    stored = run_choices(project, again, tiny.factory)
    assert tiny.made == 2 and stored.embedded == 0
    assert "rasa_skill" not in stored.result.workers.columns


def test_a_damaged_setup_is_kept_aside_and_named_never_silently_reset(project):
    from core.aqer.session.choices import restore_choices
    from core.project.payloads import PayloadUnreadable

    project.put_artefact("aqer_setup", "current", {"format": "sideways"}, origin="human")
    with pytest.raises(PayloadUnreadable):
        load_choices(project)
    setup, problem = restore_choices(project)
    assert setup == AqerChoices()
    assert "AQER choices" in problem and "kept in the project" in problem
    kept = project.list_artefacts("aqer_setup.unreadable")
    assert [a.payload for a in kept] == [{"format": "sideways"}]
    assert project.get_artefact("aqer_setup", "current") is None
    assert restore_choices(project) == (AqerChoices(), "")  # told once; the original stays aside


def test_the_template_copy_is_whole_and_leaves_nothing_behind(tmp_path):
    from core import paths

    target = copy_template(tmp_path / "template.xlsx")
    shipped = paths.resources_dir() / "samples" / "aqer_template.xlsx"
    assert target.read_bytes() == shipped.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["template.xlsx"]
    with pytest.raises(FileNotFoundError):
        copy_template(tmp_path / "no such folder" / "template.xlsx")
    assert [p.name for p in tmp_path.iterdir()] == ["template.xlsx"]


def test_the_export_names_the_file_version_the_choices_and_when(project, tmp_path):
    import hashlib

    import pandas as pd

    from core.aqer.session.results import export_result

    path = tmp_path / "answers.xlsx"
    shutil.copyfile(sample_path(), path)
    setup = _ready(project, path)
    setup = setup.model_copy(update={"settings": setup.settings.model_copy(
        update={"blank_answers": "missing"})})
    save_choices(project, setup)
    stored = run_choices(project, setup, TinyEncoder().factory)
    # a stored result comes back with what it was computed from
    again = load_result(project, setup)
    assert again.result.blank_rule == "missing"
    assert again.result.computed_at == stored.result.computed_at != ""
    out = export_result(again, tmp_path / "out.xlsx")
    readme = pd.read_excel(out, sheet_name="Read me", header=None)
    rows = dict(zip(readme[0], readme[1]))
    assert rows["File checksum (SHA-256)"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert rows["Input file"] == str(path)
    assert rows["Embedding model"] == "tiny-test-encoder"
    assert rows["Blank answers"].startswith("Not counted. Chosen by you")
    assert rows["Scored on"].endswith("UTC")
    # other choices: not this result
    other = setup.model_copy(update={"settings": setup.settings.model_copy(
        update={"blank_answers": "worst"})})
    assert load_result(project, other) is None


def test_cells_are_stored_as_plain_json_values():
    import numpy as np
    import pandas as pd

    from core.aqer.session.results import plain

    cells = [None, np.float64("nan"), np.float64("inf"), float("-inf"), pd.NA, pd.NaT,
             np.datetime64("NaT"), np.int64(3), np.float64(0.5), np.bool_(True), "x", 2]
    plain = [plain(c) for c in cells]
    assert plain == [None] * 7 + [3, 0.5, True, "x", 2]
    assert [type(v) for v in plain[7:]] == [int, float, bool, str, int]
