"""TP/FP/FN counts and the scores computed from them.

Convention used everywhere in clinideid: a ratio whose denominator is 0 is 0 (precision with no
prediction, recall with no gold item, F1 with neither). So an empty system scores P = R = F1 = 0 against a
non-empty gold, and two empty annotations score 0, not 1 or NaN.

Micro scores pool the counts of every label (and document); macro scores average the per-label scores
over the labels that occur in the gold or the system output (labels with TP + FP + FN > 0).

The vectorised metrics (``METRICS``) take counts shaped ``(..., n_labels, 3)`` (last axis TP, FP, FN)
and return an array shaped ``(...)``: the significance tests call them on thousands of resamples at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from clinideid.errors import ConfigError

TP, FP, FN = 0, 1, 2


def safe_div(num: float, den: float) -> float:
    """``num / den``, or 0.0 when ``den`` is 0."""
    return float(num) / float(den) if den else 0.0


@dataclass(frozen=True, slots=True)
class Counts:
    """True positives, false positives and false negatives of one label (or of everything)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def support(self) -> int:
        """Number of gold items."""
        return self.tp + self.fn

    @property
    def predicted(self) -> int:
        """Number of system items."""
        return self.tp + self.fp

    @property
    def precision(self) -> float:
        return safe_div(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return safe_div(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        # 2TP / (2TP + FP + FN) equals 2PR / (P + R) whenever P + R > 0, and is 0 otherwise
        return safe_div(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    @property
    def empty(self) -> bool:
        return self.tp == 0 and self.fp == 0 and self.fn == 0

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.tp, self.fp, self.fn)

    def to_dict(self) -> dict[str, float | int]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "support": self.support,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


def sum_counts(items: Iterable[Counts]) -> Counts:
    total = Counts()
    for c in items:
        total = total + c
    return total


@dataclass(frozen=True, slots=True)
class Scores:
    """Precision, recall and F1 of an average (micro or macro)."""

    precision: float
    recall: float
    f1: float

    def to_dict(self) -> dict[str, float]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}


def micro_scores(per_label: Mapping[str, Counts]) -> Scores:
    total = sum_counts(per_label.values())
    return Scores(total.precision, total.recall, total.f1)


def macro_scores(per_label: Mapping[str, Counts]) -> Scores:
    """Unweighted mean over labels seen in the gold or the system (0 when there is none)."""
    seen = [c for c in per_label.values() if not c.empty]
    if not seen:
        return Scores(0.0, 0.0, 0.0)
    n = len(seen)
    return Scores(
        sum(c.precision for c in seen) / n,
        sum(c.recall for c in seen) / n,
        sum(c.f1 for c in seen) / n,
    )


# ---- vectorised metrics over count arrays shaped (..., n_labels, 3) ----------------------------------------


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _micro(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    total = np.asarray(counts, dtype=np.float64).sum(axis=-2)
    return total[..., TP], total[..., FP], total[..., FN]


def micro_precision(counts: np.ndarray) -> np.ndarray:
    tp, fp, _ = _micro(counts)
    return _div(tp, tp + fp)


def micro_recall(counts: np.ndarray) -> np.ndarray:
    tp, _, fn = _micro(counts)
    return _div(tp, tp + fn)


def micro_f1(counts: np.ndarray) -> np.ndarray:
    tp, fp, fn = _micro(counts)
    return _div(2 * tp, 2 * tp + fp + fn)


def _macro(per_label: np.ndarray, counts: np.ndarray) -> np.ndarray:
    seen = np.asarray(counts).sum(axis=-1) > 0
    n_seen = seen.sum(axis=-1)
    return _div(np.where(seen, per_label, 0.0).sum(axis=-1), n_seen)


def macro_precision(counts: np.ndarray) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    return _macro(_div(c[..., TP], c[..., TP] + c[..., FP]), c)


def macro_recall(counts: np.ndarray) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    return _macro(_div(c[..., TP], c[..., TP] + c[..., FN]), c)


def macro_f1(counts: np.ndarray) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    return _macro(_div(2 * c[..., TP], 2 * c[..., TP] + c[..., FP] + c[..., FN]), c)


MetricFn = Callable[[np.ndarray], "np.ndarray | float"]

METRICS: dict[str, MetricFn] = {
    "micro_f1": micro_f1,
    "micro_precision": micro_precision,
    "micro_recall": micro_recall,
    "macro_f1": macro_f1,
    "macro_precision": macro_precision,
    "macro_recall": macro_recall,
}


def get_metric(metric: str | MetricFn) -> tuple[str, MetricFn]:
    """A metric and its name, from a name in ``METRICS`` or a callable."""
    if callable(metric):
        return getattr(metric, "__name__", "custom"), metric
    try:
        return metric, METRICS[metric]
    except KeyError:
        raise ConfigError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}") from None
