"""Span resolution: turn possibly overlapping spans (several detectors) into a consistent set.

Policies:

- ``priority``: higher-priority sources (or labels) win a conflict; ties go to the longer span.
- ``longest``: the longest span wins; ties go to the higher score, then to priority order.
- ``union``: overlapping spans are merged into one covering span (recall first); the label is the one
  of the longest (then highest-priority) member.

Every policy returns what it kept and what it dropped, so reports can say why a span vanished.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from clinideid.document import Span, sort_spans
from clinideid.errors import ConfigError

Policy = Literal["priority", "longest", "union"]
POLICIES: tuple[str, ...] = ("priority", "longest", "union")


@dataclass(frozen=True)
class Resolution:
    kept: list[Span]
    dropped: list[tuple[Span, str]] = field(default_factory=list)  # (span, reason)


def _rank(span: Span, priority: Sequence[str]) -> int:
    """Position of the span's source (or label) in ``priority``; unknown ones rank last."""
    for key in (span.source, span.label):
        if key in priority:
            return priority.index(key)
    return len(priority)


def resolve_spans(spans: Iterable[Span], policy: str = "longest", priority: Sequence[str] = ()) -> Resolution:
    """Resolve overlaps among ``spans`` with ``policy``; exact duplicates are always collapsed."""
    if policy not in POLICIES:
        raise ConfigError(f"unknown span resolution policy {policy!r}; choose one of {', '.join(POLICIES)}")
    spans = list(spans)
    dropped: list[tuple[Span, str]] = []
    # collapse exact duplicates (same offsets and label): keep the best ranked / highest score
    best: dict[tuple[int, int, str], Span] = {}
    for s in spans:
        k = s.key()
        cur = best.get(k)
        if cur is None:
            best[k] = s
            continue
        if (_rank(s, priority), -(s.score or 0.0)) < (_rank(cur, priority), -(cur.score or 0.0)):
            best[k], s = s, cur
        dropped.append((s, "duplicate"))
    spans = list(best.values())
    if policy == "union":
        return _union(spans, priority, dropped)

    def order(s: Span) -> tuple:
        if policy == "priority":
            return (_rank(s, priority), -s.length, -(s.score or 0.0), s.start, s.label)
        return (-s.length, -(s.score or 0.0), _rank(s, priority), s.start, s.label)

    kept: list[Span] = []
    taken: list[tuple[int, int]] = []  # sorted non-overlapping intervals of kept spans
    import bisect

    for s in sorted(spans, key=order):
        i = bisect.bisect_left(taken, (s.start, s.start))
        conflict = (i < len(taken) and taken[i][0] < s.end) or (i > 0 and taken[i - 1][1] > s.start)
        if conflict:
            dropped.append((s, f"overlaps a span preferred by policy {policy!r}"))
            continue
        taken.insert(i, (s.start, s.end))
        kept.append(s)
    return Resolution(sort_spans(kept), dropped)


def _union(spans: list[Span], priority: Sequence[str], dropped: list[tuple[Span, str]]) -> Resolution:
    kept: list[Span] = []
    group: list[Span] = []
    group_end = -1

    def flush() -> None:
        if not group:
            return
        if len(group) == 1:
            kept.append(group[0])
            return
        head = min(group, key=lambda s: (-s.length, _rank(s, priority), -(s.score or 0.0)))
        start = min(s.start for s in group)
        end = max(s.end for s in group)
        sources = sorted({s.source for s in group})
        merged = Span(
            start,
            end,
            head.label,
            source="+".join(sources) if len(sources) > 1 else head.source,
            score=max((s.score for s in group if s.score is not None), default=None),
            explanation="union of: "
            + "; ".join(f"{s.source}:{s.label}@{s.start}-{s.end}" for s in sort_spans(group)),
        )
        kept.append(merged)
        dropped.extend((s, "merged into a union span") for s in group)

    for s in sort_spans(spans):
        if group and s.start < group_end:
            group.append(s)
            group_end = max(group_end, s.end)
        else:
            flush()
            group = [s]
            group_end = s.end
    flush()
    return Resolution(sort_spans(kept), dropped)
