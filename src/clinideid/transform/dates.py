"""Dates: parsing with exact format memory, keyed date shifting and re-rendering.

``parse_date`` recognises a date written in any common form (numeric with ``/ - .`` separators in DMY,
MDY or ISO order, 2- or 4-digit years, month names in en/es/it/fr/de/ru including Russian declined forms,
weekdays, ordinals, partial dates such as "March 2019", "03/19" or "2019", attached times) and returns
the value together with a ``DateFormat`` that renders any other date exactly the same way: same
separators, zero-padding, month-name language, grammatical form and case, 2-digit years kept 2-digit.
Every parse is verified by re-rendering the parsed value: a text whose format cannot be reproduced
exactly is reported unparseable (``None``) rather than rewritten loosely.

``date_offset`` derives a per-scope shift ``HMAC(key, scope)`` in a configurable range (never 0);
``shift_date`` applies it so intervals between dates of a scope are preserved. Partial dates shift a
representative day (the 15th of a month, 1 July of a year) and keep their precision.
"""

from __future__ import annotations

import datetime as dt
import re
from abc import ABC, abstractmethod
from calendar import monthrange
from dataclasses import dataclass
from typing import Literal

from clinideid.errors import ConfigError
from clinideid.transform import calendar_names as cn
from clinideid.transform.keys import KeyedRandom
from clinideid.transform.textcase import CasePattern, apply_case, case_pattern, is_cyrillic, strip_accents

Order = Literal["DMY", "MDY"]
Precision = Literal["day", "month", "year", "day_month", "month_only", "weekday", "time"]

#: precisions that carry a year
WITH_YEAR: frozenset[str] = frozenset({"day", "month", "year"})
MAX_DATE_CHARS = 80


def default_order(language: str) -> Order:
    """Numeric field order when a date is ambiguous: MDY for English (en-US), DMY elsewhere."""
    return "MDY" if language.lower().split("-")[0] == "en" and language.lower() != "en-gb" else "DMY"


# --- format parts ------------------------------------------------------------------------------------------


class Part(ABC):
    @abstractmethod
    def render(self, value: dt.date) -> str: ...

    def signature(self) -> tuple[object, ...]:
        """What the part is, without the original value (two dates in one format share signatures)."""
        return (type(self).__name__,)


@dataclass(frozen=True)
class Literal_(Part):
    text: str

    def render(self, value: dt.date) -> str:
        return self.text

    def signature(self) -> tuple[object, ...]:
        return ("lit", self.text)


@dataclass(frozen=True)
class Number(Part):
    """A numeric day, month or year. Years have ``width`` 2 or 4; days and months are zero-padded or not."""

    field: Literal["day", "month", "year"]
    width: int
    pad: bool = True

    def render(self, value: dt.date) -> str:
        n = {"day": value.day, "month": value.month, "year": value.year}[self.field]
        if self.field == "year":
            return f"{n % 100:02d}" if self.width == 2 else f"{n:04d}"
        return f"{n:02d}" if self.pad else str(n)

    def signature(self) -> tuple[object, ...]:
        return (self.field, self.width if self.field == "year" else self.pad)


def _styled(name: str, case: CasePattern, accents: bool) -> str:
    if not accents:
        name = strip_accents(name)
    return apply_case(name, case)


@dataclass(frozen=True)
class MonthName(Part):
    """A month name; ``dot``: an abbreviation written with a dot, kept only where the new month's
    abbreviation really is shorter than its full name ("févr." but "mars", "May")."""

    language: str
    form: str
    case: CasePattern
    accents: bool
    original_month: int
    original_text: str
    dot: bool = False

    def render(self, value: dt.date) -> str:
        if value.month == self.original_month:
            return self.original_text
        name = cn.month_name(self.language, self.form, value.month)
        dot = (
            self.dot
            and "full" in cn.MONTHS[self.language]
            and (name != cn.month_name(self.language, "full", value.month))
        )
        return _styled(name, self.case, self.accents) + ("." if dot else "")

    def signature(self) -> tuple[object, ...]:
        return ("month_name", self.language, self.form, self.case, self.dot)


@dataclass(frozen=True)
class WeekdayName(Part):
    language: str
    form: str
    case: CasePattern
    accents: bool
    offset: int  # written weekday minus the weekday of the parsed value (non-zero for year-less dates)
    original_weekday: int
    original_text: str

    def render(self, value: dt.date) -> str:
        weekday = (value.weekday() + self.offset) % 7
        if weekday == self.original_weekday:
            return self.original_text
        return _styled(cn.weekday_name(self.language, self.form, weekday), self.case, self.accents)

    def signature(self) -> tuple[object, ...]:
        return ("weekday", self.language, self.form, self.case)


_EN_SUFFIX = {1: "st", 2: "nd", 3: "rd"}


@dataclass(frozen=True)
class Ordinal(Part):
    """An ordinal mark after the day: English st/nd/rd/th, French "1er", Spanish/Italian "1º"."""

    style: Literal["en", "first_only"]
    mark: str  # "er", "º", "°"... for first_only; unused for en
    case: CasePattern

    def render(self, value: dt.date) -> str:
        day = value.day
        if self.style == "en":
            suffix = "th" if 10 <= day % 100 <= 20 else _EN_SUFFIX.get(day % 10, "th")
            return apply_case(suffix, self.case)
        return self.mark if day == 1 else ""

    def signature(self) -> tuple[object, ...]:
        return ("ordinal", self.style)


@dataclass(frozen=True)
class DateFormat:
    """How one date was written, as a sequence of parts; ``render`` writes another date the same way."""

    parts: tuple[Part, ...]

    def render(self, value: dt.date) -> str:
        return "".join(p.render(value) for p in self.parts)

    def signature(self) -> tuple[tuple[object, ...], ...]:
        return tuple(p.signature() for p in self.parts)


@dataclass(frozen=True)
class ParsedDate:
    """A parsed date: ``value`` (a representative day for partial dates), its precision and format."""

    value: dt.date
    precision: Precision
    format: DateFormat
    has_time: bool = False

    @property
    def has_year(self) -> bool:
        return self.precision in WITH_YEAR

    def render(self, value: dt.date) -> str:
        return self.format.render(value)


@dataclass(frozen=True)
class DateOptions:
    """How ambiguous dates are read.

    ``order``: DMY or MDY for all-numeric dates (None: by language); ``pivot``: 2-digit years below it are
    20xx, others 19xx; ``reference_year``: the placeholder year of dates written without one (a leap year
    so that 29 February parses).
    """

    order: Order | None = None
    pivot: int = 30
    reference_year: int = 2000

    def __post_init__(self) -> None:
        if self.order not in (None, "DMY", "MDY"):
            raise ConfigError(f"date order must be DMY or MDY, got {self.order!r}")
        if not 0 <= self.pivot <= 100:
            raise ConfigError(f"2-digit year pivot must be within 0-100, got {self.pivot}")
        if not 1 <= self.reference_year <= 9999:
            raise ConfigError(f"reference year must be within 1-9999, got {self.reference_year}")


# --- tokenising ---------------------------------------------------------------------------------------------

_TIME_RE = re.compile(
    r"""
    (?<![\d:.])
    (?:[01]?\d|2[0-3])
    (?:
        (?::|h\s?)[0-5]\d (?::[0-5]\d(?:[.,]\d+)?)?
        (?:\s*[AaPp]\.?\s?[Mm]\.?)?
        (?:\s*(?:Uhr|hrs?|horas?|h)\b)?
      | \.[0-5]\d \s*(?:Uhr|h)\b
      | \s*[AaPp]\.?\s?[Mm]\.?
    )
    (?:\s*(?:Z|[+-]\d{2}:?\d{2}|UTC|GMT|CET|CEST|MSK)\b)?
    (?!\w)
    """,
    re.VERBOSE,
)
_TOKEN_RE = re.compile(r"(\d+)|([^\W\d_]+)|(\s+)|(.)", re.DOTALL)

_EN_ORDINALS = frozenset({"st", "nd", "rd", "th"})
_FIRST_ONLY_ORDINALS = frozenset({"er", "º", "ª", "°"})


@dataclass
class _Tok:
    kind: Literal["num", "word", "space", "punct", "time"]
    text: str
    start: int
    role: str = "lit"  # lit | day | month | year | month_name | weekday | ordinal
    match: cn.NameMatch | None = None


def _tokenize(text: str) -> list[_Tok]:
    times = [(m.start(), m.end()) for m in _TIME_RE.finditer(text)]
    tokens: list[_Tok] = []
    pos = 0
    for start, end in [*times, (len(text), len(text))]:
        for m in _TOKEN_RE.finditer(text, pos, start):
            kind = ("num", "word", "space", "punct")[m.lastindex - 1]  # type: ignore[operator]
            tokens.append(_Tok(kind, m.group(), m.start()))  # type: ignore[arg-type]
        if end > start:
            tokens.append(_Tok("time", text[start:end], start))
        pos = end
    return tokens


# --- parsing ------------------------------------------------------------------------------------------------


class _Unparseable(Exception):
    pass


def parse_date(text: str, language: str = "en", options: DateOptions | None = None) -> ParsedDate | None:
    """The date ``text`` writes and how it is written, or ``None`` when it is not a recognisable date."""
    options = options or DateOptions()
    if not text or not text.strip() or len(text) > MAX_DATE_CHARS:
        return None
    lang = language.lower().split("-")[0]
    order = options.order or default_order(language)
    try:
        tokens = _tokenize(text)
        _classify_words(tokens, lang)
        precision, value = _assign_numbers(tokens, order, options)
        _check_ordinals(tokens)
        fmt = DateFormat(tuple(_merge_literals(_to_parts(tokens, value))))
    except (_Unparseable, ValueError, OverflowError):
        return None
    parsed = ParsedDate(value, precision, fmt, has_time=any(t.kind == "time" for t in tokens))
    return parsed if fmt.render(value) == text else None


def _classify_words(tokens: list[_Tok], lang: str) -> None:
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        after_number = prev is not None and prev.kind == "num"
        if tok.kind == "punct" and after_number and tok.text == "°":
            tok.role = "ordinal"
            continue
        if tok.kind != "word":
            continue
        low = tok.text.casefold()
        if (after_number and low in _EN_ORDINALS) or (after_number and low in _FIRST_ONLY_ORDINALS):
            tok.role = "ordinal"
        elif (m := cn.lookup_month(tok.text, lang, prefer_abbr=_abbr_context(tokens, i))) is not None:
            tok.role, tok.match = "month_name", m
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if m.form == "abbr" and nxt is not None and nxt.text == ".":
                nxt.role = "month_dot"
        elif (w := cn.lookup_weekday(tok.text, lang)) is not None:
            tok.role, tok.match = "weekday", w
        elif cn.is_connector(tok.text):
            tok.role = "lit"
        else:
            raise _Unparseable
    if sum(t.role == "month_name" for t in tokens) > 1 or sum(t.role == "weekday" for t in tokens) > 1:
        raise _Unparseable


def _abbr_context(tokens: list[_Tok], i: int) -> bool:
    """Whether a month word is joined to numbers like an abbreviation ("12-May-19", "May/2019")."""
    around = [tokens[j].text for j in (i - 1, i + 1) if 0 <= j < len(tokens)]
    return any(t in ("-", "/") for t in around)


def _year(tok: _Tok, pivot: int) -> int:
    n = int(tok.text)
    if len(tok.text) == 4:
        if not 1000 <= n <= 2999:
            raise _Unparseable
        return n
    if len(tok.text) == 2:
        return 2000 + n if n < pivot else 1900 + n
    raise _Unparseable


def _sep_before(tokens: list[_Tok], tok: _Tok) -> str:
    i = tokens.index(tok)
    return tokens[i - 1].text if i else ""


def _assign_numbers(tokens: list[_Tok], order: Order, options: DateOptions) -> tuple[Precision, dt.date]:
    nums = [t for t in tokens if t.kind == "num"]
    month_tok = next((t for t in tokens if t.role == "month_name"), None)
    if any(len(t.text) > 4 for t in nums):
        if len(nums) == 1 and len(nums[0].text) == 8 and month_tok is None:
            return _compact_iso(tokens, nums[0], order, options)
        raise _Unparseable
    if month_tok is not None:
        return _with_month_name(tokens, nums, month_tok, options)
    weekday = next((t for t in tokens if t.role == "weekday"), None)
    return _numeric(nums, order, options, has_time=any(t.kind == "time" for t in tokens), weekday=weekday)


def _compact_iso(
    tokens: list[_Tok], tok: _Tok, order: Order, options: DateOptions
) -> tuple[Precision, dt.date]:
    """``20190312`` (or ``12032019``): split the one number token into year, month and day tokens."""
    i = tokens.index(tok)
    layouts = [
        ("year", "month", "day"),
        ("day", "month", "year") if order == "DMY" else ("month", "day", "year"),
    ]
    for roles in layouts:
        bounds = ((0, 4), (4, 6), (6, 8)) if roles[0] == "year" else ((0, 2), (2, 4), (4, 8))
        parts = [
            _Tok("num", tok.text[a:b], tok.start + a, role)
            for (a, b), role in zip(bounds, roles, strict=True)
        ]
        by_role = {p.role: p for p in parts}
        try:
            value = _make_date(_year(by_role["year"], options.pivot), int(by_role["month"].text),
                               int(by_role["day"].text))  # fmt: skip
        except _Unparseable:
            continue
        tokens[i : i + 1] = parts
        return "day", value
    raise _Unparseable


def _with_month_name(
    tokens: list[_Tok], nums: list[_Tok], month_tok: _Tok, options: DateOptions
) -> tuple[Precision, dt.date]:
    assert month_tok.match is not None
    month = month_tok.match.index
    day_tok: _Tok | None = None
    year_tok: _Tok | None = None
    if len(nums) == 1:
        (n,) = nums
        after_month = n.start > month_tok.start
        sep = _sep_before(tokens, n)
        if len(n.text) == 4 or int(n.text) > 31 or sep == "'" or (after_month and sep in ("-", "/", ".")):
            year_tok = n
        else:
            day_tok = n
    elif len(nums) == 2:
        four = [n for n in nums if len(n.text) == 4]
        if len(four) == 1:
            year_tok = four[0]
            day_tok = nums[0] if nums[1] is year_tok else nums[1]
        elif not four:
            day_tok, year_tok = nums
        else:
            raise _Unparseable
    elif len(nums) > 2:
        raise _Unparseable
    if day_tok is not None:
        if len(day_tok.text) > 2:
            raise _Unparseable
        day_tok.role = "day"
    if year_tok is not None:
        year_tok.role = "year"
    if day_tok is not None and year_tok is not None:
        return "day", _make_date(_year(year_tok, options.pivot), month, int(day_tok.text))
    if year_tok is not None:
        return "month", _make_date(_year(year_tok, options.pivot), month, 15)
    if day_tok is not None:
        return "day_month", _make_date(options.reference_year, month, int(day_tok.text))
    return "month_only", _make_date(options.reference_year, month, 15)


def _numeric(
    nums: list[_Tok], order: Order, options: DateOptions, *, has_time: bool, weekday: _Tok | None = None
) -> tuple[Precision, dt.date]:
    if not nums:
        if weekday is not None:  # "Tuesday": a reference day with that weekday; a shift moves the weekday
            assert weekday.match is not None
            base = dt.date(options.reference_year, 1, 3)
            return "weekday", base + dt.timedelta(days=(weekday.match.index - base.weekday()) % 7)
        if has_time:
            return "time", dt.date(options.reference_year, 1, 1)
        raise _Unparseable
    if len(nums) == 1:
        (y,) = nums
        if len(y.text) != 4:
            raise _Unparseable
        y.role = "year"
        return "year", dt.date(_year(y, options.pivot), 7, 1)
    if len(nums) == 2:
        a, b = nums
        if len(a.text) == 4:  # 2019-03
            a.role, b.role = "year", "month"
            return "month", _make_date(_year(a, options.pivot), int(b.text), 15)
        if len(b.text) == 4:  # 03/2019
            a.role, b.role = "month", "year"
            return "month", _make_date(_year(b, options.pivot), int(a.text), 15)
        if len(a.text) > 2 or len(b.text) > 2:
            raise _Unparseable
        x, y = int(a.text), int(b.text)
        if y > 31 or (order == "DMY" and y > 12 and x <= 12 and len(b.text) == 2):
            a.role, b.role = "month", "year"  # 03/19, 10/92: month and 2-digit year
            return "month", _make_date(_year(b, options.pivot), x, 15)
        first, second = ("month", "day") if order == "MDY" else ("day", "month")
        if (order == "MDY" and x > 12) or (order == "DMY" and y > 12):
            first, second = second, first
        a.role, b.role = first, second
        day, month = (x, y) if first == "day" else (y, x)
        return "day_month", _make_date(options.reference_year, month, day)
    if len(nums) == 3:
        a, b, c = nums
        if len(a.text) == 4:
            a.role, b.role, c.role = "year", "month", "day"
            return "day", _make_date(_year(a, options.pivot), int(b.text), int(c.text))
        if len(c.text) not in (2, 4) or len(a.text) > 2 or len(b.text) > 2:
            raise _Unparseable
        year = _year(c, options.pivot)
        c.role = "year"
        orders = ("MDY", "DMY") if order == "MDY" else ("DMY", "MDY")
        for o in orders:
            day_tok, month_tok = (b, a) if o == "MDY" else (a, b)
            try:
                value = _make_date(year, int(month_tok.text), int(day_tok.text))
            except _Unparseable:
                continue
            day_tok.role, month_tok.role = "day", "month"
            return "day", value
        raise _Unparseable
    raise _Unparseable


def _check_ordinals(tokens: list[_Tok]) -> None:
    for i, tok in enumerate(tokens):
        if tok.role == "ordinal" and tokens[i - 1].role != "day":
            raise _Unparseable


def _make_date(year: int, month: int, day: int) -> dt.date:
    if not (1 <= month <= 12) or not (1 <= day <= monthrange(year, month)[1]):
        raise _Unparseable
    return dt.date(year, month, day)


def _to_parts(tokens: list[_Tok], value: dt.date) -> list[Part]:
    parts: list[Part] = []
    default_pad = _default_padding(tokens)
    for i, tok in enumerate(tokens):
        if tok.role == "month_dot":
            continue
        if tok.role in ("day", "month", "year"):
            if tok.role == "year" and len(tok.text) not in (2, 4):
                raise _Unparseable
            width = len(tok.text)
            pad = width == 2 and (tok.text.startswith("0") or default_pad)
            parts.append(Number(tok.role, width, pad))  # type: ignore[arg-type]
        elif tok.role == "month_name":
            assert tok.match is not None
            dot = i + 1 < len(tokens) and tokens[i + 1].role == "month_dot"
            parts.append(
                MonthName(tok.match.language, tok.match.form, case_pattern(tok.text),
                          _keeps_accents(tok.text, tok.match), tok.match.index,
                          tok.text + ("." if dot else ""), dot)
            )  # fmt: skip
        elif tok.role == "weekday":
            assert tok.match is not None
            offset = (tok.match.index - value.weekday()) % 7
            parts.append(
                WeekdayName(tok.match.language, tok.match.form, case_pattern(tok.text),
                            _keeps_accents(tok.text, tok.match), offset, tok.match.index, tok.text)
            )  # fmt: skip
        elif tok.role == "ordinal":
            low = tok.text.casefold()
            if low in _EN_ORDINALS:
                parts.append(Ordinal("en", "", case_pattern(tok.text)))
            else:
                parts.append(Ordinal("first_only", tok.text, case_pattern(tok.text)))
        else:
            parts.append(Literal_(tok.text))
    has_day = any(isinstance(p, Number) and p.field == "day" for p in parts)
    only_weekday = not any(isinstance(p, Number | MonthName) for p in parts)
    if any(isinstance(p, WeekdayName) for p in parts) and not (has_day or only_weekday):
        raise _Unparseable  # "Tuesday, March 2019": a weekday needs a day to follow the shift
    return parts


def _default_padding(tokens: list[_Tok]) -> bool:
    """Whether an ambiguous 2-digit day or month ("12") counts as zero-padded: yes if another field of
    the date is written "0x", no if one is written with one digit, else yes for all-numeric dates and no
    for dates with a month name ("12 March" but "3 March")."""
    fields = [t.text for t in tokens if t.role in ("day", "month")]
    if any(len(f) == 2 and f.startswith("0") for f in fields):
        return True
    if any(len(f) == 1 for f in fields):
        return False
    return not any(t.role == "month_name" for t in tokens)


def _keeps_accents(written: str, match: cn.NameMatch) -> bool:
    if is_cyrillic(written):
        return True
    return not (strip_accents(match.spelling) != match.spelling and strip_accents(written) == written)


def _merge_literals(parts: list[Part]) -> list[Part]:
    merged: list[Part] = []
    for part in parts:
        if isinstance(part, Literal_) and merged and isinstance(merged[-1], Literal_):
            merged[-1] = Literal_(merged[-1].text + part.text)
        else:
            merged.append(part)
    return merged


# --- shifting -----------------------------------------------------------------------------------------------


def date_offset(
    key: bytes,
    scope_id: str,
    *,
    min_days: int = 30,
    max_days: int = 365,
    direction: Literal["both", "past", "future"] = "both",
) -> int:
    """The keyed day offset of a scope: ``HMAC(key, scope)`` → ``±[min_days, max_days]``, never 0.

    The default minimum of 30 days makes every month-year date move to another month.
    """
    if not 1 <= min_days <= max_days:
        raise ConfigError(f"date shift needs 1 <= min_days <= max_days, got {min_days} and {max_days}")
    if direction not in ("both", "past", "future"):
        raise ConfigError(f"date shift direction must be both, past or future, got {direction!r}")
    rng = KeyedRandom(key, "date-shift", scope_id)
    magnitude = rng.randint(min_days, max_days)
    sign = {"past": -1, "future": 1}.get(direction) or rng.choice((-1, 1))
    return sign * magnitude


def shifted_value(parsed: ParsedDate, days: int) -> dt.date:
    """The representative day of ``parsed`` moved by ``days`` (raises ``OverflowError`` off the calendar)."""
    if parsed.precision == "time":
        return parsed.value
    return parsed.value + dt.timedelta(days=days)


def shift_date(parsed: ParsedDate, days: int) -> str | None:
    """``parsed`` moved by ``days``, written in its original format (``None`` when off the calendar)."""
    try:
        new = shifted_value(parsed, days)
    except OverflowError:
        return None
    if parsed.has_year and new.year < 1000:
        return None
    return parsed.render(new)


def shift_date_text(
    text: str, days: int, language: str = "en", options: DateOptions | None = None
) -> str | None:
    """``text`` moved by ``days`` in the same format, or ``None`` when it is not a parseable date."""
    parsed = parse_date(text, language, options)
    return None if parsed is None else shift_date(parsed, days)


def parse_anchor(value: object, language: str = "en", options: DateOptions | None = None) -> dt.date | None:
    """A reference date from metadata: a ``date``/``datetime``, an ISO string, or a written day-precision date."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return dt.date.fromisoformat(value.strip()[:10])
    except ValueError:
        pass
    parsed = parse_date(value.strip(), language, options)
    return parsed.value if parsed is not None and parsed.precision == "day" else None
