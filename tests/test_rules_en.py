"""The English pack on a crafted clinical note."""

from __future__ import annotations

import pytest

from clinideid.detect.rules import RuleDetector
from clinideid.document import Document

NOTE = """DISCHARGE SUMMARY
Patient: Robert Hanley          MRN: 00482913
DOB: 07/22/1947                 Admission Date: 02/03/2024
Attending: Dr. Maria Okafor

Mr. Hanley is a 76 y/o retired electrician admitted to Lakeside General Hospital on March 3, 2024 with
chest pain. He lives at 88 Birchwood Avenue, Apt 2C, Madison, WI 53703. His wife Ellen Hanley can be
reached at (608) 555-0199 or ellen.hanley@example.org. SSN 219-09-9999 on file.
History of Parkinson disease and Crohn disease. Echo on 3/5/24 showed an EF of 35%.
Follow-up with Dr. Okafor in 2 weeks. Signed by Maria Okafor, MD.
"""


@pytest.fixture(scope="module")
def spans():
    doc = Document("note", NOTE, language="en")
    return [(s.label, s.text) for s in RuleDetector(language="en").detect_one(doc)]


@pytest.mark.parametrize(
    "expected",
    [
        ("PATIENT", "Robert Hanley"),
        ("PATIENT", "Hanley"),  # "Mr. Hanley"
        ("MEDICALRECORD", "00482913"),
        ("DATE", "07/22/1947"),
        ("DATE", "02/03/2024"),
        ("DOCTOR", "Maria Okafor"),
        ("DOCTOR", "Okafor"),
        ("AGE", "76 y/o"),
        ("HOSPITAL", "Lakeside General Hospital"),
        ("DATE", "March 3, 2024"),
        ("STREET", "88 Birchwood Avenue, Apt 2C"),
        ("CITY", "Madison"),
        ("STATE", "WI"),
        ("ZIP", "53703"),
        ("PHONE", "(608) 555-0199"),
        ("EMAIL", "ellen.hanley@example.org"),
        ("SSN", "219-09-9999"),
        ("DATE", "3/5/24"),
    ],
)
def test_english_note(spans, expected):
    assert expected in spans


def test_english_note_relative_and_medical_terms(spans):
    texts = {t for _, t in spans}
    assert any(label == "PATIENT" and "Ellen" in t for label, t in spans)
    assert not {"Parkinson", "Crohn", "EF"} & texts
    assert not any("35%" in t or "2 weeks" in t for t in texts)
