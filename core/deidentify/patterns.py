"""Identifiers a pattern can find: e-mail and web addresses, IP addresses, phone numbers, dates,
ages over 89, record-like numbers, street addresses, towns in an address and postcodes.

``find_patterns(text, keep_year=...)`` returns every candidate as a :class:`Hit` (several may
overlap: the engine keeps the strongest). Every pattern keeps to one line, never takes a quote
or a backslash (so JSON strings stay valid) and never takes the brackets of a placeholder.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass

from core.deidentify._text import words

__all__ = ["PRIORITY", "Hit", "find_patterns", "nhs_number_valid"]


@dataclass(frozen=True)
class Hit:
    """A candidate replacement: ``text[start:end]`` is a ``kind``; ``key`` is the normalised
    value that decides which placeholder it gets (None for a span that must be kept as it is,
    such as a placeholder already in the text)."""

    start: int
    end: int
    kind: str | None
    key: str | None
    priority: int
    source: str
    origin: str = "pattern"
    value: str = ""      # the value shown when a new placeholder is made ("" = the text itself)


#: Which candidate wins where two overlap (higher first; then the longer one).
PRIORITY = {
    "placeholder": 1000, "extra": 900, "url": 800, "email": 800, "handle": 750, "ip": 700,
    "id_cue": 650, "address": 600, "date": 550, "id_shape": 540, "phone": 500, "postcode": 450,
    "city": 440, "name_listed": 400, "name_cue": 350, "name_found": 340, "age": 300,
    "id_long": 200,
}


def _cap_alternation(words: list[str] | tuple[str, ...]) -> str:
    """Each word with a capital or in capitals ("March|MARCH"), longest first."""
    forms = set()
    for word in words:
        forms.add(word[:1].upper() + word[1:])
        forms.add(word.upper())
    return "|".join(sorted((re.escape(f) for f in forms), key=len, reverse=True))


# -- e-mail, web, IP, social-media handles -----------------------------------------------------
_EMAIL = re.compile(
    r"(?<![\w.+%-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]*[A-Za-z0-9_%+-])?"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])")
_URL = re.compile(r"(?<![\w@])(?:(?:https?|ftp)://|www\.)[^\s<>\"'\\\[\]{}|^`]+", re.IGNORECASE)
_HANDLE = re.compile(r"(?<![\w@.])@[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*(?![\w@])")
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])(?=[0-9A-Fa-f:.]*::?[0-9A-Fa-f:.]*:)"
                   r"[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\.\d{1,3}){0,3}(?![\w:])")


def _url_end(text: str, start: int, end: int) -> int:
    """Where a web address really ends: not at the sentence's full stop or a closing bracket
    that belongs to the sentence."""
    while end > start:
        last = text[end - 1]
        unmatched = last == ")" and text.count("(", start, end) < text.count(")", start, end)
        if last in ".,;:!?*_~" or unmatched:
            end -= 1
        else:
            break
    return end


# -- phone numbers -----------------------------------------------------------------------------
_PHONE = re.compile(r"""
    (?<![\w+/.,-])
    (?P<num>
        (?:\+|00)\d{1,3}(?:[ .-]?\(0?\d{0,4}\))?[ .-]?\d{1,12}(?:[ .-]\d{1,8}){0,5}
      | \(\d{2,5}\)[ .-]?\d{2,8}(?:[ .-]\d{2,5}){0,4}
      | \d{2,5}(?:[ .-]\d{2,8}){1,5}
      | \d{7,15}
    )
    (?P<ext>[ \t]*,?[ \t]*(?:x|ext\.?|extn\.?|extension)[ \t]*\d{1,6})?
    (?![\w-]|[.,/]\d)
""", re.VERBOSE | re.IGNORECASE)
_PHONE_CUE = re.compile(
    r"\b(?:tel|telephone|phone|phoned|ph|call|calling|called|mobile|mob|cell|cellphone|fax|"
    r"ring|text|pager|bleep|whatsapp|contact|hotline|helpline|number)\b[^\n\d]{0,12}$",
    re.IGNORECASE)
_NANP = re.compile(r"\d{3}([ .-])\d{3}\1\d{4}|\d{3}-\d{4}")


def _phone_ok(text: str, start: int, num: str, has_ext: bool) -> bool:
    digits = sum(c.isdigit() for c in num)
    if not 7 <= digits <= 15:
        return False
    if num.isdigit():       # no separators: a phone number only after "call", "tel." ...
        return (num[0] == "0" and 10 <= digits <= 11) or bool(
            _PHONE_CUE.search(text, max(0, start - 30), start))
    if num[0] in "+(" or num.startswith("00"):
        return True
    if num[0] == "0" and digits >= 9:
        return True
    if _NANP.fullmatch(num) or has_ext:
        return True
    return bool(_PHONE_CUE.search(text, max(0, start - 30), start))


# -- dates and ages ----------------------------------------------------------------------------
_MONTH_WORDS = ["January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December",
                "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov",
                "Dec"]
_MONTH = rf"(?:{_cap_alternation(_MONTH_WORDS)})\.?"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th|ST|ND|RD|TH)?"
_YEAR = r"(?:1[6-9]|20)\d{2}"
_WEEKDAY = (r"(?:(?:" + _cap_alternation(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
                                          "Saturday", "Sunday", "Mon", "Tue", "Tues", "Wed",
                                          "Thu", "Thur", "Thurs", "Fri", "Sat", "Sun"])
            + r")\.?,?[ \t]+(?:the[ \t]+)?)?")
_DATE_WRITTEN = [
    # (Tuesday,) March 4, 2021 / Mar. 4th 2021 / March 4
    re.compile(rf"\b(?P<md>{_WEEKDAY}{_MONTH}[ \t]+{_DAY})(?![\w:])"
               rf"(?:(?P<sep>,?[ \t]*)(?P<year>{_YEAR})\b)?"),
    # (Tuesday,) 4 March 2021 / 4th of March, 2021 / 04 Mar 2021 / 4 March
    re.compile(rf"(?:(?<![\w.,/:-])|(?<=, )|(?<=\. ))(?P<md>{_WEEKDAY}{_DAY}[ \t]+(?:of[ \t]+)?"
               rf"{_MONTH})(?!\w)"
               rf"(?:(?P<sep>,?[ \t]*)(?P<year>{_YEAR})\b)?"),
    # March 2021
    re.compile(rf"\b(?P<md>{_MONTH})(?P<sep>,?[ \t]+)(?P<year>{_YEAR})\b"),
    # 04-MAR-2021 / 4-Mar-21 / 04/Mar/2021 (hospital systems)
    re.compile(rf"(?<![\w/.:-])(?P<md>{_DAY}(?P<s>[-/]){_MONTH})(?P=s)(?P<year>{_YEAR}|\d{{2}})"
               r"(?![\w/-])"),
]
_DATE_NUMERIC = re.compile(
    r"(?<![\w/.:-])(?P<a>\d{1,2})(?P<s>[/.-])(?P<b>\d{1,2})(?P=s)(?P<year>\d{4}|\d{2})"
    r"(?!\d|[/.-]\d|[A-SU-Za-z_])")
_DATE_ISO = re.compile(
    rf"(?<![\w/.:-])(?P<year>{_YEAR})(?P<s>[-/.])(?P<a>\d{{1,2}})(?P=s)(?P<b>\d{{1,2}}"
    r"(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?)"
    r"(?!\d|[/.-]\d|[A-SU-Za-z_])")
_DATE_MONTH_YEAR = re.compile(
    rf"(?<![\w/.:-])(?P<a>0?[1-9]|1[0-2])/(?P<year>{_YEAR})(?![\w/]|\.\d)")

_AGE = [
    re.compile(r"(?<![\w.,])(?P<age>\d{2,3})(?=[ \t-]*(?:years?|yrs?)[ \t-]*(?:old\b|of[ \t]+age\b)"
               r"|[ \t-]*(?:y/o|y\.o\.|yo\b|y\.o\b)|-year-old)", re.IGNORECASE),
    re.compile(r"\b(?:aged|age|ages)[ \t]*[:=]?[ \t]*(?P<age>\d{2,3})(?![\w]|[.,]\d)",
               re.IGNORECASE),
]


# -- record-like numbers -----------------------------------------------------------------------
_ID_CUE_WORDS = r"""
    medical[ \t]+record(?:[ \t]+(?:number|no\.?|\#))? | (?:hospital|record|case|claim|
    reference|ref|policy|account|acct|member(?:ship)?|certificate|serial|registration|reg|
    badge|candidate|exam|pupil|learner|enrol?ment|enrollment|identification|passport|patient|
    student|employee|staff|insurance|beneficiary|health[ \t]+plan|nhs|chi|ni|
    national[ \t]+insurance|social[ \t]+security|licen[cs]e|driver'?s[ \t]+licen[cs]e|
    driving[ \t]+licen[cs]e|plate|device|dea|npi)\.?[ \t]+(?:id|number|no\.?|num|\#|code)
    | student[ \t]+id | patient[ \t]+id | mrn | mr\# | ssn | nino | upn | uln | vin | npi
    | acct\.? | (?-i:ID|I\.D\.|Id)
"""
_ID_VALUE = r"(?P<id>(?:[A-Za-z]{1,4}[ ]?[-#/]?)?\d[\dA-Za-z]*(?:[ /.-]\d[\dA-Za-z]*){0,4}" \
            r"(?:[ ][A-Da-d](?![\w]))?)"
_ID_CUE = re.compile(
    rf"(?<![\w])(?:{_ID_CUE_WORDS})[ \t]*(?:\#|no\.?|number|:|=|is|was|-)?[ \t]*[:#]?[ \t]*"
    + _ID_VALUE + r"(?![\w-])", re.IGNORECASE | re.VERBOSE)
_SSN = re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-]|\.\d)")
_NHS = re.compile(r"(?<![\w+()/.-])(?<!\) )\d{3} \d{3} \d{4}(?![\w-]|\.\d)")
_NINO = re.compile(r"(?<![\w])[A-CEGHJ-PR-TW-Z]{2}[ ]?\d{2}[ ]?\d{2}[ ]?\d{2}[ ]?[A-D](?![\w])")
_LETTER_ID = re.compile(r"(?<![\w-])[A-Z]{1,4}-?\d{5,}[A-Z]?(?![\w-])")
_LONG_NUMBER = re.compile(r"(?<![\w.,-])\d{7,}(?![\w,-]|\.\d)")


def nhs_number_valid(digits: str) -> bool:
    """The NHS number's modulus-11 check digit."""
    if len(digits) != 10 or not digits.isdigit():
        return False
    total = sum(int(d) * (10 - i) for i, d in enumerate(digits[:9]))
    check = 11 - total % 11
    check = 0 if check == 11 else check
    return check != 10 and check == int(digits[9])


# -- addresses, towns and postcodes ------------------------------------------------------------
_STRONG_SUFFIXES = (
    "Street", "St", "Road", "Rd", "Avenue", "Ave", "Av", "Lane", "Ln", "Drive", "Dr",
    "Boulevard", "Blvd", "Court", "Ct", "Place", "Pl", "Terrace", "Ter", "Terr", "Close",
    "Crescent", "Cres", "Way", "Parkway", "Pkwy", "Highway", "Hwy", "Square", "Sq", "Circle",
    "Cir", "Trail", "Trl", "Alley", "Row", "Mews", "Gardens", "Gdns", "Grove", "Walk", "Rise",
    "Plaza", "Expressway", "Expy", "Freeway", "Fwy", "Turnpike", "Tpke", "Pike", "Loop",
    "Path", "Crossing", "Heights", "Parade", "Broadway", "Esplanade", "Promenade",
    "Embankment", "Causeway", "Stravenue", "Throughway", "Trafficway", "Motorway", "Skyway",
    "Underpass", "Overpass", "Wynd", "Drove", "Chase", "Quay", "Wharf",
)
_WEAK_SUFFIXES = (
    "Arcade", "Bend", "Bluff", "Bluffs", "Bottom", "Branch", "Bridge", "Brook", "Brooks",
    "Burg", "Burgs", "Bypass", "Camp", "Canyon", "Cape", "Center", "Centre", "Centers",
    "Circles", "Cliff", "Cliffs", "Club", "Common", "Commons", "Corner", "Corners", "Course",
    "Courts", "Cove", "Coves", "Creek", "Crest", "Croft", "Crossroad", "Curve", "Dale", "Dam",
    "Divide", "Drives", "End", "Estate", "Estates", "Extension", "Extensions", "Fall", "Falls",
    "Ferry", "Field", "Fields", "Flat", "Flats", "Ford", "Fords", "Forest", "Forge", "Forges",
    "Fork", "Forks", "Fort", "Garden", "Gate", "Gateway", "Glade", "Glen", "Glens", "Grange",
    "Green", "Greens", "Groves", "Harbor", "Harbour", "Harbors", "Haven", "Hill", "Hills",
    "Hollow", "Inlet", "Island", "Islands", "Isle", "Junction", "Junctions", "Key", "Keys",
    "Knoll", "Knolls", "Lake", "Lakes", "Land", "Landing", "Light", "Lights", "Loaf", "Lock",
    "Locks", "Lodge", "Mall", "Manor", "Manors", "Meadow", "Meadows", "Mill", "Mills",
    "Mission", "Mount", "Mountain", "Mountains", "Neck", "Orchard", "Oval", "Park", "Parks",
    "Parkways", "Pass", "Passage", "Pine", "Pines", "Plain", "Plains", "Point", "Points",
    "Port", "Ports", "Prairie", "Radial", "Ramp", "Ranch", "Rapid", "Rapids", "Rest",
    "Ridge", "Ridges", "River", "Roads", "Route", "Rue", "Run", "Shoal", "Shoals", "Shore",
    "Shores", "Spring", "Springs", "Spur", "Spurs", "Squares", "Station", "Stream", "Streets",
    "Summit", "Trace", "Track", "Tunnel", "Union", "Unions", "Valley", "Valleys", "Via",
    "Viaduct", "View", "Views", "Village", "Villages", "Ville", "Vista", "Walks", "Wall",
    "Ways", "Well", "Wells", "Yard",
)
_STRONG_SET = frozenset(s.casefold() for s in _STRONG_SUFFIXES)
_UNIT_WORDS = ("Apt", "Apartment", "Suite", "Ste", "Unit", "Flat", "Fl", "Floor", "Room", "Rm",
               "Studio", "Bldg", "Building")
_UNIT_ANY = rf"(?:{_cap_alternation(_UNIT_WORDS)})\b\.?"
_UNIT_NUMBER = r"(?=[\w-]*\d|[A-Za-z]\b)[\w-]{1,6}"
_STREET_WORD = r"(?:[A-Z][A-Za-z'’.-]*|\d{1,3}(?:st|nd|rd|th))"
_STREET = re.compile(
    rf"(?:(?<=\n)|(?<![\w.,/#-]))"
    rf"(?:{_UNIT_ANY}[ \t]*\#?[ \t]*{_UNIT_NUMBER},?[ \t]+)?"
    r"(?P<number>\d{1,6}[A-Za-z]?(?:-\d{1,5}[A-Za-z]?)?),?[ \t]+"
    rf"(?:(?:[NSEW]\.?|North|South|East|West)[ \t]+)?"
    rf"{_STREET_WORD}(?:[ \t]+(?:{_STREET_WORD}|of|the|de|la)){{0,3}}[ \t]+"
    rf"(?P<suffix>{_cap_alternation(_STRONG_SUFFIXES + _WEAK_SUFFIXES)})\.?(?![\w'’-])"
    rf"(?:(?:[ \t]+(?:[NSEW]|NE|NW|SE|SW))?,?[ \t]+(?:{_UNIT_ANY}|\#)[ \t]*\#?[ \t]*"
    rf"{_UNIT_NUMBER})?")
_STREET_EU = [
    # Hauptstraße 12 / Keizersgracht 123-A / Dorpsstraat 4
    re.compile(r"(?<![\w-])[A-ZÄÖÜ][\wäöüß-]*(?i:straße|strasse|str\.|weg|platz|gasse|allee|"
               r"ring|damm|ufer|straat|laan|plein|gracht|kade|dijk|singel|steeg|markt)"
               r"[ \t]+\d{1,4}(?:[ \t]?[a-zA-Z])?(?:-\d{1,4})?(?![\w-])"),
    # 12 rue de la Paix / 3 bis avenue Foch
    re.compile(r"(?<![\w.,/-])\d{1,4}(?:[ \t]?(?:bis|ter))?,?[ \t]+"
               r"(?:rue|avenue|av\.|boulevard|bd|place|chemin|allée|impasse|quai|route|cours)"
               r"(?:[ \t]+(?:de|du|des|la|le|l'|d'|l’|d’))*[ \t]*"
               r"[A-ZÉÈ][\w'’-]*(?:[ \t]+(?:de|du|des|la|le)?[ \t]*[A-ZÉÈ][\w'’-]*){0,3}",
               re.IGNORECASE),
    # Via Roma 12 / Calle Mayor 5 / Rua Augusta 20
    re.compile(r"(?<![\w-])(?:Via|Viale|Piazza|Corso|Calle|Avenida|Plaza|Rua|Praça)"
               r"[ \t]+(?:(?:de|del|della|di|da|do|dos|la)[ \t]+)*[A-Z][\w'’-]*"
               r"(?:[ \t]+[A-Z][\w'’-]*){0,2},?[ \t]+\d{1,4}[a-zA-Z]?(?![\w-])"),
]
_PO_BOX = re.compile(r"(?<![\w])(?:P\.?[ \t]?O\.?|Post[ \t]+Office)[ \t]+Box[ \t]+\d{1,7}(?![\w])",
                     re.IGNORECASE)

_US_STATES = words("""
AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM
NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR GU VI AS MP FM MH PW AA AE AP
""")
_US_STATE_NAMES = (
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|"
    "Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|"
    "Massachusetts|Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|"
    "New Hampshire|New Jersey|New Mexico|New York|North Carolina|North Dakota|Ohio|Oklahoma|"
    "Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|"
    "Vermont|Virginia|Washington|West Virginia|Wisconsin|Wyoming|Puerto Rico"
)
_CA_PROVINCES = words("AB BC MB NB NL NS NT NU ON PE QC SK YT")
_CITY_WORDS = r"[A-Z][A-Za-z'’.-]+(?:[ \t-](?:[A-Z][A-Za-z'’.-]+|upon|on|in|de|la|le)){0,3}"
_LINE_START = r"(?:(?<=\n)|(?<=^)|(?<=,[ \t])|(?<=,))"
_UK_POSTCODE = r"(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]?|GIR)[ \t]?\d[ABD-HJLNP-UW-Z]{2}"
_CA_POSTCODE = r"[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z][ \t]?\d[ABCEGHJ-NPRSTV-Z]\d"
_US_ZIP = r"\d{5}(?:-\d{4})?"
_ADDRESS_TAILS = [
    # Springfield, IL 62704 / Lake Brittany, Missouri 12345 / Toronto, ON M5V 2T6
    re.compile(rf"{_LINE_START}[ \t]*(?P<city>{_CITY_WORDS}),[ \t]*"
               rf"(?:{'|'.join(_US_STATES)}|{_US_STATE_NAMES})\.?,?[ \t]+(?P<postcode>{_US_ZIP})"
               r"(?![\w-])"),
    re.compile(rf"{_LINE_START}[ \t]*(?P<city>{_CITY_WORDS}),?[ \t]*"
               rf"(?:{'|'.join(_CA_PROVINCES)}),?[ \t]+(?P<postcode>{_CA_POSTCODE})(?![\w])"),
    # Leeds LS1 4AP / , London, SW1A 1AA / Leeds\nLS1 4AP
    re.compile(rf"(?m){_LINE_START}[ \t]*(?P<city>{_CITY_WORDS})(?:,?[ \t]+|,?[ \t]*\r?\n[ \t]*)"
               rf"(?P<postcode>{_UK_POSTCODE})(?![\w])"),
    # 10115 Berlin / 75002 Paris / D-80331 München / 1015 CJ Amsterdam
    re.compile(rf"(?m){_LINE_START}[ \t]*(?P<postcode>(?:[A-Z]{{1,2}}-)?\d{{5}}|[1-9]\d{{3}}[ \t]?"
               r"[A-Z]{2})[ \t]+(?P<city>[A-ZÄÖÜÉÈ][\wäöüßéèàç'’-]+"
               r"(?:[ \t-](?:am|an|der|sur|en|le|la|[A-ZÄÖÜÉÈ][\wäöüßéèàç'’-]+)){0,3})"
               r"[ \t]*(?=$|[,;)\r\n]|\.\s)"),
]
_POSTCODES = [
    re.compile(rf"(?<![\w-]){_UK_POSTCODE}(?![\w])"),
    re.compile(rf"(?<![\w-]){_CA_POSTCODE}(?![\w])"),
    re.compile(r"(?<![\w-])\d{5}-\d{4}(?![\w-])"),
    re.compile(r"\b(?:zip|zip[ \t]+code|postcode|postal[ \t]+code|post[ \t]+code|PLZ)"
               r"[ \t]*[:#]?[ \t]*(?P<postcode>\d{4,5}(?:-\d{4})?|" + _UK_POSTCODE + "|"
               + _CA_POSTCODE + r")(?![\w])", re.IGNORECASE),
    re.compile(rf"\b(?:{'|'.join(_US_STATES)})[ \t]+(?P<postcode>{_US_ZIP})(?![\w-])"),
]
_YEAR_NUMBER = re.compile(r"1[89]\d\d|20\d\d")
_ADDRESS_END = re.compile(r"[ \t]*(?:$|[,;)\r\n]|\.(?:\s|$))")


# -- the detectors ----------------------------------------------------------------------------
def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _hit(start: int, end: int, kind: str, key: str, source: str) -> Hit:
    return Hit(start, end, kind, f"{kind}:{key}", PRIORITY[source], source)


def _dates(text: str, keep_year: bool) -> Iterator[Hit]:
    def emit(m: re.Match[str], md_start: int, md_end: int) -> Hit:
        if keep_year or m.group("year") is None:
            start, end = md_start, md_end
        else:
            start, end = m.start(), m.end()
        return _hit(start, end, "DATE", _norm(text[start:end]), "date")

    for pattern in _DATE_WRITTEN:
        for m in pattern.finditer(text):
            yield emit(m, m.start("md"), m.end("md"))
    for m in _DATE_NUMERIC.finditer(text):
        a, b = int(m.group("a")), int(m.group("b"))
        if a < 1 or b < 1 or not ((a <= 12 and b <= 31) or (a <= 31 and b <= 12)):
            continue
        yield emit(m, m.start("a"), m.end("b"))
    for m in _DATE_ISO.finditer(text):
        a, b = int(m.group("a")), int(m.group("b")[:2].rstrip("T"))
        if not (1 <= a <= 12 and 1 <= b <= 31):
            continue
        yield emit(m, m.start("a"), m.end("b"))
    for m in _DATE_MONTH_YEAR.finditer(text):
        yield emit(m, m.start("a"), m.end("a"))


def _ids(text: str) -> Iterator[Hit]:
    for m in _ID_CUE.finditer(text):
        value = m.group("id")
        digits = sum(c.isdigit() for c in value)
        if digits >= 3 and len(value) >= 4:
            yield _hit(m.start("id"), m.end("id"), "ID", _id_key(value), "id_cue")
    for m in _SSN.finditer(text):
        yield _hit(m.start(), m.end(), "ID", _id_key(m.group()), "id_shape")
    for m in _NHS.finditer(text):
        # the shape of an NHS number (3-3-4 digits, spaces, its check digit), unless a word
        # before it says it is a phone number
        if (nhs_number_valid(re.sub(r"\D", "", m.group()))
                and not _PHONE_CUE.search(text, max(0, m.start() - 30), m.start())):
            yield _hit(m.start(), m.end(), "ID", _id_key(m.group()), "id_shape")
    for m in _NINO.finditer(text):
        yield _hit(m.start(), m.end(), "ID", _id_key(m.group()), "id_shape")
    for m in _LETTER_ID.finditer(text):
        yield _hit(m.start(), m.end(), "ID", _id_key(m.group()), "id_shape")
    for m in _LONG_NUMBER.finditer(text):
        yield _hit(m.start(), m.end(), "ID", _id_key(m.group()), "id_long")


def _id_key(value: str) -> str:
    return re.sub(r"[^0-9A-Za-z]", "", value).upper()


def _addresses(text: str) -> Iterator[Hit]:
    for m in _STREET.finditer(text):
        # "Willow Creek", "Maxwell Cliff" (a suffix that is also a word): only as an address
        # ends (a comma, the line's end, a flat number), and not after a year ("in 2019 Grace
        # Park was ...") or in a title ("The 3 Main Points of ...").
        weak = m.group("suffix").casefold() not in _STRONG_SET
        if weak and (_YEAR_NUMBER.fullmatch(m.group("number"))
                     or not _ADDRESS_END.match(text, m.end())):
            continue
        yield _hit(m.start(), m.end(), "ADDRESS", _norm(m.group().rstrip(".")), "address")
    for pattern in (*_STREET_EU, _PO_BOX):
        for m in pattern.finditer(text):
            yield _hit(m.start(), m.end(), "ADDRESS", _norm(m.group()), "address")
    for pattern in _ADDRESS_TAILS:
        for m in pattern.finditer(text):
            city, postcode = m.span("city"), m.span("postcode")
            yield _hit(*city, "CITY", _norm(m.group("city")), "city")
            yield _hit(*postcode, "POSTCODE", _id_key(m.group("postcode")), "postcode")
    for pattern in _POSTCODES:
        for m in pattern.finditer(text):
            group = "postcode" if "postcode" in pattern.groupindex else 0
            yield _hit(m.start(group), m.end(group), "POSTCODE", _id_key(m.group(group)),
                       "postcode")


def find_patterns(text: str, *, keep_year: bool = False) -> list[Hit]:
    hits: list[Hit] = []
    for m in _EMAIL.finditer(text):
        hits.append(_hit(m.start(), m.end(), "EMAIL", m.group().casefold(), "email"))
    for m in _URL.finditer(text):
        end = _url_end(text, m.start(), m.end())
        if end - m.start() > 8:
            value = text[m.start():end]
            hits.append(_hit(m.start(), end, "URL", value.casefold().rstrip("/"), "url"))
    for m in _HANDLE.finditer(text):
        hits.append(_hit(m.start(), m.end(), "HANDLE", m.group().casefold(), "handle"))
    for m in _IPV4.finditer(text):
        hits.append(_hit(m.start(), m.end(), "IP", m.group(), "ip"))
    for m in _IPV6.finditer(text):
        try:
            address = ipaddress.IPv6Address(m.group())
        except ValueError:
            continue
        if sum(c in "0123456789abcdefABCDEF" for c in m.group()) >= 2:
            hits.append(_hit(m.start(), m.end(), "IP", address.compressed, "ip"))
    for m in _PHONE.finditer(text):
        num, ext = m.group("num"), m.group("ext")
        if _phone_ok(text, m.start(), num, bool(ext)):
            key = re.sub(r"\D", "", num) + ("x" + re.sub(r"\D", "", ext) if ext else "")
            hits.append(_hit(m.start(), m.end(), "PHONE", key, "phone"))
    hits.extend(_dates(text, keep_year))
    for pattern in _AGE:
        for m in pattern.finditer(text):
            if 90 <= int(m.group("age")) <= 130:
                hits.append(_hit(m.start("age"), m.end("age"), "AGE", m.group("age"), "age"))
    hits.extend(_ids(text))
    hits.extend(_addresses(text))
    return hits
