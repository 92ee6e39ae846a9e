"""Which encoding a document's bytes are in, and whether a decode reads as text or as mojibake.

A single-byte encoding decodes any bytes "successfully", so a wrong one is only visible in the text it
gives. Mojibake of the kinds the supported languages meet shows in their words, whatever the language:

- a word mixing scripts (``Mьller``: cp1252 German read as cp1251);
- three or more non-ASCII Latin letters in a row (``Ïàöèåíò``: Cyrillic bytes read as cp1252 or latin-1;
  English, German, Italian, Spanish and French words carry at most two accented letters in a row);
- a symbol glued to letters (``c½ur``: latin-9 read as cp1252; ``Ð¿Ñ€``; box-drawing characters of a DOS
  code page), except the degree, registered and trademark signs, acute and grave accents used as
  apostrophes, and superscripts ending a word (``m²``, footnotes);
- C1 control characters (cp1252 quotes and dashes read as latin-1);
- text once decoded wrongly and then saved as Unicode (``MÃ¼ller``, ``Ð¿Ñ€Ð¸``, ``РїСЂРё``).

Cyrillic encodings all give Cyrillic words from Russian bytes; among them the one whose letters follow
Russian letter frequencies wins (cp1251 read as koi8-r turns о, а, и into н, ю, х). Messages never quote
the text.
"""

from __future__ import annotations

import codecs
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

#: single-byte encodings tried, in order of preference, for a document that is not UTF-8
CANDIDATES: tuple[tuple[str, str], ...] = (
    ("cp1252", "Western European"),
    ("iso8859-15", "Western European"),
    ("cp1251", "Cyrillic"),
    ("koi8-r", "Cyrillic"),
)
FAMILY = dict(CANDIDATES)

# Russian letter frequencies in per cent (general written Russian), for choosing among Cyrillic decodes
_RUSSIAN = dict(
    zip(
        "оеаинтсрвлкмдпуяызьбгчйхжшюцщэфъё",
        (10.97, 8.45, 8.01, 7.35, 6.70, 6.26, 5.47, 4.73, 4.54, 4.40, 3.49, 3.21, 2.98, 2.81, 2.62, 2.01,
         1.90, 1.65, 1.74, 1.59, 1.70, 1.44, 1.21, 0.97, 0.94, 0.73, 0.64, 0.48, 0.36, 0.32, 0.26, 0.04,
         0.04),
        strict=True,
    )
)  # fmt: skip
_RARE = 0.01  # per cent, for a Cyrillic letter Russian does not use (Ukrainian, Serbian...)
#: a Cyrillic decode must beat another by this much (mean log frequency) to be preferred when forced
_MARGIN = 0.3

_NON_ASCII_TOKEN = re.compile(r"\S*[^\x00-\x7f]\S*")
_C1 = re.compile("[\x80-\x84\x86-\x9f]")
#: what a double-encoded stretch must stand for to count: accented Latin, Cyrillic, quotes and dashes, euro
_ORIGINAL = re.compile("[\u00a0-\u017f\u0400-\u04ff\u2010-\u203a\u20ac]")
_GLUE_OK = frozenset("°®©™´`")
_CYRILLIC_WORD = re.compile(r"(?<![^\W\d_])[\u0400-\u04ff]+(?![^\W\d_])")
_LETTERS = re.compile(r"[^\W\d_]+")
#: words mixing Latin and Cyrillic letters tolerated, as a share of the words with Cyrillic letters
MAX_MIXED_SHARE = 0.25
#: a Cyrillic reading of a document in a supported language gives Russian letters (ї, ѕ, ђ: mojibake)
MIN_RUSSIAN_SHARE = 0.9
_SUPERSCRIPTS = frozenset("¹²³")


@dataclass(frozen=True)
class Fit:
    """An encoding that reads a document's bytes as clean text: its name, its text and a score
    (higher is better; only Cyrillic decodes are scored)."""

    codec: str
    text: str
    score: float = 0.0


def describe(codec: str) -> str:
    """``cp1251 (Cyrillic)`` for a candidate, the bare name otherwise."""
    family = FAMILY.get(codec)
    return f"{codec} ({family})" if family else codec


@lru_cache(maxsize=4096)
def _script(c: str) -> str:
    """LATIN, CYRILLIC, GREEK or OTHER for a letter; "" for the micro sign, which units put before any
    script's letters (``µg``, ``мкг/µl``)."""
    if c < "\x80" or c in "ªº":
        return "LATIN"
    if c in "µμ":
        return ""
    word = unicodedata.name(c, "OTHER").split(" ", 1)[0]
    return word if word in ("LATIN", "CYRILLIC", "GREEK") else "OTHER"


def _glued_symbol(c: str) -> bool:
    return (
        c >= "\x80"
        and c not in _GLUE_OK
        and unicodedata.category(c) in ("So", "Sc", "Sm", "Sk", "No", "Co", "Cn")
    )


@lru_cache(maxsize=1 << 16)
def _bad_token(token: str) -> str | None:
    """The sign of mojibake a whitespace-delimited token holding non-ASCII characters shows: ``mixed``
    (Latin and Cyrillic letters: judged over the whole text), ``bad`` (any other sign), or None."""
    token = token.strip("\"'()[]{}<>.,;:!?«»„“”‘’‚–—-…/\\*#")
    if not token:
        return None
    if _C1.search(token):
        return "bad"
    for letters in _LETTERS.findall(token):  # L-тироксин is two words joined, Mьller one garbled word
        scripts = {_script(c) for c in letters if c.isalpha()} - {""}
        if scripts == {"LATIN", "CYRILLIC"}:
            return "mixed"
        if len(scripts) > 1:
            return "bad"
    if "¤" in token:
        return "bad"  # the currency sign nobody writes: latin-9's euro read as latin-1 or cp1252
    if token[0] == "´" and token[1:2].isalpha() and not token.endswith("´"):
        return "bad"  # a word opening with an accent: latin-9's Ž read as cp1252 (´ as a quote is paired)
    run = 0
    for i, c in enumerate(token):
        if c.isalpha() and c >= "\x80" and _script(c) == "LATIN":
            run += 1
            if run >= 3 or (
                c.isupper() and 0 < i < len(token) - 1 and token[i - 1].islower() and token[i + 1].islower()
            ):
                return "bad"  # Ïàöèåíò; gehtŽs (cp1252 read as latin-9; AkdÄ is fine)
        else:
            run = 0
        if _glued_symbol(c):
            before = i > 0 and token[i - 1].isalpha()
            after = i + 1 < len(token) and token[i + 1].isalpha()
            if after or (before and c not in _SUPERSCRIPTS):
                return "bad"
    return None


def mojibake_tokens(text: str, first: bool = False) -> int:
    """How many words of ``text`` (a single-byte decode) look like mojibake (see the module's list); with
    ``first``, 1 as soon as one does.

    Words mixing Latin and Cyrillic letters count only when they are more than ``MAX_MIXED_SHARE`` of the
    words with Cyrillic letters: Russian notes hold a few (``IIА``, a Latin look-alike typed for a Cyrillic
    letter), Western text read with a Cyrillic encoding holds little else (``Mьller``)."""
    bad = mixed = 0
    for m in _NON_ASCII_TOKEN.finditer(text):
        sign = _bad_token(m.group())
        if sign == "bad":
            bad += 1
            if first:
                return 1
        elif sign == "mixed":
            mixed += 1
    if mixed and mixed > MAX_MIXED_SHARE * (mixed + len(_CYRILLIC_WORD.findall(text))):
        bad += mixed
    if not bad and _C1.search(text):
        bad = 1
    return bad


def _pairs(codec: str) -> re.Pattern[str]:
    """Two characters whose bytes in ``codec`` open a UTF-8 sequence: a lead byte, then a continuation."""

    def chars(lo: int, hi: int) -> str:
        return "".join(bytes([b]).decode(codec, "ignore") for b in range(lo, hi))

    return re.compile(f"[{re.escape(chars(0xC2, 0xF5))}][{re.escape(chars(0x80, 0xC0))}]")


_DOUBLE = tuple((codec, _pairs(codec)) for codec in ("cp1252", "latin-1", "cp1251"))


def double_encoded_at(text: str) -> int | None:
    """The offset of the first stretch of non-ASCII characters in ``text`` that is UTF-8 once encoded with a
    single-byte encoding (``Ã¼`` for ``ü``), or None."""
    found: list[int] = []
    for codec, pairs in _DOUBLE:
        seen = -1
        for m in pairs.finditer(text):
            start, end = m.start(), m.end()
            if start < seen:
                continue
            while start > 0 and text[start - 1] >= "\x80":
                start -= 1
            while end < len(text) and text[end] >= "\x80":
                end += 1
            seen = end
            try:
                original = text[start:end].encode(codec).decode("utf-8")
            except UnicodeError:
                continue
            if all(_ORIGINAL.match(c) for c in original):
                found.append(start)
                break
    return min(found) if found else None


def russian_score(text: str) -> float:
    """Mean log frequency (per cent) of the Cyrillic letters of ``text`` in Russian; -inf without any."""
    total, count = 0.0, 0
    for c, n in Counter(text.lower()).items():
        if "\u0400" <= c <= "\u04ff":
            total += n * math.log(_RUSSIAN.get(c, _RARE))
            count += n
    return total / count if count else -math.inf


def _russian_share(text: str) -> float:
    """The share of the Cyrillic letters of ``text`` that Russian uses."""
    counts = [(c in _RUSSIAN, n) for c, n in Counter(text.lower()).items() if "\u0400" <= c <= "\u04ff"]
    total = sum(n for _, n in counts)
    return sum(n for russian, n in counts if russian) / total if total else 0.0


def _has_cyrillic_word(text: str) -> bool:
    return re.search(r"[\u0400-\u04ff]{2,}", text) is not None


def is_clean(text: str) -> bool:
    """Whether ``text``, read with a single-byte encoding, shows no sign of mojibake."""
    return (
        not mojibake_tokens(text, first=True) and double_encoded_at(text) is None
    )  # the second: UTF-8 inside


def readings(data: bytes) -> list[Fit]:
    """Every candidate that reads ``data`` as clean text (a Cyrillic one must give a Cyrillic word of Russian
    letters: one that gives none explains nothing)."""
    found: list[Fit] = []
    for codec, family in CANDIDATES:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        if not is_clean(text):
            continue
        if family == "Cyrillic":
            if _has_cyrillic_word(text) and _russian_share(text) >= MIN_RUSSIAN_SHARE:
                found.append(Fit(codec, text, russian_score(text)))
        else:
            found.append(Fit(codec, text))
    return found


def candidate_fits(data: bytes) -> list[Fit]:
    """The best clean reading of ``data`` (not UTF-8) in each family, in the order of ``CANDIDATES``: the
    first Western one, the most Russian Cyrillic one; one when both give the same text."""
    found = readings(data)
    western = [f for f in found if FAMILY[f.codec] != "Cyrillic"][:1]
    cyrillic = sorted((f for f in found if FAMILY[f.codec] == "Cyrillic"), key=lambda f: -f.score)[:1]
    best = western + cyrillic
    if len(best) == 2 and best[0].text == best[1].text:
        return best[:1]
    return best


def forced_problem(data: bytes, text: str, codec: str) -> str | None:
    """Why ``text``, ``data`` decoded with the single-byte ``codec`` the user named, is mojibake; None when
    it reads as clean text. An encoding of the supported languages (the candidates and latin-1) must
    moreover give one of the clean readings, and a Cyrillic one no clearly less Russian text than another."""
    if not is_clean(text):
        return "it reads as mojibake"
    name = codecs.lookup(codec).name
    if name not in FAMILY and name != "iso8859-1":
        return None  # an encoding of other languages: only the signs above are known for it
    found = readings(data)
    if found and all(f.text != text for f in found):
        return "it reads as mojibake"
    if _has_cyrillic_word(text):
        own = russian_score(text)
        if any(FAMILY[f.codec] == "Cyrillic" and f.score > own + _MARGIN for f in found):
            return "its letters do not follow Russian (mojibake)"
    return None


def is_single_byte(codec: str) -> bool:
    """Whether ``codec`` maps each byte to one character (latin-1, cp1252, koi8-r...)."""
    name = codecs.lookup(codec).name
    if name.startswith("utf"):
        return False
    return len(b"\xc3\xa9\xe4\xb8\xad".decode(name, "replace")) == 5
