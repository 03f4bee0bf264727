"""How much the model a step talks to can read at once, and how much a prompt asks of it, known
before anything is sent.

* :func:`context_window` (``window_of`` with where the figure comes from): for a model file (the
  built-in model or any ``.gguf``), the profile's ``context_window`` (the engine is started with
  it); for a server, the server's own figure where it can be asked cheaply (Ollama's
  ``/api/show``, llama.cpp's ``/props``, vLLM's ``/v1/models``), else the profile's; for an
  object without a profile, litellm's model list.
* :func:`prompt_tokens` / :func:`text_tokens`: a conservative token count (no tokenizer needed):
  per line, a word of Latin letters costs at least one token and about 0.24 token per letter in
  English lines, 0.34 in others; each digit, each ASCII sign and each line break one token; a
  letter with a diacritic 2; Cyrillic 0.75, Greek 1.2, Hebrew/Arabic 1.2, Indic and Thai 1.3,
  Chinese and Japanese 1.5, Korean 2 per character; anything else its UTF-8 bytes. Measured
  against ten tokenizers (Llama 2/Mistral 7B, Phi-3, Llama 3, Qwen 2 and 3.5, Gemma 3 and 4,
  Command-R, GPT-4's and GPT-4o's) on texts in 24 languages, clinical notes, tables and emoji,
  it is at most 5% under the largest of them and 4-27% over for English (``tests/benchmarks/
  bench_prompt_tokens.py``); plus each message's chat-template tokens.
* :class:`Limits` (:func:`limits_of` for a step's model): the window, the room kept for the
  answer (the profile's ``max_tokens``), the room left for a prompt, and the plain sentence that
  refuses an input which cannot fit.
* :func:`parts_that_fit`: consecutive parts of a list of inputs that each fit (how a step splits
  its input); :class:`TooLong` names the one input that cannot fit on its own.

Only :func:`window_of` for a server talks to the network (one short request per server and
model, remembered for the process); :func:`limits_for` does it off the event loop.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import math
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "Limits",
    "Overlong",
    "TooLong",
    "Window",
    "context_window",
    "limits_for",
    "limits_of",
    "parts_that_fit",
    "prompt_tokens",
    "refusal",
    "reply_tokens",
    "split_items",
    "text_tokens",
    "window_of",
]

T = TypeVar("T")

#: Tokens a chat template adds around each message ("<start_of_turn>user\n" ... and the end
#: marker) and once per request (a BOS token, a default system line some templates add).
MESSAGE_TOKENS = 8
REQUEST_TOKENS = 32
#: Room kept free in every prompt for the short note the gateway adds when it asks again after
#: an answer that could not be used (see ``core.llm._gateway``).
REASK_TOKENS = 160
#: Share of the answer's room an expected reply may fill (replies vary in length).
REPLY_FILL = 0.8
#: Seconds to wait for a server's answer about its context window.
PROBE_TIMEOUT_S = 2.0
#: How long a server that could not be asked is not asked again (its profile's figure is used).
PROBE_RETRY_S = 60.0


# ------------------------------------------------------------------------------- token count
_ENGLISH_WORDS = (
    "the and of to that with for was this which but have has they their his would should "
    "does what how when there these those been were will can about into than only also other "
    "such it its is are be by from not or on at as an if you your we our do did")
#: Words that mark a line as English (a fifth of its words or more).
_ENGLISH = frozenset(_ENGLISH_WORDS.split())
_WORD = re.compile(r"[A-Za-z]+")
_DIGIT_RUN = re.compile(r"[0-9]+")
_SIGN = re.compile(r"[!-/:-@\[-`{-~]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
#: Letters per token in English lines and in other lines written with Latin letters.
ENGLISH_RATE = 0.24
OTHER_RATE = 0.34

#: (first, last code point, tokens per character) of scripts counted per character.
_SCRIPTS = (
    (0x00C0, 0x024F, 2.0),   # Latin letters with diacritics (Latin-1, Extended A/B)
    (0x1E00, 0x1EFF, 2.0),   # Latin Extended Additional (Vietnamese)
    (0x0370, 0x03FF, 1.2),   # Greek
    (0x1F00, 0x1FFF, 1.2),
    (0x0400, 0x052F, 0.75),  # Cyrillic
    (0x0590, 0x08FF, 1.2),   # Hebrew, Arabic, Syriac, Thaana
    (0xFB1D, 0xFDFF, 1.2),
    (0xFE70, 0xFEFF, 1.2),
    (0x0900, 0x0EFF, 1.3),   # Indic scripts, Thai, Lao
    (0x1000, 0x109F, 1.3),   # Myanmar
    (0x1100, 0x11FF, 2.0),   # Hangul
    (0x3130, 0x318F, 2.0),
    (0xAC00, 0xD7AF, 2.0),
    (0x3000, 0x30FF, 1.5),   # CJK signs, kana
    (0x3400, 0x9FFF, 1.5),   # CJK ideographs
    (0xFF00, 0xFFEF, 1.5),   # full-width forms
    (0x20000, 0x2FFFF, 1.5),
)


def _char_tokens(ch: str) -> float:
    code = ord(ch)
    for first, last, tokens in _SCRIPTS:
        if first <= code <= last:
            return tokens
    if unicodedata.category(ch).startswith("Z"):
        return 1.0  # a non-breaking or other space
    return float(len(ch.encode("utf-8")))  # emoji, signs: byte pieces in many vocabularies


def _line_tokens(line: str) -> float:
    words = _WORD.findall(line)
    total = 0.0
    if words:
        english = sum(w.lower() in _ENGLISH for w in words) >= 0.2 * len(words)
        rate = ENGLISH_RATE if english else OTHER_RATE
        total += sum(max(1.0, rate * len(w)) for w in words)
    digits = _DIGIT_RUN.findall(line)
    total += sum(len(d) for d in digits) + len(digits)  # one per digit, one per number
    total += len(_SIGN.findall(line))
    total += sum(_char_tokens(ch) for ch in _NON_ASCII.findall(line))
    return total


#: Lines counted already: prompts repeat their instructions, a source shared by many texts,
#: the same questions (counting a prompt is then a sum of known lines).
_counted_line = lru_cache(maxsize=32768)(_line_tokens)


def text_tokens(text: str) -> int:
    """A conservative count of the tokens of ``text`` (see the module text): never materially
    fewer than a model's own tokenizer gives, for the languages measured."""
    text = str(text or "")
    if not text:
        return 0
    lines = text.split("\n")
    return math.ceil(sum(_counted_line(line) for line in lines) + len(lines) - 1)


def prompt_tokens(messages: Sequence[dict[str, Any]] | str) -> int:
    """The tokens of a chat request's ``messages`` (or one user message as a string), with the
    chat template's own tokens."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    return REQUEST_TOKENS + sum(MESSAGE_TOKENS + text_tokens(str(m.get("content") or ""))
                                for m in messages)


# ---------------------------------------------------------------------------- context window
@dataclass(frozen=True)
class Window:
    """Tokens the model reads at once (prompt and answer together), and where the figure comes
    from, in words ("the profile", "the server (llama.cpp)")."""

    tokens: int
    source: str


_probed: dict[tuple[str, str], tuple[float, int | None, str]] = {}
_probe_lock = threading.Lock()
_SERVER_PROVIDERS = ("openai/", "hosted_vllm/", "ollama/", "ollama_chat/", "lm_studio/")


def _profile_figure(profile: Any) -> int | None:
    value = getattr(profile, "context_window", None)
    try:
        return int(value) if value else None
    except (TypeError, ValueError):
        return None


def window_of(profile: Any, *, ask_server: bool = True) -> Window:
    """The context window of the model ``profile`` (a ``core.settings.ModelProfile``, or any
    object with ``model`` and perhaps ``context_window``, ``api_bases``) reaches. A server is
    asked once per process (``ask_server`` False: only what is known already). Blocking when
    it asks: in a coroutine use :func:`limits_for`."""
    model = str(getattr(profile, "model", "") or "")
    own = _profile_figure(profile)
    bases = list(getattr(profile, "api_bases", None) or [])
    is_file = bool(getattr(profile, "is_local", False)) or bool(getattr(profile, "gguf_path", ""))
    if not is_file and model.startswith(_SERVER_PROVIDERS):
        found = _server_window(model, bases[0] if bases else "", ask=ask_server)
        if found is not None:
            return found
    if own:
        return Window(own, "the model profile's context window")
    known = _litellm_window(model)
    if known:
        return Window(known, "litellm's list of models")
    return Window(8192, "a default (the model's own figure is not known)")


def context_window(profile: Any) -> int:
    """Tokens the model of ``profile`` reads at once (see :func:`window_of`)."""
    return window_of(profile).tokens


def _litellm_window(model: str) -> int | None:
    if not model:
        return None
    try:
        from core.llm._litellm import litellm_module

        info = litellm_module().get_model_info(model)
    except Exception:  # noqa: BLE001 - a model litellm does not know
        return None
    value = info.get("max_input_tokens") or info.get("max_tokens")
    return int(value) if value else None


def _local_host(url: str) -> bool:
    host = (urlsplit(url).hostname or "").strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _root(base: str) -> str:
    """``http://host:port`` of an API base (``http://host:port/v1`` -> without ``/v1``)."""
    parts = urlsplit(base)
    path = re.sub(r"/v1/?$", "", parts.path.rstrip("/"))
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _server_window(model: str, base: str, *, ask: bool) -> Window | None:
    ollama = model.startswith(("ollama/", "ollama_chat/"))
    if not base:
        if not ollama:
            return None
        base = "http://localhost:11434"
    key = (model, base)
    with _probe_lock:
        known = _probed.get(key)
    if known is not None and (known[1] is not None or time.monotonic() - known[0] < PROBE_RETRY_S):
        return Window(known[1], known[2]) if known[1] else None
    if not ask:
        return None
    name = model.split("/", 1)[1]
    try:
        tokens, source = (_ask_ollama(base, name) if ollama else _ask_openai_server(base, name))
    except Exception:  # noqa: BLE001 - the server cannot be asked: the profile's figure
        tokens, source = None, ""
    with _probe_lock:
        _probed[key] = (time.monotonic(), tokens, source)
    return Window(tokens, source) if tokens else None


def _client(url: str) -> Any:
    import httpx

    # a proxy is never asked about a server on this computer
    return httpx.Client(timeout=PROBE_TIMEOUT_S, trust_env=not _local_host(url))


def _positive(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def _ask_ollama(base: str, name: str) -> tuple[int | None, str]:
    """Ollama's window: the model's ``num_ctx`` parameter when set, else Ollama's default for
    its version (4,096 since 0.6.4, 2,048 before), at most the model's trained length."""
    root = _root(base)
    with _client(root) as client:
        shown = client.post(f"{root}/api/show", json={"model": name})
        shown.raise_for_status()
        data = shown.json()
        trained = next((_positive(v) for k, v in (data.get("model_info") or {}).items()
                        if str(k).endswith(".context_length")), None)
        found = re.search(r"(?m)^\s*num_ctx\s+(\d+)", str(data.get("parameters") or ""))
        if found:
            return int(found.group(1)), "the Ollama server (the model's num_ctx)"
        default = 4096
        try:
            version = client.get(f"{root}/api/version").json().get("version", "")
            numbers = tuple(int(n) for n in re.findall(r"\d+", str(version))[:3])
            if numbers and numbers < (0, 6, 4):
                default = 2048
        except Exception:  # noqa: BLE001, S110 - an unknown version: the newer default
            pass
    tokens = min(default, trained) if trained else default
    return tokens, "the Ollama server (its default context; set num_ctx for more)"


def _ask_openai_server(base: str, name: str) -> tuple[int | None, str]:
    """A llama.cpp server's context per slot (``/props``) or vLLM's ``max_model_len``
    (``/v1/models``)."""
    root = _root(base)
    with _client(root) as client:
        try:
            props = client.get(f"{root}/props")
            if props.status_code == 200:
                settings = props.json().get("default_generation_settings") or {}
                tokens = _positive(settings.get("n_ctx"))
                if tokens:
                    return tokens, "the llama.cpp server (its context per slot)"
        except (ValueError, AttributeError):
            pass
        listed = client.get(base.rstrip("/") + "/models")
        if listed.status_code == 200:
            for entry in listed.json().get("data") or []:
                if isinstance(entry, dict) and entry.get("id") == name:
                    tokens = _positive(entry.get("max_model_len"))
                    if tokens:
                        return tokens, "the server (its max_model_len)"
    return None, ""


def forget_servers() -> None:
    """Ask servers again next time (tests; a server restarted with another context)."""
    with _probe_lock:
        _probed.clear()


# ------------------------------------------------------------------------------------ limits
class TooLong(ValueError):
    """One input cannot fit the model's context window even alone. ``str()`` names it, says how
    many tokens it needs and how many fit, and what to do."""

    def __init__(self, message: str, *, index: int | None = None, needed: int = 0,
                 room: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.index = index
        self.needed = needed
        self.room = room


@dataclass(frozen=True)
class Overlong:
    """One input too long for a model even alone: ``what`` it is ("the text “a12” (row 14),
    scored on Coherence"), the prompt tokens it ``needed``, the model's ``limits`` and what to
    do (``shorten``). ``str()`` is the whole sentence (:meth:`Limits.too_long`);
    :func:`refusal` lists several briefly."""

    what: str
    needed: int
    limits: Limits
    shorten: str = "shorten it"

    def __str__(self) -> str:
        return self.limits.too_long(self.what, self.needed, shorten=self.shorten)


@dataclass(frozen=True)
class Limits:
    """What one model can take: ``window`` tokens in all, ``answer`` of them kept for the reply
    (the profile's ``max_tokens``, at most half the window). ``model`` and ``profile`` name them
    in messages."""

    window: int
    answer: int
    source: str = ""
    model: str = ""
    profile: str = ""

    @property
    def prompt(self) -> int:
        """Tokens a prompt may take: the window minus the answer's room and the room for the
        note of a second asking."""
        return max(0, self.window - self.answer - REASK_TOKENS)

    @property
    def reply(self) -> int:
        """Tokens an expected reply may take (a share of the answer's room)."""
        return max(1, int(self.answer * REPLY_FILL))

    def fits(self, messages: Sequence[dict[str, Any]] | str, reply: int = 0) -> bool:
        """Whether a prompt of ``messages`` fits, with an expected reply of ``reply`` tokens."""
        return prompt_tokens(messages) <= self.prompt and reply <= self.reply

    def overlong(self, what: str, needed: int, *, shorten: str = "shorten it") -> Overlong:
        """:class:`Overlong` for ``what``, which needs ``needed`` prompt tokens."""
        return Overlong(what, needed, self, shorten)

    def too_long(self, what: str, needed: int, *, shorten: str = "shorten it") -> str:
        """The sentence refusing ``what`` ("the text in row 12"), which needs ``needed`` prompt
        tokens, with what to do."""
        who = f"'{self.model}'" if self.model else "the model"
        where = f" of profile '{self.profile}'" if self.profile else ""
        comma = "," if "," in what else ""  # "the text 4, scored on Coherence, is ..."
        return (f"{what[0].upper()}{what[1:]}{comma} is too long for {who}: it needs about "
                f"{needed:,} tokens, and the model reads {self.window:,} at once, "
                f"{self.answer:,} of them kept for its answer (so about {self.prompt:,} for the "
                f"question). {shorten[0].upper()}{shorten[1:]}, or choose a model with a larger "
                f"context window (or raise 'context window'{where} in Settings → Models if the "
                "model can read more).")


def limits_of(llm: Any, *, ask_server: bool = True) -> Limits | None:
    """The limits of the model ``llm`` (a ``core.llm.Gateway``, a model profile, or anything
    with a ``profile``); None when it has no profile (a test's stand-in model: no limit)."""
    profile = getattr(llm, "profile", llm)
    if not getattr(profile, "model", None) or isinstance(profile, (str, bytes)):
        return None
    window = window_of(profile, ask_server=ask_server)
    answer = int(getattr(profile, "max_tokens", 0) or 0) or 1024
    answer = max(1, min(answer, window.tokens // 2))
    return Limits(window.tokens, answer, window.source, str(profile.model),
                  str(getattr(profile, "name", "") or ""))


async def limits_for(llm: Any) -> Limits | None:
    """:func:`limits_of` without blocking the event loop (a server is asked in a thread)."""
    profile = getattr(llm, "profile", llm)
    model = str(getattr(profile, "model", "") or "")
    if not model.startswith(_SERVER_PROVIDERS):
        return limits_of(llm)
    return await asyncio.get_running_loop().run_in_executor(None, limits_of, llm)


# ------------------------------------------------------------------------------------ splitting
def parts_that_fit(
    items: Sequence[T],
    fits: Callable[[Sequence[T]], bool],
    *,
    size: Callable[[Sequence[T]], float] | None = None,
    what: Callable[[int], str] | None = None,
    limits: Limits | None = None,
    needed: Callable[[T], int] | None = None,
    shorten: str = "shorten it",
) -> list[list[T]]:
    """``items`` cut into consecutive parts (in order, none empty) for which ``fits(part)`` is
    True, as few as greedy packing needs and then evened out (a last part of two notes after
    two parts of thirty makes a poor prompt). ``size(part)`` (a part's cost, default its
    length) guides the evening out. An item that does not fit alone raises :class:`TooLong`
    naming it (``what(index)``, e.g. "note 12 of anna.txt"; ``needed(item)`` its tokens)."""
    items = list(items)
    if not items:
        return []
    if fits(items):
        return [items]
    size = size or (lambda part: float(len(part)))
    greedy: list[list[T]] = []
    current: list[T] = []
    for index, item in enumerate(items):
        if not fits([item]):
            label = what(index) if what else f"input {index + 1}"
            tokens = needed(item) if needed else 0
            message = limits.too_long(label, tokens, shorten=shorten) if limits else (
                f"{label[0].upper()}{label[1:]} is too long for the model's context window.")
            raise TooLong(message, index=index, needed=tokens,
                          room=limits.prompt if limits else 0)
        if current and not fits([*current, item]):
            greedy.append(current)
            current = []
        current.append(item)
    greedy.append(current)
    return _evened(items, len(greedy), fits, size) or greedy


def _evened(items: list[T], count: int, fits: Callable[[Sequence[T]], bool],
            size: Callable[[Sequence[T]], float]) -> list[list[T]] | None:
    """``items`` in ``count`` consecutive parts of about equal size, if each fits."""
    costs = [size([item]) for item in items]
    total = sum(costs)
    parts: list[list[T]] = []
    current: list[T] = []
    spent = 0.0
    for item, cost in zip(items, costs):
        boundary = total * (len(parts) + 1) / count
        if current and len(parts) < count - 1 and spent + cost / 2 > boundary:
            parts.append(current)
            current = []
        current.append(item)
        spent += cost
    parts.append(current)
    if len(parts) != count or not all(part and fits(part) for part in parts):
        return None
    return parts


def split_items(
    items: Sequence[T],
    prompt_of: Callable[[Sequence[T]], Sequence[dict[str, Any]]],
    limits: Limits | None,
    *,
    reply_of: Callable[[Sequence[T]], int] | None = None,
    what: Callable[[int], str] | None = None,
    shorten: str = "shorten it",
) -> list[list[T]]:
    """``items`` (notes, questions, samples...) cut into consecutive parts whose prompt
    (``prompt_of(part)``: the step's messages, built by its own prompt builder) fits
    ``limits`` with an expected reply of ``reply_of(part)`` tokens (a part of one item is kept
    even when its reply may not fit: it cannot be split further). One part when everything
    fits or there are no limits. Sizes are added up item by item (a prompt lists its items one
    per line) and every part is checked whole at the end. Raises :class:`TooLong` naming the
    item that cannot fit alone (``what(index)``)."""
    items = list(items)
    if limits is None or not items:
        return [items] if items else []
    if limits.fits(prompt_of(items), reply_of(items) if reply_of else 0):
        return [items]
    base = prompt_tokens(prompt_of([]))
    costs = [prompt_tokens(prompt_of([item])) - base for item in items]
    reply_base = reply_of([]) if reply_of else 0
    replies = [reply_of([item]) - reply_base for item in items] if reply_of else [0] * len(items)
    room = limits.prompt
    for _attempt in range(6):
        def fits(part: Sequence[int], room: int = room) -> bool:
            # one item is sent even if its reply may not fit: it cannot be split further
            return (base + sum(costs[i] for i in part) <= room
                    and (len(part) == 1
                         or reply_base + sum(replies[i] for i in part) <= limits.reply))

        parts = parts_that_fit(list(range(len(items))), fits,
                               size=lambda part: float(sum(costs[i] for i in part)), what=what,
                               limits=limits, needed=lambda i: base + costs[i], shorten=shorten)
        chosen = [[items[i] for i in part] for part in parts]
        over = max(prompt_tokens(prompt_of(part)) - limits.prompt for part in chosen)
        if over <= 0:
            return chosen
        room -= over + 8  # the parts' whole prompts came out larger than their sum
    return chosen


def refusal(problems: Sequence[Any], *, shown: int = 8) -> str:
    """One message refusing a run for the inputs in ``problems`` (:class:`Overlong`, or whole
    sentences), at most ``shown`` of them listed: for several inputs too long for the same
    model, one line each with its size, then what to do once."""
    problems = list(dict.fromkeys(problems))
    if len(problems) == 1:
        return f"Nothing was sent to the model. {problems[0]}"
    alike = all(isinstance(p, Overlong) for p in problems) and len(
        {(p.limits, p.shorten) for p in problems}) == 1
    if not alike:
        lines = [f"Nothing was sent to the model: {len(problems)} inputs are too long for it."]
        lines += [f"- {p}" for p in problems[:shown]]
    else:
        limits, shorten = problems[0].limits, problems[0].shorten
        who = f"'{limits.model}'" if limits.model else "the model"
        where = f" of profile '{limits.profile}'" if limits.profile else ""
        head = (f"Nothing was sent to the model: {len(problems)} inputs are too long for "
                f"{who}, which reads {limits.window:,} tokens at once ({limits.answer:,} kept "
                f"for its answer, so about {limits.prompt:,} for the question):")
        lines = [head]
        lines += [f"- {p.what}: about {p.needed:,} tokens" for p in problems[:shown]]
    if len(problems) > shown:
        lines.append(f"- and {len(problems) - shown} more.")
    if alike:
        lines.append(f"{shorten[0].upper()}{shorten[1:]}, or choose a model with a larger "
                     f"context window (or raise 'context window'{where} in Settings → Models "
                     "if the model can read more).")
    return "\n".join(lines)


def reply_tokens(example: Any) -> int:
    """Tokens of a reply shaped like ``example`` (a JSON value or text)."""
    text = example if isinstance(example, str) else json.dumps(example, ensure_ascii=False)
    return text_tokens(text)
