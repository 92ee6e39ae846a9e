"""A fast whole-word gazetteer matcher: single- and multi-word entries, longest match, optional fuzziness.

Entries and text are split with the same tokenizer as ``clinideid.text`` (letter runs, digit runs, single
punctuation marks), and each token is normalised (``normalize``: case-folded, accents stripped, Cyrillic
letters kept). Entries are stored as tuples of normalised tokens in a dict, and the text is scanned once,
left to right: at each token, one dict lookup says whether an entry can start there and how many tokens
the longest such entry has; only then are the n-grams looked up, longest first. So the cost is linear in the
text and independent of the number of entries (no regex per entry), and matches are always whole tokens:
"Down" never matches inside "Download", and whitespace (including line breaks) between the tokens of a
multi-word entry may vary.

Fuzzy lookup (edit distance 1, when both token and entry have at least ``FUZZY_MIN_LENGTH`` characters)
uses a deletion-neighbourhood index (the "symmetric delete" idea of SymSpell): every long single-token
entry is indexed under itself and each string obtained by deleting one of its characters, so a query
needs ``len(token) + 1`` index probes, each checked with an exact edit test, instead of a scan of all
entries. The index holds hashes in sorted numpy arrays (about 7 MB for 60k entries, where a dict of the
strings takes 55 MB) and is probed for a whole text's unmatched tokens in one vectorised search: about
10 µs for a single lookup with 60k entries, where a scan with a string-distance library (e.g. rapidfuzz)
costs milliseconds, and no extra dependency. Adjacent transpositions count as one edit (a frequent typing
error). The index is built on first use.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np
import regex

from clinideid.errors import ConfigError

__all__ = ["FUZZY_MIN_LENGTH", "Gazetteer", "normalize"]

FUZZY_MIN_LENGTH = 5
"""Fuzzy lookup allows an edit only when both the token and the entry have at least this many
characters (after normalisation): shorter words are too easily one edit away from another word."""

# Same token definition as clinideid.text.tokenize, kept here as a compiled pattern because building
# Token objects would cost more than the whole lookup.
_TOKEN = regex.compile(r"\p{L}[\p{L}\p{M}]*|\p{N}+|[^\s]", regex.V1)

_PUNCT_FOLD = {
    "\u2018": "'",
    "\u2019": "'",
    "\u02bc": "'",
    "`": "'",
    "\u00b4": "'",
    "\u2010": "-",
    "\u2011": "-",
    "\u2012": "-",
    "\u2013": "-",
    "\u2014": "-",
    "\u2212": "-",
}


class _FoldTable(dict):
    """``str.translate`` table, filled on demand: accents off, Cyrillic letters (but ё) kept."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if char in _PUNCT_FOLD:
            folded = _PUNCT_FOLD[char]
        elif char in "ёЁ":  # written as е in most Russian text
            folded = "е" if char == "ё" else "Е"
        elif 0x0400 <= code <= 0x052F:  # Cyrillic: й, ї, ў ... are letters, not accented letters
            folded = char
        else:
            decomposed = unicodedata.normalize("NFD", char)
            folded = "".join(c for c in decomposed if not unicodedata.combining(c))
            folded = unicodedata.normalize("NFC", folded)
        self[code] = folded
        return folded


_FOLD = _FoldTable()


def normalize(text: str, *, casefold: bool = True, strip_accents: bool = True) -> str:
    """Case-fold and strip accents: ``"Lasègue"`` -> ``"lasegue"``, ``"Ёлкин"`` -> ``"елкин"``.

    Cyrillic letters stay intact (``й`` is not ``и``), except ``ё``, which becomes ``е`` as in most
    Russian writing. Typographic apostrophes and dashes become ``'`` and ``-``. The result may differ in
    length from the input (``"ß"`` -> ``"ss"``), so normalise tokens, not whole texts you take offsets from.
    """
    if casefold:
        text = text.casefold()
    if not strip_accents or text.isascii():
        return text
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text.translate(_FOLD)


def _within_one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by at most one substitution, insertion, deletion or adjacent swap."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) < len(b):  # one insertion at i
        return a[i:] == b[i + 1 :]
    if i == len(a):
        return True
    return a[i + 1 :] == b[i + 1 :] or (
        a[i + 1 : i + 2] == b[i : i + 1] and a[i] == b[i + 1] and a[i + 2 :] == b[i + 2 :]
    )


class Gazetteer:
    """Whole-word, longest-match lookup of a word list in text.

    ``entries``: strings, or a mapping from each string to a value reported with its matches (a label,
    a list name...). With plain strings the value is the entry as given. When two entries normalise to
    the same key, the first one wins. ``case_sensitive``: compare case too (accents are still ignored
    unless ``strip_accents=False``). ``fuzzy``: 0 for exact matching, 1 to let ``find`` also match
    single-token entries within one edit of a text token of ``FUZZY_MIN_LENGTH``+ characters.
    ``min_length``: entries shorter than this (in normalised characters) are ignored.
    """

    _CACHE_LIMIT = 300_000

    def __init__(
        self,
        entries: Iterable[str] | Mapping[str, str],
        *,
        case_sensitive: bool = False,
        fuzzy: int = 0,
        min_length: int = 2,
        strip_accents: bool = True,
    ) -> None:
        if fuzzy not in (0, 1):
            raise ConfigError(f"Gazetteer fuzzy must be 0 or 1 (edits allowed); got {fuzzy!r}")
        if min_length < 1:
            raise ConfigError(f"Gazetteer min_length must be at least 1; got {min_length!r}")
        self.case_sensitive = case_sensitive
        self.strip_accents = strip_accents
        self.fuzzy = fuzzy
        self.min_length = min_length
        self._norm_cache: dict[str, str] = {}
        self._single: dict[str, str] = {}  # one-token entries: normalised token -> value
        self._multi: dict[tuple[str, ...], str] = {}  # several tokens -> value
        self._span: dict[str, int] = {}  # first token -> most tokens of an entry starting with it
        self._fuzzy_index: tuple[np.ndarray, np.ndarray, list[str]] | None = None
        pairs = entries.items() if isinstance(entries, Mapping) else ((e, e) for e in entries)
        for entry, value in pairs:
            self._add(entry, value)

    def _add(self, entry: str, value: str) -> None:
        if not isinstance(entry, str):
            raise ConfigError(f"gazetteer entries must be strings; got {type(entry).__name__}")
        key = self._key(entry)
        if sum(len(t) for t in key) < self.min_length:
            return
        if len(key) == 1:
            self._single.setdefault(key[0], value)
            self._span.setdefault(key[0], 1)
        else:
            if key in self._multi:
                return
            self._multi[key] = value
            first = key[0]
            if self._span.get(first, 0) < len(key):
                self._span[first] = len(key)

    def _norm(self, token: str) -> str:
        found = self._norm_cache.get(token)
        if found is None:
            if len(self._norm_cache) >= self._CACHE_LIMIT:
                self._norm_cache.clear()
            found = normalize(token, casefold=not self.case_sensitive, strip_accents=self.strip_accents)
            self._norm_cache[token] = found
        return found

    def _key(self, text: str) -> tuple[str, ...]:
        return tuple(self._norm(m.group()) for m in _TOKEN.finditer(text))

    def __len__(self) -> int:
        return len(self._single) + len(self._multi)

    def __contains__(self, item: object) -> bool:
        return isinstance(item, str) and self.contains(item)

    def __iter__(self) -> Iterator[str]:
        """The normalised entries (multi-word ones joined by single spaces)."""
        yield from self._single
        for key in self._multi:
            yield " ".join(key)

    def lookup(self, text: str) -> str | None:
        """The value of the entry ``text`` is (after normalisation), or ``None``."""
        key = self._key(text)
        if len(key) == 1:
            return self._single.get(key[0])
        return self._multi.get(key)

    def contains(self, token: str) -> bool:
        """Whether ``token`` (a word or a multi-word string) is an entry, after normalisation."""
        return self.lookup(token) is not None

    def fuzzy_lookup(self, token: str) -> str | None:
        """The value of an entry within one edit of ``token``; exact matches are preferred.

        Only single tokens of ``FUZZY_MIN_LENGTH``+ normalised characters get an edit; anything else must
        match exactly.
        """
        key = self._key(token)
        if len(key) != 1:
            return self._multi.get(key)
        found = self._fuzzy_key(key[0])
        return None if found is None else self._single[found]

    def fuzzy_contains(self, token: str) -> bool:
        """Whether ``token`` is within one edit (substitution, insertion, deletion, adjacent swap) of an
        entry; tokens shorter than ``FUZZY_MIN_LENGTH`` must match exactly."""
        return self.fuzzy_lookup(token) is not None

    def _fuzzy_key(self, q: str) -> str | None:
        if q in self._single:
            return q
        return self._fuzzy_keys([q]).get(q)

    def _fuzzy_keys(self, queries: list[str]) -> dict[str, str]:
        """The entry within one edit of each query that has one (queries with none are left out).

        All probes (each query and its one-deletion variants) are hashed and looked up in the sorted
        index in one vectorised ``searchsorted``, so a batch costs little more than its hashing.
        """
        queries = [q for q in queries if len(q) >= FUZZY_MIN_LENGTH]
        if not queries:
            return {}
        hashes, owners, keys = self._deletion_index()
        if not len(hashes):
            return {}
        probe_owner: list[int] = []
        probe_hash: list[int] = []
        for n, q in enumerate(queries):
            probe_hash.append(hash(q))
            probe_hash.extend(hash(q[:i] + q[i + 1 :]) for i in range(len(q)))
            probe_owner.extend([n] * (len(q) + 1))
        wanted = np.array(probe_hash, dtype=np.int64)
        lo = np.searchsorted(hashes, wanted, "left")
        hi = np.searchsorted(hashes, wanted, "right")
        found: dict[str, str] = {}
        for p in np.flatnonzero(hi > lo).tolist():
            q = queries[probe_owner[p]]
            if q in found:
                continue
            for owner in owners[lo[p] : hi[p]].tolist():
                cand = keys[owner]
                if _within_one_edit(q, cand):
                    found[q] = cand
                    break
        return found

    def _deletion_index(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Sorted hashes of every long single-token entry and of each of its one-deletion variants,
        with the entry each hash came from. Hashes in arrays instead of a dict of strings keep the
        index to 12 bytes a variant (a tenth of the memory); a hash collision only adds a candidate that
        the edit check then rejects."""
        if self._fuzzy_index is None:
            keys = [k for k in self._single if len(k) >= FUZZY_MIN_LENGTH]
            hashes: list[int] = []
            owners: list[int] = []
            for n, key in enumerate(keys):
                variants = {key, *(key[:i] + key[i + 1 :] for i in range(len(key)))}
                hashes.extend(hash(v) for v in variants)
                owners.extend([n] * len(variants))
            h = np.array(hashes, dtype=np.int64)
            o = np.array(owners, dtype=np.int32)
            order = np.lexsort((o, h))  # by hash, then entry order: the choice among candidates is stable
            self._fuzzy_index = (h[order], o[order], keys)
        return self._fuzzy_index

    def _entry_at(self, keys: Sequence[str], i: int) -> tuple[int, str] | None:
        """(tokens, value) of the longest entry starting at token ``i`` of ``keys`` (normalised), or None."""
        longest = self._span.get(keys[i])
        if longest is None:
            return None
        for j in range(min(longest, len(keys) - i), 1, -1):
            value = self._multi.get(tuple(keys[i : i + j]))
            if value is not None:
                return j, value
        value = self._single.get(keys[i])
        return None if value is None else (1, value)

    def find_at_start(self, text: str) -> tuple[int, int, str] | None:
        """The match ``find(text)`` reports on the first token of ``text``, or None. Reads only the tokens
        an entry starting there can span: looking up one place costs the same however long ``text`` is."""
        tokens = _TOKEN.finditer(text)
        first = next(tokens, None)
        if first is None:
            return None
        key = self._norm(first.group())
        found = [first, *itertools.islice(tokens, self._span.get(key, 1) - 1)]
        hit = self._entry_at([key, *(self._norm(m.group()) for m in found[1:])], 0)
        if hit is not None:
            return first.start(), found[hit[0] - 1].end(), hit[1]
        if self.fuzzy and self._single and len(key) >= FUZZY_MIN_LENGTH and key.isalpha():
            near = self._fuzzy_keys([key]).get(key)
            if near is not None:
                return first.start(), first.end(), self._single[near]
        return None

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping matches ``(start, end, value)`` in ``text``, left to right, longest first."""
        starts: list[int] = []
        ends: list[int] = []
        keys: list[str] = []
        cache = self._norm_cache
        for m in _TOKEN.finditer(text):
            tok = m.group()
            k = cache.get(tok)
            if k is None:
                k = self._norm(tok)
            s, e = m.span()
            starts.append(s)
            ends.append(e)
            keys.append(k)
        out: list[tuple[int, int, str]] = []
        span, single, entry_at = self._span, self._single, self._entry_at
        fuzzy = self.fuzzy and bool(single)
        misses: list[int] = []  # token positions left for the fuzzy pass
        n = len(keys)
        i = 0
        while i < n:
            k = keys[i]
            hit = entry_at(keys, i) if k in span else None
            if hit is not None:
                out.append((starts[i], ends[i + hit[0] - 1], hit[1]))
                i += hit[0]
                continue
            if fuzzy and len(k) >= FUZZY_MIN_LENGTH and k.isalpha():
                misses.append(i)
            i += 1
        if misses:
            hits = self._fuzzy_keys(list(dict.fromkeys(keys[m] for m in misses)))
            fuzzy_out = [(starts[m], ends[m], single[hits[keys[m]]]) for m in misses if keys[m] in hits]
            if fuzzy_out:
                out = sorted(out + fuzzy_out)
        return out
