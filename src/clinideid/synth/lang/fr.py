"""French templates and formats."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence

from clinideid import validators as v
from clinideid.synth.lang._common import SHARED_DRUGS, numeric, pattern, spelled
from clinideid.synth.profile import LanguageProfile

MONTHS = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
          "novembre", "décembre")  # fmt: skip
_TYPES = ("rue", "avenue", "boulevard", "impasse", "place", "allée", "chemin")


def _street(rng: random.Random, streets: Sequence[str], surnames: Sequence[str]) -> str:
    named = [s for s in streets if " " in s and s.split()[0] in _TYPES]
    base = (
        rng.choice(named) if named and rng.random() < 0.5 else f"{rng.choice(_TYPES)} {rng.choice(surnames)}"
    )
    return f"{rng.randrange(1, 150)}{rng.choice(['', '', ' bis', ','])} {base}"


def _nir(rng: random.Random, female: bool, birth: dt.date) -> str:
    s = v.generate_nir(rng.randrange, sex="2" if female else "1")
    return rng.choice([f"{s[0]} {s[1:3]} {s[3:5]} {s[5:7]} {s[7:10]} {s[10:13]} {s[13:]}", s])


def _zip(rng: random.Random) -> str:
    return f"{rng.randrange(1, 96):02d}{rng.randrange(0, 1000, 10):03d}"


TEMPLATES = {
    "discharge": [
        [
            "{hospital}\nService de Médecine Interne\nChef de service : Pr {doctor2}\n",
            "{hospital} - Service de Cardiologie\n",
        ],
        ["COMPTE RENDU D'HOSPITALISATION\n", "LETTRE DE SORTIE\n"],
        [
            "Patient{g:|e} : {patient}, né{g:|e} le {birthdate}\nIPP : {mrn}   N° de séjour : {idnum}\n"
            "Hospitalisé{g:|e} du {adm} au {dis}\n",
            "Cher confrère,\nJ'ai pris en charge {g:M.|Mme} {patient}, âgé{g:|e} de {age} ans, hospitalisé{g:|e} du "
            "{adm} au {dis}.\n",
        ],
        ["Antécédents : {eponym}. Ancien{g:|ne} {profession}.\n"],
        [
            "Histoire de la maladie : dyspnée depuis {duration}. À l'entrée {vitals}, {score}.\n",
            "Adressé{g:|e} par sa famille ({relation_word}, {relative}). {vitals}.\n",
        ],
        [
            "Traitement de sortie : {drug}, {drug}. Consultation de suivi avec le Dr {doctor2_last} le {date} "
            "(tél. {phone}).\n",
            "Traitement : {drug}. Rendez-vous à {hospital2} le {date}.\n",
        ],
        ["Bien confraternellement,\nDr {doctor}\n", "Dr {doctor_init}\n"],
    ],
    "progress": [
        ["Observation du {date}\n", "Transmissions infirmières - {date} {time}\n"],
        [
            "{g:M.|Mme} {patient_last} ({age} ans), calme, {vitals}. {score}.\n",
            "{patient_first} a bien dormi. {vitals}. {drug} administré à {time}.\n",
        ],
        [
            "Entretien avec {relative} ({relation_word}), tél. {phone2}.\n",
            "Famille prévenue ({relation_word}, {relative_first}).\n",
        ],
        [
            "Visite Dr {doctor_last} : poursuite {drug}, {eponym} connu. IDE {nurse}\n",
            "Contre-visite Dr {doctor2_last} : pas de changement.\n",
        ],
    ],
    "report": [
        ["{hospital} - Service d'Imagerie Médicale\n", "Laboratoire de Biologie Médicale - {hospital}\n"],
        [
            "Patient : {patient}   Né{g:|e} le : {birthdate}\nIPP : {mrn}   N° d'examen : {idnum}\n",
            "Nom : {patient} ({age} ans)  Dossier n° {idnum}\n",
        ],
        [
            "Examen du {date} : scanner cérébral sans injection\nPrescripteur : Dr {doctor}\n",
            "Prélèvement du {date} à {time}  Service demandeur : {hospital2}\n",
        ],
        [
            "Résultat : pas de saignement. Rapport {ratio}. {eponym} non exclu.\n",
            "Résultats : {lab} ; {lab}.\n",
        ],
        [
            "Conclusion : aspect stable par rapport à l'examen de {year}.\nDr {doctor2}, {dis}\n",
            "Validé par {doctor2_init} le {dis}\n",
        ],
    ],
    "referral": [
        [
            "Dr {doctor}\nMédecin généraliste\n{street}\n{zip} {city}\nTél. {phone} - Fax {fax}\n",
            "Cabinet médical - Dr {doctor} - {doctor_email}\n",
        ],
        ["{city}, le {date}\n"],
        ["Cher confrère,\n", "Cher Dr {doctor2_last},\n"],
        [
            "Je vous adresse {g:M.|Mme} {patient}, né{g:|e} le {birthdate} à {birthcity}, n° de sécurité sociale "
            "{ssn}, pour avis concernant {eponym}.\n",
            "Je vous adresse {g:mon patient|ma patiente} {patient}, {age} ans, {profession}, dyspnéique depuis "
            "{duration} ; {vitals}.\n",
        ],
        ["Mutuelle : {org}, n° adhérent {hplan}. Joignable au {phone2}, {email}.\n", "Mutuelle : {org}.\n"],
        ["Confraternellement,\n{doctor_init}\n"],
    ],
    "form": [
        ["FICHE D'ADMISSION - {hospital}\n", "FICHE ADMINISTRATIVE\n"],
        [
            "Nom : {patient_last}\nPrénom : {patient_first}\nDate de naissance : {birthdate}  Âge : {age}\n"
            "Lieu de naissance : {birthcity}  Nationalité : {country}\n"
        ],
        ["Adresse : {street}, {zip} {city}\nRégion : {state}\n"],
        [
            "Téléphone : {phone}  Courriel : {email}\nN° de sécurité sociale : {ssn}\nMutuelle n° : {hplan}\n"
            "IPP : {mrn}  N° de séjour : {idnum}\n"
        ],
        [
            "Profession : {profession}  Employeur : {org}\nPersonne à prévenir : {relative} ({relation_word}) "
            "{phone2}\nMédecin traitant : Dr {doctor}\n"
        ],
    ],
    "ed": [
        ["SERVICE DES URGENCES - {hospital}\n{adm} {time}\n", "Accueil des urgences {adm}\n"],
        [
            "{patient}, {age} ans, IPP {mrn}. Amené{g:|e} par le SAMU depuis {street}, {city}.\n",
            "{g:Patient|Patiente} {patient_init}, {age} ans, malaise sur son lieu de travail ({org}).\n",
        ],
        [
            "Constantes : {vitals}, {score}. ATCD : {eponym}. Traitement habituel : {drug}.\n",
            "Tri à {time} : {g:patient|patiente} de {age} ans, {vitals}. ATCD : {eponym} ; sous {drug}. Vit à {city}.\n",
        ],
        [
            "Examen neurologique : {score}, force {strength}. Avis Dr {doctor2_last} ; hospitalisation à "
            "{hospital2}.\n",
            "Famille prévenue ({relation_word}, {relative_first}). Vu par le Dr {doctor_last}.\n",
        ],
        ["Médecin urgentiste : {doctor_init}\n"],
    ],
}

DISTRACTORS = {
    "drug": (
        *SHARED_DRUGS,
        "Kardégic 75 mg",
        "oméprazole 20 mg",
        "furosémide 40 mg",
        "Lovenox 4000 UI",
        "paracétamol 1 g",
    ),
    "eponym": (
        "maladie de Parkinson",
        "maladie de Crohn",
        "maladie d'Alzheimer",
        "thyroïdite de Hashimoto",
        "endobrachyœsophage de Barrett",
        "sonde de Foley",
        "syndrome de Cushing",
        "lymphome de Hodgkin",
    ),
    "vitals": (
        "TA [100-170]/[55-99] mmHg",
        "FC [50-120] bpm",
        "SpO2 [88-100] %",
        "T° 3[6-8],[0-9] °C",
        "TA [100-170]/[55-99], FC [50-120]",
    ),
    "score": (
        "Glasgow [8-15]",
        "score de Glasgow 15",
        "NIHSS [0-12]",
        "NYHA II",
        "Child-Pugh A",
        "EVA [0-8]/10",
    ),
    "strength": ("5/5", "4/5", "3/5"),
    "time": ("[10-23]h[10-59]", "[10-23]:[10-59]", "0[6-9]h[10-59]"),
    "duration": ("[2-9] jours", "[2-6] semaines", "[2-23] heures", "[2-9] mois"),
    "ratio": ("1:[2-9]", "[2-9]:1"),
    "lab": (
        "Hb [8-15],[0-9] g/dl",
        "leucocytes [4-18],[0-9] G/l",
        "Na [128-146] mmol/l",
        "INR 1,[0-9]",
        "CRP [1-200] mg/l",
    ),
}

ABBREVIATIONS = (
    (r"\bpatient(e)?\b", "pt"), (r"\bavec\b", "av."), (r"\btraitement\b", "ttt"), (r"\bantécédents\b", "ATCD"),
    (r"\ble ?\b|\bla ?\b|\bles ?\b", ""), (r"\bsans\b", "ss"),
)  # fmt: skip

PROFILE = LanguageProfile(
    code="fr",
    months=MONTHS,
    date_formats=(
        numeric("dmy", "/"),
        numeric("dmy", "/", 2),
        spelled("{d} {m} {y}"),
        numeric("dmy", "."),
        numeric("dmy", "-"),
    ),
    phone_patterns=("0N dd dd dd dd", "0Ndddddddd", "+33 N dd dd dd dd", "0N.dd.dd.dd.dd"),
    zip_pattern=_zip,
    mrn=pattern("Nddddddddd", "Nddddddd"),
    idnum=pattern("Nddddddd", "dddddddddd"),
    ssn=_nir,
    healthplan=pattern("Nddddddd", "dddddddddd"),
    street=_street,
    relations=(("mari", "fils", "frère", "père"), ("épouse", "fille", "sœur", "mère")),
    templates=TEMPLATES,
    distractors=DISTRACTORS,
    abbreviations=ABBREVIATIONS,
    email_domains=("orange.fr", "free.fr", "gmail.com", "chu.fr"),
)
