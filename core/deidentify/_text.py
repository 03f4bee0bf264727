"""Words of a text with their places, folded for comparison, and the small word lists names need.

A "token" is a run of letters and digits; what stands between two tokens (a space, a comma, an
apostrophe, a hyphen) is their "gap". "Maria's" is the token "Maria", the gap "'" and the token
"s", so a possessive never hides a name; "O'Neil" and "Smith-Jones" are matched as the token
sequences they are. Inside JSON text, an escape such as ``\\n`` counts as a space, so
``"Dear Maria,\\nThanks"`` still yields the token "Maria" and ``"Best,\\nSam"`` the token "Sam".
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["COMMON_WORDS", "PARTICLES", "TITLES", "UNSPACED", "fold", "gap_key", "tokens",
           "words"]

#: Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Myanmar,
#: Khmer), as character ranges: a run of them is one token, apart from the letters beside it.
UNSPACED = ("\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
            "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff")
#: A token: letters and digits (not the letter of a JSON escape: ``\n`` + "Maria"), or a run
#: of an unspaced script ("和Maria" is "和" and "Maria").
_TOKEN = re.compile(rf"(?:(?<![^\W_{UNSPACED}])(?<!\\)|(?<=\\[nrtbf]))[^\W_{UNSPACED}]+"
                    rf"|[{UNSPACED}]+")
_JSON_ESCAPE = re.compile(r"\\[nrtbf]")
_APOSTROPHES = str.maketrans({"’": "'", "ʼ": "'", "‘": "'", "‐": "-", "‑": "-", "–": "-"})


def words(text: str) -> tuple[str, ...]:
    """The words of a list written as text (one long list per line group reads better)."""
    return tuple(text.split())


def tokens(text: str) -> list[re.Match[str]]:
    return list(_TOKEN.finditer(text))


def fold(text: str) -> str:
    """Lower case, accents dropped, one kind of apostrophe and hyphen, spaces collapsed:
    "José  O’Neil" -> "jose o'neil"."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_APOSTROPHES))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.casefold().split())


def gap_key(gap: str) -> str:
    """What separates two tokens, for comparison: "" for spaces (and JSON's ``\\n``), else the
    punctuation without spaces: ", " -> ",", "'" -> "'"."""
    gap = _JSON_ESCAPE.sub(" ", gap).translate(_APOSTROPHES)
    return "".join(gap.split())


#: Titles and honorifics before a name (matched with a capital or in capitals).
TITLES = (
    "Dr", "Drs", "Doctor", "Mr", "Mrs", "Ms", "Miss", "Mx", "Prof", "Professor", "Rev", "Revd",
    "Reverend", "Fr", "Father", "Sister", "Nurse", "Matron", "Sir", "Dame", "Lady", "Lord",
    "Mme", "Mlle", "Madame", "Monsieur", "Herr", "Frau", "Sra", "Sr", "Señor", "Señora",
    "Sgt", "Capt", "Captain", "Coach", "Rabbi", "Imam", "Pastor", "Judge", "Officer",
)

#: Little words inside names ("Ludwig van Beethoven") that are never a name on their own.
PARTICLES = frozenset({
    "de", "da", "del", "della", "der", "den", "di", "du", "la", "le", "van", "von", "bin",
    "ibn", "al", "el", "st", "mc", "mac", "y", "e", "dos", "das", "do", "ter", "ten", "op",
})

#: Given names and surnames that are also ordinary English words. A listed name part that is
#: one of these is replaced on its own only when written with a capital ("Will", not "will").
COMMON_WORDS = frozenset(words("""
will may grace hope faith joy mark bill rose june april august art summer dawn sky amber ruby
jack frank pat sue rob chase hunter young brown white green black gray grey long little king
rich mason baker cook miller page bell hall wood stone hill lane ford park price ward love star
sunny honey lily iris daisy violet ivy holly heather jasmine olive hazel autumn winter storm
river lake forest rain angel charity patience prudence constance destiny harmony melody crystal
pearl jewel ginger candy brandy sandy rusty buddy guy gene dean drew miles rod sterling penny
carol earl duke prince baron bob lee don kit ray sage rowan reed wade cash deacon bishop nick
max bliss happy field fields rivers banks lamb fox wolf swift strong sharp best moody savage
small short hardy gold silver cross church bird fish hunt marsh moss pond shepherd carpenter
mills snow frost day knight money noble blue golden march sterling hale young wise bright free
freeman gay german glass good goodman hart heart hope hunter jolly joyce judge just keen lord
low major mann marshall may merry miner moon morning mercy north south east west power pray read
rice rock rush sea shaw sharp shore sing sparks spring steel sweet tanner taylor temple thatcher
tower turner walker wall waters weaver well wells wise wolfe wright yard victor victoria august
augustine earnest ernest clay colt dale glen grant heath holly hollis hunt jay jude lance lane
lark link mac pierce porter rex ridge royal rue scout shea skip sonny spike stella terry tory
trinity trip trust unity valentine vance wren zeal kind rich ivy belle bud chip colby dusty
flint forrest frances gale harley haven
"""))
