"""Rules vs NER libraries on the Russian challenge notes: rules, Natasha, Natasha + date/ID regex, hybrid.

Usage (from the repository root)::

    .venv/bin/python benchmarks/russian_ner_comparison.py                    # plain text tables
    .venv/bin/python benchmarks/russian_ner_comparison.py --markdown --json ru_ner.json

The Russian challenge notes (``../shared/corpora/challenge/ru.jsonl``) are a development set: this script
only measures. Four detector set-ups, each run through ``Deidentifier.detect`` (same span resolution):

- ``rules``: the default Russian pipeline (the ``ru`` rule pack);
- ``natasha``: Natasha's news NER alone (``{type: natasha}``: PER, LOC, ORG);
- ``natasha+regex``: Natasha plus the Russian rule pack restricted to the date, identifier and contact
  passes (what a NER model cannot find);
- ``hybrid``: the rules and Natasha together (``{type: hybrid, strategy: union}``).

Reported: token-level binary P/R/F1 and entity strict P/R/F1 at binary level (as ``benchmarks/challenge.py``
reports), entity strict P/R/F1 per category, and token recall per gold label. No note text is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from clinideid.config import PipelineConfig
from clinideid.document import Document
from clinideid.evaluate import evaluate
from clinideid.formats import read_corpus
from clinideid.pipeline import Deidentifier

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "challenge" / "ru.jsonl"
TEST_KEY = hashlib.sha256(b"benchmark").digest()
#: the passes of the ru pack that find dates, identifiers and contacts ("safe" masks eponyms first)
REGEX_PASSES = ["safe", "contact", "domains", "identifiers", "birth_dates", "dates"]
REGEX_CATEGORIES = frozenset({"DATE", "ID", "CONTACT"})

SYSTEMS: dict[str, list[dict[str, Any]] | None] = {
    "rules": None,  # Deidentifier.for_language("ru")
    "natasha": [{"type": "natasha"}],
    "natasha+regex": [{"type": "natasha"}, {"type": "rules", "language": "ru", "passes": REGEX_PASSES}],
    "hybrid": [{"type": "hybrid", "language": "ru", "models": [{"type": "natasha"}], "strategy": "union"}],
}
#: the published figures (token precision / recall) this comparison is set beside
PAPER = {"rules": (0.990, 0.980), "stanza": (0.941, 0.842), "natasha": (0.714, 0.820)}


def _no_sentences(_doc_id: str, _text: str) -> int:
    return 1


def _prf(result: Any) -> dict[str, float | int]:
    t, m = result.total, result.micro
    return {
        "precision": round(m.precision, 4),
        "recall": round(m.recall, 4),
        "f1": round(m.f1, 4),
        "tp": t.tp,
        "fp": t.fp,
        "fn": t.fn,
    }


def build(name: str) -> Deidentifier:
    specs = SYSTEMS[name]
    if specs is None:
        return Deidentifier.for_language("ru", TEST_KEY)
    return Deidentifier(PipelineConfig(language="ru", detectors=specs), key=TEST_KEY)


def run_system(name: str, gold: list[Document]) -> dict[str, Any]:
    deid = build(name)
    deid.detect(Document("warm-up", "Пациент Тестов Т.Т., 12.03.2020.", "ru"))
    cpu0 = time.process_time()
    system = [doc.with_spans(deid.detect(Document(doc.id, doc.text, "ru", doc.metadata))[0]) for doc in gold]
    cpu = time.process_time() - cpu0
    if name == "natasha+regex":  # the restricted passes must only have found dates, IDs and contacts
        from clinideid.labels import canonical

        stray = {s.label for d in system for s in d.spans if s.source == "rules"} - {
            lab for lab in canonical().labels if canonical().category_of(lab) in REGEX_CATEGORIES
        }
        assert not stray, f"regex passes reported other labels: {sorted(stray)}"
    main = evaluate(gold, system, level="binary", modes=["token_binary", "strict"])
    cat = evaluate(gold, system, level="category", modes=["strict"], sentence_counter=_no_sentences)
    per_category = {
        lab: {
            "precision": round(c.precision, 4),
            "recall": round(c.recall, 4),
            "f1": round(c.f1, 4),
            "tp": c.tp,
            "fp": c.fp,
            "fn": c.fn,
        }
        for lab, c in sorted(cat.results["strict"].per_label().items())
    }
    labels = Counter(s.label for d in gold for s in d.spans)
    per_label: dict[str, float] = {}
    for label in sorted(labels, key=lambda lab: (-labels[lab], lab)):
        only = [d.with_spans(s for s in d.spans if s.label == label) for d in gold]
        rep = evaluate(only, system, level="binary", modes=["token_binary"], sentence_counter=_no_sentences)
        per_label[label] = round(rep.results["token_binary"].total.recall, 4)
    return {
        "system": name,
        "token_binary": _prf(main.results["token_binary"]),
        "entity_strict_binary": _prf(main.results["strict"]),
        "per_category_strict": per_category,
        "token_recall_per_label": per_label,
        "gold_spans_per_label": dict(labels),
        "cpu_seconds": round(cpu, 2),
    }


def _table(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        return "\n".join(
            ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(r) + " |" for r in rows]
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    return "\n".join([fmt.format(*header), *(fmt.format(*r) for r in rows)])


def report(results: list[dict[str, Any]], markdown: bool) -> str:
    out = []
    rows = []
    for r in results:
        t, e = r["token_binary"], r["entity_strict_binary"]
        paper = PAPER.get(r["system"])
        rows.append(
            [
                r["system"],
                *(f"{t[k]:.3f}" for k in ("precision", "recall", "f1")),
                *(f"{e[k]:.3f}" for k in ("precision", "recall", "f1")),
                f"{paper[0]:.3f} / {paper[1]:.3f}" if paper else "—",
                f"{r['cpu_seconds']:.1f}",
            ]
        )
    rows.append(["stanza (paper only)", *["—"] * 6, "0.941 / 0.842", "—"])
    header = [
        "system",
        "token P",
        "token R",
        "token F1",
        "entity P",
        "entity R",
        "entity F1",
        "paper token P / R",
        "CPU s",
    ]
    out += ["Token binary and entity strict (binary level)", "", _table(header, rows, markdown), ""]
    cats = sorted({c for r in results for c in r["per_category_strict"]})
    rows = [[c, *(_cat(r, c) for r in results)] for c in cats]
    out += [
        "Entity strict P/R/F1 per category",
        "",
        _table(["category", *(r["system"] for r in results)], rows, markdown),
        "",
    ]
    labels = list(results[0]["token_recall_per_label"])
    counts = results[0]["gold_spans_per_label"]
    rows = [
        [lab, str(counts[lab]), *(f"{r['token_recall_per_label'][lab]:.3f}" for r in results)]
        for lab in labels
    ]
    out += [
        "Token recall per gold label",
        "",
        _table(["label", "spans", *(r["system"] for r in results)], rows, markdown),
    ]
    return "\n".join(out)


def _cat(r: dict[str, Any], c: str) -> str:
    x = r["per_category_strict"].get(c)
    return "—" if x is None else f"{x['precision']:.2f}/{x['recall']:.2f}/{x['f1']:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help="the Russian challenge notes (JSONL)"
    )
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument("--markdown", action="store_true", help="tables in Markdown")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    if not args.corpus.is_file():
        print(f"no corpus at {args.corpus}; pass --corpus", file=sys.stderr)
        return 2
    gold = read_corpus(args.corpus, "jsonl")
    results = [run_system(name, gold) for name in args.systems]
    print(report(results, args.markdown))
    if args.json:
        args.json.write_text(
            json.dumps(
                {"corpus": str(args.corpus), "notes": len(gold), "results": results},
                ensure_ascii=False,
                indent=2,
            ),
            "utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
