"""Word lists for surrogate values: the shared per-language lists, reduced to base (nominative) forms.

Values come from ``clinideid.resources.load_list``. The Russian lists also hold declined forms (they serve
detection: "Иванову", "Москве"), so for surrogates each inflection group is reduced to its base form
("Иванов", "Москва"). If the shared lists cannot be loaded, a tiny built-in list keeps surrogates working
(and a warning says so).
"""

from __future__ import annotations

import logging
from functools import cache

from clinideid.errors import ClinideidError
from clinideid.transform.surrogates._fallback import FALLBACK_LISTS
from clinideid.transform.textcase import normalize

log = logging.getLogger(__name__)

LIST_LANGUAGES = ("en", "es", "it", "fr", "de", "ru")

# Russian case endings: stripping one (when 3+ letters remain) gives a stem an inflection group shares
# ("Иванову" -> "Иванов", "Марией" -> "Мари"); a trailing soft sign is dropped from stems.
_RU_ENDINGS = (
    "ыми", "ими", "ами", "ями", "ого", "его", "ому", "ему",
    "ой", "ей", "ёй", "ою", "ею", "ом", "ем", "ём", "ам", "ям", "ах", "ях", "ым", "им", "ых", "их",
    "ую", "юю", "ая", "яя", "ое", "ее", "ые", "ие", "ий", "ый",
    "а", "я", "у", "ю", "е", "ы", "и", "й", "ь",
)  # fmt: skip
# which member of a group is the base form, by the ending it adds to the shared stem ("" = the bare stem).
# A group with a masculine instrumental (-ом/-ем/-ём) declines like "Иван"/"Андрей"; others like "Мария".
_RU_BASE_MASC = ("", "й", "ь", "ий", "ый", "ой", "о", "е", "а", "я")
_RU_BASE_FEM = ("а", "я", "ая", "ья", "ь", "", "ий", "ый", "о", "е")
_RU_BASE_SURNAME = ("", "ий", "ый", "ой", "й", "ь", "а", "я", "о", "е")
_RU_OBLIQUE = ("ую", "ом", "ем", "ей", "ого", "ому", "ых", "ым", "ии", "ой", "ае")


def list_language(language: str) -> str:
    lang = (language or "en").lower().replace("_", "-").split("-")[0]
    return lang if lang in LIST_LANGUAGES else "en"


def _ru_stems(word: str) -> set[str]:
    stems = {word.removesuffix("ь")}
    for ending in _RU_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            stems.add(word[: -len(ending)].removesuffix("ь"))
    return stems


def _ru_rank(word: str, stems: set[str], preference: tuple[str, ...]) -> tuple[int, int]:
    ranks = [preference.index(word[len(s) :]) for s in stems if word[len(s) :] in preference]
    return (min(ranks) if ranks else len(preference), len(word))


def base_forms_ru(entries: list[str], name: str = "") -> list[str]:
    """One base form per inflection group of a Russian list, in list order.

    Words that share a stem after stripping a case ending form a group (union-find); the group's base
    form is the member whose ending ranks first for the group's declension type.
    """
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    stems_of: dict[str, set[str]] = {}
    for entry in entries:
        if " " in entry and any(w.endswith(_RU_OBLIQUE) for w in entry.split()):
            continue  # "Кемеровскую область": an inflected multi-word name
        stems = {entry} if (" " in entry or "-" in entry) else _ru_stems(entry)
        stems_of[entry] = stems
        for stem in stems:
            parent[find("w:" + entry)] = find("s:" + stem)
    groups: dict[str, list[str]] = {}
    for entry in stems_of:
        groups.setdefault(find("w:" + entry), []).append(entry)
    out = []
    for members in groups.values():
        shared = (
            set.intersection(*(stems_of[m] for m in members)) if len(members) > 1 else stems_of[members[0]]
        )
        stems = shared or set().union(*(stems_of[m] for m in members))
        if name == "surnames":
            preference = _RU_BASE_SURNAME
        elif any(m.endswith(("ом", "ем", "ём")) for m in members):
            preference = _RU_BASE_MASC
        else:
            preference = _RU_BASE_FEM
        out.append(min(members, key=lambda w: _ru_rank(w, stems, preference)))
    return out


@cache
def _raw(language: str, name: str) -> tuple[str, ...]:
    try:
        from clinideid.resources import load_list

        values = load_list(language, name)
    except (ImportError, ClinideidError, OSError, ValueError, KeyError) as exc:
        values = []
        log.debug("list %s/%s unavailable (%s)", language, name, type(exc).__name__)
    values = [v.strip() for v in values if v and v.strip()]
    if not values:
        fallback = FALLBACK_LISTS.get(language, FALLBACK_LISTS["en"]).get(name, ())
        if fallback:
            log.warning("word list %s/%s unavailable; using the small built-in fallback list", language, name)
        values = list(fallback)
    return tuple(values)


@cache
def surrogate_values(language: str, name: str) -> tuple[str, ...]:
    """Candidate surrogate values of list ``name`` for ``language`` (base forms, no duplicates)."""
    lang = list_language(language)
    values = list(_raw(lang, name))
    if lang == "ru" and name in (
        "surnames",
        "first_names_female",
        "first_names_male",
        "cities",
        "countries",
        "streets",
        "states",
        "patronymics",
    ):
        values = base_forms_ru(values, name)
    seen: set[str] = set()
    out = []
    for v in values:
        key = normalize(v)
        if key and key not in seen:
            seen.add(key)
            out.append(v)
    if not out and lang != "en":
        return surrogate_values("en", name)
    return tuple(out)


@cache
def membership(language: str, name: str) -> frozenset[str]:
    """Normalised entries of list ``name`` (all inflected forms), for "is this word a first name?"."""
    return frozenset(normalize(v) for v in _raw(list_language(language), name))
