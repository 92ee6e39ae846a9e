"""Russian templates and formats."""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Sequence

from clinideid import validators as v
from clinideid.synth.lang._common import numeric, pattern
from clinideid.synth.profile import LanguageProfile

#: month names in the genitive, as dates are written ("5 марта 2021 г.")
MONTHS = ("января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября",
          "ноября", "декабря")  # fmt: skip

_RUSSIAN = re.compile(r"^[А-ЯЁ][а-яё]+(?:-[А-ЯЁ][а-яё]+)?$")
_PLACE = re.compile(r"^[А-ЯЁ][а-яё]+(?:[- ][А-ЯЁа-яё][а-яё]+)*$")
_OBLIQUE = (
    "ска",
    "цка",
    "ом",
    "ем",
    "ём",
    "ой",
    "ей",
    "ою",
    "у",
    "ю",
    "е",
    "ы",
    "и",
    "ых",
    "их",
    "ым",
    "ими",
    "ыми",
)


def _keep_name(name: str, kind: str) -> bool:
    if not _RUSSIAN.match(name):
        return False
    if kind == "surname":
        return name.endswith(("ов", "ев", "ёв", "ин", "ын", "ский", "цкий"))
    if kind == "female":
        return name.endswith(("а", "я")) and not name.endswith(("ова", "ева", "ина"))
    return not name.endswith((*_OBLIQUE, "а", "я"))


def _keep_place(name: str) -> bool:
    return _PLACE.match(name) is not None and not name.endswith(_OBLIQUE)


def _feminine(surname: str) -> str:
    if surname.endswith(("ский", "цкий")):
        return surname[:-2] + "ая"
    return surname + "а"


def _street(rng: random.Random, streets: Sequence[str], surnames: Sequence[str]) -> str:
    names = [s for s in streets if _RUSSIAN.match(s) and s.endswith(("ая", "ова", "ева", "ина"))]
    name = rng.choice(names) if names else rng.choice(surnames)
    kind = rng.choice(["ул.", "ул.", "улица", "пр-т", "пер."])
    house = f"д. {rng.randrange(1, 120)}" + (f", кв. {rng.randrange(1, 300)}" if rng.random() < 0.7 else "")
    return f"{kind} {name}, {house}"


def _hospital(rng: random.Random, name: str) -> str:
    generic = len(name) < 6 or all(w.islower() for w in name.split()[1:])
    return f"{name} № {rng.randrange(1, 80)}" if generic and rng.random() < 0.6 else name


def _snils(rng: random.Random, female: bool, birth: dt.date) -> str:
    s = v.generate_snils(rng.randrange)
    return rng.choice([f"{s[:3]}-{s[3:6]}-{s[6:9]} {s[9:]}", s])


def _years(n: int) -> str:
    if n % 10 == 1 and n % 100 != 11:
        return "год"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return "года"
    return "лет"


_LATIN = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
                  ["a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "y", "k", "l", "m", "n", "o", "p", "r", "s",
                   "t", "u", "f", "kh", "ts", "ch", "sh", "sch", "", "y", "", "e", "yu", "ya"], strict=True))  # fmt: skip


def _translit(text: str) -> str:
    return "".join(_LATIN.get(c.lower(), c) for c in text)


TEMPLATES = {
    "discharge": [
        ["{hospital}\nТерапевтическое отделение\n", "{hospital}, кардиологическое отделение\n"],
        ["ВЫПИСНОЙ ЭПИКРИЗ\n", "Выписка из медицинской карты стационарного больного № {mrn}\n"],
        [
            "ФИО: {patient}\nДата рождения: {birthdate}\nНаходил{g:ся|ась} на лечении с {adm} по {dis}\n",
            "Пациент{g:|ка} {patient}, {age} {age_word}, поступил{g:|а} {adm}, выписан{g:|а} {dis}\n",
        ],
        ["Диагноз: {eponym}. Гипертоническая болезнь II ст.\n"],
        [
            "Анамнез: со слов пациент{g:а|ки}, одышка в течение {duration}. При поступлении {vitals}, {score}.\n",
            "Анамнез собран со слов родственника ({relation_word}) {relative}. {vitals}.\n",
        ],
        [
            "Лечение: {drug}, {drug}. Наблюдение: врач {doctor2_init}, {hospital2}; контрольный визит "
            "{date}, тел. {phone}.\n",
            "Рекомендации: {drug}; повторная консультация {date}.\n",
        ],
        ["Лечащий врач: {doctor}\nЗав. отделением: {doctor2_init}\n", "Врач {doctor_init}\n"],
    ],
    "progress": [
        ["Дневник наблюдения {date}\n", "Сестринская запись {date}, {time}\n"],
        [
            "Пациент{g:|ка} {patient_init} ({age} {age_word}), состояние стабильное, {vitals}. {score}.\n",
            "{patient_first} спал{g:|а} спокойно. {vitals}. В {time} введен {drug}.\n",
        ],
        [
            "Беседа с родственником ({relation_word}) {relative}, тел. {phone2}.\n",
            "Родственники ({relation_word} {relative_first}) информированы.\n",
        ],
        [
            "Осмотр с зав. отд. {doctor_last}: продолжить {drug}, {eponym}. М/с {nurse}\n",
            "Обход: врач {doctor2_last}, без изменений.\n",
        ],
    ],
    "report": [
        ["{hospital}\nОтделение лучевой диагностики\n", "Клинико-диагностическая лаборатория, {hospital}\n"],
        [
            "Ф.И.О.: {patient}\nДата рождения: {birthdate}\n№ исследования: {idnum}  № карты: {mrn}\n",
            "Пациент: {patient_init}, возраст: {age}, направление № {idnum}\n",
        ],
        [
            "Дата исследования: {date}. КТ головного мозга\nНаправил: врач {doctor}\n",
            "Взятие материала: {date} {time}. Отделение: {hospital2}\n",
        ],
        [
            "Заключение: очаговых изменений нет. Соотношение {ratio}. {eponym} не исключен.\n",
            "Результаты: {lab}; {lab}.\n",
        ],
        [
            "По сравнению с исследованием {year} г. без динамики.\nВрач-рентгенолог {doctor2}, {dis}\n",
            "Проверено: {doctor2_init}, {dis}\n",
        ],
    ],
    "referral": [
        [
            "{hospital}\n{street}, {city}, {zip}\nТел. {phone}, факс {fax}\n",
            "Направление\nОт: врач {doctor}, {hospital}\nВ: {hospital2}\n",
        ],
        ["Дата: {date}\n"],
        ["Уважаем{dg:ый|ая} коллега!\n", "Зав. отделением {doctor2_init}\n"],
        [
            "Направляется пациент{g:|ка} {patient}, {birthdate} г.р., {profession}, проживающ{g:ий|ая} по адресу: "
            "{street}, {city}, {state}, с диагнозом {eponym}.\n",
            "Направляется {patient}, {age} {age_word}, одышка в течение {duration}; {vitals}.\n",
        ],
        [
            "Полис ОМС: {hplan}. СНИЛС: {ssn}. Страховая компания: {org}. Контакты: {phone2}, {email}.\n",
            "Полис ОМС № {hplan}.\n",
        ],
        ["Врач {doctor_init}\n{doctor_email}\n"],
    ],
    "form": [
        ["МЕДИЦИНСКАЯ КАРТА ПАЦИЕНТА № {mrn}\n", "Титульный лист — {hospital}\n"],
        [
            "Фамилия: {patient_last}\nИмя: {patient_first}\nДата рождения: {birthdate}  Возраст: {age}\n"
            "Место рождения: {birthcity}  Гражданство: {country}\n"
        ],
        ["Адрес: {street}, {city}, {zip}\nРегион: {state}\n"],
        [
            "Телефон: {phone}  E-mail: {email}\nСНИЛС: {ssn}\nПолис ОМС: {hplan}\nНомер госпитализации: {idnum}\n"
        ],
        [
            "Место работы: {org}, должность: {profession}\nКонтактное лицо: {relative} ({relation_word}), {phone2}\n"
            "Лечащий врач: {doctor}\n"
        ],
    ],
    "ed": [
        ["{hospital}, приемное отделение\n{adm}, {time}\n", "Осмотр в приемном покое {adm}\n"],
        [
            "{patient}, {age} {age_word}, карта № {mrn}. Доставлен{g:|а} СМП из г. {city}, {street}.\n",
            "Пациент{g:|ка} {patient_init}, {age} {age_word}, потеря сознания на работе ({org}).\n",
        ],
        [
            "Объективно: {vitals}, {score}. В анамнезе {eponym}. Принимает {drug}.\n",
            "Осмотр в {time}: возраст {age} {age_word}, {vitals}. В анамнезе {eponym}, принимает {drug}. Место жительства: {city}.\n",
        ],
        [
            "Неврологически: {score}, сила {strength}. Консультант: врач {doctor2_last}. Перевод: "
            "{hospital2}.\n",
            "Сообщено родственнику ({relation_word}) {relative_first}. Дежурный врач {doctor_last}.\n",
        ],
        ["Врач приемного отделения {doctor_init}\n"],
    ],
}

DISTRACTORS = {
    "drug": (
        "метопролол 50 мг",
        "эналаприл 10 мг",
        "омепразол 20 мг",
        "аспирин 100 мг",
        "фуросемид 40 мг",
        "эноксапарин 40 мг",
    ),
    "eponym": (
        "болезнь Паркинсона",
        "болезнь Крона",
        "болезнь Альцгеймера",
        "тиреоидит Хашимото",
        "пищевод Барретта",
        "катетер Фолея",
        "синдром Кушинга",
        "лимфома Ходжкина",
    ),
    "vitals": (
        "АД [100-170]/[55-99] мм рт. ст., ЧСС [50-120] в мин",
        "ЧСС [50-120] в мин",
        "SpO2 [88-100]%",
        "t 3[6-8],[0-9] °C",
        "АД [100-170]/[55-99], пульс [50-120]",
    ),
    "score": ("ШКГ [8-15] баллов", "GCS [8-15]", "NIHSS [0-12]", "ФК II по NYHA", "класс A по Чайлд-Пью"),
    "strength": ("5/5", "4/5", "3/5"),
    "time": ("[10-23]:[10-59]", "0[6-9]:[10-59]"),
    "duration": ("[5-9] дней", "[2-4] недель", "[5-20] часов", "[5-9] месяцев"),
    "ratio": ("1:[2-9]", "[2-9]:1"),
    "lab": (
        "Hb [80-150] г/л",
        "лейкоциты [4-18],[0-9]×10^9/л",
        "Na [128-146] ммоль/л",
        "МНО 1,[0-9]",
        "СРБ [1-200] мг/л",
    ),
}

ABBREVIATIONS = (
    (r"\bпациент(ка)?\b", "пац."), (r"\bсостояние\b", "сост."), (r"\bотделени[ея]\b", "отд."),
    (r"\bлет\b", "л."), (r"\bрекомендовано\b", "рек."), (r"\bв течение\b", "в теч."),
)  # fmt: skip

PROFILE = LanguageProfile(
    code="ru",
    months=MONTHS,
    date_formats=(
        numeric("dmy", "."),
        numeric("dmy", ".", 2),
        lambda d, m: f"{d.day} {m[d.month - 1]} {d.year} г.",
        lambda d, m: f"{d.day:02d}.{d.month:02d}.{d.year} г.",
        numeric("ymd", "-"),
    ),
    phone_patterns=(
        "+7 (9dd) ddd-dd-dd",
        "8 (Ndd) ddd-dd-dd",
        "8-9dd-ddd-dd-dd",
        "+7 9dd ddd dd dd",
        "ddd-dd-dd",
    ),
    zip_pattern=pattern("Nddddd"),
    mrn=pattern("dddd/dd", "Nddddd", "dddddd-dd"),
    idnum=pattern("Nddddddd", "dddd-dddd"),
    ssn=_snils,
    healthplan=pattern("dddddddddddddddd", "dddd dddd dddd dddd"),
    street=_street,
    relations=(("муж", "сын", "брат", "отец"), ("жена", "дочь", "сестра", "мать")),
    templates=TEMPLATES,
    distractors=DISTRACTORS,
    abbreviations=ABBREVIATIONS,
    email_domains=("mail.ru", "yandex.ru", "gmail.com", "bk.ru"),
    feminine_surname=_feminine,
    keep_name=_keep_name,
    keep_place=_keep_place,
    hospital=_hospital,
    patronymic=True,
    age_word=_years,
    transliterate=_translit,
)
