"""``clinideid stats``: descriptive statistics of an annotated corpus."""

from __future__ import annotations

from pathlib import Path

import typer

from clinideid.cli import app
from clinideid.cli.evaluate import read_side, write_json
from clinideid.corpus_stats import corpus_stats
from clinideid.labels import LEVELS


@app.command(
    "stats",
    epilog="Example: clinideid stats ../shared/corpora/meddocan/train --format brat --scheme meddocan "
    "--json train-stats.json",
)
def stats_command(
    path: Path = typer.Argument(..., help="Corpus to describe (file or folder, depending on the format)."),
    fmt: str = typer.Option(..., "--format", "-f", help="Corpus format (brat, i2b2, jsonl, conll, ...)."),
    scheme: str | None = typer.Option(
        None, "--scheme", help="Label mapping applied first: a scheme name or a YAML file."
    ),
    label_fallback: str | None = typer.Option(
        None, "--label-fallback", help="Canonical label for labels the scheme does not map (e.g. OTHER_PHI)."
    ),
    level: str = typer.Option("subcategory", "--level", help="Label level: " + ", ".join(LEVELS) + "."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the statistics as JSON here."),
) -> None:
    """Count documents, tokens and spans per label, span lengths and overlapping spans."""
    docs = read_side(path, fmt, "corpus")
    stats = corpus_stats(docs, scheme=scheme, level=level, label_fallback=label_fallback)
    typer.echo(stats.format_table(), nl=False)
    if json_out is not None:
        write_json(stats.to_dict(), json_out)
        typer.echo(f"\nJSON statistics written to {json_out}")
