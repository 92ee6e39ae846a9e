"""The ``natasha`` detector: Natasha's Russian news NER (PER, LOC, ORG) as PHI spans.

Natasha (``pip install 'clinideid[natasha]'``) ships its embeddings and NER weights inside the package, so
nothing is downloaded. The models are loaded once per process and shared by every detector instance.
PER becomes PERSON (the model does not know a patient from a doctor), LOC becomes COUNTRY, STATE or CITY
by the Russian place lists, ORG becomes ORGANIZATION; ``labels`` overrides the map
(``{"ORG": "HOSPITAL"}``, ``{"LOC": null}`` drops places).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from clinideid.detect.base import Detector, register_detector
from clinideid.detect.external import label_map, make_spans, require
from clinideid.document import Document, Span

MODEL = "natasha-news-ner"


@cache
def _models() -> tuple[Any, Any]:
    """Natasha's segmenter and NER tagger, loaded once (about 1.5 s and 30 MB)."""
    natasha = require("natasha", "the 'natasha' detector")
    return natasha.Segmenter(), natasha.NewsNERTagger(natasha.NewsEmbedding())


@register_detector("natasha")
class NatashaDetector(Detector):
    """Russian person, place and organisation names found by Natasha (see the module docstring)."""

    def __init__(self, labels: Mapping[str, str | None] | None = None, name: str | None = None) -> None:
        super().__init__(name)
        self.labels = label_map(labels)
        self._segmenter, self._tagger = _models()

    def detect_one(self, doc: Document) -> list[Span]:
        from natasha import Doc

        if not doc.text.strip():
            return []
        ndoc = Doc(doc.text)
        ndoc.segment(self._segmenter)
        ndoc.tag_ner(self._tagger)
        found = ((s.start, s.stop, s.type, None) for s in ndoc.spans)
        return make_spans(
            doc.text, found, self.labels, source=self.name, model=MODEL, language=doc.language or "ru"
        )

    def to_config(self) -> dict[str, Any]:
        return {"type": "natasha", "name": self.name, "labels": dict(self.labels)}
