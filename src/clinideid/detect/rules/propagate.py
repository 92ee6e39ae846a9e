"""Propagation: a name found by a strong rule is searched again everywhere else in the document.

Rule systems get much of their recall here (DEDUCE does the same with the patient's name from metadata):
once "Nombre: Ernesto / Apellidos: Rivera Bueno" is known, "Sr. Rivera", "RIVERA BUENO" and "E. Rivera"
later in the note are the same person, with the same role. Variants: the full name (case-insensitive,
any spacing), each part (a word of ``min_part_length``+ letters that is not a connector or allow-listed;
it must be capitalised in the text, except in a block written all in lower case, where case says nothing:
there a part is found in lower case too unless it is a very common word of the language), optionally
preceded by initials.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import regex

from clinideid.detect.rules.schema import PropagateSpec
from clinideid.text.style import CaseRegions, case_regions

#: in a lower-case block, a name part this frequent in the language (Zipf) is not searched in lower case:
#: "mark", "will", "hope" are words there before they are names
VERY_COMMON_ZIPF = 5.0

_WORD = regex.compile(r"[\p{L}\p{M}'’]+(?:-[\p{L}\p{M}'’]+)*")
_INITIALS_BEFORE = re.compile(r"(?<!\w)(?:[^\W\d_]\.[ \t]?){1,3}[ \t]*$")  # upper case checked after matching
_LEFT_WORD = regex.compile(r"(\p{Lu}[\p{L}\p{M}'’\-]*)[ \t]+$")
_RIGHT_WORD = regex.compile(r"[ \t]+(\p{Lu}[\p{L}\p{M}'’\-]*)")
_SENTENCE_START = re.compile(r"(?:^|[.!?][ \t]+|\n[ \t]*)$")
#: titles that may stand right before a name part without making it part of another name
DEFAULT_TITLES = frozenset(
    [
        "dr",
        "dra",
        "dres",
        "mr",
        "mrs",
        "ms",
        "miss",
        "mx",
        "sr",
        "sra",
        "srta",
        "sres",
        "don",
        "doña",
        "dª",
        "prof",
        "profa",
        "pr",
        "pt",
        "herr",
        "frau",
        "fr",
        "hr",
        "mme",
        "mlle",
        "m",
        "dott",
        "dottssa",
        "sig",
        "sigra",
        "signor",
        "signora",
    ]
)


@dataclass(frozen=True)
class Seed:
    """A found span to propagate: its text, label, score, rule id and settings."""

    text: str
    label: str
    score: float
    rule_id: str
    spec: PropagateSpec


def _norm(s: str) -> str:
    return " ".join(s.split()).lower()


def _in_other_name(masked: str, start: int, end: int, own: set[str], ignore: frozenset[str]) -> bool:
    """Whether a part found at ``start:end`` sits next to a capitalised word that is not one of its own
    name's words: then it belongs to another person's name ("José Barquero Romero" is not Ms Romero)."""
    left = _LEFT_WORD.search(masked, max(0, start - 40), start)
    if left is not None and _SENTENCE_START.search(masked, max(0, left.start() - 4), left.start()):
        left = None  # a capitalised word that starts a sentence or a line ("Firma E. Rivera")
    right = _RIGHT_WORD.match(masked, end, min(len(masked), end + 40))
    for m in (left, right):
        if m is None:
            continue
        word = m.group(1).lower()
        if word not in own and word not in ignore:
            return True
    return False


def find_variants(
    seeds: Iterable[Seed],
    masked: str,
    *,
    connectors: frozenset[str],
    allowlist: Any | None,
    titles: frozenset[str] = DEFAULT_TITLES,
    common_words: Mapping[str, float] | None = None,
    regions: Callable[[], CaseRegions] | None = None,
) -> list[tuple[int, int, Seed]]:
    """Mentions of the seeds' names in ``masked`` (already-found spans are masked), left to right.

    A name part is skipped where it stands next to another capitalised word that is not a title, a
    connector or a word of the same name, since it is then part of someone else's name.
    """
    full: dict[str, Seed] = {}
    parts: dict[str, Seed] = {}
    own_words: dict[str, set[str]] = {}  # label -> words of every seed name with that label
    for seed in seeds:
        name = _norm(seed.text)
        if not name:
            continue
        # a one-word name is searched as a part (capitalised, not allow-listed): "Se" or "Por" taken for
        # a name by mistake must not spread to every "se" of the note
        if seed.spec.full and " " in name:
            full.setdefault(name, seed)
        if seed.spec.parts:
            for w in _WORD.findall(seed.text):
                key = w.lower()
                if len(w) < seed.spec.min_part_length or w in connectors or key in connectors:
                    continue
                if allowlist is not None and allowlist.contains(w):
                    continue
                parts.setdefault(key, seed)
        own_words.setdefault(seed.label, set()).update(w.lower() for w in _WORD.findall(seed.text))
    if not full and not parts:
        return []
    lowered = masked.lower()
    if len(lowered) != len(masked):  # a case mapping changed the length: offsets would not line up
        return []
    ignore = connectors | titles
    hits: list[tuple[int, int, Seed]] = []
    hits.extend(_full_occurrences(lowered, masked, full))
    case: CaseRegions | None = None  # the text's case style per block, read when first needed
    for pos, end, seed in _part_occurrences(lowered, masked, parts):
        if not masked[pos].isupper():
            if common_words is None:
                continue
            if case is None:
                case = regions() if regions is not None else case_regions(masked)
            if (
                case.style_at(pos) != "lower"
                or common_words.get(lowered[pos:end].casefold(), 0.0) >= VERY_COMMON_ZIPF
            ):
                continue
        start = pos
        if seed.spec.initials:
            m = _INITIALS_BEFORE.search(masked, max(0, pos - 12), pos)
            if m is not None and all(c.isupper() for c in m.group() if c.isalpha()):
                start = m.start()
        if not _in_other_name(masked, start, end, own_words.get(seed.label, set()), ignore):
            hits.append((start, end, seed))
    # longest first, then leftmost: full names win over their parts; one byte per character marks what is
    # taken, so each hit is checked in time proportional to its length
    hits.sort(key=lambda h: (-(h[1] - h[0]), h[0]))
    taken = bytearray(len(masked))
    out = []
    for s, e, seed in hits:
        if taken.find(1, s, e) != -1:
            continue
        taken[s:e] = b"\x01" * (e - s)
        out.append((s, e, seed))
    out.sort(key=lambda h: h[0])
    return out


#: up to this many distinct names (or parts), each is searched for with ``str.find`` (fast for a few);
#: with more, the text is read once, word by word, and each word looked up (linear in the text whatever
#: the number of names: a long export can hold thousands of patients)
_FIND_LIMIT = 64
_CHUNK = re.compile(r"[^ \t\n]+")  # what _match_words puts between the words of a full name
_NAME_RUN = regex.compile(r"[\p{L}\p{M}'’\-]+")  # the characters a name part (``_WORD``) is made of
_NOT_LETTER = regex.compile(r"[^\p{L}\p{M}]")


def _full_occurrences(lowered: str, masked: str, full: dict[str, Seed]) -> Iterable[tuple[int, int, Seed]]:
    """``(start, end, seed)`` for each bounded occurrence of a full name (words apart by spaces/tabs/newlines)."""
    if not full:
        return
    if len(full) <= _FIND_LIMIT:
        for name, seed in full.items():
            words = name.split()
            pos = lowered.find(words[0])
            while pos != -1:
                end = _match_words(lowered, pos, words)
                if end != -1 and _bounded(masked, pos, end):
                    yield pos, end, seed
                pos = lowered.find(words[0], pos + 1)
        return
    # word by word: a name's first word is the end of a chunk (from a bounded position), its middle
    # words whole chunks, its last word the start of a chunk (up to a bounded position)
    complete: dict[tuple[str, ...], Seed] = {}
    prefixes: set[tuple[str, ...]] = set()
    for name, seed in full.items():
        words = tuple(name.split())
        complete[words] = seed
        prefixes.update(words[:k] for k in range(1, len(words)))
    longest_first = max(len(w[0]) for w in complete)
    last_lengths = sorted({len(w[-1]) for w in complete})
    chunks = [m.span() for m in _CHUNK.finditer(lowered)]
    for i, (c0, c1) in enumerate(chunks):
        for p in _bounded_starts(lowered, c0, c1, longest_first):
            words = (lowered[p:c1],)
            j = i + 1
            while words in prefixes and j < len(chunks):
                n0, n1 = chunks[j]
                for length in last_lengths:
                    e = n0 + length
                    if e > n1:
                        break
                    if e < n1 and _is_letter(lowered[e]):
                        continue
                    seed = complete.get((*words, lowered[n0:e]))
                    if seed is not None and _bounded(masked, p, e):
                        yield p, e, seed
                words = (*words, lowered[n0:n1])
                j += 1


def _part_occurrences(lowered: str, masked: str, parts: dict[str, Seed]) -> Iterable[tuple[int, int, Seed]]:
    """``(start, end, seed)`` for each bounded occurrence of a name part (not yet checked for case)."""
    if not parts:
        return
    if len(parts) <= _FIND_LIMIT:
        for part, seed in parts.items():
            pos = lowered.find(part)
            while pos != -1:
                end = pos + len(part)
                if _bounded(masked, pos, end):
                    yield pos, end, seed
                pos = lowered.find(part, pos + 1)
        return
    # a part is made of letters, marks, apostrophes and hyphens: look inside each run of those only
    lengths = sorted({len(k) for k in parts})
    for run in _NAME_RUN.finditer(lowered):
        r0, r1 = run.span()
        segment = run.group()
        if segment.isalpha():  # one plain word: the only bounded occurrence is the whole run
            seed = parts.get(segment)
            if seed is not None and _bounded(masked, r0, r1):
                yield r0, r1, seed
            continue
        for p in _bounded_starts(lowered, r0, r1, r1 - r0):
            for length in lengths:
                e = p + length
                if e > r1:
                    break
                if e < r1 and _is_letter(lowered[e]):
                    continue
                seed = parts.get(lowered[p:e])
                if seed is not None and _bounded(masked, p, e):
                    yield p, e, seed


def _bounded_starts(text: str, start: int, end: int, longest: int) -> list[int]:
    """Positions in ``text[start:end]`` with no letter right before them (``start`` included), at most
    ``longest`` characters before ``end``."""
    lo = max(start, end - longest)
    out = [start] if lo == start else []
    out.extend(m.end() for m in _NOT_LETTER.finditer(text, max(lo - 1, start), end - 1) if m.end() >= lo)
    return out


def _is_letter(char: str) -> bool:
    """A letter or a combining mark: what a name is made of (digits are not)."""
    return char.isalpha() or unicodedata.category(char)[0] == "M"


def _bounded(text: str, start: int, end: int) -> bool:
    """No letter (or combining mark) right before ``start`` or right after ``end``.

    Digits are a boundary: a name holds none, so a known name glued to digits ("Quackenbush000",
    "000Smith", an export that lost its separators) is still the name, as the tokenizer splits it too."""
    return (start == 0 or not _is_letter(text[start - 1])) and (end == len(text) or not _is_letter(text[end]))


def _match_words(lowered: str, pos: int, words: list[str]) -> int:
    """End of ``words`` found at ``pos`` with any whitespace between them, or -1."""
    i = pos
    for k, word in enumerate(words):
        if k:
            j = i
            while j < len(lowered) and lowered[j] in " \t\n":
                j += 1
            if j == i:
                return -1
            i = j
        if not lowered.startswith(word, i):
            return -1
        i += len(word)
    return i
