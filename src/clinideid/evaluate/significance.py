"""Significance testing and confidence intervals over documents.

Both work on per-document counts ``(n_documents, n_labels, 3)`` (TP, FP, FN), so any corpus-level metric
that is a function of summed counts (micro/macro P, R, F1, ...) can be resampled without re-matching spans:
a resample is a weighted sum of the document rows, which numpy computes for thousands of resamples at once
with one matrix product.

- ``approximate_randomization``: the paired two-sided approximate randomization test (Noreen 1989; as in
  nedap/deidentify's ``art.py``): in each shuffle every document's outputs of the two systems are swapped
  with probability 1/2; the p-value is ``(r + 1) / (N + 1)`` where r counts shuffles whose absolute metric
  difference is at least the observed one.
- ``bootstrap``: documents resampled with replacement; percentile confidence interval of the metric (or of
  the difference between two systems on the same resamples).

A metric is a name from ``METRICS`` or a function of counts shaped ``(..., n_labels, 3)`` returning an
array shaped ``(...)``. A function that only accepts one ``(n_labels, 3)`` array works too when passed
with ``vectorized=False`` (slower: one call per resample).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np

from clinideid.errors import ConfigError
from clinideid.evaluate.counts import MetricFn, get_metric
from clinideid.evaluate.results import EvaluationReport, ModeResult

_CHUNK = 2048  # resamples per matrix product (bounds memory: chunk x documents)
_TOLERANCE = 1e-12  # float noise allowed when comparing metric differences


@dataclass(frozen=True)
class SignificanceResult:
    metric: str
    score_a: float
    score_b: float
    p_value: float
    shuffles: int
    seed: int | None
    documents: int
    at_least_as_extreme: int
    mode: str | None = None

    @property
    def difference(self) -> float:
        return self.score_a - self.score_b

    def to_dict(self) -> dict[str, object]:
        return {
            "test": "approximate randomization (paired, two-sided, document-level swaps)",
            "mode": self.mode,
            "metric": self.metric,
            "score_a": self.score_a,
            "score_b": self.score_b,
            "difference": self.difference,
            "p_value": self.p_value,
            "shuffles": self.shuffles,
            "at_least_as_extreme": self.at_least_as_extreme,
            "seed": self.seed,
            "documents": self.documents,
        }


@dataclass(frozen=True)
class BootstrapResult:
    metric: str
    estimate: float
    low: float
    high: float
    confidence: float
    samples: int
    seed: int | None
    documents: int
    mode: str | None = None
    difference: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "method": "bootstrap over documents, percentile interval",
            "mode": self.mode,
            "metric": self.metric,
            "of": "difference a - b" if self.difference else "system",
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "samples": self.samples,
            "seed": self.seed,
            "documents": self.documents,
        }


def _as_counts(counts: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.ndim != 3 or arr.shape[2] != 3:
        raise ConfigError(f"{name} must be shaped (documents, labels, 3), got {arr.shape}")
    return arr.astype(np.float64)


def _evaluator(metric: MetricFn, n_labels: int, vectorized: bool) -> Callable[[np.ndarray], np.ndarray]:
    """A function mapping flat summed counts (n, n_labels*3) to metric values (n,)."""

    def run(flat: np.ndarray) -> np.ndarray:
        shaped = flat.reshape(flat.shape[0], n_labels, 3)
        if vectorized:
            values = np.asarray(metric(shaped), dtype=np.float64)
        else:
            values = np.array([float(metric(row)) for row in shaped], dtype=np.float64)
        if values.shape != (flat.shape[0],):
            raise ConfigError(
                f"metric returned shape {values.shape} for {flat.shape[0]} resamples; a vectorised metric "
                "must map (..., labels, 3) to (...); pass vectorized=False for a per-sample function"
            )
        return values

    return run


def approximate_randomization(
    counts_a: np.ndarray,
    counts_b: np.ndarray,
    metric: str | MetricFn = "micro_f1",
    *,
    shuffles: int = 9999,
    seed: int | None = 1,
    vectorized: bool = True,
) -> SignificanceResult:
    """Paired two-sided approximate randomization test between two systems scored on the same gold.

    ``counts_a`` and ``counts_b`` are per-document counts with the same documents and labels, in the same
    order (``(n_documents, n_labels, 3)``).
    """
    if shuffles < 1:
        raise ConfigError(f"the number of shuffles must be positive, got {shuffles}")
    a = _as_counts(counts_a, "counts_a")
    b = _as_counts(counts_b, "counts_b")
    if a.shape != b.shape:
        raise ConfigError(f"the two systems' counts differ in shape: {a.shape} vs {b.shape}")
    name, fn = get_metric(metric)
    n_docs, n_labels = a.shape[0], a.shape[1]
    run = _evaluator(fn, n_labels, vectorized)
    flat_a = a.reshape(n_docs, -1)
    flat_b = b.reshape(n_docs, -1)
    total_a, total_b = flat_a.sum(axis=0), flat_b.sum(axis=0)
    score_a, score_b = run(np.stack([total_a, total_b]))
    observed = abs(score_a - score_b)
    delta = flat_b - flat_a  # what a document contributes to system a when it is swapped
    rng = np.random.default_rng(seed)
    hits = 0
    done = 0
    while done < shuffles:
        n = min(_CHUNK, shuffles - done)
        swap = rng.integers(0, 2, size=(n, n_docs)).astype(np.float64)
        shift = swap @ delta
        diff = np.abs(run(total_a + shift) - run(total_b - shift))
        hits += int(np.count_nonzero(diff >= observed - _TOLERANCE))
        done += n
    return SignificanceResult(
        metric=name,
        score_a=float(score_a),
        score_b=float(score_b),
        p_value=(hits + 1) / (shuffles + 1),
        shuffles=shuffles,
        seed=seed,
        documents=n_docs,
        at_least_as_extreme=hits,
    )


def bootstrap(
    counts: np.ndarray,
    metric: str | MetricFn = "micro_f1",
    *,
    counts_b: np.ndarray | None = None,
    samples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 1,
    vectorized: bool = True,
) -> BootstrapResult:
    """Percentile bootstrap interval of ``metric`` over documents resampled with replacement.

    With ``counts_b`` (a second system on the same documents and labels) the interval is for the
    difference ``metric(a) - metric(b)``, both computed on the same resamples.
    """
    if samples < 1:
        raise ConfigError(f"the number of bootstrap samples must be positive, got {samples}")
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be between 0 and 1, got {confidence}")
    a = _as_counts(counts, "counts")
    b = None if counts_b is None else _as_counts(counts_b, "counts_b")
    if b is not None and b.shape != a.shape:
        raise ConfigError(f"the two systems' counts differ in shape: {a.shape} vs {b.shape}")
    name, fn = get_metric(metric)
    n_docs, n_labels = a.shape[0], a.shape[1]
    if n_docs == 0:
        raise ConfigError("cannot bootstrap over zero documents")
    run = _evaluator(fn, n_labels, vectorized)
    flat_a = a.reshape(n_docs, -1)
    flat_b = None if b is None else b.reshape(n_docs, -1)

    def value(weights: np.ndarray) -> np.ndarray:
        out = run(weights @ flat_a)
        if flat_b is not None:
            out = out - run(weights @ flat_b)
        return out

    estimate = float(value(np.ones((1, n_docs)))[0])
    rng = np.random.default_rng(seed)
    values = []
    done = 0
    while done < samples:
        n = min(_CHUNK, samples - done)
        weights = rng.multinomial(n_docs, np.full(n_docs, 1.0 / n_docs), size=n).astype(np.float64)
        values.append(value(weights))
        done += n
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(np.concatenate(values), [alpha, 1.0 - alpha])
    return BootstrapResult(
        metric=name,
        estimate=estimate,
        low=float(low),
        high=float(high),
        confidence=confidence,
        samples=samples,
        seed=seed,
        documents=n_docs,
        difference=b is not None,
    )


_R = TypeVar("_R", SignificanceResult, BootstrapResult)


def _aligned(a: ModeResult, b: ModeResult) -> tuple[np.ndarray, np.ndarray]:
    if a.documents != b.documents:
        if set(a.documents) != set(b.documents):
            raise ConfigError(
                "the two evaluations cover different documents; score both systems on the same gold"
            )
        position = {d: i for i, d in enumerate(b.documents)}
        order = [position[d] for d in a.documents]
        b = ModeResult(b.mode, a.documents, b.labels, b.counts[order])
    labels = list(dict.fromkeys([*a.labels, *b.labels]))
    return a.aligned(labels), b.aligned(labels)


def compare_reports(
    report_a: EvaluationReport,
    report_b: EvaluationReport,
    mode: str = "strict",
    metric: str | MetricFn = "micro_f1",
    *,
    shuffles: int = 9999,
    seed: int | None = 1,
    vectorized: bool = True,
) -> SignificanceResult:
    """Approximate randomization test between two evaluations of the same gold, for one mode."""
    ca, cb = _aligned(report_a[mode], report_b[mode])
    result = approximate_randomization(ca, cb, metric, shuffles=shuffles, seed=seed, vectorized=vectorized)
    return _with_mode(result, mode)


def bootstrap_report(
    report: EvaluationReport,
    mode: str = "strict",
    metric: str | MetricFn = "micro_f1",
    *,
    other: EvaluationReport | None = None,
    samples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 1,
    vectorized: bool = True,
) -> BootstrapResult:
    """Bootstrap interval of ``metric`` for one mode of ``report`` (or of its difference to ``other``)."""
    if other is None:
        counts, counts_b = report[mode].counts, None
    else:
        counts, counts_b = _aligned(report[mode], other[mode])
    result = bootstrap(
        counts,
        metric,
        counts_b=counts_b,
        samples=samples,
        confidence=confidence,
        seed=seed,
        vectorized=vectorized,
    )
    return _with_mode(result, mode)


def _with_mode(result: _R, mode: str) -> _R:
    return replace(result, mode=mode)
