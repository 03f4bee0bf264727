"""Small pieces the InteractEval stages share: one LLM call with a plain failure message,
numbered lists for prompts, and matching the component names a model gives back."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from core import prompts
from core.interacteval import _prompts
from core.interacteval.model import Attribute, Dimension, JsonLLM, StageError
from core.llm import LLMFailure, context
from core.runs import Cancelled, CancelToken, Progress

T = TypeVar("T", bound=BaseModel)

#: Longest question a model with structured output may write (one Yes/No question, not a text).
MAX_QUESTION_CHARS = 150
#: The form of a question for a model with structured output: a Yes/No question (it opens with
#: the verb such a question opens with), one line of at most :data:`MAX_QUESTION_CHARS`
#: characters ending with its only question mark (no double quote or backslash: a grammar built
#: from the pattern would let a model close the JSON string early).
YES_NO_OPENERS = ("Is", "Are", "Does", "Do", "Did", "Was", "Were", "Has", "Have", "Can",
                  "Could", "Will", "Would", "Should")
QUESTION_PATTERN = (rf'^({"|".join(YES_NO_OPENERS)}) [^?"\\\n]{{4,{MAX_QUESTION_CHARS - 20}}}\?$')


def one_per_component(schema: dict[str, Any], array: str, entry: str,
                      components: Sequence[str]) -> None:
    """In a reply's JSON ``schema``, make the list ``array`` hold exactly one ``entry`` object per
    component, in order, each with its ``component`` name fixed (``prefixItems``): a model with
    structured output then cannot rename, repeat or skip a component. Validation is unchanged
    (a server that does not hold its model to the schema is checked as before)."""
    item = schema["$defs"][entry]
    exactly(schema, array, [
        {**item, "properties": {**item["properties"], "component": {"const": name}}}
        for name in components])


def exactly(schema: dict[str, Any], array: str, entries: Sequence[dict[str, Any]]) -> None:
    """In a reply's JSON ``schema``, hold the list ``array`` to exactly ``entries`` (JSON
    schemas of its items), in order (``prefixItems`` with as many items at least and at most)."""
    listed = schema["properties"][array]
    listed.pop("items", None)
    listed["prefixItems"] = list(entries)
    listed["minItems"] = listed["maxItems"] = len(entries)


def dimension_values(dimension: Dimension) -> dict[str, str]:
    """A prompt's values ``dimension`` (its name) and ``definition`` (said to be missing when
    the user left it empty)."""
    return {"dimension": dimension.name,
            "definition": dimension.definition.strip() or "(no definition given)"}


def progress_or_silent(progress: Progress | None) -> Progress:
    return progress if progress is not None else Progress()


async def ask(
    llm: JsonLLM,
    template: str,
    schema: type[T],
    values: Mapping[str, Any],
    *,
    stage: str,
    dimension: str,
    cancel: CancelToken | None,
    repeat: int = 0,
    check: Callable[[T], Any] | None = None,
    own_words: Sequence[str] = (),
    refuse_loops: bool = True,
) -> T:
    """One structured call with a prompt template (:func:`core.prompts.ask`: the reply must not
    repeat our instructions, nor itself unless ``refuse_loops`` is off, and must pass ``check``); an LLM failure becomes :class:`StageError`
    whose message names the step and the dimension (``core.runs.Cancelled`` passes through)."""
    try:
        return await prompts.ask(
            llm, _prompts.load(template), schema, values, check=check, cancel=cancel,
            repeat=repeat, own_words=own_words, refuse_loops=refuse_loops,
        )
    except LLMFailure as failure:
        raise StageError(
            f"{stage} for {dimension} did not work: {failure.message}",
            stage=stage,
            dimension=dimension,
            kind=failure.kind,
        ) from failure


def numbered(lines: Sequence[str], prefix: str = "") -> str:
    """``1. first`` / ``2. second`` (with ``prefix`` before each number)."""
    return "\n".join(f"{prefix}{i}. {' '.join(str(line).split())}" for i, line in enumerate(lines, 1))


def attribute_lines(attributes: Sequence[Attribute]) -> str:
    """Attributes as a bullet list for prompts (the sources are not shown to the model)."""
    return "\n".join(f"- {' '.join(a.text.split())}" for a in attributes)


def fold(text: str) -> str:
    return " ".join(str(text).casefold().split()).strip(" .:;-\"'")


def align(given: Sequence[str], expected: Sequence[str]) -> list[int | None]:
    """For each entry of a model's reply, the index of the component it names.

    Matched by name only: exact names (ignoring case, spacing and surrounding punctuation)
    first, then a name whose words stand in the other ("flow" / "logical flow"; not single
    letters inside a word); each component is taken once. An entry whose name fits no free component (a component the model renamed or made up,
    or a repeated name) is None: the caller reports it, nothing is guessed from positions."""
    folded = [fold(e) for e in expected]
    targets = [fold(name) for name in given]
    out: list[int | None] = [None] * len(given)
    used: set[int] = set()
    for pos, target in enumerate(targets):  # exact names first, for every entry
        hit = next((i for i, f in enumerate(folded) if f == target and i not in used), None)
        if hit is not None:
            out[pos] = hit
            used.add(hit)
    for pos, target in enumerate(targets):  # then a name inside the other
        if out[pos] is not None or not target or target in folded:
            continue
        hit = next(
            (i for i, f in enumerate(folded)
             if i not in used and f and (_within(f, target) or _within(target, f))),
            None,
        )
        if hit is not None:
            out[pos] = hit
            used.add(hit)
    return out


def _within(part: str, whole: str) -> bool:
    """Whether the words of ``part`` stand, in order and whole, in ``whole``."""
    return f" {part} " in f" {whole} "


def quoted(names: Sequence[str]) -> str:
    """“a”, “b” (for messages naming what the model wrote)."""
    return ", ".join(f"“{' '.join(str(n).split())}”" for n in names)


def unmatched(given: Sequence[str], positions: Sequence[int | None]) -> list[str]:
    """The names of a reply's entries that :func:`align` could not match."""
    return [name for name, index in zip(given, positions) if index is None]


def unique_attributes(attributes: Sequence[Attribute]) -> list[Attribute]:
    """Attributes in order, without exact repeats (same text and source)."""
    seen: set[tuple[str, str]] = set()
    out: list[Attribute] = []
    for attribute in attributes:
        key = (" ".join(attribute.text.split()), attribute.source)
        if key in seen:
            continue
        seen.add(key)
        out.append(attribute)
    return out


# ------------------------------------------------------------------ inputs that fit the model
def note_label(attributes: Sequence[Attribute], index: int) -> str:
    """"note 12 (by Anna)": which think-aloud attribute, for a message."""
    source = attributes[index].source
    return f"note {index + 1}" + (f" (by {source})" if source else "")


def split_to_fit(items: Sequence[Any], prompt_of: Callable[[Sequence[Any]], Any],
                 limits: context.Limits | None, *, stage: str, dimension: str,
                 reply_of: Callable[[Sequence[Any]], int] | None = None,
                 what: Callable[[int], str] | None = None,
                 shorten: str = "shorten it") -> list[list[Any]]:
    """:func:`core.llm.context.split_items` for a construction step: ``items`` in parts whose
    prompt fits the model; an item that cannot fit alone is a :class:`StageError` (kind
    "too_long") naming it, before any call."""
    try:
        return context.split_items(items, prompt_of, limits, reply_of=reply_of, what=what,
                                   shorten=shorten)
    except context.TooLong as exc:
        raise StageError(f"{stage} for {dimension}: {exc.message}", stage=stage,
                         dimension=dimension, kind="too_long") from None


async def each_part(calls: Sequence[Any]) -> list[Any]:
    """Await the calls of a step's parts together (the model's own limit on calls at once
    applies) and return their results in order; the first failure is raised after all have
    ended (finished answers are kept in the cache for a re-run)."""
    import asyncio

    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, Cancelled):
            raise result
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return list(results)
