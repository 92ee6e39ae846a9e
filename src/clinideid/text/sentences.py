"""An optional, rule-based sentence splitter that returns character ranges.

Models in clinideid do not need sentences (they can read sentence-free windows), so the splitter is
deliberately simple and predictable: a sentence ends at ``.``, ``!``, ``?`` or ``;``-free line ends when
the next non-space character starts a new sentence (upper-case letter, digit, bullet), unless the dot
ends a known abbreviation ("Dr.", "Sra.", "г.") or a single initial ("J."). Blank lines always split,
and so do single line breaks when ``split_on_newline`` is set (the usual layout of clinical forms).
"""

from __future__ import annotations

import itertools

import regex

_ABBREVIATIONS = {
    # en
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "st",
    "jr",
    "sr",
    "vs",
    "etc",
    "e.g",
    "i.e",
    "no",
    "approx",
    "pt",
    "hx",
    # es
    "sra",
    "srta",
    "dra",
    "dña",
    "d",
    "da",
    "núm",
    "nº",
    "pág",
    "aprox",
    "hosp",
    "avda",
    "av",
    "c",
    # it
    "sig",
    "sigg",
    "dott",
    "dott.ssa",
    "prof.ssa",
    "ing",
    "sig.ra",
    "via",
    # fr
    "mme",
    "mlle",
    "pr",
    "m",
    "bd",
    "cf",
    # de
    "hr",
    "fr",
    "z.b",
    "bzw",
    "ggf",
    "str",
    "nr",
    # ru
    "г",
    "гр",
    "ул",
    "д",
    "кв",
    "им",
    "т",
    "см",
    "проф",
    "тел",
    "р",
}

_BOUNDARY = regex.compile(r"(?<=[.!?…])[\"'»)\]]*\s+(?=[\p{Lu}\p{N}\"'«(\[•\-–])", regex.V1)
_WORD_BEFORE = regex.compile(r"([\p{L}.]+)\.$", regex.V1)


def _ends_with_abbreviation(chunk: str) -> bool:
    m = _WORD_BEFORE.search(chunk.rstrip("\"'»)]"))
    if not m:
        return False
    word = m.group(1).lower()
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def split_sentences(text: str, split_on_newline: bool = True) -> list[tuple[int, int]]:
    """Sentence ranges ``(start, end)`` covering every non-space character of ``text`` exactly once."""
    cuts: set[int] = set()
    for m in _BOUNDARY.finditer(text):
        if not _ends_with_abbreviation(text[max(0, m.start() - 40) : m.start()]):
            cuts.add(m.end())
    line_break = regex.compile(r"\n\s*" if split_on_newline else r"\n[ \t]*\n\s*")
    for m in line_break.finditer(text):
        cuts.add(m.end())
    bounds = [0, *sorted(cuts), len(text)]
    out: list[tuple[int, int]] = []
    for a, b in itertools.pairwise(bounds):
        seg = text[a:b]
        stripped_left = len(seg) - len(seg.lstrip())
        stripped_right = len(seg) - len(seg.rstrip())
        s, e = a + stripped_left, b - stripped_right
        if s < e:
            out.append((s, e))
    return out
