"""The table and stream modes of ``clinideid deid``: SQL/CSV/Parquet tables in and out, and stdin → stdout."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import typer

from clinideid.batch.inputs import InputItem
from clinideid.batch.paths import check_paths
from clinideid.batch.records import FieldPolicy
from clinideid.batch.runner import EXIT_DOCUMENTS_FAILED, EXIT_INTERRUPTED
from clinideid.batch.tables import TABLE_SUFFIXES, RowOptions, TableSpec, run_table
from clinideid.cli.outcome import finish
from clinideid.errors import ConfigError, InputError
from clinideid.pipeline import MultilingualDeidentifier

#: exit status of a command whose reader closed the pipe (as a process killed by SIGPIPE)
EXIT_BROKEN_PIPE = 141


def is_stream(source: Path | None) -> bool:
    return source is not None and str(source) == "-"


def table_format(source: Path | None, fmt: str | None) -> str | None:
    """``csv``/``parquet`` when ``source`` is a table file (by ``--format`` or extension), else None."""
    if source is None or is_stream(source):
        return None
    if fmt in ("csv", "parquet"):
        return fmt
    if fmt is None and source.is_file():
        return TABLE_SUFFIXES.get(source.suffix.lower())
    return None


@dataclass
class TableArgs:
    """The command-line options of a table run (see ``clinideid deid --help``)."""

    source: Path | None
    source_format: str | None
    output: Path | None
    from_sql: str | None
    query: str | None
    to_sql: str | None
    table: str | None
    report_table: str | None
    id_column: str | None
    text_columns: list[str]
    language_column: str | None
    patient_id: str | None
    drop_fields: bool
    output_format: str | None
    batch_size: int
    encoding: str
    max_bytes: int
    time_limit: float | None
    resume: bool
    overwrite: bool
    fsync: bool


def patient_column(spec: str | None) -> str | None:
    """``--patient-id column:NAME`` (or ``metadata:NAME``) names the patient id column of a table."""
    if not spec:
        return None
    kind, _, name = spec.partition(":")
    if kind in ("column", "metadata") and name:
        return name
    raise ConfigError("for tables, give the patient id column as --patient-id column:NAME")


def check_table_args(args: TableArgs) -> None:
    if not args.id_column:
        raise ConfigError("tables need --id-column (the column that names each row)")
    if not args.text_columns:
        raise ConfigError("tables need --text-column (a column to de-identify; repeatable)")
    if args.to_sql is None and args.output is None:
        raise ConfigError("give an output: -o FOLDER (CSV/Parquet) or --to-sql URL --table NAME")
    if args.to_sql is not None and args.output is not None:
        raise ConfigError("give either -o or --to-sql, not both")
    if args.from_sql is not None and args.source is not None:
        raise ConfigError("give either an input file or --from-sql, not both")
    if args.from_sql is None and args.query:
        raise ConfigError("--query needs --from-sql URL")
    if args.to_sql is None and (args.table or args.report_table):
        raise ConfigError("--table/--report-table need --to-sql URL")
    if args.output_format is not None and args.output_format not in ("csv", "parquet"):
        raise ConfigError("--output-format must be csv or parquet")
    patient_column(args.patient_id)


def _source(args: TableArgs):
    from clinideid.batch.table_files import open_table_source

    if args.from_sql is not None:
        from clinideid.batch.sql import SqlSource

        assert args.id_column is not None
        return SqlSource(args.from_sql, args.query or "", args.id_column)
    assert args.source is not None and args.source_format is not None
    if not args.source.is_file():
        raise InputError(f"input path {args.source} does not exist or is not a file")
    return open_table_source(args.source, args.source_format, args.encoding, args.max_bytes)


def _sink(args: TableArgs, source, settings: str):
    if args.to_sql is not None:
        from clinideid.batch.sql import SqlTableSink, check_not_input

        assert args.id_column is not None
        sink = SqlTableSink(
            args.to_sql,
            args.table or "",
            args.report_table,
            args.id_column,
            args.text_columns,
            settings,
            args.resume,
            args.overwrite,
        )
        if args.from_sql is not None:
            check_not_input(args.query or "", args.from_sql, args.to_sql, [sink.table_name, sink.report_name])
        return sink
    from clinideid.batch.table_files import FileTableSink

    assert args.output is not None
    if args.source is not None:
        check_paths(args.source, args.output)
    fmt = args.output_format or args.source_format or "csv"
    name = args.source.stem if args.source is not None else (args.table or "table")
    schema = getattr(source, "schema", None) if fmt == "parquet" else None
    return FileTableSink(args.output, name, fmt, settings, args.resume, args.overwrite, args.fsync, schema)


def run_tables(
    args: TableArgs,
    deid: MultilingualDeidentifier,
    language: str,
    settings: str,
    progress: bool,
    allow_failures: bool,
) -> None:
    """Run a table job and report it; raises ``typer.Exit`` with the run's exit code."""
    check_table_args(args)
    assert args.id_column is not None
    spec = TableSpec(
        args.id_column,
        tuple(args.text_columns),
        args.language_column,
        patient_column(args.patient_id),
        args.drop_fields,
    )
    options = RowOptions(None if language == "auto" else language, args.max_bytes, args.time_limit)
    source = _source(args)
    sink = _sink(args, source, settings)
    if progress:
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("de-identifying rows", total=None)
            outcome = run_table(
                source, spec, deid, sink, options, args.batch_size, lambda n: bar.advance(task, n)
            )
    else:
        outcome = run_table(source, spec, deid, sink, options, args.batch_size)
    d = outcome.summary
    typer.echo(
        f"{d['succeeded']}/{d['documents']} rows de-identified, {d['failed']} failed, "
        f"{d['skipped']} skipped as done; {sum(d['spans_per_label'].values())} spans replaced -> "
        f"{sink.description}"
    )
    finish(
        d,
        outcome.interrupted_by,
        allow_failures,
        unit="row",
        kept="written",
        failures_listed="see the report",
    )


def run_stdin(
    deid: MultilingualDeidentifier,
    language: str,
    policy: FieldPolicy,
    patient_id,
    encoding: str,
    max_bytes: int,
    time_limit: float | None,
    allow_failures: bool,
) -> None:
    """JSONL on stdin → de-identified JSONL on stdout; the summary goes to stderr."""
    from clinideid.batch.stream import run_stream

    def get_patient(item: InputItem) -> str | None:
        return patient_id(item)

    try:
        counts = run_stream(
            sys.stdin.buffer,
            sys.stdout.buffer,
            deid,
            None if language == "auto" else language,
            policy,
            get_patient,
            encoding,
            max_bytes,
            time_limit,
        )
    except KeyboardInterrupt:
        typer.secho(
            "interrupted: the records answered so far are complete lines", err=True, fg=typer.colors.RED
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except BrokenPipeError:
        # the reader is gone: nothing more can be delivered; silence the flush at exit and stop
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(EXIT_BROKEN_PIPE) from None
    typer.echo(
        f"{counts.records - counts.failed}/{counts.records} records de-identified, {counts.failed} failed; "
        f"{counts.spans} spans replaced",
        err=True,
    )
    if counts.failed and not allow_failures:
        raise typer.Exit(EXIT_DOCUMENTS_FAILED)
