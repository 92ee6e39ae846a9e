"""Spanish (Spain) templates and formats."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence

from clinideid import validators as v
from clinideid.synth.lang._common import SHARED_DRUGS, numeric, pattern, spelled
from clinideid.synth.profile import LanguageProfile

MONTHS = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
          "noviembre", "diciembre")  # fmt: skip
_TYPES = ("Calle", "C/", "Avenida", "Avda.", "Plaza", "Paseo")


def _street(rng: random.Random, streets: Sequence[str], surnames: Sequence[str]) -> str:
    named = [s for s in streets if " " in s and s.split()[0] in ("Calle", "Avenida", "Plaza", "Paseo")]
    base = (
        rng.choice(named) if named and rng.random() < 0.5 else f"{rng.choice(_TYPES)} {rng.choice(surnames)}"
    )
    tail = rng.choice([f", {rng.randrange(1, 150)}", f" nº {rng.randrange(1, 150)}",
                       f" {rng.randrange(1, 150)}, {rng.randrange(1, 9)}º {rng.choice('ABCD')}"])  # fmt: skip
    return base + tail


def _dni(rng: random.Random, female: bool, birth: dt.date) -> str:
    return v.generate_dni(rng.randrange) if rng.random() < 0.8 else v.generate_nie(rng.randrange)


def _zip(rng: random.Random) -> str:
    return f"{rng.randrange(1, 53):02d}{rng.randrange(1000):03d}"


TEMPLATES = {
    "discharge": [
        ["{hospital}\nServicio de Medicina Interna\n", "{hospital} - Servicio de Cardiología\n"],
        ["INFORME DE ALTA\n", "INFORME CLÍNICO DE ALTA HOSPITALARIA\n"],
        [
            "Paciente: {patient}\nNHC: {mrn}   Nº episodio: {idnum}\nFecha de nacimiento: {birthdate}\n"
            "Fecha de ingreso: {adm}   Fecha de alta: {dis}\n",
            "{g:Varón|Mujer} de {age} años, {g:D.|Dña.} {patient}, que ingresa el {adm} y es dad{g:o|a} de alta el {dis}.\n",
        ],
        ["Antecedentes: {eponym}. {g:Jubilado|Jubilada}, trabajaba como {profession}.\n"],
        [
            "Enfermedad actual: disnea de {duration} de evolución. A la exploración {vitals}, {score}.\n",
            "Acude acompañad{g:o|a} de su familiar ({relation_word}) {relative}. {vitals}.\n",
        ],
        [
            "Tratamiento al alta: {drug}, {drug}. Revisión en consultas externas con {dg:el Dr.|la Dra.} "
            "{doctor2_last} el {date} (tel. {phone}).\n",
            "Tratamiento: {drug}. Control en {hospital2} el {date}.\n",
        ],
        [
            "Fdo.: {dg:Dr.|Dra.} {doctor}\nNº colegiado {idnum}\n",
            "Atentamente,\n{dg:Dr.|Dra.} {doctor_init}\n",
        ],
    ],
    "progress": [
        ["Evolución {date}\n", "Nota de enfermería - {date} {time} h\n"],
        [
            "Paciente {patient_last} ({age} a), consciente y orientad{g:o|a}, {vitals}. {score}.\n",
            "{g:Sr.|Sra.} {patient_init} descansa, {vitals}; se administra {drug} a las {time}.\n",
        ],
        [
            "Se informa a su familiar ({relation_word}) {relative}, tlf. {phone2}.\n",
            "Familia ({relation_word}, {relative_first}) informada.\n",
        ],
        [
            "Pase de visita Dr. {doctor_last}: mantener {drug}, {eponym} conocido. Enf. {nurse}\n",
            "Valorad{g:o|a} por {dg:el Dr.|la Dra.} {doctor2_last}: sin cambios.\n",
        ],
    ],
    "report": [
        ["{hospital} - Servicio de Radiodiagnóstico\n", "Laboratorio de Análisis Clínicos - {hospital}\n"],
        [
            "Paciente: {patient}   F. nac.: {birthdate}\nNHC: {mrn}   Nº petición: {idnum}\n",
            "Nombre: {patient} ({age} años)  Muestra nº {idnum}\n",
        ],
        [
            "Fecha del estudio: {date}. TC craneal sin contraste\nSolicitado por: Dr. {doctor}\n",
            "Extracción: {date} {time}  Procedencia: {hospital2}\n",
        ],
        [
            "Hallazgos: sin signos de sangrado. Cociente {ratio}. No se descarta {eponym}.\n",
            "Resultados: {lab}; {lab}.\n",
        ],
        [
            "Conclusión: sin cambios respecto al estudio de {year}.\nFdo. {doctor2}, {dis}\n",
            "Validado por {doctor2_init}, {dis}\n",
        ],
    ],
    "referral": [
        [
            "{hospital}\n{street}, {zip} {city} ({state})\nTel. {phone} - Fax {fax}\n",
            "Centro de Salud {city}\n{dg:Dr.|Dra.} {doctor}, {doctor_email}\n",
        ],
        ["{city}, a {date}\n"],
        ["Estimado/a compañero/a:\n", "Estimado Dr. {doctor2_last}:\n"],
        [
            "Remito a {g:D.|Dña.} {patient}, nacid{g:o|a} el {birthdate} en {birthcity}, DNI {ssn}, para valoración "
            "por {eponym}.\n",
            "Le remito a mi paciente {patient}, {age} años, {profession}, con disnea de {duration}; {vitals}.\n",
        ],
        [
            "Nº de tarjeta sanitaria: {hplan}. Contacto: {phone2}, {email}. Mutua: {org}.\n",
            "Aseguradora: {org}.\n",
        ],
        ["Un saludo,\n{doctor_init}\n"],
    ],
    "form": [
        ["HOJA DE ADMISIÓN - {hospital}\n", "DATOS DE FILIACIÓN\n"],
        [
            "Apellidos: {patient_last}\nNombre: {patient_first}\nFecha de nacimiento: {birthdate}  Edad: {age}\n"
            "Lugar de nacimiento: {birthcity}  Nacionalidad: {country}\n"
        ],
        ["Domicilio: {street}, {zip} {city} ({state})\n"],
        [
            "Teléfono: {phone}  Correo electrónico: {email}\nDNI/NIE: {ssn}\nCIP/TSI: {hplan}\n"
            "NHC: {mrn}  Nº episodio: {idnum}\n"
        ],
        [
            "Profesión: {profession}  Empresa: {org}\nPersona de contacto: {relative} ({relation_word}) {phone2}\n"
            "Médico de familia: Dr. {doctor}\n"
        ],
    ],
    "ed": [
        ["URGENCIAS - {hospital}\n{adm} {time}\n", "Triaje urgencias {adm}\n"],
        [
            "{patient}, {age} años, NHC {mrn}. Traslado en ambulancia desde {street}, {city}.\n",
            "{g:Varón|Mujer} de {age} años ({patient_init}), síncope en el trabajo ({org}).\n",
        ],
        [
            "Constantes: {vitals}, {score}. AP: {eponym}. Tratamiento habitual: {drug}.\n",
            "Triaje {time}: paciente de {age} años, {vitals}. AP: {eponym}; toma {drug}. Vive con su {relation_word} en {city}.\n",
        ],
        [
            "Exploración neurológica: {score}, fuerza {strength}. Comentado con Dr. {doctor2_last}; ingreso en "
            "{hospital2}.\n",
            "Se avisa a su familiar ({relation_word}) {relative_first}. Visto por Dr. {doctor_last}.\n",
        ],
        ["Médico de urgencias: {doctor_init}\n"],
    ],
}

DISTRACTORS = {
    "drug": (
        *SHARED_DRUGS,
        "AAS 100 mg",
        "omeprazol 20 mg",
        "furosemida 40 mg",
        "enoxaparina 40 mg",
        "paracetamol 1 g",
    ),
    "eponym": (
        "enfermedad de Parkinson",
        "enfermedad de Crohn",
        "demencia tipo Alzheimer",
        "tiroiditis de Hashimoto",
        "esófago de Barrett",
        "sonda de Foley",
        "síndrome de Cushing",
        "linfoma de Hodgkin",
    ),
    "vitals": (
        "TA [100-170]/[55-99] mmHg",
        "FC [50-120] lpm",
        "SatO2 [88-100]%",
        "Tª 3[6-8],[0-9] ºC",
        "TA [100-170]/[55-99], FC [50-120]",
    ),
    "score": (
        "Glasgow [8-15]",
        "escala de coma de Glasgow 15",
        "NIHSS [0-12]",
        "NYHA II",
        "Child-Pugh A",
        "Barthel [20-100]",
    ),
    "strength": ("5/5", "4/5", "3/5"),
    "time": ("[10-23]:[10-59]", "0[6-9]:[10-59]"),
    "duration": ("[2-9] días", "[2-6] semanas", "[2-23] horas", "[2-9] meses"),
    "ratio": ("1:[2-9]", "[2-9]:1"),
    "lab": (
        "Hb [8-15],[0-9] g/dl",
        "leucocitos [4-18].[100-900]/µl",
        "Na [128-146] mEq/l",
        "INR 1,[0-9]",
        "PCR [1-200] mg/l",
    ),
}

ABBREVIATIONS = (
    (r"\bpaciente\b", "pac."), (r"\bcon\b", "c/"), (r"\bsin\b", "s/"), (r"\btratamiento\b", "tto."),
    (r"\bel ?\b|\bla ?\b|\blos ?\b", ""), (r"\baños\b", "a."), (r"\bantecedentes\b", "AP"),
)  # fmt: skip

PROFILE = LanguageProfile(
    code="es",
    months=MONTHS,
    date_formats=(
        numeric("dmy", "/"),
        numeric("dmy", "/", 2),
        spelled("{d} de {m} de {y}"),
        numeric("dmy", "-"),
        numeric("dmy", "/", pad=False),
    ),
    phone_patterns=("9Nd ddd ddd", "6dd ddd ddd", "+34 6dd dd dd dd", "9Nddddddd", "(+34) 9Nd dd dd dd"),
    zip_pattern=_zip,
    mrn=pattern("Nddddd", "Nddddddd"),
    idnum=pattern("Nddddddd", "dd/dddddd"),
    ssn=_dni,
    healthplan=pattern("dd/dddddddd/dd", "Nddddddddddd"),
    street=_street,
    relations=(("marido", "hijo", "hermano", "padre"), ("esposa", "hija", "hermana", "madre")),
    templates=TEMPLATES,
    distractors=DISTRACTORS,
    abbreviations=ABBREVIATIONS,
    email_domains=("gmail.com", "hotmail.es", "telefonica.net", "salud.es"),
)
