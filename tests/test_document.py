import pytest
from hypothesis import given
from hypothesis import strategies as st

from clinideid.document import Document, Span, find_overlaps, has_overlaps, relabel, sort_spans
from clinideid.errors import SpanError


def test_span_validation():
    with pytest.raises(SpanError):
        Span(5, 5, "DATE")
    with pytest.raises(SpanError):
        Span(-1, 3, "DATE")
    with pytest.raises(SpanError):
        Span(0, 3, "")
    with pytest.raises(SpanError):
        Span(0, 3, "DATE", score=1.5)


def test_document_checks_offsets_and_text():
    text = "Paciente Juan Pérez, 70 años."
    doc = Document("d1", text, spans=(Span(9, 19, "PATIENT", text="Juan Pérez"),))
    assert doc.span_text(doc.spans[0]) == "Juan Pérez"
    with pytest.raises(SpanError, match="beyond the text length"):
        Document("d1", text, spans=(Span(9, 100, "PATIENT"),))
    with pytest.raises(SpanError, match="does not match") as err:
        Document("d1", text, spans=(Span(9, 19, "PATIENT", text="Ana López"),))
    # never echo document text in errors
    assert "Juan" not in str(err.value) and "Ana" not in str(err.value)


def test_discontinuous_span():
    text = "left and right lung"
    s = Span(0, 19, "X", fragments=((15, 19), (0, 4)), text="left lung")
    assert s.fragments == ((0, 4), (15, 19))
    assert s.is_discontinuous
    doc = Document("d", text, spans=(s,))
    assert doc.span_text(s) == "left lung"
    with pytest.raises(SpanError):
        Span(0, 10, "X", fragments=((0, 5), (3, 10)))
    with pytest.raises(SpanError):
        Span(0, 12, "X", fragments=((0, 5), (7, 10)))


def test_spans_are_sorted_and_overlaps_found():
    spans = [Span(10, 15, "A"), Span(0, 5, "B"), Span(3, 8, "C"), Span(0, 2, "D")]
    assert [s.label for s in sort_spans(spans)] == ["B", "D", "C", "A"]
    pairs = {(a.label, b.label) for a, b in find_overlaps(spans)}
    assert pairs == {("B", "D"), ("B", "C")}
    assert has_overlaps(spans)
    assert not has_overlaps([Span(0, 2, "A"), Span(2, 4, "B")])


def test_relabel():
    doc = Document("d", "abc def", spans=(Span(0, 3, "NOMBRE"),))
    assert relabel(doc, {"NOMBRE": "PATIENT"}).spans[0].label == "PATIENT"


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 20)), max_size=30))
def test_find_overlaps_matches_brute_force(pairs):
    spans = [Span(a, a + n, "L") for a, n in pairs]
    fast = {(a.key(), b.key()) for a, b in find_overlaps(spans)}
    fast |= {(b, a) for a, b in fast}
    brute = {
        (a.key(), b.key())
        for i, a in enumerate(spans)
        for j, b in enumerate(spans)
        if i != j and a.overlaps(b)
    }
    assert fast == brute
