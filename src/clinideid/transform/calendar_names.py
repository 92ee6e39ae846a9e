"""Month and weekday names per language, with their grammatical forms, for parsing and re-rendering dates.

Each language has named *forms* (``full``, ``abbr``; Russian also ``gen`` "марта", ``prep`` "марте"); each
form lists the 12 canonical spellings (rendering) and ``VARIANTS`` adds other accepted spellings for
parsing ("Sept", "Mrz", "Jänner"). Lookup is accent- and case-insensitive; a trailing dot is punctuation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from clinideid.transform.textcase import strip_accents

LANGUAGES = ("en", "es", "it", "fr", "de", "ru")

MONTHS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "full": ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                 "October", "November", "December"),
        "abbr": ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
    },
    "es": {
        "full": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
                 "octubre", "noviembre", "diciembre"),
        "abbr": ("ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic"),
    },
    "it": {
        "full": ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre",
                 "ottobre", "novembre", "dicembre"),
        "abbr": ("gen", "feb", "mar", "apr", "mag", "giu", "lug", "ago", "set", "ott", "nov", "dic"),
    },
    "fr": {
        "full": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
                 "octobre", "novembre", "décembre"),
        "abbr": ("janv", "févr", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct", "nov", "déc"),
    },
    "de": {
        "full": ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
                 "November", "Dezember"),
        "abbr": ("Jan", "Feb", "Mär", "Apr", "Mai", "Jun", "Jul", "Aug", "Sep", "Okt", "Nov", "Dez"),
    },
    "ru": {
        "full": ("январь", "февраль", "март", "апрель", "май", "июнь", "июль", "август", "сентябрь", "октябрь",
                 "ноябрь", "декабрь"),
        "gen": ("января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября",
                "октября", "ноября", "декабря"),
        "prep": ("январе", "феврале", "марте", "апреле", "мае", "июне", "июле", "августе", "сентябре",
                 "октябре", "ноябре", "декабре"),
        "abbr": ("янв", "фев", "мар", "апр", "мая", "июн", "июл", "авг", "сен", "окт", "ноя", "дек"),
    },
}  # fmt: skip

#: extra spellings accepted when parsing: (language, form, month 1-12, spelling)
VARIANTS: tuple[tuple[str, str, int, str], ...] = (
    ("en", "abbr", 9, "Sept"),
    ("es", "abbr", 9, "sept"),
    ("es", "abbr", 9, "set"),
    ("es", "full", 9, "setiembre"),
    ("fr", "abbr", 1, "jan"),
    ("fr", "abbr", 2, "fév"),
    ("fr", "abbr", 2, "fevr"),
    ("fr", "abbr", 9, "sep"),
    ("de", "abbr", 3, "Mrz"),
    ("de", "abbr", 9, "Sept"),
    ("de", "full", 1, "Jänner"),
    ("de", "abbr", 1, "Jän"),
    ("ru", "abbr", 2, "февр"),
    ("ru", "abbr", 9, "сент"),
    ("ru", "abbr", 11, "нояб"),
)

WEEKDAYS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "full": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
        "abbr": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
    },
    "es": {"full": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo")},
    "it": {"full": ("lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica")},
    "fr": {"full": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")},
    "de": {
        "full": ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"),
        "abbr": ("Mo", "Di", "Mi", "Do", "Fr", "Sa", "So"),
    },
    "ru": {
        "full": ("понедельник", "вторник", "среда", "четверг", "пятница", "суббота", "воскресенье"),
        "acc": ("понедельник", "вторник", "среду", "четверг", "пятницу", "субботу", "воскресенье"),
    },
}

WEEKDAY_VARIANTS: tuple[tuple[str, str, int, str], ...] = (
    ("en", "abbr", 1, "Tues"),
    ("en", "abbr", 3, "Thur"),
    ("en", "abbr", 3, "Thurs"),
    ("de", "full", 5, "Sonnabend"),
)

#: words that may sit inside a written date without carrying a date field ("12 de marzo de 2019",
#: "12 марта 2019 г.", "am 3. März", "the 3rd of March")
CONNECTORS: frozenset[str] = frozenset(
    {
        # en
        "of", "the", "on", "at", "in",
        # es
        "de", "del", "el", "a", "las", "la", "dia",
        # it
        "il", "alle", "ore", "nel",
        # fr
        "le", "en", "au",
        # de
        "am", "um", "uhr", "im", "den", "vom",
        # ru
        "г", "года", "году", "год", "гг", "в", "во", "с",
        # "year" / "month" words: "año 2009", "mes de abril", "im Jahr 2019"
        "year", "month", "ano", "mes", "anno", "mese", "an", "annee", "mois", "jahr", "jahre", "monat", "месяц",
        # ISO date-time separator
        "t",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class NameMatch:
    language: str
    form: str
    index: int  # month 1-12, or weekday 0 (Monday) - 6
    spelling: str  # how the matched spelling is written canonically (before case / accents)


def _key(word: str) -> str:
    return strip_accents(word).casefold()


@cache
def _month_index() -> dict[str, list[NameMatch]]:
    index: dict[str, list[NameMatch]] = {}
    for lang, forms in MONTHS.items():
        for form, names in forms.items():
            for i, name in enumerate(names, start=1):
                index.setdefault(_key(name), []).append(NameMatch(lang, form, i, name))
    for lang, form, month, spelling in VARIANTS:
        index.setdefault(_key(spelling), []).append(NameMatch(lang, form, month, spelling))
    return index


@cache
def _weekday_index() -> dict[str, list[NameMatch]]:
    index: dict[str, list[NameMatch]] = {}
    for lang, forms in WEEKDAYS.items():
        for form, names in forms.items():
            for i, name in enumerate(names):
                index.setdefault(_key(name), []).append(NameMatch(lang, form, i, name))
    for lang, form, day, spelling in WEEKDAY_VARIANTS:
        index.setdefault(_key(spelling), []).append(NameMatch(lang, form, day, spelling))
    return index


def _pick(matches: list[NameMatch], language: str) -> NameMatch | None:
    if not matches:
        return None
    for m in matches:
        if m.language == language:
            return m
    return matches[0]


def lookup_month(word: str, language: str = "en", *, prefer_abbr: bool = False) -> NameMatch | None:
    """The month a word names, preferring the document's language when several languages share it.

    A spelling that is both a full name and an abbreviation ("May", "mai") counts as the full name unless
    ``prefer_abbr`` (the caller saw it written like an abbreviation, e.g. "12-May-19").
    """
    matches = _month_index().get(_key(word), [])
    if prefer_abbr:
        abbr = [m for m in matches if m.form == "abbr"]
        if any(m.language == language for m in abbr) or not any(m.language == language for m in matches):
            matches = abbr or matches
    return _pick(matches, language)


def lookup_weekday(word: str, language: str = "en") -> NameMatch | None:
    return _pick(_weekday_index().get(_key(word), []), language)


def month_name(language: str, form: str, month: int) -> str:
    return MONTHS[language][form][month - 1]


def weekday_name(language: str, form: str, weekday: int) -> str:
    return WEEKDAYS[language][form][weekday]


def is_connector(word: str) -> bool:
    return _key(word) in CONNECTORS
