"""``core.llm.context``: the token count never falls materially short of real tokenizers, the
context window comes from the server where it can be asked (fake Ollama, llama.cpp and vLLM
servers on 127.0.0.1), and the gateway's second asking fits the window."""

from __future__ import annotations

import json
import os
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.llm import context
from core.settings import ModelProfile

#: Texts our users write (our own sentences), clinical shorthand, a table and emoji.
SAMPLES = {
    "en": "The pupil's essay explains why the river floods every spring. It names two causes, "
          "snowmelt in the mountains and heavy rain, but it does not say how the town prepared.",
    "de": "Der Aufsatz der Schülerin erklärt, warum der Fluss jedes Frühjahr über die Ufer tritt; "
          "die Gemeindeverwaltung und ihre Hochwasservorbereitung fehlen völlig.",
    "nl": "Het opstel van de leerling legt uit waarom de rivier elk voorjaar buiten haar oevers "
          "treedt, maar zegt niet hoe de gemeente zich heeft voorbereid.",
    "pl": "Wypracowanie ucznia wyjaśnia, dlaczego rzeka co wiosnę wylewa; źródła "
          "przeciwdziałania powodziom pominięto.",
    "tr": "Öğrencinin kompozisyonu, nehrin neden her ilkbaharda taştığını açıklıyor, ancak "
          "belediyenin nasıl hazırlandığından söz etmiyor.",
    "vi": "Bài luận của học sinh giải thích vì sao con sông lại tràn bờ vào mỗi mùa xuân.",
    "ru": "Сочинение ученицы объясняет, почему река каждую весну выходит из берегов.",
    "el": "Η έκθεση της μαθήτριας εξηγεί γιατί το ποτάμι πλημμυρίζει κάθε άνοιξη.",
    "ar": "يشرح مقال الطالبة سبب فيضان النهر كل ربيع، لكنها لا تقول كيف استعدت البلدية.",
    "he": "החיבור של התלמידה מסביר מדוע הנהר עולה על גדותיו בכל אביב.",
    "hi": "छात्रा का निबंध बताता है कि नदी हर वसंत में क्यों उफनती है।",
    "th": "เรียงความของนักเรียนอธิบายว่าทำไมแม่น้ำจึงเอ่อล้นทุกฤดูใบไม้ผลิ",
    "zh": "这位学生的作文解释了河流为什么每年春天都会泛滥，但没有说明市政府是如何做准备的。",
    "ja": "この生徒の作文は、なぜ川が毎年春に氾濫するのかを説明している。",
    "ko": "학생의 글은 강이 매년 봄마다 범람하는 이유를 설명한다.",
    "clinical": "Pt 67F, BP 142/88 mmHg, HR 92 bpm, SpO2 94% on RA, T 38.2°C. Labs: Hb 10.9 "
                "g/dL, WBC 13.4 x10^9/L, CRP 87 mg/L, eGFR 48 mL/min/1.73m², HbA1c 7.8%.",
    "table": "id;score;rater\n1001;4.5;R01\n1002;3.0;R02\n1003;2.25;R01\n"
             '{"q1": "yes", "q2": "no", "q3": "yes"}',
    "emoji": "Great job!! 👍👍 The story about the 🐶 was fun 😂 but too short ⏱️ ★★★☆☆",
}


def _tiktoken(name: str):
    import litellm  # its bundled encodings are read offline from its own folder

    tiktoken = pytest.importorskip("tiktoken")
    folder = Path(litellm.__file__).parent / "litellm_core_utils" / "tokenizers"
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(folder))
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # noqa: BLE001 - not bundled with this litellm
        pytest.skip(f"{name} is not available offline ({exc})")


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_count_is_not_below_gpts_tokenizers(encoding, name):
    real = len(_tiktoken(encoding).encode(SAMPLES[name]))
    assert context.text_tokens(SAMPLES[name]) >= 0.95 * real


@pytest.fixture(scope="module")
def gemma(gemma_tokens):
    """The bundled model's own tokenizer (llama.cpp's server's ``/tokenize``)."""
    return gemma_tokens


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_count_is_not_below_the_bundled_models_tokenizer(gemma, name):
    assert context.text_tokens(SAMPLES[name]) >= gemma(SAMPLES[name])


def test_english_is_not_counted_far_above_a_real_tokenizer():
    text = SAMPLES["en"] * 20
    real = len(_tiktoken("cl100k_base").encode(text))
    assert context.text_tokens(text) <= 1.4 * real  # conservative, not wasteful


def test_a_prompt_counts_its_messages_and_the_chat_template():
    messages = [{"role": "system", "content": "You judge texts."},
                {"role": "user", "content": SAMPLES["en"]}]
    assert context.prompt_tokens(messages) == (
        context.REQUEST_TOKENS + 2 * context.MESSAGE_TOKENS
        + context.text_tokens("You judge texts.") + context.text_tokens(SAMPLES["en"]))
    assert context.prompt_tokens(SAMPLES["en"]) == context.prompt_tokens(
        [{"role": "user", "content": SAMPLES["en"]}])


# ------------------------------------------------------------------------ the window
def test_a_model_file_uses_the_profiles_window():
    bundled = ModelProfile(name="b", model="evaldesk-local/gemma", context_window=4096,
                           max_tokens=512)
    window = context.window_of(bundled)
    assert window.tokens == 4096 and "profile" in window.source
    limits = context.limits_of(bundled)
    assert (limits.window, limits.answer) == (4096, 512)
    assert limits.prompt == 4096 - 512 - context.REASK_TOKENS


@contextmanager
def _server(routes: dict[str, object]):
    """A server on 127.0.0.1 answering GET and POST ``routes`` (path -> JSON)."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            seen.append(f"{self.command} {self.path}")
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            body = json.dumps(routes.get(self.path, {"error": "not found"})).encode()
            self.send_response(200 if self.path in routes else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    context.forget_servers()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        context.forget_servers()


def test_a_llama_cpp_server_is_asked_its_context_per_slot():
    with _server({"/props": {"default_generation_settings": {"n_ctx": 2048},
                             "total_slots": 4}}) as (base, seen):
        profile = ModelProfile(name="s", model="openai/qwen", api_bases=[base + "/v1"],
                               context_window=32768)
        window = context.window_of(profile)
        assert window.tokens == 2048 and "llama.cpp" in window.source
        context.window_of(profile)
        assert seen == ["GET /props"]  # asked once per process


def test_a_vllm_server_gives_its_max_model_len():
    with _server({"/v1/models": {"data": [{"id": "Qwen/Qwen2.5-7B", "max_model_len": 16384}]}}
                 ) as (base, _seen):
        profile = ModelProfile(name="v", model="hosted_vllm/Qwen/Qwen2.5-7B",
                               api_bases=[base + "/v1"])
        assert context.context_window(profile) == 16384


def test_ollama_gives_num_ctx_or_its_default():
    show = {"model_info": {"llama.context_length": 131072},
            "parameters": "stop \"<|eot_id|>\""}
    with _server({"/api/show": show, "/api/version": {"version": "0.6.8"}}) as (base, seen):
        profile = ModelProfile(name="o", model="ollama_chat/llama3.1", api_bases=[base])
        window = context.window_of(profile)
        assert window.tokens == 4096 and "Ollama" in window.source
        assert "POST /api/show" in seen
    show["parameters"] = "num_ctx 8192\nstop \"<|eot_id|>\""
    with _server({"/api/show": show}) as (base, _seen):
        profile = ModelProfile(name="o", model="ollama/llama3.1", api_bases=[base])
        assert context.context_window(profile) == 8192
    with _server({"/api/show": {"model_info": {}}, "/api/version": {"version": "0.5.7"}}
                 ) as (base, _seen):
        profile = ModelProfile(name="o", model="ollama/llama3.1", api_bases=[base])
        assert context.context_window(profile) == 2048


def test_a_server_that_cannot_be_asked_leaves_the_profiles_window():
    with _server({}) as (base, _seen):
        profile = ModelProfile(name="s", model="openai/x", api_bases=[base + "/v1"],
                               context_window=12000)
        window = context.window_of(profile)
        assert window.tokens == 12000 and "profile" in window.source


# ---------------------------------------------------------------- splitting and refusing
def test_an_item_too_long_alone_is_named_with_what_to_do():
    limits = context.Limits(window=1000, answer=200, model="m", profile="P")
    items = ["short note", "long note " * 400, "short"]
    with pytest.raises(context.TooLong) as caught:
        context.split_items(items, lambda part: [{"role": "user", "content": "\n".join(part)}],
                            limits, what=lambda i: f"note {i + 1}", shorten="shorten that note")
    message = str(caught.value)
    assert caught.value.index == 1
    assert message.startswith("Note 2 is too long for 'm'") and "1,000" in message
    assert "Shorten that note, or choose a model with a larger context window" in message
    assert "profile 'P'" in message


async def test_asking_again_fits_the_window_when_the_answer_was_cut_off():
    """A long answer cut off at max_tokens, asked again with the answer and a long schema, no
    longer fits: the problem goes into the request instead (the bundled model's 9,053 tokens)."""
    from pydantic import BaseModel, Field

    from core import prompts
    from core.llm import Gateway, MemoryCache, ScriptedLLM

    words = [f"choice number {i} of the long list" for i in range(300)]

    class Pick(BaseModel):
        picks: list[str] = Field(min_length=1)

    def tighten(schema):
        schema["properties"]["picks"]["items"] = {"type": "string", "enum": words}

    Held = prompts.held_to(Pick, tighten)
    answers = [json.dumps({"picks": words}), json.dumps({"picks": words[:3]})]

    def reply(messages):
        asked_again = any("could not be used" in m["content"] for m in messages)
        return answers[1] if asked_again else answers[0]

    server = ScriptedLLM(reply, name="ctx-reask", context_window=2048)
    gateway = Gateway(server.profile(context_window=2048, max_tokens=400), cache=MemoryCache())
    try:
        got = await gateway.complete_json([{"role": "user", "content": "Pick three."}], Held)
    finally:
        server.close()
    assert got.picks == words[:3]
    again = server.requests[1].messages
    assert len(again) == 1 and "could not be used" in again[-1]["content"]
    assert "cut off at the maximum length" in again[-1]["content"]
    assert "choice number 299" not in again[-1]["content"]  # the long schema left out
