"""The published taggers' architecture choices as variants of the neural tagger, on a MEDDOCAN subset.

    python benchmarks/architectures.py [--corpora ../shared/corpora] [--out runs/architectures]
        [--variants baseline cedi ...] [--seeds 1] [--epochs 8] [--train-docs 150] [--dev-docs 100]
        [--charlm runs/charlm/es-train-h128] [--markdown table.md]

Every variant trains on the same seeded subset of MEDDOCAN train (``--train-docs`` documents,
``clinideid.train.data.subset`` with seed 1) for a fixed epoch budget (no early stop; the epoch with the best
strict F1 on the dev subset is kept) and is scored on the first ``--dev-docs`` documents of MEDDOCAN dev,
one torch thread, sequentially. The CVT variants read every MEDDOCAN train text as unlabelled data (labels
dropped; no dev text). The char-LM variants need forward/backward LMs trained on MEDDOCAN train texts only
(``benchmarks/pretrain_charlm.py --language es-train``); they are skipped without ``--charlm``.

Each finished run leaves ``<variant>__s<seed>.json`` in ``--out`` and is not repeated. The table gives dev
strict P/R/F1, binary token P/R, the best epoch and the training seconds. Nothing printed contains text.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

CHARLM = "CHARLM"  # replaced by the --charlm directories
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "baseline": ("characters (BiLSTM) + words + BiLSTM-CRF", {}),
    "cedi": (
        "CEDI: prefix-only deep affixes + LSTM n-gram context encoder",
        {"affix": True, "affix_kind": "prefix", "context": True, "context_rnn": "lstm"},
    ),
    "catelli_no_bilstm": ("Catelli: no BiLSTM (token representation -> CRF)", {"lstm_layers": 0}),
    "catelli_softmax": ("Catelli: softmax head instead of the CRF", {"head": "softmax"}),
    "friedrich": (
        "Friedrich: + casing, Nadam, input/recurrent/output dropout 0.25, two BiLSTM layers",
        {
            "casing": True,
            "optimizer": "nadam",
            "lr": 0.002,
            "lstm_layers": 2,
            "input_dropout": 0.25,
            "recurrent_dropout": 0.25,
            "output_dropout": 0.25,
        },
    ),
    "hayat_network": (
        "Hayat's network without CVT: char CNN (2/3/4) + two BiLSTM layers, weight decay (reference)",
        {"char_encoder": "cnn", "char_cnn_widths": [2, 3, 4], "lstm_layers": 2, "weight_decay": 1e-5},
    ),
    "hayat_cvt": (
        "Hayat: char CNN (2/3/4) + two BiLSTM layers + CVT from the first (unlabelled dropout 0.7), weight decay",
        {
            "char_encoder": "cnn",
            "char_cnn_widths": [2, 3, 4],
            "lstm_layers": 2,
            "cvt": True,
            "cvt_unlabelled_dropout": 0.7,
            "weight_decay": 1e-5,
        },
    ),
    "charlm": ("baseline + char-LM embeddings (reference for the LM variants)", {"charlm": CHARLM}),
    "catelli_stack_proj": (
        "Catelli: + char-LM embeddings, the whole stack re-projected to 256",
        {"charlm": CHARLM, "stack_proj": 256},
    ),
    "hayat_cvt_charlm": (
        "Hayat CVT network + char-LM embeddings (each BiLSTM direction reads its own LM)",
        {
            "char_encoder": "cnn",
            "char_cnn_widths": [2, 3, 4],
            "lstm_layers": 2,
            "cvt": True,
            "cvt_unlabelled_dropout": 0.7,
            "weight_decay": 1e-5,
            "charlm": CHARLM,
        },
    ),
}

log = logging.getLogger("architectures")


def result_path(out: Path, variant: str, seed: int) -> Path:
    return out / f"{variant}__s{seed}.json"


def run_one(variant: str, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from clinideid.document import Document
    from clinideid.models import TrainingData
    from clinideid.train.config import parse_train_config
    from clinideid.train.data import read_training_corpus, subset
    from clinideid.train.neural import train_neural

    torch.set_num_threads(1)
    train_all = read_training_corpus(args.corpora / "meddocan/train", "brat", "meddocan", "canonical")
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")[
        : args.dev_docs
    ]
    train = subset(train_all, min(1.0, args.train_docs / len(train_all)), 1)
    options = dict(VARIANTS[variant][1])
    if options.get("charlm") == CHARLM:
        options["charlm"] = {d: str(args.charlm / d) for d in ("forward", "backward")}
    unlabelled = [Document(d.id, d.text, d.language) for d in train_all] if options.get("cvt") else []
    neural = {**options, "epochs": args.epochs, "patience": args.epochs, "threads": 1}
    config = parse_train_config(
        {
            "model": "neural",
            "label_scheme": "BIOES",
            "window_size": 100,
            "window_overlap": 20,
            "neural": neural,
        }
    )
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = train_neural(
            train,
            dev,
            config,
            out_dir=Path(tmp) / "m",
            name=variant,
            seed=seed,
            language="es",
            training_data=TrainingData(description="MEDDOCAN train subset", licence="CC BY 4.0"),
            unlabelled_docs=unlabelled,
        )
    report = result.dev_report
    strict, binary = report["strict"].micro, report["token_binary"].micro
    return {
        "variant": variant,
        "description": VARIANTS[variant][0],
        "seed": seed,
        "epochs": args.epochs,
        "train_documents": len(train),
        "dev_documents": len(dev),
        "unlabelled_documents": len(unlabelled),
        "neural": config.neural.model_dump(mode="json", exclude_defaults=True),
        "best_epoch": result.best_epoch,
        "history": result.history,
        "strict": {"precision": strict.precision, "recall": strict.recall, "f1": strict.f1},
        "token_binary": {"precision": binary.precision, "recall": binary.recall, "f1": binary.f1},
        "train_seconds": sum(h["train_seconds"] for h in result.history),
        "total_seconds": time.perf_counter() - start,
        "peak_memory_mb": result.peak_memory_mb,
    }


def pct(values: list[float]) -> str:
    if len(values) == 1:
        return f"{100 * values[0]:.2f}"
    return f"{100 * statistics.mean(values):.2f} ± {100 * statistics.stdev(values):.2f}"


def table(results: list[dict[str, Any]]) -> str:
    by_variant: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_variant.setdefault(r["variant"], []).append(r)
    base = by_variant.get("baseline")
    base_f1 = statistics.mean(r["strict"]["f1"] for r in base) if base else None
    lines = [
        "| variant | seeds | strict P | strict R | strict F1 | ΔF1 vs baseline | token binary P | token binary R "
        "| best epoch | train s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for variant in VARIANTS:
        runs = by_variant.get(variant)
        if not runs:
            continue
        f1 = [r["strict"]["f1"] for r in runs]
        delta = f"{100 * (statistics.mean(f1) - base_f1):+.2f}" if base_f1 is not None else "–"
        lines.append(
            f"| {variant} | {','.join(str(r['seed']) for r in runs)} "
            f"| {pct([r['strict']['precision'] for r in runs])} | {pct([r['strict']['recall'] for r in runs])} "
            f"| {pct(f1)} | {delta} "
            f"| {pct([r['token_binary']['precision'] for r in runs])} "
            f"| {pct([r['token_binary']['recall'] for r in runs])} "
            f"| {','.join(str(r['best_epoch']) for r in runs)} "
            f"| {statistics.mean(r['train_seconds'] for r in runs):.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "architectures")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[1])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--train-docs", type=int, default=150)
    parser.add_argument("--dev-docs", type=int, default=100)
    parser.add_argument("--charlm", type=Path, default=None, help="folder with forward/ and backward/ LMs")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args.out.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        for variant in args.variants:
            if "charlm" in VARIANTS[variant][1] and args.charlm is None:
                log.info("skipping %s: no --charlm", variant)
                continue
            path = result_path(args.out, variant, seed)
            if path.exists():
                continue
            log.info("training %s (seed %d)", variant, seed)
            result = run_one(variant, seed, args)
            partial = path.with_suffix(".partial")
            partial.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
            partial.replace(path)
            log.info(
                "%s seed %d: strict F1 %.4f, %.0f s",
                variant,
                seed,
                result["strict"]["f1"],
                result["train_seconds"],
            )
    results = [
        json.loads(result_path(args.out, v, s).read_text())
        for s in args.seeds
        for v in args.variants
        if result_path(args.out, v, s).exists()
    ]
    text = table(results)
    print(text)
    if args.markdown is not None:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
