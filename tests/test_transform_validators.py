"""Checksum validators and generators (``clinideid.validators``), cross-checked against python-stdnum
where it covers the type and the library is installed."""

from __future__ import annotations

import importlib.util
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from clinideid import validators as v

HAS_STDNUM = importlib.util.find_spec("stdnum") is not None

GENERATORS = {
    "luhn": lambda r: v.generate_luhn(r, 16),
    "dni": v.generate_dni,
    "nie": v.generate_nie,
    "codice_fiscale": v.generate_codice_fiscale,
    "snils": v.generate_snils,
    "inn": v.generate_inn,
    "nir": v.generate_nir,
    "ssn": v.generate_ssn,
    "kvnr": v.generate_kvnr,
    "iban": lambda r: v.generate_iban(r, "ES", "21000418450200051332"),
}


def _rand(seed: int):
    return random.Random(seed).randrange


@pytest.mark.parametrize("kind", sorted(GENERATORS))
@given(seed=st.integers(0, 2**32))
@settings(max_examples=60, deadline=None)
def test_generated_identifiers_validate(kind, seed):
    value = GENERATORS[kind](_rand(seed))
    assert v.VALIDATORS[kind](value), value


@pytest.mark.parametrize(
    ("kind", "valid", "invalid"),
    [
        ("luhn", "4539 1488 0343 6467", "4539 1488 0343 6468"),
        ("dni", "12345678Z", "12345678A"),
        ("nie", "X1234567L", "X1234567A"),
        ("codice_fiscale", "RSSMRA85T10A562S", "RSSMRA85T10A562T"),
        ("snils", "112-233-445 95", "112-233-445 96"),
        ("inn", "7707083893", "7707083894"),
        ("inn", "500100732259", "500100732258"),
        ("nir", "2 69 05 49 588 157 80", "2 69 05 49 588 157 81"),
        ("ssn", "123-45-6789", "666-45-6789"),
        ("kvnr", "A123456780", "A123456781"),
        ("iban", "GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 33"),
    ],
)
def test_known_values(kind, valid, invalid):
    assert v.VALIDATORS[kind](valid)
    assert not v.VALIDATORS[kind](invalid)


@pytest.mark.parametrize("bad", ["000-12-3456", "900-12-3456", "123-00-4567", "123-45-0000", "12-345-678"])
def test_ssn_ranges(bad):
    assert not v.validate_ssn(bad)


def test_nir_corsica_and_snils_low_numbers():
    first13 = "185072A123456"  # department 2A (Corsica)
    assert v.validate_nir(first13 + v.nir_key(first13))
    assert not v.validate_snils("001-001-998 00")  # check digits are only defined above this number


def test_codice_fiscale_keeps_sex_in_the_day():
    female = v.generate_codice_fiscale(_rand(1), female=True)
    assert int(female[9:11]) > 40


@pytest.mark.skipif(not HAS_STDNUM, reason="python-stdnum not installed")
@given(seed=st.integers(0, 2**32))
@settings(max_examples=200, deadline=None)
def test_agrees_with_stdnum(seed):
    from stdnum import luhn
    from stdnum.es import dni, nie
    from stdnum.fr import nir
    from stdnum.it import codicefiscale
    from stdnum.ru import inn
    from stdnum.us import ssn

    r = _rand(seed)
    assert luhn.is_valid(v.generate_luhn(r, 16))
    assert dni.is_valid(v.generate_dni(r)) and nie.is_valid(v.generate_nie(r))
    assert codicefiscale.is_valid(v.generate_codice_fiscale(r, female=seed % 2 == 0))
    assert inn.is_valid(v.generate_inn(r, 10)) and inn.is_valid(v.generate_inn(r, 12))
    assert nir.is_valid(v.generate_nir(r)) and ssn.is_valid(v.generate_ssn(r))
    # and on arbitrary inputs, both sides give the same verdict
    number = str(r(10**12)).zfill(12)
    assert v.validate_luhn(number) == luhn.is_valid(number)
    assert v.validate_inn(number) == inn.is_valid(number)
    assert v.validate_inn(number[:10]) == inn.is_valid(number[:10])
    candidate = number[:8] + "TRWAGMYFPDXBNJZSQVHLCKE"[r(23)]
    assert v.validate_dni(candidate) == dni.is_valid(candidate)


@example("0¹")  # str.isdigit accepts superscript digits, int() does not
@example("٣٤٥٦")  # Arabic-Indic digits
@given(st.text(max_size=30))
def test_validators_never_raise(text):
    for check in v.VALIDATORS.values():
        assert check(text) in (True, False)


def test_rule_pack_names_resolve_to_these_validators():
    for name in (
        "es_dni",
        "es_nie",
        "it_codice_fiscale",
        "ru_snils",
        "ru_inn",
        "fr_nir",
        "us_ssn",
        "de_kvnr",
    ):
        assert getattr(v, f"validate_{name}") is v.VALIDATORS[name]
    assert v.validate_es_dni("12345678Z") and not v.validate_fr_nir("12345678Z")


@pytest.mark.parametrize(
    "name, good, bad",
    [
        ("gb_nhs", "943 476 5919", "943 476 5910"),
        ("gb_nino", "AB 12 34 56 C", "QQ 12 34 56 C"),
        ("au_medicare", "2123 45670 1", "2123 45671 1"),
        ("de_idnr", "36 574 261 809", "36 574 261 808"),
        ("at_vnr", "1237 010180", "1238 010180"),
        ("ch_ssn", "756.9217.0769.85", "756.9217.0769.84"),
        ("it_tessera_sanitaria", "80380000000000000009", "80380000000000000002"),
    ],
)
def test_national_identifier_checksums(name: str, good: str, bad: str):
    from clinideid.validators import VALIDATORS

    assert VALIDATORS[name](good) and not VALIDATORS[name](bad)
