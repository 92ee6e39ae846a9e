"""Spark sessions, and reading and writing tables of notes (Parquet, JSON lines, CSV) for ``spark-deid``.

Outputs are written by Spark's own writers and committers (a folder of part files, ``_SUCCESS`` last), in
the format of the input. The report is always JSON lines, like the folder runner's ``report.jsonl``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from clinideid.errors import ConfigError, InputError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FORMATS = ("parquet", "jsonl", "csv")
_SUFFIXES = {".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv"}
#: Spark's column for lines it could not parse (JSON, CSV); such rows fail instead of vanishing
CORRUPT_COLUMN = "_corrupt_record"
#: CSV the way spreadsheets and RFC 4180 write it: quoted fields may hold line breaks and doubled quotes
_CSV_OPTIONS = {"header": "true", "multiLine": "true", "escape": '"', "quote": '"'}


def require_spark() -> None:
    """``ConfigError`` with the fix when pyspark or pandas is not installed."""
    try:
        import pandas  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError:
        raise ConfigError(
            "Apache Spark support needs pyspark and pandas: pip install 'clinideid[spark]' "
            "(and a Java 17 or 21 runtime)"
        ) from None


def session(master: str = "local[*]", app_name: str = "clinideid", conf: dict[str, str] | None = None):
    """A Spark session. For a local master the Python workers run this interpreter (so they import the
    same clinideid and pandas); a cluster's workers are configured by the cluster (``PYSPARK_PYTHON``)."""
    require_spark()
    from pyspark.sql import SparkSession

    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    for k, v in (conf or {}).items():
        builder = builder.config(k, v)
    return builder.getOrCreate()


def infer_format(paths: Sequence[str], fmt: str | None) -> str:
    """``fmt`` if given, else the one format every input's suffix names."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise ConfigError(f"--format must be one of {', '.join(FORMATS)}")
        return fmt
    found = {_SUFFIXES.get(Path(p.rstrip("/")).suffix.lower()) for p in paths}
    if len(found) != 1 or None in found:
        raise ConfigError(
            "cannot tell the input format from the file names; pass --format parquet, jsonl or csv"
        )
    return found.pop()  # type: ignore[return-value]


def check_inputs(paths: Sequence[str]) -> None:
    """``InputError`` for a local input path (not a glob pattern) that does not exist."""
    for p in paths:
        if _is_local(p) and not any(c in p for c in "*?[{") and not _local(p).exists():
            raise InputError(f"input path {p} does not exist")


def read_table(spark: SparkSession, paths: Sequence[str], fmt: str) -> DataFrame:
    """The input rows. Malformed JSON or CSV lines are kept in ``_corrupt_record`` (their rows then fail
    in the report) rather than dropped or stopping the job."""
    from pyspark.errors import AnalysisException

    try:
        return _read(spark, paths, fmt)
    except AnalysisException as exc:  # no such path, an unreadable schema: Spark's message names the path
        raise InputError(f"cannot read the {fmt} input: {exc.getMessage()}") from None


def _read(spark: SparkSession, paths: Sequence[str], fmt: str) -> DataFrame:
    reader = spark.read
    if fmt == "parquet":
        return reader.parquet(*paths)
    if fmt == "jsonl":
        return (
            reader.option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", CORRUPT_COLUMN)
            .json(list(paths))
        )
    # CSV keeps malformed lines only in a corrupt-record column named in an explicit schema: every column a
    # string (no type guessing), as the header names them
    from pyspark.sql.types import StringType, StructField, StructType

    header = reader.options(**_CSV_OPTIONS).csv(list(paths)).columns
    schema = StructType([StructField(name, StringType()) for name in [*header, CORRUPT_COLUMN]])
    return (
        spark.read.options(**_CSV_OPTIONS)
        .schema(schema)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CORRUPT_COLUMN)
        .csv(list(paths))
    )


def write_table(df: DataFrame, path: str, fmt: str, overwrite: bool) -> None:
    writer = df.write.mode("overwrite" if overwrite else "errorifexists")
    if fmt == "parquet":
        writer.parquet(path)
    elif fmt == "jsonl":
        writer.json(path)
    else:
        writer.options(**_CSV_OPTIONS).csv(path)


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file://")


def _local(path: str) -> Path:
    return Path(path.removeprefix("file://")).resolve()


def check_output_paths(inputs: Sequence[str], outputs: Sequence[str], overwrite: bool) -> None:
    """``ConfigError`` when an output is an input, lies inside or around one, or around another output,
    or exists without ``overwrite`` (Spark's overwrite deletes the folder first)."""
    local_in = [_local(p) for p in inputs if _is_local(p)]
    local_out = [_local(p) for p in outputs if _is_local(p)]
    for out in local_out:
        for src in local_in:
            if out == src or out.is_relative_to(src):
                raise ConfigError(
                    f"the output {out} is an input or inside one: originals could be overwritten and a later "
                    "run would read outputs as inputs; choose another output path"
                )
            if src.is_relative_to(out):
                raise ConfigError(
                    f"an input lies inside the output {out}, which may be replaced; choose another"
                )
        if out.exists() and not overwrite:
            raise ConfigError(
                f"the output {out} exists; pass --overwrite to replace it, or choose another path"
            )
    for i, a in enumerate(local_out):
        for b in local_out[i + 1 :]:
            if a == b or a.is_relative_to(b) or b.is_relative_to(a):
                raise ConfigError(
                    "the output and the report must be separate paths, neither inside the other"
                )
    remote = [p for p in outputs if not _is_local(p)]
    if len(set(remote)) != len(remote) or any(p in inputs for p in remote):
        raise ConfigError("the output and the report must differ from each other and from the inputs")
