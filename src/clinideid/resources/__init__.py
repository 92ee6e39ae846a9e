"""Per-language word lists (gazetteers) shipped with clinideid.

Each list is a UTF-8 text file ``resources/<language>/<name>.txt``: one entry per line, sorted,
deduplicated, no blank lines. The lists are built by ``scripts/build_resources.py`` from the sources named
in ``resources/PROVENANCE.md`` and committed, so nothing is downloaded at run time.

Every language has the same core lists (``CORE_LISTS``); a language may have extra ones (Russian has
``patronymics``). Use ``available_lists(language)`` to see them.

Beside the lists, ``<language>/word_frequencies.tsv.gz`` holds the language's common words with their
frequency (wordfreq's Zipf scale, >= 3.0: about once per million words); ``word_zipf(language)`` reads it.
A name that is also a common word ("Bill", "Hope", "Rosa") needs context; a rare one does not.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from importlib import resources

from clinideid.errors import ConfigError
from clinideid.resources.gazetteer import Gazetteer, normalize

__all__ = [
    "CORE_LISTS",
    "Gazetteer",
    "available_languages",
    "available_lists",
    "is_common_word",
    "load_gazetteer",
    "load_list",
    "normalize",
    "word_zipf",
]

CORE_LISTS: tuple[str, ...] = (
    "first_names_female",
    "first_names_male",
    "surnames",
    "cities",
    "streets",
    "hospitals",
    "organizations",
    "countries",
    "professions",
    "states",
    "medical_allowlist",
)


def _root():  # importlib.resources Traversable of this package
    return resources.files(__name__)


@cache
def available_languages() -> tuple[str, ...]:
    """Language codes that have lists (``("de", "en", ...)``)."""
    return tuple(sorted(p.name for p in _root().iterdir() if p.is_dir() and not p.name.startswith("_")))


def _language(language: str) -> str:
    """``"en"``, ``"EN"``, ``"en-US"`` and ``"en_GB"`` all name the English lists."""
    if not isinstance(language, str) or not language.strip():
        raise ConfigError(f"language must be a code such as 'en'; got {language!r}")
    code = language.strip().replace("_", "-").split("-")[0].lower()
    if code not in available_languages():
        raise ConfigError(
            f"no word lists for language {language!r}; available: {', '.join(available_languages())}"
        )
    return code


def available_lists(language: str) -> list[str]:
    """Names of the lists available for ``language`` (sorted)."""
    return list(_lists(_language(language)))


@cache
def _lists(lang: str) -> tuple[str, ...]:
    return tuple(sorted(p.name[:-4] for p in _root().joinpath(lang).iterdir() if p.name.endswith(".txt")))


@cache
def word_zipf(language: str) -> Mapping[str, float]:
    """Case-folded common word ("weiss" for "Weiß") -> Zipf frequency for ``language`` (words rarer than Zipf 3.0 are absent)."""
    path = _root().joinpath(_language(language), "word_frequencies.tsv.gz")
    table: dict[str, float] = {}
    if not path.is_file():
        return table
    for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines():
        word, _, zipf = line.partition("\t")
        table.setdefault(word.casefold(), float(zipf))
    return table


def is_common_word(language: str, word: str, min_zipf: float = 3.0) -> bool:
    """Whether ``word`` (any case) is a word of ``language`` at least this frequent."""
    return word_zipf(language).get(word.casefold(), 0.0) >= min_zipf


@cache
def _read(lang: str, name: str) -> tuple[str, ...]:
    path = _root().joinpath(lang, f"{name}.txt")
    return tuple(line for line in path.read_text("utf-8").splitlines() if line)


def load_list(language: str, name: str) -> list[str]:
    """The entries of list ``name`` for ``language`` (read once, then served from a cache).

    Raises ``ConfigError`` for an unknown language or list. The returned list is a fresh copy, so
    callers may modify it.
    """
    lang = _language(language)
    if not isinstance(name, str) or name not in _lists(lang):
        raise ConfigError(
            f"no list {name!r} for language {lang!r}; available: {', '.join(available_lists(lang))}"
        )
    return list(_read(lang, name))


def load_gazetteer(
    language: str,
    names: Iterable[str],
    *,
    case_sensitive: bool = False,
    fuzzy: int = 0,
    min_length: int = 2,
) -> Gazetteer:
    """A ``Gazetteer`` over one or more lists of ``language``; each match's value is the list name.

    When an entry is in several lists, the first list named wins. Built gazetteers are cached.
    """
    return _gazetteer(_language(language), tuple(names), case_sensitive, fuzzy, min_length)


@lru_cache(maxsize=32)
def _gazetteer(
    lang: str, names: tuple[str, ...], case_sensitive: bool, fuzzy: int, min_length: int
) -> Gazetteer:
    if not names:
        raise ConfigError("load_gazetteer needs at least one list name")
    entries: dict[str, str] = {}
    for name in names:
        for entry in load_list(lang, name):
            entries.setdefault(entry, name)
    return Gazetteer(entries, case_sensitive=case_sensitive, fuzzy=fuzzy, min_length=min_length)
