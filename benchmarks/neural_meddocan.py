"""MEDDOCAN dev numbers for the neural tagger (BiLSTM-CRF and its optional blocks).

    python benchmarks/neural_meddocan.py [--corpora ../shared/corpora] [--epochs 3] [--affix] [--context]
        [--attention] [--no-char] [--no-word] [--window 200] [--overlap 20] [--seed 1] [--threads 1]
        [--vectors vectors.txt] [--quantize] [--json out.json]

Trains on MEDDOCAN train (BRAT, labels made canonical with the ``meddocan`` scheme), selects the epoch on
dev, and prints dev entity strict micro P/R/F1, binary token recall, training seconds per epoch and
inference throughput (tokens per second over the dev set, batched, after training). Each block of the
network has a flag, so the experiment grid is a loop over flags.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from pathlib import Path

import torch

from clinideid.detect.neural.tagger import NeuralModel
from clinideid.models import TrainingData
from clinideid.text import tokenize
from clinideid.train.config import parse_train_config
from clinideid.train.data import read_training_corpus
from clinideid.train.neural import train_neural

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--window", type=int, default=200, help="tokens per sliding window")
    ap.add_argument("--overlap", type=int, default=20)
    ap.add_argument("--sentences", type=int, default=0, help="read groups of N sentences instead of windows")
    ap.add_argument("--no-char", action="store_true")
    ap.add_argument("--no-word", action="store_true")
    ap.add_argument("--affix", action="store_true")
    ap.add_argument("--context", action="store_true")
    ap.add_argument("--attention", action="store_true")
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--optimizer", choices=("sgd", "adam"), default="adam")
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--vectors", type=str, default=None)
    ap.add_argument("--word-dim", type=int, default=100)
    ap.add_argument("--class-weighting", action="store_true")
    ap.add_argument(
        "--threads", type=int, default=1, help="torch threads (keep it polite on shared machines)"
    )
    ap.add_argument("--quantize", action="store_true", help="also time int8 dynamic quantised inference")
    ap.add_argument("--max-train-docs", type=int, default=0, help="use only the first N training documents")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")

    train = read_training_corpus(args.corpora / "meddocan/train", "brat", "meddocan", "canonical")
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    if args.max_train_docs:
        train = train[: args.max_train_docs]
    neural = {
        "char": not args.no_char,
        "word": not args.no_word,
        "affix": args.affix,
        "context": args.context,
        "attention": args.attention,
        "lstm_layers": args.layers,
        "optimizer": args.optimizer,
        "lr": args.lr,
        "batch_size": args.batch_size,
        "epochs": args.epochs,
        "patience": max(args.epochs, 1),
        "word_dim": args.word_dim,
        "vectors": args.vectors,
        "class_weighting": args.class_weighting,
        "threads": args.threads,
        "windows": "sentences" if args.sentences else "sliding",
        "sentences_per_window": max(args.sentences, 1),
    }
    config = parse_train_config(
        {
            "model": "neural",
            "label_scheme": "BIOES",
            "window_size": args.window,
            "window_overlap": args.overlap,
            "neural": neural,
        }
    )
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        result = train_neural(
            train,
            dev,
            config,
            out_dir=Path(tmp) / "m",
            name="bench",
            seed=args.seed,
            language="es",
            training_data=TrainingData(description="MEDDOCAN train", licence="CC BY 4.0"),
        )
        model = NeuralModel.load(Path(tmp) / "m", batch_size=32)
        n_tokens = sum(len(tokenize(d.text)) for d in dev)
        start = time.perf_counter()
        model.predict_spans(dev)
        tokens_per_s = n_tokens / (time.perf_counter() - start)
        quantized_tokens_per_s = None
        if args.quantize:
            q = NeuralModel.load(Path(tmp) / "m", batch_size=32, quantize=True)
            start = time.perf_counter()
            q.predict_spans(dev)
            quantized_tokens_per_s = n_tokens / (time.perf_counter() - start)

    report = result.dev_report
    strict = report["strict"].micro
    binary = report["token_binary"].micro
    epoch_seconds = [h["train_seconds"] for h in result.history]
    out = {
        "config": neural | {"window": args.window, "overlap": args.overlap, "seed": args.seed},
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
        "inference_tokens_per_second": round(tokens_per_s),
        "quantized_inference_tokens_per_second": None
        if quantized_tokens_per_s is None
        else round(quantized_tokens_per_s),
        "threads": args.threads,
        "peak_memory_mb": round(result.peak_memory_mb),
    }
    s = out["dev_strict"]
    print(f"dev strict        P {s['precision']:.4f}  R {s['recall']:.4f}  F1 {s['f1']:.4f}")
    print(f"dev token binary  R {out['dev_token_binary_recall']:.4f}")
    print(f"best epoch {result.best_epoch} of {len(result.history)}; {out['train_seconds_per_epoch']}s/epoch")
    print(f"inference {out['inference_tokens_per_second']} tokens/s ({args.threads} thread(s))")
    if quantized_tokens_per_s is not None:
        print(f"inference (int8 dynamic) {out['quantized_inference_tokens_per_second']} tokens/s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
