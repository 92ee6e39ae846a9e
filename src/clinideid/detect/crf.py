"""A feature CRF tagger (CRFsuite) and the ``"crf"`` detector.

Documents are tokenized with ``clinideid.text.tokenize``; spans become BIO or BIOES token labels (a span
covering part of a token labels the whole token); features come from ``clinideid.detect.features``.
Training and prediction are sentence-free: the sequences a CRF reads are the document's lines, or sliding
token windows whose overlapping predictions merge by window ownership. Decoding turns labels back into
character spans and tolerates invalid sequences (an ``I-`` without ``B-`` starts a span).

``CRFDetector(model="es-meddocan-crf")`` loads a saved model (a directory or a shipped model name); each span
it returns has ``explanation="crf:<model name>"`` and, as score, the mean marginal probability of its tokens'
labels.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinideid.analysis import tokens_of
from clinideid.detect.base import Detector, register_detector
from clinideid.detect.features import FeatureConfig, FeatureExtractor
from clinideid.document import Document, Span
from clinideid.errors import ConfigError, ModelError
from clinideid.labels import load_mapping
from clinideid.models import (
    ModelMetadata,
    load_metadata,
    read_weights,
    resolve_model_path,
)
from clinideid.text import Token, Window, sliding_windows
from clinideid.text.windows import merge_window_labels

log = logging.getLogger(__name__)

MODEL_TYPE = "crf"
WEIGHTS_FILE = "model.crfsuite"
SCHEMES = ("BIO", "BIOES")
UNITS = ("line", "window")


def _pycrfsuite() -> Any:
    try:
        import pycrfsuite
    except ImportError:
        raise ModelError("the CRF tagger needs python-crfsuite: pip install python-crfsuite") from None
    return pycrfsuite


# -- span <-> token label encoding ---------------------------------------------------------------------------


@dataclass
class EncodeStats:
    """What encoding spans as token labels had to approximate (counted, never silently)."""

    spans: int = 0
    partial_tokens: int = 0  # spans that cover only part of a boundary token
    conflicts: int = 0  # spans dropped because they overlap an already encoded span
    no_token: int = 0  # spans covering no token (whitespace only)

    def add(self, other: EncodeStats) -> None:
        self.spans += other.spans
        self.partial_tokens += other.partial_tokens
        self.conflicts += other.conflicts
        self.no_token += other.no_token

    def to_dict(self) -> dict[str, int]:
        return {
            "spans": self.spans,
            "partial_tokens": self.partial_tokens,
            "conflicts": self.conflicts,
            "no_token": self.no_token,
        }


def _check_scheme(scheme: str) -> str:
    if scheme not in SCHEMES:
        raise ConfigError(f"unknown tagging scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
    return scheme


def encode_spans(
    tokens: Sequence[Token], spans: Sequence[Span], scheme: str = "BIO"
) -> tuple[list[str], EncodeStats]:
    """Token labels for ``spans``; overlapping spans: the longer one wins (and the other is counted)."""
    _check_scheme(scheme)
    labels = ["O"] * len(tokens)
    stats = EncodeStats()
    ends = [t.end for t in tokens]
    import bisect

    for span in sorted(spans, key=lambda s: (-s.length, s.start, s.label)):
        stats.spans += 1
        i = bisect.bisect_right(ends, span.start)
        j = i
        while j < len(tokens) and tokens[j].start < span.end:
            j += 1
        if i >= j:
            stats.no_token += 1
            continue
        if any(lab != "O" for lab in labels[i:j]):
            stats.conflicts += 1
            continue
        if tokens[i].start < span.start or tokens[j - 1].end > span.end:
            stats.partial_tokens += 1
        if scheme == "BIOES" and j - i == 1:
            labels[i] = f"S-{span.label}"
            continue
        labels[i] = f"B-{span.label}"
        for k in range(i + 1, j):
            labels[k] = f"I-{span.label}"
        if scheme == "BIOES":
            labels[j - 1] = f"E-{span.label}"
    return labels, stats


def decode_labels(labels: Sequence[str]) -> list[tuple[int, int, str]]:
    """Token ranges ``(i, j, label)`` from BIO or BIOES labels, tolerant of invalid sequences.

    ``B``/``S`` start a span, ``I``/``E`` continue a span of the same label or else start one, ``E``/``S``
    close it, ``O`` (or anything unprefixed) closes it.
    """
    out: list[tuple[int, int, str]] = []
    cur_start = -1
    cur_label = ""

    def close(end: int) -> None:
        nonlocal cur_start, cur_label
        if cur_start >= 0:
            out.append((cur_start, end, cur_label))
        cur_start, cur_label = -1, ""

    for k, tag in enumerate(labels):
        prefix, _, label = tag.partition("-")
        if not label or prefix not in ("B", "I", "E", "S"):
            close(k)
            continue
        if prefix in ("B", "S") or cur_start < 0 or label != cur_label:
            close(k)
            cur_start, cur_label = k, label
        if prefix in ("E", "S"):
            close(k + 1)
    close(len(labels))
    return out


# -- sequence units ------------------------------------------------------------------------------------------


def sequence_units(
    text: str, tokens: Sequence[Token], unit: str = "line", size: int = 200, overlap: int = 20
) -> list[Window]:
    """The token ranges a CRF reads: one per line, or sliding windows of ``size`` tokens."""
    if unit == "window":
        return sliding_windows(len(tokens), size, overlap)
    if unit != "line":
        raise ConfigError(f"unknown sequence unit {unit!r}; choose one of {', '.join(UNITS)}")
    windows: list[Window] = []
    start = 0
    for i in range(1, len(tokens) + 1):
        if i == len(tokens) or "\n" in text[tokens[i - 1].end : tokens[i].start]:
            windows.append(Window(start, i, start, i))
            start = i
    return windows


# -- the model ----------------------------------------------------------------------------------------------


@dataclass
class CRFModel:
    """A trained CRFsuite model with the feature extractor and settings it was trained with."""

    metadata: ModelMetadata
    weights: bytes
    extractor: FeatureExtractor = field(init=False)
    _tagger: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        cfg = self.metadata.training_config
        try:
            self.extractor = FeatureExtractor(FeatureConfig.from_dict(dict(cfg.get("features", {}))))
        except (TypeError, ConfigError) as exc:
            raise ModelError(
                f"model {self.metadata.name!r}: its training_config.features cannot be used ({exc})"
            ) from None
        self.unit = str(cfg.get("unit", "line"))
        self.window_size = int(cfg.get("window_size", 200))
        self.window_overlap = int(cfg.get("window_overlap", 20))
        self._tagger = _open_tagger(self.weights)
        self._lock = threading.Lock()

    @classmethod
    def load(cls, name_or_path: str | Path) -> CRFModel:
        path = resolve_model_path(name_or_path)
        meta = load_metadata(path, model_type=MODEL_TYPE, label_schemes=SCHEMES)
        model = cls(meta, read_weights(path, meta))
        model.check_resources()
        return model

    @property
    def name(self) -> str:
        return self.metadata.name

    def check_resources(self) -> None:
        """Warn when the word lists differ from those the model was trained with (scores may drop)."""
        if not self.metadata.resources or not self.extractor.config.gazetteers:
            return
        if self.extractor.config.multilingual:  # checked per language when its lists are first read
            self.extractor.expected_fingerprints = dict(self.metadata.resources)
            return
        current = self.extractor.fingerprints()
        changed = sorted(k for k, v in self.metadata.resources.items() if current.get(k, v) != v)
        if changed:
            log.warning(
                "model %s was trained with other versions of the word lists %s; re-train it for best results",
                self.name,
                ", ".join(changed),
            )

    def tag(
        self, doc: Document, rule_spans: Sequence[Span] | None = None, threshold: float | None = None
    ) -> tuple[list[Token], list[str], list[float]]:
        """Tokens of ``doc``, their predicted labels and each label's marginal probability (``threshold``:
        see ``tag_units``)."""
        tokens = tokens_of(doc)
        if not tokens:
            return tokens, [], []
        feats = self.extractor.document_features(doc, tokens, rule_spans)
        units = sequence_units(doc.text, tokens, self.unit, self.window_size, self.window_overlap)
        with self._lock:  # a CRFsuite tagger holds the current sequence: one caller at a time
            labels, probs = tag_units(self._tagger, feats, units, threshold)
        return tokens, labels, probs

    def token_phi(self, doc: Document, rule_spans: Sequence[Span] | None = None) -> tuple[list[Token], list[float]]:
        """Tokens of ``doc`` and each one's probability of being PHI (what a ``threshold`` is compared with)."""
        tokens = tokens_of(doc)
        if not tokens:
            return tokens, []
        feats = self.extractor.document_features(doc, tokens, rule_spans)
        units = sequence_units(doc.text, tokens, self.unit, self.window_size, self.window_overlap)
        with self._lock:
            return tokens, token_phi(self._tagger, feats, units)

    def predict_spans(
        self, doc: Document, rule_spans: Sequence[Span] | None = None, threshold: float | None = None
    ) -> list[Span]:
        tokens, labels, probs = self.tag(doc, rule_spans, threshold)
        return labels_to_spans(tokens, labels, probs)


def tag_units(
    tagger: Any, feats: Sequence[Sequence[str]], units: Sequence[Window], threshold: float | None = None
) -> tuple[list[str], list[float]]:
    """Labels and marginal probabilities for a document's tokens, tagged unit by unit.

    Tokens in overlapping windows take the label of the window that owns them. With ``threshold``, a token
    the best path leaves outside every span is PHI all the same when its probability of being part of one
    (1 - P(O)) reaches ``threshold``: it takes the entity type with the highest summed marginal (decoding
    for recall: the best path alone keeps only what is more likely PHI than not).
    """
    n = len(feats)
    unit_labels: list[list[str]] = []
    probs = [1.0] * n
    types: list[tuple[str, list[str]]] | None = None
    for w in units:
        labels = tagger.tag(feats[w.start : w.end])
        for k in range(w.own_start, w.own_end):
            pos = k - w.start
            lab = labels[pos]
            if lab != "O":
                probs[k] = tagger.marginal(lab, pos)
            elif threshold is not None:
                phi = 1.0 - tagger.marginal("O", pos)
                if phi >= threshold:
                    if types is None:
                        types = _entity_types(tagger.labels())
                    best = max(types, key=lambda t: sum(tagger.marginal(tag, pos) for tag in t[1]))
                    labels[pos] = f"I-{best[0]}"
                    probs[k] = phi
        unit_labels.append(labels)
    return merge_window_labels(n, units, unit_labels), probs


def token_phi(tagger: Any, feats: Sequence[Sequence[str]], units: Sequence[Window]) -> list[float]:
    """Each token's probability of being part of a span (1 - P(O)), from the window that owns it: what
    ``tag_units`` compares with its threshold (for choosing one)."""
    phi = [0.0] * len(feats)
    for w in units:
        tagger.set(feats[w.start : w.end])
        for k in range(w.own_start, w.own_end):
            phi[k] = 1.0 - tagger.marginal("O", k - w.start)
    return phi


def _entity_types(tags: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The model's entity types, each with its tags (``B-X``, ``I-X``, ...)."""
    out: dict[str, list[str]] = {}
    for tag in tags:
        prefix, _, label = tag.partition("-")
        if label and prefix in ("B", "I", "E", "S"):
            out.setdefault(label, []).append(tag)
    return sorted(out.items())


def labels_to_spans(tokens: Sequence[Token], labels: Sequence[str], probs: Sequence[float]) -> list[Span]:
    """Character spans from token labels; score = mean marginal probability of the span's tokens."""
    spans = []
    for i, j, label in decode_labels(labels):
        score = min(max(sum(probs[i:j]) / (j - i), 0.0), 1.0)
        spans.append(Span(tokens[i].start, tokens[j - 1].end, label, score=score))
    return spans


def _open_tagger(weights: bytes) -> Any:
    """A CRFsuite tagger reading ``weights`` from memory (no temp file); keep ``weights`` alive with it."""
    pycrfsuite = _pycrfsuite()
    tagger = pycrfsuite.Tagger()
    try:
        tagger.open_inmemory(weights)
    except (ValueError, OSError) as exc:
        raise ModelError(f"CRF weights cannot be loaded ({exc}); the model is corrupt") from None
    return tagger


def train_crfsuite(
    xseqs: Sequence[Sequence[Sequence[str]]],
    yseqs: Sequence[Sequence[str]],
    *,
    c1: float,
    c2: float,
    max_iterations: int = 100,
    min_freq: float = 0,
    possible_transitions: bool = True,
    algorithm: str = "lbfgs",
) -> bytes:
    """Train a CRFsuite model and return the model file's bytes: L-BFGS with an elastic net (``c1``, ``c2``),
    or SGD with L2 (``algorithm="l2sgd"``: ``c2`` only, ``max_iterations`` epochs)."""
    pycrfsuite = _pycrfsuite()
    trainer = pycrfsuite.Trainer(algorithm=algorithm, verbose=False)
    for x, y in zip(xseqs, yseqs, strict=True):
        trainer.append(x, y)
    params: dict[str, Any] = {
        "c2": float(c2),
        "max_iterations": int(max_iterations),
        "feature.minfreq": float(min_freq),
        "feature.possible_transitions": bool(possible_transitions),
    }
    if algorithm == "lbfgs":
        params["c1"] = float(c1)
    trainer.set_params(params)
    fd, tmp = tempfile.mkstemp(suffix=".crfsuite")
    os.close(fd)
    try:
        trainer.train(tmp)
        return Path(tmp).read_bytes()
    finally:
        Path(tmp).unlink(missing_ok=True)


# -- the detector -------------------------------------------------------------------------------------------


@register_detector("crf")
class CRFDetector(Detector):
    """Spans from a saved CRF model.

    ``labels="canonical"`` (default) maps a model trained on native labels (e.g. MEDDOCAN types) onto
    canonical labels through its scheme's mapping; ``labels="model"`` keeps the model's own labels.
    ``min_score`` drops spans whose mean marginal probability is lower. ``threshold`` decodes for recall: a
    token off the best path is PHI all the same when its probability of being PHI reaches it (``tag_units``).
    """

    needs = ("tokens", "rule_findings")

    def __init__(
        self,
        model: str | Path,
        name: str | None = None,
        labels: str = "canonical",
        min_score: float = 0.0,
        threshold: float | None = None,
    ) -> None:
        super().__init__(name)
        if labels not in ("canonical", "model"):
            raise ConfigError(f"crf detector: labels must be 'canonical' or 'model', got {labels!r}")
        if threshold is not None and not 0.0 < float(threshold) <= 1.0:
            raise ConfigError(f"crf detector: threshold must be in (0, 1], got {threshold!r}")
        self.threshold = None if threshold is None else float(threshold)
        self.model = CRFModel.load(model)
        self.model_ref = str(model)
        self.labels = labels
        self.min_score = float(min_score)
        label_set = self.model.metadata.label_set
        self._map = None
        if labels == "canonical" and label_set != "canonical":
            self._map = load_mapping(label_set, fallback="OTHER_PHI")
        self.explanation = f"crf:{self.model.name}"

    def to_config(self) -> dict[str, Any]:
        """The spec that rebuilds this detector with ``build_detector``."""
        return {
            "type": "crf",
            "name": self.name,
            "model": self.model_ref,
            "labels": self.labels,
            "min_score": self.min_score,
            "threshold": self.threshold,
        }

    @property
    def uses_rules(self) -> bool:
        return self.model.extractor.uses_rules

    def detect_one(self, doc: Document, rule_spans: Sequence[Span] | None = None) -> list[Span]:
        """Spans in ``doc``; ``rule_spans`` reuses rule hits already computed (hybrid feature models)."""
        out = []
        for span in self.model.predict_spans(doc, rule_spans, self.threshold):
            if span.score is not None and span.score < self.min_score:
                continue
            label = self._map(span.label) if self._map is not None else span.label
            out.append(span.with_(label=label, source=self.name, explanation=self.explanation))
        return out
