"""Checksum validators and generators for national and account identifiers.

``validate_<type>(s) -> bool`` accepts the usual written forms (spaces, dashes, dots, slashes between
groups) and checks structure plus check digits. ``generate_<type>(rand, ...) -> str`` returns a new valid
value in compact form, drawing digits from ``rand(n) -> int in [0, n)`` (e.g. ``KeyedRandom.randbelow``) so
surrogates stay keyed and deterministic. The detection rules use the validators to reject false positives;
the surrogate generators use both.

Algorithms: Luhn (ISO/IEC 7812), Spanish DNI/NIE control letter (mod 23), Italian codice fiscale check
character, Russian SNILS (mod 101) and INN (weighted mod 11), French NIR key (97 - n mod 97, Corsica
2A/2B as 19/18), US SSN valid ranges, German KVNR (Krankenversichertennummer, letter as 01-26, weights
1-2, digit sums, mod 10), IBAN (ISO 13616, mod 97 == 1).
"""

from __future__ import annotations

import re
from collections.abc import Callable

Rand = Callable[[int], int]

_SEPARATORS = re.compile(r"[\s\-./]")


def compact(value: str) -> str:
    """``value`` without spaces, dashes, dots and slashes, upper-cased."""
    return _SEPARATORS.sub("", value).upper()


def _digits(rand: Rand, n: int, *, first_nonzero: bool = False) -> str:
    out = [str(rand(9) + 1) if first_nonzero else str(rand(10))]
    out += [str(rand(10)) for _ in range(n - 1)]
    return "".join(out[:n])


# --- Luhn -------------------------------------------------------------------------------------------------


def luhn_checksum(digits: str) -> int:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10


def luhn_check_digit(payload: str) -> str:
    """The digit that makes ``payload + digit`` Luhn-valid."""
    return str((10 - luhn_checksum(payload + "0")) % 10)


def _digits_only(value: str) -> bool:
    """ASCII digits only: ``str.isdigit`` also accepts superscripts and other scripts' digits."""
    return value.isascii() and value.isdigit()


def validate_luhn(value: str) -> bool:
    number = compact(value)
    return len(number) >= 2 and _digits_only(number) and luhn_checksum(number) == 0


def generate_luhn(rand: Rand, length: int, prefix: str = "") -> str:
    if length < 2 or len(prefix) >= length:
        raise ValueError("a Luhn number needs a length of at least 2 and longer than its prefix")
    payload = prefix + _digits(rand, length - 1 - len(prefix), first_nonzero=not prefix)
    return payload + luhn_check_digit(payload)


# --- Spain: DNI / NIE ---------------------------------------------------------------------------------------

_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def dni_letter(number: int) -> str:
    return _DNI_LETTERS[number % 23]


def validate_dni(value: str) -> bool:
    v = compact(value)
    return bool(re.fullmatch(r"\d{8}[A-Z]", v)) and dni_letter(int(v[:8])) == v[8]


def generate_dni(rand: Rand) -> str:
    digits = _digits(rand, 8)
    return digits + dni_letter(int(digits))


def validate_nie(value: str) -> bool:
    v = compact(value)
    if not re.fullmatch(r"[XYZ]\d{7}[A-Z]", v):
        return False
    return dni_letter(int(str("XYZ".index(v[0])) + v[1:8])) == v[8]


def generate_nie(rand: Rand, prefix: str | None = None) -> str:
    prefix = prefix if prefix in ("X", "Y", "Z") else "XYZ"[rand(3)]
    digits = _digits(rand, 7)
    return prefix + digits + dni_letter(int(str("XYZ".index(prefix)) + digits))


# --- Italy: codice fiscale ----------------------------------------------------------------------------------

_CF_ODD = dict(
    zip(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21,
         2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23],
        strict=True,
    )
)  # fmt: skip
_CF_EVEN = {**{str(d): d for d in range(10)}, **{chr(65 + i): i for i in range(26)}}
_CF_MONTHS = "ABCDEHLMPRST"
_CF_OMOCODE = "LMNPQRSTUV"  # letters that replace digits 0-9 in "omocodic" codes
_CF_RE = re.compile(r"[A-Z]{6}[\dLMNPQRSTUV]{2}[ABCDEHLMPRST][\dLMNPQRSTUV]{2}[A-Z][\dLMNPQRSTUV]{3}[A-Z]")


def codice_fiscale_check_char(first15: str) -> str:
    total = sum((_CF_ODD if i % 2 == 0 else _CF_EVEN)[c] for i, c in enumerate(first15.upper()))
    return chr(65 + total % 26)


def validate_codice_fiscale(value: str) -> bool:
    v = compact(value)
    if len(v) != 16 or not _CF_RE.fullmatch(v):
        return False
    day_text = "".join(str(_CF_OMOCODE.index(c)) if c in _CF_OMOCODE else c for c in v[9:11])
    day = int(day_text)
    if not (1 <= day <= 31 or 41 <= day <= 71):
        return False
    return codice_fiscale_check_char(v[:15]) == v[15]


def generate_codice_fiscale(rand: Rand, *, female: bool = False) -> str:
    letters = "".join(chr(65 + rand(26)) for _ in range(6))
    year = _digits(rand, 2)
    month = _CF_MONTHS[rand(12)]
    day = rand(28) + 1 + (40 if female else 0)
    place = chr(65 + rand(13)) + _digits(rand, 3)  # municipality codes run A001-M999
    first15 = f"{letters}{year}{month}{day:02d}{place}"
    return first15 + codice_fiscale_check_char(first15)


# --- Russia: SNILS / INN ------------------------------------------------------------------------------------


def snils_check_digits(first9: str) -> str:
    total = sum(int(d) * (9 - i) for i, d in enumerate(first9))
    if total > 101:
        total %= 101
    return "00" if total in (100, 101) else f"{total:02d}"


def validate_snils(value: str) -> bool:
    v = compact(value)
    if not re.fullmatch(r"\d{11}", v):
        return False
    if int(v[:9]) <= 1001998:  # check digits are defined only above 001-001-998
        return False
    return snils_check_digits(v[:9]) == v[9:]


def generate_snils(rand: Rand) -> str:
    while True:
        first9 = _digits(rand, 9)
        if int(first9) > 1001998:
            return first9 + snils_check_digits(first9)


_INN10 = (2, 4, 10, 3, 5, 9, 4, 6, 8)
_INN12_1 = (7, 2, 4, 10, 3, 5, 9, 4, 6, 8)
_INN12_2 = (3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8)


def _inn_digit(digits: str, weights: tuple[int, ...]) -> str:
    return str(sum(int(d) * w for d, w in zip(digits, weights, strict=True)) % 11 % 10)


def validate_inn(value: str) -> bool:
    """A Russian INN: 10 digits (organisation) or 12 digits (person)."""
    v = compact(value)
    if re.fullmatch(r"\d{10}", v):
        return _inn_digit(v[:9], _INN10) == v[9]
    if re.fullmatch(r"\d{12}", v):
        return _inn_digit(v[:10], _INN12_1) == v[10] and _inn_digit(v[:11], _INN12_2) == v[11]
    return False


def generate_inn(rand: Rand, length: int = 12) -> str:
    if length == 10:
        body = _digits(rand, 9, first_nonzero=True)
        return body + _inn_digit(body, _INN10)
    if length == 12:
        body = _digits(rand, 10, first_nonzero=True)
        body += _inn_digit(body, _INN12_1)
        return body + _inn_digit(body, _INN12_2)
    raise ValueError("an INN has 10 or 12 digits")


# --- France: NIR (numéro de sécurité sociale) --------------------------------------------------------------

_NIR_RE = re.compile(r"[1-478]\d{2}(0[1-9]|1[0-2]|[2-9]\d)(\d{2}|2[AB])\d{6}\d{2}")


def nir_key(first13: str) -> str:
    number = first13.upper().replace("2A", "19", 1).replace("2B", "18", 1)
    return f"{97 - int(number) % 97:02d}"


def validate_nir(value: str) -> bool:
    v = compact(value)
    return len(v) == 15 and bool(_NIR_RE.fullmatch(v)) and nir_key(v[:13]) == v[13:]


def generate_nir(rand: Rand, *, sex: str | None = None) -> str:
    sex_digit = sex if sex in ("1", "2") else str(rand(2) + 1)
    year = _digits(rand, 2)
    month = f"{rand(12) + 1:02d}"
    dept = rand(94) + 1  # 01-95 without 20 (Corsica is 2A/2B)
    dept = dept + 1 if dept >= 20 else dept
    commune = f"{rand(990) + 1:03d}"
    order = f"{rand(999) + 1:03d}"
    first13 = f"{sex_digit}{year}{month}{dept:02d}{commune}{order}"
    return first13 + nir_key(first13)


# --- United States: SSN ---------------------------------------------------------------------------------------


def validate_ssn(value: str) -> bool:
    """A US SSN in a valid range: area not 000, 666 or 9xx; group not 00; serial not 0000."""
    v = compact(value)
    if not re.fullmatch(r"\d{9}", v):
        return False
    area, group, serial = int(v[:3]), int(v[3:5]), int(v[5:])
    return area not in (0, 666) and area < 900 and group != 0 and serial != 0


def generate_ssn(rand: Rand) -> str:
    while True:
        area = rand(899) + 1
        if area != 666:
            break
    return f"{area:03d}{rand(99) + 1:02d}{rand(9999) + 1:04d}"


# --- Germany: KVNR (Krankenversichertennummer) ------------------------------------------------------------


def kvnr_check_digit(first9: str) -> str:
    """Check digit of a KVNR from its letter and the 8 digits after it."""
    digits = f"{ord(first9[0].upper()) - 64:02d}" + first9[1:]
    total = 0
    for i, d in enumerate(digits):
        product = int(d) * (1 if i % 2 == 0 else 2)
        total += product // 10 + product % 10
    return str(total % 10)


def validate_kvnr(value: str) -> bool:
    v = compact(value)
    return bool(re.fullmatch(r"[A-Z]\d{9}", v)) and kvnr_check_digit(v[:9]) == v[9]


def generate_kvnr(rand: Rand) -> str:
    first9 = chr(65 + rand(26)) + _digits(rand, 8)
    return first9 + kvnr_check_digit(first9)


# --- IBAN ------------------------------------------------------------------------------------------------------


def _iban_number(rearranged: str) -> int:
    return int("".join(str(int(c, 36)) for c in rearranged))


def iban_check_digits(country: str, bban: str) -> str:
    return f"{98 - _iban_number(bban.upper() + country.upper() + '00') % 97:02d}"


def validate_iban(value: str) -> bool:
    """ISO 13616 structure and mod-97 check (national check digits inside the BBAN are not checked)."""
    v = compact(value)
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", v):
        return False
    return _iban_number(v[4:] + v[:4]) % 97 == 1


def generate_iban(rand: Rand, country: str, bban_shape: str) -> str:
    """An IBAN for ``country`` whose BBAN has the character classes of ``bban_shape``."""
    bban = "".join(
        str(rand(10)) if c.isdigit() else chr(65 + rand(26)) if c.isalpha() else "" for c in bban_shape
    )
    return country.upper() + iban_check_digits(country, bban) + bban


#: name -> validator, for rules that declare ``validator: <name>``
VALIDATORS: dict[str, Callable[[str], bool]] = {
    "luhn": validate_luhn,
    "dni": validate_dni,
    "nie": validate_nie,
    "codice_fiscale": validate_codice_fiscale,
    "snils": validate_snils,
    "inn": validate_inn,
    "nir": validate_nir,
    "ssn": validate_ssn,
    "kvnr": validate_kvnr,
    "iban": validate_iban,
}

# Country-prefixed names, as rule packs write them (``validator: es_dni``).
validate_es_dni = validate_dni
validate_es_nie = validate_nie
validate_it_codice_fiscale = validate_codice_fiscale
validate_ru_snils = validate_snils
validate_ru_inn = validate_inn
validate_fr_nir = validate_nir
validate_us_ssn = validate_ssn
validate_de_kvnr = validate_kvnr
VALIDATORS.update(
    {
        "es_dni": validate_dni,
        "es_nie": validate_nie,
        "it_codice_fiscale": validate_codice_fiscale,
        "ru_snils": validate_snils,
        "ru_inn": validate_inn,
        "fr_nir": validate_nir,
        "us_ssn": validate_ssn,
        "de_kvnr": validate_kvnr,
    }
)


# -- identifiers checked by python-stdnum (the maintained implementation of each national algorithm) -----------
def _stdnum(module: str) -> Callable[[str], bool]:
    """A validator backed by ``stdnum.<module>.is_valid`` (imported on first use)."""

    def validate(value: str) -> bool:
        from importlib import import_module

        return bool(import_module(f"stdnum.{module}").is_valid(value))

    validate.__name__ = f"validate_{module.replace('.', '_')}"
    validate.__doc__ = f"python-stdnum's ``stdnum.{module}.is_valid``."
    return validate


def validate_au_medicare(value: str) -> bool:
    """An Australian Medicare card number: 10 digits (an 11th, the card position, may follow), first digit
    2–6, the 9th a weighted check digit of the first 8 (weights 1 3 7 9 1 3 7 9, mod 10)."""
    digits = compact(value)
    if not _digits_only(digits) or len(digits) not in (10, 11) or digits[0] not in "23456":
        return False
    check = sum(int(d) * w for d, w in zip(digits[:8], (1, 3, 7, 9, 1, 3, 7, 9), strict=True)) % 10
    return check == int(digits[8])


_NINO_BAD_PREFIXES = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}


def validate_gb_nino(value: str) -> bool:
    """A UK National Insurance number's structure (it has no check digit): two prefix letters (not D, F, I,
    Q, U, V; the second not O; not BG, GB, KN, NK, NT, TN, ZZ), six digits, a suffix A–D."""
    v = compact(value)
    if len(v) != 9 or not _digits_only(v[2:8]) or v[8] not in "ABCD":
        return False
    a, b = v[0], v[1]
    return (
        a.isalpha()
        and b.isalpha()
        and a not in "DFIQUV"
        and b not in "DFIQUVO"
        and v[:2] not in _NINO_BAD_PREFIXES
    )


def validate_it_tessera_sanitaria(value: str) -> bool:
    """The 20-digit number of an Italian health card (TEAM): country code 80380, then a Luhn check digit."""
    digits = compact(value)
    return len(digits) == 20 and digits.startswith("80380") and validate_luhn(digits)


VALIDATORS.update(
    {
        "gb_nhs": _stdnum("gb.nhs"),
        "gb_nino": validate_gb_nino,
        "au_medicare": validate_au_medicare,
        "au_tfn": _stdnum("au.tfn"),
        "ca_sin": _stdnum("ca.sin"),
        "ca_bc_phn": _stdnum("ca.bc_phn"),
        "de_idnr": _stdnum("de.idnr"),
        "at_vnr": _stdnum("at.vnr"),
        "ch_ssn": _stdnum("ch.ssn"),
        "it_tessera_sanitaria": validate_it_tessera_sanitaria,
        "ru_ogrn": _stdnum("ru.ogrn"),
    }
)
