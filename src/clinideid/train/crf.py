"""Training a CRF: features once, a small (c1, c2) grid chosen on dev, the best model saved as an artifact.

CRFsuite's L-BFGS has no epochs to stop early on, so "early stopping on dev" for the CRF is the grid
selection: every (c1, c2) point is trained on the training documents and scored on dev (entity strict
micro F1); the best point is kept. The final dev evaluation (strict entity, span-only and binary token
scores) is written next to the model as ``metrics.json`` and summarised in ``model.json``.
"""

from __future__ import annotations

import itertools
import json
import logging
import multiprocessing
import resource
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinideid.detect.crf import (
    MODEL_TYPE,
    WEIGHTS_FILE,
    EncodeStats,
    _open_tagger,
    encode_spans,
    labels_to_spans,
    sequence_units,
    tag_units,
    train_crfsuite,
)
from clinideid.detect.features import FeatureConfig, FeatureExtractor
from clinideid.document import Document, Span
from clinideid.errors import InputError
from clinideid.models import (
    FORMAT_VERSION,
    ModelMetadata,
    TrainingData,
    now_iso,
    package_versions,
    save_model,
)
from clinideid.text import Token, Window, tokenize
from clinideid.train.config import TrainConfig

log = logging.getLogger(__name__)

#: progress callback: (stage, done, total)
Progress = Callable[[str, int, int], None]
SUMMARY_MODES = ("strict", "span", "token_binary")


@dataclass
class Featurized:
    """Documents with their tokens, features and sequence units, computed once for the whole grid."""

    docs: list[Document]
    tokens: list[list[Token]] = field(default_factory=list)
    feats: list[list[list[str]]] = field(default_factory=list)
    units: list[list[Window]] = field(default_factory=list)


def featurize(
    docs: Sequence[Document],
    extractor: FeatureExtractor,
    config: TrainConfig,
    progress: Progress | None = None,
    stage: str = "features",
) -> Featurized:
    out = Featurized(list(docs))
    if progress is not None:
        progress(stage, 0, len(docs))
    for k, doc in enumerate(docs):
        tokens = tokenize(doc.text)
        out.tokens.append(tokens)
        out.feats.append(extractor.document_features(doc, tokens))
        out.units.append(
            sequence_units(doc.text, tokens, config.unit, config.window_size, config.window_overlap)
        )
        if progress is not None:
            progress(stage, k + 1, len(docs))
    return out


def training_sequences(
    fz: Featurized, scheme: str
) -> tuple[list[list[list[str]]], list[list[str]], EncodeStats, int]:
    """CRF sequences (features, labels) from featurized gold documents, with encoding statistics.

    Also returns how many spans cross a line break (in line units they continue into the next line).
    """
    xseqs: list[list[list[str]]] = []
    yseqs: list[list[str]] = []
    stats = EncodeStats()
    multiline = 0
    for doc, tokens, feats, units in zip(fz.docs, fz.tokens, fz.feats, fz.units, strict=True):
        labels, st = encode_spans(tokens, doc.spans, scheme)
        stats.add(st)
        multiline += sum(1 for s in doc.spans if "\n" in doc.text[s.start : s.end])
        for w in units:
            xseqs.append(feats[w.start : w.end])
            yseqs.append(labels[w.start : w.end])
    return xseqs, yseqs, stats, multiline


def predict_featurized(weights: bytes, fz: Featurized) -> list[list[Span]]:
    tagger = _open_tagger(weights)
    out = []
    for tokens, feats, units in zip(fz.tokens, fz.feats, fz.units, strict=True):
        labels, probs = tag_units(tagger, feats, units)
        out.append(labels_to_spans(tokens, labels, probs))
    return out


def score_predictions(
    gold: Sequence[Document], predicted: Sequence[Sequence[Span]], modes: Sequence[str] = SUMMARY_MODES
) -> Any:
    """An ``EvaluationReport`` (``clinideid.evaluate``) of predicted spans against gold documents."""
    from clinideid.evaluate import evaluate

    system = [d.with_spans(spans) for d, spans in zip(gold, predicted, strict=True)]
    return evaluate(gold, system, level="subcategory", modes=list(modes))


def summarize(report: Any, modes: Sequence[str] = SUMMARY_MODES) -> dict[str, dict[str, float]]:
    """Micro P/R/F1 per mode, rounded, for ``model.json`` and logs."""
    out = {}
    for mode in modes:
        micro = report[mode].micro
        out[mode] = {
            "precision": round(micro.precision, 4),
            "recall": round(micro.recall, 4),
            "f1": round(micro.f1, 4),
        }
    return out


# -- the grid -----------------------------------------------------------------------------------------------

_GRID_DATA: dict[str, Any] = {}


_Predicted = list[list[tuple[int, int, str, float | None]]]  # picklable spans (Span holds a mappingproxy)


def _grid_point(c1: float, c2: float) -> tuple[float, float, bytes, _Predicted, float]:
    data = _GRID_DATA
    cfg: TrainConfig = data["config"]
    start = time.perf_counter()
    weights = train_crfsuite(
        data["x"],
        data["y"],
        c1=c1,
        c2=c2,
        max_iterations=cfg.max_iterations,
        min_freq=cfg.min_freq,
        possible_transitions=cfg.possible_transitions,
        algorithm=cfg.algorithm,
    )
    elapsed = time.perf_counter() - start
    predicted = [
        [(p.start, p.end, p.label, p.score) for p in doc] for doc in predict_featurized(weights, data["dev"])
    ]
    return c1, c2, weights, predicted, elapsed


def _run_grid(
    points: list[tuple[float, float]], workers: int, progress: Progress | None
) -> list[tuple[float, float, bytes, _Predicted, float]]:
    results = []
    if progress is not None:
        progress("grid", 0, len(points))
    if workers > 1 and len(points) > 1 and "fork" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("fork")  # workers inherit the featurized data without pickling it
        with ProcessPoolExecutor(max_workers=min(workers, len(points)), mp_context=ctx) as pool:
            futures = [pool.submit(_grid_point, c1, c2) for c1, c2 in points]
            for k, fut in enumerate(futures):
                results.append(fut.result())
                if progress is not None:
                    progress("grid", k + 1, len(points))
        return results
    for k, (c1, c2) in enumerate(points):
        results.append(_grid_point(c1, c2))
        if progress is not None:
            progress("grid", k + 1, len(points))
    return results


# -- the workflow -------------------------------------------------------------------------------------------


@dataclass
class TrainResult:
    model_dir: Path
    metadata: ModelMetadata
    grid: list[dict[str, float]]
    dev_report: Any
    encode_stats: dict[str, int]
    seconds: float
    peak_memory_mb: float
    cpu_seconds: float = 0.0


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and its finished children: robust to a busy machine."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _compact(report: dict[str, Any]) -> dict[str, Any]:
    """The evaluation report without per-token and per-document leak lists (kept small next to a model)."""
    leaks = report.get("leaks")
    if isinstance(leaks, dict):
        report["leaks"] = {k: v for k, v in leaks.items() if k not in ("tokens", "per_document")}
    return report


def peak_memory_mb() -> float:
    """Peak resident memory of this process and its finished children (MB; Linux reports KB)."""
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) * 1024 / scale / 1024


def train_crf(
    train_docs: Sequence[Document],
    dev_docs: Sequence[Document],
    config: TrainConfig,
    *,
    out_dir: str | Path,
    name: str,
    seed: int = 1,
    language: str | None = None,
    label_set: str = "canonical",
    training_data: TrainingData | None = None,
    progress: Progress | None = None,
) -> TrainResult:
    """Train on ``train_docs``, select (c1, c2) on ``dev_docs``, save the best model in ``out_dir``.

    ``label_set`` is ``"canonical"`` or the native scheme name the labels come from (stored in the model so
    the detector can map its output to canonical labels).
    """
    if not train_docs or not any(d.spans for d in train_docs):
        raise InputError("no annotated training documents")
    if not dev_docs:
        raise InputError("no development documents to select the model on")
    start = time.perf_counter()
    cpu_start = cpu_seconds()
    feature_config: FeatureConfig = config.feature_config(language)
    extractor = FeatureExtractor(feature_config)
    fz_train = featurize(train_docs, extractor, config, progress, "features (train)")
    fz_dev = featurize(dev_docs, extractor, config, progress, "features (dev)")
    x, y, stats, multiline = training_sequences(fz_train, config.label_scheme)
    if stats.partial_tokens:
        log.info(
            "%d of %d spans cover part of a token: the whole token is labelled",
            stats.partial_tokens,
            stats.spans,
        )
    if stats.conflicts:
        log.info("%d overlapping spans dropped (the longer span kept)", stats.conflicts)
    labels = sorted({s.label for d in train_docs for s in d.spans})

    _GRID_DATA.update({"x": x, "y": y, "dev": fz_dev, "config": config})
    try:
        c1_grid = config.c1 if config.algorithm == "lbfgs" else [0.0]  # SGD-L2 has no L1 term
        points = list(itertools.product(c1_grid, config.c2))
        raw = _run_grid(points, config.workers, progress)
    finally:
        _GRID_DATA.clear()

    grid: list[dict[str, float]] = []
    best: tuple[float, int] | None = None
    for k, (c1, c2, _w, tuples, elapsed) in enumerate(raw):
        predicted = [[Span(a, b, lab, score=sc) for a, b, lab, sc in doc] for doc in tuples]
        f1 = score_predictions(dev_docs, predicted, ("strict",))["strict"].micro.f1
        grid.append({"c1": c1, "c2": c2, "dev_strict_f1": round(f1, 4), "seconds": round(elapsed, 1)})
        log.info("grid c1=%g c2=%g: dev strict F1 %.4f (%.0fs)", c1, c2, f1, elapsed)
        if best is None or f1 > best[0]:
            best = (f1, k)
    assert best is not None
    c1, c2, weights, tuples, _ = raw[best[1]]
    predicted = [[Span(a, b, lab, score=sc) for a, b, lab, sc in doc] for doc in tuples]
    report = score_predictions(dev_docs, predicted, ("strict", "relaxed", "span", "token", "token_binary"))
    summary = summarize(report)
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu_start

    training_config = config.model_dump(mode="json")
    training_config["features"] = feature_config.to_dict()
    training_config["selected"] = {"c1": c1, "c2": c2}
    training_config["grid"] = grid
    data = training_data or TrainingData()
    data = data.model_copy(
        update={
            "documents": len(train_docs),
            "spans": sum(len(d.spans) for d in train_docs),
            "dev_documents": len(dev_docs),
            "encoding": {**stats.to_dict(), "multiline_spans": multiline},
        }
    )
    meta = ModelMetadata(
        format_version=FORMAT_VERSION,
        model_type=MODEL_TYPE,
        name=name,
        weights=WEIGHTS_FILE,
        label_scheme=config.label_scheme,
        labels=labels,
        label_set=label_set,
        language=feature_config.language,
        training_config=training_config,
        training_data=data,
        versions=package_versions("python-crfsuite"),
        dev_metrics=summary,
        created=now_iso(),
        seed=seed,
        resources=(
            extractor.fingerprints(sorted({extractor.language_of(d) for d in train_docs}))
            if feature_config.gazetteers
            else {}
        ),
    )
    metrics = {
        "model": name,
        "selected": {"c1": c1, "c2": c2},
        "grid": grid,
        "summary": summary,
        "training_seconds": round(seconds, 1),
        "training_cpu_seconds": round(cpu, 1),
        "peak_memory_mb": round(peak_memory_mb(), 1),
        "report": _compact(report.to_dict(per_document=False)),
    }
    out = save_model(
        out_dir,
        meta,
        weights,
        extra_files={"metrics.json": json.dumps(metrics, indent=2, ensure_ascii=False) + "\n"},
    )
    return TrainResult(out, meta, grid, report, stats.to_dict(), seconds, peak_memory_mb(), cpu)
