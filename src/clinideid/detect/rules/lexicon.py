"""Word lists for rule packs: packaged lists (``clinideid.resources``), inline pack lists and list files.

A list name in a pack is looked up first among the pack's own ``lists:`` and then among the packaged lists
of the pack's language (``load_list(language, name)``). Files are UTF-8, one entry per line, ``#`` starts
a comment, paths relative to the pack file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

import regex

from clinideid.errors import ClinideidError, ConfigError

# the tokenizer of clinideid.text and the gazetteer
_TOKEN = regex.compile(r"\p{L}[\p{L}\p{M}]*|\p{N}+|[^\s]", regex.V1)


def list_entries(
    name: str, language: str | None, pack_lists: Mapping[str, list[str]], where: str
) -> list[str]:
    """Entries of the list ``name`` as a pack sees it; ``where`` names the rule for error messages."""
    if name in pack_lists:
        return list(pack_lists[name])
    if not language:
        raise ConfigError(f"{where}: list {name!r} is not defined in the pack and the pack has no language")
    try:
        from clinideid.resources import load_list
    except ImportError as exc:  # pragma: no cover - the resources package ships with clinideid
        raise ConfigError(f"{where}: word lists are unavailable ({exc})") from None
    try:
        return load_list(language, name)
    except ClinideidError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def file_entries(path: str, folder: Path | None, where: str) -> list[str]:
    p = Path(path)
    if not p.is_absolute() and folder is not None:
        p = folder / p
    return list(_read_file(str(p), where))


@lru_cache(maxsize=64)
def _read_file(path: str, where: str) -> tuple[str, ...]:
    try:
        lines = Path(path).read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read word list file {path}: {exc}") from None
    out = []
    for line in lines:
        entry = line.split("#", 1)[0].strip()
        if entry:
            out.append(entry)
    return tuple(out)


def build_gazetteer(
    entries: Iterable[str] | Mapping[str, str],
    *,
    case_sensitive: bool = False,
    fuzzy: int = 0,
    min_length: int = 1,
):
    """A ``clinideid.resources.gazetteer.Gazetteer`` over ``entries`` (whole-word, accent-insensitive);
    with a mapping, each match reports its entry's value."""
    from clinideid.resources.gazetteer import Gazetteer

    if not isinstance(entries, Mapping):
        entries = list(entries)
    return Gazetteer(entries, case_sensitive=case_sensitive, fuzzy=fuzzy, min_length=min_length)


def first_tokens(entries: Iterable[str], *, case_sensitive: bool = False):
    """(normalised first tokens of ``entries``, a window length covering the longest entry, normaliser).

    The gazetteer compares tokens after ``clinideid.resources.gazetteer.normalize``; an entry can only
    match where a text token normalises to one of these first tokens.
    """
    from clinideid.resources.gazetteer import normalize

    def norm(token: str) -> str:
        return normalize(token, casefold=not case_sensitive)

    first: set[str] = set()
    longest = 0
    for entry in entries:
        m = _TOKEN.search(entry)
        if m is None:
            continue
        first.add(norm(m.group()))
        longest = max(longest, len(entry))
    # room for more spacing than in the entry itself (line breaks, double spaces)
    return frozenset(first), longest * 2 + 8, norm
