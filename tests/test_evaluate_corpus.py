"""MEDDOCAN dev gold scored against itself: every metric of every mode must be exactly 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinideid.evaluate import MODES, bootstrap_report, compare_reports, evaluate
from clinideid.formats import ReadReport, available_formats, read_corpus

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
DEV = CORPORA / "meddocan" / "dev"

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not DEV.is_dir(), reason="../shared/corpora/meddocan/dev is absent"),
    pytest.mark.skipif("brat" not in available_formats(), reason="the brat codec is not available"),
]


@pytest.fixture(scope="module")
def dev_docs():
    return read_corpus(DEV, "brat", report=ReadReport())


@pytest.mark.parametrize(
    ("level", "scheme"), [("subcategory", None), ("subcategory", "meddocan"), ("category", "meddocan")]
)
def test_meddocan_dev_gold_vs_gold(dev_docs, level, scheme) -> None:
    report = evaluate(dev_docs, dev_docs, level=level, scheme=scheme)
    assert len(report.documents) == len(dev_docs) > 0
    for mode in MODES:
        res = report[mode]
        assert res.total.tp > 0
        assert res.total.fp == res.total.fn == 0, mode
        for scores in (res.micro, res.macro):
            assert (scores.precision, scores.recall, scores.f1) == (1.0, 1.0, 1.0), mode
        for label, counts in res.per_label().items():
            assert counts.f1 == 1.0, (mode, label)
    assert report.leaks.score.score == 0.0
    assert report.leaks.leaked == []
    assert report.confusion.confusions() == []
    assert compare_reports(report, report, "strict", shuffles=99).p_value == 1.0
    ci = bootstrap_report(report, "token", samples=100)
    assert ci.low == ci.high == 1.0
