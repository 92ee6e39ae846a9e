"""Date generalisation strategies: year, quarter, age group, relative days, and a date dictionary.

Each strategy turns a ``ParsedDate`` into a coarser expression in the document's language, or ``None``
when the date cannot be generalised that way (the operator then falls back to its fallback operator and
counts it). Strategies are chosen by name per use case: ``year`` for statistics by year, ``quarter`` for
seasonal studies, ``age_group`` for birth dates, ``relative`` for timelines around an admission,
``dictionary`` for coarse wording such as "early 2019".
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
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


def _lang(language: str, table: Mapping[str, Any]) -> str:
    base = language.lower().split("-")[0]
    return base if base in table else "en"


class Generalizer(ABC):
    name: ClassVar[str] = ""

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
