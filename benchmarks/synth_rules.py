"""Score each language's default rule pipeline on generated synthetic notes (``clinideid.synth``).

Usage (from the repository root)::

    .venv/bin/python benchmarks/synth_rules.py                         # 200 notes per language, seed 0
    .venv/bin/python benchmarks/synth_rules.py --languages it,ru --count 500 --seed 3 --json out.json

For each language: ``Deidentifier.for_language(lang).detect`` on ``--count`` generated notes (every style and
document type in turn), scored against the generator's gold spans at token level, labels ignored
(``token_binary``): precision and recall overall and per writing style. No document text is printed. The
notes are the generator's own templates, so the numbers say how the rules cope with each style and with
each country's formats, not how they do on real notes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

from clinideid.document import Document
from clinideid.evaluate import evaluate
from clinideid.pipeline import Deidentifier
from clinideid.synth import LANGUAGES, STYLES, generate

KEY = b"synth-benchmark-key-not-secret!!"


def detect_all(deid: Deidentifier, docs: list[Document]) -> list[Document]:
    return [
        doc.with_spans(spans) for doc, (spans, _dropped) in zip(docs, deid.detect_batch(docs), strict=True)
    ]


def token_scores(gold: list[Document], system: list[Document]) -> dict[str, float | int]:
    result = evaluate(gold, system, level="binary", modes=["token_binary"]).results["token_binary"]
    return {
        "precision": round(result.micro.precision, 4),
        "recall": round(result.micro.recall, 4),
        **result.total.to_dict(),
    }


def score_language(language: str, count: int, seed: int) -> dict:
    gold = generate(language, count, seed)
    deid = Deidentifier.for_language(language, KEY)
    t0 = time.perf_counter()
    system = detect_all(deid, gold)
    seconds = time.perf_counter() - t0
    by_style: dict[str, tuple[list[Document], list[Document]]] = defaultdict(lambda: ([], []))
    for g, s in zip(gold, system, strict=True):
        by_style[g.metadata["style"]][0].append(g)
        by_style[g.metadata["style"]][1].append(s)
    return {
        "language": language,
        "documents": len(gold),
        "seed": seed,
        "seconds": round(seconds, 2),
        "all": token_scores(gold, system),
        "styles": {style: token_scores(*by_style[style]) for style in STYLES if style in by_style},
    }


def markdown(results: list[dict]) -> str:
    head = "| language | all P / R | " + " | ".join(f"{s} P / R" for s in STYLES) + " |"
    rule = "|" + "---|" * (len(STYLES) + 2)
    rows = []
    for r in results:
        cells = [f"{r['all']['precision']:.2f} / {r['all']['recall']:.2f}"]
        for s in STYLES:
            sc = r["styles"].get(s)
            cells.append(f"{sc['precision']:.2f} / {sc['recall']:.2f}" if sc else "-")
        rows.append(f"| {r['language']} | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated (default: all)")
    ap.add_argument("--count", type=int, default=200, help="notes per language (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = ap.parse_args(argv)
    languages = [x.strip() for x in args.languages.split(",") if x.strip()]
    unknown = [x for x in languages if x not in LANGUAGES]
    if unknown:
        sys.exit(f"no synthetic notes for {', '.join(unknown)}; choose from {', '.join(LANGUAGES)}")
    results = []
    for lang in languages:
        r = score_language(lang, args.count, args.seed)
        print(
            f"{lang}: {r['documents']} notes, token P={r['all']['precision']:.3f} R={r['all']['recall']:.3f} "
            f"({r['seconds']} s)",
            flush=True,
        )
        results.append(r)
    print()
    print(markdown(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), "utf-8")
    return results


if __name__ == "__main__":
    main()
