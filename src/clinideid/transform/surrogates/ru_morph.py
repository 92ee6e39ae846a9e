"""Russian name morphology for surrogates: which case and gender a written name is in, and how to put
a surrogate name into that case and gender (``pymorphy3`` with its Russian dictionary).

"осмотрен врачом Петровой" becomes "осмотрен врачом Смирновой", not "... Смирнова": the case and gender
of a name are read jointly from all its parts (surname, first name, patronymic: "Ивановой Марии Петровны"
can only be genitive) and from the word before it (a noun in apposition such as "врачом", a preposition
such as "у" or "к", a field colon for the nominative). Surnames are keyed by their masculine nominative
("Иванов", "Иванова", "Ивановым" share one key), so relatives keep one surrogate family with the right
ending each. Surrogate surnames are drawn from the same declension class as the original (-ов/-ев/-ин,
-ский/-цкий, the rest), so a form that is ambiguous in the original ("Иванова": his genitive or her
nominative) is just as ambiguous, and right, in the surrogate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

CASES = ("nomn", "gent", "datv", "accs", "ablt", "loct")
GENDERS = ("masc", "femn")
#: name part role -> the dictionary's tag for it
ROLE_TAGS = {"first": "Name", "surname": "Surn", "patronymic": "Patr"}
#: prepositions and the case they give a person's name after them
PREPOSITION_CASES: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        ("у", "от", "для", "без", "до", "из", "около", "после", "возле", "кроме"), frozenset({"gent"})
    ),
    **dict.fromkeys(("к", "ко", "по"), frozenset({"datv"})),
    **dict.fromkeys(("с", "со", "за", "над", "под", "перед", "между"), frozenset({"ablt"})),
    **dict.fromkeys(("о", "об", "обо", "при"), frozenset({"loct"})),
    **dict.fromkeys(("про", "через"), frozenset({"accs"})),
}
_CLASSES = (("ов", "ев", "ёв", "ин", "ын"), ("ский", "цкий"))
_PREV_WORD = re.compile(r"([^\W\d_]+)([ \t]*:?[ \t(«\"]*)$")

Form = tuple[str, str]  # (gender, case)


@cache
def analyzer() -> Any:
    """The shared ``pymorphy3.MorphAnalyzer`` (about 0.1 s to load), or ``None`` when not installed."""
    try:
        import pymorphy3
    except ImportError:  # pragma: no cover - a core dependency; kept so names still work without it
        return None
    return pymorphy3.MorphAnalyzer(lang="ru")


def _parses(word: str, role: str) -> list[Any]:
    morph = analyzer()
    if morph is None or role not in ROLE_TAGS:
        return []
    tag = ROLE_TAGS[role]
    return [p for p in morph.parse(word) if tag in p.tag and "sing" in p.tag]


def _genders(tag: Any) -> tuple[str, ...]:
    return GENDERS if "ms-f" in tag else tuple(g for g in GENDERS if g in tag)


def forms(word: str, role: str) -> dict[Form, float]:
    """The (gender, case) readings of one name part with their dictionary scores."""
    out: dict[Form, float] = {}
    for p in _parses(word, role):
        case = p.tag.case
        if case not in CASES:
            continue
        for gender in _genders(p.tag):
            out[(gender, case)] = out.get((gender, case), 0.0) + p.score
    return out


@dataclass(frozen=True)
class Context:
    """What the word before a name says about it: possible cases, and readings (gender, case) if a noun."""

    cases: frozenset[str] | None = None
    readings: frozenset[Form] | None = None


def context_before(text: str, start: int) -> Context:
    """The grammatical hint of the word right before a name that starts at ``start``."""
    m = _PREV_WORD.search(text[max(0, start - 40) : start])
    if m is None:
        return Context()
    if ":" in m.group(2):  # "Врач: Петрова" — a field value is in the nominative
        return Context(cases=frozenset({"nomn"}))
    word = m.group(1).lower()
    if word in PREPOSITION_CASES:
        return Context(cases=PREPOSITION_CASES[word])
    morph = analyzer()
    if morph is None:
        return Context()
    readings: set[Form] = set()
    for p in morph.parse(word):
        if (
            p.tag.POS in ("NOUN", "ADJF", "PRTF")
            and "sing" in p.tag
            and p.tag.case in CASES
            and p.score >= 0.05
        ):
            readings.update((g, p.tag.case) for g in _genders(p.tag))
    if not readings:
        return Context()
    return Context(cases=frozenset(c for _, c in readings), readings=frozenset(readings))


def name_form(parts: Iterable[tuple[str, str]], context: Context | None = None) -> Form | None:
    """The most likely (gender, case) of a name from its ``(word, role)`` parts and the context."""
    joint: dict[Form, float] | None = None
    for word, role in parts:
        f = forms(word, role)
        if not f:
            continue
        if joint is None:
            joint = f
            continue
        both = {k: joint[k] + f[k] for k in joint.keys() & f.keys()}
        joint = both or joint  # parts that cannot agree (a misspelling): keep what we had
    if not joint:
        return None
    if context is not None:
        if context.readings:
            agreeing = {k: v for k, v in joint.items() if k in context.readings}
            if agreeing:
                joint = agreeing
            elif context.cases:
                joint = {k: v for k, v in joint.items() if k[1] in context.cases} or joint
        elif context.cases:
            joint = {k: v for k, v in joint.items() if k[1] in context.cases} or joint
    return max(joint, key=lambda k: (joint[k], -CASES.index(k[1]), k[0] == "femn"))


def lemma(word: str, role: str) -> str | None:
    """The dictionary form of a name part: masculine nominative for surnames ("Петровой" -> "петров"),
    nominative for first names ("Марии" -> "мария") and patronymics ("Ивановны" -> "иванович")."""
    parses = _parses(word, role)
    return parses[0].normal_form if parses else None


def gender_of(word: str, role: str) -> str | None:
    """The gender a first name has in the dictionary ("masc"/"femn"), or ``None``."""
    found = {g for (g, _c) in forms(word, role)}
    return found.pop() if len(found) == 1 else None


def declension_class(surname_lemma: str) -> int:
    """0 for -ов/-ев/-ин surnames, 1 for -ский/-цкий, 2 for the rest."""
    low = surname_lemma.lower()
    for i, endings in enumerate(_CLASSES):
        if low.endswith(endings):
            return i
    return 2


def same_class(pool: Sequence[str], surname_lemma: str) -> Sequence[str]:
    """The surnames of ``pool`` in the declension class of ``surname_lemma`` (all of them if none)."""
    wanted = declension_class(surname_lemma)
    subset = [s for s in pool if declension_class(s) == wanted]
    return subset or pool


def inflect(word: str, role: str, form: Form, known_only: bool = False) -> str | None:
    """``word`` (a nominative name part) put into ``form``; ``None`` when the dictionary cannot (or, with
    ``known_only``, does not know the word: a surrogate should be a name the dictionary knows).

    An indeclinable surname ("Черных", "Сидоренко") is returned unchanged.
    """
    gender, case = form
    morph = analyzer()
    if known_only and (morph is None or not morph.word_is_known(word)):
        return None
    for p in _parses(word, role):
        if p.tag.case != "nomn":
            continue
        if "Fixd" in p.tag:
            return word
        wanted = {case} if role == "first" else {gender, case}
        if role == "first" and gender not in _genders(p.tag):
            continue
        out = p.inflect(wanted)
        if out is not None:
            return out.word
    return None


__all__ = [
    "Context",
    "context_before",
    "declension_class",
    "forms",
    "gender_of",
    "inflect",
    "lemma",
    "name_form",
    "same_class",
]
