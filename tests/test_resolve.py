import itertools

import pytest

from clinideid.document import Span
from clinideid.errors import ConfigError
from clinideid.resolve import resolve_spans


def test_longest_wins():
    spans = [Span(0, 4, "PATIENT", source="rules"), Span(0, 10, "PATIENT", source="crf"), Span(12, 14, "AGE")]
    res = resolve_spans(spans, "longest")
    assert [(s.start, s.end) for s in res.kept] == [(0, 10), (12, 14)]
    assert len(res.dropped) == 1


def test_priority_by_source():
    spans = [Span(0, 4, "DOCTOR", source="rules"), Span(0, 10, "PATIENT", source="crf")]
    res = resolve_spans(spans, "priority", priority=["rules", "crf"])
    assert [s.label for s in res.kept] == ["DOCTOR"]


def test_union_merges_overlaps():
    spans = [Span(0, 4, "PATIENT", source="rules"), Span(2, 10, "PATIENT", source="crf"), Span(20, 22, "AGE")]
    res = resolve_spans(spans, "union")
    assert [(s.start, s.end, s.source) for s in res.kept] == [(0, 10, "crf+rules"), (20, 22, "gold")]


def test_duplicates_collapse_and_unknown_policy():
    spans = [Span(0, 4, "DATE", source="a"), Span(0, 4, "DATE", source="b")]
    assert len(resolve_spans(spans, "longest").kept) == 1
    with pytest.raises(ConfigError):
        resolve_spans(spans, "random")


def test_resolved_spans_never_overlap():
    import random

    rng = random.Random(0)
    for _ in range(200):
        spans = []
        for _ in range(rng.randint(0, 12)):
            a = rng.randint(0, 40)
            spans.append(Span(a, a + rng.randint(1, 8), rng.choice("ABC"), source=rng.choice(["x", "y"])))
        for policy in ("longest", "priority", "union"):
            kept = resolve_spans(spans, policy, priority=["y"]).kept
            for s, t in itertools.pairwise(kept):
                assert s.end <= t.start
            covered = {i for s in spans for i in range(s.start, s.end)}
            if policy == "union":
                assert covered == {i for s in kept for i in range(s.start, s.end)}
