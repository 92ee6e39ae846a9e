"""Mentions: a name or place found once, searched again in a document.

Detectors find a name where a cue stands ("daughter Karen Harris", "Patient: John Harris"), not every
time the note writes it ("HARRIS called back"). A found span's text is a *mention*; ``find_mentions``
marks the other places a document writes it, whatever detector found it first, across line breaks, whole
words only (digits and hyphens end a word; "Harris's" is "Harris"):

- a mention of several words ("John Harris", "Riverside General Hospital"; a street also without its
  house number: "14 Elm Street" -> "Elm Street") is found in any case, when one of its words could be
  searched alone (below): "DE SURVEILLANCE" taken for a name is not searched;
- each part of a multi-word person name ("John", "Harris": three or more letters, not a title, role or
  kinship word, not a particle, not on the medical allow-list) and every one-word mention is searched
  as a word:
  - a word that is not a common word of the language (``resources.word_zipf`` below Zipf 3: "Okonkwo",
    "kofi") is found in any case, unless the text writes it in lower case in mixed-case writing, which
    shows it is a word of the language ("bronchique", "cathéter" taken for names);
  - a common word ("Examen", "Komma") or a short word in capitals ("FEVG") is searched only when the
    language's name lists (place lists, for a place) know it ("Harris", "Rose", "Will"); it is then found
    only where it reads as a name: capitalised in mixed-case writing, or in lower case right after a
    title, role or kinship word ("son karen"); a very common word (Zipf 5: "will", "may") only where it
    is capitalised and not the first word of a sentence, or right after such a word ("Dr. Will"), never
    in German, whose nouns are all capitalised, without one; in a block written all in capitals or all
    in lower case (``text.style``), where case says nothing, only when it is not a very common word.

Mentions carry their label; one text found with several labels takes the strongest (``LABEL_STRENGTH``).
A mention is matched only where no span is yet: what the detectors and resolution decided stands.

The title, role and kinship words are data: ``resources/<lang>/{titles,staff_roles,kinship}.txt``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import regex

from clinideid.document import Span
from clinideid.errors import ConfigError
from clinideid.resources import available_lists, load_list, normalize, word_zipf
from clinideid.text.style import CaseRegions, case_regions
from clinideid.transform.surrogates.names import PARTICLES  # "van", "de la": never searched alone

#: person-name labels whose mentions are searched again (FAMILY is a kinship word, not a name)
NAME_LABELS = ("PATIENT", "PERSON", "DOCTOR", "USERNAME")
#: place labels whose mentions are searched again (ZIP is a number, searched by the detectors)
PLACE_LABELS = ("STREET", "CITY", "LOCATION_OTHER", "HOSPITAL", "ORGANIZATION", "STATE", "COUNTRY")
#: the label a text takes when it was found with several: earlier is stronger
LABEL_STRENGTH = (*NAME_LABELS, *PLACE_LABELS)
#: labels whose multi-word mentions are also searched part by part
PERSON_LABELS = frozenset({"PATIENT", "PERSON", "DOCTOR"})
#: a name part (or a one-word mention) needs this many letters to be searched on its own
MIN_WORD_LETTERS = 3
#: Zipf frequency from which a word is a common word of the language (the tables start at 3.0)
COMMON_ZIPF = 3.0
#: ... and from which it is so common ("will", "may", "hope") that only a name's capital shows it is one
VERY_COMMON_ZIPF = 5.0
#: a word in capitals of at most this many letters is an abbreviation unless the word lists know it
ACRONYM_LETTERS = 5
#: the word lists that know a one-word name, or a one-word place
NAME_LISTS = ("first_names_female", "first_names_male", "surnames", "patronymics")
PLACE_LISTS = ("cities", "states", "countries", "hospitals", "organizations")

_WORD = regex.compile(r"[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*")
_TOKEN = regex.compile(r"[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*|\p{N}+|[^\s\p{L}\p{M}\p{N}]")
_POSSESSIVE = ("'s", "’s")
_CYRILLIC = regex.compile(r"\p{Cyrillic}+$")
#: Russian case endings of nouns and adjectives (surnames in -ов/-ин/-ский, first names, patronymics)
_RU_ENDINGS = sorted(
    ["ыми", "ими", "ого", "его", "ому", "ему", "ой", "ей", "ою", "ею", "ый", "ий", "ым", "им", "ом", "ем", "ых",
     "их", "ую", "юю", "ая", "яя", "а", "я", "у", "ю", "е", "ы", "и", "ь", "й"],
    key=len,
    reverse=True,
)  # fmt: skip
_BULLETS = "-*•>·"


@dataclass(frozen=True, order=True)
class Mention:
    """A found name or place: its label and its text with whitespace collapsed (one space)."""

    label: str
    text: str

    @classmethod
    def of(cls, label: str, text: str) -> Mention | None:
        """The mention of a span's label and text; None for labels that are not searched again or a text
        without a letter (a room number)."""
        if label not in LABEL_STRENGTH:
            return None
        text = " ".join(text.split())
        if not any(c.isalpha() for c in text):
            return None
        return cls(label, text)


def document_mentions(spans: Iterable[Span], text: str) -> list[Mention]:
    """The distinct mentions of ``spans`` (contiguous ones), in a stable order."""
    found = {m for s in spans if not s.fragments if (m := Mention.of(s.label, text[s.start : s.end]))}
    return sorted(found)


# -- tokens ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Token:
    start: int
    end: int
    text: str
    folded: str

    @property
    def is_word(self) -> bool:
        return self.text[0].isalpha()


def tokenize(text: str, offset: int = 0) -> list[Token]:
    """Words (letters, inner apostrophes), numbers and single punctuation marks; spaces are dropped."""
    return [
        Token(m.start() + offset, m.end() + offset, m.group(), fold(m.group())) for m in _TOKEN.finditer(text)
    ]


def fold(word: str) -> str:
    """What two spellings of one word share: the word case-folded and, for a Russian word of five letters
    or more, without its case ending ("Зябликовой", "Зябликова" and "Зябликову" are one surname; "Анны" is
    too short to tell)."""
    folded = word.casefold()
    if len(folded) >= 5 and "\u0400" <= folded[0] <= "\u04ff" and _CYRILLIC.match(folded):
        for ending in _RU_ENDINGS:
            if folded.endswith(ending) and len(folded) - len(ending) >= 4:
                return folded[: -len(ending)]
    return folded


def _key(text: str) -> tuple[str, ...]:
    return tuple(t.folded for t in tokenize(text))


# -- title, role and kinship words -------------------------------------------------------------------------


@dataclass(frozen=True)
class RoleWords:
    """A language's title, role and kinship words, as token sequences ("sig.ra" -> sig . ra)."""

    entries: frozenset[tuple[str, ...]]
    longest: int

    def match_at(self, tokens: Sequence[Token], i: int) -> int:
        """How many tokens from ``i`` on make one entry (the longest), 0 if none."""
        for n in range(min(self.longest, len(tokens) - i), 0, -1):
            if tuple(t.folded for t in tokens[i : i + n]) in self.entries:
                return n
        return 0

    def match_before(self, tokens: Sequence[Token], j: int) -> int:
        """How many tokens ending at index ``j`` (inclusive) make one entry (the longest), 0 if none."""
        for n in range(min(self.longest, j + 1), 0, -1):
            if tuple(t.folded for t in tokens[j - n + 1 : j + 1]) in self.entries:
                return n
        return 0


#: the word lists whose entries stand next to a name and are never part of it
ROLE_LISTS = ("titles", "staff_roles", "kinship")


@cache
def role_words(language: str) -> RoleWords:
    """The title, role and kinship words of ``language`` (English for a language without lists)."""
    try:
        entries = [e for name in ROLE_LISTS for e in load_list(language, name)]
    except ConfigError:
        entries = [e for name in ROLE_LISTS for e in load_list("en", name)]
    keys = frozenset(k for k in map(_key, entries) if k)
    return RoleWords(keys, max(map(len, keys), default=0))


@cache
def _allowlist(language: str) -> frozenset[str]:
    try:
        return frozenset(normalize(w) for w in load_list(language, "medical_allowlist"))
    except ConfigError:
        return frozenset()


def _zipf(language: str, word: str) -> float:
    try:
        return word_zipf(language).get(word.casefold(), 0.0)
    except ConfigError:
        return 0.0


# -- what to search ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    """One token sequence to search (one word: with the common-word checks) and the label it gets."""

    key: tuple[str, ...]
    label: str
    origin: str  # where its text was found (the explanation of the new spans)
    known: bool = True  # a one-word target: whether the word lists know it as a name or place


def _strength(label: str) -> int:
    return LABEL_STRENGTH.index(label)


#: the longest mention searched again, in tokens: longer found spans are runs of text, not one name or place
MAX_MENTION_TOKENS = 16


def _targets(mentions: Iterable[tuple[Mention, str]], language: str) -> dict[tuple[str, ...], _Target]:
    """Folded token sequence -> what to search for it (the strongest label wins)."""
    out: dict[tuple[str, ...], _Target] = {}

    def add(key: tuple[str, ...], label: str, origin: str, known: bool = True) -> None:
        old = out.get(key)
        if old is None or _strength(label) < _strength(old.label):
            out[key] = _Target(key, label, origin, known or (old is not None and old.known))

    def add_word(token: Token, label: str, origin: str) -> None:
        known = _searchable_word(token, label, language)
        if known is not None:
            add((token.folded,), label, origin, known)

    for mention, origin in mentions:
        tokens = tokenize(mention.text)
        words = [t for t in tokens if t.is_word]
        if not words or len(tokens) > MAX_MENTION_TOKENS:
            continue  # nothing to search, or a run no name or place is as long as (reading it is quadratic)
        if len(words) == 1 and all(t.is_word or not t.text.isalnum() for t in tokens):
            add_word(words[0], mention.label, origin)  # one word, perhaps with a dot ("IVL.")
            continue
        person = mention.label not in PLACE_LABELS
        if person and not any(_searchable_word(t, mention.label, language) is not None for t in words):
            continue  # "DE SURVEILLANCE", "ANTI-XA": nothing in it reads as a name
        add(tuple(t.folded for t in tokens), mention.label, origin)
        if mention.label == "STREET":  # the street without its house number ("14 Elm Street")
            named = _strip_numbers(tokens)
            if len([t for t in named if t.is_word]) >= 2 and len(named) < len(tokens):
                add(tuple(t.folded for t in named), mention.label, origin)
        if mention.label in PERSON_LABELS and len(words) >= 2 and not any(c.isdigit() for c in mention.text):
            for token in words:
                add_word(token, mention.label, origin)
    return out


def _searchable_word(token: Token, label: str, language: str) -> bool | None:
    """Whether a word is searched on its own: None if not; else whether the word lists know it as a name
    (or a place, for a place label). A common word of the language ("Examen", "Komma") and a short word in
    capitals ("FEVG", "EHPAD": an abbreviation) are searched only when the lists know them."""
    if not token.is_word:
        return None
    return _searchable(token.text, label in PLACE_LABELS, language)


def is_role_word(word: str, language: str) -> bool:
    """Whether ``word`` is a title, staff role or kinship word of ``language`` ("DR.", "inf", "moglie")."""
    entries = role_words(language).entries
    return (fold(word),) in entries or (fold(word.rstrip(".")),) in entries


def is_name_evidence(word: str, language: str) -> bool:
    """Whether a word written without case information ("RENAL", "smith") still reads as a name: the
    name lists know it, or it is no common word of the language (and no short acronym)."""
    return _searchable(word, False, language) is not None


@lru_cache(maxsize=65536)
def _searchable(word: str, place: bool, language: str) -> bool | None:
    folded = word.casefold()
    letters = sum(c.isalpha() for c in word)
    if (
        letters < MIN_WORD_LETTERS
        or folded in PARTICLES
        or (fold(word),) in role_words(language).entries
        or normalize(word) in _allowlist(language)
    ):
        return None
    if folded in _known_words(language, place):
        return True
    if _zipf(language, word) >= COMMON_ZIPF or (word.isupper() and letters <= ACRONYM_LETTERS):
        return None
    return False


@cache
def _known_words(language: str, places: bool) -> frozenset[str]:
    """The one-word entries of the language's name lists (or place lists), case-folded."""
    names = PLACE_LISTS if places else NAME_LISTS
    try:
        available = set(available_lists(language))
    except ConfigError:
        return frozenset()
    return frozenset(
        entry.casefold() for name in names if name in available for entry in load_list(language, name)
    )


def _strip_numbers(tokens: list[Token]) -> list[Token]:
    lo, hi = 0, len(tokens)
    while lo < hi and not tokens[lo].is_word:
        lo += 1
    while hi > lo and not tokens[hi - 1].is_word:
        hi -= 1
    return tokens[lo:hi]


# -- finding -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A new mention in the text: offsets, label and how its text was found first."""

    start: int
    end: int
    label: str
    origin: str


def find_mentions(
    text: str,
    spans: Sequence[Span],
    mentions: Iterable[tuple[Mention, str]],
    language: str,
) -> list[Found]:
    """Where ``text`` writes one of ``mentions`` (each with a note on where it was found) outside the
    ``spans`` already there, in reading order. Linear in the text: its words are read once, and only
    around a word that starts a mention is more of it tokenised."""
    targets = _targets(mentions, language)
    if not targets:
        return []
    search = _Search(text, language)
    wanted = frozenset(k[0] for k in targets)
    unknown = {t.key[0] for t in targets.values() if not t.known}
    hits: list[tuple[Token, str]] = []  # (word, the key it matches: itself or its possessive stem)
    lowered: list[Token] = []  # unknown words written in lower case in mixed-case writing
    for m in _WORD.finditer(text):
        word = m.group()
        folded = fold(word)
        keys = [folded]
        if folded.endswith(_POSSESSIVE) and len(folded) > 2:
            keys.append(folded[:-2])
        for key in keys:
            if key in wanted:
                hits.append((Token(m.start(), m.end(), word, folded), key))
            if key in unknown and word[0].islower() and search.regions.style_at(m.start()) == "mixed":
                lowered.append(Token(m.start(), m.end(), word, key))
    first: dict[str, list[_Target]] = {}
    for target in sorted(targets.values(), key=lambda t: -len(t.key)):
        first.setdefault(target.key[0], []).append(target)
    candidates: list[tuple[int, int, _Target]] = []
    for token, key in hits:
        for target in first.get(key, ()):
            matched = search.match(token, key, target.key)
            if matched is not None and search.accept(target, matched):
                end = matched[-1].end if key == token.folded else token.end - 2  # without the "'s"
                candidates.append((token.start, end, target))
    taken = bytearray(len(text))
    for span in spans:
        for a, b in span.pieces:
            taken[a:b] = b"\x01" * (b - a)
    # an unknown word the text writes in lower case in mixed-case running text (outside what is found and
    # outside a whole mention) is a word of the language there ("bronchique"): not searched alone
    named = bytearray(taken)
    for start, end, target in candidates:
        if len(target.key) > 1:
            named[start:end] = b"\x01" * (end - start)
    common_here = {t.folded for t in lowered if named.find(1, t.start, t.end) == -1}
    out: list[Found] = []
    for start, end, target in sorted(candidates, key=lambda c: (c[0] - c[1], c[0])):  # longest first
        if taken.find(1, start, end) != -1:
            continue
        if len(target.key) == 1 and not target.known and target.key[0] in common_here:
            continue
        taken[start:end] = b"\x01" * (end - start)
        out.append(Found(start, end, target.label, target.origin))
    return sorted(out, key=lambda f: f.start)


class _Search:
    """One text: its tokens around a hit, its case regions, and the checks of a match."""

    def __init__(self, text: str, language: str) -> None:
        self.text = text
        self.language = language
        self.roles = role_words(language)
        self._regions: CaseRegions | None = None

    @property
    def regions(self) -> CaseRegions:
        if self._regions is None:
            self._regions = case_regions(self.text)
        return self._regions

    def after(self, pos: int, n: int) -> list[Token]:
        """Up to ``n`` tokens from ``pos`` on."""
        out: list[Token] = []
        for m in _TOKEN.finditer(self.text, pos):
            if len(out) == n:
                break
            out.append(Token(m.start(), m.end(), m.group(), fold(m.group())))
        return out

    def before(self, pos: int, n: int) -> list[Token]:
        """Up to ``n`` tokens ending before ``pos`` (within the same few dozen characters)."""
        lo = max(0, pos - 16 * n)
        return tokenize(self.text[lo:pos], lo)[-n:]

    def match(self, token: Token, key: str, target: tuple[str, ...]) -> list[Token] | None:
        """The tokens of ``target`` read from ``token`` on (any spaces and line breaks between), or None."""
        if len(target) == 1:
            return [token]
        if key != token.folded:
            return None  # a possessive only ends a mention
        tokens = [token, *self.after(token.end, len(target) - 1)]
        if tuple(t.folded for t in tokens) != target:
            return None
        return tokens

    def accept(self, target: _Target, tokens: list[Token]) -> bool:
        """Whether the mention read as ``tokens`` is the name (or place) here, not a common word."""
        if len(target.key) > 1:
            return True  # a whole name or place of several words, in any case
        token = tokens[0]
        zipf = _zipf(self.language, token.text)
        if zipf < COMMON_ZIPF:
            return True
        if self.regions.style_at(token.start) != "mixed":  # case says nothing here
            return zipf < VERY_COMMON_ZIPF
        if not token.text[0].isupper():  # "son karen", never "son will" (the word)
            return zipf < VERY_COMMON_ZIPF and self._beside_role(token)
        if zipf < VERY_COMMON_ZIPF or self._beside_role(token):
            return True
        return self.language != "de" and not self._sentence_start(token.start)

    def _beside_role(self, token: Token) -> bool:
        """Right after a title, role or kinship word ("son will", "Dr. Will"), or right before a
        credential or role ("Will, RN")."""
        span = self.roles.longest
        before = self.before(token.start, span + 1)
        if before and before[-1].text == ".":
            before = before[:-1]
        if (
            before
            and self.roles.match_before(before, len(before) - 1)
            and self._close(before[-1].end, token.start)
        ):
            return True
        after = self.after(token.end, span + 1)
        if after and after[0].text == ",":
            after = after[1:]
        return bool(after) and self._close(token.end, after[0].start) and bool(self.roles.match_at(after, 0))

    def _close(self, a: int, b: int) -> bool:
        """At most a few characters apart, on one line."""
        return b - a <= 3 and "\n" not in self.text[a:b]

    def _sentence_start(self, pos: int) -> bool:
        k = pos - 1
        while k >= 0 and (self.text[k] in " \t" or self.text[k] in _BULLETS):
            k -= 1
        return k < 0 or self.text[k] in "\n.!?:;"
