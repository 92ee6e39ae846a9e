"""The text the rules see: typographic variants of hyphens, spaces and line breaks made plain, offsets kept.

Rule packs are written for ``-``, `` `` and ``\\n``. Real exports also hold the non-breaking hyphen (U+2011),
the minus sign (U+2212), figure dashes, no-break and thin spaces (U+00A0, U+202F, U+2009), line separators
(U+2028)... An SSN written ``123‑45‑6789`` with non-breaking hyphens, or a name after ``Patient:\\u00a0``, must
be found exactly like its plain spelling. So the engine runs every rule on a *normalised copy* of the text:
each such character is replaced by its plain form **one for one**, so the copy has the same length and every
offset found in it is an offset in the original text (spans keep pointing at the original characters; only
matching sees the plain ones). Everything the engine reads (patterns, word lists, allow-list, context words,
validators, propagation, merging) reads the copy; nothing else needs an offset map.

An en dash (U+2013) becomes a hyphen only between two letters or digits (``12–16``, ``123–45–6789``): between
spaces it is punctuation ("Klinik I – Kardiologie") and stays as it is, as do em dashes.

OCR confuses letters and digits that look alike: "М0сква", "3ахарова", "Г6УЗ", "8-915-7З6-41-О2", "J0hn".
The copy also reads such a character as what its neighbours say it is (``fold_ocr_confusions``): a digit
inside a word of letters becomes the look-alike letter of that word's script, a look-alike letter inside a
run of digits becomes the digit. Only characters with letters (or digits) on the sides that make the reading
unambiguous are changed, so "B12", "SpO2", "4at", "1st", "pT2N0M0" or a codice fiscale stay as they are.
"""

from __future__ import annotations

import re

import regex

#: characters replaced everywhere (one character each, so offsets never move)
_TABLE = {
    # hyphens and minus signs -> "-"
    0x2010: "-",  # hyphen
    0x2011: "-",  # non-breaking hyphen
    0x2012: "-",  # figure dash
    0x2212: "-",  # minus sign
    0x2043: "-",  # hyphen bullet
    0xFE63: "-",  # small hyphen-minus
    0xFF0D: "-",  # fullwidth hyphen-minus
    # spaces -> " "
    0x00A0: " ",  # no-break space
    0x1680: " ",  # ogham space mark
    **{cp: " " for cp in range(0x2000, 0x200B)},  # en quad ... hair space (incl. figure and thin space)
    0x202F: " ",  # narrow no-break space
    0x205F: " ",  # medium mathematical space
    0x3000: " ",  # ideographic space
    # line and paragraph separators -> "\n"
    0x0085: "\n",  # next line
    0x2028: "\n",  # line separator
    0x2029: "\n",  # paragraph separator
    # slashes and colons seen in dates and form keys
    0x2044: "/",  # fraction slash
    0x2215: "/",  # division slash
    0xFF0F: "/",  # fullwidth solidus
    0xFF1A: ":",  # fullwidth colon
    0xFE55: ":",  # small colon
}
_CHARS = "".join(chr(cp) for cp in _TABLE)
_NEEDS_TABLE = re.compile(f"[{re.escape(_CHARS)}]")
_EN_DASH_INSIDE = re.compile(r"(?<=[^\W_])\u2013(?=[^\W_])")


_CYR = "а-яёА-ЯЁ"
_CYR_DIGIT_LETTER = {"0": "оО", "3": "зЗ", "6": "бБ"}  # (lower, upper) look-alikes
_LAT_DIGIT_LETTER = {"0": "oO", "1": "lI"}
_LETTER_DIGIT = {"O": "0", "o": "0", "О": "0", "о": "0", "З": "3", "з": "3"}
#: one pattern for every case, each alternative a named group saying which fold applies
_OCR = regex.compile(
    rf"(?P<cyr_in>(?<=[{_CYR}])[036](?=[{_CYR}]))"  # "Бел0ва", "Г6УЗ"
    rf"|(?P<cyr_start>(?<![\p{{L}}\p{{N}}])[03](?=[{_CYR}]{{2}}[{_CYR}.]))"  # "3ахарова", "0бл."
    rf"|(?P<cyr_end>(?<=[{_CYR}]{{3}})0(?![\p{{L}}\p{{N}}]))"  # "Митин0"
    r"|(?P<lat_in>(?<=[A-Za-z]{2}|(?<![A-Za-z])[A-Z])[01](?=[a-z]{2})|(?<=[a-z])[01](?=[a-z]))"  # "J0hn", "Sm1th"
    r"|(?P<digit>(?<=\d(?:[-./ ]?))[OoОоЗз](?=(?:[-./ ]?)\d)"  # "7З6", "41-О2"
    r"(?<!\p{L}\d?[OoОоЗз])(?![OoОоЗз]\d?\p{L}))"
)


def _fold(m: regex.Match) -> str:
    char = m.group()
    kind = m.lastgroup
    if kind == "digit":
        return _LETTER_DIGIT[char]
    text, i = m.string, m.start()
    if kind == "cyr_start":
        return _CYR_DIGIT_LETTER[char][1]
    table = _CYR_DIGIT_LETTER if kind.startswith("cyr") else _LAT_DIGIT_LETTER
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    upper = before.isupper() and (not after.isalpha() or after.isupper())
    return table[char][1 if upper else 0]


def fold_ocr_confusions(text: str) -> str:
    """``text`` with OCR letter/digit confusions read as their neighbours say (same length)."""
    return _OCR.sub(_fold, text)


_HAS_MIXED = regex.compile(r"\p{L}\d|\d\p{L}|\d[-./ ][OoОоЗз]\d")


def normalize_for_matching(text: str) -> str:
    """``text`` with typographic hyphens, spaces and line separators replaced by plain ones, and OCR
    letter/digit confusions read as letters or digits; same length."""
    if not text.isascii():
        if _NEEDS_TABLE.search(text) is not None:
            text = text.translate(_TABLE)
        if "\u2013" in text:
            text = _EN_DASH_INSIDE.sub("-", text)
    if _HAS_MIXED.search(text) is not None:
        text = fold_ocr_confusions(text)
    return text


__all__ = ["fold_ocr_confusions", "normalize_for_matching"]
