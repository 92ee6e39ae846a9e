"""Applying operators to a document: replacements spliced right-to-left, with a report of every span.

Every operator sees the original document (its offsets stay valid because nothing has been replaced
yet); the new text is assembled from the end backwards, and each ``Replacement`` records the original
span (offsets, label, source, explanation — never its text) and where its replacement lies in the new
text.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from clinideid.document import Document, Span, sort_spans
from clinideid.errors import ConfigError, SpanError
from clinideid.labels import project_label
from clinideid.transform.base import Operator, OperatorContext, Outcome

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Replacement:
    """What happened to one span: where it was, what it was labelled, where its replacement is now."""

    start: int
    end: int
    label: str
    source: str
    explanation: str | None
    new_start: int
    new_end: int
    operator: str  # the operator that produced the text (a fallback's name when one was used)
    note: str | None = None  # why a fallback was used, or that an operator failed
    span_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_non_overlapping(doc: Document, spans: Sequence[Span]) -> None:
    """``SpanError`` when a span leaves the text or two spans (or fragments) overlap."""
    n = len(doc.text)
    pieces: list[tuple[int, int, Span]] = []
    for span in spans:
        if span.end > n:
            raise SpanError(
                f"document {doc.id!r}: span {span.start}-{span.end} ({span.label}) ends beyond the text length {n}"
            )
        pieces.extend((a, b, span) for a, b in span.pieces)
    pieces.sort(key=lambda p: (p[0], p[1]))
    for (_, b1, s1), (a2, _, s2) in itertools.pairwise(pieces):
        if a2 < b1:
            raise SpanError(
                f"document {doc.id!r}: spans {s1.start}-{s1.end} ({s1.label}) and {s2.start}-{s2.end} "
                f"({s2.label}) overlap; resolve them first (clinideid.resolve.resolve_spans)"
            )


def _run(operator: Operator, span: Span, ctx: OperatorContext) -> Outcome:
    try:
        outcome = operator.apply(span, ctx)
        if not isinstance(outcome.text, str):
            raise TypeError("operator returned a non-string replacement")
        return outcome
    except ConfigError:
        raise
    except Exception as exc:  # one bad span must not lose the document, nor leave PHI in clear
        log.warning(
            "document %s: operator %s failed on a %s span at %d-%d (%s); replaced by a tag",
            ctx.document.id, operator.name, span.label, span.start, span.end, type(exc).__name__,
        )  # fmt: skip
        return Outcome(f"[{project_label(span.label, 'category')}]", "tag", f"{operator.name} failed")


def apply_operators(
    doc: Document,
    spans: Iterable[Span],
    operator_for_label: Callable[[str], Operator],
    ctx_kwargs: Mapping[str, Any] | None = None,
) -> tuple[str, list[Replacement]]:
    """The de-identified text of ``doc`` and one ``Replacement`` per span, in reading order.

    ``spans`` must not overlap (``SpanError`` otherwise). ``ctx_kwargs`` fills the ``OperatorContext``
    (``key``, ``scope_id``, ``language``, ``options``); the language defaults to the document's. A
    discontinuous span's replacement takes its first fragment's place; its other fragments are removed.
    """
    ordered = sort_spans(spans)
    check_non_overlapping(doc, ordered)
    kwargs = dict(ctx_kwargs or {})
    kwargs.setdefault("language", doc.language or "en")
    kwargs.setdefault("scope_id", f"document:{doc.id}")
    try:
        ctx = OperatorContext(document=doc, spans=tuple(ordered), **kwargs)
    except TypeError as exc:
        raise ConfigError(f"bad operator context options: {exc}") from None
    outcomes = [_run(operator_for_label(span.label), span, ctx) for span in ordered]

    # (start, end, text, index of the span whose replacement this is, or -1 for a removed fragment)
    edits: list[tuple[int, int, str, int]] = []
    for i, (span, outcome) in enumerate(zip(ordered, outcomes, strict=True)):
        first, *rest = span.pieces
        edits.append((first[0], first[1], outcome.text, i))
        edits.extend((a, b, "", -1) for a, b in rest)
    edits.sort(key=lambda e: e[0])

    chunks: list[str] = []
    cursor = len(doc.text)
    for start, end, text, _ in reversed(edits):  # right to left: earlier offsets stay valid
        chunks.append(doc.text[end:cursor])
        chunks.append(text)
        cursor = start
    chunks.append(doc.text[:cursor])
    chunks.reverse()
    new_text = "".join(chunks)
    del chunks  # the unchanged pieces would otherwise stay alive beside the joined text

    placed: list[tuple[int, int]] = [(0, 0)] * len(ordered)
    delta = 0
    for start, end, text, index in edits:
        if index >= 0:
            placed[index] = (start + delta, start + delta + len(text))
        delta += len(text) - (end - start)
    del edits

    report = [
        Replacement(
            start=span.start,
            end=span.end,
            label=span.label,
            source=span.source,
            explanation=span.explanation,
            new_start=placed[i][0],
            new_end=placed[i][1],
            operator=outcome.operator,
            note=outcome.note,
            span_id=span.id,
        )
        for i, (span, outcome) in enumerate(zip(ordered, outcomes, strict=True))
    ]
    return new_text, report


def summarize(replacements: Iterable[Replacement]) -> dict[str, Any]:
    """Counts for a report: replacements by operator and by label, and fallbacks by reason."""
    reps = list(replacements)
    return {
        "replacements": len(reps),
        "by_operator": dict(Counter(r.operator for r in reps)),
        "by_label": dict(Counter(r.label for r in reps)),
        "fallbacks": dict(Counter(r.note for r in reps if r.note)),
    }
