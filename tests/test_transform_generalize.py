"""Date generalisation strategies and HIPAA age aggregation."""

from __future__ import annotations

import datetime as dt

import pytest

from clinideid.errors import ConfigError
from clinideid.transform.ages import age_value, aggregate_age
from clinideid.transform.dates import parse_date
from clinideid.transform.generalize import GeneralizeContext, available_strategies, build_generalizer


def gen(strategy: str, text: str, language: str = "en", **kwargs) -> str | None:
    options = {k: v for k, v in kwargs.items() if k not in ("reference_date", "anchor")}
    gctx = GeneralizeContext(language, kwargs.get("reference_date"), kwargs.get("anchor"))
    parsed = parse_date(text, language)
    assert parsed is not None
    return build_generalizer(strategy, **options).generalize(parsed, gctx)


def test_strategies_are_registered():
    assert set(available_strategies()) == {"year", "quarter", "age_group", "relative", "dictionary", "interval"}
    with pytest.raises(ConfigError, match="unknown date strategy"):
        build_generalizer("decade")


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("12/03/2019", "es", "2019"),
        ("March 2019", "en", "2019"),
        ("2019", "en", "2019"),
        ("12/03", "es", None),
    ],
)
def test_year(text, language, expected):
    assert gen("year", text, language) == expected


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("12/05/2019", "en", "Q4 2019"),
        ("12/05/2019", "es", "2.º trimestre de 2019"),
        ("3 janvier 2019", "fr", "1er trimestre 2019"),
        ("3 août 2019", "fr", "3e trimestre 2019"),
        ("12 марта 2019", "ru", "1-й квартал 2019 г."),
        ("2019", "en", "2019"),
    ],
)
def test_quarter(text, language, expected):
    assert gen("quarter", text, language) == expected


def test_quarter_template():
    assert gen("quarter", "2019-05-12", "en", template="{year}-Q{q}") == "2019-Q2"


@pytest.mark.parametrize(
    ("birth", "language", "band", "expected"),
    [
        ("1975-06-15", "en", 10, "40-49 years"),
        ("1975-06-15", "es", 5, "40-44 años"),
        ("1975-06-16", "en", 10, "40-49 years"),
        ("1925-01-01", "ru", 10, "90 лет и старше"),
        ("1931-01-02", "en", 10, "80-89 years"),
        ("1930-01-01", "it", 10, "90 anni e oltre"),
    ],
)
def test_age_group(birth, language, band, expected):
    assert gen("age_group", birth, language, band=band, reference_date=dt.date(2020, 1, 1)) == expected


def test_age_group_needs_reference_and_past_birth():
    assert gen("age_group", "1975-06-15", "en") is None
    assert gen("age_group", "2025-06-15", "en", reference_date=dt.date(2020, 1, 1)) is None
    with pytest.raises(ConfigError):
        build_generalizer("age_group", band=0)


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("15/03/2019", "es", "día +12"),
        ("01/03/2019", "es", "día -2"),
        ("03/03/2019", "en", "day 0"),  # MDY: March 3
        ("13/03", "es", "día +10"),
        ("April 2019", "en", "month +1"),
        ("2018", "de", "Jahr -1"),
    ],
)
def test_relative(text, language, expected):
    assert gen("relative", text, language, anchor=dt.date(2019, 3, 3)) == expected


def test_relative_needs_anchor():
    assert gen("relative", "15/03/2019", "es") is None


def test_dictionary_default_and_configured():
    assert gen("dictionary", "12/03/2019", "es") == "principios de 2019"
    assert gen("dictionary", "July 2019", "en") == "mid-2019"
    assert gen("dictionary", "3. Dezember 2019", "de") == "Ende 2019"
    seasons = {m: ("winter" if m in (12, 1, 2) else "spring" if m < 6 else "summer" if m < 9 else "autumn")
               for m in range(1, 13)}  # fmt: skip
    entries = {m: f"{s} {{year}}" for m, s in seasons.items()}
    assert gen("dictionary", "2019-07-04", "en", entries=entries) == "summer 2019"
    assert gen("dictionary", "12/03", "es", entries=entries) is None  # needs a year the date lacks
    with pytest.raises(ConfigError, match="lacks months"):
        build_generalizer("dictionary", entries={1: "x"})


# --- ages ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("92", "en", "90+"),
        ("92 years", "en", "90+ years"),
        ("92-year-old", "en", "90+-year-old"),
        ("92 años", "es", "90 o más años"),
        ("92", "es", "90 o más"),
        ("93 anni", "it", "90 anni e oltre"),
        ("95 лет", "ru", "90 лет и старше"),
        ("91 ans", "fr", "90 ans et plus"),
        ("99 Jahre", "de", "90 Jahre und älter"),
        ("ninety-two", "en", "90+"),
        ("89", "en", None),
        ("45 años", "es", None),
        ("100 days", "en", None),  # not an age in years
        ("95 meses", "es", None),
    ],
)
def test_aggregate_age(text, language, expected):
    assert aggregate_age(text, language) == expected


def test_age_threshold_and_phrases():
    assert aggregate_age("85", "en", threshold=80) == "81+"
    assert aggregate_age("85 años", "es", threshold=80) == "81 o más años"
    assert aggregate_age("92", "en", phrases={"en": {"bare": "elderly"}}) == "elderly"
    assert age_value("edad: 93 años") == 93
    assert age_value("3 months") is None
