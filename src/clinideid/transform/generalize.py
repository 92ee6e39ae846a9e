"""Date generalisation strategies: year, quarter, age group, relative days, and a date dictionary.

Each strategy turns a ``ParsedDate`` into a coarser expression in the document's language, or ``None``
when the date cannot be generalised that way (the operator then falls back to its fallback operator and
counts it). Strategies are chosen by name per use case: ``year`` for statistics by year, ``quarter`` for
seasonal studies, ``age_group`` for birth dates, ``relative`` for timelines around an admission,
``dictionary`` for coarse wording such as "early 2019", ``interval`` for dates moved into a fixed period
in their chronological order.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from clinideid.errors import ConfigError
from clinideid.registry import Registry
from clinideid.transform.ages import over_phrase
from clinideid.transform.dates import ParsedDate


@dataclass(frozen=True)
class GeneralizeContext:
    """What a strategy may use besides the date: the language, a reference date for ages, an anchor."""

    language: str = "en"
    reference_date: dt.date | None = None
    anchor: dt.date | None = None
    #: the secret key, for strategies that need one (``needs_key``)
    key: bytes | None = field(default=None, repr=False)


def _lang(language: str, table: Mapping[str, Any]) -> str:
    base = language.lower().split("-")[0]
    return base if base in table else "en"


class Generalizer(ABC):
    name: ClassVar[str] = ""
    #: whether ``generalize`` reads ``GeneralizeContext.key``
    needs_key: ClassVar[bool] = False

    @abstractmethod
    def generalize(self, parsed: ParsedDate, gctx: GeneralizeContext) -> str | None:
        """The coarse expression for ``parsed``, or ``None`` when this strategy cannot handle it."""


#: date generalisation strategies by name (plug-ins: the ``clinideid.date_strategies`` entry-point group)
DATE_STRATEGIES: Registry[type[Generalizer]] = Registry("date strategy", "clinideid.date_strategies")


def _register(cls: type[Generalizer]) -> type[Generalizer]:
    return DATE_STRATEGIES.add(cls.name, cls)


def available_strategies() -> list[str]:
    return DATE_STRATEGIES.names()


def build_generalizer(name: str, **options: Any) -> Generalizer:
    factory = DATE_STRATEGIES.get(name)
    try:
        return factory(**options)
    except TypeError as exc:
        raise ConfigError(f"bad options for date strategy {name!r}: {exc}") from None


@_register
class YearGeneralizer(Generalizer):
    """Only the year: "12/03/2019" -> "2019"."""

    name = "year"

    def generalize(self, parsed: ParsedDate, gctx: GeneralizeContext) -> str | None:
        return str(parsed.value.year) if parsed.has_year else None


def _quarter_fr(q: int) -> str:
    return "1er" if q == 1 else f"{q}e"


QUARTER_TEMPLATES: dict[str, Callable[[int, int], str]] = {
    "en": lambda q, y: f"Q{q} {y}",
    "es": lambda q, y: f"{q}.º trimestre de {y}",
    "it": lambda q, y: f"{q}º trimestre {y}",
    "fr": lambda q, y: f"{_quarter_fr(q)} trimestre {y}",
    "de": lambda q, y: f"Q{q} {y}",
    "ru": lambda q, y: f"{q}-й квартал {y} г.",
}


@_register
class QuarterGeneralizer(Generalizer):
    """Quarter of the year, localised ("Q2 2019", "2.º trimestre de 2019"); ``template`` uses {q} and
    {year}. A year-only date stays the year."""

    name = "quarter"

    def __init__(self, template: str | None = None) -> None:
        self.template = template

    def generalize(self, parsed: ParsedDate, gctx: GeneralizeContext) -> str | None:
        if parsed.precision == "year":
            return str(parsed.value.year)
        if parsed.precision not in ("day", "month"):
            return None
        q, year = (parsed.value.month - 1) // 3 + 1, parsed.value.year
        if self.template is not None:
            return self.template.format(q=q, year=year)
        return QUARTER_TEMPLATES[_lang(gctx.language, QUARTER_TEMPLATES)](q, year)


AGE_BAND_TEMPLATES: dict[str, str] = {
    "en": "{lo}-{hi} years",
    "es": "{lo}-{hi} años",
    "it": "{lo}-{hi} anni",
    "fr": "{lo}-{hi} ans",
    "de": "{lo}-{hi} Jahre",
    "ru": "{lo}-{hi} лет",
}


def age_in_years(birth: dt.date, on: dt.date) -> int:
    return on.year - birth.year - ((on.month, on.day) < (birth.month, birth.day))


@_register
class AgeGroupGeneralizer(Generalizer):
    """A birth date becomes the age band at the reference date ("40-49 years"); 90 and over is one band."""

    name = "age_group"

    def __init__(self, band: int = 10, template: str | None = None, top: int = 90) -> None:
        if not 1 <= band <= 50:
            raise ConfigError(f"age band must be within 1-50 years, got {band}")
        self.band, self.template, self.top = band, template, top

    def generalize(self, parsed: ParsedDate, gctx: GeneralizeContext) -> str | None:
        if not parsed.has_year or gctx.reference_date is None:
            return None
        age = age_in_years(parsed.value, gctx.reference_date)
        if age < 0:
            return None
        lang = _lang(gctx.language, AGE_BAND_TEMPLATES)
        if age >= self.top:
            return over_phrase(lang, self.top)
        lo = age // self.band * self.band
        hi = min(lo + self.band - 1, self.top - 1)
        return (self.template or AGE_BAND_TEMPLATES[lang]).format(lo=lo, hi=hi)


RELATIVE_UNITS: dict[str, dict[str, str]] = {
    "en": {"day": "day", "month": "month", "year": "year"},
    "es": {"day": "día", "month": "mes", "year": "año"},
    "it": {"day": "giorno", "month": "mese", "year": "anno"},
    "fr": {"day": "jour", "month": "mois", "year": "année"},
    "de": {"day": "Tag", "month": "Monat", "year": "Jahr"},
    "ru": {"day": "день", "month": "месяц", "year": "год"},
}


def _signed(n: int) -> str:
    return f"{n:+d}" if n else "0"


def _closest_year(parsed: ParsedDate, anchor: dt.date) -> dt.date | None:
    """A year-less day-month placed in the year that puts it closest to ``anchor``."""
    best: dt.date | None = None
    for year in (anchor.year - 1, anchor.year, anchor.year + 1):
        try:
            candidate = parsed.value.replace(year=year)
        except ValueError:  # 29 February
            continue
        if best is None or abs((candidate - anchor).days) < abs((best - anchor).days):
            best = candidate
    return best


@_register
class RelativeGeneralizer(Generalizer):
    """Time relative to an anchor (admission date or first date of the document): "day +12", "día -3".

    Month-year dates count months, year-only dates count years. ``template`` uses {unit} and {n}.
    """

    name = "relative"

    def __init__(self, template: str = "{unit} {n}") -> None:
        self.template = template

    def generalize(self, parsed: ParsedDate, gctx: GeneralizeContext) -> str | None:
        anchor = gctx.anchor
        if anchor is None:
            return None
        units = RELATIVE_UNITS[_lang(gctx.language, RELATIVE_UNITS)]
        if parsed.precision == "day":
            unit, n = "day", (parsed.value - anchor).days
        elif parsed.precision == "day_month":
            placed = _closest_year(parsed, anchor)
            if placed is None:
                return None
            unit, n = "day", (placed - anchor).days
        elif parsed.precision == "month":
            unit, n = "month", (parsed.value.year - anchor.year) * 12 + parsed.value.month - anchor.month
        elif parsed.precision == "year":
            unit, n = "year", parsed.value.year - anchor.year
        else:
            return None
        return self.template.format(unit=units[unit], n=_signed(n))


DICTIONARY_DEFAULTS: dict[str, tuple[str, str, str]] = {
    # months 1-4, 5-8, 9-12
    "en": ("early {year}", "mid-{year}", "late {year}"),
    "es": ("principios de {year}", "mediados de {year}", "finales de {year}"),
    "it": ("inizio {year}", "metà {year}", "fine {year}"),
    "fr": ("début {year}", "mi-{year}", "fin {year}"),
    "de": ("Anfang {year}", "Mitte {year}", "Ende {year}"),
    "ru": ("начало {year} г.", "середина {year} г.", "конец {year} г."),
}


@_register
class DictionaryGeneralizer(Generalizer):
    """Maps each month to a configured coarse expression (templates with {year}, {quarter}, {month}).

    ``entries``: ``{1: "winter {year}", ..., 12: "winter {year}"}`` (keys 1-12, ints or strings); without
    entries, the language's "early / mid / late {year}" wording. Year-only dates stay the year.
    """

    name = "dictionary"

    def __init__(self, entries: Mapping[int | str, str] | None = None) -> None:
        self.entries: dict[int, str] | None = None
        if entries is not None:
            try:
                self.entries = {int(k): str(v) for k, v in entries.items()}
            except (TypeError, ValueError):
                raise ConfigError("date dictionary keys must be month numbers 1-12") from None
            missing = sorted(set(range(1, 13)) - set(self.entries))
            if missing:
                raise ConfigError(f"date dictionary lacks months {missing}; give an entry for each of 1-12")

    def generalize(self, parsed: ParsedDate, gctx: GeneralizeContext) -> str | None:
        if parsed.precision == "year":
            return str(parsed.value.year)
        if parsed.precision not in ("day", "month", "day_month", "month_only"):
            return None
        month = parsed.value.month
        if self.entries is not None:
            template = self.entries[month]
        else:
            template = DICTIONARY_DEFAULTS[_lang(gctx.language, DICTIONARY_DEFAULTS)][(month - 1) // 4]
        if "{year}" in template and not parsed.has_year:
            return None
        try:
            return template.format(year=parsed.value.year, quarter=(month - 1) // 3 + 1, month=month)
        except (KeyError, IndexError, ValueError):
            raise ConfigError(
                "a date dictionary template may only use {year}, {quarter} and {month}"
            ) from None


def _parse_day(value: object, what: str) -> dt.date:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"date interval: {what} must be an ISO date (YYYY-MM-DD), got {value!r}") from None


@_register
class IntervalGeneralizer(Generalizer):
    """The date dictionary: every date of ``[source_start, source_end]`` is mapped into ``[start, end]``
    keeping chronological order, the same way in every document of a batch and on every machine.

    A batch is processed by several processes, may resume, and gives operators no batch-wide state, so
    the dictionary is not built from the batch's dates but is a keyed, stateless, order-preserving map:
    each year of the source window gets a keyed weight, the target interval is split among the years in
    proportion to their weights, and each date moves linearly within its year's share. Order is kept: when
    the target is at least as long as the source window every day keeps its own day (the spare days are
    spread by the keyed weights); when it is shorter, close days may meet on one day, so choose a source
    window as tight as the notes allow. The written format and precision are kept.
    Dates outside the source window, and dates without a year, cannot be placed (the operator falls back).
    """

    name = "interval"
    needs_key = True

    def __init__(
        self,
        start: str | dt.date = "2000-01-01",
        end: str | dt.date = "2009-12-31",
        source_start: str | dt.date = "1900-01-01",
        source_end: str | dt.date = "2099-12-31",
    ) -> None:
        self.start, self.end = _parse_day(start, "start"), _parse_day(end, "end")
        self.source_start = _parse_day(source_start, "source_start")
        self.source_end = _parse_day(source_end, "source_end")
        if self.end < self.start or self.source_end < self.source_start:
            raise ConfigError("date interval: each interval needs its start on or before its end")
        self._weights: dict[bytes, list[float]] = {}

    def _cumulative(self, key: bytes) -> list[float]:
        """Cumulative keyed weights of the source years (index 0 = 0.0), computed once per key."""
        import hashlib

        marker = hashlib.sha256(key).digest()
        cached = self._weights.get(marker)
        if cached is None:
            from clinideid.transform.keys import KeyedRandom

            rng = KeyedRandom(key, "date-interval", self.source_start.isoformat(), self.source_end.isoformat())
            cached = [0.0]
            for _ in range(self.source_start.year, self.source_end.year + 1):
                cached.append(cached[-1] + 0.5 + rng.randbelow(1_000_000) / 1_000_000)
            self._weights[marker] = cached
        return cached

    def map_day(self, day: dt.date, key: bytes) -> dt.date | None:
        """Where ``day`` lands in ``[start, end]`` (``None`` outside the source window)."""
        if not self.source_start <= day <= self.source_end:
            return None
        cum = self._cumulative(key)
        i = day.year - self.source_start.year
        year_start = max(dt.date(day.year, 1, 1), self.source_start)
        year_end = min(dt.date(day.year, 12, 31), self.source_end)
        within = (day - year_start).days / ((year_end - year_start).days + 1)
        position = (cum[i] + (cum[i + 1] - cum[i]) * within) / cum[-1]
        span = (self.end - self.start).days + 1
        slack = span - ((self.source_end - self.source_start).days + 1)
        if slack >= 0:  # room for every day: one day on stays at least one day on (strict order)
            offset = (day - self.source_start).days + int(position * slack)
        else:
            offset = int(position * span)
        return self.start + dt.timedelta(days=min(span - 1, offset))

    def generalize(self, parsed: ParsedDate, gctx: GeneralizeContext) -> str | None:
        if gctx.key is None or not parsed.has_year:
            return None
        mapped = self.map_day(parsed.value, gctx.key)
        return None if mapped is None else parsed.render(mapped)
