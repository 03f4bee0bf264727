"""The project file: one SQLite file (``*.evaldesk``) per evaluation project, and the generic
ways the methods keep their work in it.

* :class:`Project` (``_file``): the file itself: inputs, artefacts with every human edit, runs
  and their results, the LLM call log (see its module for the safety rules).
* :mod:`core.project.payloads`: typed artefacts (a pydantic model stored with its payload
  version, migrated when old, never silently replaced when it cannot be read).
* :mod:`core.project.inputs`: input files (a copy in the project, found again when the user's
  file moved or changed) and the one fingerprint helper.
* :mod:`core.project.units`: the results of a resumable run, unit by unit
  (``core.runs.run_units`` stores through it).

A method's ``session`` module is the only code that uses these for that method.
"""

# The file's public names are listed once, in _file.__all__.
from core.project._file import *
from core.project._file import __all__ as __all__
