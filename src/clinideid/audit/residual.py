"""Scan an output text for likely residual PHI (offsets and kinds only, never the text).

The scan is deliberately independent of the detectors: it knows nothing of rules or models, only what PHI
tends to look like. Its job is recall (point a reviewer at what may have slipped through), so it flags
generously and ranks by a per-kind weight instead of deciding.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

from clinideid.errors import ConfigError
from clinideid.resources import available_languages, load_list, normalize, word_zipf

#: how much each kind of flag weighs in a document's risk score (and ranks flags)
WEIGHTS: Mapping[str, float] = {
    "id": 3.0,
    "phone": 3.0,
    "email_url": 3.0,
    "name_list": 2.5,
    "date": 2.0,
    "age": 1.5,
    "zip": 2.0,
    "number_after_cue": 2.0,
    "region_code": 1.5,
    "place_list": 1.5,
    "after_title": 1.5,
    "name_list_lower": 1.0,
    "place_list_common": 0.8,
    "profession_list": 0.8,
    "country_list": 0.8,
    "rare_capitalised": 1.0,
    "name_list_common": 0.5,
    "abbreviation": 0.3,
}

#: flags listed per document in its report (the strongest; counts and risk use them all)
MAX_FLAGS_LISTED = 500

_WORD = re.compile(r"[^\W\d_](?:[\w'’-]*[^\W\d_])?")
# Every pattern takes time linear in the text, whatever the text. A pattern that, tried at each position
# of a long run ("12-12-12-...", "Ab-Ab-Ab-..."), reads to the end of the run before failing takes time
# quadratic in the run's length (minutes for 40,000 characters). So each repetition such a failed try can
# read is either bounded by the longest value that shape takes (an address's local part and domain labels,
# a domain's number of labels), or possessive and read from one start per run (identifiers).
_LOCAL_PART = 64  # characters of an address before "@" (RFC 5321)
_LABEL = 63  # characters of one domain label (RFC 1035)
_LABELS = 8  # labels before a top-level domain ("mail.clinic.example" + ".org")
_EMAIL_URL = re.compile(
    rf"[\w.+-]{{1,{_LOCAL_PART}}}+@[\w-]{{1,{_LABEL}}}+(?:\.[\w-]{{1,{_LABEL}}}+)++"
    r"|(?:https?://|www\.)\S+"
    # a domain name ending in a common top-level domain, read from the start of a word that is not the
    # second part of a hyphenated one (from there the first part's start reads the same labels)
    rf"|(?<!\w)(?<!\w-)(?<!\w--)\b[\w-]{{1,{_LABEL}}}+(?:\.[\w-]{{1,{_LABEL}}}+){{0,{_LABELS}}}"
    r"\.(?:com|org|net|de|it|ru|fr|es|uk)\b"
)
_DATE = re.compile(
    r"(?<![\d.])(?:\d{1,4}[./-]\d{1,2}(?:[./-]\d{2,4})?|\d{1,2}\s*[./]\s*[^\W\d_]{3,9}\.?\s*\d{2,4})(?![\d])"
    r"|\b(?:19|20)\d{2}\b"
)
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d{2,5}\)?(?:[ .-]?\(?\d{2,5}\)?){1,4}(?![\w])")
# an identifier: ASCII letters and digits at both ends, 5 or more characters of a run of word characters,
# "/" and "-", with a digit from its start on. Tried once per run: the guard admits only the run's first
# position, the possessive prefix skips to the first place an identifier may start (the run's start or just
# after a "/" or "-", on an ASCII letter or digit) and group 1 is the identifier. Trying later places would
# find nothing new: the match from the first one reaches the last possible end, and when it fails (no digit
# after it, or too short) every later one fails too.
_ID = re.compile(
    r"(?<![\w/-])(?:[/-]|[^\WA-Za-z\d]\w*+[/-])*+(?=[\w/-]*\d)([A-Za-z\d][\w/-]{3,}[A-Za-z\d])(?![\w])"
)
_ZIP = re.compile(r"(?<![\w.,/-])(?:[A-Z]{1,2}-?)?\d{4,5}(?=[ \t]+[^\W\d_]{2})")
# UK and Canadian postcodes ("M30 8AR", "H4W 2T5")
_POSTCODE = re.compile(r"(?<![\w])(?:[A-Z]{1,2}\d[A-Z\d]?[ ]\d[A-Z]{2}|[A-Z]\d[A-Z][ ]?\d[A-Z]\d)(?![\w])")
# letters then digits as one code: number plates, bed/room/unit codes ("KRT 4471", "C-12")
_LETTER_CODE = re.compile(r"(?<![\w-])(?:[A-Z]{3}[ -]\d{3,5}|[A-Z]{2}[ -]\d{4,5}|[A-Z]{1,3}-\d{1,5})(?![\w])")
# laboratory and vital-sign abbreviations that a value follows ("BUN 132", "QRS 108")
_NOT_CODE = frozenset(
    [
        "BUN",
        "QRS",
        "LDL",
        "HDL",
        "ALT",
        "AST",
        "ALP",
        "GGT",
        "INR",
        "TSH",
        "WBC",
        "RBC",
        "PLT",
        "HGB",
        "HCT",
        "MCV",
        "CRP",
        "ESR",
        "SAT",
        "BMI",
        "PCT",
        "LDH",
        "CPK",
        "BNP",
        "PTT",
    ]
)
# a number after a cue that introduces one: numero signs, room/bed/record words ("№ 6619", "Rm 4", "#12")
_NUMBER_CUE = re.compile(
    r"(?:№|#|\b(?:No|Nr|N|n|Rm|Room|Bed|Zimmer|Zi|stanza|letto|палата|и/б|ИБ|МК|карта))\.?[ \t]*(\d[\w/-]*)"
)
# a two- or three-letter region code after a place name and a comma ("Creswell, NC", "Dubbo NSW 2830");
# professional post-nominals are not regions
_REGION_CODE = re.compile(r"[^\W\d_]{3}(?:,[ ]([A-Z]{2,3})(?![\w:])|[ ]([A-Z]{2,3})(?=[ ]\d))")
_NOT_REGION = frozenset(
    {"MD", "DO", "RN", "NP", "PA", "PHD", "DDS", "MBBS", "FRCP", "MRCP", "BSC", "MSC", "LPN"}
)
_TITLE = re.compile(
    r"(?:\b(?:Dr|Mr|Mrs|Ms|Miss|Prof|Herr|Frau|Hr|Fr|Dott|Dott\.ssa|Sig|Sig\.ra|Sra|Sr|Mme|Mlle|M|"
    r"RN|MD|NP|PA|пациент|врач|д-р)\.?|[гГ]\.)[ \t]+",
    re.IGNORECASE,
)
_AGE = re.compile(
    r"(?<!\d)\d{1,3}\s?(?:-?\s?(?:years?|yrs?|y/?o|yo|jährig\w*|jahre?n?|j\.|anni|anno|aa|лет|года?|год"
    r"|ans|años|an)\b|[- ]?(?:year|jahr)s?[- ]old)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Flag:
    """One place the audit thinks may still hold PHI: offsets into the output text, never its text."""

    start: int
    end: int
    kind: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@cache
def _lists(language: str) -> tuple[frozenset[str], ...]:
    """(person names, place names, medical words, professions, countries) of ``language``, normalised."""

    def read(*names: str) -> frozenset[str]:
        words: set[str] = set()
        for name in names:
            try:
                entries = load_list(language, name)
            except ConfigError:
                continue
            for entry in entries:
                words.update(normalize(w) for w in _WORD.findall(entry) if len(w) > 1)
        return frozenset(words)

    people = read("first_names_female", "first_names_male", "surnames", "patronymics")
    places = read("cities", "streets", "hospitals", "states") - people
    medical = read("medical_allowlist")
    return people, places, medical, read("professions"), read("countries")


def _language(language: str | None) -> str:
    code = (language or "en").replace("_", "-").split("-")[0].lower()
    return code if code in available_languages() else "en"


def _word_kind(word: str, language: str, sentence_start: bool) -> str | None:
    """The flag kind of one alphabetic token, or None when it does not look like PHI."""
    people, places, medical, professions, countries = _lists(language)
    norm = normalize(word)
    common = word_zipf(language).get(word.casefold(), 0.0) >= 3.0
    if norm in medical or len(word) < 2:
        return None
    if norm in professions:
        return "profession_list"
    if not word[0].isupper():
        return "name_list_lower" if norm in people and not common and len(word) > 2 else None
    if norm in people:
        return "name_list_common" if common or sentence_start else "name_list"
    if norm in places:
        return "place_list_common" if common else "place_list"
    if norm in countries:
        return "country_list"
    if common:
        return None
    if word.isupper() and len(word) <= 5:
        return "abbreviation"
    return "rare_capitalised"


def scan(text: str, language: str | None, protected: Iterable[tuple[int, int]] = ()) -> list[Flag]:
    """Flags in ``text`` outside the ``protected`` ranges (the surrogates the run inserted), by offset."""
    lang = _language(language)
    # one byte per character: 1 where a surrogate or an earlier flag lies (linear in the text, any size)
    covered = bytearray(len(text))
    for a, b in protected:
        a, b = max(0, a), min(len(text), b)
        if a < b:
            covered[a:b] = b"\x01" * (b - a)
    flags: list[Flag] = []

    def add(start: int, end: int, kind: str) -> None:
        if end <= start or covered.find(1, start, end) != -1:
            return
        covered[start:end] = b"\x01" * (end - start)
        flags.append(Flag(start, end, kind, WEIGHTS[kind]))

    for pattern, kind in ((_EMAIL_URL, "email_url"), (_AGE, "age"), (_DATE, "date")):
        for m in pattern.finditer(text):
            add(m.start(), m.end(), kind)
    for m in _PHONE.finditer(text):
        digits = sum(c.isdigit() for c in m.group())
        if digits >= 7 and any(c in " .-()" for c in m.group().strip()):
            add(m.start(), m.end(), "phone")
    for m in _ID.finditer(text):
        token = m.group(1)
        digits = sum(c.isdigit() for c in token)
        if digits >= 4 or (digits >= 2 and sum(c.isalpha() for c in token) >= 3):
            add(m.start(1), m.end(1), "id")
    for m in _ZIP.finditer(text):
        add(m.start(), m.end(), "zip")
    for m in _POSTCODE.finditer(text):
        add(m.start(), m.end(), "zip")
    for m in _LETTER_CODE.finditer(text):
        if m.group()[:3].rstrip(" -") not in _NOT_CODE:
            add(m.start(), m.end(), "id")
    for m in _NUMBER_CUE.finditer(text):
        add(m.start(1), m.end(1), "number_after_cue")
    for m in _REGION_CODE.finditer(text):
        group = 1 if m.group(1) else 2
        if m.group(group) not in _NOT_REGION:
            add(m.start(group), m.end(group), "region_code")
    for m in _TITLE.finditer(text):
        word = _WORD.match(text, m.end())
        if word is not None:
            add(word.start(), word.end(), "after_title")
    for m in _WORD.finditer(text):
        before = text[max(0, m.start() - 3) : m.start()].rstrip(" \t\"'«(")
        sentence_start = not before or before[-1] in ".!?:\n"
        kind = _word_kind(m.group(), lang, sentence_start)
        if kind is not None:
            add(m.start(), m.end(), kind)
    flags.sort(key=lambda f: (f.start, f.end))
    return flags


def risk_score(flags: Sequence[Flag], chars: int) -> float:
    """Weighted flags per 1,000 characters, plus the heaviest flag: dense and strong flags rank first."""
    if not flags:
        return 0.0
    total = sum(f.score for f in flags)
    return round(max(f.score for f in flags) + 1000.0 * total / max(chars, 200), 3)


def audit_document(
    text: str, language: str | None, replacements: Iterable[Mapping[str, Any] | Any]
) -> dict[str, Any]:
    """The audit of one output text: its flags (offsets, kind, score), counts per kind and a risk score.

    ``replacements`` are the run's replacements (``Replacement`` objects or the report's records); their
    ``new_start``/``new_end`` ranges are the surrogates the run inserted and are not scanned.
    """
    protected = [
        (int(r["new_start"]), int(r["new_end"])) if isinstance(r, Mapping) else (r.new_start, r.new_end)
        for r in replacements
    ]
    flags = scan(text, language, protected)
    ranked = sorted(flags, key=lambda f: (-f.score, f.start))
    out = {
        "risk": risk_score(flags, len(text)),
        "flags_per_kind": dict(sorted(Counter(f.kind for f in flags).items())),
        "flags": [f.to_dict() for f in ranked[:MAX_FLAGS_LISTED]],
    }
    if len(ranked) > MAX_FLAGS_LISTED:
        out["flags_not_listed"] = len(ranked) - MAX_FLAGS_LISTED
    return out
