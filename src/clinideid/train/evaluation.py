"""Scoring a saved model on an annotated corpus (``clinideid evaluate --model DIR``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from clinideid.detect.base import Detector
from clinideid.document import Document
from clinideid.errors import ConfigError, ModelError
from clinideid.models import load_metadata, resolve_model_path
from clinideid.train.data import read_training_corpus


def model_detector(model: str | Path, labels: str = "model") -> Detector:
    """The detector for a saved model of any supported type (``labels="model"``: the model's own labels)."""
    path = resolve_model_path(model)
    meta = load_metadata(path)
    if meta.model_type == "crf":
        from clinideid.detect.crf import CRFDetector

        return CRFDetector(path, labels=labels)
    if meta.model_type == "neural":
        from clinideid.detect.neural.tagger import NeuralDetector

        return NeuralDetector(path, labels=labels)
    if meta.model_type == "transformer":
        from clinideid.detect.transformer import TransformerDetector

        return TransformerDetector(path, labels=labels)
    raise ModelError(
        f"{path}: field 'model_type' is {meta.model_type!r}, which this version of clinideid cannot run; "
        "upgrade clinideid"
    )


def predict(detector: Detector, docs: Sequence[Document]) -> list[Document]:
    """``docs`` with their gold spans replaced by the detector's spans."""
    return [d.with_spans(spans) for d, spans in zip(docs, detector.detect(docs), strict=True)]


def evaluate_model(
    model_dir: str | Path,
    corpus_path: str | Path,
    fmt: str,
    scheme: str | None = None,
    *,
    level: str = "subcategory",
    modes: str | Iterable[str] | None = None,
) -> Any:
    """An ``EvaluationReport`` of the model at ``model_dir`` on the annotated corpus at ``corpus_path``.

    The gold labels are put in the model's label set: a canonical model is scored against gold mapped with
    ``scheme``; a native-label model (e.g. MEDDOCAN types) against the corpus's own labels.
    """
    from clinideid.evaluate import evaluate

    path = resolve_model_path(model_dir)
    meta = load_metadata(path)
    if meta.label_set == "canonical":
        gold = read_training_corpus(corpus_path, fmt, scheme, "canonical")
    else:
        if scheme not in (None, meta.label_set):
            raise ConfigError(
                f"the model predicts native {meta.label_set!r} labels; score it against a {meta.label_set!r} "
                f"corpus (got --scheme {scheme})"
            )
        gold = read_training_corpus(corpus_path, fmt, None, "native")
    detector = model_detector(path, labels="model")
    return evaluate(gold, predict(detector, gold), level=level, modes=modes)
