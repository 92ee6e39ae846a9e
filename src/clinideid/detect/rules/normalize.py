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
"""

from __future__ import annotations

import re

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


def normalize_for_matching(text: str) -> str:
    """``text`` with typographic hyphens, spaces and line separators replaced by plain ones, same length."""
    if text.isascii():
        return text
    if _NEEDS_TABLE.search(text) is not None:
        text = text.translate(_TABLE)
    if "\u2013" in text:
        text = _EN_DASH_INSIDE.sub("-", text)
    return text


__all__ = ["normalize_for_matching"]
