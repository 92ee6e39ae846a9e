"""Invisible characters: what detection must not see, and the offsets back to the text that holds them.

A name can be split by a character nobody sees: ``Jo\\u200bhn`` (zero-width space), ``Otti\\u2060lie``
(word joiner), ``Vander\\u00adsloot`` (soft hyphen). A reader sees one word; a detector that reads the raw
text sees two and keeps half of the name. So the pipeline hands its detectors the *visible* text, with every
such character removed (``strip_invisible``), and maps what they find back to the original text
(``OffsetMap``).

What is removed (``INVISIBLE``): the Unicode default-ignorable code points and the other format (``Cf``)
characters, which change nothing in how a word reads — zero-width space, non-joiner and joiner
(U+200B-U+200D), word joiner and invisible operators (U+2060-U+2064), soft hyphen (U+00AD), the BOM or
zero-width no-break space inside text (U+FEFF), bidi marks, embeddings, overrides and isolates (U+061C,
U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), the Mongolian vowel separator and free variation selectors,
variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF), the combining grapheme joiner, tag characters
(U+E0000-U+E007F), interlinear annotation marks. Not removed: the prepended concatenation marks (Arabic
number signs and the like, which are visible) and the Hangul fillers (letters that show as a blank).
Look-alike spaces (no-break, narrow no-break, thin) are not removed either: they separate words for every
detector already (the tokenizer counts them as spaces, the rules read them as a space), and removing them
would join two words.

Offsets: a span ``[s, e)`` found in the visible text maps to ``[start(s), end(e))`` in the original, from the
original position of its first visible character to just after its last one. So the span covers every
invisible character *inside* it (a replacement of ``Jo\\u200bhn`` takes the whole of it: no fragment of the
name survives around the hidden character) and none at its edges.

The output keeps the invisible characters that lie outside replacements: the de-identified text differs
from the input only where a span was replaced, exactly as the report says, so DOCX and PDF outputs built
from the same replacements match the text output, and nothing visible is lost. An invisible character
alone identifies no one; stripping them everywhere would need extra edits, reported and mapped into every
output format, for no gain in what is detected. (Text *encoded* in invisible characters, such as ASCII
written in tag characters, is not decoded: it is kept where it lies outside a replacement.)

A text without any such character (every ASCII text, and most others) takes the fast path: one scan,
no copy, no map (``strip_invisible`` returns the same string object and ``None``). Otherwise the cost is
linear in the length of the text, and mapping a position is a binary search over the removed runs.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import regex

#: one run of invisible characters: default-ignorable or format characters, but no letter (Hangul fillers)
#: and no prepended concatenation mark (visible signs such as U+0600)
INVISIBLE = regex.compile(
    r"[[\p{Default_Ignorable_Code_Point}\p{Cf}]--[\p{Prepended_Concatenation_Mark}\p{L}]]+", regex.V1
)


@dataclass(frozen=True, slots=True)
class OffsetMap:
    """Positions in a visible text (``strip_invisible``) mapped to positions in its original.

    ``at[k]`` is the visible position right before which the ``k``-th run of removed characters stood,
    ``removed[k]`` the number of characters removed up to and including that run (both non-decreasing).
    """

    at: tuple[int, ...]
    removed: tuple[int, ...]

    def _shift(self, pos: int) -> int:
        """Characters removed before the visible character at ``pos`` (the runs standing right before it
        included)."""
        k = bisect.bisect_right(self.at, pos)
        return self.removed[k - 1] if k else 0

    def start(self, pos: int) -> int:
        """The original position of the visible character at ``pos`` (the start of a span)."""
        return pos + self._shift(pos)

    def end(self, pos: int) -> int:
        """The original position just after the visible character at ``pos - 1`` (the end of a span;
        ``pos`` must be positive)."""
        return pos + self._shift(pos - 1)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original offsets of the visible span ``[start, end)`` (non-empty): from its first visible
        character to just after its last, over every invisible character in between."""
        return self.start(start), self.end(end)


def strip_invisible(text: str) -> tuple[str, OffsetMap | None]:
    """``text`` without invisible characters, and the map of its offsets back to ``text``.

    Fast path: a text without any returns itself (the same object) and ``None``.
    """
    if text.isascii():
        return text, None
    first = INVISIBLE.search(text)
    if first is None:
        return text, None
    parts: list[str] = []
    at: list[int] = []
    removed: list[int] = []
    cursor = 0
    total = 0
    for m in INVISIBLE.finditer(text, first.start()):
        s, e = m.span()
        parts.append(text[cursor:s])
        total += e - s
        at.append(e - total)  # visible position of the character after the run
        removed.append(total)
        cursor = e
    parts.append(text[cursor:])
    return "".join(parts), OffsetMap(tuple(at), tuple(removed))


def visible_text(text: str) -> str:
    """``text`` as a reader sees it, without invisible characters (``text`` itself when it is ASCII)."""
    return text if text.isascii() else INVISIBLE.sub("", text)


__all__ = ["INVISIBLE", "OffsetMap", "strip_invisible", "visible_text"]
