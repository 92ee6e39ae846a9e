"""Compile pack regexes with Python's ``re`` when possible, else with the ``regex`` module.

Packs are written in ``regex`` syntax (so ``\\p{Lu}`` and friends work), but ``re`` runs the kind of
patterns rule packs use (lookbehind guards, alternations, character classes) two to three times faster.
So each pattern is first translated: the common Unicode property escapes (``\\p{L}``, ``\\p{Lu}``,
``\\p{Ll}``, ``\\p{Lt}``, ``\\p{Lm}``, ``\\p{Lo}``, ``\\p{M}``, ``\\p{Mn}``, ``\\p{N}``, ``\\p{Nd}`` and
``\\P{...}`` outside brackets) become explicit character ranges computed from ``unicodedata``. If the
result compiles with ``re``, that is used; a pattern using anything ``re`` lacks (variable-width
lookbehind, ``\\X``, scripts, fuzzy matching, ...) is compiled by ``regex`` unchanged.
"""

from __future__ import annotations

import re
import time
import unicodedata
import warnings
from functools import cache
from typing import Any

import regex

from clinideid.detect.rules.codecache import compile_with_store, current_store

# the Basic Multilingual Plane: re compiles BMP-only classes to a fast bitmap (astral ones to a slow range list)
_SCAN_LIMIT = 0x10000
_PROPS = {
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"),
    "Lu": ("Lu",),
    "Ll": ("Ll",),
    "Lt": ("Lt",),
    "Lm": ("Lm",),
    "Lo": ("Lo",),
    "M": ("Mn", "Mc", "Me"),
    "Mn": ("Mn",),
    "N": ("Nd", "Nl", "No"),
    "Nd": ("Nd",),
}
_PROP = re.compile(r"\\([pP])\{([A-Za-z]+)\}")


@cache
def _class_body(prop: str) -> str:
    """The inside of a ``[...]`` class matching every character of the property ``prop``."""
    cats = set(_PROPS[prop])
    ranges: list[list[int]] = []
    for cp in range(_SCAN_LIMIT):
        if unicodedata.category(chr(cp)) in cats:
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    out = []
    for a, b in ranges:
        out.append(_esc(a) if a == b else f"{_esc(a)}-{_esc(b)}")
    return "".join(out)


def _esc(cp: int) -> str:
    ch = chr(cp)
    if ch in "\\]^-[" or not ch.isprintable() or ch.isspace():
        return f"\\U{cp:08x}" if cp > 0xFFFF else f"\\u{cp:04x}"
    return ch


def translate(pattern: str) -> str | None:
    """``pattern`` with property escapes spelt out for ``re``, or None when that is not possible."""
    if "\\p" not in pattern and "\\P" not in pattern:
        return pattern
    out: list[str] = []
    i = 0
    in_class = False
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            m = _PROP.match(pattern, i)
            if m is not None:
                negated, name = m.group(1) == "P", m.group(2)
                if name not in _PROPS:
                    return None
                body = _class_body(name)
                if in_class:
                    if negated:
                        return None
                    out.append(body)
                else:
                    out.append(f"[^{body}]" if negated else f"[{body}]")
                i = m.end()
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            # a ']' or '^]' right after '[' is a literal
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("]")
                i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_RE_FLAGS = {
    regex.IGNORECASE: re.IGNORECASE,
    regex.MULTILINE: re.MULTILINE,
    regex.DOTALL: re.DOTALL,
    regex.VERBOSE: re.VERBOSE,
    regex.ASCII: re.ASCII,
}


def compile_fast(pattern: str, flags: int = 0, *, calibrate: bool = False) -> Any:
    """A compiled pattern, ``re`` or ``regex`` (V0); raises ``regex.error`` for an invalid pattern.

    Without ``calibrate``, ``re`` is used whenever it can compile the (translated) pattern. With it, both
    engines compile it and the one that scans a sample of clinical-looking text faster is kept: which
    engine is faster depends on the pattern's shape (``re`` skips quickly to literal prefixes, ``regex``
    handles leading lookbehinds and case-insensitive alternations better), and both find the same matches.
    Inside a pack compile (``codecache.pattern_store``) the choice is made once and remembered on disk, and
    ``re``'s compiled code comes from the cache.
    """
    store = current_store()
    choice_key = store.key(pattern, flags, "choice") if (calibrate and store is not None) else None
    choice = store.choice(choice_key) if choice_key is not None else None
    if choice == "regex":
        return regex.compile(pattern, flags | regex.V0)
    fast = _compile_re(pattern, flags)
    if fast is None:
        return regex.compile(pattern, flags | regex.V0)
    if not calibrate or choice == "re":
        return fast
    slow = regex.compile(pattern, flags | regex.V0)
    engine = "re" if _scan_time(fast) <= _scan_time(slow) else "regex"
    if choice_key is not None:
        store.remember_choice(choice_key, engine)
    return fast if engine == "re" else slow


def _compile_re(pattern: str, flags: int) -> Any:
    translated = translate(pattern)
    if translated is None:
        return None
    re_flags = 0
    for rx_flag, re_flag in _RE_FLAGS.items():
        if flags & rx_flag:
            re_flags |= re_flag
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # re's "possible nested set" FutureWarning
            return compile_with_store(translated, re_flags)
    except (re.error, OverflowError, RecursionError):
        return None


_SAMPLE = """Datos del paciente. Nombre: Ana. Apellidos: Pérez Gómez. NHC: 1234567. Domicilio: C/ Mayor 12, 3º B.
Fecha de nacimiento: 03/04/1950. Edad: 72 años Sexo: M. Médico: Dr. Luis Martín NºCol: 28 28 12345.
Patient: John Smith, 72 y/o male, MRN 4829105, seen on March 3, 2019 by Dr. Sarah Lee (555) 201-4433.
Paciente de 54 ans, hospitalisé le 12/05/2021 à l'Hôpital Saint-Louis; tél. 01 42 49 49 49.
Hemoglobina 13,2 g/dl, leucocitos 7.800/mm3, PSA 1.16 ng/ml, TA 120/80 mmHg, FC 72 lpm, 37,2 ºC.
Se inicia tratamiento con enalapril 10 mg/24 h y furosemida 40 mg; control en 3 meses. e-mail: a.b@x.es
Il paziente, nato a Roma il 5 giugno 1961, riferisce dolore toracico da 2 giorni. Пациент Иванов И.И.
"""


def _scan_time(compiled: Any, repeat: int = 3) -> float:
    text = _SAMPLE * 20
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _m in compiled.finditer(text):
            pass
        best = min(best, time.perf_counter() - t0)
    return best


def engine_of(compiled: Any) -> str:
    """``"re"`` or ``"regex"``: which module compiled a pattern (for tests and diagnostics)."""
    return "re" if isinstance(compiled, re.Pattern) else "regex"


__all__ = ["compile_fast", "engine_of", "translate"]
