"""Small text helpers shared by operators and surrogates: normalisation, case patterns, reshaping."""

from __future__ import annotations

import unicodedata
from typing import Literal

from clinideid.transform.keys import KeyedRandom

CasePattern = Literal["upper", "lower", "title", "mixed"]

LATIN_LOWER = "abcdefghijklmnopqrstuvwxyz"
CYRILLIC_LOWER = "абвгдежзиклмнопрстуфхцчшэюя"


def strip_accents(text: str) -> str:
    """Latin accents removed ("García" -> "Garcia"); Cyrillic kept intact except "ё" -> "е" ("й" stays)."""
    if text.isascii():
        return text
    out = []
    for c in text:
        if c in "ёЁ":
            out.append("е" if c == "ё" else "Е")
        elif "\u0400" <= c <= "\u04ff":
            out.append(c)
        else:
            out.append("".join(d for d in unicodedata.normalize("NFKD", c) if not unicodedata.combining(d)))
    return "".join(out)


def normalize(text: str) -> str:
    """The form values are keyed by: accents stripped, case folded, whitespace collapsed, edge punctuation off.

    "García", "GARCIA" and "garcia." normalise alike, so they get the same surrogate.
    """
    folded = strip_accents(text).casefold()
    words = folded.split()
    return " ".join(words).strip(".,;:'\"()[]{}")


def case_pattern(text: str) -> CasePattern:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "lower"
    if all(c.isupper() for c in letters):
        return "upper"
    if all(c.islower() for c in letters):
        return "lower"
    if letters[0].isupper() and all(c.islower() for c in letters[1:]):
        return "title"
    return "mixed"


def apply_case(text: str, pattern: CasePattern) -> str:
    """``text`` in ``pattern``; ``mixed`` keeps ``text`` as written (e.g. a list's "McDonald")."""
    if pattern == "upper":
        return text.upper()
    if pattern == "lower":
        return text.lower()
    if pattern == "title":
        return _title(text)
    return text


def _title(text: str) -> str:
    out = []
    start = True
    for c in text:
        out.append(c.upper() if start else c.lower())
        start = not c.isalpha() and c not in "'’"
    return "".join(out)


def is_cyrillic(text: str) -> bool:
    return any("CYRILLIC" in unicodedata.name(c, "") for c in text if c.isalpha())


def reshape(value: str, rng: KeyedRandom, *, keep_leading_nonzero: bool = True) -> str:
    """Replace every letter and digit keeping its class and case; keep every other character.

    Digits stay digits (a non-zero leading digit stays non-zero), Latin letters stay Latin letters and
    Cyrillic letters stay Cyrillic, upper stays upper. Length and separators are kept.
    """
    out = []
    first_digit = True
    for c in value:
        if c.isdigit() and c.isascii():
            low = 1 if (keep_leading_nonzero and first_digit and c != "0") else 0
            out.append(rng.digit(low))
            first_digit = False
        elif c.isalpha():
            alphabet = CYRILLIC_LOWER if is_cyrillic(c) else LATIN_LOWER
            new = rng.choice(alphabet)
            out.append(new.upper() if c.isupper() else new)
        else:
            if not c.isalnum():
                first_digit = True
            out.append(c)
    return "".join(out)
