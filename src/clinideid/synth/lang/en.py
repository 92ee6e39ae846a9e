"""English (US) templates and formats."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence

from clinideid import validators as v
from clinideid.synth.lang._common import SHARED_DRUGS, numeric, pattern, spelled
from clinideid.synth.profile import LanguageProfile

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")  # fmt: skip
SUFFIXES = ("Street", "St.", "Avenue", "Ave", "Road", "Rd", "Lane", "Drive", "Dr.", "Court", "Boulevard")


def _street(rng: random.Random, streets: Sequence[str], surnames: Sequence[str]) -> str:
    return f"{rng.randrange(1, 9999)} {rng.choice(surnames)} {rng.choice(SUFFIXES)}"


def _ssn(rng: random.Random, female: bool, birth: dt.date) -> str:
    s = v.generate_ssn(rng.randrange)
    return rng.choice([f"{s[:3]}-{s[3:5]}-{s[5:]}", s])


TEMPLATES = {
    "discharge": [
        ["{hospital}\nDISCHARGE SUMMARY\n", "DISCHARGE SUMMARY - {hospital}\n"],
        [
            "Patient: {patient}    MRN: {mrn}    DOB: {birthdate}\nAdmitted: {adm}    Discharged: {dis}\n",
            "Name: {patient_lf_comma}\nMedical record no. {mrn}\nDate of admission: {adm}\nDate of discharge: {dis}\n",
        ],
        ["Attending: Dr. {doctor}\n", "Attending physician: {doctor}, MD\n"],
        [
            "HISTORY OF PRESENT ILLNESS:\n{g:Mr.|Ms.} {patient_last} is a {age}-year-old {g:man|woman} with a history of "
            "{eponym} who presented with chest pain for {duration}. {vitals}, {score}.\n",
            "HPI: {age} y/o {g:male|female} with {eponym}, admitted from {city} after a fall. {vitals}.\n",
        ],
        [
            "HOSPITAL COURSE:\nStarted on {drug} and {drug}. {g:His|Her} {relation_word} {relative} was updated by "
            "phone at {time}.\n",
            "HOSPITAL COURSE:\nTreated with {drug}. Seen by Dr. {doctor2_last} (cardiology) on {date}. {score}.\n",
        ],
        [
            "DISPOSITION: discharged home to {street}, {city}, {state} {zip}. Follow-up with Dr. {doctor2} at "
            "{hospital2} on {date}; clinic phone {phone}.\n",
            "Discharged to {hospital2} rehabilitation. Contact: {phone}, fax {fax}.\n",
        ],
        ["Electronically signed by {doctor_init}, MD on {dis} {time}\n", "Dictated by: Dr. {doctor_last}\n"],
    ],
    "progress": [
        ["PROGRESS NOTE {date}\n", "Nursing note - {date} {time}\n"],
        [
            "Pt {patient_init} ({age} yo) seen on rounds, afebrile, {vitals}. {score}.\n",
            "{patient_first} slept well overnight. {vitals}. Pain 3/10, {drug} given at {time}.\n",
        ],
        [
            "D/w {relation_word} {relative_first} at bedside (works as a {profession}).\n",
            "Spoke with {relative} ({relation_word}), phone {phone2}.\n",
        ],
        [
            "Plan: continue {drug}, {eponym} follow-up. RN {nurse}.\n",
            "Plan: wean O2, PT/OT. Dr. {doctor_last}\n",
        ],
    ],
    "report": [
        ["{hospital} - Department of Radiology\n", "LABORATORY REPORT\n{hospital}\n"],
        [
            "Patient: {patient}   DOB: {birthdate}   MRN: {mrn}\nAccession #: {idnum}   Exam date: {date}\n",
            "Name: {patient_lf_comma}  Age: {age}  Specimen ID: {idnum}  Collected: {date} {time}\n",
        ],
        ["Ordering physician: Dr. {doctor}\n", "Requested by {doctor_init}, {hospital2}\n"],
        [
            "FINDINGS: No acute infarct. Ventricles normal for age. {eponym} not excluded. Ratio {ratio}.\n",
            "RESULTS: {lab}; {lab}. Creatinine normal.\n",
        ],
        [
            "IMPRESSION: stable compared with study of {year}.\nReported by {doctor2}, MD, {dis}.\n",
            "Verified by {doctor2_init} on {dis}.\n",
        ],
    ],
    "referral": [
        [
            "{hospital}\n{street}\n{city}, {state} {zip}\nTel {phone}  Fax {fax}\n\n{date}\n",
            "From: Dr. {doctor}, {hospital}\nTo: Dr. {doctor2}, {hospital2}\nDate: {date}\n",
        ],
        ["Dear Dr. {doctor2_last},\n", "Dear colleague,\n"],
        [
            "Thank you for seeing {patient} (DOB {birthdate}), a {age}-year-old retired {profession} from {city}, "
            "regarding {eponym}.\n",
            "I am referring {g:Mr.|Mrs.} {patient}, {age}, who has had dyspnea for {duration}; {vitals}.\n",
        ],
        [
            "Current medications: {drug}, {drug}. Insurance: {org}, member ID {hplan}.\n",
            "Medications: {drug}. {g:He|She} can be reached at {phone2} or {email}.\n",
        ],
        ["Sincerely,\n{doctor}, MD\n{doctor_email}\n", "Best regards,\nDr. {doctor_last}\n"],
    ],
    "form": [
        ["PATIENT REGISTRATION FORM\n", "ADMISSION FACESHEET - {hospital}\n"],
        ["Last name: {patient_last}\nFirst name: {patient_first}\nDate of birth: {birthdate}  Age: {age}\n"],
        ["Address: {street}\nCity: {city}  State: {state}  ZIP: {zip}\nCountry of birth: {country}\n"],
        ["Phone: {phone}  Email: {email}\nSSN: {ssn}\nMRN: {mrn}  Visit no: {idnum}\n"],
        ["Insurance: {org}  Policy #: {hplan}\nOccupation: {profession}\n"],
        ["Emergency contact: {relative} ({relation_word}) {phone2}\nPrimary care: Dr. {doctor}\n"],
    ],
    "ed": [
        ["EMERGENCY DEPARTMENT NOTE  {hospital}\n", "ED triage {adm} {time}\n"],
        [
            "{patient}, {age}{g:M|F}, MRN {mrn}, brought by EMS from {street}, {city}.\n",
            "{age} yo {g:M|F} ({patient_init}) BIBA after syncope at work ({org}).\n",
        ],
        [
            "Triage: {vitals}, {score}. Hx {eponym}. Meds: {drug}.\n",
            "Triage at {time}: aged {age}, {vitals}. PMH: {eponym}, on {drug}. Lives with {relation_word} in {city}.\n",
        ],
        [
            "Exam: alert, {score}, strength {strength}. Seen by Dr. {doctor_last} at {time}.\n",
            "D/w Dr. {doctor2_last} on call, admit to {hospital2}. {relative_first} ({relation_word}) informed.\n",
        ],
        ["Signed: {doctor_init}, MD {adm}\n"],
    ],
}

DISTRACTORS = {
    "drug": (*SHARED_DRUGS, "aspirin 81 mg daily", "insulin glargine 20 units at night", "Lasix 40 mg IV"),
    "eponym": (
        "Parkinson disease",
        "Crohn disease",
        "Alzheimer dementia",
        "Hashimoto thyroiditis",
        "Barrett esophagus",
        "a Foley catheter",
        "Bell palsy",
        "Cushing syndrome",
        "Hodgkin lymphoma",
    ),
    "vitals": (
        "BP [100-170]/[55-99]",
        "HR [50-120]",
        "BP [100-170]/[55-99] mmHg, HR [50-120] bpm",
        "SpO2 [88-100]% on RA",
        "T 3[6-8].[0-9] C",
        "RR [12-28]",
    ),
    "score": (
        "GCS [8-15]",
        "Glasgow Coma Scale 15",
        "NIHSS [0-12]",
        "Wells score [0-6]",
        "Apgar 9/10",
        "NYHA class II",
        "Child-Pugh A",
    ),
    "strength": ("5/5", "4/5", "4+/5"),
    "time": ("[10-23]:[10-59]", "0[6-9]:[10-59]", "[1-9]:[10-59] pm"),
    "duration": ("[2-9] days", "[2-6] weeks", "[2-23] hours", "[2-9] months"),
    "ratio": ("1:[2-9]", "[2-9]:1"),
    "lab": (
        "Hb [8-15].[0-9] g/dL",
        "WBC [4-18].[0-9]",
        "Na [128-146] mmol/L",
        "INR 1.[0-9]",
        "CRP [1-200] mg/L",
    ),
}

ABBREVIATIONS = (
    (r"\bpatient\b", "pt"), (r"\bdiscussed with\b", "d/w"), (r"\bwith\b", "w/"), (r"\bwithout\b", "w/o"),
    (r"\bhistory of\b", "hx"), (r"\bhistory\b", "hx"), (r"\byear-old\b", "yo"), (r"\bthe\b ?", ""),
    (r"\ba\b ?", ""), (r"\band\b", "&"), (r"\bDoctor\b", "dr"), (r"\bdischarged\b", "d/c"),
)  # fmt: skip

PROFILE = LanguageProfile(
    code="en",
    months=MONTHS,
    date_formats=(
        numeric("mdy", "/"),
        numeric("mdy", "/", pad=False),
        spelled("{m} {d}, {y}"),
        spelled("{d} {m3} {y}"),
        numeric("ymd", "-"),
        numeric("mdy", "/", 2, pad=False),
    ),
    phone_patterns=("(Ndd) Ndd-dddd", "Ndd-Ndd-dddd", "Ndd.Ndd.dddd", "+1 Ndd Ndd dddd", "Ndd-dddd"),
    zip_pattern=pattern("ddddd", "ddddd-dddd"),
    mrn=pattern("dddddddd", "Nddddd", "MR-dddddd"),
    idnum=pattern("ACC-dddddd", "Ndddddddd", "E-ddddddd"),
    ssn=_ssn,
    healthplan=pattern("XHNdddddddd", "Wdddddddd", "dddddddddd"),
    street=_street,
    relations=(("son", "husband", "brother", "father"), ("daughter", "wife", "sister", "mother")),
    templates=TEMPLATES,
    distractors=DISTRACTORS,
    abbreviations=ABBREVIATIONS,
    email_domains=("gmail.com", "yahoo.com", "outlook.com", "hospital.org"),
)
