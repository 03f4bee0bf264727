"""The one plural helper every screen and message uses ("1 question", never "1 questions")."""

from core.words import count


def test_one_is_singular_and_the_rest_plural():
    assert count(1, "question") == "1 question"
    assert count(0, "question") == "0 questions"
    assert count(2, "persona") == "2 personas"
    assert count(1200, "answer") == "1,200 answers"


def test_irregular_and_y_plurals():
    assert count(1, "person") == "1 person"
    assert count(3, "person") == "3 people"
    assert count(2, "summary") == "2 summaries"
    assert count(2, "day") == "2 days"
    assert count(2, "stakeholder group") == "2 stakeholder groups"
    assert count(2, "criterion", "criteria") == "2 criteria"


def test_a_one_persona_export_says_one_persona(tmp_path):
    import openpyxl

    from core.majeval.personas_io import write_personas
    from tests.core.majeval.majeval_support import persona

    path = tmp_path / "p.xlsx"
    write_personas(path, [persona("Parents", "Sam Ortiz")])
    sheet = openpyxl.load_workbook(path)["Read me"]
    text = " ".join(str(c.value) for row in sheet.iter_rows() for c in row if c.value)
    assert "1 persona in 1 stakeholder group." in text
    assert "1 personas" not in text and "1 stakeholder groups" not in text
