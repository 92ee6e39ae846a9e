"""What the detectors of learned taggers (neural, transformer) share: options, label mapping, span finishing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clinideid.detect.base import Detector
from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.labels import load_mapping


def check_tagger_options(kind: str, labels: str, batch_size: int, threads: int | None) -> None:
    """Clear errors for bad detector options, before a model is loaded."""
    if labels not in ("canonical", "model"):
        raise ConfigError(f"{kind} detector: labels must be 'canonical' or 'model', got {labels!r}")
    if batch_size < 1:
        raise ConfigError(f"{kind} detector: batch_size must be positive, got {batch_size}")
    if threads is not None and threads < 1:
        raise ConfigError(f"{kind} detector: threads must be positive, got {threads}")


class LearnedTaggerDetector(Detector):
    """Spans of a tagger model with ``predict_spans(docs)``: mapped to canonical labels, filtered by score.

    ``labels="canonical"`` maps a native-label model onto canonical labels through its scheme's mapping;
    ``labels="model"`` keeps the model's labels. ``min_score`` drops spans whose score is lower.
    """

    kind = ""

    def _attach(
        self, model: Any, model_ref: str, labels: str, min_score: float, batch_size: int, threads: int | None
    ) -> None:
        self.model = model
        self.model_ref = model_ref
        self.labels = labels
        self.min_score = float(min_score)
        self.batch_size = batch_size
        self.threads = threads
        meta = model.metadata
        assert meta is not None
        self._map = None
        if labels == "canonical" and meta.label_set != "canonical":
            self._map = load_mapping(meta.label_set, fallback="OTHER_PHI")
        self.explanation = f"{self.kind}:{meta.name}"

    def to_config(self) -> dict[str, Any]:
        return {
            "type": self.kind,
            "name": self.name,
            "model": self.model_ref,
            "labels": self.labels,
            "min_score": self.min_score,
            "batch_size": self.batch_size,
            "threads": self.threads,
        }

    def _finish(self, spans: Sequence[Span]) -> list[Span]:
        out = []
        for span in spans:
            if span.score is not None and span.score < self.min_score:
                continue
            label = self._map(span.label) if self._map is not None else span.label
            out.append(span.with_(label=label, source=self.name, explanation=self.explanation))
        return out

    def detect(self, docs: Sequence[Document]) -> list[list[Span]]:
        return [self._finish(s) for s in self.model.predict_spans(docs)]

    def detect_one(self, doc: Document) -> list[Span]:
        return self.detect([doc])[0]
