"""``clinideid train-embeddings``: word2vec vectors from unannotated text, for the neural tagger."""

from __future__ import annotations

from pathlib import Path

import typer

from clinideid.cli import app


@app.command(
    "train-embeddings",
    epilog=(
        "Example: clinideid train-embeddings notes/ --format text --out vectors.txt --dim 100 --epochs 5; "
        "then set 'neural: {vectors: vectors.txt, word_dim: 100}' in the training config"
    ),
)
def train_embeddings(
    path: Path = typer.Argument(..., help="Texts to learn from (a .txt file or folder, or a corpus)."),
    out: Path = typer.Option(..., "--out", help="Vectors file to write (word2vec text format)."),
    fmt: str = typer.Option("text", "--format", help="Corpus format (text, brat, jsonl, ...)."),
    dim: int = typer.Option(100, "--dim", help="Vector dimension (the neural config's word_dim)."),
    window: int = typer.Option(5, "--window", help="Skip-gram context window (words each side)."),
    min_count: int = typer.Option(2, "--min-count", help="Ignore words seen fewer times."),
    epochs: int = typer.Option(5, "--epochs", help="Passes over the text."),
    seed: int = typer.Option(1, "--seed", help="Random seed (runs are reproducible with --workers 1)."),
    workers: int = typer.Option(1, "--workers", help="Training threads."),
) -> None:
    """Train skip-gram word vectors (gensim word2vec) on clinical text for the neural tagger."""
    from clinideid.formats import read_corpus
    from clinideid.train.embeddings import train_word2vec

    docs = read_corpus(path, fmt)
    stats = train_word2vec(
        docs, out, dim=dim, window=window, min_count=min_count, epochs=epochs, seed=seed, workers=workers
    )
    typer.echo(
        f"{stats.vocabulary} vectors of dimension {stats.dim} from {stats.documents} documents "
        f"({stats.tokens} tokens) written to {out}"
    )
