"""Putting values back in a model's answer with the texts it was shown (``restore(...,
sent=...)``): what the gateway hook does for every call, and the engine's rule for names made
by a model (``person_name``)."""

from __future__ import annotations

import pytest

from core.deidentify import Deidentifier
from core.deidentify.names import person_name

NOTE = ("Maria wrote a clear answer about foxes. Mrs Lopez called on 3 March 2021 from "
        "555-201-3344. MARIA LOPEZ, Year 9.")


def test_a_quote_of_the_text_sent_comes_back_exactly_as_written():
    """A stage that checks a quote against the document (MAJ-Eval's evidence, InteractEval's
    grounded notes) must get the sentence as the document has it: "Maria wrote…", not the
    listed name "Maria Lopez wrote…" that the table alone gives."""
    deid = Deidentifier(students=["Maria Lopez"])
    sent = deid.deidentify(NOTE)
    quote = sent.text.split(". ")[0] + "."          # "[STUDENT 1] wrote a clear answer…"
    assert quote.startswith("[STUDENT 1] wrote")
    # the table alone puts the listed name back: not the document's sentence
    assert deid.restore(quote).text == "Maria Lopez wrote a clear answer about foxes."
    back = deid.restore(quote, sent=[sent])
    assert back.text == "Maria wrote a clear answer about foxes."
    assert back.text in NOTE and back.restored == 1 and back.invented == ()


def test_a_placeholder_written_one_way_in_the_text_comes_back_that_way():
    deid = Deidentifier(students=["Maria Lopez", "Tom Berg"])
    only_first = deid.deidentify("Maria helped Tom. Tom was late.")
    back = deid.restore("[STUDENT 2] should thank [STUDENT 1].", sent=[only_first])
    assert back.text == "Tom should thank Maria."
    both = deid.deidentify(NOTE)   # "Maria" and "MARIA LOPEZ": two spellings, the listed one
    assert deid.restore("[STUDENT 1] did well", sent=[both]).text == "Maria Lopez did well"


def test_a_placeholder_the_model_was_not_shown_is_never_guessed():
    """The table knows [STUDENT 2] (Tom, from another text), but this call never showed it: it
    is left as it is and listed as invented, as is a number the table does not have."""
    deid = Deidentifier(students=["Maria Lopez", "Tom Berg"])
    deid.deidentify("Tom Berg was absent.")
    sent = deid.deidentify("Maria did well.")
    back = deid.restore("[STUDENT 1] and [STUDENT 2] and [STUDENT 9] and [DATE 1]",
                        sent=[sent])
    assert back.text == "Maria and [STUDENT 2] and [STUDENT 9] and [DATE 1]"
    assert back.invented == ("[STUDENT 2]", "[STUDENT 9]", "[DATE 1]")
    data = deid.restore_data({"a": ["[STUDENT 2] helped [STUDENT 1]"]}, sent=[sent])
    assert data.data == {"a": ["[STUDENT 2] helped Maria"]}
    assert data.invented == ("[STUDENT 2]",) and data.restored == 1


def test_a_placeholder_already_in_the_users_text_is_left_and_not_called_invented():
    """Texts that someone de-identified before ("[STUDENT 1]" written in them) keep their own
    placeholders: the table's [STUDENT 1] is another person."""
    deid = Deidentifier(students=["Maria Lopez"])
    deid.deidentify("Maria Lopez")                      # [STUDENT 1] in the table
    sent = deid.deidentify("[STUDENT 1] wrote this essay; Dr. Chen marked it.")
    assert sent.text == "[STUDENT 1] wrote this essay; Dr. [PERSON 1] marked it."
    back = deid.restore("[STUDENT 1]'s essay, marked by Dr. [PERSON 1]", sent=[sent])
    assert back.text == "[STUDENT 1]'s essay, marked by Dr. Chen"
    assert back.invented == ()


def test_json_reply_keeps_its_quoting_with_the_texts_sent():
    deid = Deidentifier(people=['Anna "Nan" Berg'])
    sent = deid.deidentify('Anna "Nan" Berg wrote back.')
    back = deid.restore('{"who": "[PERSON 1]"}', sent=[sent])
    assert back.text == '{"who": "Anna \\"Nan\\" Berg"}'


@pytest.mark.parametrize(("value", "name"), [
    ("Ms Amy Lee", "Ms Amy Lee"),
    ("Dana Ray, a mother of two", "Dana Ray"),
    ("Dr. Emily Carter (paediatrician)", "Dr. Emily Carter"),
    ("Zoë van der Berg – parent", "Zoë van der Berg"),
    ("Jean-Luc O'Neil", "Jean-Luc O'Neil"),
    ("Mr Ray", "Mr Ray"),
    ("Parents of young children", None),
    ("Parents", None),
    ("Teacher", None),
    ("Anxious Parent", None),
    ("The Head Teacher", None),
    ("GPT-4o", None),
    ("Anna", None),          # one word without a title: a role as often as a name
    ("", None),
])
def test_a_persona_name_is_hidden_only_when_it_reads_as_a_persons_name(value, name):
    """Persona names are made by a model: "Parents" as a listed name would replace every
    "parents" in the items; "Dana Ray" is a person."""
    assert person_name(value) == name
