"""Descriptive statistics of an annotated corpus: size, tokens, spans per label, span lengths, overlaps.

Tokens come from ``clinideid.text.tokenize``; a span's token length is the number of tokens it overlaps.
Labels can be seen through a scheme mapping and a level, as in evaluation (``LabelView``).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clinideid.document import Document, Span
from clinideid.evaluate.matching import TokenIndex
from clinideid.evaluate.prepare import LabelView, label_order
from clinideid.evaluate.report import text_table
from clinideid.labels import LabelMapping


@dataclass(frozen=True)
class Summary:
    """Mean, median, minimum and maximum of a list of numbers (all 0 for an empty list)."""

    count: int
    total: float
    mean: float
    median: float
    min: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        if not values:
            return cls(0, 0, 0.0, 0.0, 0, 0)
        return cls(
            len(values),
            sum(values),
            float(statistics.fmean(values)),
            float(statistics.median(values)),
            min(values),
            max(values),
        )

    def to_dict(self) -> dict[str, float]:
        return {
            "count": self.count,
            "total": self.total,
            "mean": self.mean,
            "median": self.median,
            "min": self.min,
            "max": self.max,
        }


@dataclass
class CorpusStats:
    documents: int
    characters: int
    tokens: int
    tokens_per_document: Summary
    characters_per_document: Summary
    spans: int
    spans_per_label: dict[str, int]
    span_chars: Summary
    span_tokens: Summary
    span_chars_per_label: dict[str, Summary]
    overlapping_pairs: int
    spans_in_overlaps: int
    discontinuous_spans: int
    documents_without_spans: int
    options: dict[str, object] = field(default_factory=dict)

    def label_share(self, label: str) -> float:
        return self.spans_per_label.get(label, 0) / self.spans if self.spans else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "options": self.options,
            "documents": self.documents,
            "documents_without_spans": self.documents_without_spans,
            "characters": self.characters,
            "tokens": self.tokens,
            "tokens_per_document": self.tokens_per_document.to_dict(),
            "characters_per_document": self.characters_per_document.to_dict(),
            "spans": self.spans,
            "spans_per_label": {
                lab: {
                    "count": n,
                    "share": self.label_share(lab),
                    "chars": self.span_chars_per_label[lab].to_dict(),
                }
                for lab, n in self.spans_per_label.items()
            },
            "span_length_chars": self.span_chars.to_dict(),
            "span_length_tokens": self.span_tokens.to_dict(),
            "overlapping_span_pairs": self.overlapping_pairs,
            "spans_in_overlaps": self.spans_in_overlaps,
            "discontinuous_spans": self.discontinuous_spans,
        }

    def format_table(self) -> str:
        def summary_row(name: str, s: Summary) -> list[str | int | float]:
            return [name, s.mean, s.median, s.min, s.max]

        general = text_table(
            ["corpus", "value"],
            [
                ["documents", self.documents],
                ["documents without spans", self.documents_without_spans],
                ["characters", self.characters],
                ["tokens", self.tokens],
                ["spans", self.spans],
                ["overlapping span pairs", self.overlapping_pairs],
                ["spans in overlaps", self.spans_in_overlaps],
                ["discontinuous spans", self.discontinuous_spans],
            ],
            title="Corpus",
        )
        lengths = text_table(
            ["measure", "mean", "median", "min", "max"],
            [
                summary_row("tokens per document", self.tokens_per_document),
                summary_row("characters per document", self.characters_per_document),
                summary_row("span length (characters)", self.span_chars),
                summary_row("span length (tokens)", self.span_tokens),
            ],
            title="Lengths",
        )
        labels = text_table(
            ["label", "spans", "share", "mean chars", "max chars"],
            [
                [
                    lab,
                    n,
                    f"{self.label_share(lab):.2%}",
                    self.span_chars_per_label[lab].mean,
                    self.span_chars_per_label[lab].max,
                ]
                for lab, n in self.spans_per_label.items()
            ],
            title="Spans per label",
        )
        return "\n\n".join([general, lengths, labels]) + "\n"


def corpus_stats(
    docs: Iterable[Document],
    *,
    scheme: str | Path | LabelMapping | None = None,
    level: str = "subcategory",
    label_fallback: str | None = None,
) -> CorpusStats:
    """Statistics of ``docs``; labels optionally mapped with ``scheme`` and projected to ``level``."""
    view = LabelView.build(level, scheme, label_fallback=label_fallback)
    n_docs = chars = n_tokens = overlapping = empty = discontinuous = 0
    tokens_per_doc: list[int] = []
    chars_per_doc: list[int] = []
    span_chars: list[int] = []
    span_tokens: list[int] = []
    chars_by_label: dict[str, list[int]] = {}
    by_label: Counter[str] = Counter()
    in_overlaps = 0
    for doc in docs:
        n_docs += 1
        index = TokenIndex(doc.text)
        chars += len(doc.text)
        n_tokens += len(index)
        tokens_per_doc.append(len(index))
        chars_per_doc.append(len(doc.text))
        spans = view.spans(doc.spans)
        if not spans:
            empty += 1
        for s in spans:
            by_label[s.label] += 1
            length = sum(b - a for a, b in s.pieces)
            span_chars.append(length)
            chars_by_label.setdefault(s.label, []).append(length)
            span_tokens.append(len({i for a, b in s.pieces for i in index.overlapping(a, b)}))
            discontinuous += s.is_discontinuous
        pairs, involved = _overlaps(spans)
        overlapping += pairs
        in_overlaps += involved
    order = label_order(by_label)
    return CorpusStats(
        documents=n_docs,
        characters=chars,
        tokens=n_tokens,
        tokens_per_document=Summary.of(tokens_per_doc),
        characters_per_document=Summary.of(chars_per_doc),
        spans=sum(by_label.values()),
        spans_per_label={lab: by_label[lab] for lab in order},
        span_chars=Summary.of(span_chars),
        span_tokens=Summary.of(span_tokens),
        span_chars_per_label={lab: Summary.of(chars_by_label[lab]) for lab in order},
        overlapping_pairs=overlapping,
        spans_in_overlaps=in_overlaps,
        discontinuous_spans=discontinuous,
        documents_without_spans=empty,
        options=view.describe(),
    )


def _overlaps(spans: Sequence[Span]) -> tuple[int, int]:
    """(pairs of overlapping spans, spans overlapping at least one other), by sweep line."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i].start, -spans[i].end))
    active: list[int] = []
    involved: set[int] = set()
    pairs = 0
    for i in order:
        active = [j for j in active if spans[j].end > spans[i].start]
        if active:
            pairs += len(active)
            involved.update(active)
            involved.add(i)
        active.append(i)
    return pairs, len(involved)
