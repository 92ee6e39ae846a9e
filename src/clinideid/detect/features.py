"""Token features for sequence taggers (the CRF), computed over a whole document.

Features are plain strings (binary attributes for CRFsuite). Each token gets features of itself and of
its neighbours within ``window`` tokens: the lower-cased word, its shape, affixes, casing flags, the shape
of the whitespace-delimited chunk it sits in (``03/03/1946`` -> ``dd/dd/dddd``), its position in the line,
form-field context (the words before the colon of ``Nombre: Juan``), gazetteer hits and, optionally, the
labels of spans a rule detector found over the token (the hybrid feature set).

Features are computed document-wide (neighbours may sit on the previous line; a ``nl`` flag tells), so
whatever unit a model is trained on (lines or sliding windows) sees the same features.

CRFsuite takes features as UTF-8, which cannot hold a lone surrogate (``"\\ud800"``, e.g. from a JSON
``"\\ud800"`` escape): features are computed on the text with every surrogate replaced by U+FFFD, one
character for one, so token offsets stay those of the original text.
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.text import Token, tokenize

log = logging.getLogger(__name__)

#: logical gazetteer names and the word lists (``clinideid.resources.load_list``) they combine
GAZETTEER_LISTS: dict[str, tuple[str, ...]] = {
    "first_names": ("first_names_female", "first_names_male"),
    "surnames": ("surnames",),
    "cities": ("cities",),
    "countries": ("countries",),
    "hospitals": ("hospitals",),
    "states": ("states",),
    "streets": ("streets",),
    "organizations": ("organizations",),
    "professions": ("professions",),
}
DEFAULT_GAZETTEERS = ("first_names", "surnames", "cities", "countries", "hospitals")

_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable_text(text: str) -> str:
    """``text`` with every surrogate code point (which UTF-8, hence CRFsuite, cannot encode) replaced by
    U+FFFD: one character for one, so offsets into ``text`` stay valid."""
    return _SURROGATE.sub("\ufffd", text)


@dataclass(frozen=True)
class FeatureConfig:
    """Which features to compute. Stored in the model so prediction computes exactly the same ones."""

    window: int = 2
    affixes: int = 4
    language: str | None = None
    gazetteers: tuple[str, ...] = DEFAULT_GAZETTEERS
    rules: dict[str, Any] | None = None  # a detector spec, e.g. {"type": "rules", "language": "es"}
    field_words: int = 2
    # one model for several languages: word lists and evidence follow each document's own language
    multilingual: bool = False
    evidence: tuple[str, ...] = ()  # language-independent evidence groups (clinideid.detect.evidence)

    def __post_init__(self) -> None:
        from clinideid.detect.evidence import check_groups

        object.__setattr__(self, "gazetteers", tuple(self.gazetteers))
        object.__setattr__(self, "evidence", check_groups(tuple(self.evidence)))
        unknown = [g for g in self.gazetteers if g not in GAZETTEER_LISTS]
        if unknown:
            raise ConfigError(
                f"unknown gazetteer(s) {', '.join(unknown)}; known: {', '.join(GAZETTEER_LISTS)}"
            )
        if self.multilingual and self.language:
            raise ConfigError(
                "a multilingual feature set reads each document's language: leave 'language' unset"
            )
        if (self.gazetteers or self.evidence) and not (self.language or self.multilingual):
            raise ConfigError(
                "gazetteer and evidence features need a language (set 'language' or 'multilingual: true', "
                "or 'gazetteers: []')"
            )
        if not 0 <= self.window <= 5:
            raise ConfigError(f"feature window must be in 0..5, got {self.window}")
        if not 0 <= self.affixes <= 6:
            raise ConfigError(f"affix length must be in 0..6, got {self.affixes}")

    def to_dict(self) -> dict[str, Any]:
        out = {
            "window": self.window,
            "affixes": self.affixes,
            "language": self.language,
            "gazetteers": list(self.gazetteers),
            "rules": dict(self.rules) if self.rules else None,
            "field_words": self.field_words,
        }
        if self.multilingual or self.evidence:  # older models have neither key
            out.update(multilingual=self.multilingual, evidence=list(self.evidence))
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FeatureConfig:
        return cls(**data)


# -- shapes -------------------------------------------------------------------------------------------------


def _char_class(ch: str) -> str:
    if ch.isdigit():
        return "d"
    if ch.isalpha():
        return "X" if ch.isupper() else "x"
    return ch


def word_shape(text: str, max_len: int = 8) -> str:
    """Character classes, e.g. ``Juan`` -> ``Xxxx``, ``28016`` -> ``ddddd``; truncated to ``max_len``."""
    return "".join(_char_class(c) for c in text[:max_len])


def short_shape(text: str) -> str:
    """Compressed shape: runs of one class collapse, ``Juan`` -> ``Xx``, ``03/03/1946`` -> ``d/d/d``."""
    out: list[str] = []
    for c in text:
        k = _char_class(c)
        if not out or out[-1] != k:
            out.append(k)
    return "".join(out)


def chunk_shape(text: str, max_len: int = 24) -> str:
    """Shape of a whitespace-delimited chunk: letter runs collapse, digit runs keep up to 4 digits.

    ``03/03/1946`` -> ``dd/dd/dddd``, ``nnavcu@hotmail.com`` -> ``x@x.x``, ``García-López`` -> ``Xx-Xx``.
    """
    out: list[str] = []
    run_class = ""
    run_len = 0
    for c in text:
        k = _char_class(c)
        if k == run_class:
            run_len += 1
            if k == "d" and run_len <= 4:
                out.append("d")
            continue
        out.append(k)
        run_class, run_len = k, 1
    return "".join(out)[:max_len]


def _strip_accents(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")


def _len_bucket(n: int) -> str:
    if n <= 4:
        return str(n)
    if n <= 6:
        return "5-6"
    if n <= 9:
        return "7-9"
    return "10+"


# -- token marks from character spans -----------------------------------------------------------------------


def mark_tokens(
    tokens: Sequence[Token], ranges: Sequence[tuple[int, int, str]], starts: Sequence[int] | None = None
) -> list[list[str]]:
    """For each token, ``B-name``/``I-name`` for every range ``(start, end, name)`` overlapping it."""
    marks: list[list[str]] = [[] for _ in tokens]
    if not tokens:
        return marks
    ends = [t.end for t in tokens]
    for start, end, name in ranges:
        i = bisect.bisect_right(ends, start)
        first = True
        while i < len(tokens) and tokens[i].start < end:
            tag = f"{'B' if first else 'I'}-{name}"
            if tag not in marks[i]:
                marks[i].append(tag)
            first = False
            i += 1
    return marks


# -- the extractor ------------------------------------------------------------------------------------------


@dataclass
class _Gazetteer:
    name: str
    matcher: Any
    fingerprint: str


def _load_gazetteer(language: str, name: str) -> _Gazetteer:
    try:
        from clinideid.resources import load_list
        from clinideid.resources.gazetteer import Gazetteer
    except ImportError as exc:  # the word lists are part of clinideid; this only happens in a broken install
        raise ConfigError(
            f"gazetteer features need clinideid.resources ({exc}); set 'gazetteers: []' to train without them"
        ) from None
    entries: list[str] = []
    for list_name in GAZETTEER_LISTS[name]:
        entries.extend(load_list(language, list_name))
    entries = sorted(set(entries))
    digest = hashlib.sha256("\n".join(entries).encode("utf-8")).hexdigest()[:16]
    return _Gazetteer(name, Gazetteer(entries, case_sensitive=False), digest)


@dataclass
class FeatureExtractor:
    """Computes the features of ``config`` for documents. Gazetteers and the rule detector load lazily."""

    config: FeatureConfig
    _gazetteers: dict[str, list[_Gazetteer]] = field(default_factory=dict, init=False, repr=False)
    _rules: Any = field(default=None, init=False, repr=False)
    #: the fingerprints a model was trained with: a multilingual model's lists are compared as each
    #: language is first read (loading every language's lists up front would slow every start)
    expected_fingerprints: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def uses_rules(self) -> bool:
        return bool(self.config.rules)

    def language_of(self, doc: Document | None = None) -> str:
        """The language whose word lists ``doc`` is read with: the model's, or the document's own."""
        if not self.config.multilingual:
            return self.config.language or ""
        from clinideid.resources import available_languages

        code = ((doc.language if doc is not None else None) or "").replace("_", "-").split("-")[0].lower()
        if code not in available_languages():
            raise ConfigError(
                "this multilingual model reads each document's language; a document without one (or with "
                f"one that has no word lists) cannot be tagged: give one of {', '.join(available_languages())}"
            )
        return code

    def gazetteers(self, language: str | None = None) -> list[_Gazetteer]:
        lang = language if language is not None else self.config.language or ""
        if lang not in self._gazetteers:
            loaded = [_load_gazetteer(lang, name) for name in self.config.gazetteers]
            self._gazetteers[lang] = loaded
            if self.config.multilingual and self.expected_fingerprints:
                changed = [
                    g.name
                    for g in loaded
                    if self.expected_fingerprints.get(f"gazetteer:{lang}:{g.name}", g.fingerprint)
                    != g.fingerprint
                ]
                if changed:
                    log.warning(
                        "the model was trained with other versions of the %s word lists %s; re-train it for "
                        "best results",
                        lang,
                        ", ".join(changed),
                    )
        return self._gazetteers[lang]

    def use_gazetteers(self, lists: Mapping[str, Iterable[str]]) -> None:
        """Use these word lists (logical name -> entries) instead of the packaged ones."""
        from clinideid.resources.gazetteer import Gazetteer

        unknown = sorted(set(lists) - set(self.config.gazetteers))
        if unknown:
            raise ConfigError(f"gazetteer(s) {', '.join(unknown)} are not in this feature config")
        loaded = []
        for name in self.config.gazetteers:
            entries = sorted(set(lists.get(name, ())))
            digest = hashlib.sha256("\n".join(entries).encode("utf-8")).hexdigest()[:16]
            loaded.append(_Gazetteer(name, Gazetteer(entries, case_sensitive=False), digest))
        self._gazetteers = {self.config.language or "": loaded}

    def rule_detector(self) -> Any:
        if self._rules is None and self.config.rules:
            from clinideid.detect.base import build_detector

            self._rules = build_detector(dict(self.config.rules))
        return self._rules

    def fingerprints(self, languages: Sequence[str] = ()) -> dict[str, str]:
        """Hashes of the word lists in use, stored in the model to detect changed lists at load time (a
        multilingual model: those of ``languages``, the languages it was trained on)."""
        if not self.config.multilingual:
            return {f"gazetteer:{g.name}": g.fingerprint for g in self.gazetteers()}
        return {
            f"gazetteer:{lang}:{g.name}": g.fingerprint for lang in languages for g in self.gazetteers(lang)
        }

    def rule_spans(self, doc: Document) -> list[Span]:
        detector = self.rule_detector()
        return list(detector.detect_one(doc)) if detector is not None else []

    def document_features(
        self,
        doc: Document,
        tokens: Sequence[Token] | None = None,
        rule_spans: Sequence[Span] | None = None,
    ) -> list[list[str]]:
        """One feature list per token of ``doc`` (tokens from ``clinideid.text.tokenize`` unless given)."""
        text = doc.text
        tokens = tokenize(text) if tokens is None else tokens
        if not tokens:
            return []
        if _SURROGATE.search(text) is not None:  # same length and offsets, but encodable
            text = encodable_text(text)
            tokens = [Token(encodable_text(t.text), t.start, t.end) for t in tokens]
        language = self.language_of(doc)
        gaz_marks = self._gazetteer_marks(text, tokens, language)
        rule_marks: list[list[str]] | None = None
        spans: Sequence[Span] = ()
        if self.uses_rules:
            spans = self.rule_spans(doc) if rule_spans is None else rule_spans
            rule_marks = mark_tokens(tokens, [(s.start, s.end, s.label) for s in spans])
        feats = token_features(text, tokens, self.config, gaz_marks, rule_marks)
        if self.config.evidence:
            from clinideid.detect.evidence import evidence_features

            extras = evidence_features(text, tokens, language, self.config.evidence, spans)
            for f, extra in zip(feats, extras, strict=True):
                f.extend(extra)
        return feats

    def _gazetteer_marks(self, text: str, tokens: Sequence[Token], language: str) -> list[list[str]] | None:
        if not self.config.gazetteers:
            return None
        ranges: list[tuple[int, int, str]] = []
        for gaz in self.gazetteers(language):
            ranges.extend((s, e, gaz.name) for s, e, _ in gaz.matcher.find(text))
        return mark_tokens(tokens, ranges)


def _line_context(text: str, tokens: Sequence[Token], field_words: int) -> list[list[str]]:
    """Per-token layout features: line start, after a colon, form-field key words, chunk shape."""
    n = len(tokens)
    feats: list[list[str]] = [[] for _ in range(n)]
    line_start = 0  # index of first token of the current line
    key: list[str] | None = None
    dist = 0
    for i, tok in enumerate(tokens):
        f = feats[i]
        gap = text[tokens[i - 1].end : tok.start] if i else text[: tok.start]
        new_line = i == 0 or "\n" in gap
        if new_line:
            line_start = i
            key = None
            f.append("bol")
            if i:
                f.append("nl")
        elif gap:
            f.append("sp")
        else:
            f.append("glued")
        if i == n - 1 or "\n" in text[tok.end : tokens[i + 1].start]:
            f.append("eol")
        f.append(f"lpos={min(i - line_start, 5)}")
        prev = tokens[i - 1] if i > line_start else None
        if prev is not None and prev.text == ":":
            f.append("after_colon")
        if key is not None:
            dist += 1
            f.append(f"fk={key[-1]}")
            if len(key) > 1:
                f.append(f"fk2={'_'.join(key)}")
            f.append(f"fkd={min(dist, 4)}")
        if tok.text == ":" and i > line_start:
            nxt_glued_digit = i + 1 < n and tokens[i + 1].start == tok.end and tokens[i + 1].text.isdigit()
            if not (tokens[i - 1].text.isdigit() and nxt_glued_digit):  # not a time like 12:30
                words: list[str] = []
                j = i - 1
                while j >= line_start and len(words) < field_words:
                    w = tokens[j].text
                    if w.isalpha():
                        words.append(_strip_accents(w.lower()))
                    elif w not in "/ºª.-":
                        break
                    j -= 1
                if words:
                    key = list(reversed(words))
                    dist = 0
                    for k in range(j + 1, i):
                        feats[k].append("field_key")
    return feats


def _chunks(text: str, tokens: Sequence[Token]) -> list[tuple[str, str]]:
    """For each token: the shape of its whitespace-delimited chunk and its position in it (B/I/E/S)."""
    out: list[tuple[str, str]] = []
    n = len(tokens)
    i = 0
    while i < n:
        j = i
        while j + 1 < n and tokens[j + 1].start == tokens[j].end:
            j += 1
        shape = chunk_shape(text[tokens[i].start : tokens[j].end])
        if i == j:
            out.append((shape, "S"))
        else:
            out.append((shape, "B"))
            out.extend((shape, "I") for _ in range(i + 1, j))
            out.append((shape, "E"))
        i = j + 1
    return out


#: per-word feature strings, shared by every document (words repeat: most tokens of a note are cache hits)
_WORD_CACHE: dict[tuple[str, int, int], _WordFeatures] = {}
_WORD_CACHE_MAX = 200_000


@dataclass(frozen=True, slots=True)
class _WordFeatures:
    """What a token's own text decides: its lower-cased form, its own features, and the strings it gives its
    neighbours (one list per relative position such as ``-1:``)."""

    lower: str
    own: tuple[str, ...]
    as_neighbour: dict[str, tuple[str, ...]]


def _flags(t: str) -> list[str]:
    flags: list[str] = [f"ss={short_shape(t)}"]
    if t.isalpha():
        if t.isupper():
            flags.append("upper")
        elif t[0].isupper():
            flags.append("title")
    elif t.isdigit():
        flags.append(f"dlen={min(len(t), 12)}")
    else:
        flags.append("punct")
    return flags


def _word_features(t: str, affixes: int, window: int) -> _WordFeatures:
    key = (t, affixes, window)
    found = _WORD_CACHE.get(key)
    if found is not None:
        return found
    lower = t.lower()
    flags = _flags(t)
    own = ["bias", f"w={lower}", f"sh={word_shape(t)}", f"len={_len_bucket(len(t))}", *flags]
    if t.isalpha():
        folded = _strip_accents(lower)
        if folded != lower:
            own.append(f"wf={folded}")
    for k in range(1, min(affixes, len(t)) + 1):
        own.append(f"p{k}={lower[:k]}")
        own.append(f"s{k}={lower[-k:]}")
    neighbour = {}
    for k in range(1, window + 1):
        for sign in ("-", "+"):
            p = f"{sign}{k}:"
            neighbour[p] = (f"{p}w={lower}", *(p + x for x in flags))
    made = _WordFeatures(lower, tuple(own), neighbour)
    if len(_WORD_CACHE) >= _WORD_CACHE_MAX:
        _WORD_CACHE.clear()
    _WORD_CACHE[key] = made
    return made


def token_features(
    text: str,
    tokens: Sequence[Token],
    config: FeatureConfig,
    gaz_marks: Sequence[Sequence[str]] | None = None,
    rule_marks: Sequence[Sequence[str]] | None = None,
) -> list[list[str]]:
    """Feature strings for every token (see the module docstring)."""
    n = len(tokens)
    layout = _line_context(text, tokens, config.field_words)
    chunks = _chunks(text, tokens)
    words = [_word_features(t.text, config.affixes, config.window) for t in tokens]
    gaz = gaz_marks or [[] for _ in range(n)]
    rules = rule_marks or [[] for _ in range(n)]
    marks = [[*(f"g={m}" for m in g), *(f"r={m}" for m in r)] for g, r in zip(gaz, rules, strict=True)]
    offsets = [(k, sign, f"{sign}{k}:") for k in range(1, config.window + 1) for sign in ("-", "+")]
    out: list[list[str]] = []
    for i in range(n):
        word = words[i]
        f = [*word.own, f"cs={chunks[i][0]}", f"cp={chunks[i][1]}", *layout[i], *marks[i]]
        for k, sign, p in offsets:
            j = i - k if sign == "-" else i + k
            if j < 0:
                f.append(f"{p}BOS")
            elif j >= n:
                f.append(f"{p}EOS")
            else:
                f.extend(words[j].as_neighbour[p])
                if marks[j]:
                    f.extend(p + m for m in marks[j])
                if k == 1:
                    f.append(f"{p}cs={chunks[j][0]}")
        if i > 0:
            f.append(f"-1|0={words[i - 1].lower}|{word.lower}")
        if i + 1 < n:
            f.append(f"0|+1={word.lower}|{words[i + 1].lower}")
        out.append(f)
    return out
