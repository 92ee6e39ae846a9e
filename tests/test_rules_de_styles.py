"""German rule pack on notes of many writing styles: header fields, capitals, lowercase, dictation marks,
Austrian and Swiss formats, partial dates, ages, professions and the precision guards.

Every example is invented for this file (no text of any evaluation corpus).
"""

from __future__ import annotations

import pytest

from clinideid.detect.rules import RuleDetector
from clinideid.document import Document


@pytest.fixture(scope="module")
def det() -> RuleDetector:
    return RuleDetector(language="de")


def found(det: RuleDetector, text: str) -> list[tuple[str, str]]:
    return [(s.label, text[s.start : s.end]) for s in det.detect_one(Document("t", text, "de"))]


def texts(det: RuleDetector, text: str) -> set[str]:
    return {t for _, t in found(det, text)}


@pytest.mark.parametrize(
    ("text", "value", "label"),
    [
        # Austrian and Swiss postcodes with their town, after a street or at a line start
        ("Wohnort: Lindengasse 7, 8010 Graz", "8010", "ZIP"),
        ("Wohnort: Lindengasse 7, 8010 Graz", "Graz", "CITY"),
        ("Praxis Dr. Beispiel\nKirchweg 4\n3900 Schwarzenau\nTel. 02849 3312", "3900", "ZIP"),
        ("Praxis Dr. Beispiel\nKirchweg 4\n3900 Schwarzenau\nTel. 02849 3312", "Schwarzenau", "CITY"),
        # the town of a letter's date line, also after other text on the same line
        ("ENTLASSUNGSBRIEF                     Neudorf am See, am 3. Jänner 2024", "Neudorf am See", "CITY"),
        ("Tiefenbach, den 12.05.2023\n\nSehr geehrte Frau Kollegin,", "Tiefenbach", "CITY"),
        # national and insurance identifiers
        ("SVNR: 1237 010180", "1237 010180", "SSN"),
        ("AHV-Nr.: 756.1234.5678.97", "756.1234.5678.97", "SSN"),
        # case, order and approval numbers after their keys
        ("Aufnahmezahl: 23-004711", "23-004711", "MEDICALRECORD"),
        ("Pat.-ID 00771234 / Fall 23990011", "00771234", "MEDICALRECORD"),
        ("Pat.-ID 00771234 / Fall 23990011", "23990011", "MEDICALRECORD"),
        ("Fall-Nr. 55 210 9911", "55 210 9911", "MEDICALRECORD"),
        ("Befund-Nr.: CT-22-40917", "CT-22-40917", "IDNUM"),
        ("Az.: GA 12-3456/2023", "GA 12-3456/2023", "IDNUM"),
        ("Arzt-Nr.: 123456789   Datum: 01.02.23", "123456789", "LICENSE"),
        ("Schaft zementfrei, REF 1234-56, LOT X9Y8Z77", "X9Y8Z77", "DEVICE"),
        ("amtliches Kennzeichen Pkw KA-XY 123", "KA-XY 123", "VEHICLE"),
        # pagers and extensions
        ("Dienstarzt informiert (Piepser 5521), keine Änderung.", "5521", "PHONE"),
        # rooms and wards
        ("Station: Interne 3 | Zi. 118 | Bett 2", "Interne 3", "HOSPITAL"),
        ("Station: Interne 3 | Zi. 118 | Bett 2", "118", "LOCATION_OTHER"),
        ("Übernahme auf Station 7B Ost.", "Station 7B Ost", "HOSPITAL"),
        # institutions named by a compound and a proper name, in capitals too
        ("Landesklinikum Hügelland\nAbteilung für Innere Medizin", "Landesklinikum Hügelland", "HOSPITAL"),
        ("INSTITUT FÜR PATHOLOGIE – KLINIKUM OBERTAL-SÜD", "KLINIKUM OBERTAL-SÜD", "HOSPITAL"),
        (
            "Einsender: Kardiologie am Schlossberg, Dr. med. Ute Beispiel",
            "Kardiologie am Schlossberg",
            "HOSPITAL",
        ),
        # insurers and employers by their form key or their legal form
        (
            "Krankenkasse:    Musterkasse Nordland          Vers.-Nr.: X123456789",
            "Musterkasse Nordland",
            "ORGANIZATION",
        ),
        (
            "seit 2010 beschäftigt bei der Beispiel Logistik GmbH in Hof",
            "Beispiel Logistik GmbH",
            "ORGANIZATION",
        ),
        ("Verkäufer in der Bäckerei Sonnleitner", "Bäckerei Sonnleitner", "ORGANIZATION"),
    ],
)
def test_header_fields_and_places(det: RuleDetector, text: str, value: str, label: str) -> None:
    assert (label, value) in found(det, text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # capitals, lowercase-cued, initials, titles of Austria and Switzerland
        ("Sehr geehrter Herr Kollege Dornbach,", "Dornbach"),
        ("z.H. OÄ Dr . Wiesinger", "Wiesinger"),
        ("Vorstand: Prim. Univ.-Doz. Dr. Gerold Eibenstein", "Gerold Eibenstein"),
        ("Unterschrift Pflegekraft: R. Kowalczyk, Gesundheits- und Krankenpflegerin", "R. Kowalczyk"),
        ("Patient: Herr Ing. Anton Grubmüller", "Anton Grubmüller"),
        # surname-first after a long form key
        ("Name, Vorname des Versicherten: Hollerbach, Eva-Maria\nMusterweg 3", "Hollerbach, Eva-Maria"),
        # birth name
        ("Versicherte: Roth, Agnes, geb. Brantholm, geb. am 03.05.1961", "Brantholm"),
    ],
)
def test_names_by_context(det: RuleDetector, text: str, value: str) -> None:
    assert value in texts(det, text)


def test_dictation_marks(det: RuleDetector) -> None:
    got = found(det, "Unser Zeichen: Bw/Kt/rs\nFallnummer: 2023000111")
    assert ("DOCTOR", "Bw") in got and ("DOCTOR", "Kt") in got and ("DOCTOR", "rs") in got


def test_usernames_in_a_nursing_log(det: RuleDetector) -> None:
    text = (
        "03.04.24 06:40    ND   Pat schläft, keine Schmerzen.     hmustermann\n"
        "03.04.24 13:15    FD   Mobilisation am Rollator.     pflege.beispiel3\n"
        "Ausdruck: 04.04.2024 durch hmustermann an Arbeitsplatz 12"
    )
    got = [t for lab, t in found(det, text) if lab == "USERNAME"]
    assert got.count("hmustermann") == 2
    assert "pflege.beispiel3" in got


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("klagt seit Herbst 2022 über Müdigkeit", "Herbst 2022"),
        ("verunfallte am zweiten Weihnachtsfeiertag", "zweiten Weihnachtsfeiertag"),
        ("14-FEB-2023 10:02    VON: PRAXIS", "14-FEB-2023"),
        ("Quartal: 3/23", "3/23"),
        ("OP-Termin KW 22/2024", "22/2024"),
        ("Letzte Koloskopie 2019 (unauffällig)", "2019"),
        ("Z.n. Appendektomie '87", "'87"),
        ("stat. Aufenthalt vom O6.O3. bis l7.O3.2OO6", "l7.O3.2OO6"),
    ],
)
def test_partial_and_written_dates(det: RuleDetector, text: str, value: str) -> None:
    assert ("DATE", value) in found(det, text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Vater mit 61 Jahren an Herzinfarkt verstorben", "61"),
        ("Zwei Kinder (7 und 11 Jahre).", "7"),
        ("Das 3 Jahre und 4 Monate alte Kind", "3"),
        ("Pat.: Muster, Anna, *03.05.1950, 73 J.\nPat.-ID 1234", "73"),
        ("Befund: 81j. Pat. in gutem AZ", "81j"),
    ],
)
def test_ages(det: RuleDetector, text: str, value: str) -> None:
    assert ("AGE", value) in found(det, text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Die Patientin ist als Bürokauffrau bei einer Versicherung tätig.", "Bürokauffrau"),
        ("Patient früher Dachdecker, berentet.", "Dachdecker"),
        ("Gelernte Friseurin, zuletzt arbeitslos.", "Friseurin"),
        ("Der Patient ist Auszubildender zum Zimmerer im 2. Lehrjahr.", "Auszubildender zum Zimmerer"),
    ],
)
def test_professions(det: RuleDetector, text: str, value: str) -> None:
    assert ("PROFESSION", value) in found(det, text)


def test_states_and_countries(det: RuleDetector) -> None:
    got = found(det, "Wohnort: Lindengasse 7, 8010 Graz, Steiermark. Die Mutter lebt in Portugal.")
    assert ("STATE", "Steiermark") in got
    assert ("COUNTRY", "Portugal") in got


@pytest.mark.parametrize(
    "text",
    [
        # clock times, vital signs, scores, ratios and durations are not dates
        "Aufnahme um 14:30 Uhr, RR 135/85 mmHg, HF 72/min, GCS 15, Kraft 5/5, Gleason 3+4=7a.",
        "Über einen Zeitraum von 3 Monaten keine Beschwerden; Schmerzen 2/10 in Ruhe.",
        # eponyms and departments are not names or places
        "Bekannter M. Crohn, V.a. Morbus Parkinson, Cushing-Syndrom, Foley-Katheter.",
        "Verlegung in die Klinik für Kardiologie, Oberarzt der Inneren Medizin informiert.",
        # a profession word after "als" that is not a job
        "Er verunfallte als Fahrer eines Motorrads.",
        # an injection in the bathroom is not a town
        "Sturz im Bad Montag früh.",
        # doses and lab values in the year range are not years
        "Thrombozyten 2010 /nl? Nein: Paracetamol 1000 mg, Heparin 2000 IE s.c.",
    ],
)
def test_precision_guards(det: RuleDetector, text: str) -> None:
    assert found(det, text) == []


def test_doctor_named_like_an_eponym_is_still_a_name(det: RuleDetector) -> None:
    assert "Parkinson" in texts(det, "Rücksprache mit Dr. Parkinson (Neurologie).")
