"""AQER in a project: the only code that touches the project for AQER. The wizard and
``evaldesk aqer`` both go through :class:`AqerSession` (the command line in a temporary project
when there is no ``--project``), so they read, check, cache, score and export the same way::

    session = AqerSession.open(project, settings=settings, encoders=factory)
    choices = session.choices                          # AqerChoices (problem: session.problem)
    opened = session.open_answers(path)                # the file kept in the project, read
    guessed = guess_roles(opened.read, opened.sheets)  # core.aqer.inputs: ColumnRoles, and why
    session.save_choices(opened.choices.model_copy(update={"columns": guessed.roles}))
    check = session.check_answers(opened.read)         # issues for the user; errors block
    stored = await session.run(progress=p, cancel=c)   # StoredResult; in an executor
    stored = session.load_results()                    # reopening: no recomputation
    others = await session.run_conditions(session.condition_names())   # another model / rule
    table = session.comparison(stored)                 # core.aqer.comparison.Comparison
    curve = await session.run_workers_curve()          # "how many workers do I need?"
    session.export("results.xlsx", who=who, curve=curve, table=table)   # the workbook

What depends on what:

* the answers file is copied into the project (``core.project.inputs``, kind ``aqer_answers``)
  and identified by the hash of its bytes: changing the file changes the hash, so results are
  recomputed; a file that moved or was deleted is read from the project's copy
  (:mod:`~core.aqer.session.choices`);
* embeddings are cached per (embedding model, text) in the project
  (:class:`core.embeddings.CachedEncoder`, a run of step ``embeddings`` per model), so changing
  the number of rounds, the layout or adding a worker embeds only texts never seen before (and
  does not even load the model when every text is known) (:mod:`~core.aqer.session.encoders`);
* a finished AQER result is stored under a run whose settings are the
  :meth:`AqerChoices.fingerprint` (file hash, sheet, layout, columns, duplicates choice, model,
  AQER settings) and found again when nothing it depends on changed
  (:mod:`~core.aqer.session.results`);
* the conditions AQER, simplified AQER, RASA, F1 and BLEU-1 are columns of every result; another
  embedding model or blank-answer rule (``choices.conditions``) is a choice of its own, stored
  under its own fingerprint like any result (:mod:`~core.aqer.session.conditions`);
* the workers curve is stored under a run of step ``workers_curve`` whose settings are the
  fingerprint plus the repetitions and seed (:mod:`~core.aqer.session.workers_curve`);
* the choices are a versioned payload (kind ``aqer_setup``, version 1); choices that cannot be
  read are set aside in the project and :attr:`AqerSession.problem` says so, never silently
  replacing them.
"""

from __future__ import annotations

from core.aqer.model import AqerChoices, AqerCondition, ColumnRoles
from core.aqer.session.aqer_session import INPUT_ROLES, AqerSession
from core.aqer.session.choices import (
    CHOICES,
    CHOICES_KIND,
    OpenedAnswers,
    copy_template,
    load_choices,
    sample_path,
)
from core.aqer.session.encoders import CACHED_DEVICE, EncoderFactory, default_encoder_factory
from core.aqer.session.results import StoredResult

__all__ = [
    "CACHED_DEVICE",
    "CHOICES",
    "CHOICES_KIND",
    "INPUT_ROLES",
    "AqerChoices",
    "AqerCondition",
    "AqerSession",
    "ColumnRoles",
    "EncoderFactory",
    "OpenedAnswers",
    "StoredResult",
    "copy_template",
    "default_encoder_factory",
    "load_choices",
    "sample_path",
]
