"""A small, dependency-free language guesser for the languages clinideid ships pipelines for.

Clinical notes are full of numbers, abbreviations and drug names, so the guess uses only very frequent
function words (and the script, for Russian). It is meant to pick a pipeline, not to be a general
language identifier; pass the language explicitly when you know it.
"""

from __future__ import annotations

from collections import Counter

import regex

from clinideid.text.invisible import visible_text

SUPPORTED = ("en", "es", "it", "ru", "fr", "de")

_STOPWORDS: dict[str, set[str]] = {
    lang: set(words.split())
    for lang, words in {
        "en": "the and of with was is to in for patient on he she his her no at by from history were which "
        "name date birth admission discharge address phone",
        "es": "el la de que y en los con por las del se una paciente para años sin al como presenta nombre "
        "apellidos fecha ingreso nacimiento domicilio médico edad sexo teléfono",
        "it": "il di che e la per con del della paziente un una non sono gli alla anni nel dei è nome cognome "
        "nato nata ricovero dimissione residente dott",
        "fr": "le la de et les des du un une en patient patiente pour avec au est dans sur ans pas nom prénom "
        "née né adresse hospitalisation hospitalisé hospitalisée",
        "de": "der die und das mit von den des ist nicht ein eine im bei patient patientin wurde zu auf jahre "
        "geb geboren vorname anschrift aufnahme entlassung herr frau",
        "ru": "и в не на с по что пациент лет года при из был была от для к у до без",
    }.items()
}
_WORD = regex.compile(r"\p{L}+")


def guess_language(text: str, default: str = "en", sample_chars: int = 20_000) -> str:
    """The most likely of ``SUPPORTED`` for ``text`` (``default`` when there is too little evidence); words
    are read as a reader sees them, without invisible characters inside."""
    sample = visible_text(text[:sample_chars])
    words = [w.lower() for w in _WORD.findall(sample)]
    if not words:
        return default
    cyrillic = sum(1 for w in words if regex.match(r"\p{Cyrillic}", w))
    if cyrillic > len(words) / 2:
        return "ru"
    scores: Counter[str] = Counter()
    for w in words:
        for lang, stops in _STOPWORDS.items():
            if w in stops:
                scores[lang] += 1
    if not scores:
        return default
    ranked = scores.most_common(2)
    best, count = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0
    # one clue is enough when no other language has any; otherwise ask for a clear lead
    return best if count > runner_up and (count >= 2 or runner_up == 0) else default
