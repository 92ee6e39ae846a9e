"""The operator contracts: redact, tag, numbered_tag, mask, hash, surrogate, keep, date_shift,
date_generalize and age."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.transform.base import OperatorContext, available_operators, build_operator

KEY = bytes(range(32))


def make(text: str, marked: list[tuple[str, str]], language: str = "en", metadata=None) -> Document:
    """A document whose spans are the given (label, substring) pairs, found left to right."""
    spans, pos = [], 0
    for label, fragment in marked:
        start = text.index(fragment, pos)
        spans.append(Span(start, start + len(fragment), label))
        pos = start + len(fragment)
    return Document("doc1", text, language=language, metadata=metadata or {}, spans=spans)


def ctx_for(doc: Document, key: bytes | None = KEY, scope: str = "corpus") -> OperatorContext:
    return OperatorContext(
        document=doc, spans=doc.spans, key=key, scope_id=scope, language=doc.language or "en"
    )


def replace_all(doc: Document, name: str, key: bytes | None = KEY, **options) -> list[str]:
    op = build_operator(name, **options)
    ctx = ctx_for(doc, key)
    return [op.replace(s, ctx) for s in doc.spans]


def test_registry_lists_builtins_and_rejects_unknown():
    assert {"redact", "tag", "numbered_tag", "mask", "hash", "surrogate", "keep", "date_shift",
            "date_generalize", "age"} <= set(available_operators())  # fmt: skip
    with pytest.raises(ConfigError, match="unknown operator"):
        build_operator("shred")
    with pytest.raises(ConfigError, match="bad options"):
        build_operator("mask", colour="red")
    with pytest.raises(ConfigError, match="unknown surrogate options"):
        build_operator("surrogate", colour="red")


def test_keep_and_redact():
    doc = make("Seen by John\nSmith today", [("DOCTOR", "John\nSmith")])
    assert replace_all(doc, "keep") == ["John\nSmith"]
    assert replace_all(doc, "redact") == [""]
    assert replace_all(doc, "redact", keep_whitespace=True) == ["\n"]


def test_tag_levels_and_template():
    doc = make("John Smith on 2019-03-12", [("PATIENT", "John Smith"), ("DATE", "2019-03-12")])
    assert replace_all(doc, "tag") == ["[NAME]", "[DATE]"]
    assert replace_all(doc, "tag", level="subcategory") == ["[PATIENT]", "[DATE]"]
    assert replace_all(doc, "tag", template="<{category}:{subcategory}>") == ["<NAME:PATIENT>", "<DATE:DATE>"]
    with pytest.raises(ConfigError):
        build_operator("tag", level="binary")
    with pytest.raises(ConfigError, match="template"):
        build_operator("tag", template="[{nope}]")


def test_numbered_tag_is_consistent_and_ordered_by_first_appearance():
    doc = make(
        "Jane Roe met John Smith. JOHN SMITH called jane roe. Dr. Who saw John Smith.",
        [("PATIENT", "Jane Roe"), ("PATIENT", "John Smith"), ("PATIENT", "JOHN SMITH"),
         ("PATIENT", "jane roe"), ("DOCTOR", "Who"), ("PATIENT", "John Smith")],
    )  # fmt: skip
    assert replace_all(doc, "numbered_tag") == [
        "[PATIENT-1]", "[PATIENT-2]", "[PATIENT-2]", "[PATIENT-1]", "[DOCTOR-1]", "[PATIENT-2]",
    ]  # fmt: skip
    # at category level doctors and patients share one numbering
    assert replace_all(doc, "numbered_tag", level="category")[4] == "[NAME-3]"
    # order of replacement calls does not matter: numbers come from ctx.spans only
    op, ctx = build_operator("numbered_tag"), ctx_for(doc)
    assert op.replace(doc.spans[-1], ctx) == "[PATIENT-2]"  # called before any other span


def test_mask():
    doc = make("SSN 123-45-6789 ok", [("SSN", "123-45-6789")])
    assert replace_all(doc, "mask") == ["*" * 11]
    assert replace_all(doc, "mask", keep_separators=True) == ["***-**-****"]
    assert replace_all(doc, "mask", char="X") == ["X" * 11]
    with pytest.raises(ConfigError):
        build_operator("mask", char="**")


def test_hash_is_keyed_scoped_and_normalised():
    doc = make("John Smith and JOHN SMITH and Ann Lee", [("PATIENT", "John Smith"), ("PATIENT", "JOHN SMITH"),
                                                          ("PATIENT", "Ann Lee")])  # fmt: skip
    a, b, c = replace_all(doc, "hash")
    assert re.fullmatch(r"\[PATIENT:[0-9a-f]{8}\]", a)
    assert a == b != c
    other_key = replace_all(doc, "hash", key=bytes(range(100, 116)))[0]
    assert other_key != a
    op = build_operator("hash", length=12)
    assert op.replace(doc.spans[0], ctx_for(doc, scope="document:x")) != op.replace(
        doc.spans[0], ctx_for(doc)
    )
    assert len(op.replace(doc.spans[0], ctx_for(doc))) == len("[PATIENT:]") + 12
    with pytest.raises(ConfigError):
        build_operator("hash", length=2)


def test_surrogate_operator_replaces_and_differs():
    doc = make("John Smith, phone 555-123-4567", [("PATIENT", "John Smith"), ("PHONE", "555-123-4567")])
    name, phone = replace_all(doc, "surrogate")
    assert name != "John Smith" and len(name.split()) == 2
    assert re.fullmatch(r"5\d\d-\d{3}-\d{4}", phone) and phone != "555-123-4567"


def test_date_shift_operator_and_fallback_counting():
    doc = make(
        "Seen 12/03/2019, again 15/03/2019, and last Christmas.",
        [("DATE", "12/03/2019"), ("DATE", "15/03/2019"), ("DATE", "last Christmas")],
        language="es",
    )
    op = build_operator("date_shift")
    ctx = ctx_for(doc, scope="patient:1")
    outs = [op.apply(s, ctx) for s in doc.spans]
    assert outs[0].text != "12/03/2019" and re.fullmatch(r"\d\d/\d\d/\d{4}", outs[0].text)
    assert outs[2].text == "[DATE]" and outs[2].operator == "tag" and "unparseable" in (outs[2].note or "")
    assert op.fallback_count == 1
    with pytest.raises(ConfigError):
        build_operator("date_shift", min_days=10, max_days=5)
    with pytest.raises(ConfigError, match="fallback"):
        build_operator("date_shift", fallback="surrogate")


def test_date_generalize_operator_strategies():
    doc = make(
        "Admitted 03/03/2019, born 15/06/1935, surgery 15/03/2019, follow-up someday.",
        [("DATE", "03/03/2019"), ("DATE", "15/06/1935"), ("DATE", "15/03/2019"), ("DATE", "someday")],
        language="es",
        metadata={"admission_date": "2019-03-03"},
    )
    assert replace_all(doc, "date_generalize") == ["2019", "1935", "2019", "[DATE]"]
    before = (dt.date(2019, 3, 3) - dt.date(1935, 6, 15)).days
    assert replace_all(doc, "date_generalize", strategy="relative")[:3] == [
        "día 0",
        f"día -{before}",
        "día +12",
    ]
    ages = replace_all(doc, "date_generalize", strategy="age_group", band=5)
    assert ages[1] == "80-84 años"
    assert replace_all(doc, "date_generalize", strategy="quarter", fallback="redact")[3] == ""
    # relative without metadata: the first date of the document is the anchor
    plain = make(
        "Day one 10/03/2019, later 12/03/2019", [("DATE", "10/03/2019"), ("DATE", "12/03/2019")], "es"
    )
    assert replace_all(plain, "date_generalize", strategy="relative") == ["día 0", "día +2"]
    with pytest.raises(ConfigError):
        build_operator("date_generalize", reference_date="someday")


def test_age_operator():
    doc = make("Edad 92 años y 45 años", [("AGE", "92 años"), ("AGE", "45 años")], language="es")
    assert replace_all(doc, "age") == ["90 o más años", "45 años"]
    with pytest.raises(ConfigError):
        build_operator("age", threshold="old")


def test_operators_are_pure():
    doc = make("John Smith 12/03/2019 555-1234", [("PATIENT", "John Smith"), ("DATE", "12/03/2019"),
                                                   ("PHONE", "555-1234")])  # fmt: skip
    for name in ("surrogate", "hash", "date_shift", "numbered_tag"):
        assert replace_all(doc, name) == replace_all(doc, name)


@pytest.mark.parametrize(
    ("operator", "template"),
    [
        ("tag", "{label.__class__}"),
        ("tag", "[{label.__class__.__mro__}]"),
        ("tag", "{label[0]}"),
        ("tag", "{label!r}"),
        ("tag", "{}"),
        ("tag", "{0}"),
        ("tag", "{label:{category.__class__}}"),
        ("tag", "{label:>999999999}"),
        ("tag", "[{label"),
        ("tag", "[{label}}"),
        ("numbered_tag", "[{label}-{n.__class__}]"),
        ("numbered_tag", "[{category}-{n}]"),
        ("hash", "[{digest.__init__.__globals__}]"),
    ],
)
def test_templates_only_take_the_documented_placeholders(operator, template):
    with pytest.raises(ConfigError, match="template") as err:
        build_operator(operator, template=template)
    assert "{label}" in str(err.value)  # names the allowed placeholders


def test_allowed_fields_are_named_per_operator():
    with pytest.raises(ConfigError, match=r"\{label\}, \{category\}, \{subcategory\}"):
        build_operator("tag", template="{label.__class__}")
    with pytest.raises(ConfigError, match=r"\{label\}, \{n\}"):
        build_operator("numbered_tag", template="{n!a}")
    with pytest.raises(ConfigError, match=r"\{label\}, \{digest\}"):
        build_operator("hash", template="{digest[0]}")


def test_plain_format_specs_and_literal_braces_still_work():
    doc = make("John Smith", [("PATIENT", "John Smith")])
    assert replace_all(doc, "numbered_tag", template="{{{label}-{n:03d}}}") == ["{PATIENT-001}"]
    assert replace_all(doc, "tag", template="[{label:<6}]") == ["[NAME  ]"]
    with pytest.raises(ConfigError, match="template"):
        build_operator("numbered_tag", template="{label:d}")  # a spec that does not fit the value


@pytest.mark.parametrize(
    "options",
    [
        {"strategy": "quarter", "template": "{year.__class__}"},
        {"strategy": "age_group", "template": "{lo[0]}"},
        {"strategy": "relative", "template": "{unit!r} {n}"},
        {"strategy": "dictionary", "entries": {m: "{year.real}" for m in range(1, 13)}},
    ],
)
def test_date_generalize_templates_are_checked_too(options):
    with pytest.raises(ConfigError, match=r"template|entry"):
        build_operator("date_generalize", **options)


def test_age_phrases_are_checked_too():
    with pytest.raises(ConfigError, match=r"\{n\}"):
        build_operator("age", phrases={"en": {"bare": "{n.__class__}"}})
    build_operator("age", phrases={"en": {"bare": "{n}+", "unit": "{n} years or more"}})
