"""The hybrid detector: combination strategies, the learned per-label choice, rule spans handed to models."""

from __future__ import annotations

import pytest

from clinideid.detect.base import Detector, build_detector, register_detector
from clinideid.detect.hybrid import HybridDetector
from clinideid.document import Document, Span
from clinideid.errors import ConfigError

TEXT = "Juan Pérez vive en Toledo desde 2019, NHC 12345."
#       0    5    10   15   20   25   30   35   40   45


class _Fixed(Detector):
    """Returns the same spans for every document (a stand-in for rules or a model)."""

    def __init__(self, spans: list[Span], name: str) -> None:
        super().__init__(name)
        self.spans = [s.with_(source=name) for s in spans]
        self.seen_rule_spans: list[Span] | None = None

    def detect_one(self, doc: Document) -> list[Span]:
        return list(self.spans)


class _RuleFeatureModel(_Fixed):
    uses_rules = True

    def detect_one(self, doc: Document, rule_spans=None) -> list[Span]:
        self.seen_rule_spans = rule_spans
        return list(self.spans)


RULES = [Span(0, 4, "PATIENT"), Span(19, 25, "CITY"), Span(42, 47, "IDNUM")]
MODEL = [Span(0, 10, "PATIENT"), Span(32, 36, "DATE"), Span(42, 47, "MEDICALRECORD")]


def _hybrid(strategy: str, **kw) -> HybridDetector:
    return HybridDetector(
        rules=_Fixed(RULES, "rules"), models=[_Fixed(MODEL, "crf")], strategy=strategy, **kw
    )


def _keys(spans):
    return [(s.start, s.end, s.label, s.source) for s in spans]


def test_rules_first():
    got = _hybrid("rules_first").detect_one(Document("d", TEXT))
    assert _keys(got) == [
        (0, 4, "PATIENT", "rules"),
        (19, 25, "CITY", "rules"),
        (32, 36, "DATE", "crf"),
        (42, 47, "IDNUM", "rules"),
    ]


def test_model_first():
    got = _hybrid("model_first").detect_one(Document("d", TEXT))
    assert _keys(got) == [
        (0, 10, "PATIENT", "crf"),
        (19, 25, "CITY", "rules"),
        (32, 36, "DATE", "crf"),
        (42, 47, "MEDICALRECORD", "crf"),
    ]


def test_union_merges_overlaps_and_names_both_sources():
    got = _hybrid("union").detect_one(Document("d", TEXT))
    assert (0, 10, "PATIENT", "crf+rules") in _keys(got)
    assert (32, 36, "DATE", "crf") in _keys(got)
    assert len(got) == 4


def test_per_label_uses_the_configured_source():
    det = _hybrid(
        "per_label",
        per_label={"PATIENT": "rules", "IDNUM": "rules", "MEDICALRECORD": "model"},
        default="model",
    )
    got = _keys(det.detect_one(Document("d", TEXT)))
    # PATIENT and IDNUM from rules only, CITY (not configured) from the default (model: none), DATE from model
    assert (0, 4, "PATIENT", "rules") in got
    assert (32, 36, "DATE", "crf") in got
    assert not any(lab == "CITY" for _, _, lab, _ in got)
    # IDNUM (rules) and MEDICALRECORD (model) overlap: union merges them, the longer/first label wins
    assert any(s == 42 and e == 47 for s, e, _, _ in got)


def test_fit_per_label_picks_the_better_source_and_saves_it():
    gold = Document(
        "d",
        TEXT,
        spans=(Span(0, 10, "PATIENT"), Span(19, 25, "CITY"), Span(32, 36, "DATE"), Span(42, 47, "IDNUM")),
    )
    det = _hybrid("rules_first")
    choice = det.fit_per_label([gold])
    assert choice == {"PATIENT": "model", "CITY": "rules", "DATE": "model", "IDNUM": "rules"}
    assert det.strategy == "per_label"
    spec = det.to_config()
    assert spec["type"] == "hybrid" and spec["strategy"] == "per_label" and spec["per_label"] == choice
    got = {(s.start, s.end, s.label) for s in det.detect_one(gold)}
    assert got == {s.key() for s in gold.spans}


def test_rule_spans_are_handed_to_models_that_use_rule_features():
    model = _RuleFeatureModel(MODEL, "crf")
    det = HybridDetector(rules=_Fixed(RULES, "rules"), models=[model])
    det.detect_one(Document("d", TEXT))
    assert [s.key() for s in model.seen_rule_spans] == [s.key() for s in RULES]


def test_several_models_are_resolved_among_themselves():
    other = _Fixed([Span(0, 15, "PATIENT"), Span(32, 36, "AGE")], "crf2")
    det = HybridDetector(
        rules=_Fixed([], "rules"), models=[_Fixed(MODEL, "crf"), other], strategy="model_first"
    )
    got = _keys(det.detect_one(Document("d", TEXT)))
    assert (0, 15, "PATIENT", "crf2") in got and (0, 10, "PATIENT", "crf") not in got
    assert len([k for k in got if k[0] == 32]) == 1


@register_detector("test_hybrid_fixed")
class _Registered(_Fixed):
    def __init__(self, name: str | None = None) -> None:
        super().__init__([Span(0, 4, "PATIENT")], name or "fixed")


def test_built_from_config():
    det = build_detector(
        {
            "type": "hybrid",
            "rules": {"type": "test_hybrid_fixed", "name": "r"},
            "models": [{"type": "test_hybrid_fixed", "name": "m"}],
            "strategy": "union",
        }
    )
    assert isinstance(det, HybridDetector)
    assert [s.key() for s in det.detect_one(Document("d", TEXT))] == [
        (0, 4, "PATIENT")
    ]  # duplicates collapse


def test_bad_configs():
    with pytest.raises(ConfigError, match="unknown strategy"):
        _hybrid("vote")
    with pytest.raises(ConfigError, match="per_label sources"):
        _hybrid("per_label", per_label={"DATE": "both"})
    with pytest.raises(ConfigError, match="at least one learned model"):
        HybridDetector(rules=_Fixed([], "r"), models=[])
    with pytest.raises(ConfigError, match="rules spec or a language"):
        HybridDetector(models=[_Fixed([], "m")])
    with pytest.raises(ConfigError, match="detector spec"):
        HybridDetector(rules=_Fixed([], "r"), models=[42])
