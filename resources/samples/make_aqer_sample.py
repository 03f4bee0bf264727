"""Write ``aqer_sample.xlsx`` and ``aqer_template.xlsx`` beside this script.

The sample is our own small, made-up example: 8 people answered 6 simple factual questions
(one left a question blank), two LLMs answered them too, and a teacher graded each answer 0-2
(the LLMs' too, on the "Long" sheet). Sheet "Long" has a row per answer (the CLI's default layout); sheet "Wide" has the same
answers with a row per question and a column per person, and the LLM answers as two columns.

    python resources/samples/make_aqer_sample.py
    evaldesk aqer resources/samples/aqer_sample.xlsx -o results.xlsx --grade-col grade
    evaldesk aqer resources/samples/aqer_sample.xlsx --sheet Wide --format wide \
        --question-col question --llm-col "LLM A" --llm-col "LLM B" -o results.xlsx
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

QUESTIONS = [
    "What is the capital city of Australia?",
    "How many continents are there on Earth?",
    "At what temperature does water boil at sea level, in degrees Celsius?",
    "Who wrote the play Romeo and Juliet?",
    "What is the largest planet in our solar system?",
    "Which gas do plants take in from the air to make their food?",
]

#: person -> six (answer, grade 0-2); an empty answer is a skipped question.
PEOPLE: dict[str, list[tuple[str, int | None]]] = {
    "Ana": [
        ("The capital of Australia is Canberra.", 2),
        ("There are seven continents.", 2),
        ("Water boils at 100 degrees Celsius at sea level.", 2),
        ("William Shakespeare wrote Romeo and Juliet.", 2),
        ("Jupiter is the largest planet in the solar system.", 2),
        ("Plants take in carbon dioxide to make their food.", 2),
    ],
    "Ben": [
        ("Canberra", 2),
        ("7", 2),
        ("100", 2),
        ("Shakespeare", 2),
        ("Jupiter", 2),
        ("Carbon dioxide (CO2)", 2),
    ],
    "Chloe": [
        ("I think it is Canberra, not Sydney.", 2),
        ("Seven continents.", 2),
        ("About 100 degrees.", 2),
        ("It was written by William Shakespeare.", 2),
        ("Saturn is the biggest planet.", 0),
        ("Carbon dioxide from the air.", 2),
    ],
    "David": [
        ("Canberra is the capital.", 2),
        ("Seven, counting Antarctica.", 2),
        ("100 °C", 2),
        ("Shakespeare wrote it in the 1590s.", 2),
        ("The largest planet is Jupiter.", 2),
        ("Oxygen and carbon dioxide.", 1),
    ],
    "Emma": [
        ("Sydney is the capital of Australia.", 0),
        ("There are five continents.", 0),
        ("Water boils at 100 degrees.", 2),
        ("Romeo and Juliet is by William Shakespeare.", 2),
        ("Jupiter.", 2),
        ("They take in oxygen.", 0),
    ],
    "Farid": [
        ("Canberra.", 2),
        ("There are 7 continents.", 2),
        ("", None),  # skipped this question
        ("William Shakespeare.", 2),
        ("Jupiter is the largest one.", 2),
        ("Plants absorb carbon dioxide.", 2),
    ],
    "Grace": [
        ("Australia's capital is Canberra.", 2),
        ("Seven.", 2),
        ("It boils at one hundred degrees Celsius.", 2),
        ("Shakespeare, the English playwright.", 2),
        ("Jupiter, a gas giant.", 2),
        ("Carbon dioxide.", 2),
    ],
    "Hugo": [
        ("Melbourne, I guess.", 0),
        ("I don't know.", 0),
        ("Maybe 50 degrees.", 0),
        ("Charles Dickens.", 0),
        ("The Sun.", 0),
        ("Nitrogen.", 0),
    ],
}

#: The teacher's grades (0-2) of the LLM answers, in the order of ``LLMS``.
LLM_GRADES: dict[str, list[int]] = {
    "LLM A": [2, 2, 2, 2, 2, 2],
    "LLM B": [0, 2, 0, 0, 2, 0],
}

LLMS: dict[str, list[str]] = {
    "LLM A": [
        "Canberra is the capital city of Australia.",
        "Earth has seven continents.",
        "At sea level, water boils at 100 degrees Celsius.",
        "Romeo and Juliet was written by William Shakespeare.",
        "Jupiter is the largest planet in our solar system.",
        "Plants take in carbon dioxide from the air for photosynthesis.",
    ],
    "LLM B": [
        "Sydney is the capital of Australia.",
        "There are seven continents.",
        "Water boils at 90 degrees Celsius at sea level.",
        "Romeo and Juliet was written by Christopher Marlowe.",
        "Jupiter is the largest planet.",
        "Plants take in oxygen from the air.",
    ],
}


def _style(ws, widths: dict[str, float]) -> None:
    from openpyxl.styles import Alignment, Font

    for cell in ws[1]:
        cell.font = Font(bold=True)
    for row in ws.iter_rows(min_row=2):
        for cell in row:
            cell.alignment = Alignment(wrap_text=True, vertical="top")
    for letter, width in widths.items():
        ws.column_dimensions[letter].width = width
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = ws.dimensions


def write_sample(path: Path = HERE / "aqer_sample.xlsx") -> Path:
    from openpyxl import Workbook
    from openpyxl.utils import get_column_letter

    wb = Workbook()
    long = wb.active
    long.title = "Long"
    long.append(["question", "worker", "response", "grade", "is_llm"])
    for person, answers in PEOPLE.items():
        for question, (text, grade) in zip(QUESTIONS, answers):
            long.append([question, person, text, "" if grade is None else grade, "no"])
    for model, answers in LLMS.items():
        for question, text, grade in zip(QUESTIONS, answers, LLM_GRADES[model]):
            long.append([question, model, text, grade, "yes"])
    _style(long, {"A": 48, "B": 12, "C": 48, "D": 8, "E": 8})

    wide = wb.create_sheet("Wide")
    wide.append(["question", *PEOPLE, *LLMS])
    for j, question in enumerate(QUESTIONS):
        wide.append(
            [question]
            + [answers[j][0] for answers in PEOPLE.values()]
            + [answers[j] for answers in LLMS.values()]
        )
    _style(
        wide,
        {"A": 40, **{get_column_letter(k): 24 for k in range(2, 3 + len(PEOPLE) + len(LLMS))}},
    )
    wb.save(path)
    return path


def write_template(path: Path = HERE / "aqer_template.xlsx") -> Path:
    from openpyxl import Workbook

    wb = Workbook()
    guide = wb.active
    guide.title = "How to fill in"
    guide.append(["step", "what to do"])
    for row in [
        ("1", "Choose one layout: 'Long' (a row per answer) or 'Wide' (a row per question)."),
        (
            "2",
            "Long: one row per answer. question = the question's text (the same text for "
            "every answer to it); worker = who answered (a name or code); response = the "
            "answer as written. Leave response empty if the person left the question blank "
            "(when everyone was given every question, as in a class test, a blank counts as "
            "the weakest possible answer; the wizard shows which rule applies).",
        ),
        (
            "3",
            "Long, optional: grade = an expert's grade of the answer (numbers), to see how "
            "well AQER agrees with it (grades on LLM answers too); is_llm = yes for an LLM's "
            "answer (worker = the LLM's name).",
        ),
        (
            "4",
            "Wide: one row per question, one column per person (the header is the person's "
            "name). Columns with LLM answers are named in the wizard (or with --llm-col).",
        ),
        (
            "5",
            "Each person should answer the same questions; at least 2 people and 2 "
            "questions are needed. Delete the sheet you do not use.",
        ),
    ]:
        guide.append(list(row))
    _style(guide, {"A": 8, "B": 100})
    long = wb.create_sheet("Long")
    long.append(["question", "worker", "response", "grade", "is_llm"])
    long.append(["What is the capital city of Australia?", "Person 1", "Canberra", "", "no"])
    _style(long, {"A": 48, "B": 12, "C": 48, "D": 8, "E": 8})
    wide = wb.create_sheet("Wide")
    wide.append(["question", "Person 1", "Person 2", "Person 3", "LLM 1"])
    wide.append(["What is the capital city of Australia?", "Canberra", "Sydney", "", ""])
    _style(wide, {"A": 40, "B": 20, "C": 20, "D": 20, "E": 20})
    wb.save(path)
    return path


if __name__ == "__main__":
    print(write_sample())
    print(write_template())
