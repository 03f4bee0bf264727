"""Write ``items.xlsx`` beside this script: the MAJ-Eval sample items.

Our own small, made-up example: six question-and-answer pairs an AI might write for a children's
story, each with the story section it belongs to and an invented teacher rating (1-5) of its
overall quality, so the agreement screen has something to compare with.

    python resources/samples/majeval/make_items.py
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

STORY = {
    "puppy": ("Pip the puppy chased a red ball into the woods. When he looked up, the trees were "
              "tall and dark and he could not see his house. Pip sat down and whimpered."),
    "garden": ("Mia planted three bean seeds in a pot by the window. Every morning she gave them "
               "water. After a week, a tiny green shoot pushed up through the soil."),
    "rain": ("The rain would not stop, so Grandpa and Leo built a fort of blankets in the living "
             "room. They read stories inside it with a torch until the sun came out."),
}

ITEMS = [
    ("q1", "puppy", "Q: What did Pip chase into the woods? A: A red ball.", 4),
    ("q2", "puppy", "Q: How do you think Pip felt when he could not see his house, and why? "
                    "A: Scared and lonely, because he was lost and the woods were dark.", 5),
    ("q3", "garden", "Q: What is the photosynthetic mechanism by which the shoot emerged? "
                     "A: Chlorophyll converts light energy into chemical energy.", 1),
    ("q4", "garden", "Q: How many seeds did Mia plant? A: Five seeds.", 2),
    ("q5", "rain", "Q: Why did Grandpa and Leo build a fort inside? A: Because it was raining "
                   "and they could not play outside.", 5),
    ("q6", "rain", "Q: What will Leo have for dinner tomorrow? A: Pasta with tomato sauce.", 1),
]


def main() -> Path:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    wb = Workbook()
    ws = wb.active
    ws.title = "Items"
    ws.append(["id", "qa_pair", "story_section", "teacher_rating"])
    for item_id, story, qa, rating in ITEMS:
        ws.append([item_id, qa, STORY[story], rating])
    for cell in ws[1]:
        cell.font = Font(bold=True)
    for column, width in zip("ABCD", (8, 60, 70, 15)):
        ws.column_dimensions[column].width = width
    for row in ws.iter_rows(min_row=2):
        for cell in row:
            cell.alignment = Alignment(wrap_text=True, vertical="top")
    ws.freeze_panes = "A2"
    path = HERE / "items.xlsx"
    wb.save(path)
    return path


if __name__ == "__main__":
    print(main())
