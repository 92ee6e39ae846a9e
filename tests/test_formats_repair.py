"""Offset checks and repairs (formats/repair.py)."""

import pytest

from clinideid.document import Span
from clinideid.errors import ConfigError
from clinideid.formats.repair import check_spans, repair_spans, same_text

TEXT = "Dr. Smith2011 saw  Ana López, (555) 123-4567.\nMadrid"


def kinds(problems):
    return [(p.index, p.kind) for p in problems]


def test_clean_spans_have_no_problems():
    spans = [
        Span(4, 9, "DOCTOR", text="Smith"),
        Span(19, 28, "PATIENT"),
        Span(30, 44, "PHONE"),
        Span(46, 52, "CITY"),
    ]
    assert check_spans(TEXT, spans) == []


def test_each_kind_is_found_without_quoting_text():
    spans = [
        Span(40, 99, "X"),
        Span(4, 9, "DOCTOR", text="Jones"),
        Span(18, 22, "PATIENT"),
        Span(19, 29, "PATIENT"),
        Span(4, 11, "DOCTOR"),
        Span(34, 44, "PHONE"),
    ]
    found = check_spans(TEXT, spans)
    assert kinds(found) == [
        (0, "out_of_range"),
        (1, "text_mismatch"),
        (2, "edge_whitespace"),
        (3, "edge_punctuation"),
        (4, "partial_token"),
        (5, "edge_punctuation"),
    ]
    assert all("Smith" not in p.describe() and "Ana" not in p.describe() for p in found)
    assert [p.severe for p in found] == [True, True, False, False, False, False]


def test_whitespace_differences_are_not_mismatches():
    assert same_text("Ana López", "Ana\nLópez")
    assert same_text("Ana  López ", "Ana López")
    assert not same_text("Ana", "Ann")
    assert check_spans("a Ana\r\nLópez", [Span(2, 12, "P", text="Ana López")]) == []


def test_misaligned_span_moves_to_nearest_occurrence():
    text = "Ana met Ana and Ana"
    result = repair_spans(text, [Span(9, 12, "P", text="Ana")])
    assert result.spans[0].key() == (8, 11, "P") and result.spans[0].text == "Ana"
    assert [p.kind for p in result.fixed] == ["text_mismatch"]
    far = repair_spans(text, [Span(9, 12, "P", text="Ana")], max_shift=0)
    assert far.unfixed and far.spans[0].key() == (9, 12, "P")


def test_misaligned_span_with_flattened_line_break_is_found():
    text = "x\r\nJohn\r\nSmith y"
    result = repair_spans(text, [Span(0, 10, "P", text="John Smith")])
    assert result.spans[0].key() == (3, 14, "P")


def test_edges_are_trimmed_and_punctuation_only_when_asked():
    spans = [Span(18, 22, "PATIENT"), Span(19, 29, "PATIENT"), Span(29, 44, "PHONE")]
    default = repair_spans(TEXT, spans)
    assert [s.key() for s in default.spans] == [(19, 22, "PATIENT"), (19, 29, "PATIENT"), (30, 44, "PHONE")]
    strict = repair_spans(TEXT, spans, strip_punctuation=True)
    assert [s.key() for s in strict.spans] == [(19, 22, "PATIENT"), (19, 28, "PATIENT"), (30, 44, "PHONE")]


def test_token_alignment_only_when_asked():
    glued = [Span(4, 11, "DOCTOR")]  # "Smith20": cuts the number
    assert repair_spans(TEXT, glued).spans == glued
    assert repair_spans(TEXT, glued, align="expand").spans[0].key() == (4, 13, "DOCTOR")
    assert repair_spans(TEXT, glued, align="shrink").spans[0].key() == (4, 9, "DOCTOR")
    inside = [Span(5, 7, "X")]
    assert repair_spans(TEXT, inside, align="shrink").unfixed
    with pytest.raises(ConfigError):
        repair_spans(TEXT, glued, align="sideways")  # type: ignore[arg-type]


def test_discontinuous_span_edges_are_trimmed():
    text = " Ana y  Luis "
    span = Span(0, 13, "P", fragments=((0, 4), (7, 13)))
    (fixed,) = repair_spans(text, [span]).spans
    assert fixed.fragments == ((1, 4), (7, 12))  # inner fragment edges are kept


def test_all_whitespace_span_cannot_be_fixed():
    result = repair_spans("a   b", [Span(1, 4, "X")])
    assert result.spans[0].key() == (1, 4, "X") and [p.kind for p in result.unfixed] == ["edge_whitespace"]
