"""The detector contract and registry.

A detector reads a batch of documents and returns, for each, the spans it found: canonical labels,
its own name as ``source``, a score when it has one and an ``explanation`` (which rule, list or model
fired). Detectors never modify text. Pipelines build detectors from config by registered type name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.extras import missing_extra


class Detector(ABC):
    """Finds PHI spans. Subclasses implement ``detect_one`` (or ``detect`` for real batching)."""

    #: registry type name, e.g. "rules", "crf"
    type_name: ClassVar[str] = ""

    def __init__(self, name: str | None = None) -> None:
        self.name = name or self.type_name or type(self).__name__

    @abstractmethod
    def detect_one(self, doc: Document) -> list[Span]:
        """Spans found in one document."""

    def detect(self, docs: Sequence[Document]) -> list[list[Span]]:
        """Spans found in each document of a batch (override to batch for speed)."""
        return [self.detect_one(d) for d in docs]


_REGISTRY: dict[str, Callable[..., Detector]] = {}


def register_detector(type_name: str) -> Callable[[type[Detector]], type[Detector]]:
    """Class decorator: make a detector buildable from config as ``{type: type_name, ...}``."""

    def deco(cls: type[Detector]) -> type[Detector]:
        cls.type_name = type_name
        _REGISTRY[type_name] = cls
        return cls

    return deco


#: built-in detector types and the module that registers each; imported only when a type is asked for,
#: so a rules-only pipeline never pays for importing torch
BUILTIN_DETECTORS: dict[str, str] = {
    "rules": "clinideid.detect.rules",
    "crf": "clinideid.detect.crf",
    "hybrid": "clinideid.detect.hybrid",
    "neural": "clinideid.detect.neural.tagger",
    "transformer": "clinideid.detect.transformer",
}


def _load(type_name: str | None = None) -> None:
    """Import the module registering ``type_name`` (every built-in one when None)."""
    import importlib

    names = list(BUILTIN_DETECTORS) if type_name is None else [type_name]
    for name in names:
        module = BUILTIN_DETECTORS.get(name)
        if module is not None and name not in _REGISTRY:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                error = missing_extra(exc, f"the {name!r} detector")
                if error is None:
                    raise
                if type_name is not None:
                    raise error from None
                # listing every type: one whose optional dependency is missing is left out


def available_detectors() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def build_detector(spec: dict[str, Any]) -> Detector:
    """A detector from its config: ``{"type": "rules", "name": ..., **options}``."""
    spec = dict(spec)
    type_name = spec.pop("type", None)
    _load(type_name if isinstance(type_name, str) else None)
    if type_name not in _REGISTRY:
        known = sorted(set(_REGISTRY) | set(BUILTIN_DETECTORS))
        raise ConfigError(f"unknown detector type {type_name!r}; available: {', '.join(known)}")
    try:
        return _REGISTRY[type_name](**spec)
    except TypeError as exc:
        raise ConfigError(f"bad options for detector {type_name!r}: {exc}") from None
