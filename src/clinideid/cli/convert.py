"""``clinideid convert``: read a corpus in one format and write it in another."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from clinideid.cli import app
from clinideid.errors import ConfigError
from clinideid.formats import ReadReport, available_formats, get_codec, read_corpus, write_corpus


def parse_options(values: list[str], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; ``true``/``false`` and integers are converted."""
    out: dict[str, Any] = {}
    for v in values:
        key, sep, raw = v.partition("=")
        if not sep or not key:
            raise ConfigError(f"bad {flag} {v!r}; use KEY=VALUE, e.g. {flag} scheme=BIOES")
        value: Any = raw
        if raw.lower() in ("true", "false"):
            value = raw.lower() == "true"
        elif raw.lstrip("-").isdigit():
            value = int(raw)
        out[key.strip().replace("-", "_")] = value
    return out


@app.command(
    epilog=(
        "Examples: clinideid convert --from brat --to jsonl corpora/meddocan/train train.jsonl | "
        "clinideid convert --from jsonl --to conll train.jsonl train.conll --write-option scheme=BIOES"
    ),
)
def convert(
    source: Path = typer.Argument(..., help="Input corpus (file or folder, depending on the format)."),
    target: Path = typer.Argument(..., help="Output path (file or folder, depending on the format)."),
    from_format: str = typer.Option(..., "--from", help="Input format: " + ", ".join(available_formats())),
    to_format: str = typer.Option(..., "--to", help="Output format: " + ", ".join(available_formats())),
    repair: bool = typer.Option(False, "--repair", help="Repair misaligned span offsets while reading."),
    on_error: str = typer.Option(
        "raise", "--on-error", help="raise: stop at the first bad document; skip: report it and go on."
    ),
    read_option: list[str] = typer.Option(
        [], "--read-option", help="Codec read option KEY=VALUE; repeatable."
    ),
    write_option: list[str] = typer.Option(
        [], "--write-option", help="Codec write option KEY=VALUE (e.g. scheme=BIOES); repeatable."
    ),
) -> None:
    """Convert an annotated corpus between formats, keeping every span."""
    if on_error not in ("raise", "skip"):
        raise ConfigError("--on-error must be raise or skip")
    # every option is checked before the corpus is read, so a typo fails fast
    read_opts = {"repair": repair, "on_error": on_error, **parse_options(read_option, "--read-option")}
    write_opts = parse_options(write_option, "--write-option")
    get_codec(from_format), get_codec(to_format)
    report = ReadReport()
    docs = read_corpus(source, from_format, report=report, **read_opts)
    write_report = ReadReport()
    write_corpus(docs, target, to_format, report=write_report, **write_opts)
    n_spans = sum(len(d.spans) for d in docs)
    typer.echo(f"converted {len(docs)} documents, {n_spans} spans: {from_format} -> {to_format}")
    for w in [*report.warnings, *write_report.warnings]:
        typer.secho(f"warning: {w}", err=True, fg=typer.colors.YELLOW)
    for e in report.errors:
        typer.secho(f"skipped: {e}", err=True, fg=typer.colors.YELLOW)
    if report.repaired:
        typer.echo(f"repaired {report.repaired} span offsets")
