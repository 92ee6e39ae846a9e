"""Dates by role (birth, admission, other), the admission date as the relative anchor, and the
order-preserving date interval ("date dictionary")."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest

from clinideid.config import OperatorSpec, PipelineConfig
from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.pipeline import Deidentifier
from clinideid.transform.base import OperatorContext, build_operator
from clinideid.transform.date_roles import date_role
from clinideid.transform.dates import parse_date
from clinideid.transform.generalize import GeneralizeContext, build_generalizer

KEY = hashlib.sha256(b"date-roles-tests").digest()
OTHER_KEY = hashlib.sha256(b"another key").digest()


def make(text: str, dates: list[str], language: str, metadata=None, **span_fields) -> Document:
    spans, pos = [], 0
    for value in dates:
        start = text.index(value, pos)
        spans.append(Span(start, start + len(value), "DATE", **span_fields))
        pos = start + len(value)
    return Document("doc1", text, language=language, metadata=metadata or {}, spans=spans)


def replace_all(doc: Document, name: str, key: bytes | None = KEY, scope: str = "p1", **options) -> list[str]:
    op = build_operator(name, **options)
    ctx = OperatorContext(
        document=doc, spans=doc.spans, key=key, scope_id=scope, language=doc.language or "en"
    )
    return [op.apply(s, ctx).text for s in doc.spans]


# ---- roles ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "date", "language", "role"),
    [
        ("DOB: 03/04/1950", "03/04/1950", "en", "birth"),
        ("Date of birth 03/04/1950", "03/04/1950", "en", "birth"),
        ("Admitted on 12/03/2024 via ED", "12/03/2024", "en", "admission"),
        ("geb. 03.04.1950", "03.04.1950", "de", "birth"),
        ("Aufnahme am 12.03.2024", "12.03.2024", "de", "admission"),
        ("nato a Pavia il 03/04/1950", "03/04/1950", "it", "birth"),
        ("ricoverato il 12/03/2024", "12/03/2024", "it", "admission"),
        ("Дата рождения: 03.04.1950", "03.04.1950", "ru", "birth"),
        ("Иванов И.И., 03.04.1950 г.р.", "03.04.1950", "ru", "birth"),
        ("Дата поступления: 12.03.2024 10:40", "12.03.2024", "ru", "admission"),
        ("Fecha de nacimiento: 03/04/1950", "03/04/1950", "es", "birth"),
        ("ingresó el 12/03/2024", "12/03/2024", "es", "admission"),
        ("née le 03/04/1950", "03/04/1950", "fr", "birth"),
        ("admis le 12/03/2024", "12/03/2024", "fr", "admission"),
        ("Контроль 20.03.2024", "20.03.2024", "ru", "other"),
        ("Discharged 20/03/2024", "20/03/2024", "en", "other"),
    ],
)
def test_role_from_the_cue_around_the_date(text: str, date: str, language: str, role: str) -> None:
    doc = make(text, [date], language)
    assert date_role(doc.spans[0], doc.text) == role


def test_role_from_the_rule_or_an_attribute() -> None:
    doc = make("Field X 03.04.1950", ["03.04.1950"], "ru", explanation="ru/birth_dates/born")
    assert date_role(doc.spans[0], doc.text) == "birth"
    span = Span(0, 10, "DATE", attributes={"date_role": "admission"})
    assert date_role(span, "12.03.2024 something") == "admission"
    deid = Deidentifier.for_language("ru", KEY)
    note = Document("n", "Пациент 1956 г.р. поступил. Дата рождения: 14.07.1958.", language="ru")
    spans, _ = deid.detect(note)
    roles = {note.text[s.start : s.end]: date_role(s, note.text) for s in spans if s.label == "DATE"}
    assert roles == {"1956": "birth", "14.07.1958": "birth"}


# ---- age_group for birth dates only, other dates their own strategy --------------------------------------


def test_age_group_applies_to_birth_dates_only() -> None:
    doc = make(
        "Дата рождения: 14.07.1958. Дата поступления: 03.10.2023. Выписан 16.10.2023.",
        ["14.07.1958", "03.10.2023", "16.10.2023"],
        "ru",
    )
    # the reference date for the age is the admission date the note gives
    assert replace_all(doc, "date_generalize", strategy="age_group") == ["60-69 лет", "2023", "2023"]
    assert replace_all(doc, "date_generalize", strategy="age_group", other_dates="quarter")[1:] == [
        "4-й квартал 2023 г.",
        "4-й квартал 2023 г.",
    ]
    tagged = replace_all(doc, "date_generalize", strategy="age_group", other_dates=None)
    assert tagged[0] == "60-69 лет" and tagged[1:] == ["[DATE]", "[DATE]"]
    with pytest.raises(ConfigError, match="only birth dates"):
        build_operator("date_generalize", strategy="age_group", other_dates="age_group")


def test_date_by_role_operator_in_a_pipeline() -> None:
    config = PipelineConfig(
        language="ru",
        detectors=[{"type": "rules", "language": "ru"}],
        operators={
            "DATE": OperatorSpec(
                operator="date_by_role",
                options={
                    "roles": {
                        "birth": {"operator": "date_generalize", "strategy": "age_group", "band": 5},
                        "admission": "keep",
                        "default": {"operator": "date_generalize", "strategy": "relative"},
                    }
                },
            ),
            "default": OperatorSpec(operator="tag"),
        },
    )
    deid = Deidentifier(config, key=KEY)
    text = "Дата рождения: 14.07.1958\nДата поступления: 03.10.2023\nКоронарография 05.10.2023, выписан 16.10.2023."
    out = deid.deidentify(Document("n", text, language="ru")).text
    assert "65-69 лет" in out
    assert "Дата поступления: 03.10.2023" in out
    assert "день +2" in out and "день +13" in out
    assert "14.07.1958" not in out and "16.10.2023" not in out


def test_date_by_role_default_and_errors() -> None:
    op = build_operator("date_by_role")
    assert op.needs_key  # the default shifts non-birth dates
    doc = make(
        "DOB 03/04/1950, admitted on 12/03/2024, seen 14/03/2024",
        ["03/04/1950", "12/03/2024", "14/03/2024"],
        "en-GB",
    )
    birth, admitted, seen = replace_all(doc, "date_by_role")
    assert birth == "70-79 years"
    shifted = [parse_date(x, "en-GB").value for x in (admitted, seen)]
    assert (shifted[1] - shifted[0]).days == 2 and shifted[0] != dt.date(2024, 3, 12)
    with pytest.raises(ConfigError, match="unknown roles"):
        build_operator("date_by_role", roles={"death": "tag", "default": "tag"})
    with pytest.raises(ConfigError, match="default"):
        build_operator("date_by_role", roles={"birth": "tag"})
    with pytest.raises(ConfigError, match="unknown operator"):
        build_operator("date_by_role", roles={"default": "shred"})


# ---- relative: anchored on the admission date the note gives ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "dates", "language", "expected"),
    [
        (
            "Born 01/02/1950. Admitted on 03/10/2023. Surgery 03/12/2023.",
            ["01/02/1950", "03/10/2023", "03/12/2023"],
            "en",
            "day +2",
        ),
        (
            "Geb. 01.02.1950. Aufnahme am 10.03.2023. OP am 12.03.2023.",
            ["01.02.1950", "10.03.2023", "12.03.2023"],
            "de",
            "Tag +2",
        ),
        (
            "Nato il 01/02/1950. Ricoverato il 10/03/2023. Intervento il 12/03/2023.",
            ["01/02/1950", "10/03/2023", "12/03/2023"],
            "it",
            "giorno +2",
        ),
        (
            "Дата рождения 01.02.1950. Дата поступления: 10.03.2023. Операция 12.03.2023.",
            ["01.02.1950", "10.03.2023", "12.03.2023"],
            "ru",
            "день +2",
        ),
        (
            "Nacido el 01/02/1950. Ingresó el 10/03/2023. Cirugía 12/03/2023.",
            ["01/02/1950", "10/03/2023", "12/03/2023"],
            "es",
            "día +2",
        ),
        (
            "Né le 01/02/1950. Admis le 10/03/2023. Opéré le 12/03/2023.",
            ["01/02/1950", "10/03/2023", "12/03/2023"],
            "fr",
            "jour +2",
        ),
    ],
)
def test_relative_anchors_on_the_admission_date_in_the_text(text, dates, language, expected) -> None:
    doc = make(text, dates, language)
    out = replace_all(doc, "date_generalize", strategy="relative")
    assert out[1].endswith(" 0") and out[2] == expected
    # metadata still wins over the text
    with_meta = make(
        text, dates, language, metadata={"admission_date": "2023-03-11" if language != "en" else "2023-03-09"}
    )
    assert replace_all(with_meta, "date_generalize", strategy="relative")[2] != expected


# ---- the date dictionary: an order-preserving, keyed map into an interval ---------------------------------


def interval_map(values: list[str], key: bytes = KEY, **options) -> list[str]:
    gen = build_generalizer("interval", **options)
    return [gen.generalize(parse_date(v, "ru"), GeneralizeContext("ru", key=key)) for v in values]


def test_interval_keeps_order_and_format_across_documents() -> None:
    options = {
        "start": "2100-01-01",
        "end": "2189-12-31",
        "source_start": "1950-01-01",
        "source_end": "2029-12-31",
    }
    values = [
        "01.01.1950",
        "14.07.1958",
        "28.02.1990",
        "01.03.1990",
        "03.10.2023",
        "04.10.2023",
        "16.10.2023",
        "31.12.2029",
    ]
    mapped = interval_map(values, **options)
    days = [parse_date(m, "ru").value for m in mapped]
    assert days == sorted(days) and len(set(days)) == len(days)
    assert all(dt.date(2100, 1, 1) <= d <= dt.date(2189, 12, 31) for d in days)
    assert all(len(m) == len(v) and m[2] == "." and m[5] == "." for m, v in zip(mapped, values, strict=True))
    # deterministic, key-dependent, and the same in any document or scope of the batch
    assert interval_map(values, **options) == mapped
    assert interval_map(values, key=OTHER_KEY, **options) != mapped
    doc_a = make("Поступил 03.10.2023, выписан 16.10.2023.", ["03.10.2023", "16.10.2023"], "ru")
    doc_b = make("Контроль 04.10.2023.", ["04.10.2023"], "ru")
    a = replace_all(doc_a, "date_generalize", scope="patient-a", strategy="interval", **options)
    b = replace_all(doc_b, "date_generalize", scope="patient-b", strategy="interval", **options)
    assert a == [mapped[4], mapped[6]] and b == [mapped[5]]
    # a target shorter than the source window compresses: order is kept, close days may meet
    short = interval_map(values, **{**options, "end": "2101-12-31"})
    short_days = [parse_date(m, "ru").value for m in short]
    assert short_days == sorted(short_days) and len(set(short_days)) < len(values)
    # month and year precision keep their precision
    month, year = interval_map(["03.2023", "2023 г."], **options)
    assert parse_date(month, "ru").precision == "month" and parse_date(year, "ru").precision == "year"


def test_interval_outside_the_window_falls_back_and_needs_a_key() -> None:
    doc = make("Дата 03.10.1890 и 03.10.2023", ["03.10.1890", "03.10.2023"], "ru")
    out = replace_all(doc, "date_generalize", strategy="interval", source_start="1900-01-01")
    assert out[0] == "[DATE]" and out[1] != "03.10.2023"
    assert build_operator("date_generalize", strategy="interval").needs_key
    with pytest.raises(ConfigError, match="ISO date"):
        build_operator("date_generalize", strategy="interval", start="someday")
    with pytest.raises(ConfigError, match="start on or before"):
        build_operator("date_generalize", strategy="interval", start="2010-01-01", end="2000-01-01")
    config = PipelineConfig(
        language="ru",
        detectors=[{"type": "rules", "language": "ru"}],
        operators={"DATE": OperatorSpec(operator="date_generalize", options={"strategy": "interval"})},
    )
    with pytest.raises(ConfigError, match="secret key"):
        Deidentifier(config, key=None).deidentify(Document("n", "Дата 03.10.2023", language="ru"))


@pytest.mark.parametrize(("end", "strict"), [("2189-12-31", True), ("2101-12-31", False)])
def test_interval_is_monotone_on_every_day_of_the_window(end: str, strict: bool) -> None:
    gen = build_generalizer(
        "interval", start="2100-01-01", end=end, source_start="1950-01-01", source_end="2029-12-31"
    )
    day, previous = dt.date(1950, 1, 1), None
    while day <= dt.date(2029, 12, 31):
        mapped = gen.map_day(day, KEY)
        assert previous is None or (mapped > previous if strict else mapped >= previous)
        previous, day = mapped, day + dt.timedelta(days=1)
