"""Score the English rule pack on the Presidio synthetic set (general PII) and measure its speed.

Usage (from the repository root)::

    .venv/bin/python benchmarks/rules_presidio.py                     # both halves, the default path
    .venv/bin/python benchmarks/rules_presidio.py --half tune --json out.json
    .venv/bin/python benchmarks/rules_presidio.py --pack my_en.yaml --repeat 5

The sentences come from templates (``template_id``), so sentences of one template share their wording.
To keep the numbers honest the set is split by template: the pack is tuned only on sentences whose
``template_id`` is even (``tune``) and reported on those whose ``template_id`` is odd (``heldout``).

For each half: token-level binary precision/recall/F1 (every token of a gold span must be found, labels
ignored), strict entity P/R/F1 per canonical label and per i2b2 category (Presidio's entity types mapped
to canonical labels through ``labels/presidio_synth.yaml``), and throughput in MB of UTF-8 text per
second on one core (best of ``--repeat`` runs, pack compilation excluded). No document text is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from clinideid.detect.rules import RuleDetector
from clinideid.document import Document
from clinideid.evaluate import evaluate
from clinideid.formats import ReadReport, read_corpus

DEFAULT_CORPUS = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "corpora"
    / "presidio-synth"
    / "synth_dataset_v2.json"
)
SCHEME = "presidio_synth"
HALVES = {"tune": 0, "heldout": 1}  # template_id % 2


def split_by_template(docs: list[Document]) -> dict[str, list[Document]]:
    """The tuning half (even ``template_id``) and the held-out half (odd ``template_id``)."""
    out: dict[str, list[Document]] = {name: [] for name in HALVES}
    parity_to_half = {parity: name for name, parity in HALVES.items()}
    for doc in docs:
        template = doc.metadata.get("template_id")
        if not isinstance(template, int):
            raise SystemExit(f"document {doc.id!r} has no integer template_id; is this the Presidio set?")
        out[parity_to_half[template % 2]].append(doc)
    return out


def _detect(detector: RuleDetector, docs: list[Document], repeat: int) -> tuple[list[Document], float]:
    best = float("inf")
    out: list[Document] = []
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        found = detector.detect(docs)
        best = min(best, time.perf_counter() - t0)
        out = [d.with_spans(spans) for d, spans in zip(docs, found, strict=True)]
    return out, best


def score_half(name: str, gold: list[Document], detector: RuleDetector, repeat: int) -> dict:
    system, seconds = _detect(detector, gold, repeat)
    size_mb = sum(len(d.text.encode("utf-8")) for d in gold) / 1e6
    token = evaluate(gold, system, level="binary", modes=["token_binary"], scheme=SCHEME)
    sub = evaluate(gold, system, level="subcategory", modes=["strict"], scheme=SCHEME)
    cat = evaluate(gold, system, level="category", modes=["strict"], scheme=SCHEME)
    tb = token.results["token_binary"]
    return {
        "half": name,
        "documents": len(gold),
        "megabytes": round(size_mb, 4),
        "seconds": round(seconds, 4),
        "mb_per_second": round(size_mb / seconds, 3) if seconds else None,
        "token_binary": {
            "precision": round(tb.micro.precision, 4),
            "recall": round(tb.micro.recall, 4),
            "f1": round(tb.micro.f1, 4),
            **tb.total.to_dict(),
        },
        "strict_micro": {k: round(v, 4) for k, v in sub.results["strict"].micro.to_dict().items()},
        "strict_by_label": {lab: c.to_dict() for lab, c in sorted(sub.results["strict"].per_label().items())},
        "strict_by_category": {
            lab: c.to_dict() for lab, c in sorted(cat.results["strict"].per_label().items())
        },
    }


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="synth_dataset_v2.json")
    ap.add_argument("--half", default="both", choices=[*HALVES, "both"])
    ap.add_argument("--pack", default="en", help="pack name or YAML path (default: en)")
    ap.add_argument("--repeat", type=int, default=3, help="timing runs (best is reported)")
    ap.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = ap.parse_args(argv)
    if not args.corpus.is_file():
        sys.exit(f"corpus file {args.corpus} not found; pass --corpus")

    halves = split_by_template(list(read_corpus(args.corpus, "presidio", report=ReadReport())))
    detector = RuleDetector(pack=args.pack)
    names = list(HALVES) if args.half == "both" else [args.half]
    results = [score_half(n, halves[n], detector, args.repeat) for n in names]
    for r in results:
        _print(r)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), "utf-8")
    return results


def _print(r: dict) -> None:
    tb = r["token_binary"]
    parity = "even" if HALVES[r["half"]] == 0 else "odd"
    print(f"Presidio synthetic, {r['half']} half ({parity} template_id): {r['documents']} sentences")
    print(f"speed: {r['mb_per_second']} MB/s ({r['megabytes']} MB in {r['seconds']} s, one core)")
    print(f"token binary: P={tb['precision']:.4f} R={tb['recall']:.4f} F1={tb['f1']:.4f}")
    sm = r["strict_micro"]
    print(f"strict entity (micro): P={sm['precision']:.4f} R={sm['recall']:.4f} F1={sm['f1']:.4f}")
    for title, table in (("label", r["strict_by_label"]), ("category", r["strict_by_category"])):
        print(f"strict entity by {title}:")
        for lab, c in table.items():
            print(
                f"  {lab:15s} P={c['precision']:.3f} R={c['recall']:.3f} F1={c['f1']:.3f} "
                f"(tp={c['tp']} fp={c['fp']} fn={c['fn']})"
            )
    print()


if __name__ == "__main__":
    main()
