"""How many calls, tokens, dollars and minutes a method run will take, before it starts.

A method describes its planned work as stages (:class:`StagePlan`): the real prompts it will
send (its templates filled with the real items), the reply schema, and which calls may or may
not happen (a debate can end early). :func:`estimate` then counts

* calls: the calls that always happen, and at most (with the calls that may happen);
* prompt tokens with litellm's offline token counter, completion tokens from the reply schema
  (:func:`expected_reply_tokens`, capped by the profile's ``max_tokens``);
* cost from litellm's offline price map (0 for local models, the built-in model, Ollama and
  LM Studio; ``None`` when the price of the model is not known);
* time from the profile's concurrency and how fast the model answers: the project's recorded
  calls of this model (:func:`measured_latency`), those recorded on this computer in another
  project, one probe call of a realistic size (:func:`probe_latency`), or a plain guess when
  none is there; :attr:`Estimate.latency_source` says which. When the calls' sizes are known
  (:class:`Speed`), each planned call's time follows from its own prompt and answer: a debate
  turn reading a long discussion takes much longer than a one-line question (a flat seconds
  per call made a new project's estimates 3 to 20 times too low, issue 28).

Nothing here calls a model except :func:`probe_latency`.

    plan = [StagePlan("first evaluations", prompts, Evaluation)]
    est = estimate(plan, profile, latency=measured_latency(project, profile.model))
    est.summary()   # "about 24 calls to gpt-4o-mini, about $0.01, about 1 minute"
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from core.settings import ModelProfile

__all__ = [
    "GUESSED_LATENCY_S",
    "Estimate",
    "Latency",
    "Speed",
    "StagePlan",
    "estimate",
    "expected_reply_tokens",
    "fit_speed",
    "measured_latency",
    "needs_calibration",
    "price_per_token",
    "probe_latency",
    "recalled_speed",
    "remember_speed",
    "time_words",
]

#: Model-string prefixes that never cost money (run on this computer or the user's own server).
FREE_PREFIXES = ("evaldesk-local/", "scripted/", "ollama/", "ollama_chat/", "lm_studio/")
#: Seconds per call assumed when nothing was measured (said so on screen).
GUESSED_LATENCY_S = {"local": 8.0, "cloud": 4.0}
#: Tokens expected for a free-text field of a reply whose schema gives no length.
TEXT_FIELD_TOKENS = 60


# ----------------------------------------------------------------------------- the plan
@dataclass
class StagePlan:
    """One stage of a run: ``prompts`` are the messages of the calls that always happen (one
    list of chat messages per call); ``maybe`` those of calls that may happen or not (debate
    turns after everyone has spoken once, final evaluations at the turn limit). ``schema`` is
    the reply's pydantic model (its expected size is the completion). ``chain``: calls of this
    stage that must wait for each other within one unit of work (a debate's turns), at least
    and at most; they bound the time from below however many calls run at once."""

    name: str
    prompts: list[list[dict[str, Any]]]
    schema: Any = None
    maybe: list[list[dict[str, Any]]] = field(default_factory=list)
    chain: tuple[int, int] = (1, 1)
    reply_tokens: int | None = None
    """Completion tokens per call, when known better than from the schema."""


@dataclass
class Speed:
    """How long a call of a given size takes: ``overhead_s`` + ``prompt_s`` per prompt token +
    ``completion_s`` per completion token."""

    overhead_s: float
    prompt_s: float
    completion_s: float

    def seconds(self, prompt_tokens: float, completion_tokens: float) -> float:
        return max(0.0, self.overhead_s + self.prompt_s * prompt_tokens
                   + self.completion_s * completion_tokens)


@dataclass
class Latency:
    """Seconds per call and where the figure comes from, in plain words. ``speed``: the time
    of a call from its size, when the measured calls' sizes are known (then it is used)."""

    seconds: float
    source: str
    speed: Speed | None = None


@dataclass
class Counts:
    """Calls and tokens; ``*_max`` are the figures when every call that may happen does (equal
    to the others when the count is fixed)."""

    calls: int
    calls_max: int
    prompt_tokens: int
    prompt_tokens_max: int
    completion_tokens: int
    completion_tokens_max: int

    @classmethod
    def total(cls, parts: Sequence[Counts]) -> Counts:
        return Counts(*(sum(getattr(p, f.name) for p in parts) for f in fields(Counts)))


@dataclass
class StageEstimate(Counts):
    name: str = ""


@dataclass
class Estimate(Counts):
    """What a run will take (the counts of all its stages). ``cost`` None: the price is
    unknown."""

    model: str
    stages: list[StageEstimate]
    cost: float | None
    cost_max: float | None
    seconds: float
    seconds_max: float
    latency_s: float
    latency_source: str
    concurrency: int
    done_already: int = 0
    """Units of work already finished (kept in the project): they make no call."""
    done_what: str = ""
    too_long: list[Any] = field(default_factory=list)
    """Inputs the model cannot read at once (``core.llm.context.Overlong``, or a sentence
    each): the run is refused before any call until they are shortened or another model is
    chosen (``core.llm.context.refusal`` says so)."""

    @property
    def free(self) -> bool:
        return self.cost == 0 and self.cost_max == 0

    def calls_text(self) -> str:
        if self.calls == self.calls_max:
            return f"about {self.calls:,} call{'s' if self.calls != 1 else ''}"
        return f"{self.calls:,} to {self.calls_max:,} calls"

    def cost_text(self) -> str:
        if self.cost is None or self.cost_max is None:
            return "cost unknown (the price of this model is not in the price list)"
        if self.free:
            return "no cost (the model runs locally)"
        low, high = _dollars(self.cost), _dollars(self.cost_max)
        return f"about {low}" if low == high else f"about {low} to {high}"

    def time_text(self) -> str:
        low, high = time_words(self.seconds), time_words(self.seconds_max)
        if low == high:
            return low if low == "under a minute" else f"about {low}"
        if low == "under a minute":
            return f"up to about {high}"
        if low.endswith(" minutes") and high.endswith(" minutes") and "hour" not in high:
            return f"about {low.split()[0]} to {high}"
        return f"about {low} to {high}"

    def summary(self) -> str:
        """One plain line: "about 240 calls to gpt-4o-mini, about $0.31, about 6 minutes"."""
        if not self.calls_max:
            return "No model calls: every result is already in the project."
        return f"{self.calls_text()} to {self.model}, {self.cost_text()}, {self.time_text()}"

    def details(self) -> list[str]:
        """The summary, tokens, each stage, the latency used and what is already done (after
        the inputs too long for the model, when there are any)."""
        lines = []
        if self.too_long:
            from core.llm.context import refusal

            lines = refusal(self.too_long).splitlines()
        lines.append(self.summary() + ".")
        if self.calls_max:
            lines.append("Tokens: " + _range(self.prompt_tokens, self.prompt_tokens_max)
                         + " in, " + _range(self.completion_tokens, self.completion_tokens_max)
                         + " out (estimated from our prompts and your items).")
            for s in self.stages:
                lines.append(f"  {s.name}: {_range(s.calls, s.calls_max)} "
                             f"call{'s' if s.calls_max != 1 else ''}, "
                             f"{_range(s.prompt_tokens, s.prompt_tokens_max)} tokens in")
            lines.append(f"Time: {self.latency_s:.1f} s per call ({self.latency_source}), "
                         f"{self.concurrency} at a time.")
        if self.done_already:
            lines.append(f"Already done and kept in the project: {self.done_already} "
                         f"{self.done_what} (no calls).")
        return lines


def _range(low: int, high: int) -> str:
    return f"{low:,}" if low == high else f"{low:,} to {high:,}"


def _dollars(value: float) -> str:
    if value < 0.005:
        return "$0.01" if value > 0 else "$0"
    return f"${value:,.2f}"


def time_words(seconds: float) -> str:
    """"under a minute", "1 minute", "6 minutes", "1 hour 20 minutes" (rounded)."""
    if seconds < 60:
        return "under a minute"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    hours, rest = divmod(minutes, 60)
    rest = int(round(rest / 10) * 10) % 60
    text = f"{hours} hour{'s' if hours != 1 else ''}"
    return text + (f" {rest} minutes" if rest else "")


# ------------------------------------------------------------------------------ tokens
def count_tokens(model: str, messages: list[dict[str, Any]]) -> int:
    """Prompt tokens of ``messages`` for ``model`` (litellm's offline counter; models it does
    not know are counted with its default tokenizer)."""
    from core.llm._litellm import litellm_module

    try:
        return int(litellm_module().token_counter(model=model, messages=messages))
    except Exception:  # noqa: BLE001 - an odd model string: about 4 characters per token
        return sum(len(str(m.get("content", ""))) for m in messages) // 4 + 4 * len(messages)


def _schema_of(schema: Any) -> dict[str, Any]:
    if schema is None:
        return {}
    if isinstance(schema, dict):
        return schema
    return schema.model_json_schema()


def expected_reply_tokens(schema: Any, max_tokens: int | None = None) -> int:
    """Tokens a reply fitting ``schema`` is expected to take: its keys and punctuation, about
    :data:`TEXT_FIELD_TOKENS` per free-text field (``maxLength``/4 when given), 2 per number or
    yes/no, three elements per list (``minItems`` when more); capped by ``max_tokens``."""
    root = _schema_of(schema)
    defs = root.get("$defs", {})

    def size(node: dict[str, Any], depth: int = 0) -> int:
        if depth > 8:
            return 4
        if "$ref" in node:
            return size(defs.get(node["$ref"].rsplit("/", 1)[-1], {}), depth + 1)
        for combo in ("anyOf", "oneOf", "allOf"):
            if combo in node:
                options = [o for o in node[combo] if o.get("type") != "null"]
                return max((size(o, depth + 1) for o in options), default=2)
        kind = node.get("type")
        if kind == "object" or "properties" in node:
            props = node.get("properties", {})
            return 2 + sum(len(key) // 4 + 3 + size(value, depth + 1)
                           for key, value in props.items())
        if kind == "array":
            n = max(3, int(node.get("minItems", 0) or 0))
            if node.get("maxItems") is not None:
                n = min(n, int(node["maxItems"]))
            return 2 + n * (1 + size(node.get("items", {}), depth + 1))
        if kind == "string":
            if "enum" in node:
                return 3
            if node.get("maxLength"):
                return max(2, min(TEXT_FIELD_TOKENS, int(node["maxLength"]) // 4))
            return TEXT_FIELD_TOKENS
        if kind in ("integer", "number", "boolean"):
            return 2
        return TEXT_FIELD_TOKENS if not root else 4

    tokens = size(root) if root else TEXT_FIELD_TOKENS * 3
    if max_tokens:
        tokens = min(tokens, int(max_tokens))
    return tokens


# ------------------------------------------------------------------------------- price
def price_per_token(model: str) -> tuple[float, float] | None:
    """(dollars per prompt token, per completion token) from litellm's offline price map;
    (0, 0) for local models; None when the price is not known."""
    if model.startswith(FREE_PREFIXES):
        return 0.0, 0.0
    from core.llm._litellm import litellm_module

    try:
        prompt, completion = litellm_module().cost_per_token(
            model=model, prompt_tokens=1_000_000, completion_tokens=1_000_000)
    except Exception:  # noqa: BLE001 - litellm raises several kinds for an unknown model
        return None
    return float(prompt) / 1_000_000, float(completion) / 1_000_000


# ----------------------------------------------------------------------------- latency
#: With too few calls measured to tell reading from writing, seconds per completion token for
#: each second per prompt token: a model reads a prompt in batches, far faster than it writes.
DECODE_RATIO = {"local": 10.0, "remote": 5.0}
#: Measured calls kept per model in the record of this computer (:func:`remember_speed`).
KEPT_CALLS = 50
SPEEDS_FILE = "model-speeds.json"


def fit_speed(calls: Sequence[tuple[int, int, float]], *, local: bool) -> Speed | None:
    """How fast a model answers, from measured calls ``(prompt tokens, completion tokens,
    seconds)``: a least-squares fit of overhead, seconds per prompt token and per completion
    token (none negative) when there are enough calls of different sizes; else one factor
    for both kinds of token, writing counted :data:`DECODE_RATIO` times reading."""
    calls = [(p, c, t) for p, c, t in calls if t > 0 and p + c > 0]
    if not calls:
        return None
    ratio = DECODE_RATIO["local" if local else "remote"]
    prompts = {p for p, _, _ in calls}
    answers = {c for _, c, _ in calls}
    if len(calls) >= 6 and len(prompts) >= 3 and len(answers) >= 3:
        import numpy as np
        from scipy.optimize import nnls

        rows = np.array([[1.0, p, c] for p, c, _ in calls])
        times = np.array([t for _, _, t in calls])
        try:
            (overhead, per_prompt, per_answer), _ = nnls(rows, times)
        except (ValueError, RuntimeError):
            overhead = per_prompt = per_answer = 0.0
        if per_prompt > 0 or per_answer > 0:
            return Speed(float(overhead), float(per_prompt), float(per_answer))
    sizes = [p + ratio * c for p, c, _ in calls]
    factor = sum(t * x for (_, _, t), x in zip(calls, sizes)) / sum(x * x for x in sizes)
    return Speed(0.0, factor, ratio * factor)


def _speeds_path() -> Any:
    from core import paths

    return paths.user_cache_dir() / SPEEDS_FILE


def remember_speed(model: str, calls: Sequence[tuple[int, int, float]]) -> None:
    """Keep the latest measured calls of ``model`` in this computer's record (the user cache
    folder), so a new project's first estimate starts from them. Never fails a run."""
    import json as _json

    if not calls:
        return
    try:
        path = _speeds_path()
        record = _json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        if not isinstance(record, dict):
            record = {}
        kept = [list(c) for c in calls[:KEPT_CALLS]]
        if record.get(model) == kept:
            return
        record[model] = kept
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(_json.dumps(record), encoding="utf-8")
        temporary.replace(path)
    except (OSError, ValueError, TypeError):
        return


def recalled_speed(model: str) -> list[tuple[int, int, float]]:
    """The calls of ``model`` measured on this computer (see :func:`remember_speed`)."""
    import json as _json

    try:
        path = _speeds_path()
        record = _json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        found = record.get(model) if isinstance(record, dict) else None
        return [(int(p), int(c), float(t)) for p, c, t in (found or [])]
    except (OSError, ValueError, TypeError):
        return []


def _local(model: str) -> bool:
    """A model run by EvalDesk on this computer (its speed is this computer's)."""
    from core.settings import LOCAL_MODEL_PREFIX

    return model.startswith(LOCAL_MODEL_PREFIX)


def measured_latency(project: Any, model: str, *, limit: int = 50) -> Latency | None:
    """How fast ``model`` answers: from the latest calls recorded in ``project`` (their median
    seconds, and the time for a call's size when their sizes are known); without any, from the
    calls measured on this computer in other projects (:func:`recalled_speed`); None when
    there are none."""
    calls: list[tuple[int, int, float]] = []
    if project is not None and hasattr(project, "llm_call_sizes"):
        calls = project.llm_call_sizes(model, limit=max(limit, KEPT_CALLS))
    if calls:
        remember_speed(model, calls)
        values = [t for _, _, t in calls[:limit]]
        return Latency(statistics.median(values),
                       f"measured: the last {len(values)} call{'s' if len(values) != 1 else ''} "
                       "to this model in this project, each call's time worked out from its size",
                       fit_speed(calls, local=_local(model)))
    if project is not None and hasattr(project, "llm_latencies"):
        values = [v for v in project.llm_latencies(model, limit=limit) if v and v > 0]
        if values:
            return Latency(statistics.median(values),
                           f"measured: the median of the last {len(values)} "
                           f"call{'s' if len(values) != 1 else ''} to this model in this project")
    calls = recalled_speed(model)
    if calls:
        return Latency(statistics.median(t for _, _, t in calls),
                       f"measured on this computer: {len(calls)} earlier "
                       f"call{'s' if len(calls) != 1 else ''} to this model, each call's time "
                       "worked out from its size", fit_speed(calls, local=_local(model)))
    return None


def needs_calibration(project: Any, profile: ModelProfile) -> bool:
    """Whether nothing tells how fast ``profile``'s model answers on this computer yet (no call
    recorded in ``project`` nor measured earlier): the estimate would be a plain guess."""
    return measured_latency(project, profile.model) is None


#: The probe's question: a paragraph of our own, about as long as a short task prompt, and an
#: answer of a few dozen words (a one-word probe timed only the overhead, and the estimates
#: built on it were several times too low).
_PROBE = ("Here is a short text about keeping a garden through the year. In spring the soil "
          "is turned and seeds are sown in rows, with room left between them for the plants to "
          "grow. In summer the beds are watered in the evening, weeds are pulled before they "
          "flower, and the first vegetables are picked while they are small and tender. In "
          "autumn the last crops come in, leaves are gathered for compost, and the tools are "
          "cleaned and put away. In winter the garden rests, and the gardener plans next year's "
          "beds, orders seeds and mends the fences. ") * 3 + (
          "\n\nIn about thirty words, say what the gardener does in each season.")
PROBE_ANSWER_TOKENS = 64


async def probe_latency(profile: ModelProfile, *, api_key: str | None = None,
                        cancel: Any = None) -> Latency:
    """One real call of a realistic size (not cached, not billed to a run) to time the model on
    this computer; the measurement is kept in this computer's record (:func:`remember_speed`).
    Raises ``core.llm.LLMFailure``."""
    from core.llm._cache import MemoryCache
    from core.llm._gateway import Gateway

    cache = MemoryCache()
    gateway = Gateway(profile.model_copy(update={"max_tokens": PROBE_ANSWER_TOKENS}),
                      cache=cache, api_key=api_key)
    started = time.monotonic()
    await gateway.complete_text(_PROBE, template_version="estimate-probe", cancel=cancel,
                                repeat=int(time.time()))
    record = next(iter(cache.records.values()), None)
    seconds = record.latency_s if record is not None and record.latency_s else \
        time.monotonic() - started
    call = (record.prompt_tokens, record.completion_tokens, seconds) if record else None
    speed = fit_speed([call], local=profile.is_local) if call and call[0] else None
    if call and call[0]:
        remember_speed(profile.model, [call, *recalled_speed(profile.model)][:KEPT_CALLS])
    return Latency(seconds, "measured by one call to this model just now, each call's time "
                   "worked out from its size", speed)


def guessed_latency(profile: ModelProfile) -> Latency:
    local = profile.model.startswith(FREE_PREFIXES)
    seconds = GUESSED_LATENCY_S["local" if local else "cloud"]
    return Latency(seconds, "a guess: no call to this model was measured yet")


# ------------------------------------------------------------------------------ estimate
def estimate(plan: Sequence[StagePlan], profile: ModelProfile, *,
             latency: Latency | None = None, done_already: int = 0, done_what: str = "",
             counter: Callable[[str, list[dict[str, Any]]], int] = count_tokens) -> Estimate:
    """The calls, tokens, cost and time of ``plan`` with ``profile`` (see the module text).
    ``latency`` None: a guess (said so)."""
    model = profile.model
    latency = latency or guessed_latency(profile)
    cap = int(profile.max_tokens or 0) or None
    counted: dict[tuple[str, str], int] = {}

    def tokens_of(messages: list[dict[str, Any]]) -> int:
        # message by message, each distinct text counted once: a run repeats the same
        # instructions across items and the same turn requests across groups
        total = 3
        for message in messages:
            key = (str(message.get("role", "")), str(message.get("content", "")))
            if key not in counted:
                counted[key] = counter(model, [message])
            total += counted[key]
        return total

    stages = []
    for stage in plan:
        reply = stage.reply_tokens if stage.reply_tokens is not None else \
            expected_reply_tokens(stage.schema, cap)
        sure = sum(tokens_of(p) for p in stage.prompts)
        maybe = sum(tokens_of(p) for p in stage.maybe)
        stages.append(StageEstimate(
            len(stage.prompts), len(stage.prompts) + len(stage.maybe),
            sure, sure + maybe, reply * len(stage.prompts),
            reply * (len(stage.prompts) + len(stage.maybe)), name=stage.name))
    totals = Counts.total(stages)
    calls, calls_max = totals.calls, totals.calls_max
    prompt, prompt_max = totals.prompt_tokens, totals.prompt_tokens_max
    completion, completion_max = totals.completion_tokens, totals.completion_tokens_max
    prices = price_per_token(model)
    cost = cost_max = None
    if prices is not None:
        cost = prompt * prices[0] + completion * prices[1]
        cost_max = prompt_max * prices[0] + completion_max * prices[1]
    at_once = max(1, int(profile.max_concurrency or 1))
    chain_low = sum(s.chain[0] for s in plan if s.prompts or s.maybe)
    chain_high = sum(s.chain[1] for s in plan if s.prompts or s.maybe)
    per_call, per_call_max = _call_seconds(stages, latency)
    seconds = max(math.ceil(calls / at_once), chain_low if calls else 0) * per_call
    seconds_max = max(math.ceil(calls_max / at_once), chain_high if calls_max else 0) \
        * per_call_max
    return Estimate(**asdict(totals), model=model, stages=stages, cost=cost, cost_max=cost_max, seconds=seconds, seconds_max=seconds_max,
                    latency_s=per_call, latency_source=latency.source,
                    concurrency=at_once, done_already=done_already, done_what=done_what)


def _call_seconds(stages: Sequence[StageEstimate], latency: Latency) -> tuple[float, float]:
    """Seconds of an average call of the plan (of the calls that always happen, and of all of
    them): the latency itself, or, with a :class:`Speed`, each call's time from its size."""
    speed = latency.speed
    if speed is None:
        return latency.seconds, latency.seconds

    def average(calls: int, prompt: int, completion: int) -> float:
        return speed.seconds(prompt / calls, completion / calls) if calls else 0.0

    def mean(parts: list[tuple[int, float]]) -> float:
        total = sum(n for n, _ in parts)
        return sum(n * t for n, t in parts) / total if total else latency.seconds

    sure = [(s.calls, average(s.calls, s.prompt_tokens, s.completion_tokens)) for s in stages]
    every = [(s.calls_max, average(s.calls_max, s.prompt_tokens_max, s.completion_tokens_max))
             for s in stages]
    return mean(sure), mean(every)


def compare_lines(est: Estimate, usage: Any) -> list[str]:
    """The estimate beside what the run actually used (``usage``: calls, prompt_tokens,
    completion_tokens, cost, as ``core.llm.Usage`` or the project's totals), plain lines."""
    def figure(low: float, high: float, fmt: Callable[[float], str]) -> str:
        return fmt(low) if fmt(low) == fmt(high) else f"{fmt(low)} to {fmt(high)}"

    def whole(v: float) -> str:
        return f"{int(v):,}"

    cost_est = "unknown" if est.cost is None or est.cost_max is None else \
        figure(est.cost, est.cost_max, lambda v: f"${v:,.4f}")
    calls = f"{int(getattr(usage, 'calls', 0)):,}"
    tokens_in = f"{int(getattr(usage, 'prompt_tokens', 0)):,}"
    tokens_out = f"{int(getattr(usage, 'completion_tokens', 0)):,}"
    spent = f"${float(getattr(usage, 'cost', 0.0) or 0.0):,.4f}"
    return [
        f"Calls: estimated {figure(est.calls, est.calls_max, whole)}, made {calls}",
        f"Tokens in: estimated {figure(est.prompt_tokens, est.prompt_tokens_max, whole)}, "
        + f"used {tokens_in}",
        "Tokens out: estimated "
        + f"{figure(est.completion_tokens, est.completion_tokens_max, whole)}, used {tokens_out}",
        f"Cost: estimated {cost_est}, spent {spent}",
    ]


def to_json(est: Estimate) -> str:
    """The estimate as JSON (kept beside a run, so the actual figures can be compared)."""
    from dataclasses import asdict

    return json.dumps(asdict(est))
