"""A teacher's class workbook built in code from the Powergrading answers (issue 27): the way
teachers keep them, not the way a programmer would.

Sheet "Period 3": row 1 a title ("Civics unit test - Period 3 ..."), row 2 blank, the header in
row 3: "Student", ten questions, "Total" (how many of the ten the three Powergrading judges
marked right, by majority) and "Comments" (three comments: "absent", "extra time (IEP)", "talk to
parents"; the rest empty). 30 students: 29 real Powergrading workers (13 of whom wrote the wrong
"secretary of state" to question 8, 11 the right "speaker of the house", 5 something else) and
one absent student who left every question blank; then two chatbot rows, "ChatGPT" and
"Gemini", answering every question right in full sentences (text written for this test).

``grades="sheet"`` moves the Total to a sheet "Grades" (Name, Total) instead of a column.
The Powergrading file is read from ``/work/shared/data`` (never copied into the app); the
tests that use it are skipped where it is missing.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest
from openpyxl import Workbook

POWERGRADING = Path("/work/shared/data/powergrading/studentanswers_grades_698.tsv")

#: The ten graded Powergrading questions, in the words of the USCIS civics test (the corpus
#: holds no question texts: these are the items its answers answer).
QUESTIONS = {
    1: "Q1. What do we call the first ten amendments to the Constitution?",
    2: "Q2. What is one right or freedom from the First Amendment?",
    3: "Q3. What did the Declaration of Independence do?",
    4: "Q4. What is the economic system in the United States?",
    5: "Q5. Name one branch or part of the government.",
    6: "Q6. Who makes federal laws?",
    7: "Q7. Why do some states have more Representatives than other states?",
    8: "Q8. If both the President and the Vice President can no longer serve, who becomes "
       "President?",
    13: "Q9. What is one reason colonists came to America?",
    20: "Q10. Why does the flag have 13 stripes?",
}
SPLIT_QUESTION = QUESTIONS[8]
TITLE = "Civics unit test - Period 3 (Mr Lee, marked 12 March)"
ABSENT = "Jonas Weber"
IEP = "Ines Moreau"
PARENTS = "Leo Fischer"
NAMES = ["Ana Lopez", "Ben Smith", "Chloe Martin", "David Khan", "Emma Rossi", "Farid Haddad",
         "Grace Park", "Hugo Silva", IEP, ABSENT, "Kira Novak", PARENTS, "Maria Costa",
         "Noah Brown", "Olivia Chen", "Pablo Ruiz", "Quinn Walsh", "Rosa Diaz", "Sami Nasser",
         "Tara Singh", "Umar Aziz", "Vera Ivanova", "Will Turner", "Xenia Popa", "Yusuf Demir",
         "Zoe Adams", "Adam Berg", "Bella Rossi", "Carl Jensen", "Dina Cohen"]
COMMENTS = {ABSENT: "absent", IEP: "extra time (IEP)", PARENTS: "talk to parents"}
#: Two chatbots: every answer right, in full sentences.
CHATBOTS = {
    "ChatGPT": [
        "The first ten amendments to the Constitution are called the Bill of Rights.",
        "One freedom from the First Amendment is the freedom of speech.",
        ("The Declaration of Independence announced that the colonies were free from British "
         "rule."),
        "The United States has a capitalist or market economy.",
        "One branch of the government is the Congress, the legislative branch.",
        "Congress, the Senate and the House of Representatives, makes federal laws.",
        "Some states have more Representatives because they have more people.",
        "The Speaker of the House becomes President if both cannot serve.",
        "Many colonists came to America for religious freedom.",
        "The flag has 13 stripes because there were 13 original colonies.",
    ],
    "Gemini": [
        "They are known as the Bill of Rights, the first ten amendments.",
        "The First Amendment protects freedom of religion, among other rights.",
        "It declared independence from Great Britain and its king.",
        "The economic system of the United States is a market economy.",
        "The judicial branch, the courts, is one branch of the government.",
        "Federal laws are made by Congress.",
        "Representation is based on population, so states with more people have more.",
        "The Speaker of the House of Representatives would become President.",
        "Colonists came to America to escape persecution and practise their religion.",
        "The thirteen stripes stand for the thirteen original colonies.",
    ],
}


def _students() -> list[tuple[list[str], int]]:
    """29 Powergrading workers: (their ten answers, how many were right by majority), 13 of
    them "secretary of state", 11 "speaker of the house" and 5 other answers to question 8."""
    if not POWERGRADING.exists():
        pytest.skip(f"the Powergrading answers are not at {POWERGRADING}")
    answers: dict[str, dict[int, tuple[str, bool]]] = defaultdict(dict)
    with POWERGRADING.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            labels = [int(row[g]) for g in ("G1", "G2", "G3")]
            answers[row["student"]][int(row["Q#"])] = (row["answer"].strip(),
                                                       sum(x == 1 for x in labels) >= 2)
    wanted = {"secretary": 13, "speaker": 11, "other": 5}
    picked: dict[str, list[str]] = {k: [] for k in wanted}
    for student, given in answers.items():
        if set(QUESTIONS) - set(given) or any(not given[q][0] for q in QUESTIONS):
            continue
        q8 = given[8][0].casefold()
        kind = ("secretary" if "secretary of state" in q8 and "speaker" not in q8 else
                "speaker" if "speaker of the house" in q8 and "secretary" not in q8 else
                "other")
        if len(picked[kind]) < wanted[kind]:
            picked[kind].append(student)
        if all(len(picked[k]) == n for k, n in wanted.items()):
            break
    # interleaved, so neither camp sits together at the top of the sheet
    order = []
    pools = [list(picked["secretary"]), list(picked["speaker"]), list(picked["other"])]
    while any(pools):
        for pool in pools:
            if pool:
                order.append(pool.pop(0))
    return [([answers[s][q][0] for q in QUESTIONS], sum(answers[s][q][1] for q in QUESTIONS))
            for s in order]


def class_rows() -> list[tuple[str, list[str], int | None]]:
    """(name, ten answers, Total) for the 30 students (the absent one has no answers and no
    Total), then the two chatbots (no Total)."""
    students = iter(_students())
    rows: list[tuple[str, list[str], int | None]] = []
    for name in NAMES:
        if name == ABSENT:
            rows.append((name, [""] * len(QUESTIONS), None))
        else:
            given, right = next(students)
            rows.append((name, given, right))
    rows += [(bot, list(texts), None) for bot, texts in CHATBOTS.items()]
    return rows


def class_workbook(path: Path, grades: str = "column", title: bool = True,
                   comments: bool = True, leave_out: tuple[str, ...] = ()) -> Path:
    """Write the class workbook. ``grades="column"``: a "Total" column beside the questions;
    ``"sheet"``: a sheet "Grades" (Name, Total) instead. ``title=False`` leaves out the title
    and blank rows (the header is then row 1); ``comments=False`` the Comments column;
    ``leave_out`` the rows of these people (the same class without them)."""
    book = Workbook()
    sheet = book.active
    sheet.title = "Period 3"
    if title:
        sheet.append([TITLE])
        sheet.append([])
    header = ["Student", *QUESTIONS.values()]
    header += ["Total"] if grades == "column" else []
    header += ["Comments"] if comments else []
    sheet.append(header)
    rows = [row for row in class_rows() if row[0] not in leave_out]
    for name, answers, total in rows:
        extra = [total] if grades == "column" else []
        note = [COMMENTS.get(name)] if comments else []
        sheet.append([name, *answers, *extra, *note])
    if grades == "sheet":
        marks = book.create_sheet("Grades")
        marks.append(["Name", "Total"])
        for name, _answers, total in rows:
            if total is not None:
                marks.append([name, total])
    book.save(path)
    return path


def totals() -> dict[str, int]:
    """Each student's Total as the workbook holds it (the absent student has none)."""
    return {name: total for name, _answers, total in class_rows() if total is not None}
