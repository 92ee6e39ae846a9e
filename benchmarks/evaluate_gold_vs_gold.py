"""MEDDOCAN dev gold scored against itself (every metric must be 1), then timings of the significance tests.

The second system for the significance test is a perturbed copy of the gold (seeded): about 10% of the
spans dropped, 5% relabelled and 5% shortened by one character. Run from anywhere:

    python benchmarks/evaluate_gold_vs_gold.py [MEDDOCAN_DIR] [--shuffles 9999] [--seed 1]

MEDDOCAN_DIR defaults to ``../shared/corpora/meddocan`` next to the repository; its ``dev`` folder is used.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from clinideid.document import Document, Span
from clinideid.evaluate import (
    MODES,
    bootstrap_report,
    compare_reports,
    evaluate,
    format_bootstrap,
    format_significance,
)
from clinideid.formats import ReadReport, read_corpus

DEFAULT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "meddocan"


def perturb(docs: list[Document], seed: int) -> list[Document]:
    rng = random.Random(seed)
    labels = sorted({s.label for d in docs for s in d.spans})
    out = []
    for doc in docs:
        spans: list[Span] = []
        for s in doc.spans:
            r = rng.random()
            if r < 0.10:
                continue  # dropped
            if r < 0.15:
                spans.append(Span(s.start, s.end, rng.choice(labels)))
            elif r < 0.20 and s.end - s.start > 1:
                spans.append(Span(s.start, s.end - 1, s.label))
            else:
                spans.append(Span(s.start, s.end, s.label, fragments=s.fragments))
        out.append(doc.with_spans(spans))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("meddocan", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--shuffles", type=int, default=9999)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    dev = args.meddocan / "dev"
    if not dev.is_dir():
        print(f"MEDDOCAN dev folder not found: {dev}", file=sys.stderr)
        return 2

    start = time.perf_counter()
    gold = read_corpus(dev, "brat", report=ReadReport())
    print(
        f"read {len(gold)} documents, {sum(len(d.spans) for d in gold)} spans in {time.perf_counter() - start:.2f}s"
    )

    start = time.perf_counter()
    report = evaluate(gold, gold, scheme="meddocan")
    elapsed = time.perf_counter() - start
    print(report.format_table())
    print(f"gold vs gold, {len(MODES)} modes: {elapsed:.2f}s")
    perfect = all(
        s.precision == s.recall == s.f1 == 1.0 for r in report.results.values() for s in (r.micro, r.macro)
    )
    print(f"every micro and macro P/R/F1 equals 1: {perfect}")

    system = perturb(gold, args.seed)
    start = time.perf_counter()
    perturbed = evaluate(gold, system, scheme="meddocan", modes="strict")
    print(
        f"\nperturbed copy scored in {time.perf_counter() - start:.2f}s: strict micro F1 "
        f"{perturbed['strict'].micro.f1:.4f}"
    )

    start = time.perf_counter()
    test = compare_reports(report, perturbed, "strict", "micro_f1", shuffles=args.shuffles, seed=args.seed)
    art_time = time.perf_counter() - start
    print(format_significance([test]))
    print(
        f"approximate randomization, {args.shuffles} shuffles over {test.documents} documents: {art_time:.3f}s"
    )

    start = time.perf_counter()
    test_macro = compare_reports(
        report, perturbed, "strict", "macro_f1", shuffles=args.shuffles, seed=args.seed
    )
    print(f"same with macro F1 (p = {test_macro.p_value:.4g}): {time.perf_counter() - start:.3f}s")

    start = time.perf_counter()
    intervals = [
        bootstrap_report(perturbed, "strict", samples=args.bootstrap, seed=args.seed),
        bootstrap_report(report, "strict", other=perturbed, samples=args.bootstrap, seed=args.seed),
    ]
    boot_time = time.perf_counter() - start
    print(format_bootstrap(intervals))
    print(f"bootstrap, 2 x {args.bootstrap} samples: {boot_time:.3f}s")
    return 0 if perfect else 1


if __name__ == "__main__":
    sys.exit(main())
