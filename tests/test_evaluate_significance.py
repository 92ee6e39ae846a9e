"""Approximate randomization test and bootstrap intervals on synthetic systems."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from clinideid.document import Document, Span
from clinideid.errors import ConfigError
from clinideid.evaluate import (
    METRICS,
    approximate_randomization,
    bootstrap,
    bootstrap_report,
    compare_reports,
    evaluate,
    micro_f1,
)

WORDS = 20


def synthetic_corpus(n_docs: int, misses_per_doc: int, seed: int) -> tuple[list[Document], list[Document]]:
    """Gold: 10 DATE spans on words 0..9 of each document; system misses ``misses_per_doc`` of them."""
    rng = np.random.default_rng(seed)
    text = " ".join(f"w{i:02d}" for i in range(WORDS))
    spans = [Span(4 * i, 4 * i + 3, "DATE") for i in range(10)]
    gold, system = [], []
    for d in range(n_docs):
        keep = sorted(rng.choice(10, size=10 - misses_per_doc, replace=False))
        gold.append(Document(f"doc{d:03d}", text, spans=tuple(spans)))
        system.append(Document(f"doc{d:03d}", text, spans=tuple(spans[i] for i in keep)))
    return gold, system


@pytest.fixture(scope="module")
def reports():
    gold, good = synthetic_corpus(40, misses_per_doc=1, seed=1)
    _, bad = synthetic_corpus(40, misses_per_doc=5, seed=2)
    return evaluate(gold, good, modes="strict"), evaluate(gold, bad, modes="strict"), evaluate(gold, gold)


def test_identical_systems_give_p_one(reports) -> None:
    good, _, _ = reports
    result = compare_reports(good, good, "strict", shuffles=999, seed=3)
    # every shuffle reproduces the observed difference 0, so r = N and p = (N+1)/(N+1)
    assert result.p_value == 1.0
    assert result.difference == 0.0


def test_clearly_better_system_gives_small_p(reports) -> None:
    good, bad, _ = reports
    result = compare_reports(good, bad, "strict", shuffles=999, seed=3)
    # recall 0.9 vs 0.5 on 40 documents: no shuffle comes close, p = 1/(999+1)
    assert result.p_value == pytest.approx(1 / 1000)
    assert result.score_a > result.score_b
    assert result.shuffles == 999 and result.documents == 40
    # the test is symmetric
    assert compare_reports(bad, good, "strict", shuffles=999, seed=3).p_value == result.p_value


def test_matches_the_exact_permutation_test() -> None:
    # with 8 documents all 2^8 swap patterns can be enumerated: the exact two-sided p-value
    rng = np.random.default_rng(7)
    a = rng.integers(0, 6, size=(8, 3, 3))
    b = rng.integers(0, 6, size=(8, 3, 3))
    observed = abs(micro_f1(a.sum(0)) - micro_f1(b.sum(0)))
    extreme = 0
    for pattern in itertools.product([0, 1], repeat=8):
        swap = np.array(pattern, dtype=bool)[:, None, None]
        pa, pb = np.where(swap, b, a).sum(0), np.where(swap, a, b).sum(0)
        extreme += abs(micro_f1(pa) - micro_f1(pb)) >= observed - 1e-12
    exact = extreme / 256
    approx = approximate_randomization(a, b, "micro_f1", shuffles=20000, seed=11)
    assert approx.p_value == pytest.approx(exact, abs=0.015)


def test_seeded_and_reproducible() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 10, size=(30, 4, 3))
    b = rng.integers(0, 10, size=(30, 4, 3))
    r1 = approximate_randomization(a, b, shuffles=2000, seed=5)
    r2 = approximate_randomization(a, b, shuffles=2000, seed=5)
    assert r1 == r2
    assert 0 < r1.p_value <= 1


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_every_builtin_metric_runs(metric) -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 10, size=(20, 5, 3))
    result = approximate_randomization(a, a, metric, shuffles=99)
    assert result.p_value == 1.0
    assert result.metric == metric


def test_custom_metric_vectorised_or_not() -> None:
    def recall_of_label_zero(counts: np.ndarray) -> np.ndarray:
        c = np.asarray(counts, dtype=float)
        tp, fn = c[..., 0, 0], c[..., 0, 2]
        return np.divide(tp, tp + fn, out=np.zeros_like(tp), where=(tp + fn) > 0)

    rng = np.random.default_rng(2)
    a = rng.integers(0, 10, size=(25, 3, 3))
    b = rng.integers(0, 10, size=(25, 3, 3))
    fast = approximate_randomization(a, b, recall_of_label_zero, shuffles=500, seed=9)
    slow = approximate_randomization(a, b, recall_of_label_zero, shuffles=500, seed=9, vectorized=False)
    assert fast.p_value == slow.p_value
    assert fast.metric == "recall_of_label_zero"


def test_metric_with_wrong_output_shape_is_a_clear_error() -> None:
    a = np.ones((5, 2, 3))
    with pytest.raises(ConfigError, match="vectorized=False"):
        approximate_randomization(a, a, lambda c: 0.5, shuffles=10)


def test_bad_arguments() -> None:
    a = np.ones((5, 2, 3))
    with pytest.raises(ConfigError, match="shape"):
        approximate_randomization(a, np.ones((4, 2, 3)))
    with pytest.raises(ConfigError, match="shuffles"):
        approximate_randomization(a, a, shuffles=0)
    with pytest.raises(ConfigError, match="unknown metric"):
        approximate_randomization(a, a, "accuracy")
    with pytest.raises(ConfigError, match="documents, labels, 3"):
        bootstrap(np.ones((5, 2)))
    with pytest.raises(ConfigError, match="confidence"):
        bootstrap(a, confidence=95)
    with pytest.raises(ConfigError, match="zero documents"):
        bootstrap(np.zeros((0, 2, 3)))


def test_fast_enough_for_9999_shuffles_on_250_documents() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 20, size=(250, 30, 3))
    b = rng.integers(0, 20, size=(250, 30, 3))
    start = time.perf_counter()
    approximate_randomization(a, b, "macro_f1", shuffles=9999, seed=1)
    assert time.perf_counter() - start < 5.0


def test_bootstrap_interval_contains_the_estimate(reports) -> None:
    good, bad, _ = reports
    for report in (good, bad):
        ci = bootstrap_report(report, "strict", samples=1000, seed=4)
        assert ci.low <= ci.estimate <= ci.high
        assert ci.estimate == pytest.approx(report["strict"].micro.f1)
        assert ci.high - ci.low < 0.2
        assert ci.mode == "strict"
    # seeded
    assert bootstrap_report(good, samples=200, seed=4) == bootstrap_report(good, samples=200, seed=4)


def test_bootstrap_of_a_difference(reports) -> None:
    good, bad, _ = reports
    ci = bootstrap_report(good, "strict", other=bad, samples=1000, seed=4)
    assert ci.difference
    assert ci.estimate == pytest.approx(good["strict"].micro.f1 - bad["strict"].micro.f1)
    assert 0 < ci.low <= ci.estimate <= ci.high


def test_gold_vs_gold_interval_is_degenerate(reports) -> None:
    _, _, perfect = reports
    for mode in perfect.modes:
        ci = bootstrap_report(perfect, mode, "macro_f1", samples=100, seed=1)
        assert ci.low == ci.estimate == ci.high == 1.0


def test_compare_requires_the_same_documents(reports) -> None:
    good, _, _ = reports
    gold, system = synthetic_corpus(5, 1, seed=1)
    other = evaluate(gold, system, modes="strict")
    with pytest.raises(ConfigError, match="different documents"):
        compare_reports(good, other, "strict", shuffles=10)
