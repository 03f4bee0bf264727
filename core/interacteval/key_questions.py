"""Stage 2.3: key questions (paper section 3.4.3, first half).

For each component a model writes one Yes/No key question built from what the component's
attributes have in common, with "Yes" as the good answer. Key questions become the headings of
the checklist; they are not asked when scoring.
"""

from __future__ import annotations

from functools import cache

from pydantic import BaseModel, Field

from core.interacteval._common import align, ask, progress_or_silent
from core.interacteval.model import AttributeClusters, Dimension, JsonLLM, KeyQuestion, StageError
from core.runs import CancelToken, Progress

__all__ = ["format_clusters", "generate_key_questions"]

STAGE = "Key questions"


class KeyQuestionReply(BaseModel):
    component: str
    question: str = Field(min_length=1)


@cache
def _reply_schema(n: int) -> type[BaseModel]:
    class KeyQuestions(BaseModel):
        key_questions: list[KeyQuestionReply] = Field(min_length=n, max_length=n)

    return KeyQuestions


def format_clusters(clusters: AttributeClusters) -> str:
    blocks = []
    for i, cluster in enumerate(clusters.clusters, 1):
        lines = [f"{i}. {cluster.component}"]
        lines += [f"   - {' '.join(a.text.split())}" for a in cluster.attributes]
        if not cluster.attributes:
            lines.append("   (no notes: use the component's name and the definition)")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


async def generate_key_questions(
    dimension: Dimension,
    clusters: AttributeClusters,
    llm: JsonLLM,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
) -> list[KeyQuestion]:
    """One key question per cluster, in the clusters' order, each carrying its cluster's
    attributes. Raises :class:`StageError`."""
    components = [c.component for c in clusters.clusters]
    if not components:
        raise StageError(f"{STAGE} for {dimension.name} needs at least one component.",
                         stage=STAGE, dimension=dimension.name)
    progress = progress_or_silent(progress)
    progress.start(f"Writing key questions for {dimension.name}", total=1)
    reply = await ask(
        llm, "key_questions", _reply_schema(len(components)),
        {
            "dimension": dimension.name,
            "definition": dimension.definition.strip() or "(no definition given)",
            "clusters": format_clusters(clusters),
            "n_components": len(components),
        },
        stage=STAGE, dimension=dimension.name, cancel=cancel,
    )
    entries = reply.key_questions  # type: ignore[attr-defined]
    questions: list[str | None] = [None] * len(components)
    for entry, index in zip(entries, align([e.component for e in entries], components)):
        if index is not None and questions[index] is None:
            questions[index] = " ".join(entry.question.split())
    missing = [components[i] for i, q in enumerate(questions) if not q]
    if missing:
        raise StageError(
            f"{STAGE} for {dimension.name}: the model gave no question for "
            + ", ".join(f"“{m}”" for m in missing)
            + ". Run the step again or write those questions yourself.",
            stage=STAGE, dimension=dimension.name,
        )
    progress.advance(1)
    return [
        KeyQuestion(component=c.component, question=q or "", attributes=list(c.attributes))
        for c, q in zip(clusters.clusters, questions)
    ]
