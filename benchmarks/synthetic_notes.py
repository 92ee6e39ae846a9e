"""Generated English clinical notes for the speed and memory benchmarks.

Each note is a discharge-summary-like text of about 2-4 KB with its own patient and clinician names, dates,
record number, phone number, address and age, so that a long document made of many notes carries varied
PHI rather than one repeated string. Names are drawn from common given names and surnames combined at
random (plus made-up syllable surnames); numbers are random: nothing here describes a real person.
Everything is ASCII, so a Python string of the text takes one byte per character.
"""

from __future__ import annotations

import random
from collections.abc import Iterator


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


FIRST = _words(
    "James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard "
    "Susan Joseph Jessica Thomas Sarah Charles Karen Daniel Nancy Matthew Lisa Anthony Betty Mark "
    "Margaret Donald Sandra Steven Ashley Paul Kimberly Andrew Emily Joshua Donna Kenneth Michelle"
)
LAST = _words(
    "Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez "
    "Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris "
    "Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill "
    "Flores Okafor Lindqvist"
)
SYLLABLES = ("ka", "zo", "mir", "tel", "van", "qui", "bro", "sen", "dax", "lu", "per", "wen", "hal", "dor")
STREETS = ("Maple Avenue", "Oak Street", "Washington Blvd", "Elm Road", "Park Lane", "Cedar Court", "Main St")
CITIES = (
    ("Springfield", "IL"),
    ("Worcester", "MA"),
    ("Dayton", "OH"),
    ("Fresno", "CA"),
    ("Tulsa", "OK"),
    ("Albany", "NY"),
)
HOSPITALS = ("St. Vincent's Hospital", "Mercy General", "Riverside Medical Center", "County General Hospital")
MONTHS = _words("January February March April May June July August September October November December")

BODY = [
    "HISTORY OF PRESENT ILLNESS: {age}-year-old {sex} with a history of hypertension, type 2 diabetes "
    "mellitus and coronary artery disease status post CABG in {year}, who presented to the emergency "
    "department on {date1} with two days of substernal chest pressure radiating to the left arm, "
    "associated with diaphoresis and shortness of breath. Troponin was 0.42 on arrival. ECG showed "
    "ST depressions in V4-V6. Aspirin 325 mg, heparin drip and nitroglycerin were started.",
    "PAST MEDICAL HISTORY: Hypertension. Hyperlipidemia. Chronic kidney disease stage 3 (baseline "
    "creatinine 1.6). Gout. Remote appendectomy. Seen in clinic by Dr. {doctor2} on {date2} for "
    "medication review; metformin was held for a GFR of 38.",
    "SOCIAL HISTORY: Lives with his or her spouse {spouse} at {street_no} {street}, {city}, {state} "
    "{zip}. Former smoker, 30 pack-years, quit in {year2}. Drinks alcohol socially. Retired "
    "{profession}. Contact number {phone}.",
    "HOSPITAL COURSE: Cardiac catheterization on {date3} showed a 90% stenosis of the saphenous vein "
    "graft to the obtuse marginal, treated with a drug-eluting stent. The procedure was uncomplicated. "
    "Post-procedure the patient remained chest pain free, ambulated without difficulty and was "
    "transitioned to oral medications. Potassium was repleted. Blood glucose was controlled with "
    "sliding-scale insulin. Mr./Ms. {last} was seen by physical therapy and cleared for home.",
    "DISCHARGE MEDICATIONS: Aspirin 81 mg daily. Clopidogrel 75 mg daily. Atorvastatin 80 mg nightly. "
    "Metoprolol succinate 50 mg daily. Lisinopril 10 mg daily. Insulin glargine 20 units at bedtime.",
    "FOLLOW-UP: Cardiology clinic with Dr. {doctor1} in two weeks ({date4}); primary care with "
    "Dr. {doctor2} within one week. Call {phone2} with questions. Labs (BMP) in 3 days.",
]


def _name(rng: random.Random) -> tuple[str, str]:
    first = rng.choice(FIRST)
    if rng.random() < 0.3:
        last = "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()
    else:
        last = rng.choice(LAST)
    return first, last


def _date(rng: random.Random) -> str:
    year, month, day = rng.randint(2005, 2024), rng.randint(1, 12), rng.randint(1, 28)
    style = rng.randrange(4)
    if style == 0:
        return f"{month:02d}/{day:02d}/{year}"
    if style == 1:
        return f"{MONTHS[month - 1]} {day}, {year}"
    if style == 2:
        return f"{year}-{month:02d}-{day:02d}"
    return f"{month}/{day}/{str(year)[2:]}"


def _phone(rng: random.Random) -> str:
    return f"({rng.randint(201, 989)}) {rng.randint(200, 999)}-{rng.randint(0, 9999):04d}"


def make_note(rng: random.Random) -> str:
    """One note of about 2-4 KB with its own names, dates and numbers."""
    first, last = _name(rng)
    city, state = rng.choice(CITIES)
    values = {
        "age": rng.randint(34, 88),
        "sex": rng.choice(("man", "woman")),
        "year": rng.randint(1995, 2015),
        "year2": rng.randint(1990, 2020),
        "date1": _date(rng),
        "date2": _date(rng),
        "date3": _date(rng),
        "date4": _date(rng),
        "doctor1": " ".join(_name(rng)),
        "doctor2": _name(rng)[1],
        "spouse": " ".join(_name(rng)),
        "street_no": rng.randint(10, 9999),
        "street": rng.choice(STREETS),
        "city": city,
        "state": state,
        "zip": f"{rng.randint(10000, 99999)}",
        "profession": rng.choice(("teacher", "letter carrier", "electrician", "nurse", "accountant")),
        "phone": _phone(rng),
        "phone2": _phone(rng),
        "last": last,
    }
    header = (
        f"DISCHARGE SUMMARY\nPatient: {last}, {first}    MRN: {rng.randint(1_000_000, 9_999_999)}\n"
        f"Admission date: {_date(rng)}    Discharge date: {_date(rng)}\n"
        f"Attending: Dr. {values['doctor1']}    {rng.choice(HOSPITALS)}\n\n"
    )
    paragraphs = [p.format(**values) for p in BODY]
    extra = rng.randint(0, 2)  # vary the length: repeat the course paragraph up to twice
    paragraphs[3:4] = [paragraphs[3]] * (1 + extra)
    return header + "\n\n".join(paragraphs) + f"\n\nElectronically signed by {values['doctor1']}, MD\n"


def iter_notes(seed: int = 0) -> Iterator[str]:
    """An endless stream of different notes (reproducible for one ``seed``)."""
    rng = random.Random(seed)
    while True:
        yield make_note(rng)


def notes(n: int, seed: int = 0) -> list[str]:
    stream = iter_notes(seed)
    return [next(stream) for _ in range(n)]


def long_text(size: int, seed: int = 0, separator: str = "\n\n") -> str:
    """Notes joined into one text of at least ``size`` characters (and at most one note more)."""
    parts: list[str] = []
    total = 0
    for note in iter_notes(seed):
        if total >= size:
            break
        parts.append(note)
        total += len(note) + len(separator)
    return separator.join(parts)
