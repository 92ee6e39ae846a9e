"""Italian rule pack on notes written in different styles (capitals, missing spaces, forms, letters).

Every example here is invented for this file; none is taken from a corpus.
"""

from __future__ import annotations

import pytest

from clinideid.detect.rules import RuleDetector
from clinideid.document import Document


@pytest.fixture(scope="module")
def det() -> RuleDetector:
    return RuleDetector(language="it")


def _found(det: RuleDetector, text: str) -> list[tuple[str, str]]:
    return [(text[s.start : s.end], s.label) for s in det.detect_one(Document("t", text, "it"))]


def _texts(det: RuleDetector, text: str) -> set[str]:
    return {t for t, _ in _found(det, text)}


def _covered(det: RuleDetector, text: str, sub: str) -> bool:
    """Whether every character of ``sub`` lies inside some detected span."""
    start = text.index(sub)
    spans = det.detect_one(Document("t", text, "it"))
    return all(any(s.start <= i < s.end for s in spans) for i in range(start, start + len(sub)))


# ---- capitals --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sub", "label"),
    [
        ("VALORE COMUNICATO AL DR. PALMIERI ALLE ORE 04:10", "PALMIERI", "DOCTOR"),
        ("IL MEDICO DI REPARTO: DR. T. ZANELLA\n", "T. ZANELLA", "DOCTOR"),
        ("TRIAGE: CODICE 3 (INF. QUAGLIA)\n", "QUAGLIA", "DOCTOR"),
        ("COGNOME: MARINO   NOME: ELISA   SESSO: F\n", "ELISA", "PATIENT"),
        ("SERVIZIO SANITARIO NAZIONALE - REGIONE UMBRIA\n", "UMBRIA", "STATE"),
        ("LUOGO DI NASCITA: FOLIGNO (PG)\n", "FOLIGNO", "CITY"),
        ("ANAMNESI: PAZIENTE DI ANNI 61, FALEGNAME. IPERTESO.", "FALEGNAME", "PROFESSION"),
    ],
)
def test_capitals(det: RuleDetector, text: str, sub: str, label: str) -> None:
    assert (sub, label) in _found(det, text)


def test_capitals_section_header_is_not_a_name(det: RuleDetector) -> None:
    text = "ANAMNESI: PAZIENTE DI ANNI 61.\nDECORSO POST-OPERATORIO REGOLARE."
    assert "DI" not in _texts(det, text)
    assert not any(label in {"PATIENT", "DOCTOR", "PERSON"} for _, label in _found(det, text))


# ---- lower case and missing spaces -------------------------------------------------------------------------


def test_lowercase_name_after_dotted_title(det: RuleDetector) -> None:
    assert ("ferraris", "DOCTOR") in _found(det, "paziente vista dal dott. ferraris in mattinata")


@pytest.mark.parametrize(
    ("text", "sub"),
    [
        ("già seguita dallaDott.ssaBellandi per psoriasi", "Bellandi"),
        ("inviato dal nefrologoDr.Scalzi in visita", "Scalzi"),
        ("Il Medico Dott.ssaR.Bellandi\n", "R.Bellandi"),
    ],
)
def test_title_glued_to_words(det: RuleDetector, text: str, sub: str) -> None:
    assert (sub, "DOCTOR") in _found(det, text)


def test_glued_zip_and_city(det: RuleDetector) -> None:
    found = _found(det, "Via Manin 4,35121Padova tel.049 123 4567")
    assert ("35121", "ZIP") in found and ("Padova", "CITY") in found


def test_glued_dates(det: RuleDetector) -> None:
    text = "paziente:Neri Ada n.14/02/1961 in terapia dal2019, Dalmaggio 2021 in follow-up"
    texts = _texts(det, text)
    assert {"14/02/1961", "2019", "maggio 2021"} <= texts


def test_ocr_date_with_letters_for_digits(det: RuleDetector) -> None:
    assert ("l2/O3/2Ol8", "DATE") in _found(det, "Data esame l2/O3/2Ol8\n")


# ---- header and form fields --------------------------------------------------------------------------------


def test_form_header(det: RuleDetector) -> None:
    text = (
        "Paziente: LOMBARDI GRETA   Sesso: F\n"
        "Luogo di nascita: Chiavari (GE)\n"
        "N. accettazione: LB23-440912   Provenienza: ambulatorio\n"
        "N. tessera sanitaria (TEAM): 80380000200011112222\n"
        "Codice STP: STP1200301000077\n"
    )
    found = _found(det, text)
    assert ("LOMBARDI GRETA", "PATIENT") in found
    assert ("Chiavari", "CITY") in found and ("GE", "STATE") in found
    assert ("LB23-440912", "IDNUM") in found
    assert ("80380000200011112222", "HEALTHPLAN") in found
    assert ("STP1200301000077", "HEALTHPLAN") in found
    assert not any(t.startswith(("Sesso", "Provenienza", "Luogo")) for t, _ in found)


def test_town_with_province_code_and_dateline(det: RuleDetector) -> None:
    text = "residente in Via dei Mille 12, Sestri Levante (GE)\n\nRapallo, 4 ottobre 2022\n"
    found = _found(det, text)
    assert ("Sestri Levante", "CITY") in found and ("GE", "STATE") in found
    assert ("Rapallo", "CITY") in found


def test_quoted_hospital_and_town(det: RuleDetector) -> None:
    text = 'Ospedale "San Giacomo Apostolo" – Castelfranco\nU.O.C. Medicina\n'
    found = _found(det, text)
    assert ('Ospedale "San Giacomo Apostolo"', "HOSPITAL") in found
    assert ("Castelfranco", "CITY") in found


@pytest.mark.parametrize(
    ("text", "sub", "label"),
    [
        ("ESAME ISTOLOGICO N. Q22-004417\n", "Q22-004417", "IDNUM"),
        ("verbale n. 2023/VV/004512 della Polizia Locale", "2023/VV/004512", "IDNUM"),
        ("Iscr. Ordine dei Medici di Lecce n. 6241\n", "6241", "LICENSE"),
        ("titolare di patente cat. B n. LE1234567Z in corso di validità", "LE1234567Z", "IDNUM"),
        ("scooter targato DX 48211 coinvolto", "DX 48211", "VEHICLE"),
        ("pacemaker bicamerale, S/N QTR771245B", "QTR771245B", "DEVICE"),
        ("PIN/credenziali: utente gneri81\n", "gneri81", "USERNAME"),
        ("ricoverata in stanza 18, letto B", "18", "LOCATION_OTHER"),
    ],
)
def test_context_cued_identifiers(det: RuleDetector, text: str, sub: str, label: str) -> None:
    assert (sub, label) in _found(det, text)


# ---- names: initials, surname first, relatives, salutations ------------------------------------------------


def test_nurse_initial_and_surname(det: RuleDetector) -> None:
    assert ("F. Lamberti", "DOCTOR") in _found(det, "Parametri stabili. Inf. F. Lamberti\n")


def test_surname_first_author_list(det: RuleDetector) -> None:
    text = "Bordin Chiara¹, De Santis R.², Melis G.A.¹\n\n¹ S.C. Pediatria"
    texts = _texts(det, text)
    assert {"Bordin Chiara", "De Santis R.", "Melis G.A."} <= texts


def test_relative_by_first_name_with_adjective(det: RuleDetector) -> None:
    assert _covered(det, "dopo una discussione con il figlio minore Tommaso, di 16 anni", "Tommaso")


def test_salutation_and_bare_signature(det: RuleDetector) -> None:
    text = "Ciao Serena,\nti mando la paziente domani mattina.\nA dopo\nOttavio\n"
    texts = _texts(det, text)
    assert "Serena" in texts and "Ottavio" in texts


def test_caro_collega_is_not_a_name(det: RuleDetector) -> None:
    assert not _found(det, "Caro Collega,\nti invio la paziente per una valutazione.")


# ---- dates -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sub"),
    [
        ("controllo eseguito il 17/05 con esito negativo", "17/05"),
        ("astensione dal lavoro da febbraio, poi rientro", "febbraio"),
        ("adalimumab (2015-2019), poi sospeso", "2019"),
        ("esiti di IMA '98 trattato con PTCA", "'98"),
        ("peggioramento durante il Ramadan scorso", "Ramadan"),
    ],
)
def test_partial_dates(det: RuleDetector, text: str, sub: str) -> None:
    assert (sub, "DATE") in _found(det, text)


@pytest.mark.parametrize(
    "text",
    [
        "PA 130/85, FC 72, forza 5/5 ai quattro arti",
        "visus OD 10/10, OS 9/10",
        "GCS 15/15, NRS 3/10",
        "ECG h 10.30: ritmo sinusale",
    ],
)
def test_ratios_scores_and_times_are_not_dates(det: RuleDetector, text: str) -> None:
    assert not [t for t, label in _found(det, text) if label == "DATE" and ":" not in t]


# ---- ages --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sub"),
    [
        ("La paziente,52enne,fioraia, giunge per", "52enne"),
        ("ROSSI LUIGI, 67 aa, cartella 123", "67"),
        ("bambino di 2 anni e 7 mesi", "7"),
        ("padre deceduto per IMA a 61 anni", "61"),
    ],
)
def test_ages(det: RuleDetector, text: str, sub: str) -> None:
    assert (sub, "AGE") in _found(det, text)


def test_duration_is_not_an_age(det: RuleDetector) -> None:
    assert not [t for t, label in _found(det, "in terapia da 3 anni, dopo 2 anni di pausa") if label == "AGE"]


# ---- professions and employers ----------------------------------------------------------------------------


def test_profession_and_employer(det: RuleDetector) -> None:
    text = "Lavora come magazziniere presso la ditta Ferretti & Soci. Ex fumatore."
    found = _found(det, text)
    assert ("magazziniere", "PROFESSION") in found
    assert ("Ferretti & Soci", "ORGANIZATION") in found
    assert "fumatore" not in _texts(det, text)


def test_clinical_role_is_not_a_profession(det: RuleDetector) -> None:
    text = "Data: 03/03/2024\nMedico prescrittore: Dott.ssa Elsa Tonini"
    assert not [t for t, label in _found(det, text) if label == "PROFESSION"]


# ---- pagers, checksummed identifiers -----------------------------------------------------------------------


def test_pager_and_extension(det: RuleDetector) -> None:
    texts = _texts(det, "reperibile al cercapersone 4471 oppure int. 3390")
    assert {"4471", "3390"} <= texts


def test_health_card_and_prescription_numbers(det: RuleDetector) -> None:
    text = "NRE: 150A23004455667\nTessera 80380000300044445555"
    texts = _texts(det, text)
    assert {"150A23004455667", "80380000300044445555"} <= texts


# ---- eponyms and medical words -----------------------------------------------------------------------------


def test_eponyms_are_not_names(det: RuleDetector) -> None:
    text = "Nota malattia di Crohn e morbo di Parkinson; segno di Babinski assente. Catetere di Foley."
    assert not [t for t, label in _found(det, text) if label in {"PATIENT", "DOCTOR", "PERSON"}]


def test_title_before_eponym_like_surname_is_a_name(det: RuleDetector) -> None:
    assert ("Foley", "DOCTOR") in _found(det, "Visita del Dott. Foley in mattinata.")


@pytest.mark.parametrize(
    "text",
    [
        "nutrizione enterale via SNG a 20 mL/h",
        "VIA BILIARE PRINCIPALE NON DILATATA",
        "ricoverata in Medicina Interna",
    ],
)
def test_medical_phrases_are_not_places(det: RuleDetector, text: str) -> None:
    assert not [t for t, label in _found(det, text) if label in {"STREET", "CITY"}]


# ---- surname particles, institutions, town boundaries -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sub"),
    [
        ("Medico di reparto: Dott. Carmelo Lo Verde\n", "Carmelo Lo Verde"),
        ("si dimette il Sig. La Marca Ettore, nato a Enna", "La Marca Ettore"),
        ("Firma: Dott.ssa Irene Di Giacomo\n", "Irene Di Giacomo"),
    ],
)
def test_surname_particles(det: RuleDetector, text: str, sub: str) -> None:
    assert _covered(det, text, sub)


@pytest.mark.parametrize(
    ("text", "sub"),
    [
        ("AZIENDA USL DI PIACENZA\nU.O. MEDICINA", "AZIENDA USL DI PIACENZA"),
        ("Azienda Sanitaria Provinciale di Ragusa\n", "Azienda Sanitaria Provinciale di Ragusa"),
        ("Anestesia – Padiglione Ferraris, piano 3", "Padiglione Ferraris"),
        ('inviato al Centro di Riabilitazione "Villa Serena" per', 'Centro di Riabilitazione "Villa Serena"'),
        ('R.S.A. "Casa Serena Onlus", Via Roma 3', 'R.S.A. "Casa Serena Onlus"'),
    ],
)
def test_institutions(det: RuleDetector, text: str, sub: str) -> None:
    assert _covered(det, text, sub)


def test_town_stops_before_street(det: RuleDetector) -> None:
    found = _found(det, "residente a Lecco in Via Volta 12\n")
    assert ("Lecco", "CITY") in found and ("Via Volta 12", "STREET") in found


def test_generic_units_are_not_hospitals(det: RuleDetector) -> None:
    text = "U.O.C. Pediatria, Cardiologia Pediatrica\nGentile Collega,\nMedicina Interna"
    assert not [t for t, label in _found(det, text) if label == "HOSPITAL"]


def test_unlisted_job_after_strong_cue(det: RuleDetector) -> None:
    assert ("tornitore", "PROFESSION") in _found(det, "Lavora come tornitore presso una officina meccanica.")


def test_short_day_month_after_cue_but_not_ratio(det: RuleDetector) -> None:
    assert ("3/5", "DATE") in _found(det, "dimesso il 3/5 con terapia invariata")
    assert not [t for t, label in _found(det, "forza 3/5 all'arto superiore") if label == "DATE"]


def test_age_in_words(det: RuleDetector) -> None:
    assert ("ottantenne", "AGE") in _found(det, "Paziente ottantenne, vedova, vive sola.")


def test_lowercase_relative_with_known_first_name(det: RuleDetector) -> None:
    assert ("sergio", "PATIENT") in _found(det, "accompagnato dal figlio sergio, che riferisce")
    assert not _found(det, "la figlia riferisce febbre da due giorni")


def test_plural_title(det: RuleDetector) -> None:
    assert ("Bellucci & Fanti", "DOCTOR") in _found(det, "Studio Associato Dott.ri Bellucci & Fanti\n")
