"""``clinideid adapt`` on stand-in site notes: default pipeline vs the adapted one, on held-out gold notes.

The "site notes" are synthetic notes whose labels are thrown away (a real site's notes cannot be
published); the test notes are further synthetic notes with gold spans, generated with another seed. Both
come from the same generator the adaptation also trains on, so the gain is an optimistic estimate.

    PYTHONPATH=src python benchmarks/adapt_synthetic.py --language it --site-notes 200 --synthetic 1000
"""

from __future__ import annotations

import argparse
import json
import secrets
import tempfile
import time
from pathlib import Path

from clinideid.adapt import AdaptOptions, adapt
from clinideid.evaluate import evaluate
from clinideid.pipeline import Deidentifier
from clinideid.synth import generate


def score(deid: Deidentifier, gold: list) -> dict[str, float]:
    system = [d.with_spans(spans) for d, (spans, _) in zip(gold, deid.detect_batch(gold), strict=True)]
    report = evaluate(gold, system, modes=["strict", "token_binary"])
    return {mode: round(report[mode].micro.f1, 4) for mode in ("strict", "token_binary")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--language", default="it")
    ap.add_argument("--site-notes", type=int, default=200)
    ap.add_argument("--synthetic", type=int, default=1000)
    ap.add_argument("--test-notes", type=int, default=200)
    ap.add_argument("--time-budget", type=float, default=None)
    args = ap.parse_args()
    key = secrets.token_bytes(32)
    test = generate(args.language, args.test_notes, seed=2002)
    with tempfile.TemporaryDirectory() as tmp:
        notes = Path(tmp) / "notes"
        notes.mkdir()
        for k, doc in enumerate(generate(args.language, args.site_notes, seed=1001)):
            (notes / f"{k}.txt").write_text(doc.text, encoding="utf-8")
        start = time.perf_counter()
        report = adapt(
            AdaptOptions(
                notes,
                args.language,
                Path(tmp) / "out",
                synthetic=args.synthetic,
                time_budget_minutes=args.time_budget,
            ),
            progress=print,
        )
        seconds = time.perf_counter() - start
        result = {
            "language": args.language,
            "site_notes": args.site_notes,
            "synthetic": args.synthetic,
            "adapt_seconds": round(seconds, 1),
            "step_seconds": report["step_seconds"],
            "grid_points": report["training"]["grid_points_trained"],
            "default": score(Deidentifier.for_language(args.language, key), test),
            "adapted": score(Deidentifier.from_file(Path(tmp) / "out" / "pipeline.yaml", key), test),
            "choices": {k: v["choice"] for k, v in report["per_label"].items()},
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
