"""Cross-lingual training with an Italian target: synthetic Italian notes, English synthetic or MEDDOCAN source.

    python benchmarks/cross_lingual_it.py [--source en-synth|meddocan] [--target-sizes 300 50] [--seeds 1 2]
        [--epochs 15] [--source-epochs 6] [--jobs 2] [--out runs/cross_lingual_it] [--markdown FILE]

Italian has no annotated clinical corpus here, so the target data are ``clinideid synth`` notes: per seed
``s``, the first N (``--target-sizes``, nested) of ``generate("it", max(sizes), seed=1000 + s)`` train and
``generate("it", 100, seed=9000)`` (one fixed set) selects the epoch. Sources: ``en-synth`` (per seed
``generate("en", --source-notes, seed=2000 + s)``, epoch on ``generate("en", 100, seed=9001)``) or
``meddocan`` (MEDDOCAN train, epoch on MEDDOCAN dev). The strategies are those of
``benchmarks/cross_lingual.py``: ``target``, ``source`` (zero-shot: no Italian data, not even for the
epoch), ``mixed`` (source + Italian train, epoch on the Italian dev) and ``source_then_target``
(``train_neural(init_from=...)`` from the cached source model of the same seed). The network is the same
language-independent tagger (characters, words, affixes, BiLSTM-CRF, 100-token windows).

Every model is scored on the Italian challenge notes (``../shared/corpora/challenge/it.jsonl``, a
development set: nothing here trains or tunes on it) alone and combined with the Italian rules (the
``hybrid`` detector, strategy ``union``), next to the Italian rules alone: category-level strict P/R/F1,
binary token P/R, per-category F1, and paired approximate randomization (9,999 shuffles) of each system
against the rules alone on category strict F1 and on binary token recall. Children save only predicted
offsets and labels (``<out>/pred/``); the parent scores them. Nothing printed holds document text.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from cross_lingual import NEURAL  # noqa: E402
from run_grid import done, load_results, mean_std, run_grid, save_result  # noqa: E402

SOURCES = ("en-synth", "meddocan")
STRATEGIES = ("target", "source", "mixed", "source_then_target")
DEV_NOTES = 100
SHUFFLES = 9999
log = logging.getLogger("cross_lingual_it")


def key(source: str, strategy: str, size: int, seed: int) -> str:
    """Run key; the zero-shot source model reads no Italian, so its key has no target size."""
    if strategy == "target":
        return f"target__n{size}__s{seed}"
    if strategy == "source":
        return f"{source}__source__s{seed}"
    return f"{source}__{strategy}__n{size}__s{seed}"


def italian(sizes: Sequence[int], size: int, seed: int) -> tuple[list, list]:
    """(train, dev) Italian synthetic notes: the first ``size`` of a seeded set, and the fixed dev set."""
    from clinideid.synth import generate

    train = generate("it", max(sizes), seed=1000 + seed)[:size]
    return train, generate("it", DEV_NOTES, seed=9000)


def source_data(args: argparse.Namespace, seed: int) -> tuple[list, list]:
    from clinideid.synth import generate
    from clinideid.train.data import read_training_corpus

    if args.source == "en-synth":
        return generate("en", args.source_notes, seed=2000 + seed), generate("en", DEV_NOTES, seed=9001)
    train = read_training_corpus(args.corpora / "meddocan/train", "brat", "meddocan", "canonical")
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    return train, dev


def challenge(args: argparse.Namespace) -> list:
    from clinideid.formats import ReadReport, read_corpus

    return read_corpus(args.corpora / "challenge/it.jsonl", "jsonl", report=ReadReport())


def spans_json(spans: Sequence) -> list[list[Any]]:
    """Offsets and labels only (no text): what the parent needs to score."""
    return [[s.start, s.end, s.label] for s in spans]


def save_predictions(out: Path, run_key: str, docs: Sequence, by_system: dict[str, list]) -> None:
    pred = out / "pred"
    pred.mkdir(parents=True, exist_ok=True)
    data = {
        name: {d.id: spans_json(s) for d, s in zip(docs, spans, strict=True)}
        for name, spans in by_system.items()
    }
    tmp = pred / f".{run_key}.json.partial"
    tmp.write_text(json.dumps(data) + "\n", encoding="utf-8")
    tmp.replace(pred / f"{run_key}.json")


def run_one(strategy: str, size: int, seed: int, args: argparse.Namespace) -> None:
    import torch

    from clinideid.detect.hybrid import HybridDetector
    from clinideid.detect.neural.tagger import NeuralDetector
    from clinideid.train.config import parse_train_config
    from clinideid.train.neural import train_neural

    torch.set_num_threads(1)
    reads_source = strategy in ("source", "mixed")
    config = parse_train_config(
        {
            "model": "neural",
            "label_scheme": "BIOES",
            "window_size": 100,
            "window_overlap": 20,
            "neural": {**NEURAL, "epochs": args.source_epochs if reads_source else args.epochs},
        }
    )
    run_key = key(args.source, strategy, size, seed)
    source_dir = args.out / "models" / key(args.source, "source", size, seed)
    init_from = None
    it_train, it_dev = italian(args.target_sizes, size, seed)
    if strategy == "source":
        train, dev = source_data(args, seed)
    elif strategy == "mixed":
        train, dev = [*source_data(args, seed)[0], *it_train], it_dev
    elif strategy == "source_then_target":
        if not (source_dir / "model.json").exists():
            raise SystemExit(f"the source model {source_dir} is missing: run the source strategy first")
        train, dev, init_from = it_train, it_dev, source_dir
    else:
        train, dev = it_train, it_dev
    gold = challenge(args)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = source_dir if strategy == "source" else Path(tmp) / "m"
        result = train_neural(
            train, dev, config, out_dir=model_dir, name=run_key, seed=seed, language="it", init_from=init_from
        )
        model = NeuralDetector(model_dir)
        start = time.perf_counter()
        alone = model.detect(gold)
        tag_seconds = time.perf_counter() - start
        hybrid = HybridDetector(rules={"type": "rules", "language": "it"}, models=[model], strategy="union")
        union = hybrid.detect(gold)
    save_predictions(args.out, run_key, gold, {"model": alone, "rules+model": union})
    save_result(
        args.out,
        run_key,
        {
            "source": args.source if strategy != "target" else None,
            "strategy": strategy,
            "target_size": size if strategy != "source" else 0,
            "seed": seed,
            "train_documents": len(train),
            "dev_documents": len(dev),
            "best_epoch": result.best_epoch,
            "history": result.history,
            "train_seconds": result.seconds,
            "challenge_tag_seconds": tag_seconds,
            "peak_memory_mb": result.peak_memory_mb,
        },
    )


# ---- scoring (parent process) ----------------------------------------------------------------------------


def with_predictions(gold: Sequence, predictions: dict[str, list[list[Any]]]) -> list:
    from clinideid.document import Span

    return [d.with_spans([Span(s, e, lab) for s, e, lab in predictions.get(d.id, [])]) for d in gold]


def score(gold: Sequence, system: Sequence) -> tuple[dict[str, Any], Any]:
    """Figures of one system on the challenge notes, and its evaluation report (for significance)."""
    from clinideid.evaluate import evaluate

    report = evaluate(gold, system, level="category", modes=["strict", "token_binary"])
    strict, token = report["strict"].micro, report["token_binary"].micro
    return {
        "category_strict": {"precision": strict.precision, "recall": strict.recall, "f1": strict.f1},
        "token_binary": {"precision": token.precision, "recall": token.recall, "f1": token.f1},
        "category_f1_per_label": {k: round(v.f1, 4) for k, v in report["strict"].per_label().items()},
    }, report


def significance(report: Any, rules_report: Any) -> dict[str, float]:
    """Approximate randomization p-values against the rules alone (strict F1, token recall)."""
    from clinideid.evaluate.significance import compare_reports

    return {
        "p_strict_f1": compare_reports(report, rules_report, "strict", "micro_f1", shuffles=SHUFFLES).p_value,
        "p_token_recall": compare_reports(
            report, rules_report, "token_binary", "micro_recall", shuffles=SHUFFLES
        ).p_value,
    }


def score_all(args: argparse.Namespace, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Score the rules alone and every finished run (model alone, rules + model) on the challenge notes."""
    from clinideid.detect.base import build_detector

    gold = challenge(args)
    rules = build_detector({"type": "rules", "language": "it"})
    rules_figures, rules_report = score(
        gold, [d.with_spans(s) for d, s in zip(gold, rules.detect(gold), strict=True)]
    )
    scored: dict[str, dict[str, Any]] = {"rules": {"rules": rules_figures}}
    for run_key, meta in load_results(args.out, keys).items():
        predictions = json.loads((args.out / "pred" / f"{run_key}.json").read_text(encoding="utf-8"))
        scored[run_key] = {"meta": meta}
        for system, spans in predictions.items():
            figures, report = score(gold, with_predictions(gold, spans))
            scored[run_key][system] = {**figures, **significance(report, rules_report)}
    return scored


def pvalues(values: Sequence[float]) -> str:
    return "/".join(f"{p:.3f}" if p >= 0.001 else "<.001" for p in values)


def table(scored: dict[str, dict[str, Any]], rows: Sequence[tuple[str, list[str]]]) -> str:
    """One line per (setting, system): mean ± sd over seeds, p-values per seed against the rules alone."""
    lines = [
        "| setting | system | seeds | cat. strict P | cat. strict R | cat. strict F1 | token P | token R "
        "| NAME F1 | DATE F1 | LOCATION F1 | ID F1 | p F1 vs rules | p token R vs rules | train min |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rules = scored["rules"]["rules"]
    lines.append(line("Italian rules", "rules", [rules], "–", "–", "–", "–"))
    for setting, keys in rows:
        runs = [scored[k] for k in keys if k in scored]
        if not runs:
            continue
        seeds = ",".join(str(r["meta"]["seed"]) for r in runs)
        minutes = mean_std([r["meta"]["train_seconds"] / 60 for r in runs], 1, 1.0)
        for system in ("model", "rules+model"):
            res = [r[system] for r in runs]
            lines.append(
                line(setting, system, res, seeds, pvalues([r["p_strict_f1"] for r in res]),
                     pvalues([r["p_token_recall"] for r in res]), minutes)
            )  # fmt: skip
    return "\n".join(lines)


def line(
    setting: str, system: str, res: list[dict[str, Any]], seeds: str, p_f1: str, p_rec: str, minutes: str
) -> str:
    def m(get: Any) -> str:
        return mean_std([get(r) for r in res])

    def cat(name: str) -> str:
        return m(lambda r: r["category_f1_per_label"].get(name, 0.0))

    return (
        f"| {setting} | {system} | {seeds} | {m(lambda r: r['category_strict']['precision'])} "
        f"| {m(lambda r: r['category_strict']['recall'])} | {m(lambda r: r['category_strict']['f1'])} "
        f"| {m(lambda r: r['token_binary']['precision'])} | {m(lambda r: r['token_binary']['recall'])} "
        f"| {cat('NAME')} | {cat('DATE')} | {cat('LOCATION')} | {cat('ID')} | {p_f1} | {p_rec} | {minutes} |"
    )


def plan(args: argparse.Namespace) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(first wave, second wave) of (strategy, target size): continued training waits for its source."""
    first: list[tuple[str, int]] = []
    second: list[tuple[str, int]] = []
    if "source" in args.strategies or "source_then_target" in args.strategies:
        first.append(("source", 0))
    for size in args.target_sizes:
        for strategy in ("target", "mixed"):
            if strategy in args.strategies:
                first.append((strategy, size))
        if "source_then_target" in args.strategies:
            second.append(("source_then_target", size))
    return first, second


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "cross_lingual_it")
    ap.add_argument("--source", choices=SOURCES, default="en-synth")
    ap.add_argument("--source-notes", type=int, default=600, help="English synthetic notes (en-synth)")
    ap.add_argument("--target-sizes", nargs="+", type=int, default=[300, 50])
    ap.add_argument("--strategies", nargs="+", choices=STRATEGIES, default=list(STRATEGIES))
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=15, help="epochs of the runs that read only Italian")
    ap.add_argument("--source-epochs", type=int, default=6, help="epochs of the runs that read the source")
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="write every score (no text) to this file")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--run-one", nargs=3, metavar=("STRATEGY", "SIZE", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.run_one:
        run_one(args.run_one[0], int(args.run_one[1]), int(args.run_one[2]), args)
        return

    def command(strategy: str, size: int, seed: int) -> list[str]:
        return [
            sys.executable, str(Path(__file__).resolve()), "--corpora", str(args.corpora), "--out", str(args.out),
            "--source", args.source, "--source-notes", str(args.source_notes),
            "--target-sizes", *map(str, args.target_sizes), "--epochs", str(args.epochs),
            "--source-epochs", str(args.source_epochs), "--run-one", strategy, str(size), str(seed),
        ]  # fmt: skip

    first, second = plan(args)
    failed: list[str] = []
    if not args.report_only:
        grid = {key(args.source, st, n, s): command(st, n, s) for st, n in first for s in args.seeds}
        failed += run_grid(grid, args.out, args.jobs)
        ready = [s for s in args.seeds if done(args.out, key(args.source, "source", 0, s))]
        grid = {key(args.source, st, n, s): command(st, n, s) for st, n in second for s in ready}
        failed += run_grid(grid, args.out, args.jobs)
    rows = [("zero-shot " + args.source, [key(args.source, "source", 0, s) for s in args.seeds])]
    for size in args.target_sizes:
        rows.append((f"target only, it {size}", [key(args.source, "target", size, s) for s in args.seeds]))
        for strategy in ("mixed", "source_then_target"):
            rows.append(
                (
                    f"{strategy} {args.source} + it {size}",
                    [key(args.source, strategy, size, s) for s in args.seeds],
                )
            )
    scored = score_all(args, [k for _, keys in rows for k in keys])
    text = table(scored, rows)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(scored, indent=1) + "\n", encoding="utf-8")
    if failed:
        print(json.dumps({"failed": failed}))
        sys.exit(1)


if __name__ == "__main__":
    main()
