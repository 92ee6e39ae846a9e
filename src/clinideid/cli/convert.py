"""``clinideid convert``: read a corpus in one format and write it in another."""

from __future__ import annotations

from pathlib import Path

import typer

from clinideid.cli import app
from clinideid.formats import ReadReport, available_formats, read_corpus, write_corpus


@app.command(
    epilog="Example: clinideid convert --from brat --to jsonl corpora/meddocan/train train.jsonl",
)
def convert(
    source: Path = typer.Argument(..., help="Input corpus (file or folder, depending on the format)."),
    target: Path = typer.Argument(..., help="Output path (file or folder, depending on the format)."),
    from_format: str = typer.Option(..., "--from", help="Input format: " + ", ".join(available_formats())),
    to_format: str = typer.Option(..., "--to", help="Output format: " + ", ".join(available_formats())),
    repair: bool = typer.Option(False, "--repair", help="Repair misaligned span offsets while reading."),
) -> None:
    """Convert an annotated corpus between formats, keeping every span."""
    report = ReadReport()
    docs = read_corpus(source, from_format, report=report, repair=repair)
    write_corpus(docs, target, to_format)
    n_spans = sum(len(d.spans) for d in docs)
    typer.echo(f"converted {len(docs)} documents, {n_spans} spans: {from_format} -> {to_format}")
    for w in report.warnings:
        typer.secho(f"warning: {w}", err=True, fg=typer.colors.YELLOW)
    if report.repaired:
        typer.echo(f"repaired {report.repaired} span offsets")
