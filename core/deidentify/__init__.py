"""De-identification: identifiers in a text replaced with stable placeholders before the text
leaves this computer, and the real values put back in what comes back.

    from core.deidentify import Deidentifier, PlaceholderMap

    table = PlaceholderMap.from_json(saved) if saved else PlaceholderMap()
    deid = Deidentifier(table, students=student_column, people=rater_names,
                        extra=[("Lincoln High", "OTHER")], keep=["Grace"], keep_year=False)
    deid.learn(texts)                      # optional: names after titles, in any text order
    sent = deid.deidentify(text)           # .text, .replacements (spans), .counts
    back = deid.restore(reply)             # .text, .invented (placeholders of nothing)
    saved = table.to_json()                # the caller keeps it, on this computer

What it finds is listed in :data:`KIND_LABELS`; what it cannot find, in plain words, in
:data:`CANNOT_FIND`. Pure Python: no model, no network, nothing read from the project.
"""

from core.deidentify.engine import (
    Deidentified,
    Deidentifier,
    Replacement,
    Restored,
    RestoredData,
    SkippedName,
    kind_counts,
)
from core.deidentify.kinds import CANNOT_FIND, KIND_LABELS, KINDS, NAME_KINDS, Limit
from core.deidentify.mapping import PlaceholderMap, placeholder_pattern
from core.deidentify.names import names_from_text

__all__ = [
    "CANNOT_FIND",
    "KINDS",
    "KIND_LABELS",
    "NAME_KINDS",
    "Deidentified",
    "Deidentifier",
    "Limit",
    "PlaceholderMap",
    "Replacement",
    "Restored",
    "RestoredData",
    "SkippedName",
    "kind_counts",
    "names_from_text",
    "placeholder_pattern",
]
