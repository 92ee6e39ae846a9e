"""Getting gold and system documents ready to score: pairing by id and putting labels on one level.

Labels go through three optional steps, in this order, on both sides alike:

1. a scheme mapping (``load_mapping``) onto canonical labels; canonical labels pass through unchanged,
   so a system emitting canonical labels can be scored against a gold in a native scheme;
2. the HIPAA filter: spans whose canonical label HIPAA Safe Harbor does not require removing are dropped;
3. projection to the scoring level (subcategory, category or binary) with ``project_label``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clinideid.document import Document, Span, documents_by_id
from clinideid.errors import ConfigError, InputError, SpanError
from clinideid.labels import LEVELS, LabelMapping, canonical, is_hipaa_label, load_mapping, project_label

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LabelView:
    """How span labels are seen by the scorer: optional mapping, optional HIPAA filter, a level."""

    level: str = "subcategory"
    mapping: LabelMapping | None = None
    hipaa_only: bool = False

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ConfigError(f"unknown evaluation level {self.level!r}; choose one of {', '.join(LEVELS)}")

    @classmethod
    def build(
        cls,
        level: str = "subcategory",
        scheme: str | Path | LabelMapping | None = None,
        hipaa_only: bool = False,
        label_fallback: str | None = None,
    ) -> LabelView:
        mapping: LabelMapping | None
        if scheme is None or isinstance(scheme, LabelMapping):
            mapping = scheme
            if mapping is not None and label_fallback is not None:
                mapping = mapping.with_fallback(label_fallback)
        else:
            mapping = load_mapping(scheme, fallback=label_fallback)
        return cls(level=level, mapping=mapping, hipaa_only=hipaa_only)

    def label(self, label: str) -> str | None:
        """The scoring label of ``label``, or None when the span is filtered out."""
        if self.mapping is not None:
            label = self.mapping.map(label)
        if self.hipaa_only and not is_hipaa_label(label):
            return None
        return project_label(label, self.level)

    def spans(self, spans: Iterable[Span]) -> list[Span]:
        out = []
        for s in spans:
            new = self.label(s.label)
            if new is not None:
                out.append(s if new == s.label else s.with_(label=new))
        return out

    def describe(self) -> dict[str, object]:
        return {
            "level": self.level,
            "scheme": self.mapping.scheme if self.mapping is not None else None,
            "hipaa_only": self.hipaa_only,
        }


@dataclass(frozen=True)
class DocumentPair:
    """One gold document and the system's version of it (spans already seen through a ``LabelView``)."""

    id: str
    text: str
    gold: tuple[Span, ...]
    system: tuple[Span, ...]


def pair_documents(
    gold: Iterable[Document],
    system: Iterable[Document],
    view: LabelView,
    *,
    allow_missing: bool = False,
    warn: Callable[[str], None] | None = None,
) -> list[DocumentPair]:
    """Gold and system documents matched by id, in gold order (then system-only ids, sorted).

    A document present on one side only is an ``InputError`` unless ``allow_missing``: then the missing
    side counts as a document without spans, and ``warn`` is told. Scoring uses the gold text; a system
    document whose text differs is reported through ``warn``.
    """
    warn = warn or log.warning
    gold_by_id = _by_id(gold, "gold")
    sys_by_id = _by_id(system, "system")
    only_gold = [i for i in gold_by_id if i not in sys_by_id]
    only_sys = sorted(i for i in sys_by_id if i not in gold_by_id)
    if (only_gold or only_sys) and not allow_missing:
        parts = []
        if only_gold:
            parts.append(f"{len(only_gold)} gold document(s) have no system output ({_some(only_gold)})")
        if only_sys:
            parts.append(f"{len(only_sys)} system document(s) have no gold ({_some(only_sys)})")
        raise InputError(
            "; ".join(parts) + "; check that both sides hold the same corpus, or pass --allow-missing to "
            "score a missing document as one without spans"
        )
    if only_gold:
        warn(f"{len(only_gold)} gold document(s) have no system output, scored as empty: {_some(only_gold)}")
    if only_sys:
        warn(f"{len(only_sys)} system document(s) have no gold, scored as empty gold: {_some(only_sys)}")
    pairs: list[DocumentPair] = []
    for doc_id in [*gold_by_id, *only_sys]:
        g = gold_by_id.get(doc_id)
        s = sys_by_id.get(doc_id)
        if g is not None and s is not None and s.text != g.text:
            warn(
                f"document {doc_id!r}: the system text differs from the gold text "
                f"({len(s.text)} vs {len(g.text)} characters); offsets are scored against the gold text"
            )
        base = g if g is not None else s
        assert base is not None
        pairs.append(
            DocumentPair(
                id=doc_id,
                text=base.text,
                gold=tuple(view.spans(g.spans)) if g is not None else (),
                system=tuple(view.spans(s.spans)) if s is not None else (),
            )
        )
    return pairs


def _by_id(docs: Iterable[Document], side: str) -> dict[str, Document]:
    try:
        return documents_by_id(list(docs))
    except SpanError as exc:
        raise InputError(f"{side} corpus: {exc}; document ids must be unique") from None


def _some(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f", ... {len(ids) - limit} more" if len(ids) > limit else "")


def label_order(labels: Iterable[str]) -> list[str]:
    """Labels in taxonomy order (canonical subcategories, then categories), then the rest sorted."""
    tax = canonical()
    rank = {name: i for i, name in enumerate(tax.labels)}
    for j, cat in enumerate(tax.categories):
        rank.setdefault(cat, len(rank) + j)
    return sorted(set(labels), key=lambda lab: (rank.get(lab, len(rank) + 100), lab))


def join_adjacent(doc: Document, labels: Iterable[str], into: str, gap: str = " \t") -> Document:
    """``doc`` with consecutive spans of ``labels`` separated only by ``gap`` characters joined into one
    ``into`` span: corpora that annotate first name and surname apart (EDS-Pseudo's PRENOM + NOM) can then
    be scored against systems that return whole names."""
    wanted = set(labels)
    out: list[Span] = []
    for span in sorted(doc.spans, key=lambda s: (s.start, s.end)):
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.label in wanted | {into}
            and span.label in wanted
            and prev.end <= span.start
            and doc.text[prev.end : span.start].strip(gap) == ""
        ):
            out[-1] = Span(prev.start, span.end, into, source=prev.source)
        else:
            out.append(span)
    return doc.with_spans(out)
