"""Score the Spanish rule pack on MEDDOCAN and measure its speed.

Usage (from the repository root)::

    .venv/bin/python benchmarks/rules_meddocan.py                      # dev split, the default corpus path
    .venv/bin/python benchmarks/rules_meddocan.py --split train --json out.json
    .venv/bin/python benchmarks/rules_meddocan.py --corpus /path/to/meddocan --repeat 5

Reports token-level binary precision/recall/F1 (every token of a gold span must be found, labels
ignored), strict entity scores per canonical label and per i2b2 category (gold MEDDOCAN labels mapped to
canonical ones through ``labels/meddocan.yaml``; TERRITORIO maps to CITY, so the pack's ZIP spans are
scored as CITY here), and throughput in MB of UTF-8 text per second on one core (best of ``--repeat``
runs, pack compilation excluded). The MEDDOCAN test split is never read. No document text is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

from clinideid.detect.rules import RuleDetector
from clinideid.document import Document
from clinideid.evaluate.evaluator import evaluate
from clinideid.formats import ReadReport, read_corpus

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "meddocan"
# the corpus says TERRITORIO for ZIP codes and cities alike; the pack tells them apart
PACK_TO_MEDDOCAN_VIEW = {"ZIP": "CITY", "STATE": "CITY", "LOCATION_OTHER": "CITY"}


def _load(corpus: Path, split: str) -> list[Document]:
    if split == "test":
        sys.exit("refusing to read the MEDDOCAN test split")
    with contextlib.suppress(ImportError):
        import clinideid.formats.brat  # noqa: F401  (registers the codec if the package does not yet)
    return read_corpus(corpus / split, "brat", report=ReadReport())


def _detect(detector: RuleDetector, docs: list[Document], repeat: int) -> tuple[list[Document], float]:
    best = float("inf")
    out: list[Document] = []
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        found = detector.detect(docs)
        best = min(best, time.perf_counter() - t0)
        out = [d.with_spans(spans) for d, spans in zip(docs, found, strict=True)]
    return out, best


def _view(docs: list[Document]) -> list[Document]:
    return [
        d.with_spans(s.with_(label=PACK_TO_MEDDOCAN_VIEW.get(s.label, s.label)) for s in d.spans)
        for d in docs
    ]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help="MEDDOCAN folder with train/ and dev/"
    )
    ap.add_argument("--split", default="dev", choices=["train", "dev"])
    ap.add_argument("--pack", default="es", help="pack name or YAML path (default: es)")
    ap.add_argument("--repeat", type=int, default=3, help="timing runs (best is reported)")
    ap.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = ap.parse_args(argv)

    gold = _load(args.corpus, args.split)
    detector = RuleDetector(pack=args.pack)
    system, seconds = _detect(detector, gold, args.repeat)
    system = _view(system)
    size_mb = sum(len(d.text.encode("utf-8")) for d in gold) / 1e6

    token = evaluate(gold, system, level="binary", modes=["token_binary"], scheme="meddocan")
    strict_sub = evaluate(gold, system, level="subcategory", modes=["strict"], scheme="meddocan")
    strict_cat = evaluate(gold, system, level="category", modes=["strict"], scheme="meddocan")

    tb = token.results["token_binary"]
    result = {
        "split": args.split,
        "documents": len(gold),
        "megabytes": round(size_mb, 3),
        "seconds": round(seconds, 3),
        "mb_per_second": round(size_mb / seconds, 3),
        "token_binary": {
            "precision": round(tb.micro.precision, 4),
            "recall": round(tb.micro.recall, 4),
            "f1": round(tb.micro.f1, 4),
            **tb.total.to_dict(),
        },
        "strict_micro": {k: round(v, 4) for k, v in strict_sub.results["strict"].micro.to_dict().items()},
        "strict_by_label": {
            lab: c.to_dict() for lab, c in sorted(strict_sub.results["strict"].per_label().items())
        },
        "strict_by_category": {
            lab: c.to_dict() for lab, c in sorted(strict_cat.results["strict"].per_label().items())
        },
    }
    _print(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), "utf-8")
    return result


def _print(r: dict) -> None:
    tb = r["token_binary"]
    print(f"MEDDOCAN {r['split']}: {r['documents']} documents, {r['megabytes']} MB")
    print(f"speed: {r['mb_per_second']} MB/s ({r['seconds']} s, one core)")
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


if __name__ == "__main__":
    main()
