"""Inference throughput of a saved neural model on MEDDOCAN dev, per thread count and batch size.

    python benchmarks/neural_inference.py --model es-meddocan-neural [--threads 1 2] [--batch 32 64]
        [--quantize] [--corpora ../shared/corpora]

Times ``NeuralModel.predict_spans`` over the 250 dev documents (tokenization, document-level token features
such as rule hits, windows, batched tagging, span decoding: everything but reading the files), after one
warm-up pass, and prints tokens and characters per second. Nothing printed holds document text.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import torch

from clinideid.detect.neural.tagger import NeuralModel
from clinideid.text import tokenize
from clinideid.train.data import read_training_corpus

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="es-meddocan-neural")
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--batch", nargs="+", type=int, default=[32])
    ap.add_argument("--quantize", action="store_true", help="also time the dynamically int8-quantised model")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    dev = read_training_corpus(args.corpora / "meddocan/dev", "brat", "meddocan", "canonical")
    n_tokens = sum(len(tokenize(d.text)) for d in dev)
    n_chars = sum(len(d.text) for d in dev)
    print(f"MEDDOCAN dev: {len(dev)} documents, {n_tokens:,} tokens, {n_chars:,} characters")
    print("| model | threads | batch | seconds | tokens/s | chars/s |")
    print("|---|---|---|---|---|---|")
    for quantize in (False, True) if args.quantize else (False,):
        for batch in args.batch:
            model = NeuralModel.load(args.model, batch_size=batch, quantize=quantize)
            model.predict_spans(dev[:10])  # warm-up (rule packs, allocations)
            for threads in args.threads:
                torch.set_num_threads(threads)
                start = time.perf_counter()
                model.predict_spans(dev)
                seconds = time.perf_counter() - start
                name = f"{model.name}{' int8' if quantize else ''}"
                print(
                    f"| {name} | {threads} | {batch} | {seconds:.1f} | {n_tokens / seconds:,.0f} "
                    f"| {n_chars / seconds:,.0f} |"
                )


if __name__ == "__main__":
    main()
