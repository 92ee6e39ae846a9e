"""Replacement on the shared corpora (skipped when ../shared/corpora is absent): date parse rates and
surrogates that never leave a non-kept value unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinideid.document import Document, Span
from clinideid.labels import load_mapping
from clinideid.transform.apply import apply_operators
from clinideid.transform.base import build_operator
from clinideid.transform.dates import parse_date

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not CORPORA.is_dir(), reason="shared corpora not available"),
]
KEY = bytes(range(32))


def _non_overlapping(spans: list[Span]) -> list[Span]:
    kept, end = [], -1
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if span.start >= end:
            kept.append(span)
            end = span.end
    return kept


def meddocan_dev() -> list[Document]:
    mapping = load_mapping("meddocan", fallback="OTHER_PHI")
    docs = []
    for ann in sorted((CORPORA / "meddocan" / "dev").glob("*.ann")):
        text = ann.with_suffix(".txt").read_text("utf-8")
        spans = []
        for line in ann.read_text("utf-8").splitlines():
            if line.startswith("T"):
                label, *offsets = line.split("\t")[1].replace(";", " ").split()
                spans.append(Span(int(offsets[0]), int(offsets[-1]), mapping(label)))
        docs.append(Document(ann.stem, text, language="es", spans=_non_overlapping(spans)))
    return docs


def presidio_synth() -> list[Document]:
    mapping = load_mapping("presidio_synth", fallback="OTHER_PHI")
    data = json.loads((CORPORA / "presidio-synth" / "synth_dataset_v2.json").read_text("utf-8"))
    return [
        Document(str(i), d["full_text"], language="en", spans=_non_overlapping(
            [Span(s["start_position"], s["end_position"], mapping(s["entity_type"])) for s in d["spans"]]))
        for i, d in enumerate(data)
    ]  # fmt: skip


@pytest.mark.parametrize(("loader", "minimum"), [(meddocan_dev, 0.97), (presidio_synth, 0.95)])
def test_date_parse_rate(loader, minimum):
    docs = loader()
    dates = [(d, s) for d in docs for s in d.spans if s.label == "DATE"]
    parsed = sum(parse_date(d.span_text(s), d.language or "en") is not None for d, s in dates)
    assert len(dates) > 50
    assert parsed / len(dates) >= minimum


def test_surrogates_replace_every_non_kept_span_on_meddocan():
    op = build_operator("surrogate")
    changed = total = 0
    for doc in meddocan_dev():
        new, reps = apply_operators(
            doc, doc.spans, lambda _: op, {"key": KEY, "scope_id": f"document:{doc.id}"}
        )
        for rep in reps:
            if rep.label in ("SEX", "AGE") or rep.note:
                continue
            total += 1
            changed += new[rep.new_start : rep.new_end] != doc.text[rep.start : rep.end]
    assert total > 1000
    assert changed >= total - total // 100  # year-only dates may stay in their year
