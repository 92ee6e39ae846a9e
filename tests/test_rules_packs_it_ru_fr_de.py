"""The Italian, Russian, French and German rule packs on crafted clinical notes.

Each crafted note lists every PHI item it holds; the default pack of the note's language must find
exactly those (same offsets, same label) and nothing else. The parametrised cases check the written
forms each pack promises (dates, ages, identifiers, phones, addresses, names, hospitals); the negative
cases are sentences with eponyms and drug names that must yield no span at all. The French pack is also
scored on the held-out part of EDS-Pseudo when the shared corpora are present.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from clinideid.detect.rules import RuleDetector, available_packs
from clinideid.document import Document
from clinideid.validators import (
    validate_codice_fiscale,
    validate_inn,
    validate_kvnr,
    validate_nir,
    validate_snils,
)

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "rules_eds_pseudo.py"

# Identifiers used in the notes, with correct check characters (checked in test_identifiers_are_valid).
CF_RUSSO = "RSSGPP45L12F839E"
CF_BIANCHI = "BNCMRA80A41H501E"
SNILS_1 = "112-233-445 95"
SNILS_2 = "123-456-789 64"
INN_12 = "770708389324"
NIR_DUBOIS = "2 50 09 75 111 222 68"
KVNR_1 = "A123456780"
KVNR_2 = "M876543211"

Expected = list[tuple[str, str] | tuple[str, str, int]]


def _detector(lang: str) -> RuleDetector:
    return RuleDetector(language=lang)


def _found(lang: str, text: str) -> set[tuple[int, int, str]]:
    spans = _detector(lang).detect_one(Document("t", text, language=lang))
    return {(s.start, s.end, s.label) for s in spans}


def _expected(text: str, items: Expected) -> set[tuple[int, int, str]]:
    """Offsets of each ``(substring, label[, occurrence])`` in ``text`` (occurrence counts from 0)."""
    out = set()
    for item in items:
        sub, label = item[0], item[1]
        nth = item[2] if len(item) == 3 else 0
        start = -1
        for _ in range(nth + 1):
            start = text.index(sub, start + 1)
        out.add((start, start + len(sub), label))
    return out


def _check_note(lang: str, text: str, items: Expected) -> None:
    found = _found(lang, text)
    expected = _expected(text, items)
    missed = sorted(expected - found)
    extra = sorted(found - expected)
    assert not missed and not extra, (
        f"missed: {[(text[s:e], lab) for s, e, lab in missed]}; "
        f"unexpected: {[(text[s:e], lab) for s, e, lab in extra]}"
    )


def _check_form(lang: str, text: str, sub: str, label: str) -> None:
    found = _found(lang, text)
    start = text.index(sub)
    assert (start, start + len(sub), label) in found, (
        f"{sub!r} as {label} not found; got {[(text[s:e], lab) for s, e, lab in sorted(found)]}"
    )


def test_packs_are_packaged() -> None:
    assert {"it", "ru", "fr", "de"} <= set(available_packs())


def test_identifiers_are_valid() -> None:
    assert validate_codice_fiscale(CF_RUSSO) and validate_codice_fiscale(CF_BIANCHI)
    assert validate_snils(SNILS_1) and validate_snils(SNILS_2)
    assert validate_inn(INN_12)
    assert validate_nir(NIR_DUBOIS)
    assert validate_kvnr(KVNR_1) and validate_kvnr(KVNR_2)


# ---------------------------------------------------------------------------------------------------------
# Italian
# ---------------------------------------------------------------------------------------------------------

IT_DISCHARGE = f"""LETTERA DI DIMISSIONE
Paziente: Sig. Giuseppe Russo, nato il 12/07/1945 a Napoli.
Codice fiscale: {CF_RUSSO}
Tessera sanitaria n. 80380000123456789012
Cartella clinica n. 2023/004512
Ricoverato presso l'Ospedale San Raffaele di Milano dal 3 marzo 2023 al 15 marzo 2023.
Il paziente, di 77 anni, residente in Via Roma 45, 20121 Milano, è stato visitato dal Dott. Marco Bianchi.
Anamnesi: morbo di Parkinson, ipertensione arteriosa in terapia con ramipril.
Per informazioni contattare la figlia Anna Russo al numero 338 123 4567 o anna.russo@example.it.
"""
IT_DISCHARGE_PHI: Expected = [
    ("Giuseppe Russo", "PATIENT"),
    ("12/07/1945", "DATE"),
    ("Napoli", "CITY"),
    (CF_RUSSO, "SSN"),
    ("80380000123456789012", "HEALTHPLAN"),
    ("2023/004512", "MEDICALRECORD"),
    ("Ospedale San Raffaele di Milano", "HOSPITAL"),
    ("3 marzo 2023", "DATE"),
    ("15 marzo 2023", "DATE"),
    ("77", "AGE"),
    ("Via Roma 45", "STREET"),
    ("20121", "ZIP"),
    ("Milano", "CITY", 1),
    ("Marco Bianchi", "DOCTOR"),
    ("Anna Russo", "PATIENT"),
    ("338 123 4567", "PHONE"),
    ("anna.russo@example.it", "EMAIL"),
]

IT_OUTPATIENT = f"""Ambulatorio di Neurologia - Policlinico Gemelli
Cognome: BIANCHI
Nome: MARIA
Data di nascita: 01/01/1980
C.F.: {CF_BIANCHI}
Tel.: 06 3015 4321
Visita del 21.11.2023
La Sig.ra Bianchi, di anni 43, riferisce cefalea dal marzo 2019. Nel 2015 episodio sincopale.
Segno di Babinski assente. Si consiglia controllo a giugno 2024.
Referto a cura della Dott.ssa Elena Ferrari.
Medico curante: Dott. Paolo Esposito, Viale Monza 120, 20127 Milano, tel. 02 2847 1190.
"""
IT_OUTPATIENT_PHI: Expected = [
    ("Policlinico Gemelli", "HOSPITAL"),
    ("BIANCHI", "PATIENT"),
    ("MARIA", "PATIENT"),
    ("01/01/1980", "DATE"),
    (CF_BIANCHI, "SSN"),
    ("06 3015 4321", "PHONE"),
    ("21.11.2023", "DATE"),
    ("Bianchi", "PATIENT"),
    ("43", "AGE", 1),
    ("marzo 2019", "DATE"),
    ("2015", "DATE"),
    ("giugno 2024", "DATE"),
    ("Elena Ferrari", "DOCTOR"),
    ("Paolo Esposito", "DOCTOR"),
    ("Viale Monza 120", "STREET"),
    ("20127", "ZIP"),
    ("Milano", "CITY"),
    ("02 2847 1190", "PHONE"),
]

IT_EMERGENCY = """VERBALE DI PRONTO SOCCORSO - ASL Roma 1
Assistito: Lucia Romano, nata a Bari il 3 marzo 1950
Accesso: 02-02-2024 ore 14:35
Donna di 73 anni accompagnata dal marito Carlo Romano (cell. +39 347 555 0192).
Recapito: Piazza Garibaldi 8, 70122 Bari.
In anamnesi malattia di Crohn e morbo di Alzheimer in trattamento con donepezil.
Trasferita all'Ospedale Maggiore Policlinico per competenza.
Firma: Dott. Andrea Colombo
"""
IT_EMERGENCY_PHI: Expected = [
    ("ASL Roma 1", "ORGANIZATION"),
    ("Lucia Romano", "PATIENT"),
    ("Bari", "CITY"),
    ("3 marzo 1950", "DATE"),
    ("02-02-2024", "DATE"),
    ("73", "AGE"),
    ("Carlo Romano", "PATIENT"),
    ("+39 347 555 0192", "PHONE"),
    ("Piazza Garibaldi 8", "STREET"),
    ("70122", "ZIP"),
    ("Bari", "CITY", 1),
    ("Ospedale Maggiore Policlinico", "HOSPITAL"),
    ("Andrea Colombo", "DOCTOR"),
]


@pytest.mark.parametrize(
    ("text", "items"),
    [(IT_DISCHARGE, IT_DISCHARGE_PHI), (IT_OUTPATIENT, IT_OUTPATIENT_PHI), (IT_EMERGENCY, IT_EMERGENCY_PHI)],
    ids=["discharge", "outpatient", "emergency"],
)
def test_it_notes_find_every_phi_item(text: str, items: Expected) -> None:
    _check_note("it", text, items)


def test_it_note_name_date_id_phone_offsets() -> None:
    found = _found("it", IT_DISCHARGE)
    assert (37, 51, "PATIENT") in found  # Giuseppe Russo
    assert (61, 71, "DATE") in found  # 12/07/1945
    assert (98, 114, "SSN") in found  # codice fiscale
    start = IT_DISCHARGE.index("338 123 4567")
    assert (start, start + 12, "PHONE") in found


@pytest.mark.parametrize(
    ("text", "sub", "label"),
    [
        # dates
        ("Ricovero del 12/07/2023.", "12/07/2023", "DATE"),
        ("Controllo il 12-07-23.", "12-07-23", "DATE"),
        ("Esame del 12.07.2023.", "12.07.2023", "DATE"),
        ("Intervento il 3 marzo 2023.", "3 marzo 2023", "DATE"),
        ("Dimesso il 1° gennaio 2020.", "1° gennaio 2020", "DATE"),
        ("Visita del 15 mar. 2023.", "15 mar. 2023", "DATE"),
        ("Sintomi da marzo 2019.", "marzo 2019", "DATE"),
        ("Ultimo controllo 03/19.", "03/19", "DATE"),
        ("Diagnosi posta nel 2019.", "2019", "DATE"),
        ("Paziente nato il 12/07/1945.", "12/07/1945", "DATE"),
        ("Paziente nata il 3 marzo 1950.", "3 marzo 1950", "DATE"),
        ("Data di nascita: 04/01/1980", "04/01/1980", "DATE"),
        # ages
        ("Uomo di 60 anni.", "60", "AGE"),
        ("Paziente di 77 anni.", "77", "AGE"),
        ("Età: 81", "81", "AGE"),
        # identifiers
        (f"CF {CF_BIANCHI}", CF_BIANCHI, "SSN"),
        ("Tessera sanitaria: 80380000123456789012", "80380000123456789012", "HEALTHPLAN"),
        ("Cartella clinica n. 2023/004512", "2023/004512", "MEDICALRECORD"),
        ("N. nosologico: 23004512", "23004512", "MEDICALRECORD"),
        # phones
        ("Tel. +39 02 1234 5678", "+39 02 1234 5678", "PHONE"),
        ("Cellulare 338 123 4567", "338 123 4567", "PHONE"),
        ("Recapito 3381234567", "3381234567", "PHONE"),
        ("Fax 02 12345678", "02 12345678", "FAX"),
        # addresses
        ("Residente in Via Garibaldi 10, Torino.", "Via Garibaldi 10", "STREET"),
        ("Domicilio: Viale Monza 120.", "Viale Monza 120", "STREET"),
        ("Abita in Piazza del Popolo 3.", "Piazza del Popolo 3", "STREET"),
        ("Abita in Corso Vittorio Emanuele II 10.", "Corso Vittorio Emanuele II 10", "STREET"),
        ("Abita in Via G. Verdi n. 12.", "Via G. Verdi n. 12", "STREET"),
        ("Indirizzo: 20121 Milano", "20121", "ZIP"),
        ("Indirizzo: 20121 Milano", "Milano", "CITY"),
        # names
        ("Visto il Sig. Rossi in reparto.", "Rossi", "PATIENT"),
        ("Si presenta la Sig.ra Anna Bianchi.", "Anna Bianchi", "PATIENT"),
        ("Visitato dal Dott. Marco Bianchi.", "Marco Bianchi", "DOCTOR"),
        ("Referto della Dott.ssa Elena Ferrari.", "Elena Ferrari", "DOCTOR"),
        ("In carico al Prof. Verdi.", "Verdi", "DOCTOR"),
        ("Paziente: Mario Rossi", "Mario Rossi", "PATIENT"),
        ("Nome: Mario", "Mario", "PATIENT"),
        ("Cognome: Rossi", "Rossi", "PATIENT"),
        ("Presente la figlia Anna.", "Anna", "PATIENT"),
        ("Accompagnato dalla moglie Maria Rossi.", "Maria Rossi", "PATIENT"),
        # hospitals and organisations
        ("Trasferito all'Ospedale San Raffaele.", "Ospedale San Raffaele", "HOSPITAL"),
        ("Ricoverata al Policlinico Gemelli.", "Policlinico Gemelli", "HOSPITAL"),
        ("Inviato dalla ASL Roma 1.", "ASL Roma 1", "ORGANIZATION"),
    ],
)
def test_it_forms(text: str, sub: str, label: str) -> None:
    _check_form("it", text, sub, label)


@pytest.mark.parametrize(
    "text",
    [
        "Paziente affetto da morbo di Parkinson in terapia con levodopa e ramipril.",
        "Diagnosi di sindrome di Down e malattia di Crohn.",
        "Segno di Babinski negativo, manovra di Valsalva positiva.",
        "Terapia: Augmentin 1 g x 3, Tachipirina 1000 mg al bisogno.",
        "Anamnesi patologica remota: morbo di Alzheimer, sindrome di Sjögren.",
        "Ricoverato nel Reparto di Medicina Interna, controllo tra 6 mesi.",
    ],
)
def test_it_negative(text: str) -> None:
    assert _found("it", text) == set()


# ---------------------------------------------------------------------------------------------------------
# Russian
# ---------------------------------------------------------------------------------------------------------

RU_DISCHARGE = f"""ВЫПИСНОЙ ЭПИКРИЗ
ФИО: Иванов Сергей Петрович, 12.04.1956 г.р.
СНИЛС: {SNILS_1}
Полис ОМС: 7700 0000 1234 5678
Адрес: г. Москва, ул. Ленина, д. 15, кв. 42
Поступил 5 марта 2023 г. в ГКБ № 15 имени О.М. Филатова.
Пациент 66 лет жалуется на боли в груди. Осмотрен врачом Петровой А.В.
Болезнь Паркинсона в анамнезе. Выписан 14.03.2023.
Контактный телефон жены (Иванова Мария Ивановна): +7 (916) 123-45-67.
"""
RU_DISCHARGE_PHI: Expected = [
    ("Иванов Сергей Петрович", "PATIENT"),
    ("12.04.1956", "DATE"),
    (SNILS_1, "SSN"),
    ("7700 0000 1234 5678", "HEALTHPLAN"),
    ("Москва", "CITY"),
    ("ул. Ленина, д. 15, кв. 42", "STREET"),
    ("5 марта 2023 г.", "DATE"),
    ("ГКБ № 15 имени О.М. Филатова", "HOSPITAL"),
    ("66", "AGE"),
    ("Петровой А.В.", "DOCTOR"),
    ("14.03.2023", "DATE"),
    ("Иванова Мария Ивановна", "PATIENT"),
    ("+7 (916) 123-45-67", "PHONE"),
]

RU_CARDIOLOGY = f"""Городская клиническая больница № 1 им. Н.И. Пирогова
Отделение кардиологии
История болезни № 4587/23

Ф.И.О. пациента: Смирнова Анна Викторовна
Дата рождения: 03.02.1961
Паспорт: серия 45 06 № 123456
ИНН {INN_12}
Адрес: 119049, г. Москва, Ленинский проспект, д. 8, корп. 2, кв. 17
Тел.: 8 (903) 555-12-34

Поступила 12 января 2024 года. Больная 62 лет, в возрасте 39 лет перенесла инфаркт миокарда.
С 2015 г. наблюдается у кардиолога. Принимает Аспирин 100 мг и Бисопролол 5 мг.
Лечащий врач: Кузнецов Д.А.
Зав. отделением И.П. Соколов
"""
RU_CARDIOLOGY_PHI: Expected = [
    ("Городская клиническая больница № 1 им. Н.И. Пирогова", "HOSPITAL"),
    ("4587/23", "MEDICALRECORD"),
    ("Смирнова Анна Викторовна", "PATIENT"),
    ("03.02.1961", "DATE"),
    ("45 06 № 123456", "IDNUM"),
    (INN_12, "SSN"),  # national identity and tax numbers are SSN (annotation guidelines)
    ("119049", "ZIP"),
    ("Москва", "CITY"),
    ("Ленинский проспект, д. 8, корп. 2, кв. 17", "STREET"),
    ("8 (903) 555-12-34", "PHONE"),
    ("12 января 2024 года", "DATE"),
    ("62", "AGE"),
    ("39", "AGE"),
    ("2015 г.", "DATE"),
    ("Кузнецов Д.А.", "DOCTOR"),
    ("И.П. Соколов", "DOCTOR"),
]

RU_REFERRAL = f"""Направление на консультацию
Пациент: Петров Алексей Николаевич, 1975 г.р.
Полис ОМС № 5098765432109876, СНИЛС {SNILS_2}
Проживает: Московская обл., г. Подольск, ул. Садовая, д. 3
Диагноз: болезнь Бехтерева, синдром Шегрена.
Сопровождает жена Петрова Ольга Ивановна, моб. +7 916 234-56-78.
Направил врач-терапевт Морозова Е.С., 14.05.2024
"""
RU_REFERRAL_PHI: Expected = [
    ("Петров Алексей Николаевич", "PATIENT"),
    ("1975", "DATE"),
    ("5098765432109876", "HEALTHPLAN"),
    (SNILS_2, "SSN"),
    ("Московская обл.", "STATE"),
    ("Подольск", "CITY"),
    ("ул. Садовая, д. 3", "STREET"),
    ("Петрова Ольга Ивановна", "PATIENT"),
    ("+7 916 234-56-78", "PHONE"),
    ("Морозова Е.С.", "DOCTOR"),
    ("14.05.2024", "DATE"),
]


@pytest.mark.parametrize(
    ("text", "items"),
    [(RU_DISCHARGE, RU_DISCHARGE_PHI), (RU_CARDIOLOGY, RU_CARDIOLOGY_PHI), (RU_REFERRAL, RU_REFERRAL_PHI)],
    ids=["discharge", "cardiology", "referral"],
)
def test_ru_notes_find_every_phi_item(text: str, items: Expected) -> None:
    _check_note("ru", text, items)


def test_ru_note_name_date_id_phone_offsets() -> None:
    found = _found("ru", RU_DISCHARGE)
    assert (22, 44, "PATIENT") in found  # Иванов Сергей Петрович
    assert (46, 56, "DATE") in found  # 12.04.1956
    assert (69, 83, "SSN") in found  # СНИЛС
    start = RU_DISCHARGE.index("+7 (916)")
    assert (start, start + 18, "PHONE") in found


@pytest.mark.parametrize(
    ("text", "sub", "label"),
    [
        # dates
        ("Поступил 12.04.2023.", "12.04.2023", "DATE"),
        ("Осмотр 5 марта 2023 г.", "5 марта 2023 г.", "DATE"),
        ("Операция 5 марта 2023 года.", "5 марта 2023 года", "DATE"),
        ("Болеет с 1 мая.", "1 мая", "DATE"),
        ("Ухудшение: март 2019 г.", "март 2019 г.", "DATE"),
        ("Впервые в марте 2019 года.", "марте 2019 года", "DATE"),
        ("Перенёс операцию в 2010 г.", "2010 г.", "DATE"),
        ("Иванов И.И., 12.04.1956 г.р.", "12.04.1956", "DATE"),
        ("Дата рождения: 12.04.1956", "12.04.1956", "DATE"),
        ("Пациентка 1948 года рождения.", "1948", "DATE"),
        # ages
        ("Больной 45 лет.", "45", "AGE"),
        ("Инсульт в возрасте 45 лет.", "45", "AGE"),
        ("Мальчик 3 месяца.", "3", "AGE"),
        # identifiers
        (f"СНИЛС {SNILS_2}", SNILS_2, "SSN"),
        (f"ИНН: {INN_12}", INN_12, "SSN"),
        ("Паспорт серия 45 06 № 123456", "45 06 № 123456", "IDNUM"),
        ("Паспорт 4506 123456", "4506 123456", "SSN"),
        ("Полис ОМС: 7700 0000 1234 5678", "7700 0000 1234 5678", "HEALTHPLAN"),
        ("История болезни № 4587/23", "4587/23", "MEDICALRECORD"),
        ("Медицинская карта № 12345", "12345", "MEDICALRECORD"),
        # phones
        ("Тел. +7 (916) 123-45-67", "+7 (916) 123-45-67", "PHONE"),
        ("Телефон 8-916-123-45-67", "8-916-123-45-67", "PHONE"),
        ("Моб. 89161234567", "89161234567", "PHONE"),
        ("Контактный телефон: (495) 123-45-67", "(495) 123-45-67", "PHONE"),
        ("Факс 8 (495) 765-43-21", "8 (495) 765-43-21", "FAX"),
        # addresses
        ("Адрес: ул. Ленина, д. 15, кв. 42", "ул. Ленина, д. 15, кв. 42", "STREET"),
        ("Проживает: улица Пушкина, д. 3", "улица Пушкина, д. 3", "STREET"),
        ("Адрес: пр-т Мира, д. 5", "пр-т Мира, д. 5", "STREET"),
        ("Адрес: пер. Садовый, д. 4, кв. 2", "пер. Садовый, д. 4, кв. 2", "STREET"),
        ("Проживает в г. Москва", "Москва", "CITY"),
        ("Приехал из Твери.", "Твери", "CITY"),
        ("Индекс 119049, г. Москва", "119049", "ZIP"),
        # names
        ("Осмотр: Иванов И.И.", "Иванов И.И.", "PERSON"),
        ("Консультация: И.И. Иванов", "И.И. Иванов", "PERSON"),
        ("Дежурный Иванов И. И. на связи.", "Иванов И. И.", "PERSON"),
        ("Консультирован Ивановым И.И. повторно.", "Ивановым И.И.", "PERSON"),
        ("Здравствуйте, Сергей Петрович!", "Сергей Петрович", "PERSON"),
        ("Приём ведёт Вера Павловна.", "Вера Павловна", "PERSON"),
        ("Консультирован Смирновым Петром Ивановичем.", "Смирновым Петром Ивановичем", "PERSON"),
        ("Присутствовал г-н Сидоров.", "Сидоров", "PATIENT"),
        ("Обратилась г-жа Петрова.", "Петрова", "PATIENT"),
        ("Осмотрена врачом Петровой А.В.", "Петровой А.В.", "DOCTOR"),
        ("Консультация: доктор Смирнов.", "Смирнов", "DOCTOR"),
        ("Пациент Иванов доставлен бригадой.", "Иванов", "PATIENT"),
        ("Пациентка Петрова жалоб не предъявляет.", "Петрова", "PATIENT"),
        ("Ф.И.О.: Козлов Дмитрий Андреевич", "Козлов Дмитрий Андреевич", "PATIENT"),
        ("Со слов жены Ивановой Марии.", "Ивановой Марии", "PATIENT"),
        ("Сопровождает сын Алексей.", "Алексей", "PATIENT"),
        # hospitals
        ("Переведён в ГКБ № 15.", "ГКБ № 15", "HOSPITAL"),
        ("Наблюдается в поликлинике № 5.", "поликлинике № 5", "HOSPITAL"),
        ("Лечился в больнице им. Боткина.", "больнице им. Боткина", "HOSPITAL"),
    ],
)
def test_ru_forms(text: str, sub: str, label: str) -> None:
    _check_form("ru", text, sub, label)


@pytest.mark.parametrize(
    "text",
    [
        "Болезнь Паркинсона, синдром Дауна, симптом Щеткина-Блюмберга отрицательный.",
        "Назначено: Аспирин 100 мг, Варфарин 2,5 мг, Амоксиклав 875 мг.",
        "Жалобы на слабость. Анамнез: болезнь Альцгеймера, синдром Шегрена.",
        "Находился в больнице, затем наблюдался в поликлинике по месту жительства.",
        "Курит 20 лет по 10 сигарет в день, болеет около 5 лет.",
    ],
)
def test_ru_negative(text: str) -> None:
    assert _found("ru", text) == set()


# ---------------------------------------------------------------------------------------------------------
# French
# ---------------------------------------------------------------------------------------------------------

FR_STAY = f"""COMPTE RENDU D'HOSPITALISATION
Patiente : Mme Claire Dubois, née le 21/09/1950
IPP : 8004512345
Adresse : 12 rue des Lilas, 75011 Paris
Hospitalisée à l'Hôpital Saint-Antoine du 4 janvier 2024 au 10 janvier 2024.
Patiente de 73 ans, suivie par le Dr Laurent Martin pour une maladie de Parkinson.
N° de sécurité sociale : {NIR_DUBOIS}
Personne à prévenir : son fils Julien Dubois, tél. 06 12 34 56 78, julien.dubois@example.fr
"""
FR_STAY_PHI: Expected = [
    ("Claire Dubois", "PATIENT"),
    ("21/09/1950", "DATE"),
    ("8004512345", "MEDICALRECORD"),
    ("12 rue des Lilas", "STREET"),
    ("75011", "ZIP"),
    ("Paris", "CITY"),
    ("Hôpital Saint-Antoine", "HOSPITAL"),
    ("4 janvier 2024", "DATE"),
    ("10 janvier 2024", "DATE"),
    ("73 ans", "AGE"),
    ("Laurent Martin", "DOCTOR"),
    (NIR_DUBOIS, "SSN"),
    ("Julien Dubois", "PATIENT"),
    ("06 12 34 56 78", "PHONE"),
    ("julien.dubois@example.fr", "EMAIL"),
]

FR_LETTER = """Service de Neurologie
Lettre de sortie
M. Jean-Pierre LEFEBVRE, né le 1er mars 1948 à Lyon
NDA : 1023456789
Entré le 02/05/2023, sorti le 09/05/2023.
Motif : AVC ischémique. Antécédents : maladie de Crohn, syndrome de Gougerot-Sjögren.
Traitement de sortie : Kardegic 75 mg, Doliprane 1 g.
Médecin traitant : Dr Sophie Girard, 3 avenue Victor Hugo, 33000 Bordeaux, tél. 05 56 79 56 79.
Rédigé par Pr Antoine Morel.
"""
FR_LETTER_PHI: Expected = [
    ("Jean-Pierre LEFEBVRE", "PATIENT"),
    ("1er mars 1948", "DATE"),
    ("Lyon", "CITY"),
    ("1023456789", "ACCOUNT"),
    ("02/05/2023", "DATE"),
    ("09/05/2023", "DATE"),
    ("Sophie Girard", "DOCTOR"),
    ("3 avenue Victor Hugo", "STREET"),
    ("33000", "ZIP"),
    ("Bordeaux", "CITY"),
    ("05 56 79 56 79", "PHONE"),
    ("Antoine Morel", "DOCTOR"),
]


@pytest.mark.parametrize(
    ("text", "items"), [(FR_STAY, FR_STAY_PHI), (FR_LETTER, FR_LETTER_PHI)], ids=["stay", "letter"]
)
def test_fr_notes_find_every_phi_item(text: str, items: Expected) -> None:
    _check_note("fr", text, items)


def test_fr_note_name_date_id_phone_offsets() -> None:
    found = _found("fr", FR_STAY)
    assert (46, 59, "PATIENT") in found  # Claire Dubois
    assert (68, 78, "DATE") in found  # 21/09/1950
    assert (85, 95, "MEDICALRECORD") in found  # IPP
    start = FR_STAY.index("06 12 34 56 78")
    assert (start, start + 14, "PHONE") in found


@pytest.mark.parametrize(
    ("text", "sub", "label"),
    [
        # dates
        ("Consultation du 21/09/2023.", "21/09/2023", "DATE"),
        ("Revu le 3.4.24 en consultation.", "3.4.24", "DATE"),
        ("Sortie le 1er mars 2022.", "1er mars 2022", "DATE"),
        ("Admis le 4 janvier 2024.", "4 janvier 2024", "DATE"),
        ("Symptômes depuis mars 2019.", "mars 2019", "DATE"),
        ("Dernière coloscopie en 03/19.", "03/19", "DATE"),
        ("Chirurgie cardiaque en 2007.", "2007", "DATE"),
        ("Patiente née le 21/09/1950.", "21/09/1950", "DATE"),
        ("Patient né le 4 mars 1983.", "4 mars 1983", "DATE"),
        ("Né(e) le 02/03/1960", "02/03/1960", "DATE"),
        ("Date de naissance : 02/03/1960", "02/03/1960", "DATE"),
        # ages
        ("Patient de 72 ans.", "72 ans", "AGE"),
        ("Femme âgée de 72 ans.", "72 ans", "AGE"),
        # identifiers
        (f"NIR : {NIR_DUBOIS}", NIR_DUBOIS, "SSN"),
        ("N° de sécurité sociale : 185077512345608", "185077512345608", "SSN"),
        ("IPP : 8004512345", "8004512345", "MEDICALRECORD"),
        ("NDA : 1023456789", "1023456789", "ACCOUNT"),
        # phones
        ("Tél. 06 12 34 56 78", "06 12 34 56 78", "PHONE"),
        ("Joignable au +33 6 12 34 56 78.", "+33 6 12 34 56 78", "PHONE"),
        ("Secrétariat 01.42.16.40.10", "01.42.16.40.10", "PHONE"),
        ("Fax : 01 42 16 40 11", "01 42 16 40 11", "FAX"),
        # addresses
        ("Domicile : 12 rue des Lilas.", "12 rue des Lilas", "STREET"),
        ("Adresse : 5 boulevard Haussmann, Paris.", "5 boulevard Haussmann", "STREET"),
        ("Vit au 8 place de la Mairie.", "8 place de la Mairie", "STREET"),
        ("Habite 4 chemin des Vignes.", "4 chemin des Vignes", "STREET"),
        ("Adresse : 75011 Paris", "75011", "ZIP"),
        ("Adresse : 75011 Paris", "Paris", "CITY"),
        # names
        ("Vu M. Dupont ce jour.", "Dupont", "PATIENT"),
        ("Reçue Mme Claire Dubois.", "Claire Dubois", "PATIENT"),
        ("Mlle Rossignol est sortante.", "Rossignol", "PATIENT"),
        ("Suivi par le Dr Laurent Martin.", "Laurent Martin", "DOCTOR"),
        ("Avis du Pr Antoine Morel.", "Antoine Morel", "DOCTOR"),
        ("Vu par le Docteur BERNAUD.", "BERNAUD", "DOCTOR"),
        ("Patiente : Claire Dubois", "Claire Dubois", "PATIENT"),
        ("Patient(e) : Jean Martin", "Jean Martin", "PATIENT"),
        ("Vu ce jour JALONNET Christine pour bilan.", "JALONNET Christine", "PERSON"),
        ("Nom : DUPONT", "DUPONT", "PATIENT"),
        ("Prénom : Claire", "Claire", "PATIENT"),
        ("Internes : JALONNET Christine (Interne)", "JALONNET Christine", "DOCTOR"),
        ("Présente : son fils Julien.", "Julien", "PATIENT"),
        ("Accompagnée de son épouse Marie Dupont.", "Marie Dupont", "PATIENT"),
        # hospitals
        ("Transféré à l'Hôpital Saint-Antoine.", "Hôpital Saint-Antoine", "HOSPITAL"),
        ("Suivi au CHU Pellegrin.", "CHU Pellegrin", "HOSPITAL"),
        ("Opéré à la Clinique Pasteur.", "Clinique Pasteur", "HOSPITAL"),
        ("Hospitalisé au CHU de Dijon.", "Dijon", "CITY"),
        ("Données recueillies par l'AP-HP.", "AP-HP", "ORGANIZATION"),
    ],
)
def test_fr_forms(text: str, sub: str, label: str) -> None:
    _check_form("fr", text, sub, label)


@pytest.mark.parametrize(
    "text",
    [
        "Antécédents : maladie de Crohn, maladie de Parkinson, syndrome de Gougerot-Sjögren.",
        "Signe de Babinski négatif, manœuvre de Valsalva sans particularité.",
        "Traitement : Kardegic 75 mg, Doliprane 1 g, Augmentin 1 g x 3.",
        "Tétralogie de Fallot opérée dans l'enfance, score de Glasgow à 15.",
    ],
)
def test_fr_negative(text: str) -> None:
    assert _found("fr", text) == set()


# ---------------------------------------------------------------------------------------------------------
# German
# ---------------------------------------------------------------------------------------------------------

DE_DISCHARGE = f"""ENTLASSUNGSBERICHT
Patient: Herr Klaus Schneider, geb. 17.08.1949
Versichertennummer: {KVNR_1}
Anschrift: Hauptstraße 27, 10115 Berlin
Stationärer Aufenthalt in der Charité vom 12.02.2024 bis 20.02.2024.
Der 74-jährige Patient wurde von Dr. med. Andrea Wagner behandelt. Bekannter Morbus Parkinson.
Rückfragen bitte an seine Ehefrau Monika Schneider, Tel. 030 1234567, E-Mail monika.schneider@example.de.
"""
DE_DISCHARGE_PHI: Expected = [
    ("Klaus Schneider", "PATIENT"),
    ("17.08.1949", "DATE"),
    (KVNR_1, "HEALTHPLAN"),
    ("Hauptstraße 27", "STREET"),
    ("10115", "ZIP"),
    ("Berlin", "CITY"),
    ("Charité", "HOSPITAL"),
    ("12.02.2024", "DATE"),
    ("20.02.2024", "DATE"),
    ("74", "AGE"),
    ("Andrea Wagner", "DOCTOR"),
    ("Monika Schneider", "PATIENT"),
    ("030 1234567", "PHONE"),
    ("monika.schneider@example.de", "EMAIL"),
]

DE_LETTER = """Universitätsklinikum Heidelberg
Klinik für Kardiologie
Im Neuenheimer Feld 410, 69120 Heidelberg
Tel.: 06221 56-8611, Fax: 06221 56-5515

Sehr geehrte Frau Kollegin Dr. Maier,

wir berichten über Ihre Patientin Frau Erika Mustermann, geboren am 12. März 1950, wohnhaft
Lindenweg 4, 69117 Heidelberg, Pat.-Nr.: 20231145, die sich vom 3. Jan. 2024 bis 9. Jan. 2024 in
unserer stationären Behandlung befand. Die 73 Jahre alte Patientin stellte sich mit Dyspnoe vor.
Seit 2015 bekannter Diabetes mellitus Typ 2, Z.n. Crohn-Krankheit. Medikation: Metformin 1000 mg.

Mit freundlichen Grüßen
Prof. Dr. Hans Weber
Oberärztin Dr. Julia Becker
"""
DE_LETTER_PHI: Expected = [
    ("Universitätsklinikum Heidelberg", "HOSPITAL"),
    ("Im Neuenheimer Feld 410", "STREET"),
    ("69120", "ZIP"),
    ("Heidelberg", "CITY", 1),
    ("06221 56-8611", "PHONE"),
    ("06221 56-5515", "FAX"),
    ("Maier", "DOCTOR"),
    ("Erika Mustermann", "PATIENT"),
    ("12. März 1950", "DATE"),
    ("Lindenweg 4", "STREET"),
    ("69117", "ZIP"),
    ("Heidelberg", "CITY", 2),
    ("20231145", "MEDICALRECORD"),
    ("3. Jan. 2024", "DATE"),
    ("9. Jan. 2024", "DATE"),
    ("73", "AGE"),
    ("2015", "DATE"),
    ("Hans Weber", "DOCTOR"),
    ("Julia Becker", "DOCTOR"),
]

DE_REPORT = f"""Befundbericht vom 05.06.2023
Name, Vorname: Yilmaz, Ayse
Geb.-Datum: 23.11.1987
Fallnummer: 4711-0815
Krankenkasse: AOK, KV-Nr.: {KVNR_2}
Die 35-jährige Patientin wurde vom Hausarzt Dr. Thomas Huber (Marienplatz 1, 80331 München) überwiesen.
Kontakt: Sohn Mehmet Yilmaz, Handy 0171 2345678.
Diagnose: Morbus Crohn, M. Basedow.
"""
DE_REPORT_PHI: Expected = [
    ("05.06.2023", "DATE"),
    ("Yilmaz, Ayse", "PATIENT"),
    ("23.11.1987", "DATE"),
    ("4711-0815", "MEDICALRECORD"),
    ("AOK", "ORGANIZATION"),  # a health insurer is an organisation; only national bodies are not PHI
    (KVNR_2, "HEALTHPLAN"),
    ("35", "AGE"),
    ("Thomas Huber", "DOCTOR"),
    ("Marienplatz 1", "STREET"),
    ("80331", "ZIP"),
    ("München", "CITY"),
    ("Mehmet Yilmaz", "PATIENT"),
    ("0171 2345678", "PHONE"),
]


@pytest.mark.parametrize(
    ("text", "items"),
    [(DE_DISCHARGE, DE_DISCHARGE_PHI), (DE_LETTER, DE_LETTER_PHI), (DE_REPORT, DE_REPORT_PHI)],
    ids=["discharge", "letter", "report"],
)
def test_de_notes_find_every_phi_item(text: str, items: Expected) -> None:
    _check_note("de", text, items)


def test_de_note_name_date_id_phone_offsets() -> None:
    found = _found("de", DE_DISCHARGE)
    assert (33, 48, "PATIENT") in found  # Klaus Schneider
    assert (55, 65, "DATE") in found  # 17.08.1949
    assert (86, 96, "HEALTHPLAN") in found  # KVNR
    start = DE_DISCHARGE.index("030 1234567")
    assert (start, start + 11, "PHONE") in found


@pytest.mark.parametrize(
    ("text", "sub", "label"),
    [
        # dates
        ("Aufnahme am 12.03.2019.", "12.03.2019", "DATE"),
        ("Kontrolle am 1.3.24 geplant.", "1.3.24", "DATE"),
        ("Operation am 12. März 2019.", "12. März 2019", "DATE"),
        ("Operation am 12. Maerz 2019.", "12. Maerz 2019", "DATE"),
        ("Aufnahme am 3. Jan. 2024.", "3. Jan. 2024", "DATE"),
        ("Beschwerden seit März 2019.", "März 2019", "DATE"),
        ("Letzte Koloskopie 03/19.", "03/19", "DATE"),
        ("Wiedervorstellung am 12.03. empfohlen.", "12.03.", "DATE"),
        ("Herr Meier, geb. 17.08.1949", "17.08.1949", "DATE"),
        ("Frau Weber, geboren am 12. März 1950", "12. März 1950", "DATE"),
        ("Geburtsdatum: 01.02.1960", "01.02.1960", "DATE"),
        # ages
        ("Ein 54-jähriger Patient.", "54", "AGE"),
        ("Patientin ist 54-jährig.", "54", "AGE"),
        ("Der 74-jährige Patient klagt über Schmerzen.", "74", "AGE"),
        ("Die Patientin ist 54 Jahre alt.", "54", "AGE"),
        ("Diagnose im Alter von 54 Jahren.", "54", "AGE"),
        # identifiers
        (f"KVNR {KVNR_2}", KVNR_2, "HEALTHPLAN"),
        ("Versichertennummer: B987654321", "B987654321", "HEALTHPLAN"),
        ("Fallnummer: 2024-000123", "2024-000123", "MEDICALRECORD"),
        ("Pat.-Nr.: 4711", "4711", "MEDICALRECORD"),
        # phones
        ("Telefon 030 1234567", "030 1234567", "PHONE"),
        ("Erreichbar unter +49 30 1234567.", "+49 30 1234567", "PHONE"),
        ("Handy: 0171 2345678", "0171 2345678", "PHONE"),
        ("Tel. 030/1234567", "030/1234567", "PHONE"),
        ("Fax: 030 1234568", "030 1234568", "FAX"),
        # addresses
        ("Wohnhaft Hauptstraße 27.", "Hauptstraße 27", "STREET"),
        ("Anschrift: Berliner Str. 5a", "Berliner Str. 5a", "STREET"),
        ("Wohnt Karl-Marx-Allee 10.", "Karl-Marx-Allee 10", "STREET"),
        ("Wohnt Am Markt 3.", "Am Markt 3", "STREET"),
        ("Wohnt Goethestraße 12, 10115 Berlin.", "Goethestraße 12", "STREET"),
        ("Wohnt Goethestraße 12, 10115 Berlin.", "10115", "ZIP"),
        ("Wohnt Goethestraße 12, 10115 Berlin.", "Berlin", "CITY"),
        # names
        ("Herr Schneider wurde aufgenommen.", "Schneider", "PATIENT"),
        ("Frau Monika Weber stellte sich vor.", "Monika Weber", "PATIENT"),
        ("Behandelt von Dr. med. Andrea Wagner.", "Andrea Wagner", "DOCTOR"),
        ("Vorgestellt bei Prof. Dr. Hans Weber.", "Hans Weber", "DOCTOR"),
        ("Gez. Dr. Julia Becker, Assistenzärztin", "Julia Becker", "DOCTOR"),
        ("Patient: Klaus Schneider", "Klaus Schneider", "PATIENT"),
        ("Name: Müller", "Müller", "PATIENT"),
        ("Vorname: Anna", "Anna", "PATIENT"),
        ("Informiert wurde die Ehefrau Monika Schneider.", "Monika Schneider", "PATIENT"),
        ("Begleitet vom Sohn Peter.", "Peter", "PATIENT"),
        # hospitals
        ("Verlegung ins Universitätsklinikum Heidelberg.", "Universitätsklinikum Heidelberg", "HOSPITAL"),
        ("Vorbehandlung im Klinikum Nürnberg.", "Klinikum Nürnberg", "HOSPITAL"),
        ("Aufenthalt in der Charité.", "Charité", "HOSPITAL"),
        ("Aufnahme im Krankenhaus Nordwest.", "Krankenhaus Nordwest", "HOSPITAL"),
    ],
)
def test_de_forms(text: str, sub: str, label: str) -> None:
    _check_form("de", text, sub, label)


@pytest.mark.parametrize(
    "text",
    [
        "Bekannter Morbus Crohn und Morbus Parkinson, Z.n. Crohn-Krankheit.",
        "Medikation: Metformin 1000 mg, Ramipril 5 mg, Aspirin 100 mg.",
        "Babinski-Zeichen negativ, Lasègue-Zeichen positiv.",
        "Diagnose: M. Basedow, Hashimoto-Thyreoiditis.",
        "Verdacht auf Peter Pan Syndrom und Wolff-Parkinson-White-Syndrom.",
        "Die Ehefrau berichtet über Schwindel, Kontrolle beim Hausarzt in drei Wochen.",
    ],
)
def test_de_negative(text: str) -> None:
    assert _found("de", text) == set()


# ---------------------------------------------------------------------------------------------------------
# EDS-Pseudo (French), held-out part
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.skipif(not (CORPORA / "eds-pseudo" / "train.jsonl").is_file(), reason="shared corpora absent")
def test_fr_pack_on_eds_pseudo_held_out() -> None:
    spec = importlib.util.spec_from_file_location("rules_eds_pseudo", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.main(["--corpus", str(CORPORA / "eds-pseudo" / "train.jsonl"), "--repeat", "1"])
    assert result["token_binary"]["recall"] >= 0.90
    assert result["token_binary"]["precision"] >= 0.85
