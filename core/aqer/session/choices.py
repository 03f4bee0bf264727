"""The AQER choices kept in the project, and the input files they name (the answers, and a
file of grades): copied into the project, read from the user's file while it is unchanged and
from the project's copy when it is gone."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import paths
from core.aqer.inputs import read_answers, read_responses
from core.aqer.model import AqerChoices
from core.paths import temp_file_beside
from core.project.inputs import open_input, store_input
from core.project.payloads import PayloadType, get_payload, load_or_recover, put_payload
from core.tables import TableError, sheet_states

if TYPE_CHECKING:  # pragma: no cover
    from core.aqer.responses import PreparedResponses
    from core.project import Project
    from core.runs import CancelToken, Progress
    from core.tables import TableRead

__all__ = [
    "ANSWERS_INPUT_KIND",
    "CHOICES",
    "CHOICES_KIND",
    "GRADES_INPUT_KIND",
    "METHOD",
    "OpenedAnswers",
    "answers_file",
    "copy_template",
    "grades_path",
    "load_choices",
    "open_answers",
    "read_prepared",
    "restore_choices",
    "sample_path",
    "save_choices",
    "store_answers_file",
    "store_grades_file",
]

METHOD = "aqer"
#: The stored kind of the choices (its name from before they were called choices).
CHOICES_KIND = "aqer_setup"
ANSWERS_INPUT_KIND = "aqer_answers"
GRADES_INPUT_KIND = "aqer_grades"

#: The user's choices, as kept in the project (version 1: the shape before versions were kept;
#: the column roles are kept flat beside the other choices, see :class:`AqerChoices`).
CHOICES: PayloadType[AqerChoices] = PayloadType(
    CHOICES_KIND, AqerChoices, version=1,
    label="the AQER choices (answers file, columns, embedding model and settings)",
)


def load_choices(project: Project) -> AqerChoices:
    """The choices saved in ``project`` (defaults when there are none). Raises
    :class:`core.project.PayloadUnreadable` when they cannot be read (see
    :func:`restore_choices`)."""
    return get_payload(project, CHOICES, "current") or AqerChoices()


def restore_choices(project: Project) -> tuple[AqerChoices, str]:
    """The choices saved in ``project`` and a message for the user ("" when all is well).
    Choices that cannot be read are kept aside in the project and start afresh."""
    return load_or_recover(project, CHOICES, "current", AqerChoices)


def save_choices(project: Project, choices: AqerChoices) -> None:
    """Store the user's choices now (called whenever one changes)."""
    put_payload(project, CHOICES, "current", choices, origin="human")


def store_answers_file(project: Project, choices: AqerChoices, path: str | Path) -> AqerChoices:
    """Copy ``path`` into the project and return ``choices`` pointing at it (not yet saved).

    A new file (or changed content) resets what depended on the old one: the sheet and its
    header row when the file changed, and the duplicates choice.
    """
    path = Path(path)
    ref = store_input(project, ANSWERS_INPUT_KIND, path)
    same_file = choices.path and Path(choices.path) == path
    update: dict[str, Any] = {
        "path": ref.path,
        "file_name": ref.file_name,
        "content_hash": ref.content_hash,
        "input_id": ref.input_id,
    }
    if not same_file:
        update["sheet"] = None
        update["header_row"] = None
    if ref.content_hash != choices.content_hash:
        update["duplicates"] = "error"
    return choices.model_copy(update=update)


def answers_file(project: Project, choices: AqerChoices) -> tuple[Path, str]:
    """The file to read for ``choices`` and a note for the user ("" when all is as chosen):
    the user's file when it is still there, else the project's copy (``core.project.inputs``)."""
    opened = open_input(project, ANSWERS_INPUT_KIND, choices.answers_ref)
    if opened.changed:
        raise ValueError(
            f"The answers file {opened.path} changed since its columns were checked. Go back to "
            "the first page and choose it again so EvalDesk reads the new version."
        )
    return opened.path, opened.note


def store_grades_file(project: Project, choices: AqerChoices, path: str | Path | None,
                      sheet: str | None = None) -> AqerChoices:
    """A file of its own with one grade per person (None: no such file), copied into the
    project like the answers; ``sheet`` is its sheet (None = the first). Not yet saved."""
    if path is None:
        return choices.with_columns(grades_file=None, grades_sheet=None)
    ref = store_input(project, GRADES_INPUT_KIND, Path(path))
    return choices.with_columns(grades_file=ref, grades_sheet=sheet, grades_name_col=None,
                                grades_value_col=None, grade_col=None)


def grades_path(project: Project, choices: AqerChoices) -> Path | None:
    """Where to read the grades file of ``choices`` (the user's file, else the project's
    copy); None when there is none."""
    grades_file = choices.columns.grades_file
    if grades_file is None:
        return None
    opened = open_input(project, GRADES_INPUT_KIND, grades_file)
    if opened.changed:
        raise ValueError(
            f"The grades file {opened.path} changed since it was chosen. Choose it again on the "
            "Columns page (or give it again) so EvalDesk reads the new version."
        )
    return opened.path


@dataclass
class OpenedAnswers:
    """The answers file as :func:`open_answers` found it: the choices naming it and its sheet
    (not saved yet), the workbook's sheets, the sheet read, a note for the user."""

    choices: AqerChoices
    sheets: list[str]
    read: TableRead
    note: str = ""
    #: the sheets Excel does not show: name -> "hidden" or "very hidden"
    hidden: dict[str, str] = field(default_factory=dict)


def open_answers(
    project: Project,
    choices: AqerChoices,
    path: str | Path | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> OpenedAnswers:
    """Read the answers of ``choices`` (or a newly chosen ``path``), keeping a copy in the
    project. A file that changed since it was last read is copied again (so results are
    recomputed); a file that is gone is read from the project's copy. Returns the updated
    choices (not saved)."""
    if path is not None:
        choices = store_answers_file(project, choices, path)
    opened = open_input(project, ANSWERS_INPUT_KIND, choices.answers_ref)
    if opened.changed:
        choices = store_answers_file(project, choices, opened.path)
    sheets, read = read_answers(opened.path, choices.sheet, progress, cancel, choices.header_row)
    choices = choices.model_copy(update={"sheet": read.sheet})
    return OpenedAnswers(choices, sheets, read, opened.note, sheet_states(opened.path))


def read_prepared(project: Project, choices: AqerChoices, path: str | Path) -> PreparedResponses:
    """The answers file at ``path`` (:func:`answers_file`) read and checked as ``choices``
    say: the engine's input."""
    return read_responses(
        path, choices.columns, sheet=choices.sheet, header_row=choices.header_row,
        blank_tokens=choices.blank_tokens, duplicates=choices.duplicates,
        grades_path=grades_path(project, choices),
    )


def copy_template(target: str | Path) -> Path:
    """Copy the example workbook shipped with EvalDesk to ``target``."""
    source = paths.resources_dir() / "samples" / "aqer_template.xlsx"
    target = Path(target)
    problem = paths.file_name_problem(target.name)
    if problem is not None:  # refused before anything is written
        raise TableError(problem, target)
    # a copy beside it, then renamed: the workbook is never seen half-written
    part = temp_file_beside(target, prefix="~evaldesk-", suffix=".xlsx.tmp")
    try:
        shutil.copyfile(source, part)
        os.replace(part, target)
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise
    return target


def sample_path() -> Path:
    """The small sample answers shipped with EvalDesk."""
    return paths.resources_dir() / "samples" / "aqer_sample.xlsx"
