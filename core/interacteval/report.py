"""InteractEval's Excel files: the checklist file (share, edit outside the app, read back) and
the results workbook of a scoring run.

Checklist file (:func:`write_checklists`; read back by
:func:`core.interacteval.inputs.read_checklists`):

* ``Checklist``: ``dimension``, ``component``, ``key_question``, ``question``,
  ``source_attributes`` (one attribute per line, ``[model: GPT-4] text`` or
  ``[person: Anna] text``), ``edited_by`` (whoever changes a question puts their name here);
* ``Dimensions``: ``dimension``, ``definition`` (used in the scoring prompt);
* ``Attributes``: every think-aloud attribute with its source and the component it was grouped
  under (written by ``checklist build``; not needed for reading back);
* ``Samples``: the rated samples shown in the think-aloud (``dimension``, ``row``, ``score``,
  ``source``, ``text``); read back, so that ``checklist score`` flags a scored text that is one
  of them and leaves it out of the agreement;
* ``Read me``.

Results workbook (:func:`write_results`): ``Scores``, ``Answers``, ``Checklists``,
``Attributes``, ``Agreement``, ``Read me``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.interacteval.model import (
    ANSWER_COLUMNS,
    CHECKLIST_COLUMNS,
    SCORE_COLUMNS,
    Attribute,
    Checklist,
)
from core.llm.identity import DEMO_NOTE, is_demo_model

if TYPE_CHECKING:  # pragma: no cover
    from core.interacteval.agreement import DimensionAgreement
    from core.interacteval.pipeline import ChecklistBuild, ScoringRun
    from core.tables import ExportReport

__all__ = [
    "ATTRIBUTE_COLUMNS",
    "SAMPLE_COLUMNS",
    "format_attributes",
    "parse_attributes",
    "run_lines",
    "samples_line",
    "samples_summary",
    "spread_lines",
    "write_checklists",
    "write_results",
]

CHECKLIST_SHEET = "Checklist"
DIMENSIONS_SHEET = "Dimensions"
ATTRIBUTES_SHEET = "Attributes"
ATTRIBUTE_COLUMNS = ["dimension", "attribute", "source", "source_kind", "component"]
SAMPLES_SHEET = "Samples"
SAMPLE_COLUMNS = ["dimension", "row", "score", "source", "text"]
LEFT_OUT = "(left out when grouping)"

_TAG = re.compile(r"^\[(model|person|unknown)\s*:\s*([^\]]*)\]\s*(.*)$", re.IGNORECASE)
_EXPORT_QUOTE = re.compile(r"^'(?=[=+\-@\t\r\n])")  # \r reads back as \n (XML)


def format_attributes(attributes: Sequence[Attribute]) -> str:
    """One attribute per line, tagged with its source."""
    return "\n".join(a.label() for a in attributes)


def parse_attributes(text: str) -> list[Attribute]:
    """The inverse of :func:`format_attributes`; an untagged line becomes an attribute of
    unknown source (someone typed it in by hand)."""
    out = []
    for line in str(text).splitlines():
        line = _EXPORT_QUOTE.sub("", line.strip()).lstrip("-•* ").strip()
        if not line:
            continue
        match = _TAG.match(line)
        if match and match.group(3).strip():
            kind = match.group(1).lower()
            out.append(Attribute(text=match.group(3).strip(), source=match.group(2).strip(),
                                 source_kind=kind))  # type: ignore[arg-type]
        else:
            out.append(Attribute(text=line, source="", source_kind="unknown"))
    return out


def _checklist_frame(checklists: Sequence[Checklist]):
    import pandas as pd

    rows = [
        {
            "dimension": c.dimension,
            "component": item.component,
            "key_question": item.key_question,
            "question": item.question,
            "source_attributes": format_attributes(item.source_attributes),
            "edited_by": item.edited_by,
        }
        for c in checklists
        for item in c.items
    ]
    return pd.DataFrame(rows, columns=CHECKLIST_COLUMNS)


def _dimensions_frame(checklists: Sequence[Checklist]):
    import pandas as pd

    return pd.DataFrame([{"dimension": c.dimension, "definition": c.definition}
                         for c in checklists], columns=["dimension", "definition"])


def _attributes_frame(checklists: Sequence[Checklist], builds: Sequence[ChecklistBuild] = ()):
    import pandas as pd

    rows: list[dict[str, Any]] = []
    built = {b.checklist.dimension for b in builds}
    for build in builds:
        where: dict[tuple[str, str], str] = {}
        for cluster in build.clusters.clusters:
            for attribute in cluster.attributes:
                where.setdefault((attribute.text, attribute.source), cluster.component)
        for attribute in build.attributes:
            rows.append({"dimension": build.dimension.name, "attribute": attribute.text,
                         "source": attribute.source, "source_kind": attribute.source_kind,
                         "component": where.get((attribute.text, attribute.source), LEFT_OUT)})
    for checklist in checklists:
        if checklist.dimension in built:
            continue
        seen: set[tuple[str, str]] = set()
        for item in checklist.items:
            for attribute in item.source_attributes:
                key = (attribute.text, attribute.source)
                if key in seen:
                    continue
                seen.add(key)
                rows.append({"dimension": checklist.dimension, "attribute": attribute.text,
                             "source": attribute.source, "source_kind": attribute.source_kind,
                             "component": item.component})
    return pd.DataFrame(rows, columns=ATTRIBUTE_COLUMNS)


def _samples_frame(checklists: Sequence[Checklist]):
    import pandas as pd

    rows = [{"dimension": c.dimension, "row": s.row, "score": s.score, "source": s.source,
             "text": s.text} for c in checklists for s in c.samples]
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)


def samples_line(checklist: Checklist) -> str:
    """The think-aloud samples of a checklist in plain words (Read me sheets)."""
    if not checklist.samples:
        return "none recorded (no scored text is flagged as a think-aloud sample)"
    shown = ", ".join(
        (f"row {s.row}" if s.row is not None else f"“{_start(s.text)}”")
        + (f" (score {s.score:g})" if math.isfinite(s.score) else "")
        for s in checklist.samples)
    return (f"{len(checklist.samples)}: {shown}. A scored text that is one of them is flagged "
            "and left out of the agreement with human scores unless you include it.")


def _start(text: str, words: int = 8) -> str:
    parts = " ".join(str(text).split()).split(" ")
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def _sheet_specs(checklists: Sequence[Checklist], builds: Sequence[ChecklistBuild] = ()):
    from core.tables import Sheet

    return [
        Sheet(CHECKLIST_SHEET, _checklist_frame(checklists),
              "One row per checklist question. Edit, add or delete rows; put your name in "
              "edited_by when you change a question.",
              widths={"dimension": 14, "component": 24, "key_question": 40, "question": 60,
                      "source_attributes": 70, "edited_by": 14}),
        Sheet(DIMENSIONS_SHEET, _dimensions_frame(checklists),
              "The definition of each dimension, used in the scoring prompt.",
              widths={"dimension": 16, "definition": 100}),
        Sheet(ATTRIBUTES_SHEET, _attributes_frame(checklists, builds),
              "The think-aloud attributes, who gave them and the component they were grouped "
              "under.", widths={"dimension": 14, "attribute": 90, "source": 20,
                               "source_kind": 12, "component": 26}),
        Sheet(SAMPLES_SHEET, _samples_frame(checklists),
              "The rated samples shown in the think-aloud of each dimension. They helped build "
              "the checklist, so a scored text that is one of them is left out of the agreement "
              "by default.", widths={"dimension": 14, "source": 40, "text": 90}),
    ]


def write_checklists(
    path: str | os.PathLike[str],
    checklists: Sequence[Checklist],
    *,
    builds: Sequence[ChecklistBuild] = (),
    readme: Sequence[tuple[str, str]] = (),
    replace_existing: bool = False,
) -> ExportReport:
    """Write a checklist file (see the module docstring). ``builds`` adds the full attribute
    list (with left-out attributes) and the construction notes to the Read me.
    ``replace_existing``: the caller read the file at ``path`` and writes its checklists back
    (with one added), so it may replace it even when EvalDesk did not write it."""
    from core.interacteval.checklist_scoring import SCORE_RULE
    from core.tables import write_workbook

    info: list[tuple[str, str]] = [
        ("What this is", (
            "InteractEval checklists: Yes/No questions per dimension built from think-aloud "
            "attributes of people and models (Chu, Kim & Yi, CHI 2025).")),
        ("How to edit", (
            "Change questions on the Checklist sheet (keep the column names), put your name in "
            "edited_by, save, and load the file again in EvalDesk or with "
            "'evaldesk checklist score --checklist FILE'.")),
        ("Scoring rule", SCORE_RULE),
        ("Written", datetime.now().strftime("%Y-%m-%d %H:%M")),
        *readme,
    ]
    for checklist in checklists:
        info.append((f"{checklist.dimension}: think-aloud samples", samples_line(checklist)))
    for build in builds:
        name = build.dimension.name
        counts = (f"{len(build.attributes)} ({len(build.think_aloud.attributes)} from models, "
                  f"{len(build.notes)} from people)")
        info.append((f"{name}: attributes", counts))
        info.append((f"{name}: components", "; ".join(build.components)))
        if not build.validated:
            info.append((f"{name}: validation", "skipped: the sub-questions are the checklist"))
        for failure in build.think_aloud.failures:
            info.append((f"{name}: think-aloud failed", f"{failure.who}: {failure.message}"))
        for remark in [*build.clusters.remarks, *build.checklist.remarks]:
            info.append((f"{name}: note", remark))
        for group in build.sub_questions:
            if group.note:
                info.append((f"{name}: note", f"{group.component}: {group.note}"))
    return write_workbook(path, _sheet_specs(checklists, builds), info,
                          replace_existing=replace_existing)


# ------------------------------------------------------------------------------ reading back
# ------------------------------------------------------------------------------- results
def _scores_frame(run: ScoringRun):
    import pandas as pd

    has_human = any(s.human is not None for s in run.scores)
    legacy = run.settings.counting == "legacy"
    columns = list(SCORE_COLUMNS)
    columns.insert(columns.index("dimension") + 1, "text")  # the judged text beside its score
    if has_human:
        columns.append("human_score")
    if legacy:
        columns.append("legacy_score")
    rows = []
    for s in run.scores:
        row = {
            "text_id": s.text_id, "source_id": s.source_id, "system": s.system,
            "dimension": s.dimension, "status": s.status,
            "score": s.score if s.status == "ok" else None,
            "answered": s.answered, "questions": s.questions,
            "unanswered": ", ".join(f"q{n}" for n in s.unanswered),
            "think_aloud_sample": "yes" if s.think_aloud_sample else "no",
            "note": s.note,
            "text": s.text or None,
        }
        if has_human:
            row["human_score"] = s.human
        if legacy:
            row["legacy_score"] = s.legacy_score if s.status == "ok" else None
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def _outcome_counts(run: ScoringRun) -> str:
    incomplete = sum(1 for s in run.scores if s.status == "incomplete")
    failed = sum(1 for s in run.scores if s.status == "failed")
    return f"{len(run.scored)} scored, {incomplete} incomplete, {failed} failed"


def _answers_frame(run: ScoringRun):
    import pandas as pd

    rows = [
        {"text_id": s.text_id, "dimension": s.dimension, "question_no": f"q{a.number}",
         "question": a.question, "answer": a.answer or "(unanswered)", "raw_answer": a.raw}
        for s in run.scores
        for a in s.answers
    ]
    return pd.DataFrame(rows, columns=ANSWER_COLUMNS)


def samples_summary(run: ScoringRun, *, include_samples: bool = False) -> str:
    """Which scored texts are think-aloud samples and what the agreement did with them."""
    flagged: dict[str, list[str]] = {}
    for score in run.scores:
        if score.think_aloud_sample:
            flagged.setdefault(score.dimension, []).append(score.text_id)
    if not flagged:
        return "none of the scored texts is a think-aloud sample"
    n = sum(len(ids) for ids in flagged.values())
    where = "; ".join(f"{d}: {', '.join(ids[:8])}{', ...' if len(ids) > 8 else ''}"
                      for d, ids in flagged.items())
    what = ("included in the agreement on request" if include_samples else
            "left out of the agreement, since they helped build the checklist")
    return (f"{n} scored {'text is a' if n == 1 else 'texts are'} think-aloud "
            f"{'sample' if n == 1 else 'samples'} ({where}): {what}")


def run_lines(run: ScoringRun, *, texts: str = "",
              include_samples: bool = False) -> list[tuple[str, str]]:
    """The run a result comes from, in plain words: when, which texts, checklists, model and
    options (the results screen and the Read me sheet both show these)."""
    from core.interacteval.checklist_scoring import LEGACY_RULE, SCORE_RULE

    settings = run.settings
    lines = [("Scored on", run.date or "(not recorded)")]
    if texts:
        lines.append(("Texts", texts))
    lines += [
        ("Checklists", "; ".join(
            f"{c.dimension} ({len(c.items)} question{'s' if len(c.items) != 1 else ''})"
            for c in run.checklists) or "(none)"),
        ("Model", run.model_text if run.model else "(not named)"),
        *([("Demo model", DEMO_NOTE)] if is_demo_model(run.model_used) else []),
        ("Asked", "the whole checklist in one call per text and dimension"
         if settings.mode == "checklist" else "one question per call"),
        ("Score", LEGACY_RULE if settings.counting == "legacy" else SCORE_RULE),
        ("Think-aloud samples", samples_summary(run, include_samples=include_samples)),
    ]
    return lines


def spread_lines(spreads: Sequence[tuple[str, Any]]) -> list[tuple[str, str]]:
    """The Read me lines of ``core.interacteval.agreement.judge_spreads``: a WARNING per
    dimension whose checklist may not be reading the texts, and the questions answered the
    same way for every text."""
    out = [("WARNING", s.sentence) for _d, s in spreads if s.flagged]
    out += [(f"{d}: questions answered alike", s.question_sentence) for d, s in spreads
            if s.question_sentence]
    return out


def write_results(
    path: str | os.PathLike[str],
    run: ScoringRun,
    *,
    agreement: Sequence[DimensionAgreement] = (),
    readme: Sequence[tuple[str, str]] = (),
    texts: str = "",
    include_samples: bool = False,
    extra_sheets: Sequence[Any] = (),
) -> ExportReport:
    """Write the results workbook of a scoring run. ``texts`` names the texts file (and sheet);
    ``include_samples`` says whether ``agreement`` kept the think-aloud samples;
    ``extra_sheets`` (:class:`core.tables.Sheet`) come last (e.g. the Stability sheet)."""
    import pandas as pd

    from core import stats
    from core.interacteval.agreement import agreement_rows, judge_spreads, spread_rows
    from core.tables import Sheet, write_workbook

    checklists = run.checklists
    spreads = judge_spreads(run.scores)
    agreement_frame = pd.DataFrame([*agreement_rows(agreement), *spread_rows(spreads)],
                                   columns=list(stats.ROW_COLUMNS))
    edited = [f"{c.dimension}: “{i.question}” by {i.edited_by}" for c in checklists
              for i in c.items if i.edited_by]
    info: list[tuple[str, str]] = []
    if run.copy_warning:
        info.append(("WARNING", run.copy_warning))
    info += spread_lines(spreads)
    info += [
        ("What was run", (
            "InteractEval checklist scoring (Chu, Kim & Yi, CHI 2025): a model answers each "
            "checklist question about each text with yes or no.")),
        *run_lines(run, texts=texts, include_samples=include_samples),
        ("Reading answers", (
            "yes/no in any case and with surrounding spaces; an answer starting with yes or no "
            "followed by an explanation counts as that word; JSON true/false count as yes/no; "
            "anything else is unanswered (listed in the unanswered column and on the Answers "
            "sheet), never counted as no.")),
        ("Unanswered questions", (
            "questions without a yes or no answer are asked again once; a text with a question "
            "still unanswered is marked incomplete (the questions are listed) and has no score; "
            "scoring again asks them again. A text with no usable answer at all is marked "
            "failed.")),
        ("Texts scored", (
            f"{len({s.text_id for s in run.scores})} texts × {len(checklists)} dimension(s): "
            f"{_outcome_counts(run)}")),
        ("Exported", datetime.now().strftime("%Y-%m-%d %H:%M")),
    ]
    for checklist in checklists:
        info.append((f"Definition of {checklist.dimension}",
                     checklist.definition or "(none given)"))
    if run.reused:
        info.append(("Resumed", f"{run.reused} scores were kept from an earlier, identical run"))
    if edited:
        info.append(("Questions edited by people", "; ".join(edited)))
    info += list(readme)
    sheets = [
        Sheet("Scores", _scores_frame(run), "One row per text and dimension; a text without a "
              "score (failed, or incomplete with questions still unanswered) says why in the "
              "note; think_aloud_sample marks texts that helped build the checklist.",
              number_formats={"score": "0.000", "human_score": "0.000", "legacy_score": "0.000"},
              widths={"note": 60}),
        Sheet("Answers", _answers_frame(run), "Every answer the model gave, per question.",
              widths={"question": 70, "raw_answer": 20}),
        Sheet("Checklists", _checklist_frame(checklists), "The checklists used.",
              widths={"question": 60, "source_attributes": 70, "key_question": 40}),
        Sheet("Attributes", _attributes_frame(checklists).drop(columns=["component"]),
              "The think-aloud attributes behind the questions, with who gave them.",
              widths={"attribute": 90}),
        Sheet("Agreement", agreement_frame, "Correlation of the checklist scores with the human "
              "scores, per dimension; each row says which kind (per source document averaged, "
              "pooled, per system), how many texts and documents were used, and how many "
              "think-aloud samples were left out. Beside them the length baseline (the texts' "
              "number of words correlated the same way) and whether the checklist tells the "
              "texts apart at all (FLAGGED in the note when it may not be reading them).",
              number_formats={"value": "0.000", "p_value": "0.0000", "ci_low": "0.000",
                              "ci_high": "0.000"}, widths={"note": 80, "comparison": 40}),
    ]
    return write_workbook(path, [*sheets, *extra_sheets], info)
