"""German templates and formats."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence

from clinideid import validators as v
from clinideid.synth.lang._common import SHARED_DRUGS, numeric, pattern, spelled
from clinideid.synth.profile import LanguageProfile

MONTHS = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
          "November", "Dezember")  # fmt: skip
_ENDINGS = ("straße", "str.", "weg", "platz", "gasse", "allee", "ring", "damm")


def _street(rng: random.Random, streets: Sequence[str], surnames: Sequence[str]) -> str:
    named = [s for s in streets if s.lower().endswith(_ENDINGS) and s[0].isupper() and len(s) > 6]
    base = rng.choice(named) if named and rng.random() < 0.5 else rng.choice(surnames) + rng.choice(_ENDINGS)
    return f"{base} {rng.randrange(1, 140)}{rng.choice(['', '', 'a', 'b'])}"


def _rvnr(rng: random.Random, female: bool, birth: dt.date) -> str:
    """A pension insurance number's shape: area, birth date, initial letter, serial (sex coded in it)."""
    serial = rng.randrange(50, 99) if female else rng.randrange(0, 49)
    return (f"{rng.randrange(10, 90)} {birth:%d%m%y} {chr(rng.randrange(65, 91))} "
            f"{serial:02d}{rng.randrange(10)}")  # fmt: skip


def _kvnr(rng: random.Random) -> str:
    return v.generate_kvnr(rng.randrange)


TEMPLATES = {
    "discharge": [
        ["{hospital}\nKlinik für Innere Medizin\n", "{hospital} · Abteilung für Kardiologie\n"],
        [
            "Entlassungsbrief\n\nSehr geehrte Frau Kollegin, sehr geehrter Herr Kollege,\n",
            "Arztbrief\n\nSehr geehrte{dg:r Herr| Frau} Dr. {doctor2_last},\n",
        ],
        [
            "wir berichten über {g:Herrn|Frau} {patient}, geb. {birthdate}, wohnhaft {street}, {zip} {city}, "
            "{g:der|die} sich vom {adm} bis {dis} in unserer stationären Behandlung befand.\n",
            "wir berichten über unsere{g:n| gemeinsame} Patient{g:en|in} {patient_lf_comma} (geb. {birthdate}, "
            "Pat.-Nr. {mrn}), stationär vom {adm} bis zum {dis}.\n",
        ],
        ["Diagnosen: {eponym}; arterielle Hypertonie.\n"],
        [
            "Anamnese: Der {age}-jährige {g:Patient|Patientin} stellte sich mit Dyspnoe seit {duration} vor. "
            "{vitals}, {score}.\n",
            "Anamnese: {g:Herr|Frau} {patient_last} ({age} J.) wurde von {g:seiner|ihrer} {relation_word} "
            "{relative} gebracht. {vitals}.\n",
        ],
        [
            "Therapie: {drug}, {drug}. Procedere: Kontrolle bei Dr. med. {doctor2} am {date}.\n",
            "Medikation bei Entlassung: {drug} 1-0-1, {drug} 0-0-1.\n",
        ],
        [
            "Mit freundlichen kollegialen Grüßen\n\nProf. Dr. med. {doctor}\nChefarzt\n",
            "Mit freundlichen Grüßen\nDr. med. {doctor_init}, {dg:Oberarzt|Oberärztin}\nTel. {phone}\n",
        ],
    ],
    "progress": [
        ["Verlaufsbericht {date}\n", "Pflegebericht Frühdienst {date}, {time} Uhr\n"],
        [
            "Pat. {patient_last} ({age} J.) schläft ruhig, {vitals}. {score}.\n",
            "{g:Hr.|Fr.} {patient_init}: mobilisiert an den Bettrand, {vitals}, {drug} um {time} Uhr gegeben.\n",
        ],
        [
            "Rücksprache mit {relation_word} {relative} (Tel. {phone2}).\n",
            "Angehörige ({relation_word}, {relative_first}) telefonisch informiert.\n",
        ],
        [
            "Visite mit OA Dr. {doctor_last}: {drug} weiter, {eponym} bekannt. Pflege: {nurse}\n",
            "Kurvenvisite Dr. {doctor2_last}, keine Änderung.\n",
        ],
    ],
    "report": [
        ["Institut für Radiologie, {hospital}\n", "Zentrallabor – {hospital}\n"],
        [
            "Patient: {patient_lf_comma}, geb. {birthdate}\nFall-Nr.: {idnum}   Pat.-ID: {mrn}\n",
            "Name: {patient}  *{birthdate}  Alter: {age} J.  Auftragsnr. {idnum}\n",
        ],
        [
            "Untersuchung vom {date}: CT Schädel nativ\nAnforderung: Dr. {doctor}\n",
            "Eingang: {date} {time}  Einsender: {hospital2}\n",
        ],
        [
            "Befund: keine Blutung, keine Infarktdemarkation. Verhältnis {ratio}. {eponym} nicht auszuschließen.\n",
            "Ergebnisse: {lab}; {lab}.\n",
        ],
        [
            "Beurteilung: im Vergleich zur Voruntersuchung von {year} unverändert.\nDr. med. {doctor2}, {dis}\n",
            "Validiert: {doctor2_init}, {dis}\n",
        ],
    ],
    "referral": [
        [
            "Praxis Dr. med. {doctor}\nFacharzt für Allgemeinmedizin\n{street} · {zip} {city}\nTel. {phone} · Fax {fax}\n",
            "Dr. {doctor} · {street} · {zip} {city} · {doctor_email}\n",
        ],
        ["Überweisung an: {hospital}, {city}\n", "An {hospital2}\nz. Hd. Dr. {doctor2_last}\n"],
        ["{city}, den {date}\n"],
        [
            "Ich überweise {g:Herrn|Frau} {patient}, geb. {birthdate}, {age} Jahre, {profession}, "
            "wegen {eponym} zur Mitbehandlung.\n",
            "Bitte um Übernahme von {g:Herrn|Frau} {patient_lf_comma}, Dyspnoe seit {duration}, {vitals}.\n",
        ],
        [
            "Versichert bei {org}, Versichertennr. {hplan}. Patient{g:|in} erreichbar unter {phone2}, {email}.\n",
            "Krankenkasse: {org} ({hplan}).\n",
        ],
        ["Mit kollegialem Gruß\n{doctor_init}\n"],
    ],
    "form": [
        ["AUFNAHMEBOGEN – {hospital}\n", "Patientenstammblatt\n"],
        [
            "Name: {patient_last}\nVorname: {patient_first}\nGeburtsdatum: {birthdate}  Alter: {age}\n"
            "Geburtsort: {birthcity}  Staatsangehörigkeit: {country}\n"
        ],
        ["Anschrift: {street}, {zip} {city}\nBundesland: {state}\n"],
        [
            "Telefon: {phone}  E-Mail: {email}\nKrankenkasse: {org}  Vers.-Nr.: {hplan}\n"
            "Rentenversicherungsnr.: {ssn}\nPat.-Nr.: {mrn}  Fall-Nr.: {idnum}\n"
        ],
        [
            "Beruf: {profession}\nAngehörige: {relative} ({relation_word}), Tel. {phone2}\nHausarzt: Dr. {doctor}\n"
        ],
    ],
    "ed": [
        ["Notaufnahme {hospital} – Erstbefund {adm}, {time} Uhr\n", "ZNA-Protokoll {adm}\n"],
        [
            "{patient}, {age} J., {g:m|w}, Pat.-Nr. {mrn}. RTW aus {city}, {street}.\n",
            "{g:Pat.|Pat.in} {patient_init}, {age}-jährig, kollabiert am Arbeitsplatz ({org}).\n",
        ],
        [
            "Triage: {vitals}, {score}. Vorerkrankungen: {eponym}. Dauermedikation: {drug}.\n",
            "Triage {time} Uhr: {age}-jährige{g:r|} Patient{g:|in}, {vitals}. Bekannt: {eponym}; Medikation: {drug}. Lebt mit {relation_word} in {city}.\n",
        ],
        [
            "Neuro: {score}, Kraftgrad {strength}. Rücksprache mit Dr. {doctor2_last}, Aufnahme {hospital2}.\n",
            "{relation_word} {relative_first} informiert. Weiterbehandlung durch Dr. {doctor_last}.\n",
        ],
        ["gez. Dr. {doctor_init}\n"],
    ],
}

DISTRACTORS = {
    "drug": (
        *SHARED_DRUGS,
        "ASS 100 mg",
        "Metamizol 500 mg",
        "Ramipril 5 mg",
        "Pantoprazol 40 mg",
        "Torasemid 10 mg",
    ),
    "eponym": (
        "Morbus Parkinson",
        "Morbus Crohn",
        "Alzheimer-Demenz",
        "Hashimoto-Thyreoiditis",
        "Barrett-Ösophagus",
        "liegender Foley-Katheter",
        "Morbus Bechterew",
        "Cushing-Syndrom",
    ),
    "vitals": (
        "RR [100-170]/[55-99] mmHg",
        "HF [50-120]/min",
        "SpO2 [88-100] %",
        "Temp. 3[6-8],[0-9] °C",
        "RR [100-170]/[55-99], Puls [50-120]",
    ),
    "score": (
        "GCS [8-15]",
        "Glasgow Coma Scale 15",
        "NIHSS [0-12]",
        "NYHA II",
        "Barthel-Index [20-100]",
        "Child-Pugh A",
    ),
    "strength": ("5/5", "4/5", "3/5"),
    "time": ("[10-23]:[10-59]", "0[6-9]:[10-59]"),
    "duration": ("[2-9] Tagen", "[2-6] Wochen", "[2-23] Stunden", "[2-9] Monaten"),
    "ratio": ("1:[2-9]", "[2-9]:1"),
    "lab": (
        "Hb [8-15],[0-9] g/dl",
        "Leukozyten [4-18],[0-9] /nl",
        "Natrium [128-146] mmol/l",
        "INR 1,[0-9]",
        "CRP [1-200] mg/l",
    ),
}

ABBREVIATIONS = (
    (r"\bPatient(in)?\b", "Pat."), (r"\bRücksprache mit\b", "Rs. m."), (r"\bmit\b", "m."),
    (r"\bunauffällig\b", "unauff."), (r"\bder\b ?|\bdie\b ?|\bdas\b ?", ""), (r"\bund\b", "u."),
    (r"\bJahre\b", "J."), (r"\bbei\b", "b."),
)  # fmt: skip

PROFILE = LanguageProfile(
    code="de",
    months=MONTHS,
    date_formats=(
        numeric("dmy", "."),
        numeric("dmy", ".", 2),
        spelled("{d}. {m} {y}"),
        numeric("dmy", ".", pad=False),
        numeric("ymd", "-"),
    ),
    phone_patterns=(
        "0Nd ddddddd",
        "0Nd/dddddd",
        "+49 Nd ddddddd",
        "01Nd ddddddd",
        "0Nddd dddddd",
        "(0Nd) ddd dd dd",
    ),
    zip_pattern=pattern("Ndddd", "0Nddd"),
    mrn=pattern("Nddddddd", "Pddddddd"),
    idnum=pattern("Nddddddddd", "Fdddddd"),
    ssn=_rvnr,
    healthplan=_kvnr,
    street=_street,
    relations=(("Ehemann", "Sohn", "Bruder", "Vater"), ("Ehefrau", "Tochter", "Schwester", "Mutter")),
    templates=TEMPLATES,
    distractors=DISTRACTORS,
    abbreviations=ABBREVIATIONS,
    email_domains=("web.de", "gmx.de", "t-online.de", "klinikum.de"),
)
