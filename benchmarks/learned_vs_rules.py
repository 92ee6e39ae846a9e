"""Rules alone vs learned models on the challenge notes, per language (en, de, it, ru).

For each language, on ``../shared/corpora/challenge/<lang>.jsonl`` (a development set: scored here, never
trained on; ``adapt`` reads the notes' TEXT only, their labels are never used):

- ``rules``: the language's default pipeline (``Deidentifier.for_language``);
- ``synth``: a CRF with rule features trained on synthetic notes only, combined with the rules per label
  (chosen on held-back synthetic notes) -- ``clinideid.train.synthetic.train_synthetic_crf``, the model
  ``scripts/build_models.py --only <lang>`` builds;
- ``adapted``: ``clinideid adapt`` run on the challenge notes' text (silver labels from the default
  pipeline + the same synthetic notes, ``--model crf``, a time budget: one grid point);
- optionally ``adapted-neural`` (``--neural LANG``): ``adapt --model neural --semi charlm|cvt``.

Scores: token binary P/R/F1, entity strict P/R/F1 (binary level: labels ignored), strict F1 per gold label
(subcategory level), and the paired approximate randomization test (document-level swaps) of each
learned system against ``rules`` on token binary precision, recall and F1 and on strict F1.

    nice -n 10 .venv/bin/python benchmarks/learned_vs_rules.py --json learned.json --markdown
    nice -n 10 .venv/bin/python benchmarks/learned_vs_rules.py --languages en --systems --neural en --epochs 3

One thread (crfsuite is single-threaded; torch set to one thread). No note text is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from clinideid.config import parse_config
from clinideid.document import Document
from clinideid.evaluate import evaluate
from clinideid.evaluate.significance import compare_reports
from clinideid.formats import read_corpus
from clinideid.pipeline import Deidentifier

DEFAULT_CORPUS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "challenge"
LANGUAGES = ("en", "de", "it", "ru")
KEY = hashlib.sha256(b"benchmark").digest()
#: (mode, metric) pairs tested between each learned system and the rules
TESTS = (
    ("token_binary", "micro_precision"),
    ("token_binary", "micro_recall"),
    ("token_binary", "micro_f1"),
    ("strict", "micro_f1"),
)


def _no_sentences(_doc_id: str, _text: str) -> int:
    return 1


def detect(deid: Deidentifier, gold: list[Document], language: str) -> tuple[list[Document], float]:
    t0 = time.perf_counter()
    out = []
    for doc in gold:
        spans, _ = deid.detect(Document(doc.id, doc.text, language))
        out.append(doc.with_spans(spans))
    return out, time.perf_counter() - t0


def score(gold: list[Document], system: list[Document]) -> dict[str, Any]:
    binary = evaluate(gold, system, level="binary", modes=["token_binary", "strict"])
    sub = evaluate(gold, system, level="subcategory", modes=["strict"], sentence_counter=_no_sentences)
    summary: dict[str, Any] = {}
    for mode in ("token_binary", "strict"):
        m = binary[mode].micro
        summary[mode] = {"p": round(m.precision, 4), "r": round(m.recall, 4), "f1": round(m.f1, 4)}
    gold_labels = {s.label for d in gold for s in d.spans}
    summary["per_label_strict_f1"] = {
        lab: round(c.f1, 4) for lab, c in sorted(sub["strict"].per_label().items()) if lab in gold_labels
    }
    return {"summary": summary, "report": binary}


def significance(a: Any, b: Any, shuffles: int) -> dict[str, Any]:
    """AR test of ``a`` (a learned system) vs ``b`` (rules) for each of ``TESTS``."""
    out = {}
    for mode, metric in TESTS:
        res = compare_reports(a, b, mode=mode, metric=metric, shuffles=shuffles, seed=1)
        out[f"{mode}/{metric}"] = {"difference": round(res.difference, 4), "p": round(res.p_value, 4)}
    return out


def run_language(language: str, args: argparse.Namespace, tmp: Path, say: Any) -> dict[str, Any]:
    from clinideid.adapt import AdaptOptions, adapt
    from clinideid.train.synthetic import pipeline_with, train_synthetic_crf

    gold = read_corpus(args.corpus_dir / f"{language}.jsonl", "jsonl")
    result: dict[str, Any] = {"language": language, "notes": len(gold), "systems": {}, "seconds": {}}
    systems: dict[str, Any] = {}

    rules, secs = detect(Deidentifier.for_language(language, KEY), gold, language)
    systems["rules"] = score(gold, rules)
    result["seconds"]["rules_detect"] = round(secs, 1)
    say(f"{language}: rules scored")

    if "synth" in args.systems:
        t0 = time.perf_counter()
        synth = train_synthetic_crf(language, tmp / f"{language}-synth", notes=args.synthetic, seed=args.seed)
        result["seconds"]["synth_train"] = round(time.perf_counter() - t0, 1)
        result["synth_choice"] = synth.detector["per_label"]
        deid = Deidentifier(parse_config(pipeline_with(language, synth.detector)), KEY)
        system, secs = detect(deid, gold, language)
        systems["synth"] = score(gold, system)
        result["seconds"]["synth_detect"] = round(secs, 1)
        say(f"{language}: synthetic-only model trained and scored")

    # adapt reads the challenge notes' text only: labels are dropped before it sees them
    notes = tmp / f"{language}-notes.jsonl"
    notes.write_text(
        "".join(
            json.dumps({"id": f"n{k}", "text": d.text}, ensure_ascii=False) + "\n" for k, d in enumerate(gold)
        ),
        encoding="utf-8",
    )
    variants = [("adapted", "crf", None)] if "adapted" in args.systems else []
    if language in args.neural:
        variants.append(("adapted-neural", "neural", args.semi))
    for name, model, semi in variants:
        t0 = time.perf_counter()
        opts = AdaptOptions(
            notes,
            language,
            tmp / f"{language}-{name}",
            synthetic=args.synthetic,
            seed=args.seed,
            time_budget_minutes=args.adapt_budget,
        )
        if model != "crf":
            opts.model, opts.semi, opts.epochs = model, semi, args.epochs
        report = adapt(opts)
        result["seconds"][f"{name}_adapt"] = round(time.perf_counter() - t0, 1)
        result[f"{name}_choice"] = {k: v["choice"] for k, v in report["per_label"].items()}
        system, secs = detect(Deidentifier.from_file(opts.out / "pipeline.yaml", KEY), gold, language)
        systems[name] = score(gold, system)
        result["seconds"][f"{name}_detect"] = round(secs, 1)
        say(f"{language}: {name} run and scored")

    for name, sys_res in systems.items():
        result["systems"][name] = sys_res["summary"]
        if name != "rules":
            result["systems"][name]["vs_rules"] = significance(
                sys_res["report"], systems["rules"]["report"], args.shuffles
            )
    return result


def _f(x: float) -> str:
    return f"{x:.3f}"


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "| lang | system | token P | token R | token F1 | strict F1 | Δ token R (p) | Δ token P (p) | Δ strict F1 (p) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        for name, s in res["systems"].items():
            tok, strict = s["token_binary"], s["strict"]
            sig = s.get("vs_rules")

            def cell(key: str, sig: Any = sig) -> str:
                if not sig:
                    return "–"
                return f"{sig[key]['difference']:+.3f} ({sig[key]['p']:.3g})"

            lines.append(
                f"| {res['language']} | {name} | {_f(tok['p'])} | {_f(tok['r'])} | {_f(tok['f1'])} | "
                f"{_f(strict['f1'])} | {cell('token_binary/micro_recall')} | "
                f"{cell('token_binary/micro_precision')} | {cell('strict/micro_f1')} |"
            )
    lines.append("")
    lines.append("Strict F1 per gold label (subcategory level):")
    lines.append("")
    for res in results:
        names = list(res["systems"])
        labels = sorted(res["systems"]["rules"]["per_label_strict_f1"])
        lines.append(f"| {res['language']} label | " + " | ".join(names) + " |")
        lines.append("|---" * (len(names) + 1) + "|")
        for lab in labels:
            vals = [res["systems"][n]["per_label_strict_f1"].get(lab, 0.0) for n in names]
            lines.append(f"| {lab} | " + " | ".join(_f(v) for v in vals) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--languages", nargs="+", default=list(LANGUAGES), choices=LANGUAGES)
    ap.add_argument("--corpus-dir", type=Path, default=DEFAULT_CORPUS_DIR)
    ap.add_argument("--synthetic", type=int, default=1000, help="synthetic notes (train + held back)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shuffles", type=int, default=10000)
    ap.add_argument("--adapt-budget", type=float, default=1.0, help="adapt --time-budget (minutes)")
    ap.add_argument("--neural", nargs="*", default=[], choices=LANGUAGES, help="also adapt --model neural")
    ap.add_argument("--semi", default="charlm", choices=["charlm", "cvt"])
    ap.add_argument("--epochs", type=int, default=3, help="adapt --model neural --epochs")
    ap.add_argument(
        "--systems",
        nargs="*",
        default=["synth", "adapted"],
        choices=["synth", "adapted"],
        help="learned systems besides the rules (and --neural)",
    )
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    start = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="learned-vs-rules-") as tmp:
        for language in args.languages:
            results.append(run_language(language, args, Path(tmp), lambda m: print(m, file=sys.stderr)))
            if args.json:  # written after each language: a long run keeps what it finished
                body = {"args": {k: str(v) for k, v in vars(args).items()}, "results": results}
                args.json.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    print(markdown(results) if args.markdown else json.dumps(results, indent=2))
    print(f"total {time.perf_counter() - start:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
