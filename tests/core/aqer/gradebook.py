"""A teacher's gradebook as teachers keep them, built in code: 30 students x 10 questions, one
row per student ("Student" in column A), a column per question, free-text answers (a few
"n/a", "-", "?", "not answered" and empty cells), and the average grade per student either
beside the questions ("Average grade") or on a second sheet "Grades" (with one name misspelt,
one in other case and spacing, and one student missing)."""

from __future__ import annotations

import random
from pathlib import Path

from openpyxl import Workbook

#: Ten questions, a good answer and a poor one for each.
QUESTIONS = {
    "Q1. What is the capital of France?": ("Paris is the capital of France",
                                           "I think it is Lyon"),
    "Q2. How many legs does a spider have?": ("a spider has eight legs", "six legs maybe"),
    "Q3. What gas do plants take in?": ("plants take in carbon dioxide from the air",
                                        "they breathe oxygen only"),
    "Q4. What is frozen water called?": ("frozen water is called ice", "it is called steam"),
    "Q5. Which planet is closest to the sun?": ("mercury is the closest planet to the sun",
                                                "jupiter obviously"),
    "Q6. What do bees make?": ("bees make honey from nectar", "bees make milk"),
    "Q7. Why do we have seasons?": ("the tilt of the earth axis gives seasons",
                                    "because the sun gets closer"),
    "Q8. What does the heart do?": ("the heart pumps blood around the body",
                                    "it helps you think"),
    "Q9. What is photosynthesis?": ("plants make sugar from light water and carbon dioxide",
                                    "when plants sleep at night"),
    "Q10. What melts ice?": ("heat melts ice into water", "salt water freezes it"),
}

FIRST = ["Ana", "Ben", "Chloe", "David", "Emma", "Farid", "Grace", "Hugo", "Ines", "Jonas",
         "Kira", "Leo", "Maria", "Noah", "Olivia", "Pablo", "Quinn", "Rosa", "Sami", "Tara",
         "Umar", "Vera", "Will", "Xenia", "Yusuf", "Zoe", "Adam", "Bella", "Carl", "Dina"]
STUDENTS = [f"{name} {last}" for name, last in zip(FIRST, ["Lopez", "Smith", "Martin",
                                                             "Khan", "Rossi", "Haddad"] * 5)]
#: Cells that mean "no answer" (student index, question index) -> text.
NO_ANSWER = {(3, 2): "n/a", (7, 5): "-", (12, 0): "?", (20, 9): "not answered",
             (25, 4): "N/A", (28, 7): ""}


def _rows(seed: int = 7):
    rng = random.Random(seed)
    rows = []
    for s, name in enumerate(STUDENTS):
        skill = (s % 10) / 9  # 0 (weakest) ... 1 (best), three students at each level
        answers, right = [], 0
        for k, (good, poor) in enumerate(QUESTIONS.values()):
            ok = rng.random() < 0.15 + 0.8 * skill
            right += ok
            text = good if ok else poor
            answers.append(NO_ANSWER.get((s, k), text))
        grade = round(1 + 4 * right / len(QUESTIONS) + rng.uniform(-0.4, 0.4), 2)
        rows.append((name, answers, grade))
    return rows


def gradebook(path: Path, grades: str = "column") -> Path:
    """Write the gradebook: ``grades="column"`` puts "Average grade" beside the questions
    (sheet "Exam"); ``"sheet"`` puts the grades on a second sheet "Grades"; ``"file"`` puts
    them in a CSV file of their own (:func:`grades_file_of`)."""
    book = Workbook()
    exam = book.active
    exam.title = "Exam"
    header = ["Student", *QUESTIONS]
    rows = _rows()
    if grades == "column":
        exam.append([*header, "Average grade"])
        for name, answers, grade in rows:
            exam.append([name, *answers, grade])
    else:
        exam.append(header)
        for name, answers, _grade in rows:
            exam.append([name, *answers])
        sheet = book.create_sheet("Grades")
        sheet.append(["Name", "Grade"])
        lines = ["Name,Grade"]
        for s, (name, _answers, grade) in enumerate(rows):
            if s == 29:
                continue  # no grade for the last student
            if s == 4:
                name = "Emma Rosi"  # misspelt: matches no one
            if s == 1:
                name = "  ben   SMITH "  # other case and spacing: still Ben Smith
            sheet.append([name, grade])
            lines.append(f"{name},{grade}")
        if grades == "file":
            book.remove(sheet)
            grades_file_of(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    book.save(path)
    return path


def grades_file_of(path: Path) -> Path:
    """Where ``gradebook(path, grades="file")`` writes the grades."""
    return path.with_name(path.stem + " grades.csv")


def grades_by_student() -> dict[str, float]:
    """Each student's average grade as the gradebook holds it."""
    return {name: grade for name, _answers, grade in _rows()}
