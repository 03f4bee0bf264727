"""The process the kill -9 loop shoots at (``python -m tests.attack._kill_worker``).

It imports EvalDesk and sets up the scripted models and the tiny, slowed-down encoder once, then
for each line ``{"argv": [...]}`` on stdin forks a child that runs ``evaldesk <argv>`` (the real
command line, in a process of its own) and prints ``pid <n>``; when the child ends, killed or
not, it prints ``exit <code>`` (-9 for a kill). Forking keeps each run's start cheap, so the
loop can kill many runs in CI.

The models answer after a short delay, so a run's work is spread over time and the kills land
at random points of the long steps: AQER's embedding batches, MAJ-Eval's debates, InteractEval's
scoring of texts.
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib

import core.embeddings
from core.cli import main
from core.llm import ScriptedLLM
from tests.core.aqer.aqer_support import HashedBagOfWords
from tests.core.majeval.majeval_support import SYNTHESIS, evaluation, item_of, kind, turn

#: Names of the scripted models (``--model scripted/<name>``).
CHECKLIST_MODEL = "scripted/kill-checklist"
MAJEVAL_MODEL = "scripted/kill-majeval"


def yes_or_no(text: str, question: int) -> str:
    """A fixed answer per text and question (so the texts get different scores)."""
    return "yes" if zlib.crc32(f"{text}|{question}".encode()) % 3 else "no"


def checklist_reply(messages):
    prompt = messages[-1]["content"]
    text = prompt.split("The text:", 1)[-1].split("The questions:", 1)[0].strip()
    return {f"q{n}": yes_or_no(text, n) for n in (1, 2, 3)}


def majeval_reply(messages):
    what = kind(messages)
    item = item_of(messages)
    score = zlib.crc32(item.encode()) % 5 + 1
    if what == "phase1":
        return evaluation(score)
    if what == "turn":
        return turn("NO MORE COMMENTS", score, done=True)
    if what == "aggregate":
        return SYNTHESIS
    raise AssertionError(what)


class SlowEncoder(HashedBagOfWords):
    """The hashed bag of words, taking a moment per batch like a real model (under the
    default model's name: a resumed run that loads no model names the one in Settings)."""

    model_name = "all-MiniLM-L6-v2"

    def __init__(self, model_path="", device="auto", batch_size=32):
        super().__init__()
        self.max_seq_length = 256

    def __call__(self, texts):
        time.sleep(0.02)
        return super().__call__(texts)

    def truncated(self, texts):
        return [False] * len(texts)


def preload() -> None:
    """Import once what every run needs, so a forked run starts working at once."""
    import openpyxl  # noqa: F401
    import scipy.stats  # noqa: F401

    import core.aqer.session
    import core.interacteval.session
    import core.majeval.session
    import core.stats  # noqa: F401
    from core.llm._litellm import litellm_module

    litellm_module()
    for name in ("core.cli.aqer", "core.cli.checklist", "core.cli.majeval",
                 "core.interacteval.agreement", "core.interacteval.report", "core.aqer.report",
                 "core.majeval.report"):
        try:
            __import__(name)
        except ImportError:
            pass


def setup() -> list[ScriptedLLM]:
    preload()
    core.embeddings.Encoder = SlowEncoder
    core.embeddings.CACHE_BATCH = 4  # many small committed batches: many places to be killed
    return [
        ScriptedLLM(checklist_reply, name=CHECKLIST_MODEL.split("/")[1], delay_s=0.03),
        ScriptedLLM(majeval_reply, name=MAJEVAL_MODEL.split("/")[1], delay_s=0.02),
    ]


def serve() -> None:
    models = setup()
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        argv = json.loads(line)["argv"]
        pid = os.fork()
        if pid == 0:  # the child: one command-line run
            code = 1
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)  # the pipe is the worker's own: pid and exit lines only
                os.dup2(devnull, 2)
                code = int(main(argv) or 0)
            finally:
                os._exit(code)
        print(f"pid {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(f"exit {code}", flush=True)
    for model in models:
        model.close()


if __name__ == "__main__":
    serve()
