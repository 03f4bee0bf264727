"""The one plain notice before a run first sends texts off this computer.

A wizard calls, just before it starts a run with a language model::

    confirm_cloud_use(self, project, profile, proceed=self._start_run)

``proceed()`` is called at once when the texts stay on this computer or the project already
has "don't ask again" for that destination (the rule is :func:`core.privacy.needs_cloud_notice`);
otherwise a window-modal message opens (``open()``, never ``exec()``) and ``proceed()`` runs
only if the user chooses to send. "Don't ask again for this project" is stored in the project.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QMessageBox, QWidget

from core.privacy import (
    deidentification_notice,
    destination,
    needs_cloud_notice,
    remember_cloud_notice,
)
from core.settings import ModelProfile

__all__ = ["SEND_BUTTON", "cloud_notice_text", "confirm_cloud_use"]

log = logging.getLogger("evaldesk.cloud_notice")

SEND_BUTTON = "Send and run"


def cloud_notice_text(profile: ModelProfile, project: Any = None) -> str:
    """The notice's words for a run of ``project`` with ``profile``: where the texts go, the
    rules to check, and whether names and other identifiers are replaced first."""
    where = destination(profile)
    if where.kind == "network":
        whom = f"{where.name}, a computer on your organisation's network"
        rules = "Check that your organisation allows these texts on that server."
    else:
        whom = f"{where.name}, a service on the internet"
        rules = ("Check that your organisation's rules, and the consent of the people who "
                 "wrote them, allow sending them to this service. The service's own terms say "
                 "how long it keeps them.")
    deid = deidentification_notice(project, profile)
    head, colon, rest = deid.partition(":")
    deid_html = f"<b>{html.escape(head)}</b>:{html.escape(rest)}" if colon else html.escape(deid)
    return (
        f"This run sends the texts you evaluate (and the documents of this project) to "
        f"<b>{whom}</b>, through the model profile “{profile.name}”.<br><br>{rules}<br><br>"
        + (f"{deid_html}<br><br>" if deid else "") +
        "To keep them on this computer, choose a model that runs here instead (Settings → "
        "Language models → Look for models on this computer, or Download a model file)."
    )


def confirm_cloud_use(
    parent: QWidget | None,
    project: Any,
    profile: ModelProfile,
    proceed: Callable[[], Any],
    *,
    who: str = "",
) -> QMessageBox | None:
    """Call ``proceed`` now, or after the user agrees to send texts off this computer.
    Returns the open message box (None when no notice was needed)."""
    if not needs_cloud_notice(project, profile):
        proceed()
        return None
    box = QMessageBox(parent)
    box.setObjectName("cloudNotice")
    box.setIcon(QMessageBox.Icon.Information)
    box.setWindowTitle("Your texts will leave this computer")
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(cloud_notice_text(profile, project))
    send = box.addButton(SEND_BUTTON, QMessageBox.ButtonRole.AcceptRole)
    box.addButton("Cancel", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(send)
    can_remember = project is not None and not getattr(project, "read_only", True)
    remember = QCheckBox("Don't ask again for this project")
    remember.setToolTip(
        "EvalDesk keeps your answer in this project file, for this service only."
        if can_remember else "Save the project first: the answer is kept in the project file."
    )
    remember.setEnabled(can_remember)
    box.setCheckBox(remember)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def finished(_result: int) -> None:
        if box.clickedButton() is not send:
            log.info("Run not started: the cloud notice was declined (%s)", profile.name)
            return
        if remember.isChecked():
            try:
                remember_cloud_notice(project, profile, who or "")
            except Exception:
                log.warning("Could not keep 'don't ask again' in the project", exc_info=True)
        proceed()

    box.finished.connect(finished)
    box.open()
    return box
