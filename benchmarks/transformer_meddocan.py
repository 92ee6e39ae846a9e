"""MEDDOCAN dev numbers for the transformer tagger (a local encoder fine-tuned with a linear or CRF head).

    python benchmarks/transformer_meddocan.py --encoder PATH [--corpora ../shared/corpora] [--epochs 3]
        [--lr 5e-5] [--head-lr X] [--max-subtokens 256] [--overlap 32] [--batch-size 8] [--crf]
        [--freeze-encoder] [--scheme BIOES] [--seed 1] [--threads 1] [--max-docs N] [--json out.json]

``--encoder`` is a local Hugging Face encoder folder (e.g. a Spanish or multilingual BERT/RoBERTa saved
with ``save_pretrained``); nothing is downloaded. Trains on MEDDOCAN train (BRAT, labels made canonical
with the ``meddocan`` scheme), selects the epoch on dev, and prints dev entity strict micro P/R/F1, binary
token recall, training seconds per epoch and inference throughput (words per second over the dev set,
batched, after training). ``--max-docs N`` keeps the first N documents of train and of dev (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from pathlib import Path

import torch

from clinideid.detect.transformer import TransformerModel
from clinideid.models import TrainingData
from clinideid.text import tokenize
from clinideid.train.config import parse_train_config
from clinideid.train.data import read_training_corpus
from clinideid.train.transformer import train_transformer

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", type=Path, required=True, help="local Hugging Face encoder folder")
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--head-lr", type=float, default=None)
    ap.add_argument("--warmup", type=float, default=0.1)
    ap.add_argument("--max-subtokens", type=int, default=256)
    ap.add_argument("--overlap", type=int, default=32, help="words shared by consecutive windows")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--crf", action="store_true", help="CRF head instead of the linear one")
    ap.add_argument("--freeze-encoder", action="store_true", help="train the head only")
    ap.add_argument("--scheme", choices=("BIO", "BIOES"), default="BIOES")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--threads", type=int, default=1, help="torch threads (keep it polite on shared machines)"
    )
    ap.add_argument("--max-docs", type=int, default=0, help="use only the first N train and dev documents")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")

    train = read_training_corpus(args.corpora / "meddocan/train", "brat", "meddocan", "canonical")
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    if args.max_docs:
        train, dev = train[: args.max_docs], dev[: args.max_docs]
    section = {
        "encoder": str(args.encoder),
        "max_subtokens": args.max_subtokens,
        "overlap": args.overlap,
        "lr": args.lr,
        "head_lr": args.head_lr,
        "warmup": args.warmup,
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "patience": max(args.epochs, 1),
        "crf": args.crf,
        "freeze_encoder": args.freeze_encoder,
        "threads": args.threads,
    }
    config = parse_train_config({"model": "transformer", "label_scheme": args.scheme, "transformer": section})
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        result = train_transformer(
            train,
            dev,
            config,
            out_dir=Path(tmp) / "m",
            name="bench",
            seed=args.seed,
            language="es",
            training_data=TrainingData(description="MEDDOCAN train", licence="CC BY 4.0"),
        )
        model = TransformerModel.load(
            Path(tmp) / "m", batch_size=max(args.batch_size, 16), threads=args.threads
        )
        n_words = sum(len(tokenize(d.text)) for d in dev)
        start = time.perf_counter()
        model.predict_spans(dev)
        words_per_s = n_words / (time.perf_counter() - start)

    report = result.dev_report
    strict = report["strict"].micro
    binary = report["token_binary"].micro
    epoch_seconds = [h["train_seconds"] for h in result.history]
    out = {
        "config": section | {"scheme": args.scheme, "seed": args.seed, "encoder": args.encoder.name},
        "train_documents": len(train),
        "dev_documents": len(dev),
        "best_epoch": result.best_epoch,
        "history": result.history,
        "dev_strict": {
            "precision": round(strict.precision, 4),
            "recall": round(strict.recall, 4),
            "f1": round(strict.f1, 4),
        },
        "dev_token_binary_recall": round(binary.recall, 4),
        "train_seconds_per_epoch": round(sum(epoch_seconds) / max(len(epoch_seconds), 1), 1),
        "inference_words_per_second": round(words_per_s),
        "threads": args.threads,
        "peak_memory_mb": round(result.peak_memory_mb),
    }
    s = out["dev_strict"]
    print(f"dev strict        P {s['precision']:.4f}  R {s['recall']:.4f}  F1 {s['f1']:.4f}")
    print(f"dev token binary  R {out['dev_token_binary_recall']:.4f}")
    print(f"best epoch {result.best_epoch} of {len(result.history)}; {out['train_seconds_per_epoch']}s/epoch")
    print(f"inference {out['inference_words_per_second']} words/s ({args.threads} thread(s))")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
