"""An offset-preserving tokenizer for clinical text.

Tokens are maximal runs of letters (with combining marks), maximal runs of digits, or single other
non-space characters. So punctuation is split off, and digit/letter boundaries split too ("12mg" -> "12",
"mg"; "Dr.Smith" -> "Dr", ".", "Smith"), which lets PHI boundaries fall between tokens even in glued,
badly formatted notes. Every token keeps its character offsets: ``text[t.start:t.end] == t.text``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import regex

_TOKEN = regex.compile(r"\p{L}[\p{L}\p{M}]*|\p{N}+|[^\s\x1c-\x1f]", regex.V1)


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    start: int
    end: int


def tokenize(text: str, offset: int = 0) -> list[Token]:
    """Tokens of ``text``; ``offset`` is added to every position (for tokenizing a slice)."""
    return [Token(m.group(), m.start() + offset, m.end() + offset) for m in _TOKEN.finditer(text)]


def tokens_in_span(tokens: Sequence[Token], start: int, end: int) -> tuple[int, int]:
    """Index range ``[i, j)`` of the tokens overlapping characters ``[start, end)``.

    ``tokens`` must be sorted by position (as ``tokenize`` returns them).
    """
    ends = [t.end for t in tokens]
    i = bisect.bisect_right(ends, start)
    j = i
    while j < len(tokens) and tokens[j].start < end:
        j += 1
    return i, j


def token_starts(tokens: Sequence[Token]) -> list[int]:
    return [t.start for t in tokens]
