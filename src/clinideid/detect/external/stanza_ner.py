"""The ``stanza`` detector: Stanza's NER from a local model folder as PHI spans.

``model_dir`` is a Stanza resources folder (the ``dir`` that ``stanza.download(lang, model_dir=...)``
filled once, e.g. ``~/stanza_resources``); ``language`` picks the language's models in it. The pipeline
runs ``tokenize`` and ``ner`` with downloads turned off, so a missing folder or model is a clear
``ModelError``, never a network call. Stanza's Russian NER (WikiNER: PER, LOC, ORG, MISC) maps like
Natasha's; English OntoNotes types (PERSON, GPE, ORG, FAC) map through the same table.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from clinideid.detect.base import Detector, register_detector
from clinideid.detect.external import check_model_dir, label_map, make_spans, require
from clinideid.document import Document, Span
from clinideid.errors import ConfigError, ModelError


@lru_cache(maxsize=4)
def _pipeline(model_dir: str, language: str, use_gpu: bool) -> Any:
    stanza = require("stanza", "the 'stanza' detector")
    try:
        return stanza.Pipeline(
            lang=language,
            dir=model_dir,
            processors="tokenize,ner",
            download_method=None,
            use_gpu=use_gpu,
            logging_level="WARN",
        )
    except (FileNotFoundError, OSError, ValueError, KeyError) as exc:
        raise ModelError(
            f"stanza detector: the model folder has no usable {language!r} tokenize+ner models "
            f"({type(exc).__name__}); fill it once with stanza.download({language!r}, model_dir=...)"
        ) from None


@register_detector("stanza")
class StanzaDetector(Detector):
    """Names, places and organisations found by Stanza (see the module docstring)."""

    def __init__(
        self,
        model_dir: str | Path | None = None,
        language: str = "ru",
        labels: Mapping[str, str | None] | None = None,
        use_gpu: bool = False,
        name: str | None = None,
    ) -> None:
        super().__init__(name)
        if not model_dir:
            raise ConfigError("stanza detector: give model_dir, a local Stanza resources folder")
        check_model_dir(str(model_dir), "stanza detector")
        self.model_dir = str(Path(model_dir).expanduser())
        self.language = language
        self.labels = label_map(labels)
        self.nlp = _pipeline(self.model_dir, language, bool(use_gpu))

    def detect_one(self, doc: Document) -> list[Span]:
        if not doc.text.strip():
            return []
        sdoc = self.nlp(doc.text)
        found = ((e.start_char, e.end_char, e.type, None) for e in sdoc.ents)
        return make_spans(
            doc.text,
            found,
            self.labels,
            source=self.name,
            model=f"stanza:{self.language}",
            language=doc.language or self.language,
        )

    def to_config(self) -> dict[str, Any]:
        return {
            "type": "stanza",
            "name": self.name,
            "model_dir": self.model_dir,
            "language": self.language,
            "labels": dict(self.labels),
        }
