"""How well the residual-risk audit points at PHI left in de-identified output, and how much it flags.

Usage (from the repository root)::

    .venv/bin/python benchmarks/residual_audit.py                       # en de it ru, 10% of gold left in
    .venv/bin/python benchmarks/residual_audit.py --drop 0.2 --languages en de --json audit.json

For each challenge note (``../shared/corpora/challenge/<lang>.jsonl``, a development set) three outputs are
made with the language's default operators and a fixed test key:

- **planted leaks**: every gold span is replaced except a random ``--drop`` share of them (seeded), which
  stay in clear; the audit (``clinideid.audit.scan``, surrogates excluded) runs on the output. Reported:
  the share of left-in gold spans that a flag overlaps, among all flags and among the top-ranked ones
  (score >= ``--top-score``), and the share of leak-holding notes in the first ``--review`` of the ranking;
- **clean**: every gold span replaced: flags per 1,000 characters (all, top-ranked) = the audit's noise;
- **pipeline**: the default pipeline's own output: its true leaks (gold spans no detected span overlaps)
  and how many the audit flagged.

Only counts are printed; no text of any note.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from clinideid.audit.residual import Flag, risk_score, scan
from clinideid.document import Document, Span
from clinideid.pipeline import Deidentifier
from clinideid.transform.apply import Replacement, apply_operators

KEY = b"residual-audit-benchmark-key-0123456789"
DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "challenge"


def _shift(pos: int, replacements: list[Replacement]) -> int:
    """Where original offset ``pos`` (outside every replaced span) lies in the output text."""
    return pos + sum((r.new_end - r.new_start) - (r.end - r.start) for r in replacements if r.end <= pos)


def _rewrite(deid: Deidentifier, doc: Document, spans: list[Span]) -> tuple[str, list[Replacement]]:
    return apply_operators(
        doc,
        spans,
        deid.operator_for,
        {"key": KEY, "scope_id": f"document:{doc.id}", "language": doc.language},
    )


def _caught(leaks: list[tuple[int, int]], flags: list[Flag], min_score: float = 0.0) -> int:
    return sum(any(f.start < b and a < f.end and f.score >= min_score for f in flags) for a, b in leaks)


def _audit(text: str, language: str, replacements: list[Replacement]) -> list[Flag]:
    return scan(text, language, [(r.new_start, r.new_end) for r in replacements])


def run_language(
    lang: str, corpus: Path, drop: float, top_score: float, review: float, seed: int
) -> dict[str, Any]:
    deid = Deidentifier.for_language(lang, KEY)
    rng = random.Random(seed)
    c: Counter[str] = Counter()
    ranking: list[tuple[float, bool]] = []
    for line in (corpus / f"{lang}.jsonl").read_text("utf-8").splitlines():
        if not line.strip():
            continue
        data = json.loads(line)
        gold = sorted((Span(s["start"], s["end"], s["label"]) for s in data["spans"]), key=lambda s: s.start)
        doc = Document(data["id"], data["text"], lang)
        c["chars"] += len(doc.text)
        c["notes"] += 1
        # planted leaks
        left = [s for s in gold if rng.random() < drop]
        kept = [s for s in gold if s not in left]
        text, reps = _rewrite(deid, doc, kept)
        leaks = [(_shift(s.start, reps), _shift(s.start, reps) + (s.end - s.start)) for s in left]
        flags = _audit(text, lang, reps)
        c["planted"] += len(leaks)
        c["planted_caught"] += _caught(leaks, flags)
        c["planted_caught_top"] += _caught(leaks, flags, top_score)
        ranking.append((risk_score(flags, len(text)), bool(leaks)))
        # clean
        text, reps = _rewrite(deid, doc, gold)
        flags = _audit(text, lang, reps)
        c["clean_flags"] += len(flags)
        c["clean_flags_top"] += sum(f.score >= top_score for f in flags)
        # the pipeline's own output
        result = deid.deidentify(doc)
        true_leaks = [s for s in gold if not any(d.start < s.end and s.start < d.end for d in result.spans)]
        spans_out = [
            (_shift(s.start, result.replacements), _shift(s.start, result.replacements) + s.end - s.start)
            for s in true_leaks
        ]
        flags = _audit(result.text, lang, result.replacements)
        c["pipeline_leaks"] += len(true_leaks)
        c["pipeline_leaks_caught"] += _caught(spans_out, flags)
        c["pipeline_flags"] += len(flags)
    ranking.sort(key=lambda t: -t[0])
    n_review = max(1, round(review * len(ranking)))
    with_leaks = sum(has for _, has in ranking)

    def share(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    return {
        "language": lang,
        "notes": c["notes"],
        "planted_leaks": c["planted"],
        "planted_caught_any_flag": share(c["planted_caught"], c["planted"]),
        "planted_caught_top_flags": share(c["planted_caught_top"], c["planted"]),
        f"leaky_notes_in_first_{round(100 * review)}pct": share(
            sum(has for _, has in ranking[:n_review]), min(n_review, with_leaks)
        ),
        "clean_flags_per_1k_chars": round(1000 * c["clean_flags"] / c["chars"], 2),
        "clean_top_flags_per_1k_chars": round(1000 * c["clean_flags_top"] / c["chars"], 2),
        "clean_flags_per_note": round(c["clean_flags"] / c["notes"], 1),
        "pipeline_true_leaks": c["pipeline_leaks"],
        "pipeline_leaks_flagged": share(c["pipeline_leaks_caught"], c["pipeline_leaks"]),
        "pipeline_flags_per_1k_chars": round(1000 * c["pipeline_flags"] / c["chars"], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--languages", nargs="+", default=["en", "de", "it", "ru"])
    parser.add_argument("--corpus-dir", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--drop", type=float, default=0.1, help="share of gold spans left in clear")
    parser.add_argument(
        "--top-score", type=float, default=0.5, help="flags at least this strong are top-ranked"
    )
    parser.add_argument("--review", type=float, default=0.5, help="share of notes a reviewer reads first")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not args.corpus_dir.is_dir():
        print(f"challenge corpus not found at {args.corpus_dir}; pass --corpus-dir", file=sys.stderr)
        return 2
    rows = [
        run_language(lang, args.corpus_dir, args.drop, args.top_score, args.review, args.seed)
        for lang in args.languages
    ]
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
