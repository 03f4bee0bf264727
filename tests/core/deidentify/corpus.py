"""The synthetic test set of the de-identifier: student essays and short answers, clinical notes
and AI-written patient letters, with every identifier labelled (test-only; Faker, MIT).

    build()                                   # the set, made again from the fixed seed (~1 s)
    .venv/bin/python -m tests.core.deidentify.corpus /tmp/corpus.json   # to read it

The tests and ``tests/benchmarks/bench_deidentify.py`` make the set from the seed each time
(Faker is pinned in the ``dev`` extra, so the texts do not change under them).

Two made-up projects: a school (a list of students, the teachers who rate as "people") and a
clinic (a list of patients, the clinicians who rate). Each text is built piece by piece, so
every label is exact: ``start``/``end`` of the identifier (a name without its title or its
"'s"), its ``kind`` and, for names, ``how`` the user's lists and the text point to it:

- ``listed``: the user gave the name (full, or a first name or surname alone);
- ``titled``: not listed, but after a title, greeting, sign-off, form label or degree;
- ``unlisted``: not listed and standing alone: the de-identifier is not expected to find it
  (it is labelled so that recall is honest).

Shapes are varied on purpose: possessives, names at a sentence's start, in capitals and in
small letters, "LOPEZ, Juan", dates in a dozen formats, phone numbers with extensions, e-mails
in angle brackets, web addresses at the end of a sentence; and ordinary words that are also
names ("May", "Will", "Grace"), fictional characters after titles, scores, doses and years.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

SEED = 3301
COUNTS = {"essay": 70, "answer": 60, "note": 55, "letter": 55}


@dataclass
class Doc:
    genre: str
    project: str
    parts: list[str] = field(default_factory=list)
    labels: list[dict] = field(default_factory=list)
    size: int = 0

    def t(self, text: str) -> Doc:
        self.parts.append(text)
        self.size += len(text)
        return self

    def v(self, value: str, kind: str, how: str = "") -> Doc:
        label = {"start": self.size, "end": self.size + len(value), "kind": kind}
        if how:
            label["how"] = how
        self.labels.append(label)
        return self.t(value)

    def fill(self, template: str, **slots: tuple) -> Doc:
        """``template`` with ``{NAME}`` slots, each (value, kind[, how]) or a plain string."""
        pos = 0
        for m in re.finditer(r"\{(\w+)\}", template):
            self.t(template[pos:m.start()])
            slot = slots[m.group(1)]
            if isinstance(slot, str):
                self.t(slot)
            else:
                self.v(*slot)
            pos = m.end()
        return self.t(template[pos:])

    @property
    def text(self) -> str:
        return "".join(self.parts)


# -- values ------------------------------------------------------------------------------------
class Values:
    def __init__(self, rng: random.Random) -> None:
        from faker import Faker

        self.rng = rng
        self.fakers = {}
        for n, locale in enumerate(["en_US", "en_GB", "es_ES", "fr_FR", "de_DE", "nl_NL",
                                    "it_IT", "en_IE", "en_IN", "pl_PL"]):
            fake = Faker(locale)
            fake.seed_instance(SEED + n)
            self.fakers[locale] = fake
        self.us = self.fakers["en_US"]
        self.gb = self.fakers["en_GB"]

    def person(self) -> tuple[str, str]:
        while True:
            fake = self.fakers[self.rng.choice(list(self.fakers))]
            first = fake.first_name().split()[0]
            last = fake.last_name().split()[-1]      # "de Pelayo" -> "Pelayo"
            if len(first) > 2 and len(last) > 2 and first[0].isupper() and last[0].isupper():
                return first, last

    def people(self, n: int, taken: set[str]) -> list[tuple[str, str]]:
        out = []
        while len(out) < n:
            first, last = self.person()
            if first.casefold() in taken or last.casefold() in taken:
                continue
            taken.update({first.casefold(), last.casefold()})
            out.append((first, last))
        return out

    # dates in many formats -> (text, the date)
    def date_text(self, *, year: bool = True, start: int = 1930, end: int = 2024) -> str:
        day = date(start, 1, 1) + timedelta(days=self.rng.randrange((end - start) * 365))
        d, m, y = day.day, day.month, day.year
        month, mon = day.strftime("%B"), day.strftime("%b")
        suffix = "th" if 10 <= d % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")
        ordinal = f"{d}{suffix}"
        with_year = [
            f"{month} {d}, {y}", f"{month} {d:02d}, {y}", f"{d} {month} {y}",
            f"{d:02d}/{m:02d}/{y}",
            f"{m}/{d}/{y}", f"{y}-{m:02d}-{d:02d}", f"{d:02d}.{m:02d}.{y}", f"{mon} {d}, {y}",
            f"{ordinal} of {month} {y}", f"{ordinal} {month}, {y}", f"{month} {ordinal}, {y}",
            f"{m:02d}/{d:02d}/{str(y)[2:]}", f"{d} {mon} {y}", f"{mon}. {d} {y}",
            f"{d}-{m}-{y}", day.strftime("%d-%b-%Y").upper(), f"{d}-{mon}-{str(y)[2:]}",
            f"{month} {y}", f"{month.upper()} {d}, {y}", f"{y}/{m:02d}/{d:02d}",
            f"{d}.{m}.{str(y)[2:]}", f"{day.strftime('%A')}, {d} {month} {y}",
            f"{y}-{m:02d}-{d:02d}T{self.rng.randint(0, 23):02d}:{self.rng.randint(0, 59):02d}:00Z",
            f"{d:02d}-{m:02d}-{y}", f"{ordinal} {mon} {y}", f"{mon} {ordinal} {y}",
        ]
        if self.rng.random() < 0.02:           # "4/3": no pattern tells it from a score
            return f"{d}/{m}"
        without_year = [f"{month} {d}", f"{d} {month}", f"{ordinal} of {month}", f"{mon} {d}",
                        f"{ordinal} {mon}", f"{mon} {ordinal}"]
        return self.rng.choice(with_year if year else without_year)

    def phone(self) -> str:
        r = self.rng.random()
        if r < 0.35:
            return self.us.phone_number()
        if r < 0.6:
            return self.gb.phone_number()
        a, b, c = self.rng.randint(201, 989), self.rng.randint(200, 999), self.rng.randint(0, 9999)
        return self.rng.choice([
            f"({a}) {b}-{c:04d}", f"{a}-{b}-{c:04d} ext. {self.rng.randint(2, 4999)}",
            f"+1 {a} {b} {c:04d}", f"020 7946 {c:04d}", f"07700 900{c % 1000:03d}",
            f"+44 (0)161 496 {c:04d}", f"+33 1 {b % 90 + 10} {c % 90 + 10} 45 67",
            f"+49 30 {b}{c:04d}", f"{a}.{b}.{c:04d} x{self.rng.randint(10, 999)}",
            f"0{a} {b} {c:04d}", f"{a}-{b}-{c:04d}, extension {self.rng.randint(2, 999)}",
            f"+44 7700 900{c % 1000:03d}", f"{a} {b} {c:04d}", f"+1-{a}-{b}-{c:04d} ext 7",
            f"0{a}{b}{c:04d}"[:11],
        ])

    def email(self, first: str = "", last: str = "") -> str:
        if first and self.rng.random() < 0.5:
            local = f"{_ascii(first)}.{_ascii(last)}".lower()
            domain = self.rng.choice(["student.lincoln.edu", "nhs.net", "gmail.com",
                                      "school.org.uk"])
            return f"{local}@{domain}"
        r = self.rng.random()
        if r < 0.15:
            user, domain = self.us.email().split("@")
            return f"{user.capitalize()}@{domain.capitalize()}"
        if r < 0.25:
            user, domain = self.us.email().split("@")
            return f"{user}+{self.rng.choice(['clinic', 'school', 'test'])}@{domain}"
        return self.us.email()

    def url(self) -> str:
        return self.rng.choice([
            self.us.url() + self.us.uri_path(),
            self.us.url(),
            "https://www.nhs.uk/conditions/" + self.rng.choice(["asthma", "heart-failure",
                                                               "type-2-diabetes"]) + "/",
            "https://en.wikipedia.org/wiki/" + self.rng.choice(["Photosynthesis",
                                                               "Romeo_and_Juliet",
                                                               "Water_cycle_(disambiguation)"]),
            "http://portal.example.org/results?id=" + str(self.rng.randint(1000, 99999))
            + "&view=full",
            "www." + self.us.domain_name() + "/" + self.us.uri_page(),
            "https://mychart.example.org/login",
            "https://docs.example.com/guide/part_2-intro#section-3",
            "https://www.example.edu/~smith/notes.pdf",
        ])

    def mrn(self) -> tuple[str, str]:
        """(cue, number)"""
        n = self.rng.randint(100000, 99999999)
        return self.rng.choice([
            ("MRN: ", f"{n:08d}"), ("MRN ", str(n)),
            ("Medical record no. ", f"A-{n % 1000000:06d}"),
            ("Hospital number: ", f"H{n:07d}"), ("Patient ID ", f"PT-{n % 1000000:06d}"),
            ("NHS number ", self.nhs()), ("NHS No: ", self.nhs().replace(" ", "")),
            ("Insurance ID: ", f"XGH{n:09d}"), ("SSN ", self.us.ssn()),
            ("Account #: ", f"00{n:08d}"),
            ("NI number: ", self.nino()), ("Member ID ", f"W{n:09d}"), ("Patient ID: ", str(n)),
            ("MR# ", str(n)), ("ID#: ", f"A{n:07d}"), ("NHS: ", self.nhs()),
            ("hospital no. ", f"{n:08d}"),
        ])

    def student_id(self) -> tuple[str, str]:
        n = self.rng.randint(100000, 9999999)
        return self.rng.choice([
            ("Student ID: ", f"S{n:07d}"), ("student number ", str(20230000 + n % 10000)),
            ("Student ID ", f"{n:07d}"), ("ID: ", f"A{n:08d}"), ("UPN ", f"H{n:012d}"),
            ("candidate number ", str(n % 100000).zfill(5)), ("Student No. ", str(n)),
            ("student id: ", f"{n:07d}"),
        ])

    def nhs(self) -> str:
        while True:
            digits = [self.rng.randint(0, 9) for _ in range(9)]
            check = 11 - sum(d * (10 - i) for i, d in enumerate(digits)) % 11
            check = 0 if check == 11 else check
            if check != 10:
                s = "".join(map(str, digits)) + str(check)
                return f"{s[:3]} {s[3:6]} {s[6:]}"

    def nino(self) -> str:
        letters = "ABCEGHJKLMNPRSTWXYZ"
        return (f"{self.rng.choice(letters)}{self.rng.choice(letters)} "
                f"{self.rng.randint(10, 99)} {self.rng.randint(10, 99)} {self.rng.randint(10, 99)} "
                f"{self.rng.choice('ABCD')}")

    def age(self) -> tuple[str, str, str]:
        a = str(self.rng.randint(90, 104))
        return self.rng.choice([("a ", a, "-year-old"), ("aged ", a, ""), ("", a, " years old"),
                                ("", a, " y/o"), ("Age: ", a, ""), ("a ", a, " year old"),
                                ("", a, "yo"), ("", a, " yrs old"), ("age ", a, "")])

    def us_address(self) -> list[tuple[str, str]]:
        r = self.rng.random()
        if r < 0.1:
            street = f"P.O. Box {self.rng.randint(1, 9999)}"
        elif r < 0.2:
            number, name = self.us.building_number(), self.us.last_name()
            street = f"{number} {name} {self.rng.choice(['ST', 'AVE', 'RD', 'BLVD'])}".upper()
        elif r < 0.3:
            street = (f"Apt {self.rng.randint(1, 40)}{self.rng.choice('ABCD')}, "
                      f"{self.us.building_number()} {self.us.last_name()} Ave.")
        else:
            street = f"{self.us.building_number()} {self.us.street_name()}"
        if self.rng.random() < 0.3:
            street += " " + self.us.secondary_address()
        return [(street, "ADDRESS"), ("\n" if self.rng.random() < 0.5 else ", ", ""),
                (self.us.city(), "CITY"), (", " + self.us.state_abbr() + " ", ""),
                (self.us.zipcode(), "POSTCODE")]

    def uk_address(self) -> list[tuple[str, str]]:
        number = f"{self.rng.randint(1, 240)}{self.rng.choice(['', '', '', 'B', 'a'])}"
        street = f"{number} {self.gb.street_name()}"
        if self.rng.random() < 0.25:
            street = f"Flat {self.rng.randint(1, 30)}, " + street
        sep1, sep2 = self.rng.choice([(", ", " "), ("\n", "\n"), (", ", ", ")])
        return [(street, "ADDRESS"), (sep1, ""), (self.gb.city(), "CITY"), (sep2, ""),
                (self.gb.postcode(), "POSTCODE")]

    def eu_address(self) -> list[tuple[str, str]]:
        if self.rng.random() < 0.5:
            de = self.fakers["de_DE"]
            return [(f"{de.street_name()} {self.rng.randint(1, 120)}", "ADDRESS"), (", ", ""),
                    (de.postcode(), "POSTCODE"), (" ", ""), (de.city().split()[0], "CITY")]
        street = self.rng.choice(["rue de la Paix", "avenue Victor Hugo", "boulevard Voltaire",
                                  "rue des Lilas"])
        fr = self.fakers["fr_FR"]
        return [(f"{self.rng.randint(1, 90)} {street}", "ADDRESS"), (", ", ""),
                (fr.postcode(), "POSTCODE"), (" ", ""), (fr.city().split()[0], "CITY")]


def _lower_how(name: str) -> str:
    """How a name part written in small letters is labelled: "listed", or "listed-word" when
    it is also an ordinary English word or shorter than three letters (the de-identifier
    leaves those in small letters alone on purpose; the benchmark shows them apart)."""
    from core.deidentify._text import COMMON_WORDS, fold

    word = fold(name)
    return "listed-word" if word in COMMON_WORDS or len(word) < 3 else "listed"


def _ascii(text: str) -> str:
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", text)
                   if c.isascii() and c.isalpha())


# -- filler (no identifiers; traps for precision) ----------------------------------------------
ESSAY_FILLER = [
    "Climate change is one of the most serious problems our generation will face.",
    "The data from 2019 shows that average temperatures rose by 1.2 degrees.",
    "In March the ice sheets begin to melt faster than in the winter months.",
    "We may never know exactly how much the sea level will rise by 2100.",
    "By the grace of good planning, some cities have already built sea walls.",
    "Will governments act in time? Many scientists are not sure.",
    "Photosynthesis turns light energy into chemical energy stored in glucose.",
    "The experiment used 3/4 of a cup of water and 12 g of salt.",
    "Our group scored 8/10 on the first trial and 9/10 on the second.",
    "In Romeo and Juliet, the feud between the two families drives the tragedy.",
    "Mr. Darcy's pride is matched only by Elizabeth's prejudice.",
    "Lady Macbeth persuades her husband that ambition is a virtue.",
    "The Industrial Revolution began in Britain in the late 18th century.",
    "Chapter 12 explains the water cycle in three stages.",
    "The 3 Main Points of my argument are listed below.",
    "May is usually the warmest month of spring where I live.",
    "Hope is a theme that runs through the whole novel.",
    "I think renewable energy is cheaper than coal in the long run.",
    "The results were surprising, because the control group grew faster.",
    "Our teacher said we should cite at least two sources.",
    "The population grew from 1,200,000 to 1,450,000 in ten years.",
    "First, we measured the temperature every 15 minutes.",
    "Secondly, plants need carbon dioxide, water and light.",
    "Finally, I believe that small changes can add up to a big difference.",
    "The river flooded twice in 2021, in February and in August.",
    "Some people say it is too late, but I disagree.",
    "Mark the places on the map where the floods happened.",
    "Grace under pressure is what the main character learns.",
    "Version 2.1.3 of the app crashed during the test.",
    "We met at 10:30 in room 204 to finish the poster.",
]
ANSWER_FILLER = [
    "Photosynthesis makes glucose and oxygen from carbon dioxide and water.",
    "The answer is 42 because 6 times 7 is 42.",
    "Mitochondria release energy from food in respiration.",
    "The author uses a metaphor to show how trapped she feels.",
    "Evaporation, condensation and precipitation.",
    "It will depend on the temperature of the water.",
    "The French Revolution started in 1789.",
    "I may be wrong, but I think it is the second option.",
    "Density is mass divided by volume, so 20/4 = 5 g/cm3.",
    "Because the gas expands when it is heated.",
    "In May the days get longer, so plants grow faster.",
    "The poem is about loss and grief.",
]
NOTE_FILLER = [
    "BP 128/84, HR 72, T 37.8, SpO2 96% on 2 L O2.",
    "HbA1c 7.2%, creatinine 88 umol/L, eGFR 71.",
    "Metformin 500 mg twice daily, ramipril 5 mg once daily.",
    "Chest clear, heart sounds normal, no peripheral oedema.",
    "Plan: repeat bloods in 3/12 and review in clinic.",
    "Patient reports shortness of breath on exertion for 2 weeks.",
    "No known drug allergies.",
    "Seen on ward 7B, bed 12, at 14:30.",
    "Previous admission in 2019 for pneumonia.",
    "Smoker, 20 pack-years; advised to stop.",
    "Mobilising with a frame; lives alone with carers x2 daily.",
    "A 45-year-old neighbour found her and called the ambulance.",
    "Will need follow-up echo in May.",
    "Mood low; may benefit from a referral to talking therapies.",
]
LETTER_FILLER = [
    "Your blood tests were normal and your heart scan showed good function.",
    "We have increased your dose of bisoprolol to 5 mg once a day.",
    "Please bring a list of your medicines to your next appointment.",
    "If your symptoms get worse, please contact your GP or call 111.",
    "You may feel a little tired for the first few days.",
    "We will write to you with the results of your scan.",
    "Please do not eat or drink for 6 hours before the procedure.",
    "Your next review will be in 3 months.",
]


# -- genres -------------------------------------------------------------------------------------
def crlf(doc: Doc) -> None:
    """The document with Windows line ends (labels moved with the text)."""
    text = doc.text
    shift = [0] * (len(text) + 1)
    extra = 0
    for i, c in enumerate(text):
        shift[i] = extra
        if c == "\n":
            extra += 1
    shift[len(text)] = extra
    for label in doc.labels:
        label["start"] += shift[label["start"]]
        label["end"] += shift[label["end"]]
    doc.parts = [text.replace("\n", "\r\n")]
    doc.size = len(doc.parts[0])


def essay(doc: Doc, v: Values, p: dict) -> None:
    rng = v.rng
    first, last = rng.choice(p["students"])
    full = f"{first} {last}"
    header = rng.choice(["name", "caps", "by", "plain", "none"])
    if header == "name":
        doc.fill("Name: {N}\n", N=(full, "STUDENT", "listed"))
    elif header == "caps":
        doc.fill("{N} - Period 3\n", N=(full.upper(), "STUDENT", "listed"))
    elif header == "by":
        doc.fill("by {N}\n", N=(full.lower(), "STUDENT", "listed"))
    elif header == "plain":
        doc.fill("{L}, {F}\n", L=(last, "STUDENT", "listed"), F=(first, "STUDENT", "listed"))
    if rng.random() < 0.7:
        doc.fill("Date: {D}\n", D=(v.date_text(start=2020, end=2025), "DATE"))
    teacher = rng.choice(p["teachers"])
    title = rng.choice(["Mrs.", "Mr", "Ms.", "Dr.", "Mrs", "Mr."])
    doc.fill("Teacher: {T} {S}\n\n", T=title, S=(teacher[1], "PERSON", teacher[2]))
    pieces = rng.sample(ESSAY_FILLER, k=rng.randint(4, 7))
    specials = rng.sample(range(18), k=rng.randint(3, 6))
    for n, sentence in enumerate(pieces):
        doc.t(sentence + " ")
        if n < len(specials):
            _essay_special(doc, v, p, specials[n], first, last)
        if rng.random() < 0.3:
            doc.t("\n\n")
    doc.t("\n")


def _essay_special(doc: Doc, v: Values, p: dict, which: int, first: str, last: str) -> None:
    rng = v.rng
    other = rng.choice([s for s in p["students"] if s[0] != first])
    if which == 0:
        doc.fill("I worked on this with {A} and {B}. ", A=(other[0], "STUDENT", "listed"),
                 B=(f"{rng.choice(p['students'])[0]}", "STUDENT", "listed"))
    elif which == 1:
        doc.fill("{A}'s idea was to measure the water every day. ",
                 A=(other[0], "STUDENT", "listed"))
    elif which == 2:
        doc.fill("You can email me at {E}. ", E=(v.email(first, last), "EMAIL"))
    elif which == 3:
        doc.fill("I found this on {U}. ", U=(v.url(), "URL"))
    elif which == 4:
        doc.fill("(Source: {U}) ", U=(v.url(), "URL"))
    elif which == 5:
        pre, age, post = v.age()
        pre, post = ("", " years old") if pre.startswith("Age") else (pre, post)
        doc.fill("My great-grandmother, who is {P}{A}{Q}, remembers the floods of 1953. ",
                 P=pre, A=(age, "AGE"), Q=post)
    elif which == 6:
        doc.fill("My cousin {C} says it is all exaggerated. ", C=(v.person()[0], "PERSON",
                                                                  "unlisted"))
    elif which == 7:
        cue, number = v.student_id()
        doc.fill("{C}{I}. ", C=cue, I=(number, "ID"))
    elif which == 8:
        doc.fill("Follow me at {H} for more. ", H=("@" + _ascii(first).lower() + "_"
                                                    + str(rng.randint(1, 99)), "HANDLE"))
    elif which == 9:
        doc.fill("{A} disagreed with me, but {B} agreed. ",
                 A=(other[1], "STUDENT", "listed"), B=(other[0].upper(), "STUDENT", "listed"))
    elif which == 10:
        doc.fill("On {D} we visited the museum. ", D=(v.date_text(start=2018), "DATE"))
    elif which == 11:
        doc.fill("My mum, {T} {S}, helped with the graph. ", T=rng.choice(["Mrs", "Mrs."]),
                 S=(last, "PERSON", "listed"))
    elif which == 12:
        doc.fill("Call me on {P} if the link breaks. ", P=(v.phone(), "PHONE"))
    elif which == 14:
        doc.fill("“We should test it again,” said {A}. ", A=(other[0], "STUDENT", "listed"))
    elif which == 15:
        doc.fill("The poster ({A} {I}. {B}) won a prize. ", A=(other[0], "STUDENT", "listed"),
                 I=(rng.choice("ABCDEJKMR"), "STUDENT", "initial"),
                 B=(other[1], "STUDENT", "listed"))
    elif which == 16:
        doc.fill("Thanks to {A}! ", A=(_ascii(other[0]) if rng.random() < 0.5 else other[0],
                                       "STUDENT", "listed"))
    elif which == 17:
        doc.fill("Our website is at [our page]({U}), made by {A}. ", U=(v.url(), "URL"),
                 A=(f"{other[0]} {other[1]}", "STUDENT", "listed"))
    elif which == 13:
        doc.fill("my name is {N} and this is my essay. ",
                 N=(f"{first.lower()} {last.lower()}", "STUDENT", "listed"))


def answer(doc: Doc, v: Values, p: dict) -> None:
    rng = v.rng
    first, last = rng.choice(p["students"])
    shape = rng.randrange(9)
    body = rng.choice(ANSWER_FILLER)
    if shape == 0:
        doc.fill("{N}: {B}", N=(first, "STUDENT", "listed"), B=body)
    elif shape == 1:
        doc.fill("{B} - {N} {I}.", B=body, N=(first, "STUDENT", "listed"),
                 I=(last[0], "STUDENT", "initial"))
    elif shape == 2:
        doc.fill("As {N} said in class, {B}", N=(first, "STUDENT", "listed"),
                 B=body[0].lower() + body[1:])
    elif shape == 3:
        doc.fill("{B} I checked with {N} and {M}.", B=body, N=(first, "STUDENT", "listed"),
                 M=(rng.choice(p["students"])[1], "STUDENT", "listed"))
    elif shape == 4:
        doc.fill("{B} ({N}, {D})", B=body, N=(f"{first} {last}", "STUDENT", "listed"),
                 D=(v.date_text(start=2022, end=2025), "DATE"))
    elif shape == 5:
        doc.fill("{N}'s answer: {B}", N=(f"{first} {last}", "STUDENT", "listed"), B=body)
    elif shape == 6:
        doc.fill("{B} Email {E} if wrong.", B=body, E=(v.email(first, last), "EMAIL"))
    elif shape == 7:
        doc.fill("{B}", B=body)
    else:
        doc.fill("i think {N} is right: {B}", N=(first.lower(), "STUDENT", _lower_how(first)),
                 B=body[0].lower() + body[1:])
    if rng.random() < 0.15:
        doc.t(" " + rng.choice(ANSWER_FILLER))


def note(doc: Doc, v: Values, p: dict) -> None:
    rng = v.rng
    first, last = rng.choice(p["patients"])
    header = rng.randrange(3)
    if header == 0:
        doc.fill("Patient: {L}, {F}    ", L=(last.upper(), "PERSON", "listed"),
                 F=(first, "PERSON", "listed"))
    elif header == 1:
        doc.fill("PATIENT NAME: {N}\n", N=(f"{first} {last}".upper(), "PERSON", "listed"))
    else:
        doc.fill("Name: {N}; ", N=(f"{first} {last}", "PERSON", "listed"))
    doc.fill("DOB: {D}\n", D=(v.date_text(start=1925, end=1990), "DATE"))
    cue, number = v.mrn()
    doc.fill("{C}{M}\n", C=cue, M=(number, "ID"))
    doc.fill("Admitted: {D}\n\n", D=(v.date_text(start=2021, end=2025), "DATE"))
    pre, age, post = v.age() if rng.random() < 0.5 else ("a ", str(rng.randint(40, 89)),
                                                         "-year-old")
    if int(age) >= 90:
        doc.fill("{P}{A}{Q} ", P=pre[:1].upper() + pre[1:], A=(age, "AGE"), Q=post)
    else:
        doc.t(f"{pre[:1].upper() + pre[1:]}{age}{post} ")
    doc.t(rng.choice(["woman", "man", "patient"]) + " admitted with breathlessness. ")
    for sentence in rng.sample(NOTE_FILLER, k=rng.randint(3, 6)):
        doc.t(sentence + " ")
        what = rng.randrange(12)
        clinician = rng.choice(p["clinicians"])
        if what == 0:
            doc.fill("Seen by Dr. {S} on {D}. ", S=(clinician[1], "PERSON", clinician[2]),
                     D=(v.date_text(start=2021, end=2025), "DATE"))
        elif what == 1:
            doc.fill("{F} is worried about going home. ", F=(first, "PERSON", "listed"))
        elif what == 2:
            doc.fill("Daughter {D} ({P}) is next of kin. ",
                     D=(v.person()[0], "PERSON", "unlisted"), P=(v.phone(), "PHONE"))
        elif what == 3:
            parts = rng.choice([v.us_address, v.uk_address, v.eu_address])()
            doc.t("Lives at ")
            for value, kind in parts:
                doc.v(value, kind) if kind else doc.t(value)
            doc.t(". ")
        elif what == 4:
            doc.fill("Results on the portal: {U}. ", U=(v.url(), "URL"))
        elif what == 5:
            doc.fill("Telemetry box reachable at {I}. ", I=(rng.choice(
                [v.us.ipv4_private(), v.us.ipv4(), v.us.ipv6()]), "IP"))
        elif what == 6:
            doc.fill("Discussed with Nurse {N}. ", N=(v.person()[0], "PERSON", "titled"))
        elif what == 7:
            doc.fill("{L}'s wife visited. ", L=(last, "PERSON", "listed"))
        elif what == 8:
            doc.fill("Next review {D}. ", D=(v.date_text(year=False), "DATE"))
        elif what == 9:
            c2, n2 = v.mrn()
            doc.fill("{C}{M}. ", C=c2, M=(n2, "ID"))
        elif what == 10:
            doc.fill("GP: Dr {S}, tel. {P}. ", S=(clinician[1], "PERSON", clinician[2]),
                     P=(v.phone(), "PHONE"))
        elif what == 11:
            doc.fill("Reviewed with {T} {S}. ", T=rng.choice(["DR.", "Prof.", "Professor"]),
                     S=(clinician[1] if rng.random() < 0.5 else clinician[1].upper(), "PERSON",
                        clinician[2]))
    doc.t("\n\n")
    clinician = rng.choice(p["clinicians"])
    shape = rng.randrange(3)
    if shape == 0:
        doc.fill("{F} {L}, MD", F=(clinician[0], "PERSON", clinician[2]),
                 L=(clinician[1], "PERSON", clinician[2]))
    elif shape == 1:
        doc.fill("Signed: {N}", N=(f"{clinician[0]} {clinician[1]}", "PERSON", clinician[2]))
    else:
        doc.fill("Dictated by Dr. {N} ({E})", N=(f"{clinician[0]} {clinician[1]}", "PERSON",
                                                 clinician[2]),
                 E=(v.email(clinician[0], clinician[1]), "EMAIL"))


def letter(doc: Doc, v: Values, p: dict) -> None:
    rng = v.rng
    first, last = rng.choice(p["patients"])
    clinician = rng.choice(p["clinicians"])
    if rng.random() < 0.5:
        parts = rng.choice([v.us_address, v.uk_address])()
        doc.fill("{N}\n", N=(f"{first} {last}", "PERSON", "listed"))
        for value, kind in parts:
            doc.v(value, kind) if kind else doc.t(value)
        doc.t("\n\n")
    doc.fill("{D}\n\n", D=(v.date_text(start=2022, end=2025), "DATE"))
    greet = rng.randrange(6)
    if greet == 0:
        doc.fill("Dear {T} {L},\n\n", T=rng.choice(["Mr", "Mrs", "Ms", "Mr.", "Mrs."]),
                 L=(last, "PERSON", "listed"))
    elif greet == 1:
        doc.fill("Dear {F},\n\n", F=(first, "PERSON", "listed"))
    elif greet == 2:
        doc.fill("Dear {N}\n\n", N=(f"{first} {last}", "PERSON", "listed"))
    elif greet == 3:
        doc.t("Dear Patient,\n\n")
    elif greet == 4:
        doc.fill("Dear Mr. and Mrs. {L},\n\n", L=(last, "PERSON", "listed"))
    else:
        carer = v.person()
        doc.fill("Hi {C},\n\n", C=(carer[0], "PERSON", "titled"))
    doc.fill("Thank you for attending the clinic on {D}. ", D=(v.date_text(start=2022, end=2025),
                                                               "DATE"))
    for sentence in rng.sample(LETTER_FILLER, k=rng.randint(2, 4)):
        doc.t(sentence + " ")
        what = rng.randrange(8)
        if what == 0:
            doc.fill("Your next appointment is on {D} at 10:30. ",
                     D=(v.date_text(start=2024, end=2026), "DATE"))
        elif what == 1:
            doc.fill("If you have any questions, please call {P}. ", P=(v.phone(), "PHONE"))
        elif what == 2:
            doc.fill("You can also email us at <{E}>. ", E=(v.email(), "EMAIL"))
        elif what == 3:
            doc.fill("More information is at {U}. ", U=(v.url(), "URL"))
        elif what == 4:
            cue, number = v.mrn()
            doc.fill("Please quote your {C}{M} when you call. ", C=cue, M=(number, "ID"))
        elif what == 5:
            doc.fill("Dr. {S} will see you next time. ", S=(clinician[1], "PERSON",
                                                           clinician[2]))
        elif what == 6:
            doc.fill("{F}, you have done very well. ", F=(first, "PERSON", "listed"))
    doc.t("\n\n")
    signoff = rng.choice(["Kind regards,", "Yours sincerely,", "Best wishes,", "With best wishes,",
                          "Best,", "Thanks,"])
    doc.t(signoff + "\n\n")
    if rng.random() < 0.2:
        writer = v.person()
        doc.fill("{F} {L}\nPatient Liaison Team\n", F=(writer[0], "PERSON", "titled"),
                 L=(writer[1], "PERSON", "titled"))
    elif rng.random() < 0.5:
        doc.fill("Dr {F} {L}\nConsultant Cardiologist\n", F=(clinician[0], "PERSON", clinician[2]),
                 L=(clinician[1], "PERSON", clinician[2]))
    else:
        doc.fill("{F} {L}\nClinical Nurse Specialist\n", F=(clinician[0], "PERSON",
                                                            clinician[2]),
                 L=(clinician[1], "PERSON", clinician[2]))
    if rng.random() < 0.4:
        gp = v.person()
        doc.fill("\ncc: Dr. {N}, GP", N=(f"{gp[0]} {gp[1]}", "PERSON", "titled"))
    if rng.random() < 0.3:                  # written on Windows
        crlf(doc)


def build(seed: int = SEED) -> dict:
    import faker

    rng = random.Random(seed)
    v = Values(rng)
    taken: set[str] = set()
    special_students = [("Will", "Turner"), ("Grace", "Okafor"), ("May", "Chen"),
                        ("Maria", "Lopez"), ("Maria", "Schmidt"), ("Siobhán", "O'Connor"),
                        ("Jean-Luc", "Smith-Jones"), ("Zoë", "van der Berg")]
    taken.update(w.casefold() for s in special_students for w in s)
    students = special_students + v.people(32, taken)
    teachers = [(f, s, "listed") for f, s in v.people(4, taken)]
    teachers += [(f, s, "titled") for f, s in v.people(3, taken)]
    patients = [("Juan", "García"), ("Patrick", "D'Souza"), ("Hope", "Adams")]
    taken.update(w.casefold() for s in patients for w in s)
    patients += v.people(37, taken)
    clinicians = [(f, s, "listed") for f, s in v.people(5, taken)]
    clinicians += [(f, s, "titled") for f, s in v.people(3, taken)]
    school = {"students": students, "teachers": teachers}
    clinic = {"patients": patients, "clinicians": clinicians}
    texts = []
    for genre, make, project, params in [("essay", essay, "school", school),
                                         ("answer", answer, "school", school),
                                         ("note", note, "clinic", clinic),
                                         ("letter", letter, "clinic", clinic)]:
        for n in range(COUNTS[genre]):
            doc = Doc(genre, project)
            make(doc, v, params)
            texts.append({"id": f"{genre}-{n + 1:03d}", "genre": genre, "project": project,
                          "text": doc.text, "labels": doc.labels})
    return {
        "about": "Synthetic texts for the de-identification tests; every identifier labelled. "
                 "Made by tests/core/deidentify/corpus.py; do not edit by hand.",
        "seed": seed,
        "faker": faker.VERSION,
        "projects": {
            "school": {"students": [f"{f} {s}" for f, s in students],
                       "people": [f"{f} {s}" for f, s, how in teachers if how == "listed"]},
            "clinic": {"students": [],
                       "people": [f"{f} {s}" for f, s in patients]
                       + [f"{f} {s}" for f, s, how in clinicians if how == "listed"]},
        },
        "texts": texts,
    }


def main() -> None:
    import sys

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "deidentify_corpus.json")
    corpus = build()
    target.write_text(json.dumps(corpus, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(corpus['texts'])} texts, "
          f"{sum(len(t['labels']) for t in corpus['texts'])} labels -> {target}")


if __name__ == "__main__":
    main()
