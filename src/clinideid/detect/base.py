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


def _load_builtin() -> None:
    import importlib

    for module in ("clinideid.detect.rules", "clinideid.detect.crf", "clinideid.detect.hybrid"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:  # a detector family not built yet
            if exc.name != module:
                raise


def available_detectors() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def build_detector(spec: dict[str, Any]) -> Detector:
    """A detector from its config: ``{"type": "rules", "name": ..., **options}``."""
    _load_builtin()
    spec = dict(spec)
    type_name = spec.pop("type", None)
    if type_name not in _REGISTRY:
        raise ConfigError(
            f"unknown detector type {type_name!r}; available: {', '.join(sorted(_REGISTRY)) or 'none'}"
        )
    try:
        return _REGISTRY[type_name](**spec)
    except TypeError as exc:
        raise ConfigError(f"bad options for detector {type_name!r}: {exc}") from None
