"""Rules + neural and rules + CRF + neural on MEDDOCAN dev, against the rules + CRF default.

    python benchmarks/neural_hybrid_meddocan.py --neural es-meddocan-neural [--crf es-meddocan-crf]
        [--corpora ../shared/corpora] [--json out.json]

For each learned side (CRF alone, neural alone, CRF + neural merged with the longest span winning) the
script scores the model alone and every hybrid strategy with the Spanish rule pack (``per_label``
cross-fitted on two halves of dev, so no dev leakage), in strict, span and binary token P/R/F1, plus the
inference throughput of each side (characters per second, all threads the process has). Finally it prints
the ``per_label`` choice fitted on the whole of dev for the winning combination (what a pipeline config
would ship). Nothing printed holds document text.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

from clinideid.detect.base import build_detector
from clinideid.detect.hybrid import HybridDetector
from clinideid.evaluate import compare_reports, evaluate
from clinideid.resolve import resolve_spans
from clinideid.train.data import read_training_corpus

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from crf_meddocan import halves, hybrid_scores, scores, show  # noqa: E402


def timed_spans(detector, docs) -> tuple[list, float]:
    start = time.perf_counter()
    spans = detector.detect(docs)
    seconds = time.perf_counter() - start
    return spans, sum(len(d.text) for d in docs) / seconds


def cross_fitted(dev, rules, rule_spans, model_spans) -> list:
    """The ``per_label`` hybrid's output on dev, each half scored with the choice fitted on the other."""
    hybrid = HybridDetector(rules=rules, models=[rules])  # models are not run: spans come from the cache
    cached = {d.id: (r, m) for d, r, m in zip(dev, rule_spans, model_spans, strict=True)}
    hybrid.source_spans = lambda doc: cached[doc.id]
    a, b = halves(dev)
    system = []
    for fit_on, score_on in ((a, b), (b, a)):
        hybrid.fit_per_label(fit_on)
        system.extend(d.with_spans(hybrid.detect_one(d)) for d in score_on)
    return system


def significance(dev, rules, rule_spans, crf_spans, neural_spans, both) -> dict:
    """Approximate randomization (9,999 document swaps, strict micro F1) of the neural systems vs the CRF ones."""
    gold = sorted(dev, key=lambda d: d.id)

    def report(system):
        return evaluate(gold, sorted(system, key=lambda d: d.id), modes=["strict"])

    def alone(spans):
        return [d.with_spans(sp) for d, sp in zip(dev, spans, strict=True)]

    systems = {
        "crf": report(alone(crf_spans)),
        "neural": report(alone(neural_spans)),
        "rules + crf per_label": report(cross_fitted(dev, rules, rule_spans, crf_spans)),
        "rules + neural per_label": report(cross_fitted(dev, rules, rule_spans, neural_spans)),
        "rules + crf+neural per_label": report(cross_fitted(dev, rules, rule_spans, both)),
    }
    out = {}
    for a, b in (
        ("neural", "crf"),
        ("rules + neural per_label", "rules + crf per_label"),
        ("rules + crf+neural per_label", "rules + crf per_label"),
        ("rules + neural per_label", "neural"),
    ):
        test = compare_reports(systems[a], systems[b], "strict", "micro_f1", shuffles=9999, seed=1)
        out[f"{a} vs {b}"] = {"difference": round(test.difference, 4), "p_value": round(test.p_value, 4)}
        print(f"AR test {a} vs {b}: ΔF1 {test.difference * 100:+.2f}, p = {test.p_value:.4f}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--neural", required=True, help="neural model (name or folder)")
    parser.add_argument("--crf", default="es-meddocan-crf", help="CRF model (name or folder)")
    parser.add_argument("--json", type=Path, help="write all numbers to this JSON file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    rules = build_detector({"type": "rules", "language": "es"})
    crf = build_detector({"type": "crf", "model": args.crf})
    neural = build_detector({"type": "neural", "model": args.neural})
    rule_spans, rules_cps = timed_spans(rules, dev)
    crf_spans, crf_cps = timed_spans(crf, dev)
    neural_spans, neural_cps = timed_spans(neural, dev)
    both = [
        resolve_spans([*c, *n], policy="longest").kept for c, n in zip(crf_spans, neural_spans, strict=True)
    ]
    out: dict = {
        "chars_per_second": {"rules": round(rules_cps), "crf": round(crf_cps), "neural": round(neural_cps)}
    }
    print(f"throughput (chars/s): rules {rules_cps:,.0f}, CRF {crf_cps:,.0f}, neural {neural_cps:,.0f}")
    show("rules alone", s := scores(dev, [d.with_spans(sp) for d, sp in zip(dev, rule_spans, strict=True)]))
    out["rules"] = s
    sides = {
        "crf": ([crf], crf_spans),
        "neural": ([neural], neural_spans),
        "crf+neural": ([crf, neural], both),
    }
    best = ("", -1.0)
    for title, (models, model_spans) in sides.items():
        alone = scores(dev, [d.with_spans(sp) for d, sp in zip(dev, model_spans, strict=True)])
        show(f"{title} alone", alone)
        hybrid = hybrid_scores(dev, rules, rule_spans, models[0], model_spans, f"rules + {title}")
        out[title] = {"alone": alone, "hybrid": hybrid}
        f1 = hybrid["per_label"]["strict"]["f1"]
        if f1 > best[1]:
            best = (title, f1)
    out["significance"] = significance(dev, rules, rule_spans, crf_spans, neural_spans, both)
    title = best[0]
    hybrid = HybridDetector(rules=rules, models=sides[title][0])
    cached = {d.id: (r, m) for d, r, m in zip(dev, rule_spans, sides[title][1], strict=True)}
    hybrid.source_spans = lambda doc: cached[doc.id]
    out["best"] = {"side": title, "per_label_on_all_dev": hybrid.fit_per_label(dev)}
    print(f"best: rules + {title} per_label (cross-fitted strict F1 {best[1]:.4f})")
    print(
        f"per_label fitted on all of dev: {json.dumps(out['best']['per_label_on_all_dev'], sort_keys=True)}"
    )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
