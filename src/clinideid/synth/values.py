"""The PHI of one generated document: a patient, a relative, clinicians, places, dates, contacts, ids.

Values are drawn once per document so that the patient's name, dates and numbers repeat consistently
(full name, surname only, initial + surname); every draw comes from the document's own ``random.Random``.
Names, places, hospitals, organisations and professions come from the packaged word lists
(``clinideid.resources``); numbers follow each country's formats, national ids carry valid check digits
(``clinideid.validators``).
"""

from __future__ import annotations

import datetime as dt
import random
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from clinideid.resources import load_list
from clinideid.synth.profile import LanguageProfile, digits

_NAME = re.compile(r"^[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)?$")
_PLACE = re.compile(r"^[^\W\d_][\w'’ .-]{1,28}[^\W_]$")


@dataclass(frozen=True)
class Pools:
    """A language's filtered word lists."""

    male: tuple[str, ...]
    female: tuple[str, ...]
    surnames: tuple[str, ...]
    patronymics_m: tuple[str, ...]
    patronymics_f: tuple[str, ...]
    cities: tuple[str, ...]
    streets: tuple[str, ...]
    hospitals: tuple[str, ...]
    organizations: tuple[str, ...]
    professions: tuple[str, ...]
    states: tuple[str, ...]
    countries: tuple[str, ...]


def _clean(items: Sequence[str], keep: Callable[[str], bool]) -> tuple[str, ...]:
    return tuple(x for x in items if keep(x))


@cache
def pools(profile: LanguageProfile) -> Pools:
    lang = profile.code

    def name_ok(kind: str) -> Callable[[str], bool]:
        def ok(x: str) -> bool:
            if not (_NAME.match(x) and 2 < len(x) < 15 and x[0].isupper() and not x[1:].isupper()):
                return False
            return profile.keep_name(x, kind) if profile.keep_name else True

        return ok

    def place_ok(x: str) -> bool:
        if not _PLACE.match(x) or not x[0].isupper():
            return False
        return profile.keep_place(x) if profile.keep_place else True

    patronymics = load_list(lang, "patronymics") if profile.patronymic else []
    plain = lambda x: 2 < len(x) < 60  # noqa: E731
    states = _clean(load_list(lang, "states"), place_ok)
    regions = set(states)  # some city lists also hold regions: a CITY must not be one
    return Pools(
        male=_clean(load_list(lang, "first_names_male"), name_ok("male")),
        female=_clean(load_list(lang, "first_names_female"), name_ok("female")),
        surnames=_clean(load_list(lang, "surnames"), name_ok("surname")),
        patronymics_m=_clean(patronymics, lambda x: x.endswith("ич") and _NAME.match(x) is not None),
        patronymics_f=_clean(patronymics, lambda x: x.endswith("на") and _NAME.match(x) is not None),
        cities=_clean(load_list(lang, "cities"), lambda x: place_ok(x) and x not in regions),
        streets=_clean(load_list(lang, "streets"), lambda x: _PLACE.match(x) is not None),
        hospitals=_clean(load_list(lang, "hospitals"), plain),
        organizations=_clean(load_list(lang, "organizations"), plain),
        professions=_clean(load_list(lang, "professions"), lambda x: plain(x) and len(x) < 40),
        states=states,
        countries=_clean(load_list(lang, "countries"), place_ok),
    )


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    female: bool
    patronymic: str = ""

    def full(self, surname_first: bool = False) -> str:
        if self.patronymic:
            return f"{self.last} {self.first} {self.patronymic}"
        return f"{self.last} {self.first}" if surname_first else f"{self.first} {self.last}"

    def initial(self) -> str:
        if self.patronymic:
            return f"{self.last} {self.first[0]}.{self.patronymic[0]}."
        return f"{self.first[0]}. {self.last}"


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


class Case:
    """The values of one document; ``slot(name)`` gives ``(text, label)`` (label ``None``: not PHI)."""

    def __init__(self, profile: LanguageProfile, rng: random.Random) -> None:
        self.p = profile
        self.rng = rng
        self.pools = pools(profile)
        self.patient = self._person(rng.random() < 0.5)
        rel_female = rng.random() < 0.5
        same_name = rng.random() < 0.6 and (
            profile.feminine_surname is None or rel_female == self.patient.female
        )
        self.relative = self._person(rel_female, last=self.patient.last if same_name else None)
        self.doctors = [self._person(rng.random() < 0.5) for _ in range(3)]
        today = dt.date(2015, 1, 1) + dt.timedelta(days=rng.randrange(365 * 11))
        roll = rng.random()  # mostly adults; some over 89 (HIPAA aggregates them) and a few children
        self.age = (
            rng.randrange(25, 90)
            if roll < 0.86
            else rng.randrange(90, 104)
            if roll < 0.96
            else rng.randrange(1, 18)
        )
        self.birth = today - dt.timedelta(days=365 * self.age + rng.randrange(365))
        self.adm = today
        self.dis = today + dt.timedelta(days=rng.randrange(2, 21))
        self.date_format = rng.randrange(len(profile.date_formats))
        self._cache: dict[str, str] = {}

    # -- people --------------------------------------------------------------------------------------
    def _person(self, female: bool, last: str | None = None) -> Person:
        pl = self.pools
        first = self.rng.choice(pl.female if female else pl.male)
        surname = last or self.rng.choice(pl.surnames)
        if female and self.p.feminine_surname and last is None:
            surname = self.p.feminine_surname(surname)
        elif self.p.code == "es" and last is None:
            surname = f"{surname} {self.rng.choice(pl.surnames)}"
        patronymic = ""
        if self.p.patronymic:
            patronymic = self.rng.choice(pl.patronymics_f if female else pl.patronymics_m)
        return Person(first, surname, female, patronymic)

    # -- formats -------------------------------------------------------------------------------------
    def fmt_date(self, day: dt.date) -> str:
        index = self.date_format if self.rng.random() < 0.8 else self.rng.randrange(len(self.p.date_formats))
        return self.p.date_formats[index](day, self.p.months)

    def phone(self) -> str:
        return digits(self.rng, self.rng.choice(self.p.phone_patterns))

    def email(self, person: Person) -> str:
        first, last = _ascii(self.p.transliterate(person.first)), _ascii(self.p.transliterate(person.last))
        last = last.replace(" ", "")
        local = self.rng.choice(
            [f"{first}.{last}", f"{first[0]}{last}", f"{last}{self.rng.randrange(10, 99)}"]
        )
        return f"{local}@{self.rng.choice(self.p.email_domains)}"

    def hospital(self) -> str:
        name = self.rng.choice(self.pools.hospitals)
        return self.p.hospital(self.rng, name) if self.p.hospital else name

    # -- slots ---------------------------------------------------------------------------------------
    def slot(self, name: str) -> tuple[str, str | None]:
        """The text and label of slot ``name``; values named once per document stay the same."""
        fixed = _FIXED.get(name)
        if fixed is not None:
            if name not in self._cache:
                self._cache[name] = fixed(self)
            return self._cache[name], _LABELS[name]
        fresh = _FRESH.get(name)
        if fresh is None:
            raise KeyError(f"unknown template slot {name!r}")
        return fresh(self), _LABELS[name]


def _doc(i: int) -> Callable[[Case], Person]:
    return lambda c: c.doctors[i]


_FIXED: dict[str, Callable[[Case], str]] = {
    "patient": lambda c: c.patient.full(),
    "patient_lf": lambda c: (
        c.patient.full(surname_first=True) if not c.patient.patronymic else c.patient.full()
    ),
    "patient_lf_comma": lambda c: f"{c.patient.last}, {c.patient.first}",
    "patient_last": lambda c: c.patient.last,
    "patient_first": lambda c: c.patient.first,
    "patient_init": lambda c: c.patient.initial(),
    "relative": lambda c: c.relative.full(),
    "relative_first": lambda c: c.relative.first,
    "doctor": lambda c: c.doctors[0].full(),
    "doctor_last": lambda c: c.doctors[0].last,
    "doctor_init": lambda c: c.doctors[0].initial(),
    "doctor2": lambda c: c.doctors[1].full(),
    "doctor2_last": lambda c: c.doctors[1].last,
    "doctor2_init": lambda c: c.doctors[1].initial(),
    "nurse": lambda c: c.doctors[2].first if c.rng.random() < 0.5 else c.doctors[2].full(),
    "hospital": lambda c: c.hospital(),
    "hospital2": lambda c: c.hospital(),
    "org": lambda c: c.rng.choice(c.pools.organizations),
    "city": lambda c: c.rng.choice(c.pools.cities),
    "birthcity": lambda c: c.rng.choice(c.pools.cities),
    "street": lambda c: c.p.street(c.rng, c.pools.streets, c.pools.surnames),
    "zip": lambda c: c.p.zip_pattern(c.rng),
    "state": lambda c: c.rng.choice(c.pools.states),
    "country": lambda c: c.rng.choice(c.pools.countries),
    "profession": lambda c: c.rng.choice(c.pools.professions),
    "birthdate": lambda c: c.fmt_date(c.birth),
    "adm": lambda c: c.fmt_date(c.adm),
    "dis": lambda c: c.fmt_date(c.dis),
    "year": lambda c: str(c.adm.year - c.rng.randrange(1, 15)),
    "age": lambda c: str(c.age),
    "age_word": lambda c: c.p.age_word(c.age),
    "relation_word": lambda c: c.rng.choice(c.p.relations[c.relative.female]),
    "phone": lambda c: c.phone(),
    "fax": lambda c: c.phone(),
    "email": lambda c: c.email(c.patient),
    "doctor_email": lambda c: c.email(c.doctors[0]),
    "mrn": lambda c: c.p.mrn(c.rng),
    "idnum": lambda c: c.p.idnum(c.rng),
    "ssn": lambda c: c.p.ssn(c.rng, c.patient.female, c.birth),
    "hplan": lambda c: c.p.healthplan(c.rng),
}
_FRESH: dict[str, Callable[[Case], str]] = {
    "date": lambda c: c.fmt_date(c.adm + dt.timedelta(days=c.rng.randrange(-400, 30))),
    "age_rel": lambda c: str(c.rng.randrange(35, 95)),
    "phone2": lambda c: c.phone(),
}
_LABELS: dict[str, str | None] = {
    **dict.fromkeys(
        ["patient", "patient_lf", "patient_lf_comma", "patient_last", "patient_first", "patient_init",
         "relative", "relative_first"], "PATIENT"),
    **dict.fromkeys(
        ["doctor", "doctor_last", "doctor_init", "doctor2", "doctor2_last", "doctor2_init", "nurse"], "DOCTOR"),
    "hospital": "HOSPITAL", "hospital2": "HOSPITAL", "org": "ORGANIZATION", "city": "CITY",
    "birthcity": "CITY", "street": "STREET", "zip": "ZIP", "state": "STATE", "country": "COUNTRY",
    "profession": "PROFESSION", "birthdate": "DATE", "adm": "DATE", "dis": "DATE", "year": "DATE",
    "date": "DATE", "age": "AGE", "age_rel": "AGE", "age_word": None, "relation_word": None, "phone": "PHONE", "phone2": "PHONE",
    "fax": "FAX", "email": "EMAIL", "doctor_email": "EMAIL", "mrn": "MEDICALRECORD", "idnum": "IDNUM",
    "ssn": "SSN", "hplan": "HEALTHPLAN",
}  # fmt: skip

SLOTS: tuple[str, ...] = tuple(_LABELS)
