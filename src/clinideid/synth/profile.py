"""What a language contributes to the generator: formats, name rules, distractors and templates."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

#: a document type's blocks, in order; each block is a list of alternative templates (one is picked)
Blocks = Sequence[Sequence[str]]


def digits(rng: random.Random, pattern: str) -> str:
    """``pattern`` with each ``d`` replaced by a digit and each ``N`` by a non-zero digit."""
    return "".join(
        str(rng.randrange(10)) if c == "d" else str(rng.randrange(1, 10)) if c == "N" else c for c in pattern
    )


@dataclass(frozen=True, eq=False)
class LanguageProfile:
    """One language's part of the generator (see ``clinideid.synth.lang``).

    Templates use ``{slot}`` for values (see ``values.SLOTS``), ``{g:male|female}`` for words that
    follow the patient's sex and ``{dg:male|female}`` for the first doctor's.
    """

    code: str
    months: Sequence[str]
    date_formats: Sequence[Callable[[dt.date, Sequence[str]], str]]
    phone_patterns: Sequence[str]
    zip_pattern: Callable[[random.Random], str]
    mrn: Callable[[random.Random], str]
    idnum: Callable[[random.Random], str]
    ssn: Callable[[random.Random, bool, dt.date], str]
    healthplan: Callable[[random.Random], str]
    street: Callable[[random.Random, Sequence[str], Sequence[str]], str]
    templates: Mapping[str, Blocks]
    distractors: Mapping[str, Sequence[str]]
    #: words naming a relative: ``(male, female)``
    relations: tuple[Sequence[str], Sequence[str]] = (("brother",), ("sister",))
    abbreviations: Sequence[tuple[str, str]] = ()
    email_domains: Sequence[str] = ("mail.com", "example.org")
    #: surname of a woman from the (masculine) list form, for languages that inflect it
    feminine_surname: Callable[[str], str] | None = None
    #: ``(male, female)`` word lists filters; ``None`` keeps the packaged lists as they are
    keep_name: Callable[[str, str], bool] | None = None
    keep_place: Callable[[str], bool] | None = None
    hospital: Callable[[random.Random, str], str] | None = None
    patronymic: bool = False
    surname_first: bool = False
    age_word: Callable[[int], str] = field(default=lambda n: "")
    transliterate: Callable[[str], str] = field(default=lambda s: s)
