"""Turning the bytes of a clinical document into text, or refusing to.

One function decodes every input clinideid reads as text (plain files, JSONL, stdin): a byte-order mark
decides the Unicode encoding when there is one (UTF-8, UTF-16 or UTF-32, either byte order); otherwise the
encoding the user named is used, or, with ``auto``, one chosen per document: UTF-8 when the bytes are valid
UTF-8, else the one single-byte encoding of the supported languages that reads them as clean text (cp1252 or
latin-9 for English, German, Italian, Spanish and French; cp1251 or KOI8-R for Russian; see
``text.encodings``). Decoding that "succeeds" but yields garbage is refused, because de-identifying mojibake
lets the clear text through once the output is decoded back:

- NUL or many other control characters: a binary file, or a wrong UTF-16/UTF-32 guess;
- bytes that are valid UTF-8 with non-ASCII characters read with a single-byte encoding (``latin-1``,
  ``cp1252``…): every accented letter would be split in two;
- a single-byte decode whose words show mojibake (mixed scripts, runs of accented letters, symbols inside
  words, C1 controls), or a Cyrillic decode far less Russian than another Cyrillic encoding's: the error
  says which encoding would fit;
- UTF-16/UTF-32 without a byte-order mark whose text is mostly CJK, unassigned or private-use characters:
  what 8-bit text looks like when read two or four bytes at a time;
- unpaired surrogates (possible only through escapes such as JSON's ``"\\ud800"``).

Messages name the document and the position, never its content.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass

from clinideid.errors import ConfigError, InputError
from clinideid.text.encodings import CANDIDATES, candidate_fits, describe, forced_problem, is_single_byte

#: ``--encoding auto``: UTF-8, or the single-byte encoding that fits, chosen per document
AUTO = "auto"

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE, whose BOM is its prefix
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_WIDE = ("utf-16", "utf-32")
_ALLOWED_CONTROLS = frozenset("\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: share of characters that may be controls (other than line and field separators) before a text is binary
MAX_CONTROL_SHARE = 0.005
#: share of letters from scripts no supported language uses before a wide-encoding decode is mojibake
MAX_FOREIGN_SHARE = 0.3


@dataclass(frozen=True)
class Decoded:
    """A document's text and the encoding it was decoded with (recorded in its report)."""

    text: str
    encoding: str


def check_encoding(encoding: str) -> str:
    """The canonical name of a text encoding (or ``auto``), or ``ConfigError`` (a run-wide problem, found
    up front)."""
    if isinstance(encoding, str) and encoding.lower() == AUTO:
        return AUTO
    try:
        info = codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise ConfigError(
            f"unknown encoding {encoding!r}; use auto or a Python codec name such as utf-8, cp1252, cp1251 or "
            "utf-16"
        ) from None
    if not getattr(info, "_is_text_encoding", True):
        raise ConfigError(f"{encoding!r} is not a text encoding (it maps bytes to bytes)")
    return info.name


def sniff_bom(data: bytes) -> str | None:
    """The encoding a byte-order mark at the start of ``data`` announces, if any."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    return None


def decode_text(data: bytes, name: str, encoding: str = "utf-8") -> str:
    """The text of ``data`` (``name`` locates it in messages); ``InputError`` when it is not sound text."""
    return decode_document(data, name, encoding).text


def decode_document(data: bytes, name: str, encoding: str = "utf-8") -> Decoded:
    """The text of ``data`` and the encoding it was read with; ``InputError`` when it is not sound text."""
    declared = check_encoding(encoding)
    bom = sniff_bom(data)
    if bom is None and declared == AUTO:
        return _decode_auto(data, name)
    codec = bom or declared
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: not valid {codec} (first bad byte at offset {exc.start}); {_hint(data)}"
        ) from None
    check_text(text, name)
    if bom is None:
        _check_not_mojibake(data, text, name, codec)
    return Decoded(text, codec)


def _decode_auto(data: bytes, name: str) -> Decoded:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        check_text(data.decode("latin-1"), name)  # a binary file is one whatever the encoding
        fits = candidate_fits(data)
        if len(fits) != 1:
            raise InputError(
                f"{name}: not valid UTF-8 (first bad byte at offset {exc.start}); {_hint(data)}"
            ) from None
        check_text(fits[0].text, name)
        return Decoded(fits[0].text, fits[0].codec)
    check_text(text, name)
    return Decoded(text, "utf-8")


def _hint(data: bytes) -> str:
    """Which encodings would read ``data`` as clean text, phrased as what to do."""
    fits = candidate_fits(data)
    if len(fits) == 1:
        codec = fits[0].codec
        return (
            f"this looks like {describe(codec)} text: pass --encoding {codec} (or --encoding auto, which "
            "chooses per document), or convert it to UTF-8"
        )
    if fits:
        both = " or as ".join(describe(f.codec) for f in fits)
        return f"it reads as clean text as {both}: pass the right --encoding, or convert it to UTF-8"
    tried = ", ".join(["utf-8", *(codec for codec, _ in CANDIDATES)])
    return f"none of {tried} reads it as clean text: convert it to UTF-8"


def check_decoded(text: str, name: str, codec: str) -> None:
    """``InputError`` when ``text``, decoded with the single-byte ``codec`` by a reader of its own (a corpus
    codec, a CSV file), reads as mojibake; other codecs are not checked here."""
    if not text.isascii() and is_single_byte(codec):
        _check_single_byte(text.encode(codec), text, name, codec)


def check_text(text: str, name: str) -> None:
    """``InputError`` for text no clinical note holds: NULs, binary control bytes, unpaired surrogates."""
    nul = text.find("\x00")
    if nul >= 0:
        raise InputError(
            f"{name}: holds NUL characters (offset {nul}): a binary file, or the wrong --encoding"
        )
    if not text:
        return
    sample = text[:65536]
    controls = sum(1 for c in sample if c < " " and c not in _ALLOWED_CONTROLS)
    if controls > 2 and controls > MAX_CONTROL_SHARE * len(sample):
        raise InputError(f"{name}: {controls} control characters in its start: looks like a binary file")
    surrogate = _SURROGATE.search(text)
    if surrogate:
        raise InputError(
            f"{name}: holds an unpaired surrogate (offset {surrogate.start()}): not valid Unicode text"
        )


def _check_not_mojibake(data: bytes, text: str, name: str, codec: str) -> None:
    if codec.startswith(_WIDE):
        letters = [c for c in text[:65536] if not c.isspace()]
        foreign = sum(1 for c in letters if _foreign(c))
        if letters and foreign > MAX_FOREIGN_SHARE * len(letters):
            raise InputError(
                f"{name}: decoded as {codec} it is mostly characters of unrelated scripts (mojibake): "
                "the file is probably not in that encoding; check --encoding"
            )
        return
    if not data.isascii() and is_single_byte(codec):
        _check_single_byte(data, text, name, codec)


def _check_single_byte(data: bytes, text: str, name: str, codec: str) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        raise InputError(
            f"{name}: its bytes are valid UTF-8 with non-ASCII characters, which {codec} would garble "
            "(mojibake); pass --encoding auto or utf-8"
        )
    problem = forced_problem(data, text, codec)
    if problem is not None:
        raise InputError(f"{name}: decoded as {codec} {problem}; {_hint(data)}")


def _foreign(c: str) -> bool:
    """Characters that none of the supported languages writes: CJK, Hangul, unassigned, private use."""
    cat = unicodedata.category(c)
    if cat in ("Cn", "Co", "Cs"):
        return True
    cp = ord(c)
    return 0x2E80 <= cp <= 0xD7FF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x3FFFF
