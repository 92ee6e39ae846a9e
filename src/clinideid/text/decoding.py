"""Turning the bytes of a clinical document into text, or refusing to.

One function decodes every input clinideid reads as text (plain files, JSONL, corpus codecs): a byte-order
mark decides the Unicode encoding when there is one (UTF-8, UTF-16 or UTF-32, either byte order); otherwise
the encoding the user named is used. Decoding that "succeeds" but yields garbage is refused, because
de-identifying mojibake lets the clear text through once the output is decoded back:

- NUL or many other control characters: a binary file, or a wrong UTF-16/UTF-32 guess;
- bytes that are valid UTF-8 with non-ASCII characters read with a single-byte encoding (``latin-1``,
  ``cp1252``…): every accented letter would be split in two;
- UTF-16/UTF-32 without a byte-order mark whose text is mostly CJK, unassigned or private-use characters:
  what 8-bit text looks like when read two or four bytes at a time;
- unpaired surrogates (possible only through escapes such as JSON's ``"\\ud800"``).

Messages name the document and the position, never its content.
"""

from __future__ import annotations

import codecs
import re
import unicodedata

from clinideid.errors import ConfigError, InputError

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


def check_encoding(encoding: str) -> str:
    """The canonical name of a text encoding, or ``ConfigError`` (a run-wide problem, found up front)."""
    try:
        info = codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise ConfigError(
            f"unknown encoding {encoding!r}; use a Python codec name such as utf-8, latin-1, cp1252 or utf-16"
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
    declared = check_encoding(encoding)
    bom = sniff_bom(data)
    codec = bom or ("utf-8" if declared == "utf-8" else declared)
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: not valid {codec} (first bad byte at offset {exc.start}); pass --encoding "
            "(e.g. latin-1 or cp1252) if the file uses another encoding"
        ) from None
    check_text(text, name)
    if bom is None:
        _check_not_mojibake(data, text, name, codec)
    return text


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
    if codec == "utf-8" or data.isascii():
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return
    raise InputError(
        f"{name}: its bytes are valid UTF-8 with non-ASCII characters, which {codec} would garble "
        "(mojibake); drop --encoding or pass --encoding utf-8"
    )


def _foreign(c: str) -> bool:
    """Characters that none of the supported languages writes: CJK, Hangul, unassigned, private use."""
    cat = unicodedata.category(c)
    if cat in ("Cn", "Co", "Cs"):
        return True
    cp = ord(c)
    return 0x2E80 <= cp <= 0xD7FF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x3FFFF
