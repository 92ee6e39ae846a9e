"""Writing styles: transformations of a note's segments that keep every gold span exact.

Each style rewrites segments one at a time (see ``segments``), so offsets never need fixing afterwards.
PHI segments keep their value except for case changes and OCR character confusions; spacing and
abbreviation changes touch only the literal text around them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from clinideid.synth.segments import LITERAL, PHI, Segment

STYLES: tuple[str, ...] = ("normal", "upper", "lower", "telegraphic", "nospace", "tokens", "ocr")

Style = Callable[[list[Segment], random.Random, Sequence[tuple[str, str]], str], list[Segment]]


def _normal(
    segs: list[Segment], rng: random.Random, abbrev: Sequence[tuple[str, str]], lang: str
) -> list[Segment]:
    return segs


def _upper(
    segs: list[Segment], rng: random.Random, abbrev: Sequence[tuple[str, str]], lang: str
) -> list[Segment]:
    return [s.with_text(s.text.upper()) for s in segs]


def _lower(
    segs: list[Segment], rng: random.Random, abbrev: Sequence[tuple[str, str]], lang: str
) -> list[Segment]:
    return [s.with_text(s.text.lower()) for s in segs]


def _telegraphic(
    segs: list[Segment], rng: random.Random, abbrev: Sequence[tuple[str, str]], lang: str
) -> list[Segment]:
    """Clinician shorthand: the language's abbreviations ("patient" -> "pt", "discussed with" -> "d/w"),
    sentence-final full stops dropped, mostly lower case."""
    compiled = [(re.compile(pattern, re.IGNORECASE), repl) for pattern, repl in abbrev]
    lower = rng.random() < 0.6
    out = []
    for s in segs:
        text = s.text
        if s.kind == LITERAL:
            for rx, repl in compiled:
                text = rx.sub(repl, text)
            text = re.sub(r"\.(?=[ \t]*\n)|\.$", "", text)
            text = re.sub(r"[ \t]{2,}", " ", text)
        if lower and (s.kind != PHI or rng.random() < 0.5):
            text = text.lower()
        out.append(s.with_text(text))
    return out


def _nospace(
    segs: list[Segment], rng: random.Random, abbrev: Sequence[tuple[str, str]], lang: str
) -> list[Segment]:
    """Missing spaces: "seen byDr.Rossi", "Tel.:0612345", "am12.03.2021"."""
    out = []
    for i, s in enumerate(segs):
        text = s.text
        if s.kind == LITERAL:
            nxt = segs[i + 1] if i + 1 < len(segs) else None
            if nxt is not None and nxt.kind != LITERAL and text.endswith(" ") and rng.random() < 0.6:
                text = text.rstrip(" ")
            text = re.sub(r"(?<=[.:,]) (?=\S)", lambda m: "" if rng.random() < 0.5 else " ", text)
        out.append(s.with_text(text))
    return out


_PUNCT = re.compile(r"[ \t]*([,.;:()!?])[ \t]*")


def _tokens(
    segs: list[Segment], rng: random.Random, abbrev: Sequence[tuple[str, str]], lang: str
) -> list[Segment]:
    """Text rebuilt from tokens joined by spaces: "Paziente , 71 anni ." (values themselves intact)."""
    out = []
    for i, s in enumerate(segs):
        text = s.text
        if s.kind == LITERAL:
            text = _PUNCT.sub(r" \1 ", text)
            if i > 0 and text and not text[0].isspace():
                text = " " + text
            if i + 1 < len(segs) and text and not text[-1].isspace():
                text = text + " "
            text = re.sub(r"[ \t]{2,}", " ", text)
            text = re.sub(r" +\n", "\n", text)
            text = re.sub(r"\n +", "\n", text)
        out.append(s.with_text(text))
    return out


#: characters an OCR engine confuses, both ways where it makes sense
_OCR = {"O": "0", "0": "O", "o": "0", "l": "1", "1": "l", "I": "l", "S": "5", "5": "S", "B": "8", "e": "c"}
#: Cyrillic look-alikes, for Russian text only
_OCR_RU = {**_OCR, "З": "3", "3": "З", "О": "0", "о": "0", "е": "с", "б": "6"}


def _ocr_chars(text: str, rng: random.Random, rate: float, table: dict[str, str]) -> str:
    out = []
    i = 0
    while i < len(text):
        pair = text[i : i + 2]
        if pair == "rn" and rng.random() < rate:
            out.append("m")
            i += 2
            continue
        c = text[i]
        out.append(table[c] if c in table and rng.random() < rate else c)
        i += 1
    return "".join(out)


def _ocr(
    segs: list[Segment], rng: random.Random, abbrev: Sequence[tuple[str, str]], lang: str
) -> list[Segment]:
    """OCR noise: 0/O, 1/l, З/3 confusions in every segment; dropped and doubled spaces, and lines merged,
    in the literal text only (a value never loses or gains a space, so its span stays one value)."""
    rate = rng.uniform(0.04, 0.12)
    out = []
    for s in segs:
        text = _ocr_chars(s.text, rng, rate, _OCR_RU if lang == "ru" else _OCR)
        if s.kind == LITERAL:
            text = re.sub(
                r"[ \n]",
                lambda m: (
                    ("" if m.group() == " " else " ")
                    if rng.random() < rate
                    else ("  " if m.group() == " " and rng.random() < rate else m.group())
                ),
                text,
            )
        out.append(s.with_text(text))
    return out


_STYLES: dict[str, Style] = {
    "normal": _normal,
    "upper": _upper,
    "lower": _lower,
    "telegraphic": _telegraphic,
    "nospace": _nospace,
    "tokens": _tokens,
    "ocr": _ocr,
}


def apply_style(
    style: str,
    segments: list[Segment],
    rng: random.Random,
    abbreviations: Sequence[tuple[str, str]] = (),
    language: str = "en",
) -> list[Segment]:
    """``segments`` written in ``style`` (one of ``STYLES``); ``abbreviations`` are the language's
    telegraphic shorthand (regex, replacement)."""
    return _STYLES[style](segments, rng, abbreviations, language)
