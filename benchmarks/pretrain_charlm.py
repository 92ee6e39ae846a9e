"""Forward and backward character LMs on the shared corpora's texts: perplexity, speed, memory.

    python benchmarks/pretrain_charlm.py [--corpora ../shared/corpora] [--language es|fr] [--max-minutes 40]
        [--out runs/charlm/es] [--epochs 50] [--hidden 256] [--layers 1] [--batch-size 32] [--seq-len 250]
        [--optimizer adam] [--lr LR] [--threads 1] [--heldout 0.05] [--seed 1] [--resume] [--json out.json]

Texts: ``es`` = MEDDOCAN train + dev (the ``.txt`` files; annotations unused), ``es-train`` = MEDDOCAN
train only (for experiments scored on MEDDOCAN dev), ``fr`` = EDS-Pseudo ``train.jsonl`` (``note_text``). A seeded 5% of the documents is held out. The two directions train in
two processes at the same time, one torch thread each, until ``--epochs`` or ``--max-minutes``. Prints
per direction the best held-out perplexity and bits per character, steps, characters trained, training
throughput (characters per second of training time), wall time and peak memory; then the throughput of
the contextual string embedder (both LMs, one thread) on the held-out texts.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import torch

from clinideid.formats.base import ReadReport
from clinideid.lm import heldout_split, iter_unlabelled_documents, load_embedder
from clinideid.lm.train import parse_config, train_charlm_pair
from clinideid.models import TrainingData
from clinideid.text import tokenize

REPO = Path(__file__).resolve().parents[1]
SOURCES = {
    "es": (("meddocan/train", "meddocan/dev"), "MEDDOCAN train+dev texts (CC BY 4.0)"),
    # for experiments scored on MEDDOCAN dev: the LMs never read a dev text
    "es-train": (("meddocan/train",), "MEDDOCAN train texts (CC BY 4.0)"),
    "fr": (("eds-pseudo/train.jsonl",), "EDS-Pseudo train texts (BSD-3-Clause)"),
}


def embed_throughput(out: Path, texts: list[str], threads: int) -> dict[str, float]:
    """Characters and tokens per second of the contextual string embedder over ``texts``."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        emb = load_embedder(out / "forward", out / "backward")
        tokens = [tokenize(t) for t in texts]
        start = time.perf_counter()
        vectors = emb.token_embeddings_batch(texts, tokens)
        seconds = time.perf_counter() - start
    finally:
        torch.set_num_threads(previous)
    chars = sum(len(t) for t in texts)
    n_tokens = sum(v.shape[0] for v in vectors)
    return {
        "documents": len(texts),
        "characters": chars,
        "tokens": n_tokens,
        "dim": emb.dim,
        "seconds": round(seconds, 2),
        "chars_per_second": round(chars / seconds, 1),
        "tokens_per_second": round(n_tokens / seconds, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    ap.add_argument("--language", choices=sorted(SOURCES), default="es")
    ap.add_argument("--max-minutes", type=float, default=40.0)
    ap.add_argument("--out", type=Path, default=None, help="default: runs/charlm/<language>")
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=250)
    ap.add_argument("--optimizer", choices=("adam", "sgd"), default=None, help="default: the library's")
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--threads", type=int, default=1, help="torch threads per direction")
    ap.add_argument("--heldout", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")

    out = args.out or REPO / "runs" / "charlm" / args.language
    rel_paths, description = SOURCES[args.language]
    report = ReadReport()
    docs = list(iter_unlabelled_documents([args.corpora / p for p in rel_paths], report=report))
    train_texts, held_texts = heldout_split(docs, args.heldout, args.seed)
    settings = {
        "hidden_size": args.hidden,
        "layers": args.layers,
        "batch_size": args.batch_size,
        "seq_len": args.seq_len,
        "epochs": args.epochs,
        "max_minutes": args.max_minutes,
        "lr": args.lr,
        "seed": args.seed,
        "threads": args.threads,
    }
    if args.optimizer:
        settings["optimizer"] = args.optimizer
    config = parse_config(settings)
    train_chars = sum(len(t) for t in train_texts)
    print(
        f"{args.language}: {len(train_texts)} training documents ({train_chars} characters), "
        f"{len(held_texts)} held out ({sum(len(t) for t in held_texts)} characters), "
        f"{len(report.errors)} unreadable; optimizer {config.optimizer} lr {config.lr:g}, hidden "
        f"{config.hidden_size}, batch {config.batch_size}x{config.seq_len}, {config.threads} thread(s) per direction",
        flush=True,
    )

    def on_evaluation(record: dict) -> None:
        print(
            f"  {record['direction']:<8} epoch {record['epoch']} step {record['step']:>6}: "
            f"ppl {record['heldout_perplexity']:.3f} bpc {record['heldout_bpc']:.3f} lr {record['lr']:g} "
            f"({record['train_seconds']:.0f}s training)",
            flush=True,
        )

    start = time.perf_counter()
    results = train_charlm_pair(
        train_texts,
        held_texts,
        config,
        out,
        resume=args.resume,
        on_evaluation=on_evaluation,
        name=f"{args.language}-charlm",
        language=args.language.split("-")[0],
        training_data=TrainingData(description=description, documents=len(train_texts)),
    )
    wall = time.perf_counter() - start
    summary: dict = {
        "language": args.language,
        "config": config.model_dump(mode="json"),
        "wall_seconds": round(wall, 1),
    }
    for d, r in results.items():
        row = {
            "heldout_perplexity": round(r.best_perplexity, 4),
            "heldout_bpc": round(r.best_bpc, 4),
            "steps": r.steps,
            "epochs_completed": r.epochs_completed,
            "chars_trained": r.chars_trained,
            "train_chars_per_second": round(r.train_chars_per_second, 1),
            "seconds": round(r.seconds, 1),
            "peak_memory_mb": round(r.peak_memory_mb, 1),
            "stop_reason": r.stop_reason,
        }
        summary[d] = row
        print(
            f"{d:<8} held-out perplexity {row['heldout_perplexity']:.3f} ({row['heldout_bpc']:.3f} bits/char), "
            f"{r.steps} steps ({r.epochs_completed} full epochs, {r.chars_trained} chars), "
            f"{row['train_chars_per_second']:.0f} chars/s training, {r.seconds:.0f}s, "
            f"peak memory {row['peak_memory_mb']:.0f} MB, stopped: {r.stop_reason}"
        )
    print(f"total wall time {wall:.0f}s (both directions in parallel)")
    summary["embedding"] = embed_throughput(out, held_texts, args.threads)
    e = summary["embedding"]
    print(
        f"embedding: {e['chars_per_second']:.0f} chars/s, {e['tokens_per_second']:.0f} tokens/s "
        f"(dim {e['dim']}, {e['documents']} held-out documents, {args.threads} thread)"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
