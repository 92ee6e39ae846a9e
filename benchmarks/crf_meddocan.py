"""MEDDOCAN dev numbers for the CRF tagger alone and combined with the rule engine.

    python benchmarks/crf_meddocan.py [--corpora ../shared/corpora] [--model es-meddocan-crf] [--json out.json]

1. **Native labels** (MEDDOCAN subtask 1): a CRF trained on MEDDOCAN train with the 21 native types, (c1, c2)
   chosen on dev with the shipped configuration (``scripts/build_models.py``); entity strict micro P/R/F1,
   span-only (subtask 2 strict) and binary token scores; training time and peak memory.
2. **Canonical labels**: the shipped ``es-meddocan-crf`` (or ``--model``) scored on dev mapped to canonical
   labels; inference throughput in characters per second on one core (features + tagging).
3. **Hybrid** with the Spanish rule pack, every strategy. ``per_label`` is cross-fitted: the per-label choice
   is learned on one half of dev and scored on the other half, and the other way round (no dev leakage).
4. Optionally (``--rule-features``) a CRF trained with rule hits as features (the hybrid feature set).

Steps 1 and 4 train models (minutes on two cores); ``--skip-native`` skips step 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

from clinideid.detect.base import build_detector
from clinideid.detect.crf import CRFDetector
from clinideid.detect.hybrid import STRATEGIES, HybridDetector
from clinideid.document import Document
from clinideid.evaluate import evaluate
from clinideid.models import TrainingData
from clinideid.train.config import parse_train_config
from clinideid.train.crf import peak_memory_mb, train_crf
from clinideid.train.data import read_training_corpus

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from build_models import CONFIG  # noqa: E402  (the shipped configuration)

MODES = ("strict", "span", "token_binary")


def scores(gold: list[Document], system: list[Document]) -> dict[str, dict[str, float]]:
    report = evaluate(gold, system, modes=list(MODES))
    return {
        m: {k: round(getattr(report[m].micro, k), 4) for k in ("precision", "recall", "f1")} for m in MODES
    }


def show(title: str, s: dict[str, dict[str, float]]) -> None:
    cells = "  ".join(
        f"{m} P {v['precision']:.4f} R {v['recall']:.4f} F1 {v['f1']:.4f}" for m, v in s.items()
    )
    print(f"{title:<34} {cells}", flush=True)


def train_bench_crf(
    corpora: Path, workers: int, rule_features: bool = False, keep: Path | None = None
) -> dict:
    label_set = "canonical" if rule_features else "native"
    train = read_training_corpus(corpora / "meddocan/train", "brat", "meddocan", label_set)
    dev = read_training_corpus(corpora / "meddocan/dev", "brat", "meddocan", label_set)
    cfg = dict(CONFIG, workers=workers)
    if rule_features:
        cfg["features"] = dict(cfg["features"], rules=True)
    with tempfile.TemporaryDirectory() as tmp:
        result = train_crf(
            train,
            dev,
            parse_train_config(cfg),
            out_dir=keep or Path(tmp) / "m",
            name="bench",
            language="es",
            label_set="canonical" if rule_features else "meddocan",
            training_data=TrainingData(description="MEDDOCAN train", licence="CC BY 4.0"),
        )
    report = result.dev_report
    return {
        "scores": {
            m: {k: round(getattr(report[m].micro, k), 4) for k in ("precision", "recall", "f1")}
            for m in MODES
        },
        "selected": result.metadata.training_config["selected"],
        "grid": result.grid,
        "training_seconds": round(result.seconds, 1),
        "training_cpu_seconds": round(result.cpu_seconds, 1),
        "peak_memory_mb": round(peak_memory_mb(), 1),
    }


def hybrid_scores(dev, rules, rule_spans, crf, crf_spans, title: str) -> dict:
    """Every hybrid strategy on dev from spans already computed; ``per_label`` cross-fitted on dev halves."""
    cached = {d.id: (r, m) for d, r, m in zip(dev, rule_spans, crf_spans, strict=True)}
    hybrid = HybridDetector(rules=rules, models=[crf])
    hybrid.source_spans = lambda doc: cached[doc.id]  # reuse the spans computed before
    out: dict = {}
    for strategy in STRATEGIES:
        if strategy == "per_label":
            system = []
            choices = []
            a, b = halves(dev)
            for fit_on, score_on in ((a, b), (b, a)):
                choices.append(hybrid.fit_per_label(fit_on))
                system.extend(d.with_spans(hybrid.detect_one(d)) for d in score_on)
            gold = sorted(dev, key=lambda d: d.id)
            system = sorted(system, key=lambda d: d.id)
            out["per_label_choices"] = choices
        else:
            hybrid.strategy = strategy
            gold = dev
            system = [d.with_spans(hybrid.detect_one(d)) for d in dev]
        out[strategy] = s = scores(gold, system)
        show(f"{title} {strategy}", s)
    return out


def halves(docs: list[Document]) -> tuple[list[Document], list[Document]]:
    ordered = sorted(docs, key=lambda d: d.id)
    return ordered[0::2], ordered[1::2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--model", default="es-meddocan-crf", help="canonical CRF model (name or folder)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-native", action="store_true", help="do not train the native-label CRF")
    parser.add_argument("--rule-features", action="store_true", help="also train a CRF with rule features")
    parser.add_argument("--json", type=Path, help="write all numbers to this JSON file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    out: dict = {}

    if not args.skip_native:
        out["native_crf"] = native = train_bench_crf(args.corpora, args.workers)
        show("CRF, native labels (subtask 1)", native["scores"])
        print(
            f"  selected {native['selected']}, training {native['training_seconds']}s wall "
            f"({native['training_cpu_seconds']}s CPU), "
            f"peak memory {native['peak_memory_mb']} MB",
            flush=True,
        )

    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    chars = sum(len(d.text) for d in dev)
    crf = CRFDetector(args.model)
    start = time.process_time()
    crf_spans = crf.detect(dev)
    cpu = time.process_time() - start
    out["canonical_crf"] = s = scores(dev, [d.with_spans(sp) for d, sp in zip(dev, crf_spans, strict=True)])
    out["throughput_chars_per_s"] = round(chars / cpu)
    show(f"CRF {crf.model.name} (canonical)", s)
    print(
        f"  throughput {chars / cpu:,.0f} chars/s on one core ({chars:,} chars, {cpu:.1f}s CPU)", flush=True
    )

    rules = build_detector({"type": "rules", "language": "es"})
    start = time.process_time()
    rule_spans = rules.detect(dev)
    rules_cpu = time.process_time() - start
    out["rules"] = s = scores(dev, [d.with_spans(sp) for d, sp in zip(dev, rule_spans, strict=True)])
    show("rules (es pack)", s)

    out["hybrid"] = hybrid_scores(dev, rules, rule_spans, crf, crf_spans, "hybrid")
    out["hybrid_throughput_chars_per_s"] = round(chars / (cpu + rules_cpu))

    if args.rule_features:
        with tempfile.TemporaryDirectory() as tmp:
            model_dir = Path(tmp) / "rule-features"
            out["rule_feature_crf"] = rf = train_bench_crf(
                args.corpora, args.workers, rule_features=True, keep=model_dir
            )
            show("CRF with rule features (canonical)", rf["scores"])
            print(f"  selected {rf['selected']}, training {rf['training_seconds']}s", flush=True)
            rf_crf = CRFDetector(model_dir)
            rf_spans = [rf_crf.detect_one(d, rule_spans=r) for d, r in zip(dev, rule_spans, strict=True)]
            out["hybrid_rule_features"] = hybrid_scores(
                dev, rules, rule_spans, rf_crf, rf_spans, "hybrid (rule-feat. CRF)"
            )

    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
