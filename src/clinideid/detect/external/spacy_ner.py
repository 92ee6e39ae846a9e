"""The ``spacy`` detector: the named entities of any installed spaCy pipeline as PHI spans.

``model`` is an installed pipeline package name (``en_core_web_sm``) or a local pipeline directory
(``nlp.to_disk``); nothing is downloaded. Entity types map onto canonical labels through
``DEFAULT_LABELS`` (PERSON/PER, GPE/LOC, FAC, ORG) updated by ``labels`` (``{"DATE": "DATE"}`` adds
spaCy's dates, ``{"ORG": null}`` drops organisations). Loaded pipelines are shared within a process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from clinideid.detect.base import Detector, register_detector
from clinideid.detect.external import label_map, make_spans, require
from clinideid.document import Document, Span
from clinideid.errors import ConfigError, ModelError


@lru_cache(maxsize=4)
def _load(model: str) -> Any:
    spacy = require("spacy", "the 'spacy' detector")
    try:
        return spacy.load(model)
    except OSError:
        raise ModelError(
            "spacy detector: no installed spaCy pipeline package or pipeline directory by that name; "
            "install the pipeline package (pip) or pass the folder written by nlp.to_disk "
            "(nothing is downloaded at run time)"
        ) from None


@register_detector("spacy")
class SpacyDetector(Detector):
    """Names, places and organisations found by a spaCy pipeline's ``ner`` (see the module docstring)."""

    def __init__(
        self,
        model: str | Path,
        labels: Mapping[str, str | None] | None = None,
        batch_size: int = 32,
        name: str | None = None,
    ) -> None:
        super().__init__(name)
        if not model:
            raise ConfigError("spacy detector: give model (a pipeline package name or directory)")
        self.model = str(model)
        self.labels = label_map(labels)
        self.batch_size = int(batch_size)
        self.nlp = _load(self.model)
        if "ner" not in self.nlp.pipe_names:
            raise ModelError("spacy detector: the pipeline has no 'ner' component")
        meta = self.nlp.meta
        self._model_name = f"spacy:{meta.get('lang', 'xx')}_{meta.get('name', 'pipeline')}"

    def detect(self, docs: Sequence[Document]) -> list[list[Span]]:
        out: list[list[Span]] = []
        for doc, sdoc in zip(
            docs, self.nlp.pipe((d.text for d in docs), batch_size=self.batch_size), strict=True
        ):
            found = ((e.start_char, e.end_char, e.label_, None) for e in sdoc.ents)
            out.append(
                make_spans(
                    doc.text,
                    found,
                    self.labels,
                    source=self.name,
                    model=self._model_name,
                    language=doc.language or self.nlp.lang,
                )
            )
        return out

    def detect_one(self, doc: Document) -> list[Span]:
        return self.detect([doc])[0]

    def to_config(self) -> dict[str, Any]:
        return {"type": "spacy", "name": self.name, "model": self.model, "labels": dict(self.labels)}
