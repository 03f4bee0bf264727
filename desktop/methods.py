"""The three evaluation methods as the home screen presents them, and the wizard registry.

A method's wizard registers itself with :func:`register_wizard`; the home screen's button for that
method then opens it. A method without a registered wizard (in a build that leaves one out) has
a button that explains what the method does and what to prepare; it never opens an empty page.

    # in desktop/aqer/__init__.py
    from desktop.methods import register_wizard

    def open_aqer_wizard(main_window) -> None:
        ...

    register_wizard("aqer", open_aqer_wizard)

A method may also register a sample project with :func:`register_sample`; the first-run welcome
(``desktop.first_run``) then offers "Try with sample data" for it:

    register_sample("aqer", open_aqer_sample)   # open_aqer_sample(main_window)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "METHODS",
    "MethodInfo",
    "SampleOpener",
    "WizardOpener",
    "register_sample",
    "register_wizard",
    "sample_for",
    "unregister_sample",
    "unregister_wizard",
    "wizard_for",
]

#: ``open(main_window)``: shows the wizard of one method inside (or beside) the main window.
WizardOpener = Callable[[Any], Any]
#: ``open(main_window)``: opens the method's wizard with its sample data loaded.
SampleOpener = Callable[[Any], Any]


@dataclass(frozen=True)
class MethodInfo:
    """A method described for people who are not programmers."""

    key: str
    name: str
    tagline: str
    what_it_does: str
    use_it_when: str
    you_bring: str
    needs_llm: str
    paper: str
    #: What the sample data shipped with EvalDesk holds (shown next to "Try with sample data").
    sample: str = ""


METHODS: dict[str, MethodInfo] = {
    info.key: info
    for info in (
        MethodInfo(
            key="majeval",
            name="MAJ-Eval",
            tagline="Judge AI-generated content through the eyes of different stakeholders.",
            what_it_does=(
                "Reads research papers you choose, finds the kinds of people they describe "
                "(for example parents, teachers, clinicians) and turns each point of view into "
                "an AI persona that you check and edit. The personas of each group then discuss "
                "every item and score it. You get scores per group and per quality, and a short "
                "account of where the groups agree and disagree."
            ),
            use_it_when=(
                "Quality depends on who is judging: a children's reading quiz seen by parents "
                "and teachers, a medical summary seen by clinicians and patients."
            ),
            you_bring=(
                "A one-paragraph task description, a few PDFs about the people involved, a "
                "spreadsheet of the items to judge (human ratings optional), and a capable "
                "language model."
            ),
            needs_llm="Needs a language model (many calls: a capable model gives real results).",
            paper="Chen et al., Multi-Agent-as-Judge (MAJ-Eval)",
            sample=(
                "Two short made-up reports on what parents and teachers want from reading "
                "questions, and six AI-written questions about a children's story to judge."
            ),
        ),
        MethodInfo(
            key="aqer",
            name="AQER",
            tagline="Score people's answers, and AI answers, when there is no answer key.",
            what_it_does=(
                "Builds a consensus answer for every question from everyone's answers, trusting "
                "people more when their answers agree with the consensus, and repeats until the "
                "scores settle. Each person gets a quality score from 0 to 1; AI answers are "
                "scored by how close they come to the consensus."
            ),
            use_it_when=(
                "Several people (students, crowd workers, experts) answered the same fact-based "
                "questions, nobody wrote model answers, and you want to rank them or check an "
                "AI against them."
            ),
            you_bring=(
                "A spreadsheet of answers (one row per answer, or one row per person and a "
                "column per question); optionally the AI's answers to the same questions."
            ),
            needs_llm="Runs on this computer: no language model needed for scoring.",
            paper="AQER (Information Systems Research)",
            sample=(
                "Eight people's answers to six general-knowledge questions, with the answers "
                "of two AI models to score against them."
            ),
        ),
        MethodInfo(
            key="interacteval",
            name="InteractEval",
            tagline="Score many texts with a Yes/No checklist built from your own judgement.",
            what_it_does=(
                "You and your colleagues note what you look for when rating a quality such as "
                "coherence or relevance; AI models do the same. EvalDesk merges both into an "
                "editable Yes/No checklist for each quality, then answers the checklist for "
                "every text and turns the answers into a 1 to 5 score you can trace back."
            ),
            use_it_when=(
                "You must score many texts (summaries, essays, answers) on a few named "
                "qualities, consistently, and want to see why each score was given."
            ),
            you_bring=(
                "A definition of each quality, four example texts with scores, your notes on "
                "what you look for, a spreadsheet of the texts to score, and a language model."
            ),
            needs_llm="Needs a language model (one call per text and quality).",
            paper="Chu, Kim & Yi, Think Together and Work Better (CHI '25)",
            sample=(
                "Answers four chatbots gave to children's weather questions, two qualities "
                "(clarity, accuracy), rated examples and two teachers' notes."
            ),
        ),
    )
}

_wizards: dict[str, WizardOpener] = {}


def register_wizard(key: str, opener: WizardOpener) -> None:
    """Make the home screen's button for method ``key`` call ``opener(main_window)``."""
    if key not in METHODS:
        raise KeyError(f"Unknown method {key!r}; known methods: {', '.join(METHODS)}")
    _wizards[key] = opener


def unregister_wizard(key: str) -> None:
    _wizards.pop(key, None)


def wizard_for(key: str) -> WizardOpener | None:
    """The registered wizard of ``key``, or None while it has none."""
    return _wizards.get(key)


_samples: dict[str, SampleOpener] = {}


def sample_opener(open_wizard: Callable[..., Any],
                  load: Callable[[Any], Any]) -> Callable[..., Any]:
    """An opener of a method's sample: open its wizard (with the same arguments), then
    ``load(wizard)`` the sample into it; returns the wizard."""

    def open_sample(main_window: Any, *args: Any, **kwargs: Any) -> Any:
        wizard = open_wizard(main_window, *args, **kwargs)
        load(wizard)
        return wizard

    return open_sample


def register_sample(key: str, opener: SampleOpener) -> None:
    """Offer a sample project for method ``key``: ``opener(main_window)`` opens it."""
    if key not in METHODS:
        raise KeyError(f"Unknown method {key!r}; known methods: {', '.join(METHODS)}")
    _samples[key] = opener


def unregister_sample(key: str) -> None:
    _samples.pop(key, None)


def sample_for(key: str) -> SampleOpener | None:
    """The registered sample opener of ``key``, or None while it has none."""
    return _samples.get(key)
