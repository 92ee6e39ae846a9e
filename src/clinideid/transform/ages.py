"""HIPAA age aggregation: ages over 89 become "90+" in the document's language; other ages are kept."""

from __future__ import annotations

import re
from collections.abc import Mapping

from clinideid.transform.textcase import strip_accents

DEFAULT_THRESHOLD = 89

#: the aggregate written alone ("92" -> "90+") or in place of "<age> <year unit>" ("92 años");
#: {n} is the first aggregated age (threshold + 1)
OVER_BARE: dict[str, str] = {
    "en": "{n}+",
    "es": "{n} o más",
    "it": "{n} e oltre",
    "fr": "{n} et plus",
    "de": "{n}+",
    "ru": "{n}+",
}
OVER_WITH_UNIT: dict[str, str] = {
    "en": "{n}+ years",
    "es": "{n} o más años",
    "it": "{n} anni e oltre",
    "fr": "{n} ans et plus",
    "de": "{n} Jahre und älter",
    "ru": "{n} лет и старше",
}


def over_phrase(language: str, n: int = 90, *, unit: bool = True) -> str:
    """The localised "90 or older" phrase."""
    lang = language.lower().split("-")[0]
    table = OVER_WITH_UNIT if unit else OVER_BARE
    return table.get(lang, table["en"]).format(n=n)


_YEAR_UNITS = (
    r"years?|yrs?|y/?o|y\.o\.?|a[nñ]os?|anni|anno|ans?|annees?|jahre[n]?|jahr|"
    r"лет|года?|год"
)
_OTHER_UNITS = (
    r"months?|mos?|weeks?|wks?|days?|hours?|meses|mes|semanas?|d[ií]as?|mesi|mese|settimane?|giorni|"
    r"giorno|mois|semaines?|jours?|monate[n]?|monat|wochen?|tage[n]?|tag|"
    r"месяц\w*|недел\w*|дн\w*|день|час\w*"
)
_NUMBER_UNIT = re.compile(rf"(\d+)(\s*-?\s*)({_YEAR_UNITS})(?![^\W\d_])", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\d.,])\d+(?![\d.,]\d)")
_OTHER_UNIT_AFTER = re.compile(rf"^\s*-?\s*(?:{_OTHER_UNITS})(?![^\W\d_])", re.IGNORECASE)
#: number words of 90 and above, per language (accents stripped, lower case)
_OLD_WORDS = re.compile(
    r"ninety|hundred|noventa|cien|novanta|cento|quatre-vingt-(?:dix|onze|douze|treize|quatorze|quinze|seize)|"
    r"cent\b|neunzig|hundert|девяност|\bсто\b",
    re.IGNORECASE,
)


def age_value(text: str) -> int | None:
    """The age in years written in ``text``, or ``None`` when it is not in years or not a number."""
    for m in _NUMBER.finditer(text):
        if _OTHER_UNIT_AFTER.match(text[m.end() :]):
            return None
        return int(m.group())
    return None


def aggregate_age(
    text: str,
    language: str = "en",
    *,
    threshold: int = DEFAULT_THRESHOLD,
    phrases: Mapping[str, Mapping[str, str]] | None = None,
) -> str | None:
    """The aggregated form of an age over ``threshold`` ("92 años" -> "90 o más años"); ``None`` to keep.

    ``phrases`` overrides the wording per language: ``{"es": {"bare": ..., "unit": ...}}``. Ages in months,
    weeks or days are kept; ages written in words are aggregated when they are 90 or more.
    """
    lang = language.lower().split("-")[0]
    custom = (phrases or {}).get(lang, {})
    bare = custom.get("bare", OVER_BARE.get(lang, OVER_BARE["en"])).format(n=threshold + 1)
    unit = custom.get("unit", OVER_WITH_UNIT.get(lang, OVER_WITH_UNIT["en"])).format(n=threshold + 1)
    value = age_value(text)
    if value is None:
        if not _NUMBER.search(text) and _OLD_WORDS.search(strip_accents(text)):
            return bare
        return None
    if value <= threshold:
        return None
    with_unit = _NUMBER_UNIT.search(text)
    if with_unit is not None and lang != "en" and int(with_unit.group(1)) == value:
        return text[: with_unit.start()] + unit + text[with_unit.end() :]
    m = _NUMBER.search(text)
    assert m is not None
    return text[: m.start()] + bare + text[m.end() :]
