"""Corpus statistics on a crafted three-document corpus (numbers computed by hand)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from clinideid.corpus_stats import Summary, corpus_stats
from clinideid.document import Document, Span
from clinideid.formats import available_formats, write_corpus

# d1 "Ana vive en Madrid."  tokens: Ana vive en Madrid .   (5)  spans PATIENT Ana, CITY Madrid
# d2 "Tel 555-1234"         tokens: Tel 555 - 1234          (4)  spans PHONE 555-1234, IDNUM 555 (overlap)
# d3 "Nada."                tokens: Nada .                  (2)  no spans
DOCS = [
    Document("d1", "Ana vive en Madrid.", spans=(Span(0, 3, "PATIENT"), Span(12, 18, "CITY"))),
    Document("d2", "Tel 555-1234", spans=(Span(4, 12, "PHONE"), Span(4, 7, "IDNUM"))),
    Document("d3", "Nada."),
]


def test_corpus_stats() -> None:
    s = corpus_stats(DOCS)
    assert s.documents == 3
    assert s.characters == 19 + 12 + 5
    assert s.tokens == 11
    # tokens per document 5, 4, 2
    assert s.tokens_per_document == Summary(3, 11, 11 / 3, 4, 2, 5)
    assert s.documents_without_spans == 1
    assert s.spans == 4
    assert s.spans_per_label == {"PATIENT": 1, "CITY": 1, "PHONE": 1, "IDNUM": 1}  # taxonomy order
    assert s.label_share("PHONE") == 0.25
    # span lengths in characters 3, 6, 8, 3; in tokens 1, 1, 3, 1
    assert (s.span_chars.mean, s.span_chars.median, s.span_chars.min, s.span_chars.max) == (5.0, 4.5, 3, 8)
    assert (s.span_tokens.mean, s.span_tokens.median, s.span_tokens.max) == (1.5, 1.0, 3)
    # PHONE 555-1234 contains IDNUM 555: one pair, two spans involved
    assert s.overlapping_pairs == 1
    assert s.spans_in_overlaps == 2
    assert s.discontinuous_spans == 0


def test_stats_with_scheme_and_level() -> None:
    docs = [
        Document(
            "d", "Ana en Madrid", spans=(Span(0, 3, "NOMBRE_SUJETO_ASISTENCIA"), Span(7, 13, "TERRITORIO"))
        )
    ]
    s = corpus_stats(docs, scheme="meddocan", level="category")
    assert s.spans_per_label == {"NAME": 1, "LOCATION": 1}
    assert s.options["scheme"] == "meddocan"


def test_empty_corpus() -> None:
    s = corpus_stats([])
    assert s.documents == 0 and s.spans == 0
    assert s.tokens_per_document.mean == 0.0
    assert "documents" in s.format_table()


def test_table_and_json() -> None:
    s = corpus_stats(DOCS)
    data = json.loads(json.dumps(s.to_dict()))
    assert data["spans_per_label"]["PATIENT"]["count"] == 1
    assert data["spans_per_label"]["PATIENT"]["share"] == 0.25
    assert data["overlapping_span_pairs"] == 1
    table = s.format_table()
    assert "Spans per label" in table and "25.00%" in table
    # statistics never show document text
    assert "Madrid" not in table and "Madrid" not in json.dumps(data)


@pytest.mark.skipif("jsonl" not in available_formats(), reason="the jsonl codec is not available")
def test_stats_cli(tmp_path) -> None:
    from clinideid.cli import _register_commands, app

    _register_commands()
    corpus = tmp_path / "c.jsonl"
    write_corpus(DOCS, corpus, "jsonl")
    out = tmp_path / "stats.json"
    result = CliRunner().invoke(app, ["stats", str(corpus), "--format", "jsonl", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "overlapping span pairs" in result.stdout
    assert json.loads(out.read_text())["tokens"] == 11
    help_text = CliRunner().invoke(app, ["stats", "--help"]).output
    assert "Example: clinideid stats" in help_text
    bad = CliRunner().invoke(app, ["stats", str(tmp_path / "nope"), "--format", "jsonl"])
    assert bad.exit_code != 0 and "does not exist" in str(bad.exception)
