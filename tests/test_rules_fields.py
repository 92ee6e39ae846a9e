"""Form fields as one mechanism: the field tables (``fields/<lang>.yaml``) and the ``fields`` rule kind.

A field label is never PHI and never part of a span; its value is PHI of the label's kind whatever its
shape, and ends at the next label of the table (PHI or not), at a separator or at the line end. Cases are
invented; ``tests/data/field_cases.yaml`` holds one case a line for every language.
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from functools import cache
from pathlib import Path

import pytest
import yaml

from clinideid.detect.rules import RuleDetector, RuleEngine, compile_pack
from clinideid.detect.rules.fieldtable import available_tables, packaged_table
from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.pipeline import Deidentifier

CASES = yaml.safe_load((Path(__file__).parent / "data" / "field_cases.yaml").read_text("utf-8"))
KEY = hashlib.sha256(b"field tests").digest()


@cache
def _detector(language: str) -> RuleDetector:
    return RuleDetector(language=language)


@cache
def _deidentifier(language: str) -> Deidentifier:
    """The rules-only pipeline: these tests are about the field tables (the default pipelines' header lines
    are checked in test_failure_classes.py)."""
    return Deidentifier.for_language(language, KEY, pipeline="rules")


def _spans(language: str, text: str) -> list[Span]:
    return _detector(language).detect_one(Document("case", text, language=language))


def _from_fields(span: Span) -> bool:
    return "/fields/" in (span.explanation or "")


@pytest.mark.parametrize("case", CASES, ids=[f"{c['lang']}:{c['text'][:40]}" for c in CASES])
def test_field_case(case):
    language, text = case["lang"], case["text"]
    spans = _spans(language, text)
    found = {(s.label, s.text): s for s in spans}
    for expected in case["spans"]:
        label, value = expected[0], str(expected[1])
        assert (label, value) in found, f"{label} {value!r} not found; got {sorted(found)}"
        if len(expected) > 2:
            assert found[(label, value)].attributes.get("date_role") == expected[2]
    wanted = {(e[0], str(e[1])) for e in case["spans"]}
    extra = [(s.label, s.text) for s in spans if _from_fields(s) and (s.label, s.text) not in wanted]
    assert not extra, f"the fields rule took more than the values: {extra}"


# ---- the header line of an admission note, in every phrasing, through the default pipeline ------------------

HEADERS = [
    "Patient: Thomas Whitaker, DOB 08/21/1944, admitted 02/28/2024.",
    "Patient: Thomas Whitaker DOB 08/21/1944 admitted 02/28/2024.",
    "Patient: Thomas Whitaker, DOB: 08/21/1944, admitted 02/28/2024",
    "Patient: Thomas Whitaker, born 08/21/1944, admitted 02/28/2024.",
    "Patient: Thomas Whitaker; DOB 08/21/1944; Admission date: 02/28/2024",
    "Patient: Thomas Whitaker  DOB: 08/21/1944  Admission date: 02/28/2024",
    "Patient: Thomas Whitaker\nDOB: 08/21/1944\nAdmission date: 02/28/2024",
    "Patient: Thomas Whitaker\nborn 08/21/1944\nadmitted 02/28/2024",
    "Patient: Thomas Whitaker\tDOB: 08/21/1944\tadmitted: 02/28/2024",
    "| Patient: Thomas Whitaker | DOB: 08/21/1944 | Admission date: 02/28/2024 |",
    "Patient | Thomas Whitaker | DOB | 08/21/1944 | admitted | 02/28/2024",
    "Name: Whitaker, Thomas  DOB 21 August 1944  admitted 28 Feb 2024",
]


DATE_VALUE = re.compile(r"\d{1,2}/\d{1,2}/\d{4}|\d{1,2} [A-Z][a-z]+ \d{4}")


@pytest.mark.parametrize("text", HEADERS)
def test_header_line_values_go_labels_stay(text):
    out = _deidentifier("en").deidentify(Document("hdr", text, language="en")).text
    dates = DATE_VALUE.findall(text)
    assert len(dates) == 2
    for value in ("Thomas", "Whitaker", *dates):
        assert value not in out, f"{value!r} left in clear: {out!r}"
    labels = [w for w in ("Patient", "Name", "DOB", "born", "admitted", "Admission date") if w in text]
    for label in labels:
        assert label in out, f"label {label!r} lost: {out!r}"
    assert out.startswith(text[: text.index("Patient") + 7] if "Patient" in text else "Name")
    spans, _ = _deidentifier("en").detect(Document("hdr", text, language="en"))
    roles = {s.attributes.get("date_role") for s in spans if s.label == "DATE"}
    assert roles == {"birth", "admission"}


@pytest.mark.parametrize(
    "language, text, values, labels",
    [
        (
            "de",
            "Patient: Klaus Bergmann, geb. 21.08.1944, aufgenommen am 28.02.2024.",
            ["Bergmann", "21.08.1944", "28.02.2024"],
            ["Patient:", "geb.", "aufgenommen am"],
        ),
        (
            "it",
            "Paziente: Mario Bianchi, nato il 21/08/1944, ricoverato il 28/02/2024.",
            ["Bianchi", "21/08/1944", "28/02/2024"],
            ["Paziente:", "nato il", "ricoverato il"],
        ),
        (
            "ru",
            "ФИО: Иванов Пётр Сергеевич, дата рождения 21.08.1944, поступил 28.02.2024.",
            ["Иванов", "21.08.1944", "28.02.2024"],
            ["ФИО:", "дата рождения", "поступил"],
        ),
    ],
)
def test_header_line_in_other_languages(language, text, values, labels):
    out = _deidentifier(language).deidentify(Document("hdr", text, language=language)).text
    for value in values:
        assert value not in out
    for label in labels:
        assert label in out


@pytest.mark.parametrize(
    "text, label",
    [("State: MA", "State: "), ("County: Norfolk", "County: "), ("City: Springfield", "City: ")],
)
def test_a_label_is_never_the_value(text, label):
    out = _deidentifier("en").deidentify(Document("lbl", text, language="en")).text
    assert out.startswith(label) and out != text


@pytest.mark.parametrize("value", ["unknown", "n/a", "none", "—", "not known"])
def test_empty_values_are_not_phi(value):
    text = f"Next of kin: {value}  Phone: {value}  Employer: {value}"
    out = _deidentifier("en").deidentify(Document("nul", text, language="en")).text
    assert out == text


# ---- tables rendered as text -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        # a label in a cell, its value in the next cell
        (
            "Patient | Ellen Marsh | DOB | 3/4/1950 | MRN | 00482913",
            [("PATIENT", "Ellen Marsh"), ("DATE", "3/4/1950"), ("MEDICALRECORD", "00482913")],
        ),
        ("Surname\tMarsh\nFirst name\tEllen", [("PATIENT", "Marsh"), ("PATIENT", "Ellen")]),
        # a header row: the cells below each label are its values
        (
            "| Bed | Patient | Age | Dx |\n|---|---|---|---|\n| 12 | Ellen Marsh | 81 | CHF |\n"
            "| 14 | Paul Dent | 77 | COPD |",
            [
                ("LOCATION_OTHER", "12"),
                ("PATIENT", "Ellen Marsh"),
                ("AGE", "81"),
                ("LOCATION_OTHER", "14"),
                ("PATIENT", "Paul Dent"),
                ("AGE", "77"),
            ],
        ),
        (
            "Name\tDOB\tMRN\nEllen Marsh\t3/4/1950\t00482913",
            [("PATIENT", "Ellen Marsh"), ("DATE", "3/4/1950"), ("MEDICALRECORD", "00482913")],
        ),
        # a header row alone, and labels side by side, are no values
        ("Name | DOB | MRN", []),
        ("| City | Site lead |\n|---|---|", []),
    ],
)
def test_tables(text, expected):
    spans = [s for s in _spans("en", text) if _from_fields(s)]
    assert [(s.label, s.text) for s in spans] == expected


def test_a_column_of_lower_case_words_is_no_name():
    text = "| Drug | Dose | Location |\n|---|---|---|\n| heparin | 5000 u | abdomen left |"
    assert [s for s in _spans("en", text) if _from_fields(s)] == []


# ---- tables of one's own --------------------------------------------------------------------------------------

TABLE = """
language: en
fields:
  - id: keeper
    kind: PATIENT
    labels: [Keeper, Keeper name]
  - id: hatched
    kind: DATE
    role: birth
    labels: [Hatched]
    bare: true
  - id: beak
    kind: none
    labels: [Beak colour]
"""

PACK = """
name: own_fields
language: en
passes:
  - name: fields
    rules:
      - {id: form, kind: fields, tables: [birds.yaml]}
"""


def _write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), "utf-8")
    return path


def test_own_table_values_end_at_any_label(tmp_path):
    _write(tmp_path, "birds.yaml", TABLE)
    engine = RuleEngine(compile_pack(_write(tmp_path, "pack.yaml", PACK)))
    text = "Keeper name: Ada Quill Beak colour: Amber Hatched 3/4/2020"
    found = [(f.label, text[f.start : f.end]) for f in engine.run(text) if f.label is not None]
    assert found == [("PATIENT", "Ada Quill"), ("DATE", "3/4/2020")]


@pytest.mark.parametrize(
    "group, message",
    [
        ("{id: g, kind: PETNAME, labels: [Pet]}", "unknown kind 'PETNAME'"),
        ("{id: g, kind: PATIENT, role: birth, labels: [Pet]}", "'role' is only for kind DATE"),
        ("{id: g, kind: CITY, labels: [From], then: [{words: [at], group: nope}]}", "unknown group 'nope'"),
        ("{id: g, kind: CITY}", "needs 'labels', 'bare' or 'exact'"),
    ],
)
def test_bad_tables_fail_with_the_group_named(tmp_path, group, message):
    _write(tmp_path, "birds.yaml", f"fields:\n  - {group}\n")
    with pytest.raises(ConfigError, match=message):
        compile_pack(_write(tmp_path, "pack.yaml", PACK))


@pytest.mark.parametrize("name", [t for t in available_tables() if t != "common"])
def test_packaged_tables_load(name):
    table = packaged_table(name)
    kinds = {g.kind for g in table.groups}
    assert {"PATIENT", "DOCTOR", "DATE", "PHONE", None} <= kinds
    assert table.language == name
