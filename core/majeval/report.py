"""The results workbook of a MAJ-Eval run.

Sheets (exact names and first columns; ``status``/``note`` columns follow where a value can be
missing, so a failed one says why instead of showing a number):

* ``Items``: ``item``, the judged ``content`` and its ``context``, ``status``, one column per
  dimension (the overall score: mean of the
  groups' final means), ``note``;
* ``Group scores``: ``item``, ``group``, ``dimension``, ``initial_mean``, ``final_mean``,
  ``change`` (both means are over the same agents; empty for a group of one persona, which
  cannot debate: "undefined: one agent"), ``status``, ``note``;
* ``Agent scores``: ``item``, ``group``, ``agent``, ``dimension``, ``initial``, ``final``,
  ``finalised_by`` ("no more comments", "cap", "consensus", "no debate", "failed"),
  ``status``, ``note``;
* ``Feedback``: ``item``, ``group``, ``text`` (the aggregator's synthesis);
* ``Transcripts``: ``item``, ``group``, ``turn``, ``speaker``, ``reason chosen``,
  ``message``, ``scores``; a message longer than :data:`PART_CHARS` is split over several rows
  marked "(part 2 of 3)";
* ``Personas`` (the Personas sheet, importable again), ``Evidence`` (each persona's
  perspective, quote, document, page), ``Agreement`` (Krippendorff's alpha within groups before
  and after the debate, and correlations with human ratings when the items have them),
  ``Read me``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.llm.identity import DEMO_NOTE, is_demo_model
from core.majeval.agreement import (
    AGREEMENT_COLUMNS,
    GroupAlpha,
    HumanAgreement,
    agreement_rows,
    judge_spreads,
    spread_rows,
)
from core.majeval.personas_io import PERSONA_COLUMNS, persona_rows

if TYPE_CHECKING:  # pragma: no cover
    from core.majeval.pipeline import EvaluationRun
    from core.tables import ExportReport

__all__ = ["PART_CHARS", "SHEETS", "failure_warning", "run_description", "transcript_rows",
           "write_results"]

#: Longest message piece in one Transcripts cell (a longer message continues on the next row).
PART_CHARS = 8000
SHEETS = ["Items", "Group scores", "Agent scores", "Feedback", "Transcripts", "Personas",
          "Evidence", "Agreement"]
GROUP_COLUMNS = ["item", "group", "dimension", "initial_mean", "final_mean", "change", "status",
                 "note"]
AGENT_COLUMNS = ["item", "group", "agent", "dimension", "initial", "final", "finalised_by",
                 "status", "note"]
FEEDBACK_COLUMNS = ["item", "group", "text"]
TRANSCRIPT_COLUMNS = ["item", "group", "turn", "speaker", "reason chosen", "message", "scores"]
EVIDENCE_COLUMNS = ["group", "persona", "perspective", "evidence", "document", "page", "found"]


def _split(text: str, limit: int = PART_CHARS) -> list[str]:
    """Pieces of at most ``limit`` characters, cut at a paragraph, sentence or word end."""
    pieces = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n"), window.rfind(". ") + 1, window.rfind(" "))
        if cut < limit // 2:
            cut = limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    pieces.append(rest)
    return pieces


def transcript_rows(run: EvaluationRun) -> list[dict[str, Any]]:
    rows: list[tuple[str, str, int | None, str, str, str, dict[str, int] | None]] = []
    for item in run.items:
        for g in item.groups:
            for a in g.agents:  # phase 1 first, as turn 0
                if a.initial is not None:
                    rows.append((item.item_id, g.group, 0, a.agent,
                                 "Phase 1: everyone evaluates alone.", a.initial.rationale,
                                 a.initial.scores))
                elif a.error:
                    rows.append((item.item_id, g.group, 0, a.agent,
                                 "Phase 1: everyone evaluates alone.", f"FAILED: {a.error}",
                                 None))
            for t in g.turns:
                message = f"FAILED: {t.error}" if t.error else t.message
                if t.kind == "final" and not t.error:
                    message = f"Final evaluation: {message}"
                rows.append((item.item_id, g.group, t.turn, t.speaker, t.reason, message,
                             t.scores))
            if g.stop_reason:
                rows.append((item.item_id, g.group, None, "(coordinator)",
                             f"The debate ended: {g.stop_reason}.", "", None))
    out = []
    for item_id, group, turn, speaker, reason, message, scores in rows:
        score_text = ", ".join(f"{k}: {v}" for k, v in scores.items()) if scores else ""
        parts = _split(message or "")
        for k, part in enumerate(parts, 1):
            if len(parts) > 1:
                part = f"(part {k} of {len(parts)}) {part}"
            out.append({"item": item_id, "group": group, "turn": turn, "speaker": speaker,
                        "reason chosen": reason if k == 1 else "(continued)", "message": part,
                        "scores": score_text if k == len(parts) else ""})
    return out


def failure_warning(run: EvaluationRun) -> str:
    """A warning when most debates failed (the results cannot be used as they stand), saying
    when it is because the model repeated the instructions instead of answering; "" when most
    debates finished."""
    failed, copied, total = len(run.failed_units), len(run.copied_units), len(run.groups)
    if not total or failed * 2 <= total:
        return ""
    if copied * 2 > total:
        return (f"Most debates ({copied} of {total}) failed because the model repeated the "
                "instructions instead of answering: this model is too small for MAJ-Eval, so "
                "these results cannot be used. Try a larger model.")
    return (f"Most debates ({failed} of {total}) failed, so these results cannot be used as "
            "they stand; each failure says why in its note. If the model's answers did not "
            "have the expected form, try a larger model.")


def run_description(run: EvaluationRun) -> list[tuple[str, str]]:
    """Which inputs, options and model produced ``run`` (the results page and the Read me)."""
    s = run.settings
    groups = list(dict.fromkeys(p.group for p in run.personas))
    lonely = [g for g in groups if sum(1 for p in run.personas if p.group == g) == 1]
    n_items = len(run.items)
    out = [
        ("Run", run.finished_at or "(date not recorded)"),
        ("Model", run.model_text if run.model else "(not recorded)"),
        *([("Demo model", DEMO_NOTE)] if is_demo_model(run.model_used) else []),
        ("Task", run.task),
        ("Items", f"{n_items} item{'s' if n_items != 1 else ''}"
         + (f" from {run.items_source}" if run.items_source else "")),
        ("Personas", f"{len(run.personas)} persona{'s' if len(run.personas) != 1 else ''} in "
         f"{len(groups)} group{'s' if len(groups) != 1 else ''} ({', '.join(groups)})"
         + (f"; {', '.join(lonely)}: one persona, no debate" if lonely else "")),
        ("Dimensions", "; ".join(f"{d.name}: {d.definition}" if d.definition else d.name
                                 for d in run.dimensions)),
        ("Scale", run.scale.describe()),
        ("Debate", "no debate (phase 1 scores only; ablation)" if s.no_debate else
         f"up to {s.rounds} round{'s' if s.rounds != 1 else ''} (turn limit = rounds x agents "
         "of the group)"),
        ("Roles", "simple roles: one sentence per persona from the group's description and the "
         "persona's specialty (ablation)" if s.simple_roles else
         "full personas (five attributes)"),
    ]
    return out


def write_results(
    path: str | os.PathLike[str],
    run: EvaluationRun,
    *,
    alphas: Sequence[GroupAlpha] = (),
    humans: Sequence[HumanAgreement] = (),
    readme: Sequence[tuple[str, str]] = (),
    extra_sheets: Sequence[Any] = (),
) -> ExportReport:
    """Write the results workbook (see the module docstring). ``alphas``/``humans`` come from
    :func:`core.majeval.agreement.within_group_alpha` / ``human_agreement``; ``extra_sheets``
    (:class:`core.tables.Sheet`) come last (e.g. the conditions' comparison, the Stability
    sheet)."""
    import pandas as pd

    from core.tables import Sheet, write_workbook

    dims = [d.name for d in run.dimensions]
    judged = {i.id: i for i in run.item_inputs}
    items = []
    for r in run.items:
        source = judged.get(r.item_id)
        row: dict[str, Any] = {"item": r.item_id,
                               "content": source.content if source else None,
                               "context": source.context if source else None,
                               "status": r.status}
        for d in dims:
            row[d] = r.overall.get(d)
        row["note"] = r.error
        items.append(row)
    groups, agents, feedback = [], [], []
    for r in run.items:
        for g in r.groups:
            for d in dims:
                before, after = g.initial_mean.get(d), g.final_mean.get(d)
                one = len(g.agents) == 1
                change = None if one or before is None or after is None else after - before
                note = "; ".join(x for x in ("undefined change: one agent" if one else "",
                                             g.error, g.note) if x)
                groups.append({"item": r.item_id, "group": g.group, "dimension": d,
                               "initial_mean": before, "final_mean": after, "change": change,
                               "status": g.status, "note": note})
            for a in g.agents:
                for d in dims:
                    agents.append({
                        "item": r.item_id, "group": g.group, "agent": a.agent, "dimension": d,
                        "initial": a.initial.scores.get(d) if a.initial else None,
                        "final": a.final.get(d) if a.final and a.status == "ok" else None,
                        "finalised_by": a.finalised_by, "status": a.status, "note": a.error})
            feedback.append({"item": r.item_id, "group": g.group,
                             "text": g.feedback or (f"FAILED: {g.feedback_error}"
                                                    if g.feedback_error else
                                                    f"FAILED: {g.error}")})
    evidence = [{"group": p.group, "persona": p.name, "perspective": p.perspective,
                 "evidence": p.evidence, "document": p.document, "page": p.page,
                 "found": "yes" if p.page is not None else
                 ("not found in the document" if p.evidence else "no evidence given")}
                for p in run.personas]
    spreads = judge_spreads(run)
    agreement = [*agreement_rows(alphas, humans), *spread_rows(spreads)]
    frame = pd.DataFrame
    score_format = {c: "0.00" for c in ["initial_mean", "final_mean", "change", *dims]}
    sheets = [
        Sheet("Items", frame(items, columns=["item", "content", "context", "status", *dims,
                                             "note"]),
              "overall score per dimension: the mean of the groups' final means",
              number_formats=score_format),
        Sheet("Group scores", frame(groups, columns=GROUP_COLUMNS),
              "each group's mean before (phase 1) and after the debate over the same agents, "
              "computed by EvalDesk",
              number_formats=score_format),
        Sheet("Agent scores", frame(agents, columns=AGENT_COLUMNS),
              "every agent's phase 1 and final score, and how the final one came about"),
        Sheet("Feedback", frame(feedback, columns=FEEDBACK_COLUMNS),
              "the aggregator's synthesis per item and group", widths={"text": 100}),
        Sheet("Transcripts", frame(transcript_rows(run), columns=TRANSCRIPT_COLUMNS),
              "every debate turn with the coordinator's reason; long messages continue on the "
              "next rows, marked (part k of n)",
              widths={"reason chosen": 50, "message": 90, "scores": 30}),
        Sheet("Personas", frame(persona_rows(run.personas, run.group_descriptions),
                                     columns=PERSONA_COLUMNS),
              "the personas used (this sheet can be imported again)"),
        Sheet("Evidence", frame(evidence, columns=EVIDENCE_COLUMNS),
              "where each persona's perspective comes from"),
    ]
    if agreement:
        sheets.append(Sheet("Agreement", frame(agreement, columns=AGREEMENT_COLUMNS),
                            "Krippendorff's alpha (ordinal) among each group's agents, before "
                            "and after the debate; correlations with human ratings, with the "
                            "length baseline (the items' number of words) beside them; whether "
                            "the debate tells the items apart at all (FLAGGED in the note when "
                            "it may not be reading them)",
                            number_formats={"value": "0.000", "p_value": "0.0000",
                                            "ci_low": "0.000", "ci_high": "0.000"}))
    warning = failure_warning(run)
    info = [
        *([("WARNING", warning)] if warning else []),
        *[("WARNING", spread.sentence) for _dim, spread in spreads if spread.flagged],
        ("Method", "MAJ-Eval (Chen et al.): stakeholder personas debate in groups"),
        *run_description(run),
        ("Coordinator", ("next speaker = among the agents who may speak (nobody speaks more "
         "than two turns ahead of the least heard, so everyone has the floor), the one "
         "addressed by name in the last message, else the one whose scores differ most from "
         "the others' median, then who has spoken least, then list order; stops when everyone "
         "has spoken and nobody disagrees")),
        ("Means", ("each group's mean before and after the debate is over the same agents: an "
         "agent that failed during the debate is left out of both; a group of one persona "
         "cannot debate (its change and agreement are undefined: one agent)")),
        ("Failures", (f"{len(run.failed_units)} of {len(run.groups)} debates had a failure"
         + (f", {len(run.copied_units)} of them because the model repeated the instructions"
            if run.copied_units else "")
         + "; failed values are empty with the reason in 'note', never a default score")),
        ("Written", datetime.now().strftime("%Y-%m-%d %H:%M")),
        *readme,
    ]
    edited = [f"{p.name} ({p.group})" for p in run.personas if p.edited]
    if edited:
        info.append(("Personas changed by a person", "; ".join(edited)))
    return write_workbook(path, [*sheets, *extra_sheets], info)
