"""Ablation grid of the neural tagger on MEDDOCAN (train -> dev), in the layout of the CEDI paper.

    python benchmarks/neural_experiments.py [--corpora ../shared/corpora] [--out runs/neural_experiments]
        [--variants baseline +context +affix +attention all] [--seeds 1 2 3] [--epochs 6] [--jobs 2]
        [--window 200] [--overlap 20] [--windows 100 200 400] [--shuffles 9999] [--markdown table.md]

Variants: ``baseline`` (characters + words + BiLSTM-CRF), ``+context`` (n-gram context embeddings),
``+affix``, ``+attention`` and ``all`` (the three blocks together) make the default grid; ``+rules`` and
``+affix+rules`` add the Spanish rule engine's spans as token inputs (hybrid); ``+charlm`` and
``+affix+rules+charlm`` add contextual string embeddings from the character LMs in
``runs/charlm/es-train`` (``benchmarks/pretrain_charlm.py --language es-train``). Every (variant, window, epochs, seed)
run trains on MEDDOCAN train with a fixed epoch budget (no early stop), keeps the epoch with the best dev
strict micro F1, and runs in its own process with one torch thread (``--jobs`` runs at a time). Each run
leaves ``<key>.json`` (metrics) and ``preds/<key>.jsonl`` (dev predictions, clinideid JSONL) in the
output folder; a finished run is not repeated, so an interrupted grid resumes where it stopped.

``--windows 100 200 400`` adds the baseline at those sliding-window sizes (tokens) for the window-size
effect; ``--windows`` alone (no ``--variants``) runs only that.

The table gives, per variant, mean ± sample std over the seeds found of dev strict P/R/F1, binary token
recall, training seconds per epoch, inference tokens/s, the cost of the variant (seconds per epoch relative
to the baseline), and a paired approximate randomization test (document-level swaps, strict micro F1) of
the variant's seed-1 dev predictions against the baseline's. Nothing here reads a MEDDOCAN test split, and
nothing printed or logged contains document text. The prediction files do hold dev text: keep the output
folder out of version control (``/runs/`` is ignored).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from run_grid import mean_std  # noqa: E402

CHARLM = {d: str(REPO / "runs" / "charlm" / "es-train" / d) for d in ("forward", "backward")}
VARIANTS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "+context": {"context": True},
    "+affix": {"affix": True},
    "+attention": {"attention": True},
    "all": {"context": True, "affix": True, "attention": True},
    # beyond the CEDI layout: the rule engine's spans as token inputs (hybrid)
    "+rules": {"rules": {"type": "rules", "language": "es"}},
    "+affix+rules": {"affix": True, "rules": {"type": "rules", "language": "es"}},
    # contextual string embeddings from character LMs trained on MEDDOCAN train texts only
    # (python benchmarks/pretrain_charlm.py --language es-train: the LMs never read a dev text)
    "+charlm": {"charlm": CHARLM},
    "+affix+rules+charlm": {"affix": True, "rules": {"type": "rules", "language": "es"}, "charlm": CHARLM},
}
CEDI_VARIANTS = ["baseline", "+context", "+affix", "+attention", "all"]
SIGNIFICANCE_SEED = 1  # the seed whose dev predictions are compared with the baseline's

log = logging.getLogger("neural_experiments")


@dataclass(frozen=True)
class Run:
    variant: str
    window: int
    seed: int

    def key(self, epochs: int) -> str:
        safe = self.variant.replace("+", "plus_")
        return f"{safe}__w{self.window}__e{epochs}__s{self.seed}"


# -- one run (child process) -------------------------------------------------------------------------------


def run_one(run: Run, args: argparse.Namespace) -> None:
    """Train, select on dev, time inference, save metrics JSON and dev predictions (atomically)."""
    import torch

    from clinideid.detect.neural.tagger import NeuralModel
    from clinideid.formats import write_corpus
    from clinideid.models import TrainingData
    from clinideid.text import tokenize
    from clinideid.train.config import parse_train_config
    from clinideid.train.data import read_training_corpus
    from clinideid.train.neural import train_neural

    torch.set_num_threads(1)
    train = read_training_corpus(args.corpora / "meddocan/train", "brat", "meddocan", "canonical")
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    if args.max_docs:  # smoke tests only: the numbers of a cut corpus are not comparable
        train, dev = train[: args.max_docs], dev[: args.max_docs]
    neural: dict[str, Any] = {
        "char": True,
        "word": True,
        "affix": False,
        "context": False,
        "attention": False,
        **VARIANTS[run.variant],
        "epochs": args.epochs,
        "patience": args.epochs,  # a fixed budget: select the epoch on dev, never stop early
        "threads": 1,
    }
    config = parse_train_config(
        {
            "model": "neural",
            "label_scheme": "BIOES",
            "window_size": run.window,
            "window_overlap": min(args.overlap, run.window - 1),
            "neural": neural,
        }
    )
    key = run.key(args.epochs)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.out / "models" / key if args.keep_models else Path(tmp) / "m"
        result = train_neural(
            train,
            dev,
            config,
            out_dir=model_dir,
            name=key,
            seed=run.seed,
            language="es",
            training_data=TrainingData(description="MEDDOCAN train", licence="CC BY 4.0"),
        )
        model = NeuralModel.load(model_dir, batch_size=32)
        n_tokens = sum(len(tokenize(d.text)) for d in dev)
        start = time.perf_counter()
        predicted = model.predict_spans(dev)
        inference_seconds = time.perf_counter() - start
    preds_dir = args.out / "preds"
    preds_dir.mkdir(parents=True, exist_ok=True)
    partial = preds_dir / f".{key}.jsonl.partial"
    write_corpus([d.with_spans(s) for d, s in zip(dev, predicted, strict=True)], partial, "jsonl")
    partial.replace(preds_dir / f"{key}.jsonl")

    strict = result.dev_report["strict"].micro
    epoch_seconds = [h["train_seconds"] for h in result.history]
    out = {
        "variant": run.variant,
        "window": run.window,
        "overlap": min(args.overlap, run.window - 1),
        "seed": run.seed,
        "epochs": args.epochs,
        "config": config.model_dump(mode="json"),
        "train_documents": len(train),
        "dev_documents": len(dev),
        "best_epoch": result.best_epoch,
        "history": result.history,
        "dev_strict": {"precision": strict.precision, "recall": strict.recall, "f1": strict.f1},
        "dev_token_binary_recall": result.dev_report["token_binary"].micro.recall,
        "train_seconds_per_epoch": sum(epoch_seconds) / max(len(epoch_seconds), 1),
        "dev_tokens": n_tokens,
        "inference_tokens_per_second": n_tokens / inference_seconds,
        "total_seconds": result.seconds,
        "peak_memory_mb": result.peak_memory_mb,
        "predictions": f"preds/{key}.jsonl",
    }
    tmp_json = args.out / f".{key}.json.partial"
    tmp_json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    tmp_json.replace(args.out / f"{key}.json")


# -- the grid (parent process) -----------------------------------------------------------------------------


def plan(args: argparse.Namespace) -> list[Run]:
    runs = [Run(v, args.window, s) for v in args.variants for s in args.seeds]
    for w in args.windows or ():
        for s in args.window_seeds or args.seeds[:1]:
            if Run("baseline", w, s) not in runs:
                runs.append(Run("baseline", w, s))
    return runs


def child_command(run: Run, args: argparse.Namespace) -> list[str]:
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "--corpora",
        str(args.corpora),
        "--out",
        str(args.out),
        "--epochs",
        str(args.epochs),
        "--overlap",
        str(args.overlap),
        "--max-docs",
        str(args.max_docs),
        *(["--keep-models"] if args.keep_models else []),
        "--run-one",
        run.variant,
        str(run.window),
        str(run.seed),
    ]


def run_grid(runs: Sequence[Run], args: argparse.Namespace) -> list[Run]:
    """Run the missing runs, ``args.jobs`` at a time, each in its own process; returns the failed ones."""
    from run_grid import run_grid as run_commands

    ordered = sorted(runs, key=lambda r: -len(VARIANTS[r.variant]))  # the slowest runs first: less idle tail
    by_key = {r.key(args.epochs): r for r in ordered}
    failed = run_commands({k: child_command(r, args) for k, r in by_key.items()}, args.out, args.jobs)
    return [by_key[k] for k in failed]


def load_results(runs: Sequence[Run], args: argparse.Namespace) -> dict[Run, dict[str, Any]]:
    out = {}
    for r in runs:
        path = args.out / f"{r.key(args.epochs)}.json"
        if path.exists():
            out[r] = json.loads(path.read_text(encoding="utf-8"))
    return out


def significance(
    pairs: Sequence[tuple[Run, Run]], results: dict[Run, dict[str, Any]], args: argparse.Namespace
) -> dict[Run, Any]:
    """AR test (strict micro F1) of each ``(run, reference)`` pair, on the saved dev predictions."""
    from clinideid.evaluate import compare_reports, evaluate
    from clinideid.formats import read_corpus
    from clinideid.train.data import read_training_corpus

    pairs = [(r, b) for r, b in pairs if r in results and b in results]
    if not pairs:
        return {}
    gold = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    reports: dict[Run, Any] = {}

    def report(run: Run) -> Any:
        if run not in reports:
            system = list(read_corpus(args.out / results[run]["predictions"], "jsonl"))
            ids = {d.id for d in system}  # all of dev, unless a smoke test cut it (--max-docs)
            reports[run] = evaluate([g for g in gold if g.id in ids], system, modes=("strict",))
        return reports[run]

    return {
        r: compare_reports(report(r), report(b), "strict", "micro_f1", shuffles=args.shuffles, seed=1)
        for r, b in pairs
    }


def test_cells(test: Any) -> str:
    return f"{test.difference * 100:+.2f} | {test.p_value:.4f}" if test else "– | –"


def table(
    results: dict[Run, dict[str, Any]], args: argparse.Namespace, window: int, variants: list[str]
) -> str:
    base = Run("baseline", window, SIGNIFICANCE_SEED)
    tests = significance(
        [(Run(v, window, SIGNIFICANCE_SEED), base) for v in variants if v != "baseline"], results, args
    )
    base_speed = [
        v["train_seconds_per_epoch"] for r, v in results.items() if r == Run("baseline", window, r.seed)
    ]
    rows = [
        "| variant | seeds | epochs | strict P | strict R | strict F1 | token binary R | s/epoch | cost vs baseline "
        "| inference tok/s | ΔF1 vs baseline (seed 1) | AR p |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for variant in variants:
        runs = sorted(
            (r for r in results if r.variant == variant and r.window == window), key=lambda r: r.seed
        )
        if not runs:
            continue
        res = [results[r] for r in runs]
        speed = [v["train_seconds_per_epoch"] for v in res]
        cost = f"{statistics.fmean(speed) / statistics.fmean(base_speed):.2f}×" if base_speed else "–"
        rows.append(
            f"| {variant} | {','.join(str(r.seed) for r in runs)} | {res[0]['epochs']} "
            f"| {mean_std([v['dev_strict']['precision'] for v in res])} "
            f"| {mean_std([v['dev_strict']['recall'] for v in res])} "
            f"| {mean_std([v['dev_strict']['f1'] for v in res])} "
            f"| {mean_std([v['dev_token_binary_recall'] for v in res])} "
            f"| {mean_std(speed, 0, 1.0)} | {cost} "
            f"| {mean_std([v['inference_tokens_per_second'] for v in res], 0, 1.0)} "
            f"| {test_cells(tests.get(Run(variant, window, SIGNIFICANCE_SEED)))} |"
        )
    return "\n".join(rows)


def window_table(results: dict[Run, dict[str, Any]], args: argparse.Namespace) -> str:
    """The baseline at each ``--windows`` size, tested (seed 1) against the baseline at ``--window``."""
    windows = args.windows
    ref = Run("baseline", args.window, SIGNIFICANCE_SEED)
    tests = significance(
        [(Run("baseline", w, SIGNIFICANCE_SEED), ref) for w in windows if w != args.window], results, args
    )
    rows = [
        "| window (tokens) | seeds | epochs | best epoch | strict P | strict R | strict F1 | token binary R "
        f"| s/epoch | inference tok/s | ΔF1 vs window {args.window} (seed 1) | AR p |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in windows:
        runs = sorted((r for r in results if r.variant == "baseline" and r.window == w), key=lambda r: r.seed)
        if not runs:
            continue
        res = [results[r] for r in runs]
        rows.append(
            f"| {w} | {','.join(str(r.seed) for r in runs)} | {res[0]['epochs']} "
            f"| {','.join(str(v['best_epoch']) for v in res)} "
            f"| {mean_std([v['dev_strict']['precision'] for v in res])} "
            f"| {mean_std([v['dev_strict']['recall'] for v in res])} "
            f"| {mean_std([v['dev_strict']['f1'] for v in res])} "
            f"| {mean_std([v['dev_token_binary_recall'] for v in res])} "
            f"| {mean_std([v['train_seconds_per_epoch'] for v in res], 0, 1.0)} "
            f"| {mean_std([v['inference_tokens_per_second'] for v in res], 0, 1.0)} "
            f"| {test_cells(tests.get(Run('baseline', w, SIGNIFICANCE_SEED)))} |"
        )
    return "\n".join(rows)


def history_table(results: dict[Run, dict[str, Any]]) -> str:
    """Dev strict F1 after every epoch, one row per run: shows how far from convergence the budget stops."""
    epochs = max(len(v["history"]) for v in results.values())
    head = " | ".join(f"ep {i}" for i in range(1, epochs + 1))
    rows = [f"| run | {head} | best |", "|---|" + "---|" * (epochs + 1)]
    for r in sorted(results, key=lambda r: (r.window, list(VARIANTS).index(r.variant), r.seed)):
        v = results[r]
        f1 = [f"{h['dev_strict_f1'] * 100:.2f}" for h in v["history"]]
        f1 += [""] * (epochs - len(f1))
        rows.append(f"| {r.variant} w{r.window} s{r.seed} | {' | '.join(f1)} | {v['best_epoch']} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "neural_experiments")
    ap.add_argument("--variants", nargs="*", choices=list(VARIANTS), default=None)
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--epochs", type=int, default=6, help="fixed epoch budget per run (no early stop)")
    ap.add_argument("--jobs", type=int, default=2, help="runs at a time (one torch thread each)")
    ap.add_argument("--window", type=int, default=200, help="tokens per sliding window for the variant grid")
    ap.add_argument("--overlap", type=int, default=20)
    ap.add_argument("--windows", nargs="+", type=int, default=None, help="window sizes for the baseline")
    ap.add_argument("--window-seeds", nargs="+", type=int, default=None, help="default: the first seed")
    ap.add_argument("--shuffles", type=int, default=9999, help="approximate randomization shuffles")
    ap.add_argument("--markdown", type=Path, default=None, help="also write the tables to this file")
    ap.add_argument(
        "--report-only", action="store_true", help="print the tables of cached runs; train nothing"
    )
    ap.add_argument("--keep-models", action="store_true", help="keep each run's model in <out>/models/")
    ap.add_argument("--max-docs", type=int, default=0, help="smoke test: first N train and dev documents")
    ap.add_argument("--run-one", nargs=3, metavar=("VARIANT", "WINDOW", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.run_one:
        variant, window, seed = args.run_one
        if variant not in VARIANTS:
            ap.error(f"unknown variant {variant!r}")
        run_one(Run(variant, int(window), int(seed)), args)
        return
    if args.variants is None:
        args.variants = [] if args.windows else list(CEDI_VARIANTS)
    if args.epochs < 1 or args.jobs < 1:
        ap.error("--epochs and --jobs must be positive")
    runs = plan(args)
    failed = [] if args.report_only else run_grid(runs, args)
    results = load_results(runs, args)
    if not results:
        log.error("no finished runs in %s", args.out)
        sys.exit(1)
    parts = []
    if args.variants:
        parts += [
            f"### Variants (window {args.window}, {args.epochs} epochs)",
            "",
            table(results, args, args.window, args.variants),
        ]
    if args.windows:
        parts += [
            "",
            f"### Window size (baseline, {args.epochs} epochs)",
            "",
            window_table(results, args),
        ]
    parts += ["", "### Dev strict F1 (%) per epoch", "", history_table(results)]
    text = "\n".join(parts) + "\n"
    sys.stdout.write(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    if failed:
        log.error("%d run(s) failed: %s", len(failed), ", ".join(r.key(args.epochs) for r in failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
