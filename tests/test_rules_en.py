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
        ("AGE", "76"),  # the unit stays outside (i2b2)
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


# --- general PII outside clinical notes (crafted; shapes of the Presidio synthetic set, none of its text) ---


@pytest.fixture(scope="module")
def detector():
    return RuleDetector(language="en")


def found(detector, text: str) -> list[tuple[str, str]]:
    return [(s.label, s.text) for s in detector.detect_one(Document("t", text, language="en"))]


def covered(detector, text: str, part: str) -> bool:
    """Whether every character of ``part`` (first occurrence) lies in some found span."""
    start = text.index(part)
    spans = detector.detect_one(Document("t", text, language="en"))
    return all(any(s.start <= i < s.end for s in spans) for i in range(start, start + len(part)))


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        # a multi-line international address: street, unit, town, country, postcode
        (
            "Send it to 4417 Lindenweg 12\n Apt. 305\n Vaaksberg\n Netherlands 61234 please.",
            ["4417 Lindenweg 12", "Apt. 305", "Vaaksberg", "Netherlands", "61234"],
        ),
        # town, region code and postcode on their own lines after the street
        (
            "Ship to 88 Quarry Hollow Road\nPinewick\n, OR\n 97111",
            ["88 Quarry Hollow Road", "Pinewick", "OR", "97111"],
        ),
        # comma-separated tail with a region code written "nan" by some generators
        ("Address: 72 Tamsweg Straße 9, Obertal, nan 80331", ["Tamsweg Straße 9", "Obertal", "80331"]),
        # streets named first, typed by a word before or an ending
        ("We met at Via Garibaldi 27 last year.", ["Via Garibaldi 27"]),
        ("Her flat is on Avenida Doutor Arnaldo 715.", ["Avenida Doutor Arnaldo 715"]),
        ("He moved to 17 Brunnsgatan 4 in May.", ["17 Brunnsgatan 4"]),
        ("Office: Wesselényi u. 12.", ["Wesselényi u. 12"]),
        # house number before the street, more street suffixes, P.O. boxes, military mail
        ("Deliver to 5521 830 Hollow Creek Turnpike Suite 4", ["5521 830 Hollow Creek Turnpike Suite 4"]),
        (
            "Mail goes to 3310 P.O. Box 918 Apt. 22, Dunmore, Ireland",
            ["3310 P.O. Box 918 Apt. 22", "Dunmore", "Ireland"],
        ),
        ("Write to PSC 4471, Box 2290\nAPO AE 09123", ["PSC 4471, Box 2290\nAPO AE 09123"]),
        ("Write to USNS Harkness\nFPO AP 96612", ["USNS Harkness\nFPO AP 96612"]),
        (
            "They live at the corner of Maple Grove 3 and Harlan Turnpike.",
            ["Maple Grove 3 and Harlan Turnpike"],
        ),
        # postcodes, phones in national and extension forms
        ("zip code: 394 13", ["394 13"]),
        ("Call me at 0471 55 83 20 tomorrow.", ["0471 55 83 20"]),
        ("You can reach me at 61 482 7730.", ["61 482 7730"]),
        ("Office line 312.555.0198x204", ["312.555.0198x204"]),
        # payment cards (Luhn), IBAN in lower case, a driver's licence by its name
        ("Please block card 501864667909 today.", ["501864667909"]),
        ("my iban is gb42nawi04454264788619", ["gb42nawi04454264788619"]),
        ("My driver's license number is K4471-20-3345", ["K4471-20-3345"]),
        # names without a title: by a cue, by their shape in a sentence, joined to another name
        ("Hi, my name is Oriane Vaszary and I need help.", ["Oriane Vaszary"]),
        ("The film was directed by Tobiasz Krenek and starring Krenek.", ["Tobiasz Krenek", "Krenek"]),
        ("The letter was signed by Ilse Vandermaat yesterday.", ["Ilse Vandermaat"]),
        ("Grzegorz Malicki listed his favourite songs.", ["Grzegorz Malicki"]),
        ("Ask Anthony and Marisol about it.", ["Anthony", "Marisol"]),
        # places after words of living and travel, employers, firms named after partners
        ("I'm originally from Tarvisio, and I moved here from Kuopio.", ["Tarvisio", "Kuopio"]),
        ("She works for Brightline Analytics now.", ["Brightline Analytics"]),
        ("He joined Holt, Ramsey and Pierce as a clerk.", ["Holt, Ramsey and Pierce"]),
        ("Acme Widgets LLC sent the invoice.", ["Acme Widgets LLC"]),
        # ages and dates in more textual forms
        ("My sister just turned 47.", ["47"]),
        ("He wrote it when he was 19.", ["19"]),
        ("Let's meet on Thursday.", ["Thursday"]),
        ("the Clean Water Act of 1972 applies", ["1972"]),
    ],
)
def test_general_pii_is_covered(detector, text, parts):
    for part in parts:
        assert covered(detector, text, part), part


def test_address_parts_get_their_own_labels(detector):
    spans = found(detector, "Send it to 4417 Lindenweg 12\n Apt. 305\n Vaaksberg\n Netherlands 61234 please.")
    assert ("STREET", "4417 Lindenweg 12") in spans
    assert ("STREET", "Apt. 305") in spans
    assert ("CITY", "Vaaksberg") in spans
    assert ("COUNTRY", "Netherlands") in spans
    assert ("ZIP", "61234") in spans


def test_prose_after_an_address_is_not_a_town(detector):
    text = "He lives at 88 Birchwood Avenue, Boston is where he works."
    assert not any("Boston is" in t for _, t in found(detector, text))
    spans = found(detector, "Seen at 12 Oak Street. Allergies: none.")
    assert ("CITY", "Allergies") not in spans


def test_letterhead_line_above_a_street(detector):
    spans = found(detector, "Jane Roe\nBrightwave Partners Ltd\n12 Oak Street\nSpringfield, IL 62704")
    assert ("ORGANIZATION", "Brightwave Partners Ltd") in spans
    spans = found(detector, "Brightwave\n12 Oak Street")
    assert ("ORGANIZATION", "Brightwave") in spans
    spans = found(detector, "Home Address:\n12 Oak Street")
    assert not any(label == "ORGANIZATION" for label, _ in spans)


def test_possessive_is_not_part_of_a_name(detector):
    spans = found(detector, "Ellen Harper's car was towed.")
    assert ("PERSON", "Ellen Harper") in spans


@pytest.mark.parametrize(
    "text",
    [
        "Patient on Lasix and Coumadin, Parkinson disease, Foley catheter, Apgar 9, Glasgow Coma Scale 15, "
        "Down syndrome",
        "Patient on Lasix 40 mg and Coumadin 5 mg daily. History of Parkinson disease and Crohn disease.",
        "Foley catheter placed. Apgar 9 and 9. Glasgow Coma Scale 15. Down syndrome noted. Babinski sign negative.",
        "He was seen by Cardiology and Physical Therapy. Transferred to the ICU. Returned to baseline.",
        "She was admitted to Internal Medicine with Coronary Artery Disease and Congestive Heart Failure.",
        "Started on Eliquis 5 mg twice daily. Follow up with Neurology in 2 weeks. Seen in Urgent Care.",
        "Allergies: Penicillin. Medications: Metformin 500 mg, Lisinopril 10 mg. Plan: continue Lantus 20 units.",
        "EF 35%, BP 120/80, HR 72, RR 16, SpO2 98% on 2 L. WBC 7.2, Hgb 12.5, Plt 250, INR 2.1, Na 138 K 4.1.",
        "Whipple procedure was uncomplicated. Wilson disease excluded. Hodgkin lymphoma in remission.",
        "Given 2 units PRBC. Tylenol 650 mg q6h prn. Take 2 tablets by mouth with Food.",
        "Transferred from the Emergency Department to the Intensive Care Unit for Bell palsy work-up.",
    ],
)
def test_clinical_terms_yield_no_span(detector, text):
    assert found(detector, text) == []


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("Patient: Zebediah Quackenbush MRN: 12345678", "Zebediah Quackenbush"),
        ("Name: Zebediah Quackenbush DOB: 01/02/1960", "Zebediah Quackenbush"),
        ("Patient: Mary Ann Quackenbush Age: 54", "Mary Ann Quackenbush"),
        ("Patient: Zebediah Quackenbush Admission Date: 01/02/2020", "Zebediah Quackenbush"),
        ("Patient: Zebediah Quackenbush  Referring Physician: Dr Alan Wexford", "Zebediah Quackenbush"),
    ],
)
def test_a_field_value_ends_before_the_next_key_on_its_line(line, name):
    """One space before "MRN:" ends the name, not its last word (the key is "MRN", not "Quackenbush MRN")."""
    doc = Document("line", line, language="en")
    found = [(s.label, s.text) for s in RuleDetector(language="en").detect_one(doc)]
    assert ("PATIENT", name) in found


@pytest.mark.parametrize(
    ("text", "piece"),
    [
        ("Referred by the GMF Notre-Dame-de-Grâce clinic.", "Notre-Dame-de-Grâce"),
        ("She moved to Saint-Luc last year.", "Saint-Luc"),
    ],
)
def test_a_name_found_inside_a_hyphenated_word_covers_the_whole_word(text, piece):
    doc = Document("compound", text, language="en")
    found = [s.text for s in RuleDetector(language="en").detect_one(doc)]
    assert piece in found, found


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("Pt is a barber, owns a shop on Lorain Ave, still working.", "Lorain Ave"),
        ("Department of Neurology, Stott Lane, Salford", "Stott Lane"),
    ],
)
def test_a_street_without_house_number_after_a_cue(text, street):
    doc = Document("street", text, language="en")
    assert ("STREET", street) in [(s.label, s.text) for s in RuleDetector(language="en").detect_one(doc)]


def test_hyphenated_clinical_words_stay_out_of_names():
    doc = Document("clinical", "Non-Hodgkin lymphoma; anti-Xa level; Mr. Smith-Jones seen.", language="en")
    found = [(s.label, s.text) for s in RuleDetector(language="en").detect_one(doc)]
    assert all("Hodgkin" not in t and "Xa" not in t for _, t in found), found
    assert any(t == "Smith-Jones" for _, t in found), found
