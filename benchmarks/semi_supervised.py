"""Low-resource learning curve on MEDDOCAN: supervised neural tagger vs + char-LM embeddings vs + CVT.

    python benchmarks/semi_supervised.py --charlm runs/charlm/es-train [--fractions 0.1 0.25 0.5 1.0]
        [--methods supervised charlm cvt] [--seeds 1 2 3] [--jobs 2] [--out runs/semi_supervised]

For each training fraction (``clinideid.train.data.subset``: nested, deterministic per seed) and seed, the
neural tagger (characters + words + BiLSTM-CRF, sliding windows of 100 tokens) is trained on that share of
MEDDOCAN train and scored on the whole of MEDDOCAN dev (epoch selected on dev):

- ``supervised``: labelled documents only;
- ``charlm``: + contextual string embeddings from the forward/backward character LMs in ``--charlm``
  (``forward/`` and ``backward/``, trained by ``clinideid pretrain-lm`` on unlabelled text);
- ``cvt``: + Cross-View Training on the unlabelled text (every MEDDOCAN train text, annotations dropped).

The unlabelled text is MEDDOCAN train only (all 500 documents, labels ignored): dev texts stay unseen, so
the dev scores are not transductive. Smaller fractions get more epochs (``ceil(base / sqrt(fraction))``)
with early stopping (patience 4). Each run records dev strict P/R/F1, binary token recall, training time
and peak memory. Nothing printed holds document text.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from run_grid import load_results, mean_std, run_grid, save_result  # noqa: E402

METHODS = ("supervised", "charlm", "cvt")
log = logging.getLogger("semi_supervised")


def key(method: str, fraction: float, seed: int, base_epochs: int) -> str:
    return f"{method}__f{round(fraction * 100):03d}__e{base_epochs}__s{seed}"


def neural_section(method: str, fraction: float, args: argparse.Namespace) -> dict[str, Any]:
    section: dict[str, Any] = {
        "epochs": math.ceil(args.base_epochs / math.sqrt(fraction)),
        "patience": 4,
        "threads": 1,
    }
    if method == "charlm":
        section["charlm"] = {
            "forward": str(args.charlm / "forward"),
            "backward": str(args.charlm / "backward"),
        }
    if method == "cvt":
        section["cvt"] = True
    return section


def run_one(method: str, fraction: float, seed: int, args: argparse.Namespace) -> None:
    import torch

    from clinideid.document import Document
    from clinideid.models import TrainingData
    from clinideid.train.config import parse_train_config
    from clinideid.train.data import read_training_corpus, subset
    from clinideid.train.neural import train_neural

    torch.set_num_threads(1)
    train_all = read_training_corpus(args.corpora / "meddocan/train", "brat", "meddocan", "canonical")
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    if args.max_docs:  # smoke tests only
        train_all, dev = train_all[: args.max_docs], dev[: args.max_docs]
    train = subset(train_all, fraction, seed)
    unlabelled = [Document(d.id, d.text, d.language) for d in train_all] if method == "cvt" else []
    config = parse_train_config(
        {
            "model": "neural",
            "label_scheme": "BIOES",
            "window_size": 100,
            "window_overlap": 20,
            "neural": neural_section(method, fraction, args),
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        result = train_neural(
            train,
            dev,
            config,
            out_dir=Path(tmp) / "m",
            name="curve",
            seed=seed,
            language="es",
            training_data=TrainingData(description="MEDDOCAN train subset"),
            unlabelled_docs=unlabelled,
        )
    strict = result.dev_report["strict"].micro
    save_result(
        args.out,
        key(method, fraction, seed, args.base_epochs),
        {
            "method": method,
            "fraction": fraction,
            "seed": seed,
            "train_documents": len(train),
            "unlabelled_documents": len(unlabelled),
            "config": config.model_dump(mode="json"),
            "best_epoch": result.best_epoch,
            "history": result.history,
            "dev_strict": {"precision": strict.precision, "recall": strict.recall, "f1": strict.f1},
            "dev_token_binary_recall": result.dev_report["token_binary"].micro.recall,
            "train_seconds": result.seconds,
            "train_cpu_seconds": result.cpu_seconds,
            "peak_memory_mb": result.peak_memory_mb,
        },
    )


def table(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> str:
    rows = [
        "| train share | method | seeds | strict P | strict R | strict F1 | ΔF1 vs supervised | token binary R "
        "| train min | peak MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for fraction in args.fractions:
        base = [
            results[k]["dev_strict"]["f1"]
            for s in args.seeds
            if (k := key("supervised", fraction, s, args.base_epochs)) in results
        ]
        for method in args.methods:
            res = [
                results[k] for s in args.seeds if (k := key(method, fraction, s, args.base_epochs)) in results
            ]
            if not res:
                continue
            f1 = [r["dev_strict"]["f1"] for r in res]
            delta = (
                f"{(statistics.fmean(f1) - statistics.fmean(base)) * 100:+.2f}"
                if base and method != "supervised"
                else "–"
            )
            rows.append(
                f"| {fraction:.0%} | {method} | {','.join(str(r['seed']) for r in res)} "
                f"| {mean_std([r['dev_strict']['precision'] for r in res])} "
                f"| {mean_std([r['dev_strict']['recall'] for r in res])} | {mean_std(f1)} | {delta} "
                f"| {mean_std([r['dev_token_binary_recall'] for r in res])} "
                f"| {mean_std([r['train_seconds'] / 60 for r in res], 1, 1.0)} "
                f"| {mean_std([r['peak_memory_mb'] for r in res], 0, 1.0)} |"
            )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "semi_supervised")
    ap.add_argument("--charlm", type=Path, default=REPO / "runs" / "charlm" / "es-train")
    ap.add_argument("--fractions", nargs="+", type=float, default=[0.1, 0.25, 0.5, 1.0])
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--base-epochs", type=int, default=10, help="epochs at 100%% (more for smaller shares)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-docs", type=int, default=0, help="smoke test: first N train and dev documents")
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--run-one", nargs=3, metavar=("METHOD", "FRACTION", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.run_one:
        run_one(args.run_one[0], float(args.run_one[1]), int(args.run_one[2]), args)
        return
    if "charlm" in args.methods and not (args.charlm / "forward").is_dir():
        ap.error(f"--charlm {args.charlm} has no forward/ model: run clinideid pretrain-lm first")
    commands = {}
    # seed by seed, so that a grid cut short still compares every method on the seeds it finished
    for seed in args.seeds:
        for fraction in sorted(args.fractions, reverse=True):
            for method in args.methods:
                commands[key(method, fraction, seed, args.base_epochs)] = [
                    sys.executable, str(Path(__file__).resolve()), "--corpora", str(args.corpora),
                    "--out", str(args.out), "--charlm", str(args.charlm), "--base-epochs", str(args.base_epochs),
                    "--max-docs", str(args.max_docs), "--run-one", method, str(fraction), str(seed),
                ]  # fmt: skip
    failed = [] if args.report_only else run_grid(commands, args.out, args.jobs)
    text = table(load_results(args.out, list(commands)), args)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    if failed:
        print(json.dumps({"failed": failed}))
        sys.exit(1)


if __name__ == "__main__":
    main()
