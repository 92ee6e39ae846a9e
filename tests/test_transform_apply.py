"""apply_operators: right-to-left splicing, replacement offsets in the new text, overlap errors, reports."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clinideid.document import Document, Span
from clinideid.errors import ConfigError, SpanError
from clinideid.transform.apply import apply_operators, summarize
from clinideid.transform.base import Operator, OperatorContext, build_operator

KEY = bytes(range(32))


def test_offsets_point_at_the_replacements():
    text = "Dr. John Smith saw Ann Lee on 12/03/2019 in Boston."
    spans = [Span(4, 14, "DOCTOR", source="rules", explanation="title+name"), Span(19, 26, "PATIENT"),
             Span(30, 40, "DATE"), Span(44, 50, "CITY")]  # fmt: skip
    doc = Document("d", text, language="en", spans=spans)
    tag = build_operator("tag", level="subcategory")
    new, reps = apply_operators(doc, spans, lambda label: tag)
    assert new == "Dr. [DOCTOR] saw [PATIENT] on [DATE] in [CITY]."
    for rep in reps:
        assert new[rep.new_start : rep.new_end] == f"[{rep.label}]"
    first = reps[0]
    assert (first.start, first.end, first.source, first.explanation, first.operator) == (
        4, 14, "rules", "title+name", "tag",
    )  # fmt: skip
    assert "John" not in str(first.to_dict())  # the report never holds the original text


def test_mixed_operators_and_empty_replacements():
    text = "A John Smith B 555-1234 C"
    spans = [Span(2, 12, "PATIENT"), Span(15, 23, "PHONE")]
    doc = Document("d", text, spans=spans)
    ops = {"PATIENT": build_operator("redact"), "PHONE": build_operator("mask", keep_separators=True)}
    new, reps = apply_operators(doc, spans, ops.__getitem__)
    assert new == "A  B ***-**** C"
    assert (reps[0].new_start, reps[0].new_end) == (2, 2)
    assert new[reps[1].new_start : reps[1].new_end] == "***-****"


def test_overlapping_spans_raise_without_text():
    doc = Document("d", "John Smith Jr", spans=[])
    with pytest.raises(SpanError, match="overlap") as info:
        apply_operators(
            doc, [Span(0, 10, "PATIENT"), Span(5, 13, "PATIENT")], lambda _: build_operator("tag")
        )
    assert "Smith" not in str(info.value)
    with pytest.raises(SpanError, match="beyond"):
        apply_operators(doc, [Span(0, 40, "PATIENT")], lambda _: build_operator("tag"))


def test_discontinuous_span_first_fragment_replaced_rest_removed():
    text = "John and Mary Smith"
    span = Span(9, 19, "PATIENT", fragments=((9, 13), (14, 19)))
    doc = Document("d", text, spans=[span])
    new, reps = apply_operators(doc, [span], lambda _: build_operator("tag"))
    assert new == "John and [NAME] "
    assert new[reps[0].new_start : reps[0].new_end] == "[NAME]"


class Exploding(Operator):
    name = "exploding"

    def replace(self, span: Span, ctx: OperatorContext) -> str:
        raise RuntimeError("boom")


def test_a_failing_operator_never_leaves_phi_in_clear(caplog):
    doc = Document("d", "Call John now", spans=[])
    new, reps = apply_operators(doc, [Span(5, 9, "PATIENT")], lambda _: Exploding())
    assert new == "Call [NAME] now"
    assert reps[0].operator == "tag" and reps[0].note == "exploding failed"
    assert "John" not in caplog.text


def test_config_errors_propagate_and_context_defaults():
    doc = Document("d", "John", language="es", spans=[])
    with pytest.raises(ConfigError, match="--key-file"):
        apply_operators(doc, [Span(0, 4, "PATIENT")], lambda _: build_operator("surrogate"))
    with pytest.raises(ConfigError):
        apply_operators(doc, [Span(0, 4, "PATIENT")], lambda _: build_operator("tag"), {"colour": 1})


def test_summarize_counts_fallbacks():
    text = "on 12/03/2019 and on someday"
    spans = [Span(3, 13, "DATE"), Span(21, 28, "DATE")]
    doc = Document("d", text, language="es", spans=spans)
    op = build_operator("date_shift")
    _, reps = apply_operators(doc, spans, lambda _: op, {"key": KEY, "scope_id": "p"})
    summary = summarize(reps)
    assert summary["by_operator"] == {"date_shift": 1, "tag": 1}
    assert summary["fallbacks"] == {"date_shift: unparseable date": 1}


@given(
    st.text(alphabet="ab \n", min_size=1, max_size=60).flatmap(
        lambda text: st.tuples(
            st.just(text),
            st.lists(st.tuples(st.integers(0, len(text)), st.integers(1, 6)), max_size=8),
            st.sampled_from(["redact", "tag", "mask", "numbered_tag", "hash", "surrogate"]),
        )
    )
)
@settings(max_examples=200, deadline=None)
def test_replacement_offsets_property(args):
    text, raw, name = args
    spans, taken = [], set()
    for start, length in raw:
        end = min(start + length, len(text))
        if end > start and not taken & set(range(start, end)):
            taken |= set(range(start, end))
            spans.append(Span(start, end, "PATIENT"))
    doc = Document("d", text, spans=spans)
    op = build_operator(name)
    ctx = OperatorContext(document=doc, spans=doc.spans, key=KEY, scope_id="s")
    new, reps = apply_operators(doc, spans, lambda _: op, {"key": KEY, "scope_id": "s"})
    expected = {(s.start, s.end): op.replace(s, ctx) for s in spans}
    for rep in reps:
        assert new[rep.new_start : rep.new_end] == expected[(rep.start, rep.end)]
    # the text between replacements is the original text between spans
    old_gaps = [text[a.end : b.start] for a, b in itertools.pairwise(reps)]
    new_gaps = [new[a.new_end : b.new_start] for a, b in itertools.pairwise(reps)]
    assert old_gaps == new_gaps
