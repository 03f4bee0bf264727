"""Benchmark of EvalDesk's conservative token count (``core.llm.context.text_tokens``) against
real tokenizers: it must never count materially fewer tokens than a model reads, or a prompt
sized with it would not fit.

    .venv/bin/python tests/benchmarks/bench_prompt_tokens.py [--vocab FOLDER]

Tokenizers: the GGUF vocabularies in FOLDER (``ggml-vocab-*.gguf``; llama.cpp ships them under
``models/`` in its source, e.g. the pinned llama-cpp-python sdist's ``vendor/llama.cpp/models``),
the bundled Gemma 3 270M's (read with llama-cpp-python, vocabulary only), and GPT-4's and GPT-4o's
(tiktoken's cl100k_base and o200k_base, from litellm's bundled copies; no network). Texts: one
paragraph of our own in each of 24 languages, clinical shorthand, a table and emoji, and real
English from the shared data (the InteractEval authors' notes, SummEval articles and summaries,
a patient focus-group study). The table gives each text's largest count among the tokenizers
in the common set (those of models people run today) divided by our count: at most 1 means
never fewer; the older vocabularies (DeepSeek LLM v1, Falcon, MPT, GPT-2) are shown apart.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from core.llm.context import text_tokens

SHARED = Path("/work/shared/data")
#: Vocabularies of models people run today; the others are shown apart.
COMMON = ("llama-spm", "phi-3", "llama-bpe", "qwen2", "qwen35", "gemma-4", "command-r",
          "gemma-3 (bundled)", "cl100k_base", "o200k_base")

SAMPLES = {
    'ar': 'يشرح مقال الطالبة سبب فيضان النهر كل ربيع. وتذكر سببين، ذوبان الثلوج في الجبال والأمطار الغزيرة، لكنها لا تقول كيف استعدت البلدية. الفقرة الأخيرة تكرر الفقرة الأولى تقريبا كلمة بكلمة، والإملاء صحيح في معظمه، مع أن بعض الجمل تتتابع دون علامات ترقيم.',
    'clinical': 'Pt 67F, BP 142/88 mmHg, HR 92 bpm, SpO2 94% on RA, T 38.2°C. Labs 2024-03-14: Hb 10.9 g/dL, WBC 13.4 x10^9/L, CRP 87 mg/L, eGFR 48 mL/min/1.73m², K+ 5.1 mmol/L, HbA1c 7.8%. Meds: metformin 1000 mg BID, ramipril 5 mg OD, atorvastatin 40 mg ON; amoxicillin-clavulanate 875/125 mg q12h x7d started 03/14 14:30.',
    'de': 'Der Aufsatz der Schülerin erklärt, warum der Fluss jedes Frühjahr über die Ufer tritt. Sie nennt zwei Ursachen, die Schneeschmelze in den Bergen und starke Regenfälle, beschreibt aber nicht, wie sich die Gemeindeverwaltung auf das Hochwasser vorbereitet hat. Der letzte Absatz wiederholt den ersten fast wörtlich; die Rechtschreibung ist überwiegend korrekt, Verbesserungsvorschläge fehlen.',
    'el': 'Η έκθεση της μαθήτριας εξηγεί γιατί το ποτάμι πλημμυρίζει κάθε άνοιξη. Αναφέρει δύο αιτίες, το λιώσιμο του χιονιού στα βουνά και τις έντονες βροχές, αλλά δεν λέει πώς προετοιμάστηκε ο δήμος. Η τελευταία παράγραφος επαναλαμβάνει σχεδόν αυτολεξεί την πρώτη· η ορθογραφία είναι σε γενικές γραμμές σωστή.',
    'emoji': 'Great job!! 👍👍 The story about the 🐶 and the 🐱 was fun 😂😂 but too short ⏱️. Next time add more details ✍️📚 — maybe 3–4 sentences more? ★★★☆☆ «Bien» „gut“ ‘ok’ … ✔︎ ✘ → ← ↑ ↓ ∑ ≈ ≠ ≤ ≥ ± × ÷ ½ ¾ © ®',
    'en': "The pupil's essay explains why the river floods every spring. It names two causes, snowmelt in the mountains and heavy rain, but it does not say how the town prepared. The last paragraph repeats the first one almost word for word, so the conclusion adds nothing new. Spelling is mostly correct; a few sentences run on without punctuation.",
    'es': 'La redacción del alumno explica por qué el río se desborda cada primavera. Menciona dos causas, el deshielo en las montañas y las lluvias intensas, pero no dice cómo se preparó el ayuntamiento. El último párrafo repite casi palabra por palabra el primero; la ortografía es en general correcta, aunque algunas oraciones se encadenan sin puntuación.',
    'fa': 'انشای دانش\u200cآموز توضیح می\u200cدهد که چرا رودخانه هر بهار طغیان می\u200cکند. دو علت را نام می\u200cبرد، ذوب شدن برف در کوهستان و باران\u200cهای شدید، اما نمی\u200cگوید شهرداری چگونه آماده شد. بند آخر تقریباً کلمه به کلمه بند اول را تکرار می\u200cکند و املا بیشتر درست است.',
    'fr': "La rédaction de l'élève explique pourquoi la rivière déborde chaque printemps. Elle cite deux causes, la fonte des neiges dans les montagnes et les fortes pluies, mais n'indique pas comment la municipalité s'est préparée. Le dernier paragraphe répète presque mot pour mot le premier ; l'orthographe est globalement correcte, même si quelques phrases s'enchaînent sans ponctuation.",
    'he': 'החיבור של התלמידה מסביר מדוע הנהר עולה על גדותיו בכל אביב. היא מציינת שתי סיבות, הפשרת השלג בהרים וגשמים עזים, אך אינה אומרת כיצד התכוננה העירייה. הפסקה האחרונה חוזרת כמעט מילה במילה על הראשונה; הכתיב ברובו נכון, אף שכמה משפטים נמשכים ללא סימני פיסוק.',
    'hi': 'छात्रा का निबंध बताता है कि नदी हर वसंत में क्यों उफनती है। वह दो कारण बताती है, पहाड़ों में बर्फ का पिघलना और भारी बारिश, लेकिन यह नहीं बताती कि नगर पालिका ने कैसे तैयारी की। अंतिम अनुच्छेद लगभग शब्दशः पहले अनुच्छेद को दोहराता है; वर्तनी अधिकतर सही है।',
    'it': "Il tema dell'alunna spiega perché il fiume straripa ogni primavera. Indica due cause, lo scioglimento delle nevi in montagna e le piogge abbondanti, ma non dice come si è preparato il comune. L'ultimo paragrafo ripete quasi parola per parola il primo; l'ortografia è per lo più corretta, anche se alcune frasi si susseguono senza punteggiatura.",
    'ja': 'この生徒の作文は、なぜ川が毎年春に氾濫するのかを説明している。山の雪解けと大雨という二つの原因を挙げているが、市役所がどのように備えたかについては述べていない。最後の段落は最初の段落をほぼそのまま繰り返しており、結論に新しい内容がない。句読点のない長い文もいくつか見られる。',
    'ko': '학생의 글은 강이 매년 봄마다 범람하는 이유를 설명한다. 산의 눈이 녹는 것과 폭우라는 두 가지 원인을 들지만, 시청이 어떻게 대비했는지는 말하지 않는다. 마지막 문단은 첫 문단을 거의 그대로 반복하여 결론에 새로운 내용이 없다. 맞춤법은 대체로 정확하지만 몇몇 문장은 문장 부호 없이 이어진다.',
    'nl': 'Het opstel van de leerling legt uit waarom de rivier elk voorjaar buiten haar oevers treedt. Het noemt twee oorzaken, smeltende sneeuw in de bergen en zware regenval, maar zegt niet hoe de gemeente zich heeft voorbereid. De laatste alinea herhaalt de eerste bijna woordelijk; de spelling is grotendeels correct, al lopen enkele zinnen zonder leestekens door.',
    'pl': 'Wypracowanie ucznia wyjaśnia, dlaczego rzeka co wiosnę wylewa. Wymienia dwie przyczyny, topnienie śniegu w górach i ulewne deszcze, ale nie mówi, jak przygotowała się gmina. Ostatni akapit powtarza niemal słowo w słowo pierwszy; pisownia jest w większości poprawna, choć kilka zdań ciągnie się bez znaków interpunkcyjnych. Źródła przeciwdziałania powodziom pominięto.',
    'pt': 'A redação do aluno explica por que o rio transborda a cada primavera. Cita duas causas, o derretimento da neve nas montanhas e as chuvas fortes, mas não diz como a prefeitura se preparou. O último parágrafo repete quase palavra por palavra o primeiro; a ortografia está em geral correta, embora algumas frases se sucedam sem pontuação.',
    'ru': 'Сочинение ученицы объясняет, почему река каждую весну выходит из берегов. Она называет две причины, таяние снега в горах и сильные дожди, но не говорит, как подготовилась городская администрация. Последний абзац почти дословно повторяет первый; орфография в целом правильная, хотя некоторые предложения тянутся без знаков препинания.',
    'table': 'id;score;rater;time\n1001;4.5;R01;2024-05-01 09:12:33\n1002;3.0;R02;2024-05-01 09:13:07\n1003;2.25;R01;2024-05-01 09:14:59\n1004;5.0;R03;2024-05-02 10:01:41\n1005;1.75;R02;2024-05-02 10:02:18\n1006;3.5;R03;2024-05-02 10:05:52\n{"q1": "yes", "q2": "no", "q3": "yes", "q4": "no", "q5": "yes", "q6": "no"}',
    'th': 'เรียงความของนักเรียนอธิบายว่าทำไมแม่น้ำจึงเอ่อล้นทุกฤดูใบไม้ผลิ โดยระบุสาเหตุสองประการ คือหิมะละลายบนภูเขาและฝนตกหนัก แต่ไม่ได้บอกว่าเทศบาลเตรียมตัวอย่างไร ย่อหน้าสุดท้ายเกือบจะซ้ำย่อหน้าแรกคำต่อคำ การสะกดคำส่วนใหญ่ถูกต้อง',
    'tr': 'Öğrencinin kompozisyonu, nehrin neden her ilkbaharda taştığını açıklıyor. Dağlardaki kar erimesi ve şiddetli yağmurlar olmak üzere iki neden sayıyor, ancak belediyenin nasıl hazırlandığından söz etmiyor. Son paragraf ilk paragrafı neredeyse kelimesi kelimesine tekrarlıyor; yazım büyük ölçüde doğru, ama bazı cümleler noktalama olmadan birbirine bağlanıyor.',
    'uk': 'Твір учня пояснює, чому річка щовесни виходить з берегів. Він називає дві причини, танення снігу в горах і сильні дощі, але не каже, як підготувалася міська влада. Останній абзац майже дослівно повторює перший; правопис здебільшого правильний, хоча деякі речення тягнуться без розділових знаків.',
    'vi': 'Bài luận của học sinh giải thích vì sao con sông lại tràn bờ vào mỗi mùa xuân. Bài nêu hai nguyên nhân, tuyết tan trên núi và mưa lớn, nhưng không nói chính quyền thành phố đã chuẩn bị ra sao. Đoạn cuối lặp lại gần như nguyên văn đoạn đầu; chính tả phần lớn đúng, dù một vài câu kéo dài không có dấu câu.',
    'zh': '这位学生的作文解释了河流为什么每年春天都会泛滥。文章列举了两个原因：山区积雪融化和强降雨，但没有说明市政府是如何做准备的。最后一段几乎逐字重复了第一段，因此结论没有提供新的内容。拼写大体正确，但有几个句子缺少标点，连在一起读起来很吃力。',
}


def _shared_texts() -> dict[str, str]:
    out = {}
    notes = SHARED / "interacteval/summeval/coherence/human_llm_attributes.txt"
    if notes.exists():
        out["notes (62)"] = notes.read_text(encoding="utf-8")
    summeval = SHARED / "summeval/summeval.json"
    if summeval.exists():
        records = json.loads(summeval.read_text(encoding="utf-8"))
        out["articles"] = "\n\n".join(r["source"] for r in records[:80:16])
        out["summaries"] = "\n".join(r["system_output"] for r in records[:200:3])
    for path in sorted((SHARED / "persona-source-docs").glob("*.md"))[:1]:
        out["focus group"] = path.read_text(encoding="utf-8")[:20000]
    return out


def _counter(model: object) -> object:
    return lambda text: model.tokenize(text.encode(), add_bos=False)


def _tokenizers(vocab: Path | None) -> dict[str, object]:
    found: dict[str, object] = {}
    try:
        from llama_cpp import Llama
    except ImportError:
        Llama = None
    if Llama is not None:
        paths = sorted(glob.glob(str(vocab / "ggml-vocab-*.gguf"))) if vocab else []
        for path in paths:
            name = Path(path).stem.replace("ggml-vocab-", "")
            if "bert" in name:
                continue  # an embedding model's vocabulary
            found[name] = _counter(Llama(model_path=path, vocab_only=True, verbose=False))
        from core.llm._local import bundled_gguf_path

        found["gemma-3 (bundled)"] = _counter(Llama(model_path=str(bundled_gguf_path()),
                                                    vocab_only=True, verbose=False))
    import litellm
    import tiktoken

    folder = Path(litellm.__file__).parent / "litellm_core_utils" / "tokenizers"
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(folder))
    for name in ("cl100k_base", "o200k_base"):
        try:
            encoding = tiktoken.get_encoding(name)
        except Exception:  # noqa: BLE001, S112 - not bundled with this litellm
            continue
        found[name] = encoding.encode
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", type=Path, default=None,
                        help="a folder of ggml-vocab-*.gguf files (llama.cpp's models/)")
    args = parser.parse_args()
    tokenizers = _tokenizers(args.vocab)
    common = [n for n in tokenizers if n in COMMON]
    older = [n for n in tokenizers if n not in COMMON]
    texts = {**SAMPLES, **_shared_texts()}
    print(f"Tokenizers: common {', '.join(common)}; older {', '.join(older) or 'none'}")
    print("| text | characters | ours | largest common (which) | largest / ours "
          "| largest older / ours |")
    print("|---|---:|---:|---|---:|---:|")
    worst = 0.0
    for name, text in texts.items():
        ours = text_tokens(text)
        counts = {n: len(tokenizers[n](text)) for n in tokenizers}
        top = max(common, key=lambda n: counts[n])
        ratio = counts[top] / ours
        worst = max(worst, ratio)
        old = max((counts[n] for n in older), default=0) / ours
        print(f"| {name} | {len(text):,} | {ours:,} | {counts[top]:,} ({top}) | {ratio:.2f} "
              f"| {old:.2f} |" if older else f"| {name} | {len(text):,} | {ours:,} | "
              f"{counts[top]:,} ({top}) | {ratio:.2f} | |")
    print(f"Largest common count / ours, over all texts: {worst:.2f}")


if __name__ == "__main__":
    main()
