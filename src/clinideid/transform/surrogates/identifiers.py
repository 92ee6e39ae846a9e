"""Identifier surrogates: same length, separators and character classes, and a valid checksum when the
original is a recognised identifier type (DNI/NIE, codice fiscale, KVNR, NIR, SNILS, INN, US SSN, IBAN,
Luhn numbers). Unrecognised identifiers keep their shape: letters stay letters, digits stay digits."""

from __future__ import annotations

import re
from collections.abc import Callable

from clinideid import validators as v
from clinideid.transform.keys import KeyedRandom
from clinideid.transform.surrogates.base import SurrogateGenerator, SurrogateRequest
from clinideid.transform.textcase import reshape

ID_LABELS = (
    "SSN",
    "MEDICALRECORD",
    "HEALTHPLAN",
    "ACCOUNT",
    "LICENSE",
    "VEHICLE",
    "DEVICE",
    "BIOID",
    "IDNUM",
)


def _pour(layout: str, compact: str) -> str:
    """``compact``'s characters written into the letter/digit positions of ``layout`` (separators kept)."""
    chars = iter(compact)
    out = []
    lower = any(c.islower() for c in layout) and not any(c.isupper() for c in layout)
    for c in layout:
        if c.isalnum():
            new = next(chars)
            out.append(new.lower() if lower else new)
        else:
            out.append(c)
    return "".join(out)


def _cf_female(compact: str) -> bool:
    day = "".join(str("LMNPQRSTUV".index(c)) if c in "LMNPQRSTUV" else c for c in compact[9:11])
    return int(day) > 40


def _ssn_layout(text: str) -> bool:
    return bool(re.fullmatch(r"\s*\d{3}[- ]\d{2}[- ]\d{4}\s*", text))


def identify(text: str, label: str = "IDNUM") -> str | None:
    """The checksum type ``text`` validates as, or ``None``; the order resolves ambiguous shapes."""
    compact = v.compact(text)
    if not compact.isalnum() or len(compact) != sum(c.isalnum() for c in text):
        return None
    checks: list[tuple[str, Callable[[str], bool]]] = [
        ("nie", v.validate_nie),
        ("dni", v.validate_dni),
        ("codice_fiscale", v.validate_codice_fiscale),
        ("kvnr", v.validate_kvnr),
        ("iban", v.validate_iban),
        ("nir", v.validate_nir),
        ("snils", v.validate_snils),
    ]
    for name, check in checks:
        if check(compact):
            return name
    if compact.isdigit() and len(compact) == 9 and (label == "SSN" or _ssn_layout(text)):
        return "ssn"
    if compact.isdigit() and len(compact) in (10, 12) and v.validate_inn(compact):
        return "inn"
    if compact.isdigit() and len(compact) >= 8 and v.validate_luhn(compact):
        return "luhn"
    return None


def generate_like(kind: str, compact: str, rng: KeyedRandom) -> str:
    """A new valid identifier of type ``kind`` with the same length (and kept non-identifying prefix)."""
    rand = rng.randbelow
    if kind == "nie":
        return v.generate_nie(rand, prefix=compact[0])
    if kind == "dni":
        return v.generate_dni(rand)
    if kind == "codice_fiscale":
        return v.generate_codice_fiscale(rand, female=_cf_female(compact))
    if kind == "kvnr":
        return v.generate_kvnr(rand)
    if kind == "iban":
        return v.generate_iban(rand, compact[:2], compact[4:])
    if kind == "nir":
        return v.generate_nir(rand, sex=compact[0])
    if kind == "snils":
        return v.generate_snils(rand)
    if kind == "ssn":
        return v.generate_ssn(rand)
    if kind == "inn":
        return v.generate_inn(rand, len(compact))
    if kind == "luhn":
        return v.generate_luhn(rand, len(compact), prefix=compact[0])
    raise ValueError(f"unknown identifier type {kind!r}")


def surrogate_identifier(text: str, label: str, rng: KeyedRandom) -> str:
    kind = identify(text, label)
    if (
        kind is None
        and label == "SSN"
        and sum(c.isdigit() for c in text) == 9
        and not any(c.isalpha() for c in text)
    ):
        kind = "ssn"  # an out-of-range SSN still gets a valid one
    if kind is None:
        return reshape(text, rng)
    return _pour(text, generate_like(kind, v.compact(text), rng))


class IdentifierGenerator(SurrogateGenerator):
    labels = ID_LABELS

    def generate(self, req: SurrogateRequest, attempt: int) -> str:
        return surrogate_identifier(req.value, req.label, req.rng("id", v.compact(req.value), attempt))
