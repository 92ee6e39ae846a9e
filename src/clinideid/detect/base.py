"""The detector contract and registry.

A detector reads a batch of documents and returns, for each, the spans it found: canonical labels,
its own name as ``source``, a score when it has one and an ``explanation`` (which rule, list or model
fired). Detectors never modify text. Pipelines build detectors from config by registered type name
(``DETECTORS``, a ``clinideid.registry.Registry``; plug-ins add types through the ``clinideid.detectors``
entry-point group).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.registry import Registry


class Detector(ABC):
    """Finds PHI spans. Subclasses implement ``detect_one`` (or ``detect`` for real batching)."""

    #: registry type name, e.g. "rules", "crf"
    type_name: ClassVar[str] = ""
    #: what the detector reads from the shared per-document analysis (``clinideid.analysis.ANALYSES``)
    needs: ClassVar[tuple[str, ...]] = ()

    def __init__(self, name: str | None = None) -> None:
        self.name = name or self.type_name or type(self).__name__

    @abstractmethod
    def detect_one(self, doc: Document) -> list[Span]:
        """Spans found in one document."""

    def detect(self, docs: Sequence[Document]) -> list[list[Span]]:
        """Spans found in each document of a batch (override to batch for speed)."""
        return [self.detect_one(d) for d in docs]


#: built-in detector types and the module that registers each; imported only when a type is asked for,
#: so a rules-only pipeline never pays for importing torch
BUILTIN_DETECTORS: dict[str, str] = {
    "rules": "clinideid.detect.rules",
    "crf": "clinideid.detect.crf",
    "hybrid": "clinideid.detect.hybrid",
    "neural": "clinideid.detect.neural.tagger",
    "transformer": "clinideid.detect.transformer",
    "natasha": "clinideid.detect.external.natasha_ner",
    "spacy": "clinideid.detect.external.spacy_ner",
    "stanza": "clinideid.detect.external.stanza_ner",
}

DETECTORS: Registry[Callable[..., Detector]] = Registry(
    "detector type", "clinideid.detectors", BUILTIN_DETECTORS
)


def register_detector(type_name: str) -> Callable[[type[Detector]], type[Detector]]:
    """Class decorator: make a detector buildable from config as ``{type: type_name, ...}``."""

    def deco(cls: type[Detector]) -> type[Detector]:
        cls.type_name = type_name
        DETECTORS.add(type_name, cls)
        return cls

    return deco


def available_detectors() -> list[str]:
    return DETECTORS.names()


def build_detector(spec: dict[str, Any]) -> Detector:
    """A detector from its config: ``{"type": "rules", "name": ..., **options}``."""
    spec = dict(spec)
    type_name = spec.pop("type", None)
    factory = DETECTORS.get(type_name)
    try:
        return factory(**spec)
    except TypeError as exc:
        raise ConfigError(f"bad options for detector {type_name!r}: {exc}") from None
