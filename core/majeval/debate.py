"""Stage 3, phases 1 and 2: individual evaluations, then the in-group free debate
(paper 3.2, Tables 14-16), for one stakeholder group and one item.

Phase 1 (:func:`evaluate_individually`): every agent judges alone, concurrently: a score per
dimension and a rationale.

Phase 2 (:func:`free_debate`): a deterministic coordinator (ours; the paper's moderator is not
specified) picks who speaks next, one turn at a time:

* ``d[a]`` = sum over dimensions of ``|score[a] - median of the other agents' scores|``
  (current scores; agents that failed take no part);
* **everyone gets the floor**: an agent may speak again only while it is fewer than two turns
  ahead of the active agent who has spoken least (:data:`FLOOR_GAP`); so every agent speaks
  before any agent speaks a third time, and one who has not spoken yet outranks one who has
  spoken twice (the reason says so when this changed the choice);
* among those, the next speaker is the agent with the largest
  ``(challenged, d[a] > 0, d[a], -turns spoken, -position in the roster)``;
* **challenged** means the last message was written by another agent and addresses this agent
  (:func:`is_challenged`): its full name, or a first or last name written as a name
  (capitalised; a name that is also a common word, such as Will or Hope, counts inside a
  sentence or before a comma, not as the first word of a sentence). So "I disagree with Lee"
  challenges "Ms Amy Lee", "Will, I disagree" challenges "Will Thompson", and "this will help"
  or "I hope" challenges nobody;
* an agent that answers NO MORE COMMENTS (``no_more_comments`` true, or a message that starts
  with those words) gives its final scores and leaves the active list;
* the debate stops early once every agent has spoken at least once and nobody disagrees
  (every ``d`` is 0); the agents still active keep their current scores ("consensus");
* the turn cap is ``rounds x number of agents``; at the cap every agent still active is asked
  once for its final evaluation ("cap"), concurrently.

What an agent reads fits the model's context window (``core.llm.context``): its standing
instructions (persona, task, item, the group's first evaluations) come first and never change
during the debate, so the engine's prompt cache keeps them; the discussion follows, and when it
outgrows the window its oldest turns are left out in one step (down to about half the room, a
line saying which turns and the latest scores given in them), so later requests again share a
prefix. The first evaluations' rationales are shortened only when they do not fit even without a
discussion. An item whose standing instructions alone do not fit is refused before the run
(:func:`too_long`).

Every turn is logged with the coordinator's reason, a readable sentence. A failed call marks
that agent failed (it leaves the debate; the others go on); it never gets a made-up score.
"""

from __future__ import annotations

import asyncio
import re
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from core import prompts
from core.llm import LLMFailure, Rejection, context
from core.majeval import _prompts
from core.majeval.model import (
    AgentEvaluation,
    AgentResult,
    DebateSettings,
    DebateTurn,
    Dimension,
    GroupResult,
    Item,
    JsonLLM,
    Persona,
    Scale,
    debate_reply_schema,
    evaluation_schema,
    scores_of,
)
from core.majeval.persona_construction import simple_role
from core.prompts import PromptTemplate
from core.runs import CancelToken

__all__ = [
    "NO_MORE_COMMENTS",
    "Coordinator",
    "agent_identity",
    "evaluate_individually",
    "free_debate",
    "is_challenged",
    "too_long",
]

NO_MORE_COMMENTS = "NO MORE COMMENTS"
#: Why a group of one persona has no debate (and no agreement within the group).
ONE_AGENT = ("one agent: a group with a single persona cannot debate, so its own first "
             "evaluation is final")
_TITLES = {"dr", "mr", "mrs", "ms", "miss", "mx", "prof", "professor", "sir", "dame"}
#: An agent may speak again only while it is fewer than this many turns ahead of the active
#: agent who has spoken least: everyone speaks before anyone speaks a third time.
FLOOR_GAP = 2

#: Names that are also everyday English words ("will", "hope", "may"). Such a name counts as
#: addressing its agent only when written as a name: capitalised inside a sentence ("I agree
#: with Will"), or at the start of a sentence followed by a comma ("Will, I disagree").
COMMON_WORD_NAMES = frozenset({
    "will", "hope", "may", "mark", "bill", "grace", "faith", "joy", "rose", "dawn", "sunny",
    "summer", "winter", "spring", "autumn", "april", "june", "august", "frank", "grant", "chase",
    "drew", "pat", "rob", "sue", "jack", "ray", "art", "guy", "don", "gene", "carol", "bob",
    "nick", "max", "chuck", "rusty", "sandy", "holly", "ivy", "iris", "lily", "daisy", "pearl",
    "ruby", "amber", "olive", "violet", "hazel", "heather", "jade", "crystal", "angel", "honey",
    "sky", "river", "brook", "forest", "stone", "field", "fields", "price", "miles", "page",
    "lane", "street", "bush", "love", "hunter", "fisher", "baker", "cook", "mason", "carpenter",
    "turner", "walker", "ward", "bishop", "knight", "pope", "cash", "noble", "justice", "patience",
    "prudence", "mercy", "charity", "verity", "harmony", "melody", "storm", "rain", "snow",
    "frost", "wolf", "fox", "swan", "crane", "finch", "lamb", "bird", "gray", "grey", "golden",
    "silver", "gold", "sterling", "major", "early", "wise", "good", "friend", "child", "power",
    "rush", "hardy", "bright", "moody", "sweet", "dear", "hall", "church", "bank", "banks",
    "marsh", "reed", "wade", "pierce", "cliff", "glen", "dale", "heath", "dean", "earl", "duke",
    "prince", "queen", "judge", "young", "king", "long", "hill", "wood", "green", "brown", "white",
    "black", "bell", "rich", "strong", "best", "little", "small", "short", "sharp", "penny",
    "buck", "bud",
})


# ----------------------------------------------------------------------------- coordinator
def _name_words(name: str) -> list[str]:
    """The words of a name without titles ("Ms Amy Lee" -> ["Amy", "Lee"])."""
    words = [w.strip(".") for w in re.findall(r"[^\W\d_][\w'.-]*", name)]
    return [w for w in words if w and w.casefold() not in _TITLES]


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip().rstrip("\"'“‘([").rstrip()
    return not before or before[-1] in ".!?:;\n"


def _written_as_name(message: str, start: int, end: int, word: str) -> bool:
    """Whether the occurrence ``message[start:end]`` of the name ``word`` is written as a name."""
    token = message[start:end]
    if not token[:1].isupper():
        return False  # "this will help", "I hope"
    common = word.casefold() in COMMON_WORD_NAMES
    if not common:
        return True
    if token.isupper() and len(token) > 1:
        return False  # "I HOPE SO": shouting, not a name
    if _sentence_start(message, start):
        return message[end:].lstrip()[:1] in (",", "!")  # "Will, I disagree", not "Hope is"
    return True


def is_challenged(message: str, name: str) -> bool:
    """True when ``message`` addresses the agent called ``name``: its full name (every word of
    the name but titles, in order, any case), or one of its first or last names (two letters
    or more) written as a name: capitalised, and for a name that is also a common word
    (:data:`COMMON_WORD_NAMES`) not at the start of a sentence unless a comma follows. So
    "I disagree with Lee" addresses "Ms Amy Lee"; "this will help" does not address
    "Will Thompson", but "Will, I disagree" does; "I hope" does not address "Grace Hope"."""
    message = message or ""
    words = _name_words(name)
    if not words or not message:
        return False
    if len(words) > 1:
        full = r"\s+".join(re.escape(w) for w in words)
        if re.search(rf"(?<![\w'-]){full}(?![\w-])", message, re.IGNORECASE):
            return True
    for word in words:
        if len(word) < 2:
            continue
        for found in re.finditer(rf"(?<![\w'-]){re.escape(word)}(?![\w-])", message,
                                 re.IGNORECASE):
            if _written_as_name(message, found.start(), found.end(), word):
                return True
    return False


def _fmt(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.1f}"


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


class Coordinator:
    """Chooses who speaks next (the rule is in the module docstring). Pure logic, no model:
    feed it each turn with :meth:`record` and ask :meth:`next_turn` for the next speaker."""

    def __init__(
        self,
        agents: Sequence[tuple[str, str]],
        dimensions: Sequence[str],
        scores: Mapping[str, Mapping[str, int]],
        rounds: int,
    ) -> None:
        self.names = {agent_id: name for agent_id, name in agents}
        self.dimensions = list(dimensions)
        self.roster = [agent_id for agent_id, _ in agents if agent_id in scores]
        self.scores = {a: dict(scores[a]) for a in self.roster}
        self.active = list(self.roster)
        self.spoken = {a: 0 for a in self.roster}
        self.cap = max(0, rounds) * len(self.roster)
        self.rounds = rounds
        self.turns = 0
        self.last_speaker: str | None = None
        self.last_message = ""
        self.stop_reason = ""
        #: "done" (nobody active), "consensus" or "cap"; "" while the debate goes on.
        self.stopped_by = ""

    def differences(self, agent: str) -> list[tuple[str, int, float]]:
        """(dimension, the agent's score, the median of the others) where they differ."""
        others = [a for a in self.roster if a != agent]
        out: list[tuple[str, int, float]] = []
        if not others:
            return out
        for dim in self.dimensions:
            median = float(statistics.median(self.scores[a][dim] for a in others))
            own = self.scores[agent][dim]
            if own != median:
                out.append((dim, own, median))
        return out

    def disagreement(self, agent: str) -> float:
        """``d[a]``: sum over dimensions of |own score - median of the others|."""
        return sum(abs(own - median) for _, own, median in self.differences(agent))

    def challenged(self, agent: str) -> bool:
        return (self.last_speaker is not None and self.last_speaker != agent
                and is_challenged(self.last_message, self.names[agent]))

    def _key(self, agent: str) -> tuple:
        d = self.disagreement(agent)
        return (self.challenged(agent), d > 0, d, -self.spoken[agent],
                -self.roster.index(agent))

    def eligible(self) -> list[str]:
        """The active agents who may speak now: those fewer than :data:`FLOOR_GAP` turns ahead
        of the active agent who has spoken least (so every agent speaks before any agent
        speaks a third time, and one who has not spoken outranks one who has spoken twice)."""
        if not self.active:
            return []
        least = min(self.spoken[a] for a in self.active)
        return [a for a in self.active if self.spoken[a] < least + FLOOR_GAP]

    def next_turn(self) -> tuple[str, str] | None:
        """The next speaker and the reason, or None when the debate is over (then
        ``stop_reason`` says why)."""
        if not self.active:
            self.stop_reason = "every agent gave its final evaluation"
            self.stopped_by = "done"
            return None
        everyone_spoke = all(self.spoken[a] > 0 for a in self.roster)
        if everyone_spoke and all(self.disagreement(a) == 0 for a in self.roster):
            self.stop_reason = "every agent has spoken and nobody disagrees any more"
            self.stopped_by = "consensus"
            return None
        if self.turns >= self.cap:
            self.stop_reason = (f"the turn limit was reached ({self.cap} turns = {self.rounds} "
                                f"rounds x {len(self.roster)} agents)")
            self.stopped_by = "cap"
            return None
        chosen = max(self.eligible(), key=self._key)
        return chosen, self.reason(chosen)

    def reason(self, agent: str) -> str:
        """Why ``agent`` speaks now, as a sentence a person can read."""
        name = self.names[agent]
        eligible = self.eligible()
        parts = []
        key = self._key(agent)
        waiting = [a for a in self.active if a not in eligible and self._key(a) > key]
        if waiting:
            counts = sorted({self.spoken[a] for a in waiting})
            spoken = self.spoken[agent]
            parts.append(
                f"everyone gets the floor: {_names([self.names[a] for a in waiting])} "
                f"{'has' if len(waiting) == 1 else 'have'} spoken "
                f"{' or '.join(_times(c) for c in counts)} and "
                f"{name} {'has not spoken yet' if not spoken else 'only ' + _times(spoken)}")
        if self.challenged(agent):
            parts.append(f"{self.names[self.last_speaker or '']} addressed {name} in the last "
                         "message")
        diffs = self.differences(agent)
        d = self.disagreement(agent)
        if diffs:
            detail = ", ".join(f"{dim}: {own} vs median {_fmt(median)}"
                               for dim, own, median in diffs)
            most = all(d >= self.disagreement(a) for a in eligible)
            parts.append(f"{name}'s scores differ {'most ' if most else ''}from the others "
                         f"({detail})")
        elif any(self.disagreement(a) > 0 for a in self.roster):
            parts.append(f"{name} agrees with the others' median")
        else:
            parts.append("nobody disagrees")
        tied = [a for a in eligible if a != agent and self._key(a)[:3] == key[:3]]
        spoken = self.spoken[agent]
        if waiting:
            pass  # already said how often they spoke
        elif tied and any(self.spoken[a] > spoken for a in tied):
            parts.append(f"{name} has spoken least ({_times(spoken) if spoken else 'not yet'})")
        elif spoken == 0:
            parts.append(f"{name} has not spoken yet")
        else:
            parts.append(f"{name} has spoken {_times(spoken)}")
        if tied and all(self.spoken[a] == spoken for a in tied):
            parts.append("first in the list among equals")
        text = "; ".join(parts)
        return text[0].upper() + text[1:] + "."

    def record(self, agent: str, message: str, scores: Mapping[str, int] | None, *,
               finished: bool = False, failed: bool = False) -> None:
        """One turn happened. ``failed``: the agent leaves the debate (its scores no longer
        count); ``finished``: it said NO MORE COMMENTS (its scores stay)."""
        self.turns += 1
        if failed:
            self.roster.remove(agent)
            self.scores.pop(agent, None)
            self.spoken.pop(agent, None)
            if agent in self.active:
                self.active.remove(agent)
            self.cap = self.rounds * max(1, len(self.roster)) if self.roster else 0
            return
        self.spoken[agent] += 1
        if scores is not None:
            self.scores[agent] = dict(scores)
        self.last_speaker, self.last_message = agent, message
        if finished and agent in self.active:
            self.active.remove(agent)


# --------------------------------------------------------------------------------- prompts
def agent_identity(persona: Persona, *, simple: bool = False, description: str = "") -> str:
    """The opening of the agent's instructions: who it is (Table 14), or one sentence in the
    simple-role ablation, built from the group's ``description`` and the persona's specialty
    (:func:`core.majeval.persona_construction.simple_role`)."""
    if simple:
        return simple_role(persona, description)
    lines = [f"You are {persona.name}."]
    for label, value in (("About you", persona.demographics),
                         ("Your perspective", persona.perspective),
                         ("Your specialty", persona.specialty),
                         ("Your psychological traits", persona.psychological_traits),
                         ("Your social relationships", persona.social_relationships)):
        if value.strip():
            lines.append(f"{label}: {value.strip()}")
    return "\n".join(lines)


def _keys(dimensions: Sequence[Dimension]) -> str:
    return ", ".join(f'"{d.name}"' for d in dimensions)


def _scores_description(dimensions: Sequence[Dimension], scale: Scale) -> str:
    return (f'"scores", an object with one key per dimension ({_keys(dimensions)}), each set to '
            f"a whole number from {scale.minimum} to {scale.maximum}")


def evaluation_format(dimensions: Sequence[Dimension], scale: Scale) -> str:
    """How an evaluation is written, in words (no example values a model could copy)."""
    return ('one JSON object with two keys: "rationale", your reasons in at most four '
            f"sentences, and {_scores_description(dimensions, scale)}.")


def debate_format(dimensions: Sequence[Dimension], scale: Scale) -> str:
    """How a debate turn is written, in words (no example values a model could copy)."""
    return ('one JSON object with three keys: "message", what you say to the group in at most '
            'four sentences; "no_more_comments", true when you end your part of the '
            "discussion with these final scores, otherwise false; and "
            f"{_scores_description(dimensions, scale)}, your scores as they stand now.")


#: Placeholders of the agent's prompts that hold our own wording built in code.
OWN_WORDS = ("evaluation_format", "reply_format", "scale")


def _score_text(scores: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in scores.items())


def _system_values(persona: Persona, item: Item, task: str, dimensions: Sequence[Dimension],
                   scale: Scale, simple: bool, descriptions: Mapping[str, str] | None = None
                   ) -> dict[str, str]:
    """The values of the agent's standing instructions (the ``agent`` template)."""
    description = (descriptions or {}).get(persona.group, "")
    return {
        "identity": agent_identity(persona, simple=simple, description=description),
        "task": task,
        "content": item.content, "context": item.context.strip() or "(none given)",
        "dimensions": "\n".join(f"- {d.name}: {d.definition}" if d.definition else f"- {d.name}"
                                for d in dimensions),
        "scale": scale.describe(), "evaluation_format": evaluation_format(dimensions, scale)}


def _initial_text(agents: Sequence[AgentResult], limit: int | None = None) -> str:
    """The group's first evaluations, one line each (the whole list is material: the
    ``debate_shared`` template fences it); ``limit``: at most that many characters of each
    rationale (when all of them would not fit the model's context window)."""
    lines = []
    for a in agents:
        if a.initial is not None:
            why = _one_line(a.initial.rationale)
            if limit is not None and len(why) > limit:
                why = why[:limit].rsplit(" ", 1)[0] + " (…)"
            lines.append(f"- {_one_line(a.agent)}: {_score_text(a.initial.scores)}. {why}")
    return "\n".join(lines) or "(none)"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def turn_line(number: int, speaker: str, message: str, scores: Mapping[str, int] | None = None
              ) -> str:
    """One turn of the discussion as an agent reads it: the speaker's name and message each in
    its own fence (both come from the model, and a persona's name from a document), our own
    words and the scores outside. Each turn's fences depend on that turn only, so the
    discussion only grows from turn to turn (a provider's prompt cache keeps serving it)."""
    shown = f" [scores now: {_score_text(scores)}]" if scores else ""
    return (f"Turn {number}, {prompts.fence(_one_line(speaker), 'name')}: "
            f"{prompts.fence(message, 'message')}{shown}")


def _spoken(turns: Sequence[DebateTurn]) -> list[DebateTurn]:
    return [t for t in turns if not t.error and t.kind == "debate"]


def _discussion_text(turns: Sequence[DebateTurn], first: int = 0) -> str:
    """The discussion as the agents read it; ``first`` > 0 leaves out that many of the oldest
    turns (a discussion longer than the model reads at once), saying so with the latest scores
    given in them."""
    spoken = _spoken(turns)
    lines = []
    if first > 0:
        latest: dict[str, dict[str, int]] = {}
        for t in spoken[:first]:
            if t.scores:
                latest[t.speaker] = t.scores
        given = "; ".join(f"{prompts.fence(_one_line(who), 'name')}: {_score_text(s)}"
                          for who, s in latest.items())
        lines.append(f"(Turns 1 to {spoken[first - 1].turn} are left out here: the discussion "
                     "is longer than can be read at once."
                     + (f" The latest scores given in them: {given}." if given else "") + ")")
    lines.extend(turn_line(t.turn, t.speaker, t.message, t.scores) for t in spoken[first:])
    return "\n".join(lines) or "(nobody has spoken yet)"


class _Window:
    """What of the debate an agent reads, so that its requests fit the model's context
    window (``core.llm.context``): the first evaluations (their rationales shortened only when
    all of them would not fit with the standing instructions) and the discussion from turn
    ``first`` on. The standing instructions come first and never change, so the engine's
    prompt cache keeps them; when the discussion outgrows the window, its oldest turns are left
    out in one step down to about half the room, so the requests after that share a prefix
    again until the next step."""

    def __init__(self, limits: Any, agents: Sequence[AgentResult]) -> None:
        self.limits = limits
        self.agents = agents
        self.rationale_limit: int | None = None
        self.first = 0

    def initial(self) -> str:
        return _initial_text(self.agents, self.rationale_limit)

    def fit_initial(self, systems: Mapping[str, Mapping[str, str]], reply_format: str) -> None:
        """Shorten the first evaluations' rationales until every agent's request with no
        discussion fits."""
        if self.limits is None:
            return
        longest = max((len(a.initial.rationale) for a in self.agents if a.initial), default=0)
        while True:
            widest = max((context.prompt_tokens(agent_template("debate_turn").messages(
                **values, name="", initial_evaluations=self.initial(),
                discussion="(nobody has spoken yet)", reply_format=reply_format))
                for values in systems.values()), default=0)
            if widest <= self.limits.prompt or (self.rationale_limit or longest) <= 40:
                return
            self.rationale_limit = int((self.rationale_limit or longest) * 0.7)

    def discussion(self, turns: Sequence[DebateTurn], step: str,
                   values: Mapping[str, str]) -> str:
        """The discussion for one request of ``step`` with the agent's ``values``."""
        if self.limits is None:
            return _discussion_text(turns)
        template = agent_template(step)

        def tokens(first: int) -> int:
            return context.prompt_tokens(template.messages(
                **values, initial_evaluations=self.initial(),
                discussion=_discussion_text(turns, first)))

        if tokens(self.first) <= self.limits.prompt:
            return _discussion_text(turns, self.first)
        spoken = len(_spoken(turns))
        bare = tokens(spoken)
        goal = bare + (self.limits.prompt - bare) // 2
        while self.first < spoken and tokens(self.first) > goal:
            self.first += 1
        return _discussion_text(turns, self.first)


def too_long(personas: Sequence[Persona], item: Item, task: str,
             dimensions: Sequence[Dimension], scale: Scale, limits: Any, *,
             settings: DebateSettings | None = None,
             descriptions: Mapping[str, str] | None = None) -> Any:
    """Why ``item`` cannot be debated by the group of ``personas`` with a model of ``limits``
    (an agent's standing instructions, which hold the item and its context, do not fit with
    the shortest request): a ``core.llm.context.Overlong``, or None."""
    if limits is None or not personas:
        return None
    settings = settings or DebateSettings()
    widest = 0
    for persona in personas:
        values = _system_values(persona, item, task, dimensions, scale, settings.simple_roles,
                                descriptions)
        messages = agent_template("phase1").messages(**values)
        widest = max(widest, context.prompt_tokens(messages))
    if widest <= limits.prompt:
        return None
    what = f"{item_label(item)}{' with its context' if item.context.strip() else ''}, " \
           f"debated by the group {personas[0].group}"
    return limits.overlong(what, widest, shorten=SHORTEN_ITEM)


#: What to do with an item too long for the model.
SHORTEN_ITEM = "shorten the item (or its context) in the file, or leave it out"


def item_label(item: Item) -> str:
    """"the item “q7” (row 8)" ("the item in row 8" when it has no id of its own)."""
    if item.row and item.id in (f"row {item.row}", str(item.row)):
        return f"the item in row {item.row}"
    return f"the item “{item.id}”" + (f" (row {item.row})" if item.row else "")


#: Steps of phase 2: their standing instructions end with the group's first evaluations.
_PHASE2_STEPS = ("debate_turn", "final_evaluation")


def agent_template(step: str) -> PromptTemplate:
    """The agent's standing instructions (system) with one step's request (user): phase 1,
    a debate turn or the final evaluation, as one template for :func:`core.prompts.ask`.

    In phase 2 the system message also carries the group's first evaluations
    (``debate_shared``), so it is the same, byte for byte, for every turn and the final
    evaluation of an agent, and the user message starts with the discussion, which only grows:
    each request of an agent repeats its previous one as a prefix, which providers' prompt
    caches (and llama.cpp's) do not compute or bill in full again."""
    agent, turn = _prompts.load("agent"), _prompts.load(step)
    if step not in _PHASE2_STEPS:
        return PromptTemplate(_prompts.METHOD, f"agent+{step}",
                              f"{agent.version}+{turn.version}", agent.system, turn.user,
                              agent.material + turn.material)
    shared = _prompts.load("debate_shared")
    return PromptTemplate(_prompts.METHOD, f"agent+{step}",
                          f"{agent.version}+{shared.version}+{turn.version}",
                          f"{agent.system}\n\n{shared.system}", turn.user,
                          agent.material + shared.material + turn.material)


def _check_evaluation(reply: Any) -> Rejection | None:
    if not " ".join(str(reply.rationale).split()):
        return Rejection("the rationale is empty: give your reasons for the scores")
    return None


def _check_turn(reply: Any) -> Rejection | None:
    message = " ".join(str(reply.message).split())
    if not message and not reply.no_more_comments:
        return Rejection("the message is empty: say what you think of the others' evaluations, "
                         'or set "no_more_comments" to true')
    return None


async def _call(llm: JsonLLM, system_values: Mapping[str, str], step: str, schema: type,
                values: Mapping[str, str], cancel: CancelToken | None, check: Any = None):
    """One call of an agent through :func:`core.prompts.ask` (so a reply repeating our
    instructions is refused, asked again once, then fails with kind copied_instructions)."""
    return await prompts.ask(llm, agent_template(step), schema, {**system_values, **values},
                             check=check, own_words=OWN_WORDS, cancel=cancel)


# ---------------------------------------------------------------------------------- phase 1
async def evaluate_individually(
    personas: Sequence[Persona],
    item: Item,
    task: str,
    dimensions: Sequence[Dimension],
    scale: Scale,
    llm: JsonLLM,
    *,
    simple_roles: bool = False,
    role_descriptions: Mapping[str, str] | None = None,
    cancel: CancelToken | None = None,
) -> list[AgentResult]:
    """Phase 1: every agent's own evaluation, concurrently, in roster order. A failed call
    gives an :class:`AgentResult` with status "failed" and the reason. ``role_descriptions``
    (group -> description) make the one-sentence roles of ``simple_roles``."""
    schema = evaluation_schema(dimensions, scale)

    async def one(persona: Persona) -> AgentResult:
        system = _system_values(persona, item, task, dimensions, scale, simple_roles,
                                role_descriptions)
        try:
            reply = await _call(llm, system, "phase1", schema, {}, cancel, _check_evaluation)
        except LLMFailure as failure:
            return AgentResult(persona_id=persona.id, agent=persona.name, status="failed",
                               error=f"{persona.name}'s first evaluation failed: "
                                     f"{failure.message}", error_kind=failure.kind)
        evaluation = AgentEvaluation(persona_id=persona.id, agent=persona.name,
                                     scores=scores_of(reply),
                                     rationale=" ".join(reply.rationale.split()))
        return AgentResult(persona_id=persona.id, agent=persona.name, initial=evaluation)

    return list(await asyncio.gather(*(one(p) for p in personas)))


# ---------------------------------------------------------------------------------- phase 2
def _says_no_more(message: str) -> bool:
    return message.strip().upper().startswith(NO_MORE_COMMENTS)


async def free_debate(
    personas: Sequence[Persona],
    item: Item,
    task: str,
    dimensions: Sequence[Dimension],
    scale: Scale,
    llm: JsonLLM,
    agents: Sequence[AgentResult],
    *,
    settings: DebateSettings | None = None,
    role_descriptions: Mapping[str, str] | None = None,
    cancel: CancelToken | None = None,
) -> GroupResult:
    """Phase 2 on top of the phase 1 ``agents``: the coordinated debate, then final
    evaluations at the cap. Returns the group's result without means or feedback (phase 3,
    :func:`core.majeval.aggregation.aggregate`, adds them). With ``settings.no_debate`` the
    phase 1 scores are final."""
    settings = settings or DebateSettings()
    by_id = {p.id: p for p in personas}
    results = {a.persona_id: a.model_copy(deep=True) for a in agents}
    group = personas[0].group if personas else ""
    out = GroupResult(item_id=item.id, group=group)
    ok = [a for a in agents if a.initial is not None]
    alone = ""
    if not settings.no_debate and len(agents) == 1:
        alone = ONE_AGENT
    elif not settings.no_debate and len(ok) == 1:
        alone = (f"only {ok[0].agent} gave a first evaluation (the others failed), so there "
                 "was nobody to debate with; that evaluation is final")
    if settings.no_debate or alone:
        for a in ok:
            r, first = results[a.persona_id], a.initial
            assert first is not None  # ok: the agents with a first evaluation
            r.final, r.final_rationale, r.finalised_by = dict(first.scores), \
                first.rationale, "no debate"
        out.agents = [results[a.persona_id] for a in agents]
        out.stop_reason = alone or "no debate (the phase 1 scores are final)"
        return out

    dims = [d.name for d in dimensions]
    coordinator = Coordinator([(a.persona_id, a.agent) for a in agents], dims,
                              {a.persona_id: a.initial.scores for a in ok if a.initial},
                              settings.rounds)
    systems = {a.persona_id: _system_values(by_id[a.persona_id], item, task, dimensions, scale,
                                            settings.simple_roles, role_descriptions)
               for a in ok}
    schema = debate_reply_schema(dimensions, scale)
    reply_format = debate_format(dimensions, scale)
    window = _Window(await context.limits_for(llm), agents)
    window.fit_initial(systems, reply_format)
    turns: list[DebateTurn] = []
    while (chosen := coordinator.next_turn()) is not None:
        agent_id, reason = chosen
        r = results[agent_id]
        values = {"name": r.agent, "reply_format": reply_format}
        try:
            reply = await _call(llm, systems[agent_id], "debate_turn", schema, {
                **values, "initial_evaluations": window.initial(),
                "discussion": window.discussion(turns, "debate_turn",
                                                {**systems[agent_id], **values})},
                cancel, _check_turn)
        except LLMFailure as failure:
            error = (f"{r.agent}'s turn {len(turns) + 1} of the debate failed: "
                     f"{failure.message}")
            turns.append(DebateTurn(turn=len(turns) + 1, speaker=r.agent, persona_id=agent_id,
                                    reason=reason, error=error, error_kind=failure.kind))
            r.status, r.error, r.final, r.finalised_by = "failed", error, None, "failed"
            r.error_kind = failure.kind
            coordinator.record(agent_id, "", None, failed=True)
            continue
        message = " ".join(reply.message.split())
        finished = bool(reply.no_more_comments) or _says_no_more(message)
        scores = scores_of(reply)
        turns.append(DebateTurn(turn=len(turns) + 1, speaker=r.agent, persona_id=agent_id,
                                reason=reason, message=message, scores=scores,
                                finalised=finished))
        coordinator.record(agent_id, message, scores, finished=finished)
        if finished:
            r.final, r.final_rationale, r.finalised_by = scores, message, "no more comments"

    out.stop_reason = coordinator.stop_reason
    remaining = list(coordinator.active)
    if remaining and coordinator.stopped_by == "cap":
        final_schema = evaluation_schema(dimensions, scale)
        for agent_id in remaining:  # the same discussion for all: the widest request decides
            window.discussion(turns, "final_evaluation", systems[agent_id])
        values = {"initial_evaluations": window.initial(),
                  "discussion": _discussion_text(turns, window.first)}
        replies = await asyncio.gather(*(
            _final(llm, systems[agent_id], final_schema, values, cancel)
            for agent_id in remaining))
        for agent_id, reply in zip(remaining, replies):
            r = results[agent_id]
            reason = (f"The turn limit was reached; {r.agent} gives a final evaluation.")
            if isinstance(reply, LLMFailure):
                error = f"{r.agent}'s final evaluation failed: {reply.message}"
                turns.append(DebateTurn(turn=len(turns) + 1, speaker=r.agent,
                                        persona_id=agent_id, reason=reason, kind="final",
                                        error=error, error_kind=reply.kind))
                r.status, r.error, r.final, r.finalised_by = "failed", error, None, "failed"
                r.error_kind = reply.kind
                continue
            scores = scores_of(reply)
            rationale = " ".join(reply.rationale.split())
            turns.append(DebateTurn(turn=len(turns) + 1, speaker=r.agent, persona_id=agent_id,
                                    reason=reason, message=rationale, scores=scores,
                                    finalised=True, kind="final"))
            r.final, r.final_rationale, r.finalised_by = scores, rationale, "cap"
    else:
        for agent_id in remaining:  # stopped early: current scores are final
            r = results[agent_id]
            r.final = dict(coordinator.scores[agent_id])
            spoke = [t for t in turns if t.persona_id == agent_id and not t.error]
            r.final_rationale = spoke[-1].message if spoke else (
                r.initial.rationale if r.initial else "")
            r.finalised_by = "consensus"
    out.agents = [results[a.persona_id] for a in agents]
    out.turns = turns
    return out


async def _final(llm: JsonLLM, system: Mapping[str, str], schema: type, values: dict,
                 cancel: CancelToken | None):
    try:
        return await _call(llm, system, "final_evaluation", schema, values, cancel,
                           _check_evaluation)
    except LLMFailure as failure:
        return failure
