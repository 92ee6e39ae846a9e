"""The ``audit`` section of ``summary.json``: residual flags, detector agreement and the review order.

Built from the per-document reports (``report.jsonl`` lines, each with its ``audit``); everything in it
is a count, a label, a detector name, a score or a document's display id.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

#: documents listed under ``review_first``
REVIEW_FIRST = 20
#: a document whose risk reaches this is counted as needing review
RISK_THRESHOLD = 10.0
#: lower edges of the risk histogram's bins (the last bin is open)
RISK_BINS = (0.0, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0)


class AuditCollector:
    """Accumulates document reports (``add``), then gives the run's audit section (``summary``)."""

    def __init__(self) -> None:
        self.flags_per_kind: Counter[str] = Counter()
        self.spans_per_label: Counter[str] = Counter()
        self.spans_per_detector: Counter[str] = Counter()
        self.fallbacks: Counter[str] = Counter()
        self.detector_pairs: Counter[str] = Counter()
        self.agreed = 0
        self.spans = 0
        self.top: list[tuple[float, str, int]] = []  # heap of the riskiest (risk, negated id order, flags)
        self.histogram = [0] * len(RISK_BINS)
        self.audited = 0
        self.risk_sum = 0.0
        self.risk_max = 0.0

    def add(self, report: Mapping[str, Any]) -> None:
        replacements = list(report.get("replacements", ()))
        for f in report.get("fields", ()):
            replacements.extend(f.get("replacements", ()))
        for r in replacements:
            self.spans += 1
            self.spans_per_label[r["label"]] += 1
            detectors = sorted(set(str(r["source"]).split("+")))
            for name in detectors:
                self.spans_per_detector[name] += 1
            if len(detectors) > 1:
                self.agreed += 1
                for a, b in itertools.combinations(detectors, 2):
                    self.detector_pairs[f"{a}+{b}"] += 1
            if r.get("note"):
                self.fallbacks[f"{r['operator']}: {r['note']}"] += 1
        audit = report.get("audit")
        if audit:
            self.flags_per_kind.update(audit.get("flags_per_kind", {}))
            n = sum(audit.get("flags_per_kind", {}).values())
            risk = float(audit.get("risk", 0.0))
            self.audited += 1
            self.risk_sum += risk
            self.risk_max = max(self.risk_max, risk)
            self.histogram[max(i for i, edge in enumerate(RISK_BINS) if risk >= edge)] += 1
            item = (risk, str(report.get("id")), n)
            if len(self.top) < REVIEW_FIRST:
                heapq.heappush(self.top, item)
            elif item > self.top[0]:
                heapq.heapreplace(self.top, item)

    def summary(self) -> dict[str, Any]:
        ranked = sorted(self.top, key=lambda t: (-t[0], t[1]))
        over = sum(c for edge, c in zip(RISK_BINS, self.histogram, strict=True) if edge >= RISK_THRESHOLD)
        return {
            "documents_audited": self.audited,
            "flags": sum(self.flags_per_kind.values()),
            "flags_per_kind": dict(sorted(self.flags_per_kind.items())),
            "documents_over_threshold": over,
            "risk_threshold": RISK_THRESHOLD,
            "risk_mean": round(self.risk_sum / self.audited, 3) if self.audited else None,
            "risk_max": self.risk_max if self.audited else None,
            "risk_histogram": {
                f">={edge:g}": count for edge, count in zip(RISK_BINS, self.histogram, strict=True)
            },
            "spans": self.spans,
            "spans_per_label": dict(sorted(self.spans_per_label.items())),
            "spans_per_detector": dict(sorted(self.spans_per_detector.items())),
            "detector_agreement": {
                "spans_found_by_several": self.agreed,
                "share": round(self.agreed / self.spans, 4) if self.spans else None,
                "pairs": dict(sorted(self.detector_pairs.items())),
            },
            "operator_fallbacks": dict(sorted(self.fallbacks.items())),
            "review_first": [
                {"id": doc_id, "risk": risk, "flags": n} for risk, doc_id, n in ranked if risk > 0
            ],
        }


def summarize(reports: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The audit section for these document reports."""
    collector = AuditCollector()
    for report in reports:
        collector.add(report)
    return collector.summary()
