"""Per-language word lists (gazetteers) shipped with clinideid.

Each list is a UTF-8 text file ``resources/<language>/<name>.txt``: one entry per line, sorted,
deduplicated, no blank lines. The lists are built by ``scripts/build_resources.py`` from the sources named
in ``resources/PROVENANCE.md`` and committed, so nothing is downloaded at run time.

Every language has the same core lists (``CORE_LISTS``); a language may have extra ones (Russian has
``patronymics``). Use ``available_lists(language)`` to see them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache, lru_cache
from importlib import resources

from clinideid.errors import ConfigError
from clinideid.resources.gazetteer import Gazetteer, normalize

__all__ = [
    "CORE_LISTS",
    "Gazetteer",
    "available_languages",
    "available_lists",
    "load_gazetteer",
    "load_list",
    "normalize",
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
