"""The English pack on notes in many writing styles: capitals, lower case, header fields, partial dates,
initials, identifiers with cues, professions, ages and the things that must stay untouched (ratios,
scores, eponyms). Every example is invented for this file."""

from __future__ import annotations

import pytest

from clinideid.detect.rules import RuleDetector
from clinideid.document import Document


@pytest.fixture(scope="module")
def detector() -> RuleDetector:
    return RuleDetector(language="en")


def _spans(detector: RuleDetector, text: str) -> list[tuple[str, str]]:
    doc = Document("t", text, language="en")
    return [(s.label, s.text) for s in detector.detect_one(doc)]


def _texts(detector: RuleDetector, text: str) -> set[str]:
    return {t for _, t in _spans(detector, text)}


def _covered(detector: RuleDetector, text: str, part: str) -> bool:
    """Whether some span covers ``part`` (any label)."""
    start = text.index(part)
    end = start + len(part)
    doc = Document("t", text, language="en")
    return any(s.start <= start and end <= s.end for s in detector.detect_one(doc))


# ---- capitals -------------------------------------------------------------------------------------------


def test_capitals_note(detector):
    text = (
        "NIGHT RN NOTE. PT RESTLESS, CXR 9/14 UNCHANGED AS PER DR. VANTERPOOL.\n"
        "SON GREGORY CALLED X2, UPDATED. HX CABG 91, REDO CABG '04.\n"
        "PT IS A RETIRED BRICKLAYER, WANTS TO GO HOME BEFORE THANKSGIVING.\n"
        "T. ABERNATHY, RN AWARE.\n"
    )
    for part in ["9/14", "VANTERPOOL", "GREGORY", "91", "'04", "BRICKLAYER", "THANKSGIVING", "T. ABERNATHY"]:
        assert _covered(detector, text, part), part
    texts = _texts(detector, text)
    assert not {"RESTLESS", "UNCHANGED", "CALLED", "UPDATED", "AWARE", "NOTE"} & texts


# ---- lower case -----------------------------------------------------------------------------------------


def test_lowercase_note(detector):
    text = (
        "pt seen by dr quenneville this am, d/w team.\n"
        "gf melissa at bedside, will drive pt home. per wife brenda pt took extra dose.\n"
        "recheck 6/21 at northbrook anticoag clinic.\n"
        "-- p. ostrowski rn\n"
    )
    for part in ["quenneville", "melissa", "brenda", "6/21", "northbrook anticoag clinic", "p. ostrowski"]:
        assert _covered(detector, text, part), part
    texts = _texts(detector, text)
    assert not {"this", "am", "team", "drive", "bedside", "took"} & texts
    assert not any(t.startswith("ive") or t == "rive" for t in texts)


def test_lowercase_words_starting_with_dr_are_not_names(detector):
    text = "labs drawn, no drooling, catheter draining well, foot drop splint, dressing changed."
    assert not [s for s in _spans(detector, text) if s[0] in {"DOCTOR", "PATIENT", "PERSON"}]


# ---- header fields and identifiers ----------------------------------------------------------------------


def test_header_identifiers(detector):
    text = (
        "Name: Halvard Pettersen        PHN: 9123 456 780\n"
        "UR No: K4471093    Medicare: 5512 39817 2    Accession: RX24-0098812\n"
        "Lab No: Q24/55310     Provider No: 3318842J     GMC 7712093\n"
        "Dossier: 5520981   OHIP: 5512-339-118-QX\n"
    )
    for part in [
        "9123 456 780",
        "K4471093",
        "5512 39817 2",
        "RX24-0098812",
        "Q24/55310",
        "3318842J",
        "7712093",
        "5520981",
        "5512-339-118-QX",
    ]:
        assert _covered(detector, text, part), part
    assert ("PATIENT", "Halvard Pettersen") in _spans(detector, text)
    texts = _texts(detector, text)
    assert not {"PHN", "Accession", "Lab No", "GMC", "Dossier", "OHIP"} & texts


def test_context_identifiers(detector):
    text = (
        "Labs at any outpatient site (order #LB-55120934). Police occurrence #23-554120.\n"
        "SNF auth # B2299104 pending, ref XR-7781203. Prior auth #: PA-2023-1177450.\n"
        "NPI 1598274036. license PC-0091244.\n"
        "From: Tamsin Ellery, RN (user tellery4). Portal account: r_morrow77\n"
    )
    for part in [
        "LB-55120934",
        "23-554120",
        "B2299104",
        "XR-7781203",
        "PA-2023-1177450",
        "1598274036",
        "PC-0091244",
        "tellery4",
        "r_morrow77",
    ]:
        assert _covered(detector, text, part), part


def test_pagers_and_extensions(detector):
    text = (
        "Dr. Kowalski (night float, pager 27-118) notified. Neurosurgery paged at x6614. pgr 55102, ext. 318"
    )
    spans = _spans(detector, text)
    for part in ["27-118", "x6614", "55102", "318"]:
        assert ("PHONE", part) in spans, part


def test_id_checksums(detector):
    # a Luhn-valid card number after "card", a valid US SSN shape
    spans = _spans(detector, "card number 4111 1111 1111 1111 on file; SSN 219-09-9999.")
    assert ("ACCOUNT", "4111 1111 1111 1111") in spans
    assert ("SSN", "219-09-9999") in spans
    # a card number that fails the Luhn sum is not an account
    assert not any(label == "ACCOUNT" for label, _ in _spans(detector, "card number 4111 1111 1111 1112"))


# ---- names: initials, surname first, clergy, relatives ----------------------------------------------------


def test_initials_and_surname_first(detector):
    text = (
        "Pt: Thornbury, Agnes   84 F   MRN 7712003   Rm 512\n"
        "Sonographer: K. Ndabeni, RDMS. Referred by unit SW J. Castellanos.\n"
        "Chaplain Fr. Oyelowo requested by family. Seen with daughter-in-law Shobhana.\n"
    )
    for part in [
        "Thornbury, Agnes",
        "84",
        "7712003",
        "512",
        "K. Ndabeni",
        "J. Castellanos",
        "Oyelowo",
        "Shobhana",
    ]:
        assert _covered(detector, text, part), part


def test_initials_that_are_not_names(detector):
    text = (
        "Cultures grew E. Coli and S. Aureus. Vitamin D. Patient tolerated. Weakness 4/5 L. Neck flexion 5/5."
    )
    assert not [s for s in _spans(detector, text) if s[0] in {"DOCTOR", "PATIENT", "PERSON"}]


# ---- dates ----------------------------------------------------------------------------------------------


def test_partial_dates(detector):
    text = (
        "Admitted 9/11 with stroke. MRI 04/02 confirmed infarcts. Seen 14/06 in clinic.\n"
        "Screen (05/2024) low risk, started 4/2024. Quit smoking 2003. Self-harm fall 2021.\n"
        "Flying out on the 9th. Inhaler stopped June, symptoms since march.\n"
    )
    for part in [
        "9/11",
        "04/02",
        "14/06",
        "05/2024",
        "4/2024",
        "2003",
        "fall 2021",
        "the 9th",
        "June",
        "march",
    ]:
        assert ("DATE", part) in _spans(detector, text), part


def test_ratios_scores_and_times_are_not_dates(detector):
    text = (
        "BP 130/85, HR 72. Strength 5/5 and 4/5 in LLE. 2/2 pain. GCS 15. Pain 7/10. AMTS 8/10.\n"
        "Allred 6/8. 2/12 hx of cough, abx for 3/7. Given 1/2 tab. 24/7 supervision.\n"
        "Obs at 14:30 and 9:15 AM. Norco 5/325 PRN. Lives on the 3rd floor. Lasix 40 mg given 2000 hrs.\n"
    )
    dates = [t for label, t in _spans(detector, text) if label == "DATE"]
    assert dates == []


# ---- ages and professions -------------------------------------------------------------------------------


def test_ages(detector):
    text = (
        "HPC: 91F found on floor. History: 47 M, roofer, back pain.\n"
        "Lives with wife Solveig (79). DOB 02/03/1941 (82). Pt (88 y) alert. Clinical: 52yr, lump.\n"
        "Diabetes since age 7. Grandchildren (ages 4 and 11).\n"
    )
    for part in ["91", "47", "79", "82", "88", "52yr", "7", "4", "11"]:
        assert ("AGE", part) in _spans(detector, text), part


def test_temperature_and_catheter_sizes_are_not_ages(detector):
    text = "Temp: 99 F. Foley 16 F inserted. T 101 F overnight."
    assert not [s for s in _spans(detector, text) if s[0] == "AGE"]


def test_professions(detector):
    text = (
        "She works as a school bus dispatcher at a depot. He is a retired tool-and-die maker, lives alone.\n"
        "Thank you for seeing this 41 year old firefighter, with chest pain. I'm a 3rd grade teacher at a school.\n"
        "Pt is a 66 yo long-haul trucker, on the road.\n"
    )
    spans = _spans(detector, text)
    for part in [
        "school bus dispatcher",
        "tool-and-die maker",
        "firefighter",
        "3rd grade teacher",
        "long-haul trucker",
    ]:
        assert ("PROFESSION", part) in spans, part


def test_not_professions(detector):
    text = (
        "A 70 year old woman, with dyspnea. He is a smoker and a former drinker. Stairs are a major barrier.\n"
        "Retired in 2015. Age: 34 y    MRN: QX2201887\n"
    )
    assert not [s for s in _spans(detector, text) if s[0] == "PROFESSION"]


# ---- locations ------------------------------------------------------------------------------------------


def test_facilities_wards_and_postcodes(detector):
    text = (
        "ASHGROVE DISTRICT HOSPITAL - EMERGENCY DEPARTMENT\n"
        "Unit: Halloway 6B    Date: 02/02/2024\n"
        "GP: Dr Ola Tierney, Whitmoor Medical Practice, Kilnsey M41 7QT\n"
        "Transfer to ward 4b when bed available. Montreal (QC) H2X 3Y7. Ashby Vale SA 5108.\n"
    )
    for part in [
        "ASHGROVE DISTRICT HOSPITAL",
        "Halloway 6B",
        "Whitmoor Medical Practice",
        "M41 7QT",
        "4b",
        "QC",
        "H2X 3Y7",
        "SA",
        "5108",
    ]:
        assert _covered(detector, text, part), part


def test_generic_departments_are_not_facilities(detector):
    text = "Referred to General Surgery and Primary Care. Seen in the Diabetes Clinic by Intensive Care."
    assert not [s for s in _spans(detector, text) if s[0] == "HOSPITAL"]


# ---- eponyms --------------------------------------------------------------------------------------------


def test_eponyms_in_capitals_and_title_case(detector):
    text = (
        "HX PARKINSON'S DISEASE, FOLEY CATHETER IN PLACE, GLASGOW COMA SCALE 15, BRADEN 16, MORSE 45.\n"
        "Known Crohn disease, Hodgkin lymphoma in remission, Cushing syndrome excluded. Babinski negative.\n"
        "Dr. Foley reviewed the patient.\n"
    )
    spans = _spans(detector, text)
    names = {t for label, t in spans if label in {"DOCTOR", "PATIENT", "PERSON"}}
    assert "Foley" in names  # "Dr. Foley" is a name
    assert (
        not {"PARKINSON", "FOLEY CATHETER", "GLASGOW", "MORSE", "Crohn", "Hodgkin", "Cushing", "Babinski"}
        & names
    )


def test_date_ranges_and_postcodes_with_towns(detector):
    text = "Inpatient stay 11/18-11/23, then rehab. PO Box 52, Tamworth NSW 2340. Flat 2, 7 Mill Lane, Keswick CA12 5XY."
    spans = _spans(detector, text)
    for expected in [
        ("DATE", "11/18"),
        ("DATE", "11/23"),
        ("CITY", "Tamworth"),
        ("STATE", "NSW"),
        ("ZIP", "2340"),
        ("CITY", "Keswick"),
        ("ZIP", "CA12 5XY"),
    ]:
        assert expected in spans, expected
    assert not [
        t for label, t in _spans(detector, "Dose 3/4-5 times; BP 120/80-130/85; 2-3/7 hx") if label == "DATE"
    ]


# ---- professions without an article, community organisations, saints, wards, flats --------------------


def test_profession_after_age_sex_and_bare_is(detector):
    assert ("PROFESSION", "dockworker") in _spans(detector, "Social: 44 M, dockworker, 2 wk of back pain.")
    assert ("PROFESSION", "welder") in _spans(detector, "Pt is welder,owns a garage.")
    assert ("PROFESSION", "welder") in _spans(detector, "Patient is a retired welder.")
    for text in ("She was lower, stable.", "Pt is independent, walks.", "he is continent.", "She is moist, pale."):
        assert not any(lab == "PROFESSION" for lab, _ in _spans(detector, text)), text


def test_community_organisations(detector):
    assert _covered(detector, "She attends Larkfield Methodist Church weekly.", "Larkfield Methodist Church")
    assert _covered(detector, "Son at Brookhollow Junior High.", "Brookhollow Junior High")
    assert _covered(detector, "Letter to TARNWICK REGIONAL HEALTH AUTHORITY", "TARNWICK REGIONAL HEALTH AUTHORITY")
    assert _spans(detector, "SURGICAL PATHOLOGY") == []


def test_saint_named_places(detector):
    assert _covered(detector, "Transferred from St. Winifred's yesterday.", "St. Winifred's")
    assert _covered(detector, "Lives at Saint Berenice Manor.", "Saint Berenice Manor")
    assert not _covered(detector, "Takes St. John's wort daily.", "St. John's")


def test_compass_wards_and_flat_prefix(detector):
    assert ("HOSPITAL", "7 West") in _spans(detector, "Admitted to 7 West overnight.")
    assert not any(t == "9 North" for _, t in _spans(detector, "Take Route 9 North to the clinic."))
    assert _covered(detector, "Flat 2, Larch House, 9 Kiln Road, Leeds", "Flat 2, Larch House")
    assert _covered(detector, "Suite 4, Level 2, 80 Quay Street", "Suite 4, Level 2")


def test_lowercase_street_and_relative_with_age(detector):
    assert ("STREET", "12/3 birch st") in _spans(detector, "lives w son at 12/3 birch st, oakdale.")
    assert ("STREET", "45 kingfisher rd") in _spans(detector, "lives at 45 kingfisher rd with wife")
    assert _spans(detector, "review at 3 days post op") == []
    assert ("PATIENT", "odile") in _spans(detector, "lives w wife odile (79) in town.")
    assert ("PATIENT", "BRAM") in _spans(detector, "SON BRAM (52) VISITING")
    assert _spans(detector, "daughter aged (3)") == []
