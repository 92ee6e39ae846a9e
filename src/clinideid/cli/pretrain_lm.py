"""``clinideid pretrain-lm``: forward and backward character language models from unlabelled text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from clinideid.cli import app
from clinideid.cli.progress import progress_display
from clinideid.errors import ConfigError

_DIRECTIONS = ("forward", "backward", "both")
_SHOWN_ERRORS = 5


def _progress():
    """A progress display (one bar per direction and epoch) and the callbacks that drive it."""
    display, on_progress = progress_display()

    def on_evaluation(record: dict[str, Any]) -> None:
        display.console.print(
            f"{record['direction']} step {record['step']}: held-out perplexity {record['heldout_perplexity']:.3f} "
            f"({record['heldout_bpc']:.3f} bits/char), lr {record['lr']:g}"
        )

    return display, on_progress, on_evaluation


@app.command(
    "pretrain-lm",
    epilog=(
        "Example: clinideid pretrain-lm --text ../shared/corpora/meddocan/train --text "
        "../shared/corpora/meddocan/dev --language es --out models/es-charlm --direction both --max-minutes 40 "
        "(writes models/es-charlm/forward and models/es-charlm/backward; add --resume to continue a run)"
    ),
)
def pretrain_lm(
    text: list[Path] = typer.Option(
        ...,
        "--text",
        help="Unlabelled text: a folder of .txt (recursive), a .jsonl or .txt file; repeatable.",
    ),
    out: Path = typer.Option(
        ..., "--out", help="Model directory (with --direction both: DIR/forward, DIR/backward)."
    ),
    fmt: str | None = typer.Option(
        None, "--format", help="Read --text with this corpus codec instead (brat, jsonl, i2b2, ...)."
    ),
    field: str | None = typer.Option(
        None, "--field", help="JSONL field holding the text (default: text, note_text)."
    ),
    direction: str = typer.Option("both", "--direction", help="forward, backward or both."),
    hidden: int = typer.Option(256, "--hidden", help="LSTM state size (embedding dim per direction)."),
    layers: int = typer.Option(1, "--layers", help="LSTM layers (1 or 2)."),
    embedding_dim: int = typer.Option(32, "--embedding-dim", help="Character embedding size."),
    seq_len: int = typer.Option(250, "--seq-len", help="Characters per truncated-BPTT chunk."),
    batch_size: int = typer.Option(32, "--batch-size", help="Parallel text streams per batch."),
    epochs: int = typer.Option(10, "--epochs", help="Passes over the training text."),
    max_minutes: float | None = typer.Option(
        None, "--max-minutes", help="Stop after this many minutes (each direction); --resume continues."
    ),
    heldout: float = typer.Option(0.05, "--heldout", help="Share of documents held out for perplexity."),
    optimizer: str = typer.Option("adam", "--optimizer", help="adam or sgd (Flair's choice: sgd, --lr 20)."),
    lr: float | None = typer.Option(None, "--lr", help="Learning rate (default: adam 0.01, sgd 20)."),
    min_count: int = typer.Option(3, "--min-count", help="Rarer characters become <unk>."),
    eval_every: int = typer.Option(100, "--eval-every", help="Batches between held-out evaluations."),
    resume: bool = typer.Option(False, "--resume", help="Continue from the checkpoint in --out."),
    seed: int = typer.Option(1, "--seed", help="Seed for the held-out split, initialisation and dropout."),
    threads: int = typer.Option(1, "--threads", help="Torch threads per direction."),
    sequential: bool = typer.Option(
        False, "--sequential", help="With --direction both: train one after the other, not in two processes."
    ),
    language: str | None = typer.Option(None, "--language", help="Language of the text, for model.json."),
    name: str | None = typer.Option(None, "--name", help="Model name (default: the --out folder name)."),
    description: str = typer.Option("", "--description", help="Training data description for model.json."),
    licence: str = typer.Option("", "--licence", help="Licence of the training text, for model.json."),
) -> None:
    """Train Flair-style character language models for contextual string embeddings."""
    from clinideid.formats.base import ReadReport
    from clinideid.lm.data import heldout_split, iter_unlabelled_documents
    from clinideid.lm.train import parse_config, train_charlm_pair
    from clinideid.models import TrainingData

    if direction not in _DIRECTIONS:
        raise ConfigError(f"unknown --direction {direction!r}; choose forward, backward or both")
    if not 0.0 < heldout < 1.0:
        raise ConfigError(f"--heldout must be between 0 and 1 (exclusive), got {heldout}")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a directory")
    if not resume and out.is_dir() and any(out.iterdir()):
        raise ConfigError(
            f"--out {out} is not empty; give a new directory, or add --resume to continue its run"
        )
    config = parse_config(
        {
            "embedding_dim": embedding_dim,
            "hidden_size": hidden,
            "layers": layers,
            "seq_len": seq_len,
            "batch_size": batch_size,
            "epochs": epochs,
            "max_minutes": max_minutes,
            "optimizer": optimizer,
            "lr": lr,
            "min_count": min_count,
            "eval_every": eval_every,
            "seed": seed,
            "threads": threads,
        }
    )
    report = ReadReport()
    docs = list(iter_unlabelled_documents(text, fmt, field=field, report=report))
    if report.errors:
        typer.echo(f"note: {len(report.errors)} file(s) or record(s) skipped:", err=True)
        for error in report.errors[:_SHOWN_ERRORS]:
            typer.echo(f"  {error}", err=True)
        if len(report.errors) > _SHOWN_ERRORS:
            typer.echo(f"  ... and {len(report.errors) - _SHOWN_ERRORS} more", err=True)
    train_texts, heldout_texts = heldout_split(docs, heldout, seed)
    n_chars = sum(len(t) for t in train_texts)
    data = TrainingData(
        description=description
        or f"{', '.join(p.name for p in text)}; {heldout:.0%} of the documents held out",
        licence=licence,
        documents=len(train_texts),
        heldout_documents=len(heldout_texts),
        characters=n_chars,
    )
    typer.echo(
        f"training on {len(train_texts)} documents ({n_chars} characters), held-out perplexity on "
        f"{len(heldout_texts)} ({sum(len(t) for t in heldout_texts)} characters)"
    )
    directions = ("forward", "backward") if direction == "both" else (direction,)
    display, on_progress, on_evaluation = _progress()
    with display:
        if direction == "both":
            results = train_charlm_pair(
                train_texts,
                heldout_texts,
                config,
                out,
                directions=directions,
                parallel=not sequential,
                resume=resume,
                progress=on_progress,
                on_evaluation=on_evaluation,
                name=name or out.resolve().name,
                language=language,
                training_data=data,
            )
        else:
            from clinideid.lm.train import train_charlm

            results = {
                direction: train_charlm(
                    train_texts,
                    heldout_texts,
                    config,
                    out,
                    direction,
                    resume,
                    on_progress,
                    on_evaluation=on_evaluation,
                    name=name or out.resolve().name,
                    language=language,
                    training_data=data,
                )
            }
    for d in directions:
        r = results[d]
        typer.echo(
            f"{d}: held-out perplexity {r.best_perplexity:.3f} ({r.best_bpc:.3f} bits/char) after {r.steps} steps, "
            f"{r.train_chars_per_second:.0f} chars/s, {r.seconds:.0f}s, peak memory {r.peak_memory_mb:.0f} MB; "
            f"stopped: {r.stop_reason}; model in {r.model_dir}"
        )
    if any(results[d].stop_reason in ("max_minutes", "max_batches") for d in directions):
        typer.echo("training stopped early; run the same command with --resume to continue")
