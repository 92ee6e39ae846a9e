"""Date parsing with format memory, keyed shifting, interval preservation and format round trips."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clinideid.errors import ConfigError
from clinideid.transform import calendar_names as cn
from clinideid.transform.dates import DateOptions, date_offset, parse_date, shift_date, shift_date_text

KEY = bytes(range(32))


@pytest.mark.parametrize(
    ("text", "language", "value", "precision"),
    [
        ("12/03/2019", "es", dt.date(2019, 3, 12), "day"),
        ("03/12/2019", "en", dt.date(2019, 3, 12), "day"),
        ("13/03/2019", "en", dt.date(2019, 3, 13), "day"),  # invalid as MDY: read as DMY
        ("12.03.2019", "de", dt.date(2019, 3, 12), "day"),
        ("12-03-19", "it", dt.date(2019, 3, 12), "day"),
        ("2019-03-12", "fr", dt.date(2019, 3, 12), "day"),
        ("20190312", "en", dt.date(2019, 3, 12), "day"),
        ("2019-03-12T14:35:00Z", "en", dt.date(2019, 3, 12), "day"),
        ("12/03/2019 14:35", "es", dt.date(2019, 3, 12), "day"),
        ("12 March 2019", "en", dt.date(2019, 3, 12), "day"),
        ("March 12th, 2019", "en", dt.date(2019, 3, 12), "day"),
        ("Tuesday, March 12, 2019", "en", dt.date(2019, 3, 12), "day"),
        ("12-Mar-19", "en", dt.date(2019, 3, 12), "day"),
        ("12 de marzo de 2019", "es", dt.date(2019, 3, 12), "day"),
        ("12 marzo 2019", "it", dt.date(2019, 3, 12), "day"),
        ("1er janvier 2019", "fr", dt.date(2019, 1, 1), "day"),
        ("le 3 févr. 2019 à 14h35", "fr", dt.date(2019, 2, 3), "day"),
        ("3. März 2019", "de", dt.date(2019, 3, 3), "day"),
        ("12 марта 2019 г.", "ru", dt.date(2019, 3, 12), "day"),
        ("12 МАРТА 2019", "ru", dt.date(2019, 3, 12), "day"),
        ("в марте 2019 года", "ru", dt.date(2019, 3, 15), "month"),
        ("March 2019", "en", dt.date(2019, 3, 15), "month"),
        ("marzo de 2019", "es", dt.date(2019, 3, 15), "month"),
        ("03/2019", "es", dt.date(2019, 3, 15), "month"),
        ("03/19", "es", dt.date(2019, 3, 15), "month"),
        ("10/92", "en", dt.date(1992, 10, 15), "month"),
        ("Mar '19", "en", dt.date(2019, 3, 15), "month"),
        ("2019", "en", dt.date(2019, 7, 1), "year"),
        ("12/03", "es", dt.date(2000, 3, 12), "day_month"),
        ("12 марта", "ru", dt.date(2000, 3, 12), "day_month"),
        ("14:35", "en", dt.date(2000, 1, 1), "time"),
    ],
)
def test_parse_forms(text, language, value, precision):
    parsed = parse_date(text, language)
    assert parsed is not None
    assert (parsed.value, parsed.precision) == (value, precision)
    assert parsed.render(parsed.value) == text  # the format reproduces the original exactly


@pytest.mark.parametrize(
    "text", ["yesterday", "Q2 2019", "32/01/2019", "2019-13-01", "12th", "1990s", "", "abc 12"]
)
def test_unparseable(text):
    assert parse_date(text, "en") is None


def test_order_option_and_pivot():
    assert parse_date("03/04/2019", "en").value == dt.date(2019, 3, 4)
    assert parse_date("03/04/2019", "en", DateOptions(order="DMY")).value == dt.date(2019, 4, 3)
    assert parse_date("03/04/45", "es").value.year == 1945
    assert parse_date("03/04/45", "es", DateOptions(pivot=60)).value.year == 2045
    assert parse_date("03/04/12", "es").value.year == 2012
    with pytest.raises(ConfigError):
        DateOptions(order="YMD")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "language", "days", "expected"),
    [
        ("12/03/2019", "es", 40, "21/04/2019"),
        ("3/4/2019", "es", 40, "13/5/2019"),  # no zero padding stays unpadded
        ("12-Mar-19", "en", 40, "21-Apr-19"),  # 2-digit years stay 2-digit
        ("12 марта 2019 г.", "ru", 40, "21 апреля 2019 г."),  # declined month names stay declined
        ("в марте 2019 года", "ru", 40, "в апреле 2019 года"),
        ("12 МАРТА 2019", "ru", 40, "21 АПРЕЛЯ 2019"),
        ("MARZO 2019", "es", 40, "ABRIL 2019"),  # case kept
        ("le 3 févr. 2019", "fr", 30, "le 5 mars 2019"),  # "mars" is not abbreviated: no dot
        ("3 fevrier 2019", "fr", 40, "15 mars 2019"),  # accentless writing kept
        ("1er janvier 2019", "fr", 40, "10 février 2019"),
        ("3. März 2019", "de", 40, "12. April 2019"),
        ("Monday, March 11th, 2019", "en", 40, "Saturday, April 20th, 2019"),
        ("12.03.2019, 14:35 Uhr", "de", -1, "11.03.2019, 14:35 Uhr"),  # attached time kept
        ("March 2019", "en", 40, "April 2019"),  # the 15th moves: month-year stays month-year
        ("03/19", "es", -40, "02/19"),
        ("12/31/99", "en", 1, "01/01/00"),
        ("28/02", "es", 1, "29/02"),  # year-less dates use a leap reference year
    ],
)
def test_shift_keeps_format(text, language, days, expected):
    assert shift_date_text(text, days, language) == expected


def test_date_offset_is_keyed_ranged_and_never_zero():
    offsets = {date_offset(KEY, f"patient:{i}") for i in range(300)}
    assert 0 not in offsets
    assert all(30 <= abs(o) <= 365 for o in offsets)
    assert any(o < 0 for o in offsets) and any(o > 0 for o in offsets)
    assert date_offset(KEY, "p1") == date_offset(KEY, "p1")
    assert [date_offset(KEY, f"p{i}") for i in range(20)] != [
        date_offset(bytes(16), f"p{i}") for i in range(20)
    ]
    assert date_offset(KEY, "p", min_days=1, max_days=1, direction="past") == -1
    with pytest.raises(ConfigError):
        date_offset(KEY, "p", min_days=0)


# --- property tests: random dates written in many formats and languages -------------------------------


def _numeric(fmt: str):
    def render(d: dt.date) -> str:
        return (
            fmt.replace("DD", f"{d.day:02d}")
            .replace("MM", f"{d.month:02d}")
            .replace("YYYY", f"{d.year:04d}")
            .replace("YY", f"{d.year % 100:02d}")
        )

    return render


def _named(language: str, form: str, template: str):
    def render(d: dt.date) -> str:
        month = cn.month_name(language, form, d.month)
        return template.format(d=d.day, m=month, y=d.year)

    return render


FORMATS = [
    ("en", _numeric("MM/DD/YYYY")),
    ("es", _numeric("DD/MM/YYYY")),
    ("de", _numeric("DD.MM.YYYY")),
    ("it", _numeric("DD-MM-YYYY")),
    ("fr", _numeric("YYYY-MM-DD")),
    ("es", _numeric("DD/MM/YY")),
    ("en", _named("en", "full", "{m} {d}, {y}")),
    ("en", _named("en", "abbr", "{d}-{m}-{y}")),
    ("es", _named("es", "full", "{d} de {m} de {y}")),
    ("it", _named("it", "full", "{d} {m} {y}")),
    ("fr", _named("fr", "full", "{d} {m} {y}")),
    ("de", _named("de", "full", "{d}. {m} {y}")),
    ("ru", _named("ru", "gen", "{d} {m} {y} г.")),
    ("ru", _named("ru", "gen", "{d} {m} {y} года")),
]

# within the default 2-digit-year window (1930-2029) even after a shift of up to a year
dates = st.dates(min_value=dt.date(1931, 1, 1), max_value=dt.date(2028, 12, 31))


@given(
    fmt=st.sampled_from(FORMATS),
    first=dates,
    second=dates,
    scope=st.text(min_size=1, max_size=8),
)
@settings(max_examples=300, deadline=None)
def test_shift_preserves_intervals_and_round_trips(fmt, first, second, scope):
    language, render = fmt
    days = date_offset(KEY, scope)
    a, b = parse_date(render(first), language), parse_date(render(second), language)
    assert a is not None and b is not None
    assert (a.value, b.value) == (first, second)
    sa, sb = shift_date(a, days), shift_date(b, days)
    assert sa is not None and sb is not None
    ra, rb = parse_date(sa, language), parse_date(sb, language)
    assert ra is not None and rb is not None
    # the shifted text parses again with the same format ...
    assert ra.format.signature() == a.format.signature()
    assert sa == render(first + dt.timedelta(days=days))
    # ... and the interval between the two dates is unchanged
    assert (rb.value - ra.value) == (second - first)


@given(
    month=st.integers(1, 12),
    year=st.integers(1960, 2040),
    days=st.integers(30, 365),
    sign=st.sampled_from([-1, 1]),
)
def test_month_year_moves_to_another_month(month, year, days, sign):
    text = f"{cn.month_name('es', 'full', month)} de {year}"
    shifted = shift_date_text(text, sign * days, "es")
    assert shifted is not None and shifted != text
    assert parse_date(shifted, "es").precision == "month"
