"""Field and role cues fire wherever they stand on a line, and typographic hyphens and spaces match like
plain ones, in every language pack.

A one-line export (a table row, a JSON field, a 10 MB line of records) puts every ``Patient:`` after other
text; a cue at the start of a line only would leave all those names in clear. And an SSN written
``123‑45‑6789`` with non-breaking hyphens, or a name after ``Patient:`` and a no-break space, must be found
exactly like the plain spelling, with offsets in the original text. All names and numbers here are
invented.
"""

from __future__ import annotations

from functools import cache

import pytest

from clinideid.detect.rules import RuleDetector, RuleEngine, compile_pack
from clinideid.detect.rules.normalize import normalize_for_matching
from clinideid.document import Document


@cache
def _engine(language: str) -> RuleEngine:
    return RuleEngine(compile_pack(language))


def found(language: str, text: str) -> list[tuple[str, str]]:
    return [(f.label, text[f.start : f.end]) for f in _engine(language).run(text)]


def spans(language: str, text: str) -> list[tuple[int, int, str]]:
    return [(f.start, f.end, f.label) for f in _engine(language).run(text)]


# per language: a name cue, a name, and a second field of the same record (its text, value and label)
RECORDS = {
    "en": ("Patient:", "Zebediah Quackenbush", "DOB: 01/02/1950", "01/02/1950", "DATE"),
    "es": ("Paciente:", "Eulalio Cabrejas Villoslada", "NHC: 4471234", "4471234", "MEDICALRECORD"),
    "fr": ("Patient :", "Théodule Vermorel", "Tél : 01 42 49 49 49", "01 42 49 49 49", "PHONE"),
    "de": ("Patient:", "Gottlieb Wunderlich", "geb. 01.02.1950", "01.02.1950", "DATE"),
    "it": ("Paziente:", "Ermenegildo Scarpazza", "nato il 01/02/1950", "01/02/1950", "DATE"),
    "ru": ("ФИО:", "Пантелеймонов Евлампий Пафнутьевич", "Дата рождения: 01.02.1950", "01.02.1950", "DATE"),
}
LANGUAGES = list(RECORDS)
PREFIXES = ["", "x ", "🙂 ", "⚕️ ", "| ", "ID 4471 | ", "Seen today. ", "\t", "[3] "]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_name_cue_fires_after_any_prefix(language, prefix):
    key, name, *_ = RECORDS[language]
    text = f"{prefix}{key} {name}"
    assert ("PATIENT", name) in found(language, text)


@pytest.mark.parametrize("separator", ["  ", " | ", "\t", " ; "])
@pytest.mark.parametrize("language", LANGUAGES)
def test_two_fields_on_one_line(language, separator):
    key, name, second, value, label = RECORDS[language]
    for text in (f"{key} {name}{separator}{second}", f"{second}{separator}{key} {name}"):
        result = found(language, text)
        assert ("PATIENT", name) in result, text
        assert (label, value) in result, text


# invented name parts, by script
_SYLLABLES = {
    "latin": ["ba", "ko", "zu", "mi", "te", "lor", "van", "qui", "dre", "sel", "pho", "gar", "nis", "tul"],
    "cyrillic": ["ба", "ко", "зу", "ми", "те", "лор", "ван", "кви", "дре", "сел", "фо", "гар", "нис", "тул"],
}


def _names(language: str, n: int) -> list[str]:
    """``n`` distinct invented names: "Kobaq Zutelvan" (first name and surname; Russian: surname first,
    then first name and patronymic, as a form writes them)."""
    syll = _SYLLABLES["cyrillic" if language == "ru" else "latin"]
    out = []
    for i in range(n):
        a, b, c = syll[i % 14], syll[i // 14 % 14], syll[i // 196 % 14]
        if language == "ru":
            out.append(f"{(a + b + c).capitalize()}ов {(b + a).capitalize()}ий {(c + a).capitalize()}ович")
        else:
            out.append(f"{(a + c).capitalize()}q {(b + a + c).capitalize()}ver")
    return out


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_name_found_in_200_records_on_one_line(language):
    key, _, second, value, label = RECORDS[language]
    names = _names(language, 200)
    assert len(set(names)) == 200
    line = " | ".join(f"{key} {name} | {second}" for name in names)
    assert "\n" not in line and len(line) > 6000
    result = spans(language, line)
    patients = {line[s:e] for s, e, lab in result if lab == "PATIENT"}
    missed = [name for name in names if name not in patients]
    assert not missed, f"{len(missed)} names missed, e.g. {missed[:3]}"
    assert sum(1 for s, e, lab in result if lab == label and line[s:e] == value) == 200


def test_lowercase_key_inside_prose_is_not_a_field():
    """Away from the start of a line a key must be written as a form writes it (capitalised): "del
    paciente:" in a sentence is not a form field."""
    assert not any(lab == "PATIENT" for lab, _ in found("es", "Informe del paciente: varón de 45 años"))
    assert ("PATIENT", "Eulalio Cabrejas") in found("es", "Informe 3. Paciente: Eulalio Cabrejas")


# -- typographic hyphens and spaces ------------------------------------------------------------------

NBSP, NNBSP, THIN, NBHY, EN_DASH, MINUS, FIG_DASH = (
    "\u00a0",
    "\u202f",
    "\u2009",
    "\u2011",
    "\u2013",
    "\u2212",
    "\u2012",
)

# (language, plain text, the value that must be found in it, its label); variants of the value are
# written with typographic hyphens and spaces and must give the same spans
PLAIN = [
    ("en", "SSN 123-45-6789 on file", "123-45-6789", "SSN"),
    ("en", "SSN: 123-45-6789", "123-45-6789", "SSN"),
    ("en", "call 617-555-0143 today", "617-555-0143", "PHONE"),
    ("en", "Phone: (617) 555-0143", "(617) 555-0143", "PHONE"),
    ("en", "admitted 2019-03-04 overnight", "2019-03-04", "DATE"),
    ("en", "seen on March 3, 2019 in clinic", "March 3, 2019", "DATE"),
    ("en", "card 4111 1111 1111 1111 declined", "4111 1111 1111 1111", "ACCOUNT"),
    ("es", "tel. 612 345 678", "612 345 678", "PHONE"),
    ("es", "Fecha de ingreso: 12-03-2019", "12-03-2019", "DATE"),
    ("es", "ingresó el 12 de marzo de 2019", "12 de marzo de 2019", "DATE"),
    ("fr", "tél. 01 42 49 49 49", "01 42 49 49 49", "PHONE"),
    ("fr", "hospitalisé le 12 mars 2019", "12 mars 2019", "DATE"),
    ("de", "Tel. 030 1234567", "030 1234567", "PHONE"),
    ("de", "Aufnahme am 12. März 2019", "12. März 2019", "DATE"),
    ("de", "Aufnahme am 2019-03-12", "2019-03-12", "DATE"),
    ("it", "tel. 06 1234 5678", "06 1234 5678", "PHONE"),
    ("it", "ricoverato il 12 marzo 2019", "12 marzo 2019", "DATE"),
    ("ru", "тел. +7 495 123-45-67", "+7 495 123-45-67", "PHONE"),
    ("ru", "поступил 12 марта 2019 г.", "12 марта 2019 г.", "DATE"),
    ("ru", "СНИЛС 112-233-445 95", "112-233-445 95", "SSN"),
]


def _variants(value: str) -> list[str]:
    out = []
    for hyphen in (NBHY, MINUS, FIG_DASH, EN_DASH):
        for space in (NBSP, NNBSP, THIN):
            v = value.replace("-", hyphen).replace(" ", space)
            if v != value:
                out.append(v)
    return list(dict.fromkeys(out))


@pytest.mark.parametrize(("language", "text", "value", "label"), PLAIN, ids=[f"{p[0]}:{p[1]}" for p in PLAIN])
def test_typographic_variants_match_like_plain_ones(language, text, value, label):
    plain = spans(language, text)
    start = text.index(value)
    assert (start, start + len(value), label) in plain, found(language, text)
    for variant in _variants(value):
        changed = text.replace(value, variant)
        assert len(changed) == len(text)
        assert spans(language, changed) == plain, repr(variant)


@pytest.mark.parametrize("language", LANGUAGES)
def test_name_after_a_no_break_space(language):
    key, name, *_ = RECORDS[language]
    for space in (NBSP, NNBSP, THIN, "\u2007"):
        text = f"{key}{space}{name.replace(' ', space)}"
        assert ("PATIENT", text[-len(name) :]) in found(language, text), repr(space)


def test_spans_keep_the_original_characters():
    text = f"SSN 123{NBHY}45{NBHY}6789, Patient:{NBSP}Zebediah{NBSP}Quackenbush"
    doc = Document("d1", text, "en")
    got = {(s.label, s.text) for s in RuleDetector(language="en").detect_one(doc)}
    assert ("SSN", f"123{NBHY}45{NBHY}6789") in got
    assert ("PATIENT", f"Zebediah{NBSP}Quackenbush") in got


def test_propagation_reads_the_normalised_text():
    text = (
        f"Patient: Anna-Lena Quackenbush\nToday Anna{NBHY}Lena{NBSP}Quackenbush called; Quackenbush agreed."
    )
    result = found("en", text)
    assert ("PATIENT", f"Anna{NBHY}Lena{NBSP}Quackenbush") in result
    assert ("PATIENT", "Quackenbush") in result


def test_word_lists_read_the_normalised_text():
    assert found("en", f"She moved to the United{NBSP}States in 1999.") == [
        ("COUNTRY", f"United{NBSP}States"),
        ("DATE", "1999"),
    ]


def test_normalisation_keeps_length_and_offsets():
    text = f"a{NBSP}b{NNBSP}c{THIN}d{NBHY}e{MINUS}1{FIG_DASH}2{EN_DASH}3 {EN_DASH} x\u2028y\u00e9"
    norm = normalize_for_matching(text)
    assert len(norm) == len(text)
    assert norm == "a b c d-e-1-2-3 \u2013 x\nyé"
    assert normalize_for_matching("plain ascii") == "plain ascii"
