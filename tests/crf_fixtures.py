"""A generated, PHI-free corpus for CRF tests: Spanish-like form lines and sentences from templates.

Names are random syllable strings (no real names), dates/IDs/ages random, so a tagger can only learn from
context and shape, not memorise. Everything is seeded.
"""

from __future__ import annotations

import random

from clinideid.document import Document, Span

_SYLLABLES = [
    "ma",
    "ri",
    "to",
    "lo",
    "sa",
    "ne",
    "ca",
    "ber",
    "ran",
    "gil",
    "mon",
    "tes",
    "vi",
    "dor",
    "ques",
]
_CITIES = ["Valdeluz", "Montecalvo", "Riofrío", "Villanueva", "Torrelobo", "Pinares"]
_FILLER = [
    "Presenta dolor abdominal de tres días de evolución.",
    "Se solicita analítica y radiografía de tórax.",
    "No refiere alergias medicamentosas conocidas.",
    "Buena evolución clínica tras el tratamiento.",
    "Se recomienda control en consultas externas.",
]


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


class _Builder:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.spans: list[Span] = []
        self.pos = 0

    def add(self, text: str, label: str | None = None) -> None:
        if label is not None:
            self.spans.append(Span(self.pos, self.pos + len(text), label, text=text))
        self.parts.append(text)
        self.pos += len(text)

    def doc(self, doc_id: str) -> Document:
        return Document(doc_id, "".join(self.parts), "es", spans=tuple(self.spans))


def make_document(rng: random.Random, doc_id: str) -> Document:
    b = _Builder()
    b.add("Datos del paciente.\nNombre: ")
    b.add(f"{_name(rng)} {_name(rng)}", "PATIENT")
    b.add(".\nNHC: ")
    b.add(str(rng.randint(100000, 9999999)), "MEDICALRECORD")
    b.add(".\nFecha de ingreso: ")
    b.add(f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{rng.randint(1990, 2020)}", "DATE")
    b.add(".\n")
    b.add(rng.choice(_FILLER) + "\n")
    b.add("Paciente de ")
    b.add(f"{rng.randint(18, 95)} años", "AGE")
    b.add(" que vive en ")
    b.add(rng.choice(_CITIES), "CITY")
    b.add(". " + rng.choice(_FILLER) + "\n")
    b.add("Médico: Dr. ")
    b.add(f"{_name(rng)} {_name(rng)}", "DOCTOR")
    b.add(".\n")
    return b.doc(doc_id)


def make_corpus(n: int, seed: int = 0, prefix: str = "doc") -> list[Document]:
    rng = random.Random(seed)
    return [make_document(rng, f"{prefix}{k:03d}") for k in range(n)]
