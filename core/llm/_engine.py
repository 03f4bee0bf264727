"""The engine for model files: llama.cpp's own server, ``llama-server``, in a process of its own.

A profile that runs a model file (``evaldesk-local/...``: the bundled Gemma 3 270M or any .gguf)
gets one engine process per (file, context size, slots). It is started on the first call:

* on a free port on 127.0.0.1 only, with a random API key (passed in its environment, not on its
  command line), and its log in ``<user logs>/llama-server.log``;
* with ``slots`` parallel sequences, each with the profile's whole context window: the KV cache is
  sized ``slots x context`` (llama-server splits ``-c`` among its slots), so a prompt that fits the
  profile's ``context_window`` fits every slot. The number of slots is the profile's "calls at
  once", lowered when this computer's free memory cannot hold that many contexts beside the model
  (:func:`slots_for`);
* its health is polled until the model is loaded, with progress to :func:`add_engine_listener`
  listeners (the status bar, the CLI).

Its life is tied to ours: its standard input is a pipe from this process, and it runs in
llama-server's "child" mode (``LLAMA_SERVER_ROUTER_PORT``), in which it exits when that pipe ends,
which the system does when this process ends in any way (``kill -9`` too), on every platform; on
Linux it also gets SIGKILL from the kernel when we die (``PR_SET_PDEATHSIG``), even while it is
still loading the model. :func:`stop_engines` ends them (project closed, app quit, CLI done; also
at interpreter exit).

Calls go to it over the same OpenAI-compatible HTTP path as any server (``_direct``). If the
process dies, the gateway asks :meth:`Engine.recover`: a crashed engine is restarted once and the
calls that were in flight are sent again; if it dies again before it has answered anything, calls
fail with a plain sentence (finished units are kept in the project; a new run starts it afresh).
A crash never takes the app down: the engine is another program.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import machine, paths

PROGRAM = "llama-server"
#: A ``llama-server`` program to use instead of the shipped one (developers, tests).
PROGRAM_ENV = "EVALDESK_LLAMA_SERVER"
#: The name the engine answers to (its one model).
ALIAS = "evaldesk-local"
#: Longest wait for a model to load (a large file on a slow disk).
START_TIMEOUT_S = 600.0
#: Memory kept free for the rest of the computer when choosing how many slots fit.
_MARGIN = 768 * 1024**2
#: Slots at most, whatever the profile says (beyond this a CPU gains nothing).
MAX_SLOTS = 16
_MiB = 1024**2


class EngineError(Exception):
    """The engine cannot run or stopped; ``message`` says what happened and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ------------------------------------------------------------------------------ the program
def program() -> Path:
    """The ``llama-server`` program: ``$EVALDESK_LLAMA_SERVER``, else the one shipped in the app
    (``<bundle>/llama.cpp/``), else the one ``make setup`` built into this source tree
    (``build/llama.cpp/``). Raises :class:`EngineError`."""
    name = PROGRAM + (".exe" if sys.platform == "win32" else "")
    chosen = os.environ.get(PROGRAM_ENV)
    if chosen:
        path = Path(chosen).expanduser()
        if path.is_file():
            return path
        raise EngineError(f"{PROGRAM_ENV} names {path}, which does not exist.")
    bundle = getattr(sys, "_MEIPASS", None)
    places = [Path(bundle) / "llama.cpp"] if bundle else []
    places.append(Path(__file__).resolve().parents[2] / "build" / "llama.cpp")
    for place in places:
        if (place / name).is_file():
            return place / name
    raise EngineError(
        "The engine that runs model files (llama-server) is missing from this installation. "
        "Reinstall EvalDesk; when running from source, run 'make setup', which builds it."
    )


# ------------------------------------------------------------------------------ the model file
@dataclass(frozen=True)
class ModelFacts:
    """What the GGUF header says that the engine's settings depend on."""

    architecture: str = ""
    has_chat_template: bool = True
    #: Bytes of KV cache per token of context (16-bit keys and values, every layer); 0 = unknown.
    kv_bytes_per_token: int = 0
    trained_context: int | None = None
    file_size: int = 0


def model_facts(path: Path) -> ModelFacts:
    """Read the GGUF header of ``path`` (blocking; a few tenths of a second for a large
    vocabulary). A header that cannot be read gives defaults: the engine then says what is
    wrong when it loads the file."""
    from core.local_models.files import NotAModelFile, gguf_metadata

    try:
        meta = gguf_metadata(path)
    except (NotAModelFile, OSError):
        return ModelFacts(file_size=_size(path))
    arch = str(meta.get("general.architecture") or "")

    def number(key: str) -> int | None:
        value = meta.get(f"{arch}.{key}")
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
            else None

    layers = number("block_count") or 0
    heads = number("attention.head_count") or 0
    heads_kv = number("attention.head_count_kv") or heads
    width = number("embedding_length") or 0
    key = number("attention.key_length") or (width // heads if heads else 0)
    value = number("attention.value_length") or key
    return ModelFacts(
        architecture=arch,
        has_chat_template="tokenizer.chat_template" in meta,
        kv_bytes_per_token=2 * layers * heads_kv * (key + value),
        trained_context=number("context_length"),
        file_size=_size(path),
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def slots_for(wanted: int, context: int, facts: ModelFacts, available: int | None) -> int:
    """Parallel slots for ``wanted`` calls at once: as many as asked (at most
    :data:`MAX_SLOTS`), fewer when free memory (``available`` bytes, less the model file and a
    margin) cannot hold that many full contexts. Always at least 1."""
    slots = max(1, min(int(wanted), MAX_SLOTS))
    per_slot = facts.kv_bytes_per_token * context
    if available is None or per_slot <= 0:
        return slots
    room = available - facts.file_size - _MARGIN
    return max(1, min(slots, room // per_slot))


def prompt_cache_mib(slots: int, context: int, facts: ModelFacts, available: int | None) -> int:
    """Memory for llama-server's prompt cache in RAM (earlier prompts kept to be reused, e.g. a
    debate agent's prefix while its slot serves another call): half of what the slots leave free,
    at most 2 GB."""
    if available is None:
        return 256
    room = available - facts.file_size - _MARGIN - slots * context * facts.kv_bytes_per_token
    return int(max(0, min(2048, room // 2 // _MiB)))


# ------------------------------------------------------------------------------ events
@dataclass(frozen=True)
class EngineEvent:
    """``kind``: "starting" (``seconds`` since start, repeated while loading), "ready",
    "crashed", "stopped". ``message`` is a plain sentence to show."""

    kind: str
    message: str
    model: str = ""
    seconds: float = 0.0


_listeners: list[Callable[[EngineEvent], None]] = []


def add_engine_listener(callback: Callable[[EngineEvent], None]) -> Callable[[], None]:
    """Be told when an engine starts, is ready, crashes or stops. Returns the remover."""
    _listeners.append(callback)

    def remove() -> None:
        if callback in _listeners:
            _listeners.remove(callback)

    return remove


def _tell(event: EngineEvent) -> None:
    for callback in _listeners.copy():
        try:
            callback(event)
        except Exception:  # noqa: BLE001, S110 - a listener's fault is not the engine's
            pass


# ------------------------------------------------------------------------------ one engine
@dataclass(frozen=True)
class EngineKey:
    gguf: str
    context: int
    #: The calls at once asked for (the engine may have fewer slots: :func:`slots_for`).
    wanted: int


@dataclass
class Engine:
    """One llama-server process (restarted as needed) for one :class:`EngineKey`."""

    key: EngineKey
    facts: ModelFacts
    slots: int = 1
    cache_mib: int = 256
    process: subprocess.Popen | None = None
    port: int = 0
    api_key: str = ""
    #: Bumped at every start: a call sent to an older process knows it was restarted since.
    generation: int = 0
    #: The engine was restarted after a crash and has not answered since.
    restarted_unanswered: bool = False
    crashes: int = 0
    #: Per-slot context the server reports (``/props``), once started.
    slot_context: int = 0
    _stopping: bool = False
    _locks: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary)
    _log: Any = None

    @property
    def name(self) -> str:
        return Path(self.key.gguf).name

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def log_path(self) -> Path:
        return paths.user_log_dir() / "llama-server.log"

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    # -- start ---------------------------------------------------------------------------
    def command(self, port: int) -> list[str]:
        key = self.key
        command = [
            str(program()),
            "--model", key.gguf,
            "--alias", ALIAS,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--parallel", str(self.slots),
            # llama-server splits the context among its slots: size it so each has the whole
            "--ctx-size", str(key.context * self.slots),
            "--no-kv-unified",
            # models with sliding-window attention (Gemma 3) keep every layer's whole context,
            # so a later call can reuse any prefix of an earlier one (a debate agent's next
            # turn); the memory this takes is what slots_for counts; other models ignore it
            "--swa-full",
            "--cache-ram", str(self.cache_mib),
            "--no-webui",
            "--log-verbosity", "2",
        ]  # fmt: skip
        if not self.facts.has_chat_template and self.facts.architecture.startswith("gemma"):
            # The file has no chat template: Gemma's turns (system text at the start of the
            # first user turn, as Gemma has no system role)
            command += ["--jinja", "--chat-template-file", str(gemma_template())]
        return command

    def _spawn(self) -> None:
        port = _free_port()
        self.api_key = secrets.token_urlsafe(24)
        env = {**os.environ, "LLAMA_API_KEY": self.api_key,
               # child mode: exit when our end of its standard input closes (we ended)
               "LLAMA_SERVER_ROUTER_PORT": "0"}
        for name in ("LLAMA_ARG_HOST", "LLAMA_ARG_PORT", "LLAMA_ARG_MODEL"):
            env.pop(name, None)
        if self._log is not None:
            self._log.close()
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - open as long as the process
        self._log.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} starting "
                        f"{self.name} on port {port}\n".encode())
        self._log.flush()
        kwargs: dict[str, Any] = {}
        if sys.platform == "win32":
            kwargs["creationflags"] = subprocess.CREATE_NO_WINDOW  # type: ignore[attr-defined]
        elif sys.platform.startswith("linux"):
            kwargs["preexec_fn"] = _die_with_parent
        self.process = subprocess.Popen(
            self.command(port), stdin=subprocess.PIPE, stdout=self._log,
            stderr=subprocess.STDOUT, env=env, close_fds=True, **kwargs,
        )
        self.port = port
        self.generation += 1

    async def start(self, cancel: Any = None) -> None:
        """Start the process and wait until it has loaded the model (blocking nothing)."""
        from core.llm._gateway import until_cancelled

        self._stopping = False
        last_problem = ""
        for _attempt in range(3):  # another program may take the free port first
            self._spawn()
            started = time.monotonic()
            _tell(EngineEvent("starting", f"Starting the local model ({self.name})…",
                              self.name, 0.0))
            try:
                ready = await until_cancelled(self._wait_healthy(started), cancel)
            except BaseException:
                self.stop()
                raise
            if ready:
                self.slot_context = await self._slot_context()
                took = time.monotonic() - started
                _tell(EngineEvent("ready", f"The local model is ready ({self.name}, "
                                  f"{took:.0f} s to load).", self.name, took))
                return
            last_problem = self._last_error()
            if "bind" not in last_problem.lower():
                break
        self.stop()
        said = f" ({last_problem})" if last_problem else ""
        raise EngineError(
            f"The model file {self.key.gguf} could not be loaded{said}. Check that it is a GGUF "
            "chat model and that the computer has enough free memory; details are in "
            f"{self.log_path}."
        )

    async def _wait_healthy(self, started: float) -> bool:
        import httpx

        told = 0
        async with httpx.AsyncClient(trust_env=False, timeout=2.0) as client:
            while time.monotonic() - started < START_TIMEOUT_S:
                if self.process is None or self.process.poll() is not None:
                    return False
                try:
                    reply = await client.get(f"http://127.0.0.1:{self.port}/health")
                    if reply.status_code == 200:
                        return True
                except httpx.HTTPError:
                    pass
                waited = time.monotonic() - started
                if int(waited) > told:
                    told = int(waited)
                    _tell(EngineEvent("starting", f"Loading the local model ({self.name}): "
                                      f"{told} s…", self.name, waited))
                await asyncio.sleep(0.1)
        raise EngineError(f"The local model {self.name} did not load within "
                          f"{START_TIMEOUT_S:.0f} s; details are in {self.log_path}.")

    async def _slot_context(self) -> int:
        import httpx

        try:
            async with httpx.AsyncClient(trust_env=False, timeout=5.0) as client:
                reply = await client.get(f"http://127.0.0.1:{self.port}/props",
                                         headers={"Authorization": f"Bearer {self.api_key}"})
                return int(reply.json()["default_generation_settings"]["n_ctx"])
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return 0

    def _last_error(self) -> str:
        """The engine's last error line from its log, in a few words."""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(max(0, log.seek(0, os.SEEK_END) - 16_000))
                lines = log.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        for line in reversed(lines):
            lowered = line.lower()
            if "error" in lowered or "failed" in lowered or "couldn't" in lowered:
                return " ".join(line.split())[-300:]
        return ""

    async def ensure(self, cancel: Any = None) -> None:
        """Running, or started now (a new run also starts an engine that stopped)."""
        if self.running():
            return
        async with self._lock():
            if not self.running():
                self.restarted_unanswered = False
                await self.start(cancel)

    # -- crashes -------------------------------------------------------------------------
    def answered(self) -> None:
        """A call was answered: a later crash may be restarted again."""
        self.restarted_unanswered = False

    async def recover(self, generation: int, cancel: Any = None) -> bool:
        """After a call sent to process ``generation`` failed: True when the engine had stopped
        and runs again now (send the call again), False when it is running and the failure was
        something else. Raises :class:`EngineError` when it stopped again before answering
        anything since its last restart (no more automatic restarts in this run)."""
        if self.generation == generation and self.running():
            return False
        async with self._lock():
            if self.generation != generation and self.running():
                return True  # another call restarted it meanwhile
            if self.running():
                return False
            if self._stopping:
                raise EngineError("The local model was stopped (the project was closed).")
            code = self.process.poll() if self.process is not None else None
            self.crashes += 1
            if self.restarted_unanswered:
                message = (
                    f"The local model's engine stopped unexpectedly again (exit code {code}) "
                    "before it could answer. Finished items are kept: run again to continue, "
                    "or choose a smaller model or fewer calls at once in Settings → Models. "
                    f"Details are in {self.log_path}."
                )
                _tell(EngineEvent("crashed", message, self.name))
                raise EngineError(message)
            _tell(EngineEvent("crashed", f"The local model's engine stopped unexpectedly (exit "
                              f"code {code}); restarting it. Calls in progress are sent again.",
                              self.name))
            self.restarted_unanswered = True
            await self.start(cancel)
            return True

    # -- stop ----------------------------------------------------------------------------
    def stop(self, wait_s: float = 5.0) -> None:
        """End the process (and do not restart it): its standard input is closed and it is
        asked to stop, then killed if it has not within ``wait_s`` seconds."""
        self._stopping = True
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            try:
                if process.stdin is not None:
                    process.stdin.close()
            except OSError:
                pass
            process.terminate()
            try:
                process.wait(wait_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
            _tell(EngineEvent("stopped", f"The local model ({self.name}) was stopped.",
                              self.name))
        elif process is not None and process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass
        if self._log is not None:
            self._log.close()
            self._log = None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _prepare_pdeathsig() -> Callable[[], None]:
    """A function for ``preexec_fn`` that asks Linux to SIGKILL the child when its parent
    thread ends (made before forking: the child only calls it)."""
    import ctypes
    import signal

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return lambda: None
    pr_set_pdeathsig = 1

    def set_pdeathsig() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)

    return set_pdeathsig


_die_with_parent: Callable[[], None] = (
    _prepare_pdeathsig() if sys.platform.startswith("linux") else (lambda: None)
)


def gemma_template() -> Path:
    """Our chat template for Gemma files that carry none (the bundled one among them)."""
    return paths.resources_dir() / "engine" / "gemma-turns.jinja"


# ------------------------------------------------------------------------------ all engines
_engines: dict[EngineKey, Engine] = {}
_engines_lock = threading.Lock()


def engine_for(gguf: Path, context: int, wanted_slots: int) -> Engine:
    """The engine for this file and settings (made, not started; blocking: reads the file's
    header, so call it in an executor)."""
    key = EngineKey(str(Path(gguf).resolve()), int(context), int(wanted_slots))
    with _engines_lock:
        engine = _engines.get(key)
    if engine is not None:
        return engine
    facts = model_facts(Path(key.gguf))
    available = machine.available_memory()
    slots = slots_for(key.wanted, key.context, facts, available)
    made = Engine(key, facts, slots=slots,
                  cache_mib=prompt_cache_mib(slots, key.context, facts, available))
    with _engines_lock:
        return _engines.setdefault(key, made)


def stop_engines() -> None:
    """Stop every engine (project closed, app quit, CLI done)."""
    with _engines_lock:
        engines = list(_engines.values())
        _engines.clear()
    for engine in engines:
        engine.stop()


def running_engines() -> list[Engine]:
    return [e for e in list(_engines.values()) if e.running()]


atexit.register(stop_engines)
