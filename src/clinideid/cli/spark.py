"""``clinideid spark-deid``: de-identify a table of notes (Parquet, JSON lines, CSV) with Apache Spark."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from clinideid.batch.inputs import DEFAULT_MAX_BYTES
from clinideid.batch.records import FieldPolicy
from clinideid.batch.runner import EXIT_DOCUMENTS_FAILED
from clinideid.cli import app, options
from clinideid.cli.deid import _load_key, config_overrides
from clinideid.errors import ConfigError
from clinideid.text.language import SUPPORTED


def _parse_conf(values: list[str]) -> dict[str, str]:
    conf: dict[str, str] = {}
    for v in values:
        name, sep, value = v.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"bad --conf {v!r}; use KEY=VALUE, e.g. --conf spark.executor.memory=4g")
        conf[name.strip()] = value
    return conf


@app.command(
    "spark-deid",
    epilog=(
        "Examples: clinideid spark-deid notes.parquet -o safe.parquet --report report/ --language en "
        "--key-file secret.key | clinideid spark-deid part1.jsonl part2.jsonl -o safe/ --report report/ "
        "--id-column note_id --text-column note_text --key-file secret.key --master spark://host:7077. "
        "Outputs are folders of part files written by Spark, in the input's format; the report is JSON lines "
        "(one row per input row: id, status, error, spans_per_label, report). Exit codes: 0 every row done; "
        "3 some rows failed (--allow-failures makes it 0); 2 a problem of the whole run (nothing written)."
    ),
)
def spark_deid(
    inputs: list[str] = typer.Argument(..., help="Input file(s) or folder(s): Parquet, JSON lines or CSV."),
    output: str = typer.Option(..., "--output", "-o", help="Output path (a folder Spark writes)."),
    report: str = typer.Option(..., "--report", help="Report path (JSON lines folder)."),
    fmt: str | None = typer.Option(
        None, "--format", "-f", help="parquet, jsonl or csv (default: from the input names)."
    ),
    id_column: str = typer.Option("id", "--id-column", help="Column with each note's id."),
    text_column: str = typer.Option("text", "--text-column", help="Column with the note's text."),
    language: str = typer.Option("auto", "--language", "-l", help="auto, " + ", ".join(SUPPORTED)),
    language_column: str | None = typer.Option(
        None, "--language-column", help="Column with each row's language code (wins over --language)."
    ),
    patient_column: str | None = typer.Option(
        None, "--patient-column", help="Column with a patient id: one patient's notes share surrogates."
    ),
    keep_column: list[str] = typer.Option(
        [], "--keep-column", help="A column to copy verbatim (not de-identified); repeatable."
    ),
    drop_columns: bool = typer.Option(
        False, "--drop-columns", help="Drop every column but the id, text, language and --keep-column."
    ),
    config: Path | None = typer.Option(None, "--config", "-c", help="Pipeline config YAML."),
    operator: list[str] = typer.Option(
        [], "--operator", help="Per-label operator: LABEL=OPERATOR[:key=value,...]; repeatable."
    ),
    scope: str | None = options.SCOPE,
    key_file: Path | None = typer.Option(
        None, "--key-file", help="Secret key (read here, sent to executors as a broadcast)."
    ),
    ephemeral_key: bool = options.EPHEMERAL_KEY,
    master: str = typer.Option("local[*]", "--master", help="Spark master URL."),
    conf: list[str] = typer.Option([], "--conf", help="Spark setting KEY=VALUE; repeatable."),
    max_bytes: int = typer.Option(
        DEFAULT_MAX_BYTES, "--max-bytes", help="Rows whose text is larger (UTF-8 bytes) fail, unread."
    ),
    time_limit: float | None = options.TIME_LIMIT,
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace existing output and report paths."),
    allow_failures: bool = typer.Option(False, "--allow-failures", help="Exit 0 even when some rows failed."),
) -> None:
    """De-identify a table of clinical notes with Apache Spark: text and other string columns, per row.

    The pipeline is built once per executor process; a row that fails is reported (status failed, a reason
    without document text) and the job goes on. Needs the extra named spark (pyspark) and Java 17 or 21.
    """
    from clinideid.spark.io import require_spark

    require_spark()
    from clinideid.config import load_config
    from clinideid.spark import SparkDeidSettings, deidentify_dataframe
    from clinideid.spark.io import (
        CORRUPT_COLUMN,
        check_inputs,
        check_output_paths,
        infer_format,
        read_table,
        session,
        write_table,
    )

    if language != "auto" and language not in SUPPORTED:
        raise ConfigError(f"unsupported language {language!r}; choose auto or one of {', '.join(SUPPORTED)}")
    if max_bytes < 1:
        raise ConfigError("--max-bytes must be a positive number of bytes")
    if time_limit is not None and time_limit < 0:
        raise ConfigError("--time-limit must be 0 (no limit) or a positive number of seconds")
    overrides = config_overrides(operator, scope)
    spark_conf = _parse_conf(conf)
    data_format = infer_format(inputs, fmt)
    check_inputs(inputs)
    check_output_paths(inputs, [output, report], overwrite)
    key = _load_key(key_file, ephemeral_key)
    cfg = load_config(config).model_dump() if config is not None else None
    settings = SparkDeidSettings(
        id_column=id_column,
        text_column=text_column,
        language=language,
        language_column=language_column,
        patient_column=patient_column,
        config=cfg,
        overrides=overrides,
        time_limit=time_limit,
        max_bytes=max_bytes,
        corrupt_column=CORRUPT_COLUMN,
    )
    spark = session(master, "clinideid spark-deid", spark_conf)
    df = read_table(spark, inputs, data_format)
    result = deidentify_dataframe(df, settings, key, FieldPolicy(frozenset(keep_column), drop_columns))
    try:
        write_table(result.data, output, data_format, overwrite)
        write_table(result.report, report, "jsonl", overwrite)
        summary = result.summary()
    finally:
        result.close()
    typer.echo(
        f"{summary['succeeded']}/{summary['documents']} rows de-identified, {summary['failed']} failed; "
        f"{sum(summary['spans_per_label'].values())} spans replaced -> {output} (report: {report})"
    )
    if summary["spans_per_label"]:
        typer.echo("spans per label: " + json.dumps(summary["spans_per_label"]))
    if summary["failed"] and not allow_failures:
        typer.secho(
            f"{summary['failed']} row(s) failed (status 'failed' in the report); exit code {EXIT_DOCUMENTS_FAILED}",
            err=True,
            fg=typer.colors.YELLOW,
        )
        raise typer.Exit(EXIT_DOCUMENTS_FAILED)
