"""Matching gold and system spans of one document, one function per evaluation mode.

Every function returns ``{label: Counts}`` for one document. Following i2b2 2014 and MEDDOCAN, the
annotations of a document are *sets*: a span repeated with the same offsets and label counts once.

- ``strict``: same offsets and same label (MEDDOCAN subtrack 1, i2b2 "strict").
- ``relaxed``: overlapping spans with the same label; each gold and each system span is matched at most
  once, greedily by largest character overlap (ties: reading order), so the result is deterministic.
- ``span``: same offsets, label ignored (MEDDOCAN subtrack 2 "strict"); counted under the label ``PHI``.
- ``span_merged``: MEDDOCAN subtrack 2 "merged": spans separated only by non-alphanumeric characters are
  merged first (see ``merged_counts``). As in the official script, its TP counts strict and merged hits
  together, so TP can exceed the number of gold spans (gold vs gold still scores 1).
- ``token``: tokens from ``clinideid.text.tokenize``; a token carries the label of every span that overlaps
  it; per label, a token is TP when both sides give it the label, FP when only the system does, FN when
  only the gold does.
- ``token_binary``: the same over "is this token PHI at all", labels ignored.

Offsets of discontinuous spans compare fragment by fragment (``Span.pieces``); ``span_merged`` works on
each span's outer range, as the official script does with BRAT start/end.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Sequence

from clinideid.document import Span, sort_spans
from clinideid.evaluate.counts import Counts
from clinideid.labels import BINARY_LABEL
from clinideid.text import Token, tokenize

MODES: tuple[str, ...] = ("strict", "relaxed", "token", "token_binary", "span", "span_merged")

Key = tuple[tuple[tuple[int, int], ...], str]


def unique_spans(spans: Iterable[Span]) -> list[Span]:
    """``spans`` without repeats of the same offsets and label, in reading order."""
    seen: set[Key] = set()
    out: list[Span] = []
    for s in sort_spans(spans):
        k = (s.pieces, s.label)
        if k not in seen:
            seen.add(k)
            out.append(s)
    return out


def _tally(tp: Iterable[str], fp: Iterable[str], fn: Iterable[str]) -> dict[str, Counts]:
    acc: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for i, labels in enumerate((tp, fp, fn)):
        for label in labels:
            acc[label][i] += 1
    return {label: Counts(*c) for label, c in acc.items()}


def strict_counts(gold: Sequence[Span], system: Sequence[Span]) -> dict[str, Counts]:
    g = {(s.pieces, s.label) for s in gold}
    p = {(s.pieces, s.label) for s in system}
    return _tally((k[1] for k in g & p), (k[1] for k in p - g), (k[1] for k in g - p))


def span_counts(gold: Sequence[Span], system: Sequence[Span]) -> dict[str, Counts]:
    g = {s.pieces for s in gold}
    p = {s.pieces for s in system}
    return {BINARY_LABEL: Counts(len(g & p), len(p - g), len(g - p))} if g or p else {}


# ---- MEDDOCAN subtrack 2 "merged" --------------------------------------------------------------------------


def merge_adjacent(ranges: Iterable[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Ranges joined when only non-alphanumeric characters (or nothing) lie between them.

    As in MEDDOCAN's evaluation script, ranges are visited in order and each one is merged into the
    previous (merged) range when ``text`` between them holds no alphanumeric character; overlapping
    ranges merge too. Unlike the script, a merged range keeps the larger end, so a nested range can
    never shorten it.
    """
    merged: list[tuple[int, int]] = []
    for start, end in sorted(set(ranges)):
        if merged:
            m_start, m_end = merged[-1]
            if not any(ch.isalnum() for ch in text[m_end:start]):
                merged[-1] = (m_start, max(m_end, end))
                continue
        merged.append((start, end))
    return merged


def _contained(r: tuple[int, int], containers: Sequence[tuple[int, int]]) -> bool:
    return any(a <= r[0] and r[1] <= b for a, b in containers)


def merged_counts(gold: Sequence[Span], system: Sequence[Span], text: str) -> dict[str, Counts]:
    """MEDDOCAN subtrack 2 "merged", as its official script defines it.

    TP is the number of ranges found in both the strict range sets or in both the merged range sets
    (union of the two intersections); FP (FN) counts the system (gold) strict ranges that are not in the
    gold (system) strict set and not contained in any TP range.
    """
    g = {(s.start, s.end) for s in gold}
    p = {(s.start, s.end) for s in system}
    if not g and not p:
        return {}
    g_merged = set(merge_adjacent(g, text))
    p_merged = set(merge_adjacent(p, text))
    hits = sorted((g & p) | (g_merged & p_merged))
    fp = sum(1 for r in p - g if not _contained(r, hits))
    fn = sum(1 for r in g - p if not _contained(r, hits))
    return {BINARY_LABEL: Counts(len(hits), fp, fn)}


# ---- relaxed (overlap) matching ----------------------------------------------------------------------------


def overlap_size(a: Span, b: Span) -> int:
    """Number of characters ``a`` and ``b`` share (fragment-aware)."""
    total = 0
    for a0, a1 in a.pieces:
        for b0, b1 in b.pieces:
            total += max(0, min(a1, b1) - max(a0, b0))
    return total


def greedy_overlap_matches(
    gold: Sequence[Span], system: Sequence[Span], *, same_label: bool
) -> tuple[list[tuple[Span, Span]], list[Span], list[Span]]:
    """One-to-one matching of overlapping spans, largest overlap first.

    With ``same_label`` only spans with equal labels may match; without it, any overlapping spans may,
    and at equal overlap a pair with equal labels is preferred. Remaining ties go to reading order.
    Returns (matched pairs, unmatched gold, unmatched system); inputs are de-duplicated first.
    """
    gold = unique_spans(gold)
    system = unique_spans(system)
    starts = [s.start for s in system]  # system is in reading order, so sorted by start
    candidates: list[tuple[int, int, int, int]] = []
    for gi, g in enumerate(gold):
        for si in range(bisect.bisect_left(starts, g.end)):
            s = system[si]
            if s.end <= g.start or (same_label and s.label != g.label):
                continue
            size = overlap_size(g, s)
            if size > 0:
                candidates.append((-size, int(s.label != g.label), gi, si))
    candidates.sort()
    used_g: set[int] = set()
    used_s: set[int] = set()
    pairs: list[tuple[Span, Span]] = []
    for _, _, gi, si in candidates:
        if gi in used_g or si in used_s:
            continue
        used_g.add(gi)
        used_s.add(si)
        pairs.append((gold[gi], system[si]))
    missed = [g for i, g in enumerate(gold) if i not in used_g]
    spurious = [s for i, s in enumerate(system) if i not in used_s]
    return pairs, missed, spurious


def relaxed_counts(gold: Sequence[Span], system: Sequence[Span]) -> dict[str, Counts]:
    pairs, missed, spurious = greedy_overlap_matches(gold, system, same_label=True)
    return _tally((g.label for g, _ in pairs), (s.label for s in spurious), (g.label for g in missed))


# ---- token level -------------------------------------------------------------------------------------------


class TokenIndex:
    """The tokens of a text with fast lookup of the tokens a character range overlaps."""

    def __init__(self, text: str) -> None:
        self.tokens: list[Token] = tokenize(text)
        self._starts = [t.start for t in self.tokens]
        self._ends = [t.end for t in self.tokens]

    def __len__(self) -> int:
        return len(self.tokens)

    def overlapping(self, start: int, end: int) -> range:
        i = bisect.bisect_right(self._ends, start)
        j = bisect.bisect_left(self._starts, end)
        return range(i, max(i, j))

    def labels(self, spans: Iterable[Span]) -> dict[int, set[str]]:
        """Token index -> labels of the spans overlapping that token (tokens without PHI left out)."""
        out: dict[int, set[str]] = defaultdict(set)
        for s in spans:
            for a, b in s.pieces:
                for i in self.overlapping(a, b):
                    out[i].add(s.label)
        return out


def token_counts(
    gold: Sequence[Span], system: Sequence[Span], tokens: TokenIndex, *, binary: bool = False
) -> dict[str, Counts]:
    g = tokens.labels(gold)
    p = tokens.labels(system)
    if binary:
        gi, pi = set(g), set(p)
        if not gi and not pi:
            return {}
        return {BINARY_LABEL: Counts(len(gi & pi), len(pi - gi), len(gi - pi))}
    tp: list[str] = []
    fp: list[str] = []
    fn: list[str] = []
    for i in set(g) | set(p):
        gl, pl = g.get(i, set()), p.get(i, set())
        tp.extend(gl & pl)
        fp.extend(pl - gl)
        fn.extend(gl - pl)
    return _tally(tp, fp, fn)
