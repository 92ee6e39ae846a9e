"""Counts and metrics: the 0/0 = 0 convention, micro vs macro, scalar vs vectorised agreement."""

from __future__ import annotations

import numpy as np
import pytest

from clinideid.evaluate import (
    METRICS,
    Counts,
    macro_f1,
    macro_precision,
    macro_recall,
    macro_scores,
    micro_f1,
    micro_scores,
    safe_div,
)


def test_zero_over_zero_is_zero() -> None:
    assert safe_div(0, 0) == 0.0
    empty = Counts()
    assert (empty.precision, empty.recall, empty.f1) == (0.0, 0.0, 0.0)
    only_fn = Counts(0, 0, 3)  # nothing predicted: precision 0/0 = 0
    assert (only_fn.precision, only_fn.recall, only_fn.f1) == (0.0, 0.0, 0.0)


def test_counts_scores() -> None:
    c = Counts(6, 2, 4)  # P 6/8, R 6/10, F1 12/20
    assert c.precision == pytest.approx(0.75)
    assert c.recall == pytest.approx(0.6)
    assert c.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert c.support == 10 and c.predicted == 8
    assert Counts(1, 2, 3) + Counts(4, 5, 6) == Counts(5, 7, 9)


def test_micro_vs_macro() -> None:
    # A: (9, 1, 0) F1 18/19; B: (0, 1, 1) F1 0; C never seen (ignored by macro)
    # micro: TP 9, FP 2, FN 1 -> P 9/11, R 9/10, F1 18/21
    # macro: P (0.9 + 0) / 2, R (1 + 0) / 2, F1 (18/19) / 2
    per = {"A": Counts(9, 1, 0), "B": Counts(0, 1, 1), "C": Counts()}
    micro = micro_scores(per)
    assert micro.precision == pytest.approx(9 / 11)
    assert micro.recall == pytest.approx(9 / 10)
    assert micro.f1 == pytest.approx(18 / 21)
    macro = macro_scores(per)
    assert macro.precision == pytest.approx(0.45)
    assert macro.recall == pytest.approx(0.5)
    assert macro.f1 == pytest.approx(9 / 19)
    assert macro_scores({}).f1 == 0.0


def test_vectorised_metrics_agree_with_scalar_ones() -> None:
    per = {"A": Counts(9, 1, 0), "B": Counts(0, 1, 1), "C": Counts()}
    arr = np.array([c.as_tuple() for c in per.values()])
    assert float(micro_f1(arr)) == pytest.approx(micro_scores(per).f1)
    assert float(macro_f1(arr)) == pytest.approx(macro_scores(per).f1)
    assert float(macro_precision(arr)) == pytest.approx(macro_scores(per).precision)
    assert float(macro_recall(arr)) == pytest.approx(macro_scores(per).recall)
    batch = np.stack([arr, arr * 2, np.zeros_like(arr)])
    for fn in METRICS.values():
        values = fn(batch)
        assert values.shape == (3,)
        assert values[2] == 0.0
        assert values[0] == pytest.approx(values[1])  # scale-invariant


def test_counts_to_dict() -> None:
    d = Counts(1, 1, 0).to_dict()
    assert d == {
        "tp": 1,
        "fp": 1,
        "fn": 0,
        "support": 1,
        "precision": 0.5,
        "recall": 1.0,
        "f1": pytest.approx(2 / 3),
    }
