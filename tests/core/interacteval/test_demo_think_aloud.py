"""The built-in demo model and the think-aloud (issue 28, point 8). With it the think-aloud
always failed (it repeated "keep it clean" until cut off), and the advice given, raise the
maximum tokens, made it fail later (3 min 57 s, then 11 min 23 s). It is no longer asked, and
no advice to allow longer answers is given for an answer cut off while repeating itself."""

from __future__ import annotations

from core.interacteval import Dimension, ScoredSample
from core.interacteval.think_aloud import CANNOT_THINK_ALOUD, can_think_aloud, think_aloud
from core.llm import Gateway, MemoryCache
from core.llm._gateway import _invalid, _Reply
from core.settings import ModelProfile, bundled_profile

DIM = Dimension(name="Word choice", definition="How precise and varied the words are.")
SAMPLES = [ScoredSample(source="", text="Uniforms is good because equal.", score=2)]


async def test_the_built_in_model_is_not_asked_to_think_aloud_and_says_what_to_do():
    gateway = Gateway(bundled_profile(), cache=MemoryCache())
    result = await think_aloud(DIM, SAMPLES, {"Built-in": gateway})
    assert result.attributes == [] and gateway.usage.calls == 0
    (failure,) = result.failures
    assert failure.who == "Built-in" and failure.kind == "too_small"
    assert failure.message == CANNOT_THINK_ALOUD
    assert "larger model" in failure.message and "write the notes yourself" in failure.message
    assert "maximum tokens" not in failure.message
    assert not can_think_aloud(bundled_profile())
    own_file = bundled_profile().model_copy(update={"gguf_path": "/models/qwen-7b.gguf"})
    assert can_think_aloud(own_file)


def test_an_answer_cut_off_while_repeating_itself_gets_no_advice_to_allow_longer_answers():
    server = ModelProfile(name="Server", model="openai/small", api_bases=["http://x/v1"])
    looping = _Reply("Keep it clean. Keep it clean. Keep it clean. Keep it", "length", 0, 0, 0,
                     0, "")
    message = _invalid(server, "the JSON was cut off", looping).message
    assert "maximum tokens" not in message and "another (larger) model" in message
    built_in = _invalid(bundled_profile(), "the JSON was cut off",
                        _Reply('{"considerations": ["Check', "length", 0, 0, 0, 0, "")).message
    assert "maximum tokens" not in built_in and "larger model" in built_in
    # a capable model cut off mid-way: a longer answer may well help
    long = _Reply('{"considerations": ["Check the order of ideas", "Check that', "length",
                  0, 0, 0, 0, "")
    assert "raise 'maximum tokens'" in _invalid(server, "cut off", long).message
