"""The document model: ``Document`` and ``Span``.

Character offsets into the original text are the single source of truth. Both classes are frozen and
validated on creation, so a ``Document`` that exists holds only spans that fit its text.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

from clinideid.errors import SpanError

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not value:
        return _EMPTY
    return MappingProxyType(dict(value))


def _reduce(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    """Pickle support (batch worker processes): read-only mappings travel as plain dicts."""
    values = (getattr(obj, f.name) for f in fields(obj))
    return type(obj), tuple(dict(v) if isinstance(v, MappingProxyType) else v for v in values)


@dataclass(frozen=True, slots=True)
class Span:
    """A labelled stretch of a document, ``text[start:end]``.

    ``fragments`` holds the pieces of a discontinuous span (BRAT ``0 5;9 14``); for a contiguous span it
    is empty and the span is ``(start, end)``. ``text`` is optional: when given, the owning document
    checks that it matches. ``source`` names the detector (or ``"gold"``), ``explanation`` says which rule
    or model produced the span, ``attributes`` holds format-specific extras (e.g. annotator notes).
    """

    start: int
    end: int
    label: str
    text: str | None = None
    source: str = "gold"
    score: float | None = None
    explanation: str | None = None
    fragments: tuple[tuple[int, int], ...] = ()
    id: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.start, int) or not isinstance(self.end, int):
            raise SpanError(
                f"span offsets must be integers, got {type(self.start).__name__}/{type(self.end).__name__}"
            )
        if self.start < 0:
            raise SpanError(f"span start {self.start} is negative")
        if self.end <= self.start:
            raise SpanError(f"span end {self.end} must be greater than start {self.start}")
        if not isinstance(self.label, str) or not self.label:
            raise SpanError("span label must be a non-empty string")
        if self.score is not None and not (0.0 <= float(self.score) <= 1.0):
            raise SpanError(f"span score {self.score} is outside [0, 1]")
        if self.fragments:
            frags = tuple((int(a), int(b)) for a, b in self.fragments)
            for a, b in frags:
                if a < 0 or b <= a:
                    raise SpanError(f"span fragment ({a}, {b}) is empty or negative")
            ordered = tuple(sorted(frags))
            for (_, b1), (a2, _) in itertools.pairwise(ordered):
                if a2 < b1:
                    raise SpanError("span fragments overlap")
            if ordered[0][0] != self.start or ordered[-1][1] != self.end:
                raise SpanError("span start/end must equal the first fragment start and last fragment end")
            object.__setattr__(self, "fragments", ordered if len(ordered) > 1 else ())
        object.__setattr__(self, "attributes", _frozen_mapping(self.attributes))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _reduce(self)

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def is_discontinuous(self) -> bool:
        return len(self.fragments) > 1

    @property
    def pieces(self) -> tuple[tuple[int, int], ...]:
        """The character ranges the span covers (one for a contiguous span)."""
        return self.fragments if self.fragments else ((self.start, self.end),)

    def overlaps(self, other: Span) -> bool:
        return self.start < other.end and other.start < self.end

    def contains(self, other: Span) -> bool:
        return self.start <= other.start and other.end <= self.end

    def covered_text(self, text: str, joiner: str = " ") -> str:
        """The span's text in ``text``; fragments of a discontinuous span are joined by ``joiner``."""
        return joiner.join(text[a:b] for a, b in self.pieces)

    def with_(self, **changes: Any) -> Span:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def key(self) -> tuple[int, int, str]:
        return (self.start, self.end, self.label)


def sort_spans(spans: Iterable[Span]) -> list[Span]:
    """Spans in reading order: by start, longer first at equal start, then by label."""
    return sorted(spans, key=lambda s: (s.start, -s.end, s.label, s.source))


def find_overlaps(spans: Iterable[Span]) -> list[tuple[Span, Span]]:
    """Every pair of overlapping spans, in reading order (sweep line, O(n log n + k))."""
    ordered = sort_spans(spans)
    pairs: list[tuple[Span, Span]] = []
    active: list[Span] = []
    for span in ordered:
        active = [a for a in active if a.end > span.start]
        pairs.extend((a, span) for a in active)
        active.append(span)
    return pairs


def has_overlaps(spans: Iterable[Span]) -> bool:
    ordered = sort_spans(spans)
    return any(b.start < a.end for a, b in itertools.pairwise(ordered))


@dataclass(frozen=True, slots=True)
class Document:
    """A text with its id, language, metadata and (optionally) annotated spans.

    Spans are validated against the text: in range, and matching ``span.text`` when a span carries it.
    """

    id: str
    text: str
    language: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    spans: tuple[Span, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise SpanError("document id must be a non-empty string")
        if not isinstance(self.text, str):
            raise SpanError(f"document {self.id!r}: text must be a string")
        object.__setattr__(self, "metadata", _frozen_mapping(self.metadata))
        spans = tuple(self.spans)
        n = len(self.text)
        for span in spans:
            if not isinstance(span, Span):
                raise SpanError(f"document {self.id!r}: spans must be Span objects")
            if span.end > n:
                raise SpanError(
                    f"document {self.id!r}: span {span.start}-{span.end} ({span.label}) ends beyond the "
                    f"text length {n}"
                )
            if span.text is not None and span.covered_text(self.text) != span.text:
                raise SpanError(
                    f"document {self.id!r}: span {span.start}-{span.end} ({span.label}) text does not "
                    "match the document at those offsets"
                )
        object.__setattr__(self, "spans", tuple(sort_spans(spans)))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _reduce(self)

    def with_spans(self, spans: Iterable[Span]) -> Document:
        return replace(self, spans=tuple(spans))

    def with_text(self, text: str, spans: Iterable[Span] = ()) -> Document:
        return replace(self, text=text, spans=tuple(spans))

    def span_text(self, span: Span) -> str:
        return span.covered_text(self.text)

    def labels(self) -> set[str]:
        return {s.label for s in self.spans}


def relabel(doc: Document, mapping: Mapping[str, str] | Any) -> Document:
    """``doc`` with each span's label replaced by ``mapping[label]`` (or ``mapping(label)``)."""
    fn = mapping if callable(mapping) else mapping.__getitem__
    return doc.with_spans(s.with_(label=fn(s.label)) for s in doc.spans)


def documents_by_id(docs: Sequence[Document]) -> dict[str, Document]:
    out: dict[str, Document] = {}
    for d in docs:
        if d.id in out:
            raise SpanError(f"duplicate document id {d.id!r}")
        out[d.id] = d
    return out
