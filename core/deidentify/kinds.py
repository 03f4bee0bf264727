"""The kinds of identifier the de-identifier replaces, in plain words, and what it cannot find.

Both lists are data for the app's screens, the command line and the docs: the kinds in the
order a table shows them, each with the words a teacher or a clinician reads, and the limits as
a structured list (what, an example, what to do about it) so nobody has to guess what was left.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CANNOT_FIND", "KINDS", "KIND_LABELS", "NAME_KINDS", "Limit"]

#: Every kind, in the order tables and counts show them. A placeholder is ``[KIND number]``.
KINDS: tuple[str, ...] = (
    "STUDENT", "PERSON", "EMAIL", "PHONE", "ADDRESS", "CITY", "POSTCODE", "DATE", "AGE",
    "URL", "IP", "HANDLE", "ID", "OTHER",
)

#: The kinds that stand for a person's name (they share one list of values: "Maria Lopez" is
#: the same person whether the student column or a title found her).
NAME_KINDS: frozenset[str] = frozenset({"STUDENT", "PERSON"})

KIND_LABELS: dict[str, str] = {
    "STUDENT": "student names from your lists",
    "PERSON": "names of other people (from your lists, or after a title or greeting)",
    "EMAIL": "e-mail addresses",
    "PHONE": "phone and fax numbers",
    "ADDRESS": "street addresses and P.O. boxes",
    "CITY": "towns and cities written in an address",
    "POSTCODE": "postcodes and ZIP codes",
    "DATE": "dates (day and month, with or without the year)",
    "AGE": "ages over 89",
    "URL": "web addresses",
    "IP": "IP addresses",
    "HANDLE": "social-media user names (@name)",
    "ID": "record, student and id numbers",
    "OTHER": "words you asked to replace",
}


@dataclass(frozen=True)
class Limit:
    """One kind of identifier the de-identifier does not find by itself."""

    what: str      # what it misses, in plain words
    example: str   # a short example of text it would leave as it is
    advice: str    # what the user can do about it


CANNOT_FIND: tuple[Limit, ...] = (
    Limit("A name you did not give in a list, written on its own without a title or a "
          "greeting before it.",
          "“I worked with Jake on the poster.”",
          "Add the names of everyone the texts may mention to the names list (students, "
          "parents, staff), or add the name as a word to replace on the review page."),
    Limit("Initials, nicknames and misspellings of a listed name, and handwriting that was "
          "typed up with errors.",
          "“JL said…”, “Mimi” for Maria, “Mariaa”.",
          "Add them as words to replace; look at the highlighted sample before sending."),
    Limit("A listed first name or surname written in small letters when it is also an "
          "ordinary English word (will, may, grace, rose, mark, hope, and so on).",
          "“I will go” when a student is called Will Turner (kept on purpose; “Will” with a "
          "capital is replaced, even at the start of a sentence).",
          "Nothing, usually: the word in small letters is almost always the ordinary word."),
    Limit("Towns, counties, regions, schools, hospitals, wards and employers named outside a "
          "postal address.",
          "“She moved from Leeds last year”, “at Lincoln High School”, “on Ward 7B”.",
          "Add them as words to replace."),
    Limit("A month on its own, a year on its own, a season, a weekday, or a date written "
          "in words or relative to today.",
          "“in March”, “in 2019”, “last Tuesday”, “the fourth of July”, “3 days after "
          "admission”.",
          "Years are allowed by HIPAA's Safe Harbor rule; add other dates as words to replace."),
    Limit("A day and month in numbers without a year, which look the same as fractions and "
          "scores.",
          "“seen on 4/3”, “scored 12/20”.",
          "Write dates with a year, or add them as words to replace."),
    Limit("A year of birth on its own that shows a person is over 89, and an age over 89 "
          "written in words.",
          "“born in 1929”, “she is ninety-three”.",
          "Add it as a word to replace."),
    Limit("Web addresses without “http” or “www.” in front, and unusual or very short id "
          "numbers without a word such as “MRN”, “ID” or “student number” before them.",
          "“see portal.school.org”, “bed 12, case 4471”.",
          "Add them as words to replace."),
    Limit("Vehicle number plates, device serial numbers and account numbers without a word "
          "that says what they are.",
          "“the car AB12 CDE”, “pump SN4471-X”.",
          "Write the word before them (“serial number”, “licence plate”) or add them as "
          "words to replace."),
    Limit("Street addresses in shapes other than a house number followed by a street name "
          "(and a few European shapes), and addresses split over a table or form.",
          "“the white house next to the bakery”, “Block C, second floor”.",
          "Add them as words to replace."),
    Limit("Unique descriptions that point to one person without naming them, and pictures, "
          "fingerprints or voices (the de-identifier only reads text).",
          "“the only left-handed violinist in year 9”, “the mayor's daughter”.",
          "Read the sample on the review page and reword such texts before sending."),
    Limit("A number written as a bare JSON number (not in quotes) inside a text that is a "
          "whole JSON document: it is left alone so that the JSON stays valid.",
          "{\"mrn\": 48291302} in a JSON text.",
          "Keep id numbers in quotes in JSON texts."),
)
