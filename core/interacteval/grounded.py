"""The grounded build path for a model too small to write a checklist (the built-in Gemma 3 270M).

Measured with the built-in model, free writing gives nothing usable: component names that echo
the notes' topic ("the storm"), key questions such as "Is the election a storm?", and the same
answer ("good") for every note when asked whether a note praises or criticises. What it can do
is choose among listed options. So on this path the model only chooses, and the JSON schema
holds it to what exists:

- components: for each note, the model chooses the few words *of that note* that name what it
  checks (an ``enum`` of the note's own word groups), so a component's name is always words of
  a note, and no note can be skipped;
- clustering: a note goes under the component named with its own words; any other note is put
  under a component the model chooses from the listed names;
- questions: each note gives one question in a fixed form that quotes the note
  (:func:`note_question`); this wording is ours, not the model's, and the checklist says so
  (:data:`GROUNDED_REMARK`);
- review: the model chooses which of the numbered questions to keep (at least one per
  component); it cannot write new ones.

Every other model (a larger local file, a server, a cloud model) takes the normal path, in
which the model writes the components and questions itself (:func:`uses_grounded_path`).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "GROUNDED_NOTE",
    "GROUNDED_NOTICE",
    "GROUNDED_REMARK",
    "NO_NOTES",
    "in_note",
    "note_question",
    "note_word_groups",
    "uses_grounded_path",
]

#: Said on each sub-question group built on this path (shown in the wizard and the export).
GROUNDED_NOTE = (
    "Built from the notes' own sentences: each question quotes one note in a fixed form; the "
    "model only chose the components' names (words of the notes) and which questions to keep."
)
#: Said on a component without notes on this path (no question can quote a note).
NO_NOTES = ("This component has no notes, so no question was built for it. Put notes under it "
            "in the attribute groups, or delete it.")
#: Said in the checklist's remarks (the checklist sheet and the Read me).
GROUNDED_REMARK = (
    "This checklist was built from the notes' own sentences, because the built-in model is too "
    "small to write questions: each question quotes one note in a fixed form written by "
    "EvalDesk, and the model only chose the components' names (words of the notes) and which "
    "questions to keep. Read and edit the questions before scoring, or build the checklist "
    "with a larger model."
)

_FUNCTION_WORD_TEXT = (
    "a an the this that these those it its is are was were be been being has have had do does "
    "did of to in on at by for from with without into onto about as than so such like and or "
    "but nor not no very more most each every some any one all both either which who whom "
    "whose what when where why how there their they them he she his her we our you your i my "
    "me can could will would should may might must just only also too up down out over"
)
#: Words that neither start nor end a component's name ("the storm" -> "storm").
_FUNCTION_WORDS = frozenset(_FUNCTION_WORD_TEXT.split())
#: Words that do not start a name either: the verbs of notes written as instructions ("Check
#: if the summary ..."), as models and the paper's authors write them.
_INSTRUCTION_WORDS = frozenset(
    ["check", "ensure", "look", "verify", "see", "make", "assess", "evaluate", "determine",
     "consider", "note", "find", "examine", "confirm", "identify", "judge", "whether"])
_NO_START = _FUNCTION_WORDS | _INSTRUCTION_WORDS
#: Longest component name on this path, in words.
MAX_NAME_WORDS = 4


#: Said on the build page when the builder is the built-in model.
GROUNDED_NOTICE = (
    "The built-in model is too small to write questions: the checklist will be built from the "
    "notes' own sentences (each question quotes one note), and the model only chooses the "
    "components' names and which questions to keep. Choose a larger model for a real checklist."
)


def uses_grounded_path(llm: Any, told: bool | None = None) -> bool:
    """Whether ``llm`` (a model, or a model profile) is the built-in model (a local profile
    without a file of its own), for which the build stages take the grounded path. A profile
    with its own ``.gguf`` file, a server or a cloud model takes the normal path; so does an
    object without a profile (the tests' scripted models) unless a stage is told
    ``grounded=True``: ``told`` (a stage's ``grounded`` argument), when not None, decides."""
    if told is not None:
        return told
    profile = getattr(llm, "profile", llm)
    return bool(getattr(profile, "is_local", False)) and not getattr(profile, "gguf_path", "")


def _function(word: str, words: frozenset[str]) -> bool:
    """Whether ``word`` is one of ``words`` or a contraction of a function word ("it's",
    "don't", "there's"): the built-in model named components "it's" and "allow" from such
    words (issue 28)."""
    if word in words:
        return True
    stem = re.split(r"['’]", word, maxsplit=1)[0]
    return stem != word and (stem in _FUNCTION_WORDS or stem in _CONTRACTED)


#: Stems of negative contractions ("don't", "isn't").
_CONTRACTED = frozenset(["don", "doesn", "didn", "isn", "aren", "wasn", "weren", "can", "won",
                         "shouldn", "wouldn", "couldn", "hasn", "haven", "hadn", "let",
                         "mustn", "needn"])


def note_word_groups(text: str) -> list[str]:
    """The groups of one to :data:`MAX_NAME_WORDS` consecutive words of a note that may name a
    component (neither first nor last word a function word such as "the" or "of", and not
    opening with an instruction's verb such as "check"), in the
    order they appear, without repeats (case kept as in the note). A note with no such group
    gives its first words."""
    words = re.findall(r"[^\W\d_](?:[\w'’-]*\w)?", str(text))
    out: list[str] = []
    seen: set[str] = set()
    for start in range(len(words)):
        for size in range(1, MAX_NAME_WORDS + 1):
            group = words[start:start + size]
            if len(group) < size:
                break
            first, last = group[0].casefold(), group[-1].casefold()
            if _function(first, _NO_START) or _function(last, _FUNCTION_WORDS) or \
                    len(first) < 2:
                continue
            name = " ".join(group)
            if name.casefold() not in seen:
                seen.add(name.casefold())
                out.append(name)
    if not out and words:
        out.append(" ".join(words[:MAX_NAME_WORDS]))
    return out


def in_note(name: str, text: str) -> bool:
    """Whether the words of ``name`` stand, whole and in order, in the note ``text``."""
    def fold(value: str) -> str:
        return " " + " ".join(re.findall(r"[\w'’-]+", str(value).casefold())) + " "
    return bool(name.strip()) and fold(name) in fold(text)


def note_question(text: str) -> str:
    """The fixed-form Yes/No question built from one note ("Yes" is the good answer whether the
    note names a flaw or a quality): the note is quoted as written (a straight double quote
    becomes a single one, so the question stays one JSON-safe line)."""
    quoted = " ".join(str(text).split()).replace('"', "'")
    return ("Does the text avoid the flaw, or have the quality, that this assessor's note "
            f"describes: “{quoted}”?")
