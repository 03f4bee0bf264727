"""Names: the ones the user gave (lists), and the ones a title, a greeting, a sign-off, a form
label or a degree points to ("Dr. Sarah Chen", "Dear Tom,", "Kind regards,\\nAnna Berg",
"Patient: Maria Lopez", "Sarah Chen, MD", "my name is Jake").

A :class:`NameIndex` holds name phrases as folded token sequences (see ``_text``) and what each
stands for. A listed full name is matched in any case ("maria lopez", "MARIA LOPEZ"); a first
name or surname alone is matched when it belongs to one listed person only (shared parts get a
placeholder of their own, so two Marias are never merged); a part that is also an ordinary
English word, or shorter than three letters, only with a capital. Names found through a title
are remembered for the rest of the project, with their parts (capitalised only).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from core.deidentify._text import (
    COMMON_WORDS,
    PARTICLES,
    TITLES,
    fold,
    gap_key,
    tokens,
    words,
)

__all__ = ["NameIndex", "Target", "cue_names", "names_from_text", "ordinary_use", "person_name",
           "phrase_of", "strip_titles"]

# How strongly a phrase stands for its person (a stronger source wins the same phrase).
EXTRA, LISTED_FULL, FOUND_FULL, LISTED_PART, FOUND_PART = 5, 4, 3, 2, 1


@lru_cache(maxsize=65536)
def _fold_token(token: str) -> str:
    return fold(token)


@dataclass
class Target:
    """What a phrase stands for: an entry key of the placeholder table, or None when the phrase
    is a first name or surname shared by several people (then ``part_key`` is its own key)."""

    strength: int
    key: str | None
    kinds: set[str]
    display: str
    origin: str
    needs_capital: bool
    part_key: str = ""
    sources: set[str] = field(default_factory=set)

    @property
    def kind(self) -> str:
        return "STUDENT" if self.kinds == {"STUDENT"} else (
            next(iter(self.kinds)) if len(self.kinds) == 1 else "PERSON")


def phrase_of(value: str) -> tuple[str, ...]:
    """The folded tokens of ``value`` with the gaps between them: "Lopez, Maria" ->
    ("lopez", ",", "maria")."""
    toks = tokens(value)
    out: list[str] = []
    for i, m in enumerate(toks):
        if i:
            out.append(gap_key(value[toks[i - 1].end():m.start()]))
        out.append(_fold_token(m.group()))
    return tuple(out)


_TITLE_ALT = "|".join(sorted({t for t in TITLES} | {t.upper() for t in TITLES}, key=len,
                             reverse=True))
_LEADING_TITLE = re.compile(rf"^(?:(?:{_TITLE_ALT})(?:\.[ \t]*|[ \t]+|$))+")


def strip_titles(value: str) -> str:
    return _LEADING_TITLE.sub("", value).strip()


def _needs_capital(token: str) -> bool:
    """A single-token name matched only with a capital: ordinary words, very short names."""
    return token in COMMON_WORDS or (token.isalpha() and len(token) < 3)


class NameIndex:
    """Name phrases -> targets, matched over a text's tokens with dictionary look-ups (a class
    list of thousands of names costs no more than ten)."""

    def __init__(self) -> None:
        self.phrases: dict[tuple[str, ...], Target] = {}
        self._prefixes: set[tuple[str, ...]] = set()

    def add(self, phrase: tuple[str, ...], strength: int, key: str | None, kind: str,
            display: str, origin: str, needs_capital: bool) -> None:
        if not phrase:
            return
        current = self.phrases.get(phrase)
        if current is None or strength > current.strength:
            self.phrases[phrase] = Target(strength, key, {kind}, display, origin, needs_capital,
                                          part_key="namepart:" + " ".join(phrase),
                                          sources={key or ""})
            for n in range(1, len(phrase), 2):
                self._prefixes.add(phrase[:n])
        elif strength == current.strength and key not in current.sources:
            current.sources.add(key or "")
            current.key = None          # shared by several people: a placeholder of its own
            current.kinds.add(kind)
            current.needs_capital = current.needs_capital or needs_capital

    def add_name(self, display: str, key: str, kind: str, origin: str, *, full: int,
                 part: int, variants: tuple[str, ...] = (), parts_capital: bool = False
                 ) -> None:
        """A person's name, its spellings, and (for names of letters) each part alone."""
        for spelling in (display, *variants):
            phrase = phrase_of(spelling)
            single = len(phrase) == 1
            self.add(phrase, full, key, kind, display, origin,
                     needs_capital=single and (parts_capital or _needs_capital(phrase[0])))
        words = display.split()
        if len(words) < 2 or not all(t.isalpha() for t in phrase_of(display)[::2]):
            return
        # the surname: from its first particle ("Zoë van der Berg") or the last word
        first = next((i for i in range(1, len(words) - 1) if fold(words[i]) in PARTICLES),
                     len(words) - 1)
        surname, given = " ".join(words[first:]), " ".join(words[:first])
        # "Lopez, Maria" for "Maria Lopez" (the order of class lists and patient headers)
        self.add(phrase_of(f"{surname}, {given}"), full, key, kind, display, origin,
                 needs_capital=False)
        if first < len(words) - 1:
            self.add(phrase_of(surname), part, key, kind, display, origin, needs_capital=False)
        for word in words:
            phrase = phrase_of(word)        # "Jean-Luc", "O'Connor" as written, and their
            pieces = [phrase] if len(phrase) > 1 else []    # halves ("Luc", "Connor") alone
            pieces += [(t,) for t in phrase[::2]]
            for piece in pieces:
                if len(piece) == 1 and (len(piece[0]) < 2 or piece[0] in PARTICLES):
                    continue
                single = len(piece) == 1
                self.add(piece, part, key, kind, display, origin,
                         needs_capital=single and (parts_capital or _needs_capital(piece[0])))

    def scan(self, text: str, toks: list[re.Match[str]]) -> Iterator[tuple[int, int, Target]]:
        """Every place a phrase starts, with its longest match there."""
        if not self.phrases:
            return
        folded = [_fold_token(m.group()) for m in toks]
        n = len(toks)
        for i in range(n):
            key: tuple[str, ...] = (folded[i],)
            best: tuple[int, Target] | None = None
            j = i
            while True:
                target = self.phrases.get(key)
                if target is not None and (not target.needs_capital or j > i
                                           or toks[i].group()[:1].isupper()):
                    best = (j, target)
                if key not in self._prefixes or j + 1 >= n:
                    break
                j += 1
                key = (*key, gap_key(text[toks[j - 1].end():toks[j].start()]), folded[j])
            if best is not None:
                yield toks[i].start(), toks[best[0]].end(), best[1]


# -- names a cue points to ---------------------------------------------------------------------
#: Capitalised words that follow a title or a greeting without being a name.
NOT_NAMES = frozenset(fold(w) for w in words("""
The A An And Or Of To In On At For With From By This That These Those Thank Thanks Please Sir
Sirs Madam Madame Colleague Colleagues Parent Parents Carer Carers Guardian Guardians Patient
Patients Student Students Pupil Pupils Team All Everyone Everybody Friend Friends Family
Customer Member Members Applicant Reader Readers Mum Mom Dad Mother Father Doctor Doctors Nurse
Nurses World There Class Staff Committee Board Admissions Hiring Manager Diary God Sister
Brother Guys Folks Teacher Teachers Care Clinic Department Dept Hospital Practice Surgery Office
Service Services Unit Ward Centre Center School College University Academy Trust Health Medical
Group Kind Best Regards Yours Sincerely Warm Many Love Cheers Take I We You He She They It My
Our Your His Her Their Re Subject Date Dear Hello Hi Hey Note Notes Plan Assessment History
Examination Impression Discharge Summary Medications Medication Diagnosis Follow Up Name Age Sex
Male Female Unknown Not None Yes No DOB DOD MRN NHS ID SSN Tel Phone Email Fax Address
Practitioner Specialist Assistant Consultant Registrar Director Head Principal Monday Tuesday
Wednesday Thursday Friday Saturday Sunday Today Tomorrow Yesterday Team Cardiology Oncology
Radiology Paediatrics Pediatrics Emergency Mr Mrs Ms Miss Mx Dr Prof Professor Rev Is Was Will
Has Had Can Could Should Would May Might Must Did Does Do Be Been Am Are Re Fwd Attached
Enclosed Regarding Ref Reference Appointment Results Result Report Letter Admission Admitted
Seen Signed Okay OK Thanks Welcome Morning Afternoon Evening Night Again Also Just So Well Now
Here Then When Where What Why How Who Which If But Because Grandma Grandpa Granny Grandad
Grandmother Grandfather Nan Nana Auntie Aunt Uncle Mummy Daddy
""") + words("""
Valued Respected Esteemed Prospective Future Lovely Sweet Dearest Fellow Fellows Ladies
Gentlemen Gentleman Whom Concern Anyone Someone Visitor Visitors Client Clients User
"""))

_LINE_END = re.compile(r"[ \t]*(?:\Z|\r?\n|,|\()")
_NAME_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*(?:\.(?=[ \t]))?")
_GAP = re.compile(r"[ \t]+")
_TITLE_CUE = re.compile(rf"(?<![\w.])(?:{_TITLE_ALT})(?:\.[ \t]*|[ \t]+)")
_GREETING_CUE = re.compile(
    r"(?<![\w])(?:Dear|Dearest|Hi|Hello|Hey|Hiya|Greetings|Good[ \t]+(?:morning|afternoon|"
    r"evening)|DEAR|HELLO|Attn:?|ATTN:?|Attention:|FAO:?|For[ \t]+the[ \t]+attention[ \t]+of:?)"
    r"[ \t]*,?[ \t]+")
_SIGNOFF_CUE = re.compile(
    r"(?im)^[ \t]*(?:yours[ \t]+sincerely|yours[ \t]+faithfully|yours[ \t]+truly|sincerely"
    r"(?:[ \t]+yours)?|(?:with[ \t]+)?(?:kind|warm|warmest|best|many)[ \t]+(?:regards|wishes|"
    r"thanks)|regards|thanks(?:[ \t]+again)?|thank[ \t]+you|best|cheers|respectfully|love|"
    r"take[ \t]+care|all[ \t]+the[ \t]+best|signed)[ \t]*[,.!]?"
    r"(?:[ \t]*(?:\r?\n[ \t]*)+|[ \t]*,[ \t]*)")
_LABEL_CUE = re.compile(
    r"(?im)(?:^|(?<=[;|\t])|(?<=[;|][ \t]))[ \t]*(?:patient(?:[ \t]+name)?|full[ \t]+name|name|"
    r"student(?:[ \t]+name)?|pupil(?:[ \t]+name)?|learner|teacher|tutor|parent(?:/guardian)?|"
    r"guardian|carer|next[ \t]+of[ \t]+kin|nok|emergency[ \t]+contact|attending(?:[ \t]+"
    r"physician)?|physician|doctor|clinician|nurse|consultant|gp|surgeon|referred[ \t]+by|"
    r"referring[ \t]+(?:physician|doctor|clinician)|signed(?:[ \t]+by)?|author|written[ \t]+by|"
    r"dictated[ \t]+by|reviewed[ \t]+by|examiner|marker|assessor|rater|interviewer|"
    r"interviewee|participant|seen[ \t]+by|provider|resident|cc|to|from)[ \t]*[:–-][ \t]*")
_SELF_CUE = re.compile(r"(?i)(?<![\w])(?:my[ \t]+name[ \t]+is|my[ \t]+name's|i[ \t]+am[ \t]+called|"
                       r"i'm[ \t]+called|call[ \t]+me)[ \t]+")
_CREDENTIAL = re.compile(
    r"(?<![\w'’-])(?P<name>[A-Z][\w'’-]*\.?(?:[ \t]+[A-Z][\w'’-]*\.?){0,4}),?[ \t]+"
    r"(?:MD|M\.D\.|D\.O\.|RN|NP|PA-C|PhD|Ph\.D\.|MBBS|MBChB|MRCP|MRCGP|FRCP|FRCS|BSc|MSc|MPH|"
    r"DDS|PharmD|LPN|FNP|APRN|DNP|MSN|BSN|LCSW|PsyD|EdD|RGN|RMN)(?![\w])")


def _is_name_word(word: str) -> bool:
    bare = word.rstrip(".")
    return (len(bare) >= 2 and bare[0].isupper() and fold(bare) not in NOT_NAMES
            and not bare.isdigit())


def _name_after(text: str, pos: int, max_words: int, *, comma: bool = False
                ) -> tuple[int, int] | None:
    """The name that starts at ``pos``: capitalised words on one line (initials and "van",
    "de" inside), a possessive "'s" left out; None if the first word is not a name."""
    words: list[tuple[int, int]] = []
    real = 0
    used_comma = False
    while len(words) < max_words + 2:
        m = _NAME_WORD.match(text, pos)
        if m is None:
            break
        word = m.group()
        bare = word.rstrip(".")
        initial = len(bare) == 1 and bare.isupper() and word.endswith(".")
        if initial:
            words.append((m.start(), m.end()))                 # an initial: "J."
        elif _is_name_word(word):
            end = m.start() + len(bare)
            possessive = re.search(r"['’]s$", bare)
            if possessive:
                end = m.start() + possessive.start()
            words.append((m.start(), end))
            real += 1
            if possessive or real >= max_words:
                break
        elif words and bare.casefold() in PARTICLES:
            words.append((m.start(), m.start() + len(bare)))
        else:
            break
        pos = m.end() if initial else m.start() + len(bare)
        gap = _GAP.match(text, pos)
        if comma and not used_comma and real == 1 and text.startswith(",", pos):
            gap = _GAP.match(text, pos + 1)
            used_comma = True
        if gap is None:
            break
        pos = gap.end()
    # end on a real word: drop trailing initials and particles
    while words and not _is_name_word(text[words[-1][0]:words[-1][1]]):
        words.pop()
    if not words or not real:
        return None
    return words[0][0], words[-1][1]


#: Titles that are also ordinary words, often at a sentence's start ("Judge QA pairs", "Nurse
#: GP letters"): an acronym after them is not a name (after "Mr", "Dr", "Ms" it may be one).
_WORD_TITLES = frozenset({"doctor", "father", "sister", "nurse", "matron", "lady", "lord",
                          "captain", "coach", "rabbi", "imam", "pastor", "judge", "officer"})
_ACRONYM = re.compile(r"[A-Z]{2,3}\b")


def _acronym_after_word_title(cue: str, name: str) -> bool:
    return cue.strip(" \t.").casefold() in _WORD_TITLES and bool(_ACRONYM.match(name))


def cue_names(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, cue) for each name a title, greeting, sign-off, label, degree or "my name
    is" points to; cue is "title" or "other"."""
    for m in _TITLE_CUE.finditer(text):
        span = _name_after(text, m.end(), 3)
        if span and not _acronym_after_word_title(m.group(), text[span[0]:span[1]]):
            yield (*span, "title")
    for m in _GREETING_CUE.finditer(text):
        span = _name_after(text, m.end(), 3)
        if span:
            yield (*span, "other")
            more = re.match(r"(?:[ \t]+(?:and|&)[ \t]+|,[ \t]*)", text[span[1]:])
            if more:
                second = _name_after(text, span[1] + more.end(), 3)
                if second:
                    yield (*second, "other")
    for m in _SIGNOFF_CUE.finditer(text):
        span = _name_after(text, m.end(), 4)
        if span and _LINE_END.match(text, span[1]):
            yield (*span, "other")
    for m in _LABEL_CUE.finditer(text):
        span = _name_after(text, m.end(), 4, comma=True)
        if span:
            yield (*span, "other")
    for m in _SELF_CUE.finditer(text):
        span = _name_after(text, m.end(), 3)
        if span:
            yield (*span, "other")
    for m in _CREDENTIAL.finditer(text):
        words = list(_NAME_WORD.finditer(m.group("name")))
        keep: list[re.Match[str]] = []
        for w in reversed(words):
            if not _is_name_word(w.group()) or len(keep) == 3:
                break
            keep.insert(0, w)
        if keep and any(len(w.group().rstrip(".")) > 1 for w in keep):
            base = m.start("name")
            yield base + keep[0].start(), base + keep[-1].end(), "other"


_HEADERS = frozenset({
    "name", "names", "student", "students", "student name", "student names", "pupil", "pupils",
    "pupil name", "full name", "first name last name", "given name family name", "worker",
    "workers", "rater", "raters", "patient", "patients", "patient name", "person", "people",
    "last name first name", "surname first name", "first name surname",
})


def names_from_text(text: str) -> list[str]:
    """Names pasted or read from a text file: one a line, or separated by semicolons; cells
    pasted from a spreadsheet (tabs) joined with a space ("Maria<tab>Lopez" -> "Maria Lopez");
    blank lines, repeats and a first line that is a header ("Name", "Student name") left out.
    A comma stays: "Lopez, Maria" is read as surname first."""
    names: list[str] = []
    seen: set[str] = set()
    for n, line in enumerate(text.splitlines()):
        cells = " ".join(c.strip() for c in line.split("\t") if c.strip())
        for piece in cells.split(";"):
            name = " ".join(piece.split())
            folded = fold(name)
            if not folded or folded in seen:
                continue
            if n == 0 and not names and folded in _HEADERS:
                continue
            seen.add(folded)
            names.append(name)
    return names


_MONTH_NAMES = frozenset({"april", "may", "june", "july", "august"})
_BEFORE_MONTH = re.compile(r"(?i)(?:\b(?:in|since|until|till|during|early|mid|late|last|next|"
                           r"this|every|each|through|throughout)[ \t]+|mid-)\Z")
_AUXILIARIES = frozenset({"will", "may", "can", "must", "might", "shall"})
_PRONOUN_AFTER = re.compile(r"[ \t]+(?:I|you|he|she|it|we|they|this|that|there|these|those)\b")


def ordinary_use(text: str, start: int, end: int) -> bool:
    """A listed name that is also an ordinary word, used as the word here: a month after "in",
    "since", "until"... ("in May"), or a question ("Will you", "May I")."""
    word = fold(text[start:end])
    if word in _MONTH_NAMES and _BEFORE_MONTH.search(text, max(0, start - 12), start):
        return True
    return word in _AUXILIARIES and bool(_PRONOUN_AFTER.match(text, end))


_ROLE_AFTER = re.compile(r"\s*(?:,|\s[-–—]\s|\().*$", re.DOTALL)


def person_name(value: str) -> str | None:
    """``value`` as a person's name to hide, or None when it names no one: for names made by
    a model or typed for a role (a persona's, an assessor's), where "Parents of young
    children" or "Teacher" is a role and "Ms Amy Lee" or "Dana Ray, a mother of two" a person.

    A person's name is one to four capitalised words (small particles such as "van" inside)
    that are not ordinary role words, after a title or with at least two words; what follows
    a comma, a dash or a bracket is dropped. The title is kept in the name given back (the
    de-identifier leaves it out of what it replaces)."""
    raw = " ".join(str(value).split())
    head = _ROLE_AFTER.sub("", raw).strip()
    bare = strip_titles(head)
    if not bare:
        return None
    titled = bare != head
    parts = bare.split()
    if not 1 <= len(parts) <= 4 or (len(parts) == 1 and not titled):
        return None
    real = 0
    for word in parts:
        if fold(word) in PARTICLES and real:
            continue
        letters = word.replace("-", "").replace("'", "").replace("’", "").rstrip(".")
        if not letters.isalpha() or not word[0].isupper() or not _is_name_word(word):
            return None
        real += 1
    return head if real else None
