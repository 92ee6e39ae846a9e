"""Italian templates and formats."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence

from clinideid import validators as v
from clinideid.synth.lang._common import SHARED_DRUGS, numeric, pattern, spelled
from clinideid.synth.profile import LanguageProfile

MONTHS = ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre",
          "ottobre", "novembre", "dicembre")  # fmt: skip
_TYPES = ("Via", "Viale", "Piazza", "Corso", "Vicolo", "Largo")


def _street(rng: random.Random, streets: Sequence[str], surnames: Sequence[str]) -> str:
    named = [s for s in streets if " " in s and s.split()[0] in _TYPES]
    base = (
        rng.choice(named) if named and rng.random() < 0.5 else f"{rng.choice(_TYPES)} {rng.choice(surnames)}"
    )
    return f"{base}{rng.choice([' ', ', ', ' n. '])}{rng.randrange(1, 200)}"


def _cf(rng: random.Random, female: bool, birth: dt.date) -> str:
    return v.generate_codice_fiscale(rng.randrange, female=female)


def _ts(rng: random.Random) -> str:
    """A health card (tessera sanitaria) number's shape: 20 digits starting 80380."""
    return "80380" + "".join(str(rng.randrange(10)) for _ in range(15))


TEMPLATES = {
    "discharge": [
        [
            "{hospital}\nU.O.C. Medicina Interna\nDirettore: Prof. {doctor2}\n",
            "AZIENDA OSPEDALIERA - {hospital}\nReparto di Cardiologia\n",
        ],
        ["LETTERA DI DIMISSIONE\n", "RELAZIONE CLINICA DI DIMISSIONE\n"],
        [
            "Paziente: {patient_lf}, {g:nato|nata} a {birthcity} il {birthdate}\nCartella clinica n. {mrn}\n"
            "Ricovero dal {adm} al {dis}\n",
            "Si dimette in data {dis} {g:il Sig.|la Sig.ra} {patient}, di anni {age}, ricoverat{g:o|a} il {adm} "
            "(n. nosologico {idnum}).\n",
        ],
        [
            "Anamnesi: paziente di {age} anni, {profession} in pensione, affett{g:o|a} da {eponym}. "
            "Giunge per dispnea da {duration}. {vitals}, {score}.\n",
            "Anamnesi raccolta dal familiare ({relation_word}) {relative}. {vitals}.\n",
        ],
        [
            "Terapia alla dimissione: {drug}, {drug}.\nControllo presso l'ambulatorio del Dott. {doctor2_last} "
            "il {date} (tel. {phone}).\n",
            "Si consiglia: {drug}; visita di controllo presso {hospital2} il {date}.\n",
        ],
        ["Il Medico\n{dg:Dott.|Dott.ssa} {doctor}\n", "Cordiali saluti\n{dg:Dott.|Dott.ssa} {doctor_init}\n"],
    ],
    "progress": [
        ["Diario clinico {date}\n", "Diario infermieristico - {date} ore {time}\n"],
        [
            "Paziente {patient_last} ({age} aa) vigile, {vitals}. {score}.\n",
            "{g:Sig.|Sig.ra} {patient_init} riposa, {vitals}; somministrato {drug} alle ore {time}.\n",
        ],
        [
            "Colloquio con il/la {relation_word} {relative} (cell. {phone2}).\n",
            "Informato il familiare {relative_first} ({relation_word}).\n",
        ],
        [
            "Visita Dott. {doctor_last}: prosegue {drug}, noto {eponym}. Inf. {nurse}\n",
            "Giro visita {dg:Dott.|Dott.ssa} {doctor2_last}: invariato.\n",
        ],
    ],
    "report": [
        ["{hospital} - Servizio di Radiologia\n", "Laboratorio Analisi - {hospital}\n"],
        [
            "Cognome e nome: {patient_lf}  Data di nascita: {birthdate}\nN. accettazione: {idnum}  ID paziente: {mrn}\n",
            "Paziente: {patient} ({age} anni)  Richiesta n. {idnum}\n",
        ],
        [
            "Esame del {date}: TC encefalo senza mdc\nMedico richiedente: Dott. {doctor}\n",
            "Prelievo del {date} ore {time}  Reparto richiedente: {hospital2}\n",
        ],
        [
            "Referto: non lesioni emorragiche. Rapporto {ratio}. Non escluso {eponym}.\n",
            "Risultati: {lab}; {lab}.\n",
        ],
        [
            "Conclusioni: quadro stabile rispetto al controllo del {year}.\nIl Medico Radiologo {doctor2}, {dis}\n",
            "Validato da {doctor2_init} il {dis}\n",
        ],
    ],
    "referral": [
        [
            "{dg:Dott.|Dott.ssa} {doctor}\nMedico di Medicina Generale\n{street} - {zip} {city} ({state})\n"
            "Tel. {phone} - Fax {fax}\n",
            "Studio Medico {dg:Dott.|Dott.ssa} {doctor} - {doctor_email}\n",
        ],
        ["{city}, {date}\n"],
        ["Gentile Collega,\n", "Egregio Dott. {doctor2_last},\n"],
        [
            "invio {g:il Sig.|la Sig.ra} {patient}, {g:nato|nata} il {birthdate} a {birthcity}, C.F. {ssn}, "
            "per valutazione di {eponym}.\n",
            "Le invio {g:il mio assistito|la mia assistita} {patient_lf}, {age} anni, {profession}, con dispnea "
            "da {duration}; {vitals}.\n",
        ],
        ["Tessera sanitaria n. {hplan}. Recapito: {phone2}, {email}.\n", "Assicurazione: {org}.\n"],
        ["Cordiali saluti\n{doctor_init}\n"],
    ],
    "form": [
        ["SCHEDA ANAGRAFICA - {hospital}\n", "MODULO DI ACCETTAZIONE\n"],
        [
            "Cognome: {patient_last}\nNome: {patient_first}\nData di nascita: {birthdate}  Età: {age}\n"
            "Luogo di nascita: {birthcity}  Cittadinanza: {country}\n"
        ],
        ["Residenza: {street}, {zip} {city} ({state})\n"],
        [
            "Telefono: {phone}  E-mail: {email}\nCodice fiscale: {ssn}\nTessera sanitaria: {hplan}\n"
            "N. cartella: {mrn}  N. pratica: {idnum}\n"
        ],
        [
            "Professione: {profession}  Datore di lavoro: {org}\nFamiliare di riferimento: {relative} "
            "({relation_word}) {phone2}\nMedico curante: Dott. {doctor}\n"
        ],
    ],
    "ed": [
        ["PRONTO SOCCORSO - {hospital}\nVerbale del {adm} ore {time}\n", "Triage PS {adm}\n"],
        [
            "{patient}, {age} anni, {g:M|F}, cartella {mrn}. Giunge in 118 da {city}, {street}.\n",
            "Paziente {patient_init}, {age} aa, sincope sul posto di lavoro ({org}).\n",
        ],
        [
            "Parametri: {vitals}, {score}. APR: {eponym}. Terapia domiciliare: {drug}.\n",
            "Triage ore {time}: paziente di {age} anni, {vitals}. APR: {eponym}; in terapia con {drug}. Vive a {city}.\n",
        ],
        [
            "E.O. neurologico: {score}, forza {strength}. Consulenza Dott. {doctor2_last}; ricovero presso {hospital2}.\n",
            "Avvisato il familiare ({relation_word}) {relative_first}. Visto dal Dott. {doctor_last}.\n",
        ],
        ["Il medico di PS {doctor_init}\n"],
    ],
}

DISTRACTORS = {
    "drug": (
        *SHARED_DRUGS,
        "cardioaspirina 100 mg",
        "pantoprazolo 40 mg",
        "furosemide 25 mg",
        "enoxaparina 4000 UI",
        "paracetamolo 1 g",
    ),
    "eponym": (
        "morbo di Parkinson",
        "malattia di Crohn",
        "demenza di Alzheimer",
        "tiroidite di Hashimoto",
        "esofago di Barrett",
        "catetere di Foley",
        "sindrome di Cushing",
        "linfoma di Hodgkin",
    ),
    "vitals": (
        "PA [100-170]/[55-99] mmHg",
        "FC [50-120] bpm",
        "SpO2 [88-100]%",
        "TC 3[6-8],[0-9] °C",
        "PA [100-170]/[55-99], FC [50-120]",
    ),
    "score": ("GCS [8-15]", "Glasgow Coma Scale 15", "NIHSS [0-12]", "NYHA II", "Child-Pugh A", "VAS [0-8]"),
    "strength": ("5/5", "4/5", "3/5"),
    "time": ("[10-23]:[10-59]", "0[6-9]:[10-59]", "[10-23].[10-59]"),
    "duration": ("[2-9] giorni", "[2-6] settimane", "[2-23] ore", "[2-9] mesi"),
    "ratio": ("1:[2-9]", "[2-9]:1"),
    "lab": (
        "Hb [8-15],[0-9] g/dl",
        "GB [4-18],[0-9] x10^3/µl",
        "Na [128-146] mmol/l",
        "INR 1,[0-9]",
        "PCR [1-200] mg/l",
    ),
}

ABBREVIATIONS = (
    (r"\bpaziente\b", "pz"), (r"\bcon\b", "c/"), (r"\bterapia\b", "tp"), (r"\banni\b", "aa"),
    (r"\bil ?\b|\bla ?\b|\blo ?\b", ""), (r"\bcontrollo\b", "ctrl"), (r"\bnella norma\b", "nn"),
)  # fmt: skip

PROFILE = LanguageProfile(
    code="it",
    months=MONTHS,
    date_formats=(
        numeric("dmy", "/"),
        numeric("dmy", "/", 2),
        spelled("{d} {m} {y}"),
        numeric("dmy", "-"),
        numeric("dmy", "."),
    ),
    phone_patterns=("0N ddddddd", "0Nd ddddddd", "3Nd ddddddd", "+39 3Nd dddd ddd", "0Nd/dddddd"),
    zip_pattern=pattern("Ndddd", "0Nddd"),
    mrn=pattern("dddd/dddddd", "Nddddddd"),
    idnum=pattern("Ndddddddd", "dddd-Nddddd"),
    ssn=_cf,
    healthplan=_ts,
    street=_street,
    relations=(("marito", "figlio", "fratello", "padre"), ("moglie", "figlia", "sorella", "madre")),
    templates=TEMPLATES,
    distractors=DISTRACTORS,
    abbreviations=ABBREVIATIONS,
    email_domains=("libero.it", "gmail.com", "alice.it", "asl.it"),
)
