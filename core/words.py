"""Small wording helpers every screen, message and export shares: "1 question", "3 questions",
"1 person", "2 people"."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["choose_from", "count", "plain_number"]

#: Nouns whose plural is not the singular + "s".
_IRREGULAR = {"person": "people", "this": "these", "summary": "summaries", "match": "matches",
              "is": "are", "was": "were", "has": "have"}


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the right number, with thousands separated: "1 persona",
    "2 personas", "1,200 answers", "1 person", "3 people"."""
    if n == 1:
        return f"1 {noun}"
    many = plural or _IRREGULAR.get(noun) or (noun[:-1] + "ies" if noun.endswith("y")
                                              and noun[-2:-1] not in "aeiou" else noun + "s")
    return f"{n:,} {many}"


def choose_from(text: str, allowed: Sequence[str], what: str = "condition") -> list[str]:
    """The names in a comma-separated list (``--conditions full,pre``) in ``allowed``'s order,
    case ignored; ValueError naming an unknown one, or saying that none was given."""
    names = [n.strip().casefold() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise ValueError(f"Unknown {what} {', '.join(unknown)}: choose from "
                         f"{', '.join(allowed)}.")
    if not names:
        raise ValueError(f"Name at least one {what}: {', '.join(allowed)}.")
    return [n for n in allowed if n in names]


def plain_number(value: float, digits: int | None = None) -> str:
    """A number as a person writes it, never in exponent form: 1e-06 -> "0.000001",
    0.00718 with ``digits=2`` (significant digits) -> "0.0072", 2.5 -> "2.5"."""
    from decimal import Decimal

    if digits is not None and value:
        value = float(f"{value:.{digits}g}")
    text = format(Decimal(repr(float(value))), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
