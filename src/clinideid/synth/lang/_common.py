"""Helpers shared by the language profiles: date writers and number shapes."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Sequence

from clinideid.synth.profile import digits

DateWriter = Callable[[dt.date, Sequence[str]], str]


def numeric(order: str, sep: str, year_digits: int = 4, pad: bool = True) -> DateWriter:
    """A numeric date writer: ``order`` is ``"dmy"``, ``"mdy"`` or ``"ymd"``."""

    def write(day: dt.date, months: Sequence[str]) -> str:
        parts = {
            "d": f"{day.day:02d}" if pad else str(day.day),
            "m": f"{day.month:02d}" if pad else str(day.month),
            "y": str(day.year) if year_digits == 4 else f"{day.year % 100:02d}",
        }
        return sep.join(parts[c] for c in order)

    return write


def spelled(pattern: str) -> DateWriter:
    """A date with the month spelled: ``pattern`` uses ``{d}``, ``{m}`` (month name), ``{m3}``, ``{y}``."""

    def write(day: dt.date, months: Sequence[str]) -> str:
        name = months[day.month - 1]
        return pattern.format(d=day.day, m=name, m3=name[:3], y=day.year)

    return write


def pattern(*patterns: str) -> Callable[[random.Random], str]:
    """A generator of numbers shaped like one of ``patterns`` (``d`` digit, ``N`` non-zero digit)."""
    return lambda rng: digits(rng, rng.choice(patterns))


#: distractors every language shares (written the same way everywhere)
SHARED_DRUGS = (
    "metoprolol 47.5 mg", "ramipril 5 mg", "pantoprazole 40 mg", "atorvastatin 20 mg", "apixaban 5 mg",
    "metformin 1000 mg", "furosemide 40 mg", "bisoprolol 2.5 mg", "amlodipine 5 mg", "enoxaparin 40 mg",
)  # fmt: skip
