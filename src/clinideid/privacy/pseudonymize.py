"""Pseudonymising an annotated corpus: every gold span replaced by a keyed surrogate, spans moved along.

The result is the same corpus with realistic replacements, so a model can be trained on it without the
original identifiers. Surrogates come from the project's ``surrogate`` operator (keyed and consistent:
the same value in one scope gets the same surrogate). Spans keep their original labels; a label scheme
(e.g. ``meddocan``) maps them onto canonical labels only to choose the surrogate generator.

Every output document is verified: each new span covers exactly its replacement, and the text between
spans is unchanged. A document that fails (overlapping gold spans, a verification error) is reported by
id and position, never by its text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from clinideid.document import Document, Span, sort_spans
from clinideid.errors import ClinideidError, ConfigError, SpanError
from clinideid.labels import LabelMapping, load_mapping
from clinideid.transform.apply import Replacement, apply_operators
from clinideid.transform.base import Operator, build_operator
from clinideid.transform.keys import check_key, scope_for

log = logging.getLogger(__name__)

SCOPES = ("document", "patient", "corpus")


class PseudonymizationError(ClinideidError):
    """A document whose pseudonymised form could not be made or failed verification."""


@dataclass
class PseudonymizeReport:
    """Counts and per-document failures (ids and reasons only, never text)."""

    documents: int = 0
    spans: int = 0
    fallbacks: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "documents": self.documents,
            "spans": self.spans,
            "fallbacks": self.fallbacks,
            "failed_documents": [{"id": i, "reason": r} for i, r in self.failures],
        }


def verify_pseudonymized(original: Document, new: Document, replacements: list[Replacement]) -> None:
    """``PseudonymizationError`` unless ``new`` equals ``original`` outside the spans and each new span
    covers its replacement. ``replacements`` are in reading order, one per original span.

    The expected text is rebuilt from the original: each span's first piece replaced by the text at its
    replacement's new offsets, its other fragments removed; it must equal the new text exactly.
    """
    orig_spans = sort_spans(original.spans)
    if len(orig_spans) != len(replacements):
        raise PseudonymizationError(f"document {original.id!r}: span count changed")
    edits: list[tuple[int, int, str]] = []
    for span, rep in zip(orig_spans, replacements, strict=True):
        first, *rest = span.pieces
        edits.append((first[0], first[1], new.text[rep.new_start : rep.new_end]))
        edits.extend((a, b, "") for a, b in rest)
    edits.sort(key=lambda e: e[0])
    chunks: list[str] = []
    cursor = 0
    for a, b, text in edits:
        chunks.append(original.text[cursor:a])
        chunks.append(text)
        cursor = b
    chunks.append(original.text[cursor:])
    if "".join(chunks) != new.text:
        raise PseudonymizationError(
            f"document {original.id!r}: the text outside the spans changed or a span was misplaced"
        )
    placed = {(s.start, s.end) for s in new.spans}
    for rep in replacements:
        if rep.new_end > rep.new_start and (rep.new_start, rep.new_end) not in placed:
            raise PseudonymizationError(
                f"document {original.id!r}: no span at the replacement {rep.new_start}-{rep.new_end}"
            )


class Pseudonymizer:
    """Replaces the gold spans of documents by keyed surrogates.

    ``scope``: ``document`` (surrogates consistent within a note), ``patient`` (within the notes of one
    ``metadata[patient_field]``) or ``corpus``. ``label_scheme``: a mapping name or file used to pick
    the surrogate generator of non-canonical labels. ``operator``: any operator name (``surrogate`` by
    default) or an ``Operator`` instance.
    """

    def __init__(
        self,
        key: bytes,
        *,
        scope: str = "document",
        label_scheme: str | None = None,
        language: str | None = None,
        patient_field: str = "patient_id",
        operator: str | Operator = "surrogate",
    ) -> None:
        if scope not in SCOPES:
            raise ConfigError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
        self.key = check_key(key)
        self.scope = scope
        self.language = language
        self.patient_field = patient_field
        self.mapping: LabelMapping | None = load_mapping(label_scheme) if label_scheme else None
        self.operator: Operator = build_operator(operator) if isinstance(operator, str) else operator

    def _canonical(self, label: str) -> str:
        if self.mapping is None:
            return label
        try:
            return self.mapping(label)
        except ClinideidError:
            return label

    def document(self, doc: Document) -> tuple[Document, list[Replacement]]:
        """The pseudonymised document and one ``Replacement`` per gold span (reading order)."""
        ordered = sort_spans(doc.spans)
        try:
            # surrogates are chosen on canonical labels; the original label goes back on the new span
            canon = [s.with_(label=self._canonical(s.label), text=None) for s in ordered]
        except SpanError as exc:
            raise PseudonymizationError(f"document {doc.id!r}: {exc}") from None
        work = doc.with_spans(canon)
        language = self.language or doc.language or "en"
        ctx = {
            "key": self.key,
            "scope_id": scope_for(doc.id, doc.metadata, self.scope, self.patient_field),
            "language": language,
        }
        try:
            new_text, reps = apply_operators(work, work.spans, lambda _label: self.operator, ctx)
        except SpanError as exc:
            raise PseudonymizationError(f"{exc}") from None
        original_by_pos = {(s.start, s.end): s for s in ordered}
        new_spans: list[Span] = []
        fixed: list[Replacement] = []
        for rep in reps:
            src = original_by_pos[(rep.start, rep.end)]
            fixed.append(Replacement(**{**rep.to_dict(), "label": src.label}))
            if rep.new_end > rep.new_start:
                new_spans.append(
                    Span(
                        rep.new_start,
                        rep.new_end,
                        src.label,
                        source=src.source,
                        id=src.id,
                        attributes=dict(src.attributes),
                    )
                )
        new_doc = Document(doc.id, new_text, doc.language, dict(doc.metadata), tuple(new_spans))
        verify_pseudonymized(doc, new_doc, fixed)
        return new_doc, fixed

    def corpus(
        self,
        docs: Iterable[Document],
        report: PseudonymizeReport | None = None,
        on_error: str = "raise",
        progress: Callable[[], None] | None = None,
    ) -> Iterator[Document]:
        """Pseudonymised documents; with ``on_error='skip'`` a failing document is reported and left out."""
        if on_error not in ("raise", "skip"):
            raise ConfigError("on_error must be raise or skip")
        report = report if report is not None else PseudonymizeReport()
        for doc in docs:
            try:
                new_doc, reps = self.document(doc)
            except PseudonymizationError as exc:
                if on_error == "raise":
                    raise
                log.warning("document %s skipped: %s", doc.id, exc)
                report.failures.append((doc.id, str(exc)))
                continue
            report.documents += 1
            report.spans += len(reps)
            report.fallbacks += sum(1 for r in reps if r.note)
            if progress is not None:
                progress()
            yield new_doc
