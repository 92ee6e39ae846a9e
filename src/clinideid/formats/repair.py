"""Finding and fixing span offsets that do not fit their text.

Corpora in the wild carry offset problems: spans whose recorded text is not what the offsets cover
(an editor normalised line endings, a converter counted bytes), spans with a stray space or comma at an
edge, and spans that cut a word (i2b2 has "Smith2011" annotated partially). ``check_spans`` finds them
without changing anything; ``repair_spans`` fixes what it safely can:

- a misaligned span is moved to the nearest occurrence of its recorded text (whitespace may differ),
  within ``max_shift`` characters;
- leading/trailing whitespace is trimmed; edge punctuation only when asked (``strip_punctuation``),
  because "(555) 123-4567" or "Jr." legitimately start or end with punctuation;
- spans are snapped to token boundaries only when asked (``align="expand"`` or ``"shrink"``).

Problems name offsets and labels, never the text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from clinideid.document import Span
from clinideid.errors import ConfigError
from clinideid.text import tokenize

ProblemKind = Literal["out_of_range", "text_mismatch", "edge_whitespace", "edge_punctuation", "partial_token"]
Align = Literal["expand", "shrink"]

#: kinds that make a span unusable: it cannot be placed on the text as recorded
SEVERE_KINDS = frozenset({"out_of_range", "text_mismatch"})

# Punctuation that should not start/end a PHI mention. A trailing "." is allowed ("Jr.", "Dr."), and
# brackets only count when unbalanced inside the span ("(555) 123-4567" is fine, "Smith)" is not).
_LEADING_PUNCT = set(",;:!?.\"'«»“”‘’")
_TRAILING_PUNCT = set(",;:!?\"'«»“”‘’")
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
_WS_RUN = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem with one span: ``index`` is the span's position in the list that was checked."""

    kind: ProblemKind
    index: int
    start: int
    end: int
    label: str
    detail: str

    @property
    def severe(self) -> bool:
        return self.kind in SEVERE_KINDS

    def describe(self) -> str:
        return f"span {self.start}-{self.end} ({self.label}): {self.detail}"


@dataclass
class RepairResult:
    """``spans`` (same length and order as the input), the problems fixed and those left."""

    spans: list[Span]
    fixed: list[Problem] = field(default_factory=list)
    unfixed: list[Problem] = field(default_factory=list)


def same_text(recorded: str, actual: str) -> bool:
    """Whether ``recorded`` is ``actual`` up to whitespace.

    Formats flatten line breaks in their recorded span text (XML attributes, ``.ann`` and ``.phrase``
    lines), and some drop edge whitespace, so runs of whitespace compare equal and edges are ignored.
    """
    return recorded == actual or _WS_RUN.sub(" ", recorded).strip() == _WS_RUN.sub(" ", actual).strip()


class _TokenIndex:
    """Which token (if any) strictly contains a character position."""

    def __init__(self, text: str) -> None:
        toks = tokenize(text)
        self.starts = [t.start for t in toks]
        self.ends = [t.end for t in toks]

    def containing(self, pos: int) -> tuple[int, int] | None:
        """The token ``(start, end)`` with ``start < pos < end``, if any."""
        i = bisect.bisect_right(self.starts, pos) - 1
        if i >= 0 and self.starts[i] < pos < self.ends[i]:
            return self.starts[i], self.ends[i]
        return None


def _edge_punctuation(covered: str) -> str | None:
    if not covered:
        return None
    first, last = covered[0], covered[-1]
    if first in _LEADING_PUNCT:
        return "leading"
    if last in _TRAILING_PUNCT:
        return "trailing"
    if first in _OPENERS and covered.count(first) > covered.count(_OPENERS[first]):
        return "leading"
    if first in _CLOSERS:
        return "leading"
    if last in _CLOSERS and covered.count(last) > covered.count(_CLOSERS[last]):
        return "trailing"
    if last in _OPENERS:
        return "trailing"
    return None


def _check_one(text: str, i: int, s: Span, index: _TokenIndex | None) -> list[Problem]:
    out: list[Problem] = []

    def add(kind: ProblemKind, detail: str) -> None:
        out.append(Problem(kind, i, s.start, s.end, s.label, detail))

    n = len(text)
    if s.end > n:
        add("out_of_range", f"ends beyond the text length {n}")
        return out
    if s.text is not None and not same_text(s.text, s.covered_text(text)):
        add("text_mismatch", "recorded text does not match the document at these offsets")
        return out
    covered = text[s.start : s.end]
    if covered[0].isspace() or covered[-1].isspace():
        add("edge_whitespace", "starts or ends with whitespace")
    else:
        edge = _edge_punctuation(covered)
        if edge:
            add("edge_punctuation", f"{edge} punctuation")
    if index is not None:
        cut = [p for p in (s.start, s.end) if index.containing(p)]
        if cut:
            add("partial_token", f"boundary at {', '.join(map(str, cut))} cuts a word")
    return out


def check_spans(text: str, spans: Sequence[Span], *, tokens: bool = True) -> list[Problem]:
    """Every problem of ``spans`` against ``text``, in span order; at most one severe problem per span.

    ``tokens``: also report spans whose boundaries fall inside a token of ``clinideid.text.tokenize``.
    """
    index = _TokenIndex(text) if tokens and spans else None
    return [p for i, s in enumerate(spans) for p in _check_one(text, i, s, index)]


def _relocate(text: str, span: Span, max_shift: int) -> tuple[int, int] | None:
    """Offsets of the occurrence of ``span.text`` nearest to ``span.start`` (whitespace may differ)."""
    if span.text is None or span.is_discontinuous or not span.text.strip():
        return None
    words = span.text.split()
    pattern = r"\s+".join(re.escape(w) for w in words)
    if span.text[0].isspace():
        pattern = r"\s+" + pattern
    if span.text[-1].isspace():
        pattern += r"\s+"
    lo = max(0, span.start - max_shift)
    hi = min(len(text), span.end + max_shift + len(span.text))
    best: tuple[int, int] | None = None
    for m in re.finditer(pattern, text[lo:hi]):
        a, b = m.start() + lo, m.end() + lo
        if abs(a - span.start) > max_shift:
            continue
        if best is None or abs(a - span.start) < abs(best[0] - span.start):
            best = (a, b)
    return best


def _strip(text: str, start: int, end: int, punctuation: bool) -> tuple[int, int]:
    while start < end:
        covered = text[start:end]
        if covered[0].isspace():
            start += 1
        elif covered[-1].isspace():
            end -= 1
        elif punctuation and (edge := _edge_punctuation(covered)):
            if edge == "leading":
                start += 1
            else:
                end -= 1
        else:
            break
    return start, end


def _move(span: Span, text: str, start: int, end: int) -> Span:
    """``span`` with new outer bounds (a discontinuous span keeps its inner fragment edges)."""
    if span.is_discontinuous:
        pieces = list(span.fragments)
        pieces[0] = (start, pieces[0][1])
        pieces[-1] = (pieces[-1][0], end)
        pieces = [(a, b) for a, b in pieces if a < b]
        new = span.with_(start=pieces[0][0], end=pieces[-1][1], fragments=tuple(pieces))
    else:
        new = span.with_(start=start, end=end)
    if span.text is not None:
        new = new.with_(text=new.covered_text(text))
    return new


def repair_spans(
    text: str,
    spans: Sequence[Span],
    *,
    max_shift: int = 500,
    strip_whitespace: bool = True,
    strip_punctuation: bool = False,
    align: Align | None = None,
) -> RepairResult:
    """Fix what ``check_spans`` finds, where that is safe; see the module docstring for the rules."""
    if align not in (None, "expand", "shrink"):
        raise ConfigError(f"unknown token alignment {align!r}; choose 'expand' or 'shrink'")
    index = _TokenIndex(text) if align else None
    result = RepairResult(spans=[])
    for i, s in enumerate(spans):
        problems = _check_one(text, i, s, index)
        current = s
        for p in problems:
            if p.kind not in SEVERE_KINDS:
                continue
            where = _relocate(text, current, max_shift)
            if where is None:
                result.unfixed.append(p)
            else:
                current = _move(current, text, *where)
                result.fixed.append(
                    Problem(p.kind, i, s.start, s.end, s.label, f"{p.detail}; moved to {where[0]}-{where[1]}")
                )
        if any(p.severe for p in problems) and current is s:
            result.spans.append(s)
            continue
        start, end = current.start, current.end
        if strip_whitespace or strip_punctuation:
            start, end = _strip(text, start, end, strip_punctuation)
        if index is not None and start < end:
            inner_start, inner_end = index.containing(start), index.containing(end)
            if align == "expand":
                start = inner_start[0] if inner_start else start
                end = inner_end[1] if inner_end else end
            else:
                start = inner_start[1] if inner_start else start
                end = inner_end[0] if inner_end else end
        for p in problems:
            if p.severe:
                continue
            handled = {
                "edge_whitespace": strip_whitespace,
                "edge_punctuation": strip_punctuation,
                "partial_token": align is not None,
            }[p.kind]
            if not handled or start >= end or (start, end) == (current.start, current.end):
                result.unfixed.append(p)
            else:
                result.fixed.append(
                    Problem(p.kind, i, p.start, p.end, p.label, f"{p.detail}; now {start}-{end}")
                )
        if start < end and (start, end) != (current.start, current.end):
            current = _move(current, text, start, end)
        result.spans.append(current)
    return result
