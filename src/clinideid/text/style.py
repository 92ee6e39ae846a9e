"""The letter case a region of a note is written in: the evidence capital letters can (or cannot) give.

A note typed in lower case ("lives w wife marj, marj has own health issues") or in capitals carries no
case information: a lower-case word there may be a name, and a capitalised one is no evidence of a name.
Notes mix styles (a typed header above a lower-case nursing entry), so the style is decided per block of
lines (blocks end at blank lines), falling back to the whole text for blocks too short to tell.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

import regex

CaseStyle = Literal["lower", "upper", "mixed"]

#: a block needs this many cased letters to be judged on its own
MIN_LETTERS = 40
#: at most this share of the other case still counts as one style (acronyms in lower-case notes, "pH"...)
TOLERANCE = 0.03
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n")
_UPPER = regex.compile(r"\p{Lu}+")
_LOWER = regex.compile(r"\p{Ll}+")


def case_style(text: str, start: int = 0, end: int | None = None) -> CaseStyle | None:
    """The case style of ``text[start:end]``, or None when it has fewer than ``MIN_LETTERS`` cased letters."""
    segment = text[start:end]
    upper = sum(map(len, _UPPER.findall(segment)))  # runs, not letters: far fewer matches to build
    lower = sum(map(len, _LOWER.findall(segment)))
    total = upper + lower
    if total < MIN_LETTERS:
        return None
    if upper <= TOLERANCE * total:
        return "lower"
    if lower <= TOLERANCE * total:
        return "upper"
    return "mixed"


@dataclass(frozen=True)
class CaseRegions:
    """Blocks of a text with their case style; ``style_at(offset)`` answers for any offset."""

    starts: tuple[int, ...]
    styles: tuple[CaseStyle, ...]

    def style_at(self, offset: int) -> CaseStyle:
        i = bisect.bisect_right(self.starts, offset) - 1
        return self.styles[max(i, 0)] if self.styles else "mixed"

    def uncased_at(self, offset: int) -> bool:
        """Whether the writing at ``offset`` gives no case evidence (all lower case or all capitals)."""
        return self.style_at(offset) != "mixed"


def case_regions(text: str) -> CaseRegions:
    """The case style of each block of ``text`` (linear in its length)."""
    whole = case_style(text) or "mixed"
    starts: list[int] = []
    styles: list[CaseStyle] = []
    begin = 0
    for m in [*_BLOCK_BREAK.finditer(text), None]:
        end = m.start() if m is not None else len(text)
        starts.append(begin)
        styles.append(case_style(text, begin, end) or whole)
        if m is not None:
            begin = m.end()
    return CaseRegions(tuple(starts), tuple(styles))


__all__ = ["CaseRegions", "CaseStyle", "case_regions", "case_style"]
